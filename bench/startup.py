#!/usr/bin/env python3
"""One small file, side by side: cfgcheck's start-up against yamllint's.

    python bench/startup.py [--reps 20] [--file FILE] [--config FILE] [--yamllint PATH] [--also NAME=EXECUTABLE ...]
    python bench/startup.py --reference [--reps 20] [--file FILE]

Runs ``python -c pass``, ``yamllint FILE`` and ``cfgcheck lint FILE`` interleaved (A B C A B C ...)
``--reps`` times after one warm-up each, in a temporary folder that is not a git repository and has no
configuration (what a pre-commit hook on one file costs), and prints the median wall and CPU time
(user+sys of the child, from ``os.wait4``; CPU time is what other load on the machine inflates least).
``--config`` copies a ``.cfgcheck.yaml`` into the folder (the repository case; cfgcheck validates it on
every run). ``--also`` adds another cfgcheck, for instance one installed from main, to compare before and after.
The default file is the one-file case of ``bench/run.py`` (a served vLLM Deployment); pass ``--file`` with a
file that holds no served model for the other common case (most files a pre-commit hook names). yamllint
comes from PATH or bench/out/venv-tools.

``--reference`` installs the pinned reference commit (``bench/REFERENCE``) and the working tree side by side
(``bench/installs.py``, regular installs in venvs under bench/out/) and compares them: ``--cfgcheck`` is the
working tree's, ``--also reference=...`` the reference's.

Measure what users run: ``--cfgcheck`` pointing at a regular (``pip install .``) installation. An
editable install (``pip install -e .``) adds its import finder to every Python start-up in that venv,
``python -c pass`` included, which yamllint's venv does not pay.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DEFAULT_FILE = BENCH / "out" / "dense" / "vllm-serve" / "deepseek-r1-distill-llama-8b-ads-563.yaml"


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def tool(name: str, given: str | None) -> str:
    found = given or shutil.which(name) or str(BENCH / "out" / "venv-tools" / "bin" / name)
    if not Path(found).exists():
        sys.exit(f"{name} not found: pip install {name}, or pass --{name} PATH")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--config", type=Path, help="a .cfgcheck.yaml to put next to the file")
    parser.add_argument("--yamllint")
    parser.add_argument("--cfgcheck")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=EXECUTABLE")
    parser.add_argument("--reference", action="store_true",
                        help="the working tree against the pinned reference commit, both installed here")
    args = parser.parse_args()
    if args.reference:
        from installs import install_head, install_reference

        args.also.append(f"reference={install_reference()}")
        args.cfgcheck = str(install_head())
    if not args.file.is_file():
        sys.exit(f"{args.file} not found: run `python bench/run.py` once to generate the corpus, or pass --file")
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "yamllint FILE": [tool("yamllint", args.yamllint), "app.yaml"],
             "cfgcheck lint FILE": [tool("cfgcheck", args.cfgcheck), "lint", "app.yaml"]}
    for extra in args.also:
        name, _, executable = extra.partition("=")
        cases[f"{name}: cfgcheck lint FILE"] = [executable, "lint", "app.yaml"]
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        shutil.copyfile(args.file, cwd / "app.yaml")
        if args.config:
            shutil.copyfile(args.config, cwd / ".cfgcheck.yaml")
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for argv in cases.values():
            timed(argv, cwd)  # warm-up: bytecode caches, page cache
        for _ in range(args.reps):
            for name, argv in cases.items():
                samples[name].append(timed(argv, cwd))
    with_config = f" with {args.config.name} as .cfgcheck.yaml" if args.config else ""
    print(f"{args.file.name} ({args.file.stat().st_size} bytes){with_config}, median of {args.reps}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| command | wall (s) | CPU (s) | CPU / yamllint |\n|---|---:|---:|---:|")
    yamllint_cpu = statistics.median(cpu for _, cpu in samples["yamllint FILE"])
    for name, values in samples.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"| `{name}` | {wall:.3f} | {cpu:.3f} | {cpu / yamllint_cpu:.2f}x |")


if __name__ == "__main__":
    main()
