"""Pull-request content is hostile (docs/SECURITY.md, "Promises" and its table of findings), each reproduction as a test.

5. Comment parsing in linear time: every pattern run on comment text, fed 100 KB adversarial comments.
6. Documents per file are limited (``max-documents``); the 5 s / 300 MiB budget holds on the reproductions.
8. Control characters from files are shown, never obeyed, in every output format.
11. An exception while reading or checking one file is that file's CFG000; the run goes on.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lazy import Pattern as LazyPattern
from cfgcheck.lint import lint
from cfgcheck.textsafe import neutralise
from cfgcheck.yamlbounds import MAX_COMMENT_CHARS
from tests.security.test_hostile import GOOD, MARK, findings, inproc, measure, only_cfg000

# ---------------------------------------------------------------- 5. linear-time comment parsing

# Every module that runs a regular expression on comment text, and those whose patterns read other
# pull-request text (model names, file text in diff mode, report text): each module-level compiled
# pattern is fuzzed.
COMMENT_PARSERS = ("cfgcheck.rules._ceilings", "cfgcheck.capacity.measured", "cfgcheck.capacity.architecture",
                   "cfgcheck.suppressions", "cfgcheck.registry", "cfgcheck.adapters.core.contexts",
                   "cfgcheck.rules.stale_flag_reference", "cfgcheck.rules.unexplained_seq_pin", "cfgcheck.discover",
                   "cfgcheck.related_files", "cfgcheck.reporters.markdown", "cfgcheck.textsafe")

# Pieces that the patterns' quantifiers and alternatives consume: digits and separators, spaces, signs,
# the keywords the patterns look for. An adversarial comment repeats one piece between a prefix that
# starts a match and a suffix that makes it fail at the very end (the shape that makes a backtracking
# matcher retry every split).
PIECES = ["1", " ", "\t", "1 ", "1,", "1,000", "1 000", "1.", ".1", "1%", "% ", "1k ", "-", "--a", "-a", "a", "a.",
          "a:", ": ", "=", "ceiling ", "ceiling 1", "1 ceiling", "never ", "pool ", "tokens ", "->", "1 -> ", "to ",
          "cfgcheck:", "cfgcheck: ", "cfgcheck: ignore[", "cfgcheck: ignore[a", "cfgcheck: a=", "#", "é", "v1.", "1/"]
PREFIXES = ["", "ceiling ", "cfgcheck: ", "kv pool ", "- a: "]
SUFFIXES = ["", "x", "%"]


def _patterns() -> list[tuple[str, re.Pattern]]:
    found = []
    for name in COMMENT_PARSERS:
        module = importlib.import_module(name)
        # a pattern compiled on first use (lazy.Pattern) is fuzzed like one compiled at import
        found.extend((f"{name}.{attr}", value.compiled() if isinstance(value, LazyPattern) else value)
                     for attr, value in vars(module).items() if isinstance(value, (re.Pattern, LazyPattern)))
    return found


PATTERNS = _patterns()


SHAPES = [(prefix, piece, suffix) for piece in PIECES for prefix in PREFIXES for suffix in SUFFIXES]


def _text(shape: tuple[str, str, str], size: int) -> str:
    prefix, piece, suffix = shape
    return prefix + piece * (size // len(piece)) + suffix


def _exercise(pattern: re.Pattern, text: str) -> float:
    """CPU seconds (not wall time: a busy runner slows the clock, not the work)."""
    start = time.process_time()
    pattern.search(text)
    pattern.match(text)
    for _ in pattern.finditer(text):
        pass
    return time.process_time() - start


def test_comment_patterns_are_found() -> None:
    """The fuzz below is meaningful: it sees the patterns the issue's reproductions went through."""
    names = {name for name, _ in PATTERNS}
    for expected in ("cfgcheck.rules._ceilings._STATED_BEFORE", "cfgcheck.capacity.measured._ARROW", "cfgcheck.capacity.measured._NUM_RE",
                     "cfgcheck.suppressions._DIRECTIVE", "cfgcheck.adapters.core.contexts._DIRECTIVE"):
        assert expected in names


