#!/usr/bin/env python3
"""Record what cfgcheck reports on the repository's examples, its test fixtures and the public corpus.

``tests/lint/test_behaviour_kept.py`` compares a fresh run with the snapshots written here
(``tests/data/behaviour/<target>.jsonl``), so that a refactor which should change nothing is shown to
change nothing. A change that alters findings on purpose (a new rule, a new format, a fixed false
positive) regenerates them and commits the diff, which is then reviewed like code::

    python scripts/behaviour_snapshot.py            # rewrite every snapshot whose target exists
    python scripts/behaviour_snapshot.py examples   # only one target

Each snapshot is JSON lines: a summary line (files, served models, counts), then one line per finding
in the ``--format json`` shape, sorted, so that ``git diff`` shows exactly the findings that changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOTS = REPO / "tests" / "data" / "behaviour"
TARGETS = {
    "examples": REPO / "examples",
    "fixtures": REPO / "tests" / "fixtures",
    "corpus": REPO.parent / "shared" / "corpus",
}


def snapshot(folder: Path) -> list[str]:
    """The JSON lines cfgcheck's run on ``folder`` (with its own configuration) comes down to."""
    from cfgcheck.config import load
    from cfgcheck.lint import lint
    from cfgcheck.reporters.json_report import finding_dict

    result = lint([folder], load(folder))
    summary = {"files": len(result.files), "served_models": len(result.models), **result.counts()}
    lines = sorted(json.dumps(finding_dict(f), sort_keys=True) for f in result.findings)
    return [json.dumps({"summary": summary}, sort_keys=True), *lines]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help=f"which snapshots to rewrite, of {', '.join(TARGETS)} (default: all whose folder exists)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.targets) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)}; choose from {', '.join(TARGETS)}")
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for name in args.targets or TARGETS:
        folder = TARGETS[name]
        if not folder.is_dir():
            print(f"{name}: {folder} not found, snapshot left as it is", file=sys.stderr)
            continue
        lines = snapshot(folder)
        (SNAPSHOTS / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{name}: {len(lines) - 1} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
