"""The rule contract: declared options, the rule context, and rule plugins (entry point ``cfgcheck.rules``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cfgcheck import registry
from cfgcheck.config import ConfigError, validate
from cfgcheck.context import RuleContext
from cfgcheck.model import ArgToken, Location, ServedModel
from cfgcheck.registry import Option, all_rules, find
from helpers import REPO

EXAMPLE = REPO / "examples/kubernetes/apps/ai/qwen-chat/qwen-chat.yaml"


# ---------------------------------------------------------------- declared options


def test_every_option_is_declared_with_type_default_and_doc() -> None:
    declared = {(rule.code, name): option for rule in all_rules() for name, option in rule.options.items()}
    assert len(declared) >= 11
    for (code, name), option in declared.items():
        assert isinstance(option, Option) and option.doc.strip(), (code, name)
        assert option.type is list or isinstance(option.default, option.type), (code, name)
    with pytest.raises(TypeError):
        Option(dict, {}, "mappings are not an option type")


def test_rule_reference_shows_option_type_default_and_doc() -> None:
    doc = find("CFG203").doc
    assert "- `include-defaults` (boolean, default `false`): also flag the engine's default" in doc
    assert "- `estimate-margin` (number, default `0.1`): for an estimated pool" in doc
    assert "- `ignore` (list of strings, default `[]`)" in find("unknown-flag").doc
    assert find("CFG302").sections["Options"] == "None."  # a rule without options keeps its words


def test_options_are_validated_against_the_declared_type() -> None:
    validate({"rules": {"CFG205": {"min-reason-words": 4}, "CFG202": {"estimate-margin": 1}}}, "cfg")
    cases = [
        ("CFG205", "min-reason-words", 2.5, "rules.CFG205.min-reason-words: expected a whole number; got 2.5"),
        ("CFG206", "max-step", "4", "rules.CFG206.max-step: expected a whole number; got '4'"),
        ("CFG103", "ignore", "--x", "rules.CFG103.ignore: expected a list of strings; got '--x'"),
        ("CFG101", "allow", [3], "rules.CFG101.allow[0]: expected a string; got 3"),
        ("CFG203", "include-defaults", "yes", "rules.CFG203.include-defaults: expected true or false; got 'yes'"),
    ]
    for code, name, value, message in cases:
        with pytest.raises(ConfigError) as caught:
            validate({"rules": {code: {name: value}}}, ".cfgcheck.yaml")
        assert str(caught.value) == f".cfgcheck.yaml: {message}"


def test_context_options_are_complete_and_fresh() -> None:
    first, second = find("unknown-flag").defaults, find("unknown-flag").defaults
    assert first == {"ignore": []} and first["ignore"] is not second["ignore"]


# ---------------------------------------------------------------- the rule context


def test_context_memoises_flags_and_capacity_per_model(monkeypatch) -> None:
    import importlib

    capacity = importlib.import_module("cfgcheck.capacity.estimate")  # the package re-exports estimate()
    import cfgcheck.engines.argv as argv

    walks, estimates = [], []
    real_walk, real_estimate = argv._model_flags, capacity._estimate
    monkeypatch.setattr(argv, "_model_flags", lambda m: walks.append(m) or real_walk(m))
    monkeypatch.setattr(capacity, "_estimate", lambda m, c: estimates.append(m) or real_estimate(m, c))
    tokens = [ArgToken(t, Location("d.yaml", 9, 1)) for t in ("Qwen/Qwen3-8B", "--max-model-len", "8192")]
    model = ServedModel("chat", "Deployment", "d.yaml", 0, Location("d.yaml", 1, 1), engine="vllm",
                        engine_version="0.26.0", argv=tokens)
    ctx = RuleContext({}, {})
    catalog_, flags, _ = ctx.flags(model)
    assert catalog_.engine == "vllm" and [f.written for f in flags] == ["--max-model-len"]
    assert ctx.flags(model) is ctx.flags(model) and len(walks) == 1
    assert ctx.capacity(model).engine == "vllm"
    assert ctx.capacity(model) is ctx.capacity(model) and len(estimates) == 1


# ---------------------------------------------------------------- plugins


def _plugin(tmp_path: Path, name: str, module: str, entry: str | None = None) -> Path:
    """A throwaway distribution: a module and a dist-info declaring it in ``cfgcheck.rules``."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / f"{name}.py").write_text(textwrap.dedent(module))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[cfgcheck.rules]\n{name} = {entry or name}\n")
    return site


