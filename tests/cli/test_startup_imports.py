"""Start-up imports only what the command needs. Guards the property, not a timing:
``cfgcheck --version`` and ``--help`` import neither the lint pipeline nor YAML nor the configuration
code, no command imports the heavy optional libraries before it needs them, and ``lint`` on one small
served-model file imports neither typer (its fast path) nor the HTTP stack of the opt-in Hub lookup."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_output_formats import SECRET_APP

HEAVY = ("jsonschema", "jinja2", "github", "ruamel", "rich")
PIPELINE = ("yaml", "cfgcheck.config", "cfgcheck.yamlio", "cfgcheck.lint", "cfgcheck.adapters", "cfgcheck.rules",
            "cfgcheck.capacity", "cfgcheck.engines")


def _modules_after(argv: list[str], cwd: Path, env: dict | None = None, report: str = "sorted(sys.modules)",
                   setup: str = ""):
    """Every module imported by one ``cfgcheck ARGV`` run in a fresh interpreter (the console entry
    point), with its standard output first; or ``report``, a Python expression over the run's modules
    (and what ``setup``, run before cfgcheck is imported, defines)."""
    probe = (f"import sys, json\n{setup}\nfrom cfgcheck.__main__ import main\nsys.argv = ['cfgcheck'] + {argv!r}\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"sys.stdout.write('\\n' + json.dumps({report}))")
    env = {**{k: v for k, v in os.environ.items() if k != "CFGCHECK_HUB"}, "XDG_CACHE_HOME": str(cwd / "cache"),
           **(env or {})}
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def served_lint(tmp_path_factory) -> list[str]:
    """The modules of one ``cfgcheck lint app.yaml`` on a served vLLM Deployment (shared: the run is the same)."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "app.yaml").write_text(SECRET_APP)
    return _modules_after(["lint", "app.yaml"], folder)


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({name for name in names for module in modules if module == name or module.startswith(name + ".")})


def test_version_and_help_import_no_pipeline(tmp_path: Path) -> None:
    assert _loaded(_modules_after(["--version"], tmp_path), HEAVY + PIPELINE) == []
    for argv in (["--help"], ["lint", "--help"]):  # typer draws its help with rich when it is installed
        modules = _modules_after(argv, tmp_path)
        assert _loaded(modules, tuple(name for name in HEAVY if name != "rich") + PIPELINE) == [], argv


