"""`cfgcheck upgrade sglang 0.5.23` on the real sgl-project/ome runtimes, measured: the PR body and the
ADR it writes, in characters, against GitHub's 65,536-character body limit.

Run: ``python bench/review/upgrade_ome.py`` from the repository (its venv active). The corpus
(``../shared/corpus/sgl-project__ome``) is copied into a temporary git repository with a bare
``origin``; the fake GitHub server (``tests/support/fakegithub.py``, which refuses bodies over the
limit as GitHub does) stands in for the API, and the branches pushed to the bare remote are mirrored
into it (``tests.propose.test_propose.Mirror``). Nothing reaches the network (``--offline``: the ome
images carry no digest to resolve). ``--allow-findings``: two decode servers keep
``--prefill-round-robin-balance``, which 0.5.23 removed without a successor (CFG104); the proposal is
made anyway, as a team would to fix them on the branch.

``--site DIR`` runs another build of cfgcheck (``pip install --no-deps --target DIR <checkout>``), for
the numbers before a change; ``--keep DIR`` writes the PR body and the ADR there.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

from fakegithub import MAX_BODY, FakeGitHub  # noqa: E402
from tests.propose.test_propose import REPO, Mirror, git_env, make_repo  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "sgl-project__ome"


def _corpus() -> dict[str, str]:
    return {p.relative_to(CORPUS).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(CORPUS.rglob("*")) if p.is_file()}


def _adr(bare: Path, branch: str) -> tuple[str, str] | None:
    names = subprocess.run(["git", "diff", "--name-only", "--diff-filter=A", "main", branch, "--", "docs/adr"],
                           cwd=bare, capture_output=True, text=True, check=True).stdout.split()
    if not names:
        return None
    text = subprocess.run(["git", "show", f"{branch}:{names[0]}"], cwd=bare, capture_output=True, text=True,
                          check=True).stdout
    return names[0], text


def measure(site: str | None, keep: Path | None) -> int:
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} not found: ../shared is only beside the project's own checkout")
    with tempfile.TemporaryDirectory(prefix="upgrade-ome-") as tmp, FakeGitHub() as fake:
        work, bare = make_repo(Path(tmp), _corpus(), adrs=0)
        Mirror(fake, bare)
        env = git_env(work.parent) | {"GITHUB_TOKEN": fake.token, "GITHUB_API_URL": fake.url}
        if site:
            env["PYTHONPATH"] = site + os.pathsep + env.get("PYTHONPATH", "")
        run = subprocess.run([sys.executable, "-m", "cfgcheck", "upgrade", "sglang", "0.5.23", "--offline",
                              "--allow-findings", "--repo", REPO], cwd=work, capture_output=True, text=True, env=env, timeout=900)
        sent = [r.body.get("body", "") for r in fake.requests if r.op in ("pulls/create", "pulls/update")
                and isinstance(r.body, dict)]
        pulls = list(fake.repo(REPO).pulls.values())
        branches = subprocess.run(["git", "for-each-ref", "--format=%(refname:short)", "refs/heads"], cwd=bare,
                                  capture_output=True, text=True, check=True).stdout.split()
        branch = next((b for b in branches if b.startswith("cfgcheck/")), None)
        adr = _adr(bare, branch) if branch else None
        print(f"exit code: {run.returncode}")
        print(f"stderr: {run.stderr.strip() or '(empty)'}")
        print(f"branch pushed: {branch or '(none)'}; pull requests opened: {len(pulls)}")
        for body in sent:
            print(f"PR body sent: {len(body):,} characters (limit {MAX_BODY:,}){' OVER' if len(body) > MAX_BODY else ''}")
        if adr is not None:
            print(f"ADR {adr[0]}: {len(adr[1]):,} characters")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            if sent:
                (keep / "pr_body.md").write_text(sent[-1], encoding="utf-8")
            if adr is not None:
                (keep / "adr.md").write_text(adr[1], encoding="utf-8")
            (keep / "stdout.txt").write_text(run.stdout, encoding="utf-8")
        return run.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", help="a folder holding another cfgcheck build (pip install --target)")
    parser.add_argument("--keep", type=Path, help="write the PR body, the ADR and the output here")
    args = parser.parse_args()
    return measure(args.site, args.keep)


if __name__ == "__main__":
    sys.exit(main())
