#!/usr/bin/env python3
"""One command for the speed numbers of bench/RESULTS.md: cfgcheck vs yamllint vs Checkov, measured in the same run.

    python bench/run.py [--reps 3] [--warmup 1] [--skip-checkov] [--regen]
    python bench/run.py --reference [--reps 5] [--jobs-list 1,2,4]

``--reference`` compares the working tree with the pinned reference commit (``bench/REFERENCE``), both
installed side by side as regular installs in venvs under bench/out/ (``bench/installs.py``), and yamllint:
the GitOps tree, the dense corpus, one served file, one file without a served model, ``--base`` with one
changed file, peak RSS; the tree again with each ``--jobs`` of ``--jobs-list`` and a second run with the
content cache, when the working tree has those options. Every figure is a ratio against yamllint and
against the reference (``reference_report``), written to bench/out/reference.md.

1. Generates the dense corpus (bench/gen_dense.py) and the GitOps tree (bench/gen_gitops.py, plus its
   second commit changing one serving file) into bench/out/ if missing.
2. Creates bench/out/venv-tools with yamllint and checkov (pip). If checkov cannot be installed the
   Checkov rows are reported as n/a and the run continues.
3. Times every case ``--reps`` times (interleaved: A B C A B C ..., after ``--warmup`` untimed runs) and
   reports the median wall time, CPU time (user+sys of the child and its waited-for descendants, from
   ``os.wait4``), files/s and peak RSS (``ru_maxrss``: the largest single process, not a sum over workers;
   each command forked from bench/launch.py, whose own RSS is the floor, not from this process).
4. Writes a Markdown table to stdout and bench/out/results.md (raw numbers in bench/out/results.json).

Checkov runs offline: no API key, ``BC_SKIP_MAPPING=TRUE``, ``CHECKOV_RUN_SCA_PACKAGE_SCAN_V2=false``,
``CKV_SKIP_PACKAGE_UPDATE_CHECK=true``, ``--skip-download``, frameworks kubernetes and helm.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

BENCH = Path(__file__).resolve().parent
# each measured command is forked from this small process, not from the bench (peak RSS: its docstring)
LAUNCH = BENCH / "launch.py"
PAGE_IN = True  # ``page_in`` before each measurement (``--no-page-in``)
OUT = BENCH / "out"
DENSE = OUT / "dense"
GITOPS = OUT / "gitops"
VENV = OUT / "venv-tools"
LOGS = OUT / "logs"

TARGETS = {
    "dense_vs_yamllint": 1.5,
    "dense_vs_checkov": 20.0,
    "dense_rss_mib": 150.0,
    "tree_vs_yamllint": 10.0,
    "one_file_s": 0.15,
    "base_s": 0.5,
}


@dataclass
class Case:
    key: str
    label: str
    argv: list[str]
    files: int
    cwd: Path = OUT
    env: dict[str, str] = field(default_factory=dict)
    ok_codes: tuple[int, ...] = (0, 1)
    before: Callable[[], None] | None = None  # run untimed before each measurement (emptying a cache)
    rounds: int = 1  # measurements of the case in each repetition (``run_cases``: a short case takes more)
    runs: list[dict] = field(default_factory=list)
    error: str | None = None

    def median(self, what: str) -> float | None:
        values = [r[what] for r in self.runs]
        return statistics.median(values) if values else None


# ---------------------------------------------------------------- setup


def sh(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def ensure_corpora(regen: bool) -> None:
    if regen or not (OUT / "dense.manifest.json").exists() or not DENSE.is_dir():
        print("generating dense corpus ...", file=sys.stderr)
        subprocess.run([sys.executable, str(BENCH / "gen_dense.py"), "--out", str(DENSE)], check=True)
    if not (DENSE / ".git").is_dir():
        # bench/out/ is in this repository's .gitignore and cfgcheck lists files as git does: the dense
        # corpus is a repository of its own (untracked files are listed) so that every file is linted.
        subprocess.run(["git", "init", "-q", str(DENSE)], check=True)
    if regen or not (OUT / "gitops.manifest.json").exists() or not (GITOPS / ".git").is_dir():
        print("generating GitOps tree ...", file=sys.stderr)
        subprocess.run([sys.executable, str(BENCH / "gen_gitops.py"), "--out", str(GITOPS)], check=True)
    # The second commit (one serving file changed) for --base HEAD~1; idempotent.
    subprocess.run([sys.executable, str(BENCH / "gen_gitops.py"), "--out", str(GITOPS), "--change"], check=True,
                   stdout=subprocess.DEVNULL)


def ensure_tools(names: tuple[str, ...] = ("yamllint", "checkov")) -> dict[str, str | None]:
    """yamllint and checkov in their own venv; returns {tool: path or None} and logs failures."""
    LOGS.mkdir(parents=True, exist_ok=True)
    pip = VENV / "bin" / "pip"
    if not (VENV / "bin" / "python").exists():
        print("creating bench/out/venv-tools ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        sh([str(pip), "install", "-q", "--upgrade", "pip"])
    found: dict[str, str | None] = {}
    for tool in names:
        exe = VENV / "bin" / tool
        if not exe.exists():
            print(f"installing {tool} into bench/out/venv-tools ...", file=sys.stderr)
            done = sh([str(pip), "install", "-q", tool])
            (LOGS / f"pip-{tool}.log").write_text(done.stdout + done.stderr)
            if done.returncode != 0 or not exe.exists():
                print(f"WARNING: {tool} failed to install (see bench/out/logs/pip-{tool}.log); continuing",
                      file=sys.stderr)
        found[tool] = str(exe) if exe.exists() else None
    return found


def count_yaml(folder: Path) -> int:
    n = 0
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        n += sum(f.endswith((".yaml", ".yml")) for f in files)
    return n


def version(argv: list[str]) -> str:
    try:
        done = sh(argv, timeout=120)
        return (done.stdout or done.stderr).strip().splitlines()[0]
    except Exception as exc:  # noqa: BLE001
        return f"n/a ({exc})"


# ---------------------------------------------------------------- measuring


def page_in(case: Case) -> None:
    """Reads, untimed, what the case's run reads from disk: its inputs and the tool's install (``_paged``).
    This VM pages out file pages untouched for a minute (DAMON ``pageout``), so a case run after a pause read
    the tree from disk: the tree's ``--jobs 1`` row ranged 1.47-2.82 s within one run of the fourteenth
    session. A CI runner lints a checkout git has just written, and ``hyperfine --prepare`` does the same."""
    for path in _paged(tuple(case.argv), case.cwd):
        try:
            with open(path, "rb") as stream:
                while stream.read(1 << 20):
                    pass
        except OSError:
            continue


@lru_cache(maxsize=None)
def _paged(argv: tuple[str, ...], cwd: Path) -> tuple[str, ...]:
    """The files ``page_in`` reads for a run of ``argv`` in ``cwd``: each argument that names a file or folder
    (a folder's every file, ``.git`` too), the ``lib`` of the venv the program is in, and this interpreter's
    compiled standard library (the installs are made with it: bench/installs.py)."""
    roots = [cwd / item for item in argv[1:] if not item.startswith("-") and (cwd / item).exists()]
    venv = Path(argv[0]).parent.parent
    roots += [venv / "lib"] if (venv / "pyvenv.cfg").exists() else []
    files = []
    for root in roots:
        if root.is_file():
            files.append(str(root))
        for folder, _, names in os.walk(root):
            files += [os.path.join(folder, name) for name in names]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files += [str(path) for pattern in ("__pycache__/*.pyc", "*/__pycache__/*.pyc", "lib-dynload/*.so")
              for path in stdlib.glob(pattern) if "site-packages" not in path.parts and "test" not in path.parts]
    return tuple(files)


def measure(case: Case, log: bool) -> dict:
    # Measured as installed tools run: with their bytecode cache (a session may set DONTWRITEBYTECODE).
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **case.env}
    LOGS.mkdir(parents=True, exist_ok=True)
    if PAGE_IN:
        page_in(case)
    if case.before is not None:
        case.before()
    launched = LOGS / f"{case.key}.launch.json"
    launched.unlink(missing_ok=True)
    with open(LOGS / f"{case.key}.out", "wb") as out, open(LOGS / f"{case.key}.err", "wb") as err:
        subprocess.run([sys.executable, "-I", "-S", str(LAUNCH), str(launched), "--", *case.argv], cwd=case.cwd,
                       env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    try:
        result = json.loads(launched.read_text())
    except (OSError, ValueError):
        result = {"error": "the launcher wrote no result (bench/launch.py)"}
    if "error" in result:
        return result
    if result["rc"] not in case.ok_codes:
        tail = (LOGS / f"{case.key}.err").read_text(errors="replace").strip().splitlines()[-3:]
        result["error"] = f"exit {result['rc']}: {' | '.join(tail)}"
    if log:
        print(f"  {case.key:<22} wall {result['wall']:7.3f}s cpu {result['cpu']:7.3f}s rss {result['rss_mib']:7.1f} "
              f"MiB rc {result['rc']}", file=sys.stderr)
    return result


def run_cases(cases: list[Case], reps: int, warmup: int) -> None:
    for _ in range(warmup):
        for case in cases:
            if case.error is None:
                first = measure(case, log=False)
                if "error" in first:
                    case.error = first["error"]
    for rep in range(reps):
        print(f"repetition {rep + 1}/{reps}", file=sys.stderr)
        for round_ in range(max((case.rounds for case in cases), default=1)):
            for case in cases:  # interleaved, so drift hits every tool alike
                if case.error is not None or round_ >= case.rounds:
                    continue
                result = measure(case, log=True)
                if "error" in result:
                    case.error = result["error"]
                    continue
                case.runs.append(result)


# ---------------------------------------------------------------- report


def fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def report(cases: dict[str, Case], meta: dict) -> str:
    lines = [f"# cfgcheck speed: {meta['when']}", "",
             f"Machine: {meta['cpu']}, {meta['nproc']} CPU, {meta['mem']}; Python {meta['python']}; "
             f"{meta['cfgcheck']} ({meta['commit']}); {meta['yamllint']}; checkov {meta['checkov']}.", "",
             f"Corpora: dense {meta['dense_files']} files / {meta['dense_mb']:.2f} MB; GitOps tree "
             f"{meta['tree_files']} files / {meta['tree_mb']:.2f} MB. Median of {meta['reps']} interleaved runs "
             f"after {meta['warmup']} warm-up. Load average before/after: {meta['load_before']} / "
             f"{meta['load_after']} (other work on the machine inflates wall, not CPU time).", "",
             "| case | command | files | median wall (s) | CPU user+sys (s) | files/s | peak RSS (MiB) | runs |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for case in cases.values():
        wall = case.median("wall")
        rate = case.files / wall if wall else None
        shown = shlex.join(Path(a).name if a.startswith("/") and a.endswith(("python", "python3", "checkov", "yamllint", "cfgcheck"))
                           else a for a in case.argv)
        shown = shown.replace(str(OUT) + "/", "").replace(str(OUT), ".")
        note = f" ({case.error})" if case.error and not case.runs else ""
        lines.append(f"| {case.label}{note} | `{shown}` | {case.files} | {fmt(wall, '.3f')} | "
                     f"{fmt(case.median('cpu'), '.3f')} | {fmt(rate, ',.0f')} | {fmt(case.median('rss_mib'), '.1f')} | "
                     f"{len(case.runs)} |")

    def ratio(slow: str, fast: str, what: str = "wall") -> float | None:
        a, b = cases.get(slow), cases.get(fast)
        if not a or not b or not a.runs or not b.runs:
            return None
        return a.median(what) / b.median(what)

    def value(key: str, what: str) -> float | None:
        case = cases.get(key)
        return case.median(what) if case and case.runs else None

    rows = [
        ("dense: cfgcheck faster than yamllint", ratio("dense_yamllint", "dense_cfgcheck"),
         ratio("dense_yamllint", "dense_cfgcheck", "cpu"), TARGETS["dense_vs_yamllint"], "x", True),
        ("dense: cfgcheck faster than Checkov", ratio("dense_checkov", "dense_cfgcheck"),
         ratio("dense_checkov", "dense_cfgcheck", "cpu"), TARGETS["dense_vs_checkov"], "x", True),
        ("dense: cfgcheck peak RSS", value("dense_cfgcheck", "rss_mib"), None, TARGETS["dense_rss_mib"], " MiB", False),
        ("tree: cfgcheck faster than yamllint", ratio("tree_yamllint", "tree_cfgcheck"),
         ratio("tree_yamllint", "tree_cfgcheck", "cpu"), TARGETS["tree_vs_yamllint"], "x", True),
        ("one file: cfgcheck wall", value("one_cfgcheck", "wall"), value("one_cfgcheck", "cpu"),
         TARGETS["one_file_s"], " s", False),
        ("--base HEAD~1, one changed file, 5,000-file tree", value("base_cfgcheck", "wall"),
         value("base_cfgcheck", "cpu"), TARGETS["base_s"], " s", False),
    ]
    lines += ["", "| target | measured (wall) | same on CPU time | goal | met (wall) |", "|---|---:|---:|---:|---|"]
    for name, measured, on_cpu, goal, unit, higher in rows:
        cpu_text = "" if on_cpu is None else f"{on_cpu:.2f}{unit}"
        if measured is None:
            lines.append(f"| {name} | n/a | {cpu_text} | {'≥' if higher else '≤'} {goal:g}{unit} | n/a |")
            continue
        met = measured >= goal if higher else measured <= goal
        lines.append(f"| {name} | {measured:.2f}{unit} | {cpu_text} | {'≥' if higher else '≤'} {goal:g}{unit} | "
                     f"{'yes' if met else '**no**'} |")
    errors = [f"- {c.label}: {c.error}" for c in cases.values() if c.error]
    if errors:
        lines += ["", "Errors / n/a:"] + errors
    return "\n".join(lines) + "\n"


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = sh(["free", "-h"]).stdout.splitlines()
    total = mem[1].split()[1] if len(mem) > 1 else "?"
    return {"cpu": cpu, "nproc": os.cpu_count(), "mem": f"{total} RAM", "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--skip-checkov", action="store_true", help="leave Checkov out (it is the slowest)")
    parser.add_argument("--regen", action="store_true", help="regenerate both corpora")
    parser.add_argument("--reference", action="store_true",
                        help="the working tree against the pinned reference commit (bench/REFERENCE) and yamllint")
    parser.add_argument("--jobs-list", default="1,2,4", help="with --reference: the --jobs values of the tree")
    parser.add_argument("--only", default="", help="with --reference: only these figures (comma-separated)")
    parser.add_argument("--short-rounds", type=int, default=SHORT_ROUNDS,
                        help="with --reference: measurements of each one-file case in each repetition")
    parser.add_argument("--no-page-in", action="store_true",
                        help="measure without reading each run's files first (page_in): the page cache as it is")
    args = parser.parse_args()
    global PAGE_IN
    PAGE_IN = not args.no_page_in

    OUT.mkdir(parents=True, exist_ok=True)
    ensure_corpora(args.regen)
    if args.reference:
        run_reference(args)
        return
    tools = ensure_tools()
    cfgcheck = shutil.which("cfgcheck") or "cfgcheck"
    yamllint, checkov = tools.get("yamllint"), tools.get("checkov")
    dense_files, tree_files = count_yaml(DENSE), count_yaml(GITOPS)
    one_file = sorted((DENSE / "vllm-serve").glob("*.yaml"))[0]
    checkov_env = {"BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false",
                   "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true", "BC_API_KEY": "", "PRISMA_API_URL": ""}
    checkov_argv = [checkov or "checkov", "-d", "dense", "--framework", "kubernetes", "helm", "--quiet",
                    "--compact", "--skip-download", "-o", "cli"]

    cases: dict[str, Case] = {}

    def add(case: Case, available: bool = True, why: str = "") -> None:
        if not available:
            case.error = why
        cases[case.key] = case

    add(Case("dense_cfgcheck", "dense: cfgcheck lint", [cfgcheck, "lint", "dense"], dense_files))
    add(Case("dense_yamllint", "dense: yamllint", [yamllint or "yamllint", "-f", "parsable", "dense"], dense_files),
        yamllint is not None, "yamllint not installed")
    if not args.skip_checkov:
        add(Case("dense_checkov", "dense: checkov", checkov_argv, dense_files, env=checkov_env),
            checkov is not None, "checkov failed to install")
    add(Case("tree_cfgcheck", "tree: cfgcheck lint", [cfgcheck, "lint", "gitops"], tree_files))
    add(Case("tree_yamllint", "tree: yamllint", [yamllint or "yamllint", "-f", "parsable", "gitops"], tree_files),
        yamllint is not None, "yamllint not installed")
    rel_one = str(one_file.relative_to(OUT))
    add(Case("one_cfgcheck", "one file: cfgcheck lint", [cfgcheck, "lint", rel_one], 1))
    add(Case("one_yamllint", "one file: yamllint (reference)", [yamllint or "yamllint", rel_one], 1),
        yamllint is not None, "yamllint not installed")
    add(Case("one_python", "start-up floor: python -c pass", [sys.executable, "-c", "pass"], 1, ok_codes=(0,)))
    add(Case("one_import", "start-up: import cfgcheck.cli only",
             [sys.executable, "-c", "import cfgcheck.cli"], 1, ok_codes=(0,)))
    add(Case("base_cfgcheck", "tree: cfgcheck lint --base HEAD~1 (1 changed file)",
             [cfgcheck, "lint", "--base", "HEAD~1", "."], tree_files, cwd=GITOPS))

    # --base may not be implemented yet: probe once, report n/a if so.
    probe = sh([cfgcheck, "lint", "--base", "HEAD~1", "."], cwd=GITOPS)
    if probe.returncode not in (0, 1):
        cases["base_cfgcheck"].error = f"n/a: --base not available (exit {probe.returncode}: " \
                                       f"{(probe.stderr.strip().splitlines() or [''])[-1][:120]})"

    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    run_cases(list(cases.values()), args.reps, args.warmup)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())

    commit = sh(["git", "rev-parse", "--short", "HEAD"], cwd=BENCH).stdout.strip()
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=BENCH).stdout.strip()
    dense_manifest = json.loads((OUT / "dense.manifest.json").read_text())
    tree_manifest = json.loads((OUT / "gitops.manifest.json").read_text())
    meta = {**machine(), "load_before": load_before, "load_after": load_after, "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "reps": args.reps, "warmup": args.warmup,
            "cfgcheck": version([cfgcheck, "--version"]), "commit": commit + (" + uncommitted changes" if dirty else ""),
            "yamllint": version([yamllint, "--version"]) if yamllint else "n/a",
            "checkov": version([checkov, "--version"]) if checkov else "n/a",
            "dense_files": dense_files, "dense_mb": dense_manifest["bytes"] / 1e6,
            "tree_files": tree_files, "tree_mb": tree_manifest["bytes"] / 1e6}
    text = report(cases, meta)
    sys.stdout.write(text)
    (OUT / "results.md").write_text(text)
    (OUT / "results.json").write_text(json.dumps(
        {"meta": meta, "cases": {k: {"label": c.label, "argv": c.argv, "files": c.files, "runs": c.runs, "error": c.error}
                                 for k, c in cases.items()}}, indent=2) + "\n")


# ---------------------------------------------------------------- --reference: against the pinned commit

TOOLS = ("yamllint", "ref", "head")
# A one-file run takes 0.1-0.2 s, and one run of it varied by 10-15% here (a Firecracker VM: yamllint's one
# served file 0.117-0.174 s in one run of five repetitions, cfgcheck's 0.115-0.152 s), so the median of five
# moved the ratio by as much as the margin (0.84x, 0.89x and 1.02x in three runs of the same commit): each
# one-file case is measured this many times in each repetition, every tool in turn, so a figure is the median
# of 25 runs, not 5 (it adds about 3 s a repetition).
SHORT_ROUNDS = 5

# the figures of the reference table: key, label, the files it reads
FIGURES = (("tree", "GitOps tree"), ("dense", "dense corpus"), ("one_served", "one served Deployment"),
           ("one_plain", "one file without a served model"), ("base", "--base HEAD~1, one changed file"))
# words any file that may hold a served model contains (a superset of the adapters' markers): the
# one-file-without-a-model case is a manifest with none of them
SERVING_WORDS = re.compile(rb"vllm|sglang|tokenspeed|llama|llmkube|servingengine|cfgcheck|inference|kaito|kubeai|"
                           rb"ome\.io|serve|dynamo|modelartifacts|disaggregated|resourceclaim|max.model|gpu.memory|"
                           rb"parallel|kv-cache|mem-fraction|context-length|model-path|max-running|max-num", re.I)


def plain_file() -> Path:
    """A Deployment of the GitOps tree that cannot hold a served model (the first in path order)."""
    for path in sorted(GITOPS.rglob("*.yaml")):
        data = path.read_bytes()
        if b"kind: Deployment" in data and not SERVING_WORDS.search(data) and ".git" not in path.parts:
            return path
    sys.exit("no Deployment without a serving word in bench/out/gitops")


def fresh_cache(folder: Path) -> Callable[[], None]:
    """Empties ``folder`` (a run's XDG_CACHE_HOME) before a measurement: a cold cache every time."""
    return lambda: shutil.rmtree(folder, ignore_errors=True)


def reference_cases(exes: dict[str, str], has: dict[str, set[str]], jobs: list[int], files: dict[str, int],
                    only: set[str], scratch: Path, short_rounds: int = SHORT_ROUNDS) -> dict[str, Case]:
    """Every case of the reference run, keyed ``<figure>_<tool>`` (the extras ``tree_j<N>_head``, and
    ``tree_j<N>_ref`` when the reference has ``--jobs``; ``cache_cold_head``, ``cache_warm_head``). ``has``:
    the options each install's ``lint`` takes. The cfgcheck runs of a figure use a cache folder emptied
    before each run, so no figure but the warm one reads a cache. A one-file case is measured
    ``short_rounds`` times a repetition (``SHORT_ROUNDS``)."""
    argv = {"tree": ["gitops"], "dense": ["dense"], "one_served": ["app.yaml"], "one_plain": ["app.yaml"]}
    # one file as the issue measured it (and bench/startup.py does): copied into a folder outside any git
    # repository, without configuration; a pre-commit hook in a repository adds the related-file search
    single = {"one_served": sorted((DENSE / "vllm-serve").glob("*.yaml"))[0], "one_plain": plain_file()}
    folders = {key: scratch / key for key in single}

    def rounds(key: str) -> int:
        return max(1, short_rounds) if key in single else 1
    for key, source in single.items():
        folders[key].mkdir()
        shutil.copyfile(source, folders[key] / "app.yaml")
    cases: dict[str, Case] = {}
    for key, label in FIGURES:
        if only and key not in only:
            continue
        for tool in TOOLS:
            if tool == "yamllint":
                if key != "base":
                    cases[f"{key}_yamllint"] = Case(f"{key}_yamllint", f"{label}: yamllint",
                                                    [exes["yamllint"], "-f", "parsable", *argv[key]], files[key],
                                                    cwd=folders.get(key, OUT), rounds=rounds(key))
                continue
            cache = OUT / "cache-bench" / f"{key}_{tool}"
            lint = [exes[tool], "lint", *(["--base", "HEAD~1", "."] if key == "base" else argv[key])]
            cases[f"{key}_{tool}"] = Case(f"{key}_{tool}", f"{label}: cfgcheck {tool}", lint, files[key],
                                          cwd=GITOPS if key == "base" else folders.get(key, OUT),
                                          env={"XDG_CACHE_HOME": str(cache)},
                                          before=fresh_cache(cache), rounds=rounds(key))
    if only and "tree" not in only:
        return cases
    for n in jobs:  # the reference too when it has a pool: a row compares like with like
        for tool in ("ref", "head"):
            if "--jobs" in has[tool]:
                cache = OUT / "cache-bench" / f"tree_j{n}_{tool}"
                cases[f"tree_j{n}_{tool}"] = Case(f"tree_j{n}_{tool}", f"GitOps tree with --jobs {n}",
                                                  [exes[tool], "lint", "--jobs", str(n), "gitops"], files["tree"],
                                                  env={"XDG_CACHE_HOME": str(cache)}, before=fresh_cache(cache))
    if "--jobs" in has["head"]:  # peak RSS without workers
        cache = OUT / "cache-bench" / "dense_j1"
        cases["dense_j1_head"] = Case("dense_j1_head", "dense corpus: cfgcheck head --jobs 1",
                                      [exes["head"], "lint", "--jobs", "1", "dense"], files["dense"],
                                      env={"XDG_CACHE_HOME": str(cache)}, before=fresh_cache(cache))
    if "--no-cache" in has["head"]:  # the first run fills the cache (emptied before it), the second reads it
        cache = OUT / "cache-bench" / "repeat"
        cases["cache_cold_head"] = Case("cache_cold_head", "GitOps tree, cache: first run",
                                        [exes["head"], "lint", "gitops"], files["tree"],
                                        env={"XDG_CACHE_HOME": str(cache)}, before=fresh_cache(cache))
        cases["cache_warm_head"] = Case("cache_warm_head", "GitOps tree, cache: second run",
                                        [exes["head"], "lint", "gitops"], files["tree"],
                                        env={"XDG_CACHE_HOME": str(cache)})
    return cases


def _ratio(cases: dict[str, Case], slow: str, fast: str, what: str) -> float | None:
    a, b = cases.get(slow), cases.get(fast)
    if not a or not b or not a.runs or not b.runs or not b.median(what):
        return None
    return a.median(what) / b.median(what)


def reference_report(cases: dict[str, Case], meta: dict) -> str:
    """The figures side by side: medians, head against yamllint (how many times faster) and against the
    reference (head / reference: above 1.05 is a regression that must say why), on wall and CPU time."""
    lines = [f"# cfgcheck against the reference {meta['reference']}: {meta['when']}", "",
             f"Machine: {meta['cpu']}, {meta['nproc']} CPU; Python {meta['python']}; head {meta['commit']}; "
             f"{meta['yamllint']}. Median of {meta['reps']} interleaved repetitions after {meta['warmup']} "
             f"warm-up, each one-file case run {meta.get('short_rounds', 1)} times a repetition"
             f"{', its files read first (page_in)' if meta.get('page_in') else ''}. Load average "
             f"before/after: {meta['load_before']} / {meta['load_after']}.", "",
             "| case | yamllint wall / CPU (s) | reference wall / CPU (s) | head wall / CPU (s) | head vs yamllint "
             "wall / CPU | head / reference wall / CPU | peak RSS ref / head (MiB) |",
             "|---|---:|---:|---:|---:|---:|---:|"]

    def pair(key: str) -> str:
        case = cases.get(key)
        if case is None or not case.runs:
            return "n/a" if case is None or case.error is None else f"n/a ({case.error[:60]})"
        return f"{case.median('wall'):.3f} / {case.median('cpu'):.3f}"

    def ratios(slow: str, fast: str, unit: str) -> str:
        wall, cpu = _ratio(cases, slow, fast, "wall"), _ratio(cases, slow, fast, "cpu")
        return "n/a" if wall is None else f"{wall:.2f}{unit} / {cpu:.2f}{unit}"

    def rss(key: str) -> str:
        case = cases.get(key)
        return f"{case.median('rss_mib'):.1f}" if case and case.runs else "n/a"

    rows = [(key, label) for key, label in FIGURES] + \
        [(key[:-5], cases[key].label) for key in cases if key.endswith("_head") and key[:-5] not in dict(FIGURES)]
    for key, label in rows:
        lines.append(f"| {label} | {pair(key + '_yamllint')} | {pair(key + '_ref')} | {pair(key + '_head')} | "
                     f"{ratios(key + '_yamllint', key + '_head', 'x')} | {ratios(key + '_head', key + '_ref', '')} | "
                     f"{rss(key + '_ref')} / {rss(key + '_head')} |")
    speedup = _ratio(cases, "cache_cold_head", "cache_warm_head", "wall")
    if speedup is not None:
        lines += ["", f"Second run with the cache against the first: {speedup:.2f}x faster (wall), "
                      f"{_ratio(cases, 'cache_cold_head', 'cache_warm_head', 'cpu'):.2f}x (CPU)."]
    for n in (1, 2, 4):
        tree = _ratio(cases, "tree_yamllint", f"tree_j{n}_head", "wall")
        if tree is not None:
            alike = f"tree_j{n}_ref" in cases  # else the reference's one run, without a pool
            lines.append(f"- GitOps tree with --jobs {n}: {tree:.2f}x yamllint (wall), "
                         f"{_ratio(cases, f'tree_j{n}_head', f'tree_j{n}_ref' if alike else 'tree_ref', 'wall'):.2f} "
                         f"of the reference's wall time" + (f" with --jobs {n}" if alike else ""))
    lines += ["", "| target (issue's done-when) | measured wall | on CPU time | goal | met (wall) |",
              "|---|---:|---:|---:|---|"]
    for name, slow, fast, goal, higher in REFERENCE_TARGETS:
        wall, cpu = _ratio(cases, slow, fast, "wall"), _ratio(cases, slow, fast, "cpu")
        if wall is None:
            continue
        met = wall >= goal if higher else wall <= goal
        lines.append(f"| {name} | {wall:.2f}x | {cpu:.2f}x | {'≥' if higher else '≤'} {goal:g}x | "
                     f"{'yes' if met else '**no**'} |")
    head_rss = cases.get("dense_j1_head") or cases.get("dense_head")
    if head_rss is not None and head_rss.runs:
        lines.append(f"| peak RSS, dense corpus, head (--jobs 1 where the pool exists) | "
                     f"{head_rss.median('rss_mib'):.1f} MiB | | ≤ 100 MiB | "
                     f"{'yes' if head_rss.median('rss_mib') <= 100 else '**no**'} |")
    errors = [f"- {c.label}: {c.error}" for c in cases.values() if c.error]
    return "\n".join(lines + (["", "Errors:"] + errors if errors else [])) + "\n"


# (name, slower case, faster case, goal, higher is better): a ratio of medians, slower / faster
REFERENCE_TARGETS = (
    ("GitOps tree, default --jobs: times faster than yamllint", "tree_yamllint", "tree_head", 25.0, True),
    ("GitOps tree, --jobs 1: times faster than yamllint", "tree_yamllint", "tree_j1_head", 18.0, True),
    ("dense corpus: times faster than yamllint", "dense_yamllint", "dense_head", 8.0, True),
    ("one served Deployment: cfgcheck's time / yamllint's", "one_served_head", "one_served_yamllint", 1.0, False),
    ("one file without a served model: cfgcheck's time / yamllint's", "one_plain_head", "one_plain_yamllint", 0.8,
     False),
    ("GitOps tree, second run with the cache: times faster than the first", "cache_cold_head", "cache_warm_head", 5.0,
     True),
)


def run_reference(args) -> None:
    from installs import install_head, install_reference, reference_commit, supports

    tools = ensure_tools(("yamllint",))
    if tools["yamllint"] is None:
        sys.exit("yamllint did not install: see bench/out/logs/pip-yamllint.log")
    exes = {"yamllint": tools["yamllint"], "ref": str(install_reference()), "head": str(install_head())}
    has = {tool: {option for option in ("--jobs", "--no-cache") if supports(Path(exes[tool]), option)}
           for tool in ("ref", "head")}
    files = {"tree": count_yaml(GITOPS), "dense": count_yaml(DENSE), "one_served": 1, "one_plain": 1,
             "base": count_yaml(GITOPS)}
    jobs = [int(n) for n in args.jobs_list.split(",") if n]
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="cfgcheck-bench-") as scratch:
        cases = reference_cases(exes, has, jobs, files, set(filter(None, args.only.split(","))), Path(scratch),
                                args.short_rounds)
        run_cases(list(cases.values()), args.reps, args.warmup)
    commit = sh(["git", "rev-parse", "--short", "HEAD"], cwd=BENCH).stdout.strip()
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=BENCH).stdout.strip()
    meta = {**machine(), "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "reps": args.reps, "warmup": args.warmup,
            "short_rounds": args.short_rounds, "page_in": PAGE_IN,
            "load_before": load_before, "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "reference": reference_commit()[:7], "commit": commit + (" + uncommitted changes" if dirty else ""),
            "yamllint": version([exes["yamllint"], "--version"])}
    text = reference_report(cases, meta)
    sys.stdout.write(text)
    (OUT / "reference.md").write_text(text)
    (OUT / "reference.json").write_text(json.dumps(
        {"meta": meta, "cases": {k: {"label": c.label, "argv": c.argv, "runs": c.runs, "error": c.error}
                                 for k, c in cases.items()}}, indent=2) + "\n")


if __name__ == "__main__":
    main()
