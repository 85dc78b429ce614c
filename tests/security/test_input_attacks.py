"""Attacks on the files a pull request names and on the work it can cause (docs/SECURITY.md, "Files a
repository names, expansion, work and suppressions"), each reproduction a test.

Work is judged by what the run builds (the longest value, tracemalloc's peak, how many comment copies
and scans), never by wall time: a busy runner slows the clock, not the work.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from cfgcheck.adapters.core.contexts import MAX_FILE_CHARS
from cfgcheck.adapters.launch.expansion import MAX_VALUE_CHARS
from cfgcheck.config import Config
from cfgcheck.lint import lint

# ---------------------------------------------------------------- expansion ("billion laughs")

# 24 doublings of 8 characters: 128 MiB from about 400 bytes; what each expander is given
_DOUBLINGS = 24


def _shell_lines(separator: str = "\n") -> str:
    lines = ["V0=abcdefgh"] + [f"V{i}=$V{i - 1}$V{i - 1}" for i in range(1, _DOUBLINGS + 1)]
    return separator.join(lines)


def _make_lines() -> str:
    lines = ["V0 := abcdefgh"] + [f"V{i} := $(V{i - 1})$(V{i - 1})" for i in range(1, _DOUBLINGS + 1)]
    return "\n".join(lines)


BOMBS = {
    "run.sh": _shell_lines() + f"\nvllm serve m --served-model-name $V{_DOUBLINGS}\n",
    "Makefile": _make_lines() + f"\nserve:\n\tvllm serve m --served-model-name $(V{_DOUBLINGS})\n",
    "supervisord.conf": "[program:engine]\ncommand=sh -c \"" + _shell_lines("; ")
                        + f"; vllm serve m --served-model-name $V{_DOUBLINGS}\"\n",
    "deploy.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: bomb}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: vllm/vllm-openai:v0.8.5
          command: ["sh", "-c"]
          args:
            - |
""" + "".join(f"              {line}\n" for line in _shell_lines().split("\n"))
      + f"              vllm serve m --served-model-name $V{_DOUBLINGS}\n",
}


def _served(root: Path, name: str) -> list:
    return [m for m in lint([root / name], Config(root, {})).models if m.path == name]


