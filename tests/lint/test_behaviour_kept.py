"""Behaviour is kept: cfgcheck's findings on examples/, tests/fixtures and ../shared/corpus are the ones
recorded in tests/data/behaviour/ (by ``scripts/behaviour_snapshot.py``).

A refactor must leave these snapshots untouched. A change that alters findings on purpose regenerates
them (``python scripts/behaviour_snapshot.py``) and commits the diff with the change, where a reviewer
reads exactly which findings appeared or went away."""

from __future__ import annotations

import difflib
import importlib.util
import json

import pytest

from helpers import REPO

_spec = importlib.util.spec_from_file_location("behaviour_snapshot", REPO / "scripts" / "behaviour_snapshot.py")
behaviour = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(behaviour)


@pytest.mark.e2e  # renders the charts of the fixtures and the corpus with helm
@pytest.mark.parametrize("name", list(behaviour.TARGETS))
def test_findings_match_the_recorded_snapshot(name: str) -> None:
    folder = behaviour.TARGETS[name]
    if not folder.is_dir():
        pytest.skip(f"{folder} not found: ../shared is only beside the project's own checkout")
    recorded = (behaviour.SNAPSHOTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    now = behaviour.snapshot(folder)
    assert json.loads(now[0])["summary"]["files"] > 0
    changed = list(difflib.unified_diff(recorded, now, f"recorded {name}", f"now {name}", lineterm="", n=0))
    assert not changed, (
        f"findings on {name} changed; if on purpose, run `python scripts/behaviour_snapshot.py {name}` and "
        "commit the diff\n" + "\n".join(changed[:40]))


@pytest.mark.parametrize("name", list(behaviour.TARGETS))
def test_every_recorded_finding_is_inside_its_file(name: str) -> None:
    """No finding is placed past the end of its file (a rendered object's line reported in the chart's
    own ``Chart.yaml``): its start is a line of the file, its end at most the end of the last line."""
    folder = behaviour.TARGETS[name]
    if not folder.is_dir():
        pytest.skip(f"{folder} not found: ../shared is only beside the project's own checkout")
    lines: dict[str, int] = {}
    outside = []
    for record in (behaviour.SNAPSHOTS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()[1:]:
        finding = json.loads(record)
        path = finding["path"]
        if path not in lines:
            text = (folder / path).read_text(encoding="utf-8", errors="replace")
            lines[path] = text.count("\n") + (0 if text.endswith("\n") else 1)
        last = lines[path]
        end, end_column = finding.get("end_line") or finding["line"], finding.get("end_column") or 1
        if not 1 <= finding["line"] <= max(last, 1) or end > last + 1 or end == last + 1 and end_column > 1:
            outside.append(f"{path}:{finding['line']}-{end} ({last} lines) {finding['code']}")
    assert not outside, outside