def test_linting_a_trivial_file_imports_no_heavy_library(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    modules = _modules_after(["lint", "values.yaml"], tmp_path)
    assert "cfgcheck.lint" in modules  # the probe did lint
    assert _loaded(modules, HEAVY) == []


NETWORK = ("urllib.request", "http.client", "ssl", "email", "cfgcheck.capacity.hub")
CLI = ("typer", "click", "cfgcheck.cli")


def test_linting_one_deployment_needs_neither_typer_nor_the_network_stack(served_lint: list[str]) -> None:
    modules = served_lint
    assert _loaded(modules, HEAVY + NETWORK + CLI + ("jsonschema", "ruamel")) == []
    # what it does need, so this cannot pass by linting nothing: the workload adapter found the served
    # model and the rules that check it ran (with the capacity model and the catalogs they read)
    for needed in ("yaml", "cfgcheck.lint", "cfgcheck.adapters.formats.workloads", "cfgcheck.engines.catalog",
                   "cfgcheck.capacity.estimate", "cfgcheck.rules.seqs_exceed_kv_concurrency", "cfgcheck.reporters.text"):
        assert needed in modules, needed


# Modules a one-file lint of the served Deployment imports (Python 3.11, the standard library's and cfgcheck's;
# measure with `python -X importtime -m cfgcheck lint app.yaml`): 283 on 2026-12-02 00:40 UTC, 301 after the
# fleet and local-model-folder waves, 272 once the process machinery and importlib.resources left the path
# (bench/RESULTS.md, "One file: start-up"); 281 once the served-model records (served.py), the table of built-in
# adapters (adapters/core/builtin.py), the run's workspace (adapters/core/workspace.py) and lazy.py became modules
# of their own, so that a file without a served model imports none of the registry, its contexts and those
# records (PLAIN_MODULE_BOUND), and the baseline reader left the run without a baseline. A change that needs more
# says why, or imports what it adds where it is used: 283 with rule CFG110 (every rule of a served model is
# imported) and a shell parameter's value split from launch/shell.py (adapters/launch/parameters.py), which
# had reached the 600-line bound of a module; 284 once the record classes' base (records.py, shared by
# model.py and served.py) became a module: it spares the start-up the generated __init__ of 40 dataclasses;
# 285 with the one reader of where a deployment object keeps its chart values (adapters/launch/held_values.py),
# which the KubeAI, chart-values and mapped formats share; 275 (measured 2026-12-02) once no record on the path
# was a dataclass: dataclasses, inspect and what inspect imports left it (DATACLASS_MACHINERY); 276 once the
# cluster records (cluster.py) left the capacity package, so that a run read back from the whole-run cache
# builds its Fleet without importing it; 277 with the reader of a fork's own engine arguments source
# (adapters/launch/engine_sources.py), whose settle hook every served vLLM or SGLang model passes through
# (it reads two or three tracked paths, most often absent); 272 once no module on the path imported typing at
# run time (TYPING: typing, typing.io, typing.re and _typing left it); 273 once the whole-run cache's wiring left
# lint.py for a module of its own (whole_run.py: lint.py stays under 600 lines), imported by every run; 274
# once the related-file search left discover.py for related_files.py (discover.py stays under 600 lines); 270
# once the records were copied by ``Record.replaced``, not the copy module (copy, weakref, _weakrefset: 1.1-1.6
# ms: COPY_MACHINERY), and the ``cfgcheck capacity`` report left the capacity package's own imports.
MODULE_BOUND = 270
# The same for a file without a served model: 172 before those modules were split, 168 after, 156 without the
# dataclass machinery (records.py, the base of the classes that replaced the dataclasses, is one more module),
# 151 without typing, 152 with related_files.py split from discover.py.
PLAIN_MODULE_BOUND = 152
# What a dataclass brings: ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis`` and ``tokenize``: 7 ms of
# a one-file lint's start-up), and each dataclass compiles its generated methods at import (0.2-1.1 ms a
# class, 7.4 ms for the 20 that were on the served path). The records a one-file lint imports are plain
# classes (``records.Record``), whose written methods are compiled once into the bytecode cache.
DATACLASS_MACHINERY = ("dataclasses", "inspect")
# What typing costs a one-file lint: with its import, NamedTuple classes (about 0.6 M instructions each),
# Protocols and TypeVars, the served Deployment's lint executed 478 M instructions, without them 449 M (callgrind,
# 2026-12-02; a file without a served model 264 M, then 239 M). The modules on the path import typing's names
# under ``if TYPE_CHECKING:`` with a module-level ``TYPE_CHECKING = False`` (docs/ARCHITECTURE.md, "Code
# families"); their records are ``records.Record`` classes or ``collections.namedtuple``s, and the typing
# Protocols they are checked against are defined for type checkers only (the rule api loads the two check
# signatures when a rule asks for them: check_signatures.py).
TYPING = ("typing",)
# What a run that starts no process (one file outside a repository, nothing to render) never imports:
# subprocess, tempfile and shutil come with the first git or renderer process (sandbox.run_bounded), and
# the bundled tables are read as files (cfgcheck.data), not through importlib.resources (zipfile, tempfile).
NO_PROCESS = ("subprocess", "tempfile", "shutil", "importlib.resources", "zipfile")
# A record's copy is ``records.Record.replaced``; ``copy`` brings weakref and looks for Jython's PyStringMap.
COPY_MACHINERY = ("copy", "weakref")


def test_one_served_deployment_imports_a_bounded_set_and_starts_no_worker(served_lint: list[str]) -> None:
    """One file is fewer than ``pool.MIN_FILES``: no worker process, so not the multiprocessing package
    (threads, sockets, selectors); the content cache's entry for the file costs hashlib and pickle (imported
    by the first ``pool.dumps``: a file whose stage reads beyond it keeps no entry, and imports no pickle)."""
    assert len(served_lint) <= MODULE_BOUND, len(served_lint)
    assert _loaded(served_lint, ("multiprocessing", "concurrent")) == []
    assert _loaded(served_lint, DATACLASS_MACHINERY + TYPING) == []
    # nor the bots' redaction patterns: a rule asks only whether a name is a secret's (secret_names)
    assert _loaded(served_lint, NO_PROCESS + ("cfgcheck.redact",)) == []
    assert _loaded(served_lint, COPY_MACHINERY) == []
    assert _loaded(served_lint, ("cfgcheck.capacity.report",)) == []  # `cfgcheck capacity`'s alone
    assert {"cfgcheck.cache", "cfgcheck.pool", "cfgcheck.stages"} <= set(served_lint)


def test_a_text_lint_reads_no_rules_documentation(tmp_path: Path) -> None:
    """A rule's summary and sections are read from its docstring when asked for (SARIF, ``cfgcheck rule``):
    a lint that writes text parses none of the 37 docstrings of a served model's rules."""
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    parsed = "sys.modules['cfgcheck.registry'].parse_docstring.cache_info().currsize"
    assert _modules_after(["lint", "app.yaml"], tmp_path, report=parsed) == 0
    assert _modules_after(["lint", "--format", "sarif", "app.yaml"], tmp_path, report=parsed) > 0


# cfgcheck's own regular expressions a one-file lint compiles (a pattern first compiled from a cfgcheck module or
# rule; PyYAML's and the standard library's are not counted): a pattern only some files need is compiled on first
# use (lazy.Pattern), or not at all behind a plain string test. On 2026-12-02 the served Deployment compiled 73,
# a file without a served model 12; then 40 and 3. (bench/out's dense/vllm-serve/deepseek-r1-distill-llama-8b-
# ads-563.yaml: 87 compiles in all, PyYAML's and the standard library's included, 13.5 ms of an 85 ms run; then 60.)
SERVED_COMPILE_BOUND = 40
PLAIN_COMPILE_BOUND = 3
_COUNT_COMPILES = """import re
_compile, _own = re._compile, {}
def _counted(pattern, flags):
    key = (type(pattern), pattern, flags)
    if isinstance(pattern, (str, bytes)) and key not in _own:
        frame = sys._getframe(1)
        while frame.f_globals.get('__name__', '').partition('.')[0] == 're':
            frame = frame.f_back
        _own[key] = frame.f_globals.get('__name__', '')
    return _compile(pattern, flags)
re._compile = _counted"""
_OWN_COMPILES = "sorted(module for module in _own.values() if module.startswith('cfgcheck'))"


def test_a_one_file_lint_compiles_a_bounded_set_of_patterns(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    served = _modules_after(["lint", "app.yaml"], tmp_path, report=_OWN_COMPILES, setup=_COUNT_COMPILES)
    assert "cfgcheck.capacity.architecture" in served  # the probe counted the served model's own
    assert len(served) <= SERVED_COMPILE_BOUND, served
    plain = _modules_after(["lint", "values.yaml"], tmp_path, report=_OWN_COMPILES, setup=_COUNT_COMPILES)
    assert len(plain) <= PLAIN_COMPILE_BOUND, plain


def test_pyyaml_compiles_no_pattern_of_its_own_on_a_lint(tmp_path: Path) -> None:
    """cfgcheck parses with libyaml's C parser: PyYAML's own patterns (its pure reader's printable characters,
    its resolver's and constructor's) are compiled when one first matches (``lazy.pyyaml``), which a lint's
    parse never does: 12 ms of a one-file lint on 2026-12-03 (393.5 -> 328.4 M instructions)."""
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    pyyamls = "sorted(module for module in _own.values() if module.partition('.')[0] == 'yaml')"
    assert _modules_after(["lint", "app.yaml"], tmp_path, report=pyyamls, setup=_COUNT_COMPILES) == []


def test_pyyaml_imported_with_deferred_patterns_behaves_as_pyyaml(tmp_path: Path) -> None:
    """What ``lazy.pyyaml`` defers still matches when PyYAML's pure loader uses it; ``re.compile`` is the real
    one again after the import, and a module other than PyYAML's compiles at once while it imports."""
    probe = """import re, sys
compile_now = re.compile
from cfgcheck import lazy
import importlib.abc
class Probe(importlib.abc.MetaPathFinder):  # a module of another package imported while PyYAML imports
    def find_spec(self, name, path, target=None):
        if name == 'yaml.reader':
            sys.modules['probe_pattern'] = re.compile('probe')
        return None
sys.meta_path.insert(0, Probe())
yaml = lazy.pyyaml()
assert re.compile is compile_now
assert isinstance(sys.modules['probe_pattern'], re.Pattern)
assert isinstance(yaml.reader.Reader.NON_PRINTABLE, lazy.Pattern)
print(yaml.safe_load('a: 2020-01-02\\nb: yes\\nc: 1.5e+3\\nd: ~\\ne: 017\\n'))
try:
    yaml.safe_load('a: "\\x07"')  # the pure reader's printable check: a control character
except yaml.reader.ReaderError as error:
    print('refused', error.character)
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "{'a': datetime.date(2020, 1, 2), 'b': True, 'c': 1500.0, 'd': None, 'e': 15}", "refused 7"]


def test_online_lookup_brings_the_network_stack(tmp_path: Path) -> None:
    """The opposite case: with the Hub lookup on (pointed at a closed local port, so nothing leaves the
    machine) the HTTP stack is imported when the served model is sized."""
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "CFGCHECK_CACHE_DIR": str(tmp_path / "cache")}
    modules = _modules_after(["lint", "--online", "app.yaml"], tmp_path, env)
    assert _loaded(modules, ("urllib.request", "cfgcheck.capacity.hub")) == ["cfgcheck.capacity.hub", "urllib.request"]


def test_a_file_without_a_served_model_imports_no_adapter_rule_or_catalog(tmp_path: Path) -> None:
    """Most files a pre-commit hook names hold no serving configuration: they are parsed and checked for
    suppressions and unreadable input, which needs neither the adapters, nor the rules that check served
    models (their codes come from the rule index), nor the capacity model and catalogs those read."""
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    (tmp_path / "broken.yaml").write_text("a: [1,\n")
    modules = _modules_after(["lint", "values.yaml", "broken.yaml", "--format", "json"], tmp_path)
    assert len(modules) <= PLAIN_MODULE_BOUND, len(modules)
    assert _loaded(modules, ("cfgcheck.capacity", "cfgcheck.engines", "cfgcheck.drift") + NETWORK + CLI + NO_PROCESS
                   + DATACLASS_MACHINERY + TYPING) == []
    # the table of built-in adapters (the prefilter's words), the run's workspace and the record of references
    # that lead nowhere: not the registry, the contexts it hands out, a format, launch helper or renderer
    # (what the run knows of charts without rendering one is all of the input stage it imports), nor the
    # records of a served model
    assert [m for m in modules if m.startswith("cfgcheck.adapters.")] == [
        "cfgcheck.adapters.core", "cfgcheck.adapters.core.builtin", "cfgcheck.adapters.core.protocol",
        "cfgcheck.adapters.core.references", "cfgcheck.adapters.core.workspace"]
    assert "cfgcheck.served" not in modules
    assert [m for m in modules if m.startswith("cfgcheck.render")] == ["cfgcheck.render", "cfgcheck.render.charts"]
    rules = sorted(m for m in modules if m.startswith("cfgcheck.rules."))
    # the rules of the input itself (CFG000-CFG003), each a docstring and its code
    assert rules == ["cfgcheck.rules.dangling_reference", "cfgcheck.rules.invalid_suppression",
                     "cfgcheck.rules.unparseable_input", "cfgcheck.rules.unused_suppression"]
    assert {"yaml", "cfgcheck.lint", "cfgcheck.suppressions", "cfgcheck.reporters.json_report"} <= set(modules)


# Adapters a Deployment that mentions vllm cannot be read by: none of their MARKERS is in it, or they
# read other formats, or only compose files / workflows / charts reach them once the document is theirs.
NOT_FOR_A_DEPLOYMENT = tuple(f"cfgcheck.adapters.{name}" for name in (
    "formats.ome", "formats.kubeai", "formats.rayserve", "formats.dynamo", "formats.llmd", "formats.pyspec",
    "formats.makefile", "formats.containerfile", "formats.supervisord", "formats.scripts", "formats.compose",
    "formats.workflows", "formats.skypilot", "launch.scripts", "launch.dotenv", "launch.dockerfile")) + tuple(
    f"cfgcheck.render.{name}" for name in ("kustomize", "helm", "helm_sandbox", "source_map", "staging"))


def test_a_served_deployment_imports_only_the_adapters_that_may_read_it(served_lint: list[str], tmp_path: Path) -> None:
    """An adapter is imported when a document can be its (one of its MARKERS is in the file, and it reads
    Kubernetes resources: compose, workflows and SkyPilot read only plain documents), and helpers of one
    format (helm staging, .env and Dockerfile reading, shell scripts) when a document of that format is
    read; the Deployment is still read by the workload adapter."""
    modules = served_lint
    assert _loaded(modules, NOT_FOR_A_DEPLOYMENT) == []
    for needed in ("cfgcheck.adapters.formats.workloads", "cfgcheck.adapters.launch.containers",
                   "cfgcheck.adapters.formats.vllm_runtime", "cfgcheck.rules.secret_in_args"):
        assert needed in modules, needed
    compose = "services:\n  chat:\n    image: vllm/vllm-openai:v0.26.0\n    env_file: [.env]\n"
    (tmp_path / "compose.yaml").write_text(compose)
    (tmp_path / ".env").write_text("HF_TOKEN=x\n")
    modules = _modules_after(["lint", "compose.yaml"], tmp_path)
    assert {"cfgcheck.adapters.launch.dotenv", "cfgcheck.adapters.launch.dockerfile"} <= set(modules)  # the compose file's


# The capacity model and the engine knowledge a served-model lint imports (su-capacity's part of item 16).
CAPACITY_AND_ENGINES = ("cfgcheck.capacity", "cfgcheck.engines", "cfgcheck.drift")
# Records of those modules compared by value (a dataclass's __eq__ or a records.ValueRecord): none. An image
# reference, the key of image_engine's cache, is a NamedTuple.
COMPARED_BY_VALUE: set[str] = set()


def _served_lint_probe(tmp_path: Path, report: str) -> list:
    """``cfgcheck lint app.yaml`` on one served vLLM Deployment in a fresh interpreter, then ``report``
    (a Python expression over the imported modules) as JSON."""
    (tmp_path / "app.yaml").write_text(SECRET_APP)
    return _modules_after(["lint", "app.yaml"], tmp_path, report=report)


def test_a_served_deployment_reads_its_catalog_without_the_compressed_reader_or_fuzzy_matching(
        served_lint: list[str], tmp_path: Path) -> None:
    """The shipped catalogs are plain JSON (gzip only for a compressed one) and difflib only suggests
    a near-miss for an unknown flag or variable. Every flag of the Deployment is an option string as
    written, which argparse answers before any prefix matching: argparse (with gettext and locale, 14 M of
    497 M instructions) is imported only for a flag that is not (tests/engines: abbreviations)."""
    modules = served_lint
    assert "gzip" not in modules
    for name in ("cfgcheck.engines.versions", "cfgcheck.engines.catalog", "cfgcheck.engines.confidence",
                 "cfgcheck.engines.envs"):
        assert name in modules, name  # the modules that would import them did run
    assert _loaded(modules, ("argparse", "gettext", "locale")) == []
    lazy = _served_lint_probe(tmp_path, "[m for m in ('cfgcheck.engines.confidence', 'cfgcheck.engines.envs', "
                                        "'cfgcheck.engines.catalog') if 'difflib' in vars(sys.modules[m])]")
    assert lazy == []


def test_a_served_deployment_builds_only_its_versions_option_specs(tmp_path: Path) -> None:
    """A catalog builds the specs of the version it serves, not the whole table of every version."""
    found = _served_lint_probe(tmp_path, "[sum(spec is not None for spec in sys.modules['cfgcheck.engines.catalog']"
                                         "._SPECS['vllm']), "
                                         "len(sys.modules['cfgcheck.engines.versions'].catalog_data('vllm')['specs'])]")
    built, table = found
    assert 0 < built < table / 2, found


def test_capacity_and_engine_records_are_not_compared_by_value(tmp_path: Path) -> None:
    """Each dataclass costs its generated methods at import; these records are never compared by value
    (identity is enough), so none is a dataclass compared by value or frozen, nor a ``records.ValueRecord``."""
    found = _served_lint_probe(tmp_path, f"sorted(m + '.' + c.__qualname__ for m in list(sys.modules) "
                                         f"if m.startswith({CAPACITY_AND_ENGINES!r}) "
                                         "for c in vars(sys.modules[m]).values() if isinstance(c, type) "
                                         "and c.__module__ == m and (issubclass(c, sys.modules['cfgcheck.records']"
                                         ".ValueRecord) or '__dataclass_params__' in vars(c) "
                                         "and (c.__dataclass_params__.eq or c.__dataclass_params__.frozen)))")
    assert set(found) == COMPARED_BY_VALUE


RARELY_NEEDED = ("decimal", "difflib", "pkgutil")


def test_core_modules_import_rare_standard_modules_where_they_are_used(served_lint: list[str], tmp_path: Path) -> None:
    """settings imports decimal only to read an SI-suffixed SGLang size, config imports difflib only to
    suggest a key for an unknown one, and the rule registry imports pkgutil only to list every rule module
    (a lint run finds them in the rule index). The engine catalogs a served model needs use difflib."""
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    modules = _modules_after(["lint", "values.yaml"], tmp_path)
    assert {"cfgcheck.config", "cfgcheck.registry", "cfgcheck.suppressions"} <= set(modules)
    assert _loaded(modules, RARELY_NEEDED) == []
    modules = served_lint
    assert {"cfgcheck.settings", "cfgcheck.rules.invalid_flag_value"} <= set(modules)
    assert _loaded(modules, ("decimal", "pkgutil")) == []


DIFF_ONLY_RULES = ("cfgcheck.rules.seq_limit_without_context_cap", "cfgcheck.rules.unattributable_step",
                   "cfgcheck.rules.outage_on_apply", "cfgcheck.rules.stale_flag_reference",
                   "cfgcheck.rules.default_drift")


def test_linting_imports_no_rule_that_only_compares_a_change(served_lint: list[str]) -> None:
    """A lint run has no base to compare with, so the rules that only run in diff mode (their index entry
    says so) are not imported, nor the default-drift tables only one of them reads; every other rule is."""
    modules = served_lint
    assert _loaded(modules, DIFF_ONLY_RULES + ("cfgcheck.drift", "cfgcheck.rules._change")) == []
    index = json.loads((Path(__file__).parents[2] / "src/cfgcheck/data/rule_index.json").read_text())
    others = {entry["module"] for entry in index if not entry["diff_only"]}
    assert len(others) > 30 and others <= set(modules)


CORE = ("cfgcheck.model", "cfgcheck.served", "cfgcheck.registry", "cfgcheck.settings", "cfgcheck.suppressions",
        "cfgcheck.config", "cfgcheck.context", "cfgcheck.rules._ceilings")


def test_core_classes_compare_by_value_only_where_it_is_used() -> None:
    """A dataclass compiles each generated method at import. None of the classes every served-model lint
    imports from these modules is one: the records are plain classes with slots (``records.Record``),
    compared by identity but a Rule, which is found in the run's list by value (``records.ValueRecord``),
    and adapters make changed copies of them with ``replaced`` (what ``dataclasses.replace`` did). A
    Location is compared and hashed by value (one span reached twice) and never changed: a NamedTuple, which
    compiles no method."""
    classes = [value for name in CORE for value in vars(importlib.import_module(name)).values()
               if isinstance(value, type) and value.__module__ == name]
    assert [cls.__name__ for cls in classes if dataclasses.is_dataclass(cls)] == []
    from cfgcheck.model import Finding, Location
    from cfgcheck.records import Record, ValueRecord
    from cfgcheck.registry import find
    from cfgcheck.served import ArgToken, Setting

    records = [cls for cls in classes if issubclass(cls, Record)]
    assert len(records) >= 16 and all("__eq__" not in vars(cls) for cls in records)
    assert [cls.__name__ for cls in records if issubclass(cls, ValueRecord)] == ["Rule"]
    rule = find("CFG301")
    assert rule.replaced() == rule != rule.replaced(scope="run") and rule.__hash__ is None
    setting = Setting("max_num_seqs", 4, Location("a.yaml", 3, 5), "--max-num-seqs")
    copied = pickle.loads(pickle.dumps(setting))  # a record pickles as its class and its slots, in order
    assert (copied.name, copied.value, copied.location, copied.origin) == ("max_num_seqs", 4, setting.location, "field")
    assert copied != setting and setting.comments == () and "origin='field'" in repr(setting)
    finding = Finding("max_num_seqs 4 > 2.70", setting.location, code="CFG203")
    changed = finding.replaced(message="merged", related=(setting.location,))  # what precedence.py does
    assert (changed.message, changed.related, changed.code, finding.message) == (
        "merged", (setting.location,), "CFG203", "max_num_seqs 4 > 2.70")
    assert changed is not finding and "code='CFG203'" in repr(changed)
    token = ArgToken("--tp", setting.location, origin="shell")
    filled = token.replaced(text="--tensor-parallel-size", synthetic=True)  # what llmd.py does
    assert (filled.text, filled.location, filled.origin, filled.synthetic, token.synthetic) == (
        "--tensor-parallel-size", setting.location, "shell", True, False)
    with pytest.raises(TypeError):  # as dataclasses.replace: a name that is not a field
        token.replaced(value="4")
    assert Location("a.yaml", 3, 5) == Location("a.yaml", 3, 5, None, None) != Location("a.yaml", 3, 6)
    assert len({Location("a.yaml", 3, 5), Location("a.yaml", 3, 5)}) == 1


def test_a_command_collects_no_cycles_while_it_runs_and_gives_the_collector_back(tmp_path: Path, monkeypatch) -> None:
    """``main`` turns the cyclic collector off for the command (a lint's objects live to its end: it
    would only scan them again) and on again when it returns, also in a process that called it."""
    import gc

    from cfgcheck import lint as lint_module
    from runcli import invoke

    (tmp_path / "app.yaml").write_text("a: 1\n", encoding="utf-8")
    seen: list[bool] = []
    real = lint_module.lint

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(lint_module, "lint", watched)
    assert gc.isenabled()
    assert invoke("lint", "--no-cache", "app.yaml", cwd=tmp_path).returncode == 0
    assert seen == [False] and gc.isenabled()


@pytest.mark.parametrize(("ends", "code", "said"), [
    (lambda: None, 0, ""), (lambda: sys.exit(3), 3, ""), (lambda: sys.exit(None), 0, ""),
    (lambda: sys.exit("cfgcheck: no such rule"), 1, "cfgcheck: no such rule\n"), (lambda: sys.exit(True), 1, "")])
def test_the_console_entry_ends_the_process_with_mains_exit_code(ends, code: int, said: str, monkeypatch,
                                                                  capsys) -> None:
    """``run`` (the console script, ``python -m cfgcheck``) ends the process as Python would end it after
    ``main``: the same code, a message given to ``sys.exit`` on stderr, the standard streams flushed."""
    import cfgcheck.__main__ as entry

    class Ended(Exception):
        pass

    def exit_now(status: int) -> None:
        raise Ended(status)

    def command() -> None:
        print("report", end="")
        ends()

    monkeypatch.setattr(entry, "command", command)
    monkeypatch.setattr(entry.os, "_exit", exit_now)
    with pytest.raises(Ended) as ended:
        entry.run()
    assert ended.value.args == (code,)
    assert capsys.readouterr() == ("report", said)


def test_a_spawned_run_writes_all_its_report_and_exits_with_its_code(tmp_path: Path) -> None:
    """The process ends without Python's own exit (``__main__.run``): a report larger than a pipe's buffer
    arrives whole, and the exit code is the lint's."""
    from runcli import spawn

    for number in range(40):
        (tmp_path / f"app{number}.yaml").write_text(SECRET_APP.replace("name: chat", f"name: chat{number}"),
                                                    encoding="utf-8")
    ran = spawn("lint", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    report = json.loads(ran.stdout)
    assert ran.returncode == 1 and len(ran.stdout) > 65536 and report["summary"]["served_models"] == 40