@pytest.mark.parametrize("name, pattern", PATTERNS, ids=[name for name, _ in PATTERNS])
def test_comment_pattern_is_linear_on_adversarial_input(name: str, pattern: re.Pattern) -> None:
    """Every adversarial shape at 3 KB (a quadratic pattern already takes ~0.1-1 s there: it fails here
    instead of hanging at 100 KB), then the slowest shapes at 100 KB, each well under a second, and
    growing about linearly (a 33x longer input may not cost 330x)."""
    small = 3_000
    # the least of two tries, as at 100 KB below: a quadratic pattern is slow on both, a descheduled VM on one
    # (a clean clone's CI once measured 0.19 s of CPU time for a pattern that takes under 1 ms here)
    timed = sorted((min(_exercise(pattern, _text(shape, small)) for _ in range(2)), shape) for shape in SHAPES)
    assert timed[-1][0] < 0.1, f"{name}: {timed[-1][0]:.3f} s on 3 KB of {timed[-1][1]}"
    for seconds_small, shape in timed[-3:]:
        seconds_big = min(_exercise(pattern, _text(shape, 100_000)) for _ in range(2))
        assert seconds_big < 1.0, f"{name}: {seconds_big:.2f} s on 100 KB of {shape}"
        assert seconds_big < max(10 * 33 * seconds_small, 0.25), \
            f"{name}: {seconds_small * 1000:.2f} ms at 3 KB, {seconds_big * 1000:.0f} ms at 100 KB of {shape}"


