"""Profiles: `profile: recommended` (the default) or `strict` picks each rule's severity from its PROFILES
metadata; `rules:` adjusts single rules on top; the rule reference shows the severity per profile."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from cfgcheck import registry
from cfgcheck.config import Config, ConfigError, _schema, changes, validate
from cfgcheck.registry import PROFILES
from cfgcheck.rule_reference import render_rules
from helpers import lint_text

UNPINNED = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
"""


def severities(tmp_path: Path, config: dict) -> dict[str, str]:
    result = lint_text(tmp_path, UNPINNED, config=config)
    return {f.code: f.severity for f in result.findings if f.code in ("CFG301", "CFG303")}


def test_pinning_advice_is_a_note_by_default_and_a_warning_in_strict(tmp_path: Path) -> None:
    assert severities(tmp_path / "default", {}) == {"CFG301": "note", "CFG303": "note"}
    assert severities(tmp_path / "recommended", {"profile": "recommended"}) == {"CFG301": "note", "CFG303": "note"}
    assert severities(tmp_path / "strict", {"profile": "strict"}) == {"CFG301": "warning", "CFG303": "warning"}


def test_a_repository_adjusts_single_rules_on_top_of_its_profile(tmp_path: Path) -> None:
    config = {"rules": {"unpinned-model-revision": {"severity": "warning"}}}
    assert severities(tmp_path / "one", config) == {"CFG301": "note", "CFG303": "warning"}
    strict = {"profile": "strict", "rules": {"CFG3": {"severity": "note"}}}
    assert severities(tmp_path / "two", strict) == {"CFG301": "note", "CFG303": "note"}


def test_an_unknown_profile_is_a_one_line_configuration_error() -> None:
    with pytest.raises(ConfigError) as raised:
        validate({"profile": "lax"}, ".cfgcheck.yaml")
    assert str(raised.value) == ".cfgcheck.yaml: profile: expected one of recommended, strict; got 'lax'"
    assert tuple(_schema()["properties"]["profile"]["enum"]) == PROFILES


def test_a_profile_change_is_listed_among_the_configuration_changes(tmp_path: Path) -> None:
    lines = changes(Config(tmp_path, {}), Config(tmp_path, {"profile": "strict"}))
    assert "profile: recommended → strict" in lines
    assert "severity raised: CFG301 unpinned-image note → warning, CFG303 unpinned-model-revision note → warning" in lines


def test_the_rule_reference_shows_the_severity_per_profile() -> None:
    table = render_rules("text").splitlines()
    assert table[0].split()[:4] == ["code", "name", "recommended", "strict"]
    assert next(line for line in table if line.startswith("CFG301")).split()[2:4] == ["note", "warning"]
    listed = {rule["code"]: rule["profiles"] for rule in json.loads(render_rules("json"))}
    assert listed["CFG303"] == {"recommended": "note", "strict": "warning"} and listed["CFG204"]["recommended"] == "error"
    assert "Severity: **note (strict: warning)**." in render_rules("markdown")


def test_profiles_are_rule_metadata_in_the_index() -> None:
    entries = {entry.code: entry for entry in registry._builtin_index()}
    assert entries["CFG301"].profiles == {"recommended": "note"} and entries["CFG301"].severity_in("strict") == "warning"
    assert entries["CFG302"].severity_in("recommended") == "warning"


def test_a_rule_declaring_an_unknown_profile_or_severity_is_refused() -> None:
    module = types.ModuleType("cfgcheck_test_rule")
    module.CODE, module.NAME, module.SEVERITY, module.PROFILES = "CFG990", "no-chat", "warning", {"lax": "note"}
    with pytest.raises(TypeError, match="PROFILES must map recommended, strict"):
        registry._from_module(module)
    module.PROFILES = {"strict": "fatal"}
    with pytest.raises(TypeError, match="strict: fatal"):
        registry._from_module(module)


@pytest.mark.parametrize(("image", "advice"), [
    ("lmsysorg/sglang:dev", "use a tag naming a release of SGLang (for example v{sglang}, the newest cfgcheck knows)"),
    ("lmcache/vllm-openai:latest", "use a release tag of lmcache/vllm-openai (LMCache's vLLM build)"),
    ("ghcr.io/ggml-org/llama.cpp:latest", "use a release tag of ggml-org/llama.cpp (a build-numbered tag such as "
     "server-cuda-b6000; server, server-cuda, full-cuda move to every new build)"),
    ("vllm/vllm-openai:nightly", "use a tag naming a release of vLLM (for example v{vllm}, the newest cfgcheck knows)"),
])
def test_rolling_tag_advice_names_a_version_of_the_images_own_engine(tmp_path: Path, image: str, advice: str) -> None:
    from cfgcheck.engines.versions import versions

    result = lint_text(tmp_path, UNPINNED.replace("vllm/vllm-openai:v0.26.0", image))
    (rolling,) = [f for f in result.findings if f.code == "CFG302"]
    newest = {engine: versions(engine)[-1] for engine in ("vllm", "sglang")}
    assert rolling.remediation == advice.format(**newest) + " pinned by digest"
