"""Renamed flags: one rename table (engines.history.rename) for upgrade and the flag rules; a successor the
catalogs are sure of is a [*] fix of CFG104 and CFG102, any other is named with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.engines.history import rename, rename_edit
from cfgcheck.engines.versions import known_versions
from cfgcheck.model import ArgToken, Location
from cfgcheck.propose.fix import compute
from helpers import FIXTURES, lint_fixture, lint_text

RULES = FIXTURES / "rules"

pytestmark = pytest.mark.skipif("0.5.23" not in known_versions("sglang"), reason="needs the SGLang 0.5.23 catalog")


@pytest.mark.parametrize(("option", "replacement", "certain"), [
    ("--cuda-graph-bs", "--cuda-graph-bs-decode", True),  # "Deprecated alias for --cuda-graph-bs-decode."
    ("--stream-output", "--incremental-streaming-output", True),  # "Use ... instead", both switches
    ("--disable-piecewise-cuda-graph", "--cuda-graph-backend-prefill=disabled", True),  # the note gives the value
    ("--elastic-ep-rejoin", "--elastic-ep-join-mode=recover", True),  # "Alias for --elastic-ep-join-mode recover."
    ("--nsa-prefill-cp-mode", "--cp-strategy", False),  # in-seq-split / round-robin-split vs zigzag / interleave
    ("--enforce-piecewise-cuda-graph", "--cuda-graph-backend-prefill", False),  # tc_piecewise is no choice now
])
def test_what_the_catalogs_say_replaced_a_flag(option: str, replacement: str, certain: bool) -> None:
    found = rename("sglang", option, "0.5.23")
    assert (found.replacement, found.certain) == (replacement, certain)


def test_a_flag_the_version_still_has_or_never_had_has_no_rename() -> None:
    assert rename("sglang", "--cuda-graph-bs-decode", "0.5.23") is None
    assert rename("sglang", "--no-such-flag", "0.5.23") is None


def token(text: str, origin: str = "args", synthetic: bool = False) -> ArgToken:
    return ArgToken(text, Location("a.yaml", 3, 15, 3, 14 + len(text)), (), origin, synthetic)


def test_only_a_certain_rename_of_a_flag_as_written_is_an_edit() -> None:
    sure, unsure = rename("sglang", "--disable-piecewise-cuda-graph", "0.5.23"), rename("sglang", "--prefill-cp-mode", "0.5.23")
    edit = rename_edit(token("--disable-piecewise-cuda-graph"), "--disable-piecewise-cuda-graph", sure)
    assert (edit.old, edit.new, edit.location.end_column) == ("--disable-piecewise-cuda-graph",
                                                              "--cuda-graph-backend-prefill=disabled", 44)
    assert rename_edit(token("--prefill-cp-mode"), "--prefill-cp-mode", unsure) is None
    assert rename_edit(token("--disable-piecewise-cuda-graph", synthetic=True), "--disable-piecewise-cuda-graph", sure) is None
    # a switch in an engine --config file (`disable-piecewise-cuda-graph: true`) would need its value rewritten
    assert rename_edit(token("--disable-piecewise-cuda-graph", origin="config:sglang.yaml"),
                       "--disable-piecewise-cuda-graph", sure) is None
    config_key = rename_edit(token("--stream-output", origin="config:sglang.yaml"), "--stream-output",
                             rename("sglang", "--stream-output", "0.5.23"))
    assert (config_key.old, config_key.new) == ("stream-output", "incremental-streaming-output")


def test_removed_flags_with_a_certain_successor_are_fixed_by_cfgcheck_fix(tmp_path: Path) -> None:
    result = lint_fixture(RULES / "CFG104/fail-renamed-flag-is-fixable.yaml", tmp_path)
    removed = {f.location.line: f for f in result.findings if f.code == "CFG104"}
    assert [line for line, f in sorted(removed.items()) if f.fix is not None] == [13, 14]
    assert removed[15].remediation.startswith("--cp-strategy replaced it (named by its deprecation note")
    assert "but not with the same values" in removed[15].remediation
    after = compute(result).files[0].after
    assert "- --incremental-streaming-output\n" in after and "- --cuda-graph-backend-prefill=disabled\n" in after
    assert "- --nsa-prefill-cp-mode\n" in after


def test_an_ambiguous_flag_that_was_renamed_is_fixed_to_what_it_meant(tmp_path: Path) -> None:
    result = lint_fixture(RULES / "CFG102/fail-ambiguous-renamed-flag.yaml", tmp_path)
    (ambiguous,) = [f for f in result.findings if f.code == "CFG102"]
    assert ambiguous.fix is not None and ambiguous.remediation.startswith(
        "write --cuda-graph-bs-decode (it replaced --cuda-graph-bs: named by its deprecation note")
    assert "- --cuda-graph-bs-decode\n            - \"128\"" in compute(result).files[0].after


def test_an_ambiguous_flag_that_abbreviated_a_flag_still_there_is_written_in_full(tmp_path: Path) -> None:
    result = lint_fixture(RULES / "CFG102/fail-ambiguous-after-upgrade.yaml", tmp_path)
    (ambiguous,) = [f for f in result.findings if f.code == "CFG102"]
    assert ambiguous.remediation == "write --max-num-seqs, the flag it abbreviated; it was short for --max-num-seqs " \
                                    "up to vLLM 0.25.0"
    assert "- --max-num-seqs\n" in compute(result).files[0].after
    never = lint_fixture(RULES / "CFG102/fail-ambiguous-max-num.yaml", tmp_path / "never")
    assert [f.fix for f in never.findings if f.code == "CFG102"] == [None]  # ambiguous in every version: no guess


def test_a_rename_is_no_fix_where_the_engine_version_is_not_known(tmp_path: Path) -> None:
    """An older SGLang than the newest catalogued one may not know the successor: the advice names it, cfgcheck fix
    leaves the flag."""
    text = (RULES / "CFG102/fail-ambiguous-renamed-flag.yaml").read_text(encoding="utf-8").replace(
        "lmsysorg/sglang:v0.5.23-cu129-amd64", "registry.example.com/team/inference:1.4")
    result = lint_text(tmp_path, text)
    (ambiguous,) = [f for f in result.findings if f.code == "CFG102"]
    assert ambiguous.fix is None and ambiguous.remediation.startswith("write --cuda-graph-bs-decode (it replaced")
