"""Side-by-side regular installs of cfgcheck for the bench: the pinned reference commit and the working tree.

``bench/REFERENCE`` names the reference commit (the first word of its first line that is not a comment).
Both are installed as users install them (``pip install <folder>``, not editable: an editable install adds
its import finder to every start-up), each in its own venv under ``bench/out/``:

* ``venv-ref-<commit>``: the commit's files from ``git archive``, installed once (a stamp records it);
* ``venv-head``: the working tree as it is, uncommitted changes included, reinstalled on every call
  (``--no-deps``: its dependencies were installed the first time).

Used by ``bench/run.py --reference`` and ``bench/startup.py --reference``.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import io
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "out"
REFERENCE_FILE = BENCH / "REFERENCE"


def reference_commit() -> str:
    """The full commit ``bench/REFERENCE`` names."""
    for line in REFERENCE_FILE.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            done = subprocess.run(["git", "rev-parse", "--verify", words[0] + "^{commit}"], cwd=REPO,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"bench/REFERENCE names {words[0]}, which this repository does not have")
            return done.stdout.strip()
    sys.exit("bench/REFERENCE names no commit")


def _pip(venv: Path, *args: str) -> None:
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--upgrade", "pip"], capture_output=True)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pip install {' '.join(args)} failed in {venv}:\n{done.stderr[-2000:]}")


def install_reference() -> Path:
    """The ``cfgcheck`` executable of the reference commit (installed on first use)."""
    commit = reference_commit()
    venv = OUT / f"venv-ref-{commit[:7]}"
    stamp = venv / "installed-commit"
    if not (stamp.is_file() and stamp.read_text().strip() == commit):
        print(f"installing the reference {commit[:7]} into {venv} ...", file=sys.stderr)
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO, capture_output=True,
                                 check=True).stdout
        with tempfile.TemporaryDirectory(prefix="cfgcheck-reference-") as source:  # not in the tree tests read
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(source, filter="data")
            _pip(venv, source)
        stamp.write_text(commit + "\n")
    return venv / "bin" / "cfgcheck"


def install_head() -> Path:
    """The ``cfgcheck`` executable of the working tree, reinstalled now."""
    venv = OUT / "venv-head"
    first = not (venv / "bin" / "cfgcheck").exists()
    print(f"installing the working tree into {venv} ...", file=sys.stderr)
    _pip(venv, *([] if first else ["--no-deps", "--force-reinstall"]), str(REPO))
    return venv / "bin" / "cfgcheck"


def supports(executable: Path, option: str) -> bool:
    """Whether ``cfgcheck lint`` of that install takes ``option`` (the reference may predate it)."""
    done = subprocess.run([str(executable), "lint", "--help"], capture_output=True, text=True,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})
    return option in done.stdout
