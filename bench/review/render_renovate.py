#!/usr/bin/env python3
"""The summary comment a Renovate-style image bump gets, rendered by a given cfgcheck, with its numbers.

    python bench/review/render_renovate.py [--python PY] [--label after] [--corpus]

Builds the pull request of ``tests/github/scenarios.renovate`` (30 served SGLang models in 20 files,
``v0.5.5.post3`` -> ``v0.5.23``; two decode servers keep flags 0.5.23 no longer reads on lines the bump
does not touch) as a real git repository and on the fake GitHub of ``tests/support/fakegithub.py``,
runs ``PY -m cfgcheck review`` on it as the Action's step does, and writes the summary comment GitHub
received to ``bench/review/renovate-LABEL.md``. With ``--corpus`` it does the same for the real case of
the issue, ``../shared/corpus/sgl-project__ome`` bumped the same way (``renovate-ome-LABEL.md``); the
corpus is read, never copied into the repository. Each run prints the findings ``lint --base`` reports,
the inline comments and the summary's length.

Before/after: ``--python /work/main/.venv/bin/python --label before`` runs an install of main (1829df1);
the default interpreter is this checkout's. Bytecode is not written (``PYTHONDONTWRITEBYTECODE``), so
another checkout is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "sgl-project__ome"
OLD, NEW = "sglang:v0.5.5.post3-cu129-amd64", "sglang:v0.5.23-cu129-amd64"


def corpus_bump() -> tuple[dict[str, str], dict[str, str]]:
    """sgl-project__ome at the old tag and at the new one, every file read from ../shared."""
    base = {p.relative_to(CORPUS).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(CORPUS.rglob("*")) if p.is_file()}
    return base, {path: text.replace(OLD, NEW) for path, text in base.items()}


def run(python: str, files: tuple[dict[str, str], dict[str, str]]) -> dict:
    """Review the pull request with ``python``'s cfgcheck; what GitHub received, and the lint's count."""
    from fakegithub import FakeGitHub
    from tests.github.scenarios import Scenario

    with FakeGitHub() as gh, tempfile.TemporaryDirectory(prefix="cfgcheck-renovate-") as tmp:
        sc = Scenario(gh, Path(tmp), *files)
        env = {**os.environ, **sc.env(), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("CFGCHECK_BOT_LOGIN", None)
        lint = subprocess.run([python, "-m", "cfgcheck", "lint", "--base", "main", "--format", "json", "."],
                              cwd=sc.repo, env=env, capture_output=True, text=True, check=False)
        review = subprocess.run([python, "-m", "cfgcheck", "review"], cwd=sc.repo, env=env, capture_output=True,
                                text=True, check=False)
        # links as they would read on github.com (the fake server's address changes every run)
        summaries = [c.body.replace(gh.web_url, "https://github.com") for c in sc.summaries()]
        if not summaries:
            raise SystemExit(f"no summary comment was posted:\n{review.stderr}")
        return {"findings": len(json.loads(lint.stdout)["findings"]), "inline": len(sc.inline()),
                "summary": summaries[0], "step": sc.step_summary.read_text(encoding="utf-8"),
                "exit": review.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose cfgcheck reviews")
    parser.add_argument("--label", default="after", help="file name suffix: renovate-LABEL.md")
    parser.add_argument("--corpus", action="store_true", help="also the real bump of ../shared's sgl-project__ome")
    args = parser.parse_args()
    sys.path[:0] = [str(REPO / "tests" / "support"), str(REPO)]
    from tests.github.scenarios import renovate

    cases = [("renovate", renovate())]
    if args.corpus:
        if not CORPUS.is_dir():
            raise SystemExit(f"{CORPUS} not found: --corpus needs ../shared beside the checkout")
        cases.append(("renovate-ome", corpus_bump()))
    for name, files in cases:
        out = run(args.python, files)
        (BENCH / f"{name}-{args.label}.md").write_text(out["summary"], encoding="utf-8")
        print(f"{name} ({args.label}): {out['findings']} findings, {out['inline']} inline comments, summary "
              f"{len(out['summary']):,} characters, step summary {len(out['step']):,}, exit {out['exit']}")


if __name__ == "__main__":
    main()