def _after(model, flag: str) -> str:
    texts = [token.text for token in model.argv]
    return texts[texts.index(flag) + 1]


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_doubling_variables_stay_unknown_past_the_value_bound(tmp_path: Path, name: str) -> None:
    """Twenty-four lines ``V1=$V0$V0``: the value past the bound is unknown (kept as written), nothing
    longer than the bound is built, and the run's memory peak stays small (128 MiB and 21 s before)."""
    (tmp_path / name).write_text(BOMBS[name], encoding="utf-8")
    tracemalloc.start()
    try:
        models = _served(tmp_path, name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(models) == 1, name
    assert max(len(token.text) for token in models[0].argv) <= MAX_VALUE_CHARS
    assert "$" in _after(models[0], "--served-model-name")  # unknown: the reference as written
    assert peak < 32 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"


def test_compose_interpolation_of_a_long_value_many_times(tmp_path: Path) -> None:
    """One compose word naming a 60,000-character ``.env`` value 2,000 times (120 MB before): unknown."""
    (tmp_path / ".env").write_text("V=" + "x" * 60_000 + "\nNAME=served\n", encoding="utf-8")
    (tmp_path / "compose.yaml").write_text(
        "services:\n  engine:\n    image: vllm/vllm-openai:v0.8.5\n"
        "    command: [\"--model\", \"m\", \"--served-model-name\", \"" + "$V" * 2_000 + "\", \"--port\", \"$NAME\"]\n",
        encoding="utf-8")
    tracemalloc.start()
    try:
        models = _served(tmp_path, "compose.yaml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert _after(models[0], "--served-model-name").startswith("$V$V")
    assert _after(models[0], "--port") == "served"  # a short value is still substituted
    assert peak < 32 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"


def test_expansion_work_per_file_is_bounded(tmp_path: Path) -> None:
    """Each line doubles a 32,000-character value (within the value bound) a thousand times: past the
    file's budget the later values are unknown, so the work does not grow with the lines."""
    lines = ["V0=" + "x" * 32_000] + [f"W{i}=$V0$V0" for i in range(1, 1001)]
    (tmp_path / "run.sh").write_text("\n".join(lines) + "\nvllm serve m --served-model-name $W1 --port $W1000\n",
                                     encoding="utf-8")
    assert 1000 * 64_000 > MAX_FILE_CHARS  # the file asks for more than its budget
    model = _served(tmp_path, "run.sh")[0]
    assert len(_after(model, "--served-model-name")) == 64_000  # early lines: known
    assert _after(model, "--port") == "$W1000"  # past the budget: unknown


# ---------------------------------------------------------------- an unparseable Python spec file

SPECS = """\
SPECS = {
    "qwen": {"model": "Qwen/Qwen3-8B", "tp": 1, "vllm_args": ["--max-model-len", "999999999"]},
}
"""
# one appended line each: Python's parser refuses them (SyntaxError, MemoryError from its nesting limits)
UNPARSEABLE = {"parentheses": ("x = " + "(" * 201 + ")" * 201 + "\n", "SyntaxError"),
               "minuses": ("y = " + "-" * 100_000 + "1\n", "MemoryError")}


@pytest.mark.parametrize("case", sorted(UNPARSEABLE))
def test_an_unparseable_spec_file_is_a_cfg000_naming_the_error(tmp_path: Path, case: str) -> None:
    line, error = UNPARSEABLE[case]
    (tmp_path / "specs.py").write_text(SPECS + line, encoding="utf-8")
    result = lint([tmp_path / "specs.py"], Config(tmp_path, {}))
    assert [(f.code, f.location.path) for f in result.findings] == [("CFG000", "specs.py")]
    assert error in result.findings[0].message


def test_an_unparseable_spec_file_does_not_fix_the_bases_findings(tmp_path: Path) -> None:
    """In review the head's unreadable file hid every spec, and the base's findings counted as fixed."""
    from cfgcheck.diff import lint_diff
    from helpers import git, make_repo

    repo = make_repo(tmp_path, {"specs.py": SPECS})
    base = lint([repo / "specs.py"], Config(repo.resolve(), {}))
    assert {f.code for f in base.findings} >= {"CFG207"}
    (repo / "specs.py").write_text(SPECS + UNPARSEABLE["parentheses"][0], encoding="utf-8")
    git(repo, "commit", "-qam", "hide the specs")
    result = lint_diff([repo], Config(repo.resolve()), "HEAD~1")
    assert [f.code for f in result.findings] == ["CFG000"]
    assert result.fixed == []


@pytest.mark.parametrize("where", ["values", "overheads"])
def test_deeply_nested_json_values_are_invalid_not_a_crash(where: str) -> None:
    """json's decoder recurses: a 100,000-deep array in a flag value or an env JSON is a RecursionError."""
    if where == "values":
        from cfgcheck.engines.value_types import Invalid, _json

        assert isinstance(_json("[" * 100_000), Invalid)
    else:
        from cfgcheck.capacity.overheads import _json_value

        assert _json_value('{"a":' * 100_000) == {}


@pytest.mark.parametrize("value", ["[" * 100_000, '{"VllmWorker": '])
def test_a_dynamo_deployment_config_that_is_not_json_is_a_cfg000(tmp_path: Path, value: str) -> None:
    """The graph's engines vanished without a word (a JSONDecodeError), or the document's CFG000 quoted
    the decoder's message (a RecursionError): one CFG000 naming the variable and the error's class."""
    from helpers import FIXTURES

    text = (FIXTURES / "formats" / "operators" / "dynamo-graph-v03.yaml").read_text(encoding="utf-8")
    start = text.index("value: '{") + len("value: '")
    text = text[:start] + value + text[text.index("'\n", start):]
    result = lint([_write(tmp_path, "graph.yaml", text)], Config(tmp_path, {}))
    found = [f for f in result.findings if f.code == "CFG000"]
    assert len(found) == 1 and "DYN_DEPLOYMENT_CONFIG is not JSON" in found[0].message, result.findings
    assert ("RecursionError" if value.startswith("[") else "JSONDecodeError") in found[0].message
    assert found[0].location.line == 10


def _write(root: Path, name: str, text: str) -> Path:
    (root / name).write_text(text, encoding="utf-8")
    return root / name


def test_a_deeply_nested_toml_configuration_is_one_line(tmp_path: Path) -> None:
    from cfgcheck.config import ConfigError, load

    (tmp_path / "pyproject.toml").write_text("[tool.cfgcheck]\na = " + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load(tmp_path)
