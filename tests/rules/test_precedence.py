"""One cause, one finding (cfgcheck.precedence): findings on one setting that share a cause are one
finding, and two findings never contradict each other; CFG103 names every unknown flag of a line once;
CFG203's advice keeps to CFG206's step and respects a stated measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.model import Finding, Location
from cfgcheck.precedence import Relation, resolve
from helpers import FIXTURES, expected_markers, git, lint_fixture, lint_text, make_repo, write

RULES = FIXTURES / "rules"
# fixtures whose marked lines carry exactly the marked findings, one each (the others are answered for)
ONE_PER_LINE = {
    "CFG205/pass-too-many-for-the-pool.yaml": "CFG205",  # CFG203 says too many: not also "pinned below"
    "CFG501/pass-folded-into-parallel-size-mismatch.yaml": "CFG501",  # one parallel size, one finding
    "CFG103/fail-dynamo-flags-on-one-line.yaml": None,  # five Dynamo flags, one note
}


@pytest.mark.parametrize("name", sorted(ONE_PER_LINE))
def test_one_finding_per_marked_line(name: str, tmp_path: Path) -> None:
    fixture = RULES / name
    result = lint_fixture(fixture, tmp_path)
    for code, line in expected_markers(fixture):
        on_line = [f for f in result.findings if f.location.line == line and f.code not in ("CFG301", "CFG303", "CFG505")]
        assert [f.code for f in on_line] == [code], [f"{f.code} {f.message}" for f in on_line]
    answered = ONE_PER_LINE[name]
    assert answered is None or answered not in {f.code for f in result.findings}


def only(result, code: str) -> Finding:
    (finding,) = [f for f in result.findings if f.code == code]
    return finding


def test_a_ceiling_beside_an_explicit_kv_size_still_holds_and_nothing_calls_the_value_inert(tmp_path: Path) -> None:
    """vLLM sizes the pool from --kv-cache-memory-bytes but still demands gpu_memory_utilization x the GPU free at
    start-up (vllm/v1/worker/utils.py request_memory): above a ceiling it fails beside the co-tenant."""
    result = lint_fixture(RULES / "CFG204/fail-above-ceiling-beside-explicit-kv.yaml", tmp_path)
    error = only(result, "CFG204")
    assert error.severity == "error"
    assert error.message == ("gpu_memory_utilization 0.97 is above the ceiling 0.8 documented beside it: beside an "
                             "explicit KV size it no longer sizes the pool, but vLLM still refuses to start unless "
                             "that share of the GPU is free")
    assert "CFG107" not in {f.code for f in result.findings}


def test_parallel_size_and_shared_memory_are_one_error_with_both_fixes(tmp_path: Path) -> None:
    result = lint_fixture(RULES / "CFG501/pass-folded-into-parallel-size-mismatch.yaml", tmp_path)
    folded = only(result, "CFG208")
    assert folded.severity == "error" and "; also CFG501: 2 parallel ranks" in folded.message
    assert folded.remediation.startswith("request 4 GPUs or lower the parallel sizes to fit 2; mount an emptyDir")


def test_five_dynamo_flags_on_one_line_are_one_note_naming_the_five(tmp_path: Path) -> None:
    note = only(lint_fixture(RULES / "CFG103/fail-dynamo-flags-on-one-line.yaml", tmp_path), "CFG103")
    assert note.severity == "note" and note.message.startswith(
        "5 flags are no vLLM flags: '--remote-prefill', '--conditional-disagg', '--max-local-prefill-length', "
        "'--max-prefill-queue-size', '--router', read as Dynamo flags")
    assert note.setting == "--remote-prefill,--conditional-disagg,--max-local-prefill-length,--max-prefill-queue-size," \
                           "--router"
    assert note.remediation == "remove those Dynamo does not accept either; add the others to this rule's `ignore`"


def finding(code: str, severity: str, line: int = 3, message: str = "m", remediation: str = "r") -> Finding:
    return Finding(message, Location("a.yaml", line, 1), remediation=remediation, code=code, severity=severity,
                   model_identity="a.yaml#Deployment/x")


def test_a_fold_keeps_the_finding_of_higher_severity_and_names_the_other() -> None:
    idle = finding("CFG208", "warning", message="2 stay idle", remediation="use tp 4")
    shm = finding("CFG501", "error", message="no /dev/shm", remediation="mount one")
    kept, answered = resolve([idle, shm])
    assert [(f.code, f.severity, f.message, f.remediation) for f in kept] == \
        [("CFG501", "error", "no /dev/shm; also CFG208: 2 stay idle", "mount one; use tp 4")]
    assert answered == [idle]


def test_findings_on_other_lines_or_other_models_are_left_alone() -> None:
    other_line = [finding("CFG203", "warning", line=3), finding("CFG205", "warning", line=4)]
    assert resolve(other_line) == (other_line, [])
    other_model = finding("CFG205", "warning")
    other_model.model_identity = "a.yaml#Deployment/y"
    pair = [finding("CFG203", "warning"), other_model]
    assert resolve(pair) == (pair, [])


def test_a_contradiction_drops_the_general_finding_whatever_its_severity() -> None:
    relation = Relation("CFG107", "CFG204", "contradicts", clause="not above any ceiling")
    kept, answered = resolve([finding("CFG204", "error", message="above 0.8"), finding("CFG107", "warning", message="inert")],
                             (relation,))
    assert [(f.code, f.message) for f in kept] == [("CFG107", "inert; not above any ceiling (CFG204: above 0.8)")]
    assert [f.code for f in answered] == ["CFG204"]


def test_a_suppression_of_an_answered_finding_is_not_unused(tmp_path: Path) -> None:
    text = (RULES / "CFG205/pass-too-many-for-the-pool.yaml").read_text(encoding="utf-8")
    text = text.replace("    maxRunningRequests: 32  # expect: CFG203",
                        "    # cfgcheck: ignore[CFG205] the pin is the operator's\n    maxRunningRequests: 32")
    result = lint_text(tmp_path, text)
    assert "CFG002" not in {f.code for f in result.findings}
    assert [f.code for f in result.findings if f.location.line == 13] == ["CFG203"]


def test_an_answered_finding_at_the_base_is_not_fixed_by_the_change(tmp_path: Path) -> None:
    from cfgcheck.config import load
    from cfgcheck.diff import lint_diff

    text = (RULES / "CFG205/pass-too-many-for-the-pool.yaml").read_text(encoding="utf-8")
    repo = make_repo(tmp_path, {"model.yaml": text})
    write(repo, {"model.yaml": text.replace("name: qwen36-27b-sglang\n", "name: qwen36-27b-sglang\n  labels: {a: b}\n")})
    git(repo, "commit", "-qam", "label")
    result = lint_diff([repo], load(repo.resolve()), "HEAD~1")
    assert "CFG205" not in {f.code for f in result.fixed}


# ---------------------------------------------------------------- CFG203's advice


def test_the_advice_never_asks_for_a_step_cfg206_flags(tmp_path: Path) -> None:
    advice = only(lint_fixture(RULES / "CFG205/pass-too-many-for-the-pool.yaml", tmp_path), "CFG203").remediation
    assert "lower the sequence limit in steps of at most 4x (next: 8), measuring each, towards 1" in advice
    assert "lower the sequence limit to 1" not in advice
    configured = lint_fixture(RULES / "CFG205/pass-too-many-for-the-pool.yaml", tmp_path / "two",
                              config={"rules": {"unattributable-step": {"max-step": 2}}})
    assert "steps of at most 2x (next: 16)" in only(configured, "CFG203").remediation


def test_a_limit_within_one_step_of_what_fits_is_advised_directly(tmp_path: Path) -> None:
    text = (RULES / "CFG203/fail-slots-above-pool.yaml").read_text(encoding="utf-8").replace(
        "parallelSlots: 32", "parallelSlots: 4")
    advice = only(lint_text(tmp_path, text), "CFG203").remediation
    assert advice.endswith(", or lower the sequence limit to 1, or grow the pool")


def test_a_stated_measurement_makes_the_finding_a_note_that_says_so(tmp_path: Path) -> None:
    note = only(lint_fixture(RULES / "CFG203/fail-measured-limit-is-a-note.yaml", tmp_path), "CFG203")
    assert note.severity == "note"
    assert note.message.endswith('; kept as a note: the measurement beside it is respected ("measured: 32 seqs at p99 '
                                 'TTFT 1.2 s on the H100 (prompts under 4k tokens)")')
    # a claim without numbers, or numbers without a measurement, is no measurement
    for comment in ("# measured knee, see the sweep", "# 32 slots doubled aggregate throughput at concurrency 16."):
        text = (RULES / "CFG203/fail-measured-limit-is-a-note.yaml").read_text(encoding="utf-8").replace(
            "# measured: 32 seqs at p99 TTFT 1.2 s on the H100 (prompts under 4k tokens)", comment)
        assert only(lint_text(tmp_path / str(len(comment)), text), "CFG203").severity == "warning", comment