THROWAWAY = '''\
    """Flags a served model named chat (a throwaway plugin rule).

    ## What it flags
    A served model named chat.
    """
    from cfgcheck.model import Finding
    from cfgcheck.registry import Option

    CODE, NAME, SEVERITY = "CFG990", "no-chat", "warning"
    OPTIONS = {"name": Option(str, "qwen-chat", "the served model name to flag")}


    def check(model, ctx):
        if model.name == ctx.options["name"]:
            yield Finding(f"served model is named {model.name}", model.location, remediation="rename it")
'''


def _cli(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_plugin_rule_is_listed_configured_and_reported(tmp_path: Path) -> None:
    site = _plugin(tmp_path, "throwaway_rules", THROWAWAY)
    (tmp_path / "deploy.yaml").write_text(EXAMPLE.read_text())
    listed = _cli(site, "rules", cwd=tmp_path)
    assert listed.returncode == 0 and "CFG990  no-chat" in listed.stdout, listed.stderr
    shown = _cli(site, "rule", "no-chat", cwd=tmp_path)
    assert "- `name` (string, default `\"qwen-chat\"`): the served model name to flag" in shown.stdout
    linted = _cli(site, "lint", "--format", "json", "deploy.yaml", cwd=tmp_path)
    found = [f for f in json.loads(linted.stdout)["findings"] if f["code"] == "CFG990"]
    assert [(f["message"], f["path"], f["severity"]) for f in found] == \
        [("served model is named qwen-chat", "deploy.yaml", "warning")], linted.stdout
    (tmp_path / ".cfgcheck.yaml").write_text("rules:\n  CFG990:\n    name: other\n")
    quiet = _cli(site, "lint", "--format", "json", "deploy.yaml", cwd=tmp_path)
    assert not [f for f in json.loads(quiet.stdout)["findings"] if f["code"] == "CFG990"]
    (tmp_path / ".cfgcheck.yaml").write_text("rules:\n  CFG990:\n    name: 3\n")
    wrong = _cli(site, "lint", "deploy.yaml", cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stderr == \
        "cfgcheck: error: .cfgcheck.yaml: rules.CFG990.name: expected a string; got 3\n"


def test_broken_plugin_is_named_on_stderr_and_skipped(tmp_path: Path) -> None:
    site = _plugin(tmp_path, "broken_rules", "import not_a_module_anywhere\n")
    (tmp_path / "deploy.yaml").write_text(EXAMPLE.read_text())
    listed = _cli(site, "rules", cwd=tmp_path)
    assert listed.returncode == 0 and "CFG302" in listed.stdout
    assert listed.stderr == ("cfgcheck: warning: rule plugin 'broken_rules' (broken_rules) not loaded: "
                             "ModuleNotFoundError: No module named 'not_a_module_anywhere'\n")
    assert "Traceback" not in _cli(site, "lint", "deploy.yaml", cwd=tmp_path).stderr


def test_duplicate_rule_code_is_a_configuration_error(tmp_path: Path) -> None:
    site = _plugin(tmp_path, "clash_rules", THROWAWAY.replace('"CFG990", "no-chat"', '"CFG302", "my-rolling-tag"'))
    (tmp_path / "deploy.yaml").write_text(EXAMPLE.read_text())
    for args in (("rules",), ("lint", "deploy.yaml")):
        run = _cli(site, *args, cwd=tmp_path)
        assert run.returncode == 2, run.stderr
        assert run.stderr == ("cfgcheck: error: two rules claim code CFG302: cfgcheck.rules.rolling_tag "
                              "and clash_rules\n")


def test_duplicate_rule_name_names_both_modules() -> None:
    rules = {}
    registry._add(rules, find("CFG302"))
    clash = registry.Rule("CFG991", "rolling-tag", "note", {}, "", None, "model", "plugin_mod")
    with pytest.raises(registry.DuplicateRule, match="two rules claim name 'rolling-tag': "
                                                     "cfgcheck.rules.rolling_tag and plugin_mod"):
        registry._add(rules, clash)
