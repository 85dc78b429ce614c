#!/usr/bin/env python3
"""One small file, side by side: cfgcheck's start-up against yamllint's, for both one-file cases.

    python bench/startup.py [--reps 20] [--file FILE ...] [--config FILE] [--yamllint PATH] [--also NAME=EXECUTABLE ...]
    python bench/startup.py --reference [--reps 20] [--file FILE ...]
    python bench/startup.py --imports [--file FILE ...]

For each file, runs ``python -c pass``, ``yamllint FILE`` and ``cfgcheck lint FILE`` interleaved (A B C A B C
...) ``--reps`` times after one warm-up each, in a temporary folder that is not a git repository and has no
configuration (what a pre-commit hook on one file costs), with an empty cache folder (``XDG_CACHE_HOME``,
emptied before every run: no run reads the content cache), and prints the median wall and CPU time
(user+sys of the child, from ``os.wait4``; CPU time is what other load on the machine inflates least) and
cfgcheck's CPU time as a ratio of yamllint's against the goal of its case (``GOALS``).
``--config`` copies a ``.cfgcheck.yaml`` into the folder (the repository case; cfgcheck validates it on
every run). ``--also`` adds another cfgcheck, for instance one installed from main, to compare before and after.
The default files are the two one-file cases of ``bench/run.py``: a served vLLM Deployment of the dense
corpus, and a Deployment of the GitOps tree without a serving word (``run.plain_file``; most files a
pre-commit hook names). yamllint comes from PATH or bench/out/venv-tools.

``--imports`` prints, instead of timing, what start-up imports for each file: the number of modules and
the ten largest self times of ``python -X importtime`` (median of ``--reps`` runs, microseconds).

``--reference`` installs the pinned reference commit (``bench/REFERENCE``) and the working tree side by side
(``bench/installs.py``, regular installs in venvs under bench/out/) and compares them: ``--cfgcheck`` is the
working tree's, ``--also reference=...`` the reference's.

Measure what users run: ``--cfgcheck`` pointing at a regular (``pip install .``) installation. An
editable install (``pip install -e .``) adds its import finder to every Python start-up in that venv,
``python -c pass`` included, which yamllint's venv does not pay.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import DENSE, SERVING_WORDS, plain_file

BENCH = Path(__file__).resolve().parent
# issue goals, cfgcheck's CPU time as a ratio of yamllint's on the same file
GOALS = {"one served Deployment": 1.0, "one file without a served model": 0.8}


def timed(argv: list[str], cwd: Path, cache: Path) -> tuple[float, float]:
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def tool(name: str, given: str | None) -> str:
    found = given or shutil.which(name) or str(BENCH / "out" / "venv-tools" / "bin" / name)
    if not Path(found).exists():
        sys.exit(f"{name} not found: pip install {name}, or pass --{name} PATH")
    return found


def case_name(file: Path) -> str:
    return "one file without a served model" if not SERVING_WORDS.search(file.read_bytes()) else "one served Deployment"


def default_files() -> list[Path]:
    served = sorted((DENSE / "vllm-serve").glob("*.yaml"))
    if not served:
        sys.exit("bench/out/dense not found: run `python bench/run.py` once to generate the corpora, or pass --file")
    return [served[0], plain_file()]


def interpreter(executable: str) -> str:
    """The Python of a console script (its ``#!`` line)."""
    first = Path(executable).read_text(encoding="utf-8", errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def imports(cfgcheck: str, cwd: Path, cache: Path, reps: int) -> str:
    """The module count and the ten largest median self times of ``-X importtime`` for one lint."""
    python, selves, counts = interpreter(cfgcheck), collections.defaultdict(list), []
    for _ in range(reps):
        shutil.rmtree(cache, ignore_errors=True)
        err = subprocess.run([python, "-X", "importtime", "-m", "cfgcheck", "lint", "app.yaml"], cwd=cwd,
                             capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": str(cache)}).stderr
        rows = [line[len("import time:"):].split("|") for line in err.splitlines()
                if line.startswith("import time:") and "self [us]" not in line]
        counts.append(len(rows))
        for own, _, name in rows:
            selves[name.strip()].append(int(own))
    median = {name: statistics.median(values + [0] * (reps - len(values))) for name, values in selves.items()}
    own = sum(value for name, value in median.items() if name.startswith("cfgcheck"))
    top = ", ".join(f"{name} {value:.0f}" for name, value in sorted(median.items(), key=lambda kv: -kv[1])[:10])
    return (f"{statistics.median(counts):.0f} modules imported (`-X importtime` lines), self time {sum(median.values()) / 1e3:.0f} ms "
            f"of which cfgcheck's {own / 1e3:.0f} ms; largest (us): {top}")


def measure(file: Path, cases: dict[str, list[str]], args) -> dict[str, list[tuple[float, float]]]:
    with tempfile.TemporaryDirectory() as folder:
        cwd, cache = Path(folder), Path(folder) / "cache"
        shutil.copyfile(file, cwd / "app.yaml")
        if args.config:
            shutil.copyfile(args.config, cwd / ".cfgcheck.yaml")
        if args.imports:
            print(f"- {case_name(file)} ({file.name}): {imports(cases['cfgcheck lint FILE'][0], cwd, cache, args.reps)}")
            return {}
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for argv in cases.values():
            timed(argv, cwd, cache)  # warm-up: bytecode caches, page cache
        for _ in range(args.reps):
            for name, argv in cases.items():
                samples[name].append(timed(argv, cwd, cache))
    return samples


def table(file: Path, samples: dict[str, list[tuple[float, float]]], args) -> None:
    name = case_name(file)
    with_config = f" with {args.config.name} as .cfgcheck.yaml" if args.config else ""
    print(f"{name}: {file.name} ({file.stat().st_size} bytes){with_config}, median of {args.reps}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; goal ≤ {GOALS[name]:.1f}x yamllint's CPU\n")
    print("| command | wall (s) | CPU (s) | CPU / yamllint |\n|---|---:|---:|---:|")
    yamllint_cpu = statistics.median(cpu for _, cpu in samples["yamllint FILE"])
    for command, values in samples.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"| `{command}` | {wall:.3f} | {cpu:.3f} | {cpu / yamllint_cpu:.2f}x |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--file", type=Path, action="append", help="a file to lint (repeatable; default: both cases)")
    parser.add_argument("--config", type=Path, help="a .cfgcheck.yaml to put next to the file")
    parser.add_argument("--yamllint")
    parser.add_argument("--cfgcheck")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=EXECUTABLE")
    parser.add_argument("--imports", action="store_true", help="what start-up imports, instead of timing")
    parser.add_argument("--reference", action="store_true",
                        help="the working tree against the pinned reference commit, both installed here")
    args = parser.parse_args()
    if args.reference:
        from installs import install_head, install_reference

        args.also.append(f"reference={install_reference()}")
        args.cfgcheck = str(install_head())
    files = args.file or default_files()
    missing = [file for file in files if not file.is_file()]
    if missing:
        sys.exit(f"{missing[0]} not found")
    cases = {"python -c pass": [sys.executable, "-c", "pass"],
             "yamllint FILE": [tool("yamllint", args.yamllint), "app.yaml"],
             "cfgcheck lint FILE": [tool("cfgcheck", args.cfgcheck), "lint", "app.yaml"]}
    for extra in args.also:
        name, _, executable = extra.partition("=")
        cases[f"{name}: cfgcheck lint FILE"] = [executable, "lint", "app.yaml"]
    for file in files:
        samples = measure(file, cases, args)
        if samples:
            table(file, samples, args)


if __name__ == "__main__":
    main()