def test_comment_parsing_functions_are_linear_on_100_kb() -> None:
    """The functions themselves, on 100 KB comments (the limit on comment length is a second guard)."""
    from cfgcheck.capacity import measured
    from cfgcheck.model import Location, Setting
    from cfgcheck.rules import _ceilings, unexplained_seq_pin

    def ceiling(text):
        return _ceilings.from_comments(Setting("gpu_memory_utilization", 0.9, Location("f.yaml", 2, 1),
                                               "gpuMemoryUtilization", (text,)))

    parsers = {"ceiling ": ceiling, "kv pool ": measured._pool_numbers_in,
               "- a: ": lambda text: unexplained_seq_pin.reason_words([text])}
    for prefix, parse in parsers.items():  # each with the words that make it read on
        for piece in PIECES:
            for text in (prefix + piece * (100_000 // len(piece)) + "x", piece * (100_000 // len(piece))):
                start = time.process_time()
                parse(text)
                seconds = time.process_time() - start
                assert seconds < 1.0, f"{parse.__name__}: {seconds:.2f} s on 100 KB of {prefix!r} + {piece!r}"


CEILING_VALUES = GOOD.replace("    maxModelLen: 8192\n", "    maxModelLen: 8192\n{comment}    gpuMemoryUtilization: 0.9\n")


@pytest.mark.parametrize("body", ["1" * 20_000, "1" + " " * 20_000 + "x", "ceiling" + " " * 100_000 + "x",
                                  "1" * 100_000, "ceiling 1 " * 10_000, "HARD CEILING 0.80 " + "1 " * 50_000])
def test_long_comment_above_the_memory_setting(repo: Path, body: str) -> None:
    """docs/SECURITY.md finding 5: a 20 KB comment above gpuMemoryUtilization took 31 s (quadratic)."""
    (repo / "ceiling.yaml").write_text(CEILING_VALUES.format(comment=f"    # {body}\n"), encoding="utf-8")
    report = inproc(repo, ".")  # asserts the CPU-time bound
    assert report["cpu"] < 2.0
    assert not [f for f in findings(report, "ceiling.yaml") if f["code"] == "CFG000"]


def test_a_comment_over_the_length_limit_is_not_read_and_is_reported_when_it_is_a_directive(tmp_path: Path) -> None:
    filler = "x" * MAX_COMMENT_CHARS
    text = (MARK + "a: 1  # cfgcheck: ignore[CFG000] " + filler + "\n"   # a suppression: not read, reported
            + "b: 2  # " + filler + "\n"                                   # prose: not read, not reported
            + "c: 3  # cfgcheck: ignore[CFG000] short enough\n")         # read (and unused)
    (tmp_path / "f.yaml").write_text(text, encoding="utf-8")
    result = lint([tmp_path / "f.yaml"], Config(tmp_path))
    problems = [f for f in result.findings if f.code == "CFG000"]
    assert len(problems) == 1, [f.message for f in result.findings]
    assert problems[0].location.line == 2 and problems[0].location.column == 7
    assert "limit max-comment-chars" in problems[0].message and f"{MAX_COMMENT_CHARS:,}" in problems[0].message
    assert [f.location.line for f in result.findings if f.code == "CFG002"] == [4]  # the short one was read


def test_a_long_directive_in_a_file_of_comments_only(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(MARK + "# cfgcheck: gpu=H100 " + "x" * MAX_COMMENT_CHARS + "\n", encoding="utf-8")
    (finding,) = lint([tmp_path / "f.yaml"], Config(tmp_path)).findings
    assert finding.code == "CFG000" and "limit max-comment-chars" in finding.message
    assert (finding.location.line, finding.location.column) == (2, 1)


def test_the_ceiling_comment_still_works_within_the_limit(tmp_path: Path) -> None:
    """The linear patterns read what the old ones read."""
    from cfgcheck.model import Location, Setting
    from cfgcheck.rules._ceilings import from_comments

    cases = {"HARD CEILING 0.80": 0.80, "ceiling: 0.85": 0.85, "ceiling of 85%": 0.85, "ceiling is .9": 0.9,
             "85 % hard ceiling": 0.85, "0.875  ceiling": 0.875, "cfgcheck: ceiling=0.7 shared GPU": 0.7,
             "ceiling to 90 %": 0.9, "never raise this": None}
    for text, value in cases.items():
        setting = Setting("gpu_memory_utilization", 0.9, Location("f.yaml", 1, 1), "gpuMemoryUtilization", (text,))
        ceiling = from_comments(setting)
        assert ceiling is not None and ceiling.value == pytest.approx(value) if value else ceiling.value is None, text


def test_measured_pool_comments_still_read_within_the_limit() -> None:
    from cfgcheck.capacity.measured import _pool_numbers_in

    assert _pool_numbers_in("GPU KV cache size: 121,344 tokens") == 121_344
    assert _pool_numbers_in("kv pool 1 000 000 tokens") == 1_000_000
    assert _pool_numbers_in("kv pool was 50000 -> now 81920 tokens") == 81_920
    assert _pool_numbers_in("kv pool at 8 1024 tokens") == 1024  # the old pattern read "8 102"
    assert _pool_numbers_in("kv pool " + "1" * 5000 + " tokens") is None  # not a count: no int conversion


# ---------------------------------------------------------------- 6. documents per file


def test_five_megabytes_of_document_markers(repo: Path) -> None:
    """docs/SECURITY.md finding 6: 5 MB of ``---`` took 18 s and 1.07 GB; now refused at document 1,001."""
    (repo / "docs.yaml").write_text(MARK + "---\n" * ((5 * 1024 * 1024 - 64) // 4), encoding="utf-8")
    report = measure(repo, ".")  # asserts 5 s and 300 MiB in a child process
    finding = only_cfg000(report, "docs.yaml", "limit max-documents", "1,000")
    assert finding["line"] == 1002
    assert report["json"]["summary"]["served_models"] == 1  # good.yaml


def test_five_megabytes_of_small_documents(repo: Path) -> None:
    (repo / "docs.yaml").write_text(MARK + "---\na: 1\n" * ((5 * 1024 * 1024 - 64) // 9), encoding="utf-8")
    report = measure(repo, ".")
    only_cfg000(report, "docs.yaml", "limit max-documents")


def test_a_five_megabyte_kv_pool_comment(repo: Path) -> None:
    """docs/SECURITY.md finding 6: a 4.8 MB KV-pool comment took 57 s."""
    comment = "    # GPU KV cache size: " + "1,000 " * (4_800_000 // 6) + "tokens\n"
    (repo / "pool.yaml").write_text(CEILING_VALUES.format(comment=comment), encoding="utf-8")
    report = measure(repo, ".")
    assert not [f for f in findings(report, "pool.yaml") if f["code"] == "CFG000"]  # prose: not reported


def test_max_documents_is_configurable(repo: Path) -> None:
    (repo / "three.yaml").write_text(MARK + "a: 1\n---\nb: 2\n---\nc: 3\n", encoding="utf-8")
    assert not findings(inproc(repo, "three.yaml"))
    report = inproc(repo, "three.yaml", config="limits:\n  max-documents: 2\n")
    finding = only_cfg000(report, "three.yaml", "more than 2 YAML documents", "(limit max-documents)")
    assert finding["line"] == 5  # the third document's marker
    (repo / ".cfgcheck.yaml").write_text("limits:\n  max-documents: 0\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "cfgcheck", "lint", "."], cwd=repo, capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "max-documents" in out.stderr


# ---------------------------------------------------------------- 8. control characters in every format

# A value that, printed raw, starts workflow commands in an Actions log and drives the terminal.
CONTROL = ("x\x1b]0;owned\x07\x1b[2J\r\n::add-mask::secret\n::stop-commands::tok\n::error file=x::forged"
           "\x9b31m\x85\u2028::warning::u2028\u2029\x7f\x00\u202eend")
CONTROL_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def control_result(tmp_path: Path):
    text = MARK + (
        "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService\nmetadata:\n"
        f"  name: {json.dumps(CONTROL)}\nspec:\n  runtime: vllm\n  image: vllm/vllm-openai:v0.26.0\n"
        f"  extraArgs:\n  - --max-num-seqs\n  - {json.dumps(CONTROL)}\n")
    (tmp_path / "ctl.yaml").write_text(text, encoding="utf-8")
    result = lint([tmp_path / "ctl.yaml"], Config(tmp_path))
    assert any("::add-mask::" in f.message for f in result.findings)  # the value reaches a message
    assert any("::add-mask::" in (f.model or "") for f in result.findings)  # and the model name
    return result


def _no_command_or_control(out: str, lines_expected: int | None = None) -> None:
    lines = out.split("\n")
    assert not CONTROL_CHARS.search(out), CONTROL_CHARS.search(out)
    assert "\r" not in out
    for line in lines:
        assert not line.lstrip().startswith("::"), line
    if lines_expected is not None:
        assert len(lines) == lines_expected


def test_text_format_shows_control_characters(tmp_path: Path) -> None:
    """docs/SECURITY.md finding 8: a newline in a value started a line ``::add-mask::`` that Actions executes."""
    from cfgcheck.reporters.text import render

    result = control_result(tmp_path)
    for color in (False, True):
        out = render(result, color=color)
        plain = re.sub("\x1b\\[[0-9;]*m", "", out) if color else out  # rich's own colour codes only
        _no_command_or_control(plain)
        rows = [f for f in result.findings if f.suppressed is None]
        heads = [line for line in plain.split("\n") if line.startswith("ctl.yaml:")]
        assert len(heads) == len(rows)
    assert "\\x1b]0;owned\\x07" in out and "\\n::add-mask::secret" in out and "\\u2028" in out


def test_workflow_annotations_show_control_characters(tmp_path: Path) -> None:
    from cfgcheck.reporters.annotations import render

    result = control_result(tmp_path)
    out = render(result)
    lines = out.split("\n")[:-1]
    assert len(lines) == len(result.active())
    for line in lines:  # each line one command of cfgcheck's own; nothing a value wrote starts another
        assert re.match(r"::(error|warning|notice) file=ctl\.yaml,line=\d+,", line), line
        _no_command_or_control(line[2:])
    assert "\\x1b" in out and "\\u2028" in out


def test_markdown_shows_control_characters(tmp_path: Path) -> None:
    from cfgcheck.reporters.markdown import render

    out = render(control_result(tmp_path))
    _no_command_or_control(out)
    assert "\\\\x1b" in out  # the escape's backslash is itself escaped for Markdown: it renders as \x1b


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_escape_control_characters(tmp_path: Path, fmt: str) -> None:
    """JSON escapes them already (json.dumps, ensure_ascii): nothing raw in the output, and the value
    itself is carried exactly."""
    from cfgcheck.reporters import renderer

    out = renderer(fmt)(control_result(tmp_path))
    assert not CONTROL_CHARS.search(out) and "\r" not in out and "\t" not in out
    assert any("\x1b]0;owned\x07\x1b[2J\r\n::add-mask::" in text for text in _strings(json.loads(out)))


def _strings(data):
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)


def test_neutralise() -> None:
    assert neutralise("a\tb\nc\rd\x1b[0m\x9b\x7f\u2028\u202e\x00 \\n é 中 😀") == \
        "a\\tb\\nc\\rd\\x1b[0m\\x9b\\x7f\\u2028\\u202e\\x00 \\n é 中 😀"


# ---------------------------------------------------------------- 11. per-file isolation

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
      containers:
      - name: c
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "{model}", "--max-num-seqs", "{seqs}"]
"""


def test_a_max_num_seqs_of_400_digits(repo: Path) -> None:
    """docs/SECURITY.md finding 11: float(10**400) raised OverflowError in the capacity arithmetic: exit 2, no
    output for any file."""
    (repo / "huge.yaml").write_text(DEPLOYMENT.format(model="meta-llama/Llama-3.1-8B-Instruct", seqs="1" + "0" * 400),
                                    encoding="utf-8")
    report = measure(repo, ".")  # exit 0/1, no traceback, no internal error
    codes = [f["code"] for f in findings(report, "huge.yaml")]
    assert "CFG000" not in codes and "CFG203" in codes  # the root is fixed: it is simply far too many
    assert report["json"]["summary"]["served_models"] == 2


@pytest.mark.parametrize("where", ["argv", "yaml"])
def test_an_integer_over_pythons_conversion_limit(repo: Path, where: str) -> None:
    """int() refuses more than 4,300 digits (ValueError): the value stays text, and is reported as one."""
    digits = "1" * 5001
    if where == "argv":
        text = DEPLOYMENT.format(model="meta-llama/Llama-3.1-8B-Instruct", seqs=digits)
    else:
        text = GOOD.replace("name: good", "name: huge").replace("maxModelLen: 8192", f"maxModelLen: {digits}")
    (repo / "huge.yaml").write_text(text, encoding="utf-8")
    report = measure(repo, ".")
    assert "CFG000" not in [f["code"] for f in findings(report, "huge.yaml")]
    assert report["json"]["summary"]["served_models"] == 2


def test_a_huge_kv_pool_tokens_directive(repo: Path) -> None:
    """A 5,000-digit ``kv-pool-tokens=`` ended the run (int() over 4,300 digits). The comment is now
    over the comment-length limit, reported as such; below it, the number is bounded at its root."""
    from cfgcheck.capacity import find_measured_pool
    from cfgcheck.model import Directive, Location, ServedModel

    (repo / "pool.yaml").write_text("# cfgcheck: kv-pool-tokens=" + "1" * 5000 + "\n"
                                    + GOOD.replace("name: good", "name: pool"), encoding="utf-8")
    report = measure(repo, ".")
    only_cfg000(report, "pool.yaml", "limit max-comment-chars")
    assert report["json"]["summary"]["served_models"] == 2
    where = Location("f.yaml", 1, 1)
    model = ServedModel("m", "Deployment", "f.yaml", 0, where,
                        directives=[Directive("kv-pool-tokens", "1" * 5000, "", where)])
    assert find_measured_pool(model) == (None, None)
    model.directives = [Directive("kv-pool-tokens", "121,344", "", where)]
    assert find_measured_pool(model)[0] == 121_344


@pytest.mark.parametrize("config_json, why", [
    ('{"num_hidden_layers": "many", "num_attention_heads": 32}', "has a field of the wrong type: ValueError"),
    ("[1, 2]", "is a JSON list, not an object"),
    ('{"num_hidden_layers": 1e999}', "has a field of the wrong type: OverflowError"),
    ("{bad", "cannot be read as JSON: JSONDecodeError"),
    ('{"text_config": [], "num_hidden_layers": [1]}', "has a field of the wrong type: TypeError"),
])
def test_a_malformed_config_json(repo: Path, config_json: str, why: str) -> None:
    """A malformed ``model_configs`` config.json ended the run; now the architecture is unknown, with why."""
    folder = repo / "models" / "acme" / "m1"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config_json, encoding="utf-8")
    (repo / "m1.yaml").write_text(DEPLOYMENT.format(model="acme/m1", seqs="64"), encoding="utf-8")
    report = measure(repo, ".", config="model_configs: models\n")
    assert not [f for f in findings(report, "m1.yaml") if f["code"] == "CFG000"]
    out = subprocess.run([sys.executable, "-m", "cfgcheck", "capacity", "m1.yaml"], cwd=repo, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert f"architecture of acme/m1 unknown (acme/m1/config.json under model_configs {why})" in out.stdout


def _boom(*_args, **_kwargs):
    raise ZeroDivisionError("secret-looking text that must not be echoed")


def _crashes(result, path: str) -> list:
    return [f for f in result.findings if f.code == "CFG000" and f.location.path == path]


@pytest.fixture
def two_files(tmp_path: Path) -> Path:
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(GOOD.replace("name: good", "name: bad"), encoding="utf-8")
    return tmp_path


def _assert_isolated(result, step: str) -> None:
    (crash,) = _crashes(result, "bad.yaml")
    assert f"while {step}" in crash.message and "internal error ZeroDivisionError" in crash.message
    assert "secret-looking" not in crash.message and "Traceback" not in crash.message
    assert not _crashes(result, "good.yaml")
    assert any(f.location.path == "good.yaml" for f in result.findings)  # the other file was checked


def test_an_exception_in_a_rule_is_that_served_models_cfg000(two_files: Path, monkeypatch) -> None:
    import cfgcheck.registry
    from cfgcheck.registry import find

    load = cfgcheck.registry.load  # how a lint run imports the rules it needs
    original = find("CFG301").check
    flaky = find("CFG301").replaced(check=lambda model, ctx: _boom() if model.path == "bad.yaml" else original(model, ctx))
    monkeypatch.setattr(cfgcheck.registry, "load", lambda code: flaky if code == "CFG301" else load(code))
    result = lint([two_files], Config(two_files), select=["CFG000", "CFG301"])
    _assert_isolated(result, "checking CFG301 unpinned-image on this served model")
    assert not [f for f in result.findings if f.code == "CFG301" and f.location.path == "bad.yaml"]


@pytest.mark.parametrize("target", ["cfgcheck.stages.load_file", "cfgcheck.adapters.core.registry.served_models",
                                    "cfgcheck.adapters.core.registry.index"])
def test_an_exception_while_reading_a_file_is_its_cfg000(two_files: Path, monkeypatch, target: str) -> None:
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    original = getattr(module, name)

    def flaky(*args, **kwargs):
        named = [a for a in args if "bad.yaml" in str(getattr(a, "path", a))]
        return _boom() if named else original(*args, **kwargs)

    monkeypatch.setattr(module, name, flaky)
    _assert_isolated(lint([two_files], Config(two_files)), "reading this file")


def test_a_run_scope_rule_that_raises_is_rerun_file_by_file(two_files: Path) -> None:
    from cfgcheck.lint import collect, enabled_rules, run_rules
    from cfgcheck.model import Finding
    from cfgcheck.registry import find

    def check(models, ctx):
        if any(m.path == "bad.yaml" for m in models):
            _boom()
        return [Finding(f"{len(models)} models", m.location) for m in models]

    config = Config(two_files)
    rules = [find("CFG301").replaced(check=check, scope="run"), *enabled_rules(config, ["CFG000"], None)]
    _, models = collect([two_files], config)
    found = run_rules(rules, config, models)
    assert [f.location.path for f in found if f.code == "CFG301"] == ["good.yaml"]
    (crash,) = [f for f in found if f.code == "CFG000"]
    assert crash.location.path == "bad.yaml" and "ZeroDivisionError" in crash.message


def test_the_comment_scan_skips_lines_without_a_hash_and_finds_the_same(monkeypatch) -> None:
    """The fast scan (LF-only text: only the lines holding a '#') finds what the line-by-line scan finds."""
    import random

    from cfgcheck import yamlcomments, yamlio

    rnd = random.Random(13)
    pieces = ["#", " ", "\n", "a", ":", "'", "- ", "x#y", " # c", "|\n  #", "\t#", "é"]
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        cuts = sorted(rnd.sample(range(len(text) + 1), min(len(text) + 1, 2 * rnd.randint(0, 3))))
        spans = list(zip(cuts[::2], cuts[1::2]))
        fast = yamlio.scan_comments(text, spans)
        with monkeypatch.context() as patch:
            patch.setattr(yamlcomments, "_other_breaks", lambda _text: True)  # every line is walked
            assert yamlio.scan_comments(text, spans) == fast, (text, spans)


def test_model_references_are_found_in_linear_time() -> None:
    """Beyond the issue: diff mode looked for ``modelRef:`` with ``^\\s*`` per line, which ran on across
    every blank line below (40 KB of blank lines took 11 s)."""
    from cfgcheck.related_files import _MODEL_REF

    for text in (" \n" * 50_000, "\n" * 100_000 + "x", "  modelRef: " * 10_000):
        start = time.process_time()
        _MODEL_REF.findall(text)
        assert time.process_time() - start < 1.0
    assert _MODEL_REF.findall("spec:\n  modelRef: 'llama-3'\n\n modelRef:qwen\n") == ["llama-3", "qwen"]


def test_capacity_table_shows_control_characters_and_survives_a_failing_model(tmp_path: Path, monkeypatch) -> None:
    from cfgcheck.capacity.report import render_capacity

    result = control_result(tmp_path)
    out = render_capacity(result.models, {})
    _no_command_or_control(out)
    assert "\\n::add-mask::secret" in out
    # the submodule, not the function of the same name the package re-exports
    monkeypatch.setattr(importlib.import_module("cfgcheck.capacity.estimate"), "_estimate", _boom)
    out = render_capacity(result.models, {})
    assert "not computed: internal error ZeroDivisionError" in out and "secret-looking" not in out


def test_adr_dates_are_found_in_linear_time() -> None:
    """Beyond the issue: an ADR's ``Date:`` was looked for with ``^\\s*[-*]?\\s*`` per line, cubic across
    blank lines (2,000 of them took 84 s); an ADR comes from the repository, which pull requests write."""
    from cfgcheck.propose.docs import adr_date

    for text in (" \n" * 50_000, "\n- \n" * 30_000, "-" * 100_000):
        start = time.process_time()
        assert adr_date(text) is None
        assert time.process_time() - start < 1.0
    assert adr_date("# 0012. Title\n\n* Status: Accepted\n* Date: 2025-01-02\n") == "2025-01-02"
    assert adr_date("Date: 2024-11-30") == "2024-11-30" and adr_date("  - Date:  2023-05-06\n") == "2023-05-06"
