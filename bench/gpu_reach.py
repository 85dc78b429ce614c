"""How many served models cfgcheck names a GPU for, and from what: the reach of issue "capacity: GPU reach".

Runs ``cfgcheck capacity --format json --offline .`` in each repository folder of ``../shared/corpus`` (and,
with ``--realworld ROUND``, of ``bench/realworld/<ROUND>/files``: the copied repositories only, never their
labels) and prints, per repository, the served models, those whose GPU is exact, assumed, and unknown; then
the totals and the sources by kind (the ``gpu_origin`` with its file, line and quoted words taken out).

    python bench/gpu_reach.py                      # the shared corpus
    python bench/gpu_reach.py --realworld round5   # a retired round's copied files
    python bench/gpu_reach.py --json out.json      # every served model with its source, for the audit
    python bench/gpu_reach.py --cfgcheck /path/to/venv/bin/cfgcheck   # another install (a "before")

Skips with a message (exit 0) when ``../shared`` is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPUS = REPO.parent / "shared" / "corpus"


def capacity(folder: Path, cfgcheck: list[str]) -> list[dict]:
    """The served models ``capacity`` reports for one repository folder."""
    done = subprocess.run([*cfgcheck, "capacity", "--format", "json", "--offline", "."], cwd=folder,
                          capture_output=True, text=True)
    try:
        return json.loads(done.stdout)["models"]
    except (json.JSONDecodeError, KeyError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        print(f"{folder.name}: capacity failed: {' '.join(tail) or 'no output'}", file=sys.stderr)
        return []


def source_kind(model: dict) -> str:
    """The kind of place the GPU was read from: the origin without its paths, lines, quoted words and names."""
    source, origin = model.get("gpu_source"), model.get("gpu_origin") or ""
    if source is None:
        return "unknown"
    kind = re.sub(r"(?<=\s)(?:'[^']*'|\"[^\"]*\")(?=[\s,;)]|$)", "'…'", origin)
    kind = re.sub(r"[\w./@-]+:\d+", "FILE:LINE", kind)
    kind = re.sub(r"\((?:FILE:LINE)\)", "", kind)
    kind = re.sub(r"(NodePool|node group|node pool|ComputeClass|AcceleratorClass|node|host) [\w.-]+",
                  r"\1 NAME", kind)
    kind = re.sub(r"=[\w.|-]+", "=VALUE", kind)
    kind = re.sub(r"\s+", " ", kind).strip()
    return f"{source}: {kind[:110]}"


def measure(folders: list[Path], cfgcheck: list[str]) -> dict[str, list[dict]]:
    return {folder.name: capacity(folder, cfgcheck) for folder in folders}


def counts(models: list[dict]) -> tuple[int, int, int, int]:
    exact = sum(m.get("gpu_source") == "exact" for m in models)
    assumed = sum(m.get("gpu_source") == "assumed" for m in models)
    return len(models), exact, assumed, len(models) - exact - assumed


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(results: dict[str, list[dict]]) -> str:
    lines = ["| repository | served | exact | assumed | unknown | identified |", "|---|---:|---:|---:|---:|---:|"]
    total = [0, 0, 0, 0]
    for name, models in sorted(results.items()):
        row = counts(models)
        total = [a + b for a, b in zip(total, row)]
        lines.append(f"| {name} | {row[0]} | {row[1]} | {row[2]} | {row[3]} | {_pct(row[1] + row[2], row[0])} |")
    lines.append(f"| **total** | {total[0]} | {total[1]} | {total[2]} | {total[3]} | "
                 f"**{_pct(total[1] + total[2], total[0])}** ({total[1] + total[2]} of {total[0]}) |")
    kinds = Counter(source_kind(m) for models in results.values() for m in models)
    lines += ["", "| source kind | served models |", "|---|---:|"]
    lines += [f"| {kind} | {n} |" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realworld", metavar="ROUND", help="measure bench/realworld/ROUND/files instead")
    parser.add_argument("--json", type=Path, help="write every served model with its GPU source here")
    parser.add_argument("--cfgcheck", default=None, help="the cfgcheck executable (default: python -m cfgcheck)")
    args = parser.parse_args(argv)
    root = BENCH / "realworld" / args.realworld / "files" if args.realworld else CORPUS
    if not root.is_dir():
        print(f"{root} is absent: nothing to measure (the shared corpus lives beside the worktree)")
        return 0
    cfgcheck = [args.cfgcheck] if args.cfgcheck else [sys.executable, "-m", "cfgcheck"]
    results = measure(sorted(p for p in root.iterdir() if p.is_dir()), cfgcheck)
    print(report(results))
    if args.json:
        keep = ("path", "line", "name", "engine", "model", "gpu", "gpu_source", "gpu_origin", "gpu_hint")
        args.json.write_text(json.dumps({name: [{k: m.get(k) for k in keep} for m in models]
                                         for name, models in sorted(results.items())}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
