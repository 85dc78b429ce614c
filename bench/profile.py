#!/usr/bin/env python3
"""Where cfgcheck's lint time goes: phases, cProfile (and pyinstrument if importable), parser and
pre-filter estimates, and start-up import cost.

    python bench/profile.py [--corpus dense|gitops|both] [--top 25] [--sample 200] [--no-pyinstrument]

Runs cfgcheck's lint in-process on bench/out/dense and bench/out/gitops (run bench/run.py or the
generators first). pyinstrument is looked for on sys.path and in bench/out/pylib
(``pip install --target bench/out/pylib pyinstrument``, done here if missing and pip can reach PyPI).
Output goes to stdout and bench/out/profile.txt.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

# This file is named profile.py; drop its folder from sys.path so ``cProfile`` gets the stdlib ``profile``.
if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
PYLIB = OUT / "pylib"


class Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


def section(title: str) -> None:
    print(f"\n## {title}\n")


def lint_once(path: Path):
    """The CLI's lint path, in-process: config, lint, text report; without the cyclic collector, as the CLI
    runs (``cfgcheck.__main__.main`` disables it), or a collection of the run's heap lands in whichever phase
    allocates when one is due (a 0.5 s "slowest file" of the dense corpus was one)."""
    gc.disable()
    from cfgcheck.config import load_for
    from cfgcheck.lint import lint
    from cfgcheck.reporters import renderer

    config = load_for([path])
    result = lint([path], config)
    renderer("text")(result, color=False)
    return result


class PhaseClock:
    """CPU time (``time.process_time``) of each phase of a real ``lint`` run, exclusive of the phases it
    calls, and per file: the functions the run calls are wrapped where the run looks them up (module
    attributes), so the same profiler reads the reference commit's install and the working tree's. A
    function a version does not have is skipped."""

    # (module, attribute, phase); the file a call is about is its argument that is a LoadedFile or a path
    HOOKS = (
        ("cfgcheck.lint", "discover", "discover"),
        ("cfgcheck.lint", "referrers", "discover"),
        ("cfgcheck.lint", "related_paths", "discover"),
        ("cfgcheck.lint", "load_file", "read"),
        ("cfgcheck.lint", "load_stream", "read"),
        ("cfgcheck.yamlio", "parse_text", "compose"),
        # what a file without a serving marker costs: its read, the marker test, libyaml's check of it
        ("cfgcheck.stages", "read_text", "read"),
        ("cfgcheck.yamlio", "read_text", "read"),
        ("cfgcheck.lint", "has_serving_marker", "read"),
        ("cfgcheck.stages", "check_text", "compose"),
        ("cfgcheck.yamlio", "check_text", "compose"),
        ("cfgcheck.stages", "file_stage", "read"),
        ("cfgcheck.stages", "cached_stage", "read"),
        ("cfgcheck.stages", "adapt_file", "adapters"),
        ("cfgcheck.stages", "index_file", "adapters"),
        ("cfgcheck.adapters.core.registry", "index", "adapters"),
        ("cfgcheck.adapters.core.registry", "served_models", "adapters"),
        ("cfgcheck.adapters", "index", "adapters"),
        ("cfgcheck.adapters", "served_models", "adapters"),
        ("cfgcheck.lint", "rules_needed", "rules"),
        ("cfgcheck.lint", "run_rules", "rules"),
        ("cfgcheck.lint", "unreadable", "rules"),
        ("cfgcheck.lint", "finalize", "report"),
    )

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.per_file: dict[tuple[str, str], float] = {}
        self.stack: list[float] = []  # time spent in wrapped children of each open call
        self.undo: list[tuple[object, str, object]] = []

    def install(self) -> None:
        import importlib

        for module_name, attribute, phase in self.HOOKS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            original = getattr(module, attribute, None)
            if original is None or getattr(original, "__wrapped_phase__", None):
                continue
            self.undo.append((module, attribute, original))
            setattr(module, attribute, self._wrap(original, phase))

    def uninstall(self) -> None:
        for module, attribute, original in reversed(self.undo):
            setattr(module, attribute, original)
        self.undo.clear()

    def _wrap(self, function, phase: str):
        clock = self

        def timed(*args, **kwargs):
            clock.stack.append(0.0)
            start = time.process_time()
            result = None
            try:
                result = function(*args, **kwargs)
                return result
            finally:
                spent = time.process_time() - start
                children = clock.stack.pop()
                own = spent - children
                if clock.stack:
                    clock.stack[-1] += spent
                clock.total[phase] = clock.total.get(phase, 0.0) + own
                clock.calls[phase] = clock.calls.get(phase, 0) + 1
                name = _file_of((result, *args))
                if name is not None:
                    clock.per_file[(name, phase)] = clock.per_file.get((name, phase), 0.0) + own

        timed.__wrapped_phase__ = phase
        return timed


def _file_of(values) -> str | None:
    """The repository path of the file a call is about: a LoadedFile returned or passed, or parse_text's
    first argument."""
    for value in values:
        path = getattr(value, "path", None)
        if isinstance(path, str):
            return path
    return values[1] if len(values) > 2 and isinstance(values[1], str) and isinstance(values[2], str) else None


PHASES = ("discover", "read", "compose", "adapters", "rules", "report")


def phases(path: Path) -> None:
    """CPU time per phase of one warm in-process run (config, lint, text report), and per file."""
    from cfgcheck.config import load_for
    from cfgcheck.lint import lint
    from cfgcheck.reporters import renderer

    clock = PhaseClock()
    clock.install()
    start = time.process_time()
    try:
        config = load_for([path])
        result = lint([path], config)
        report_start = time.process_time()
        renderer("text")(result, color=False)
        clock.total["report"] = clock.total.get("report", 0.0) + time.process_time() - report_start
    finally:
        clock.uninstall()
    total = time.process_time() - start
    serving = sum(1 for f in result.files if getattr(f, "serving", True))
    print(f"{len(result.files)} files ({serving} with a serving marker), {len(result.models)} served models, "
          f"{len(result.findings)} findings; {total:.3f} s CPU in all.\n")
    print("| phase | CPU s | share | calls | ms per file |\n|---|---:|---:|---:|---:|")
    for phase in PHASES:
        seconds = clock.total.get(phase, 0.0)
        print(f"| {phase} | {seconds:.3f} | {seconds / total:.0%} | {clock.calls.get(phase, 0)} | "
              f"{1000 * seconds / max(1, len(result.files)):.3f} |")
    other = total - sum(clock.total.get(p, 0.0) for p in PHASES)
    print(f"| other (configuration, the run's glue) | {other:.3f} | {other / total:.0%} | | |")
    per_file: dict[str, float] = {}
    for (name, _), seconds in clock.per_file.items():
        per_file[name] = per_file.get(name, 0.0) + seconds
    marked = {f.path for f in result.files if getattr(f, "serving", True)}
    for label, chosen in (("with a serving marker", marked), ("without one", set(per_file) - marked)):
        costs = sorted((per_file[name] for name in chosen if name in per_file), reverse=True)
        if costs:
            print(f"\nFiles {label}: {len(costs)}, median {1000 * costs[len(costs) // 2]:.2f} ms, "
                  f"slowest {1000 * costs[0]:.1f} ms, sum {sum(costs):.3f} s (read + compose + adapters).")
    slowest = sorted(per_file.items(), key=lambda kv: -kv[1])[:5]
    print("\n| slowest files | ms |\n|---|---:|")
    for name, seconds in slowest:
        print(f"| `{name}` | {1000 * seconds:.1f} |")


def parser_compare(path: Path, sample: int) -> None:
    from cfgcheck.yamlio import decode, parse_text

    files = sorted(p for p in path.rglob("*.yaml") if ".git" not in p.parts)
    step = max(1, len(files) // sample)
    chosen = files[::step][:sample]
    texts = [(str(p), decode(p.read_bytes())) for p in chosen]
    size = sum(len(t) for _, t in texts)
    results = {}
    for fast in (True, False):
        t = time.perf_counter()
        for name, text in texts:
            parse_text(name, text, None, fast)
        results[fast] = time.perf_counter() - t
    scale = len(files) / len(chosen)
    print(f"{len(chosen)} of {len(files)} files ({size / 1e6:.2f} MB), every {step}th:\n")
    print("| composer | sample s | extrapolated to all files s |\n|---|---:|---:|")
    print(f"| PyYAML C (parse_text fast=True) | {results[True]:.3f} | {results[True] * scale:.2f} |")
    print(f"| ruamel round-trip pure (parse_text fast=False) | {results[False]:.3f} | {results[False] * scale:.2f} |")
    print(f"\nruamel / C = {results[False] / results[True]:.1f}x")


def cprofile(path: Path, top: int) -> None:
    profiler = cProfile.Profile()  # imports and caches are warm: phases() ran lint first
    profiler.enable()
    lint_once(path)
    profiler.disable()
    for key, title in (("cumulative", "cumulative"), ("tottime", "own time (tottime)")):
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.strip_dirs().sort_stats(key).print_stats(top)
        text = stream.getvalue()
        body = text[text.find("   ncalls"):] if "   ncalls" in text else text
        head = [line for line in text.splitlines() if "function calls" in line]
        print(f"Top {top} by {title} ({head[0].strip() if head else ''}):\n")
        print("```")
        print(body.rstrip())
        print("```\n")


def pyinstrument_profile(path: Path) -> None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("pyinstrument not importable; skipped.")
        return
    profiler = Profiler(interval=0.001)
    profiler.start()
    lint_once(path)
    profiler.stop()
    text = profiler.output_text(unicode=False, color=False, show_all=False)
    lines = text.splitlines()
    print("```")
    print("\n".join(lines[:70]))
    if len(lines) > 70:
        print(f"... ({len(lines) - 70} more lines)")
    print("```")


def import_time(one_file: Path) -> None:
    """Start-up: -X importtime of the real CLI on one file, grouped by top-level package."""
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-X", "importtime", "-c",
                           "import sys; from cfgcheck.cli import main; sys.argv=['cfgcheck','lint',sys.argv[1]]; main()",
                           str(one_file)], capture_output=True, text=True, cwd=OUT, env=env)
    per_package: dict[str, int] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if not match:
            continue
        own, name = int(match.group(1)), match.group(4)
        top = name.split(".")[0]
        per_package[top] = per_package.get(top, 0) + own
    total = sum(per_package.values())
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=OUT)
    floor = time.perf_counter() - t
    print(f"Imports while linting one file: {total / 1e6:.3f} s in total (self times summed; `python -c pass` "
          f"takes {floor:.3f} s wall). Top packages:\n")
    print("| package | import self time (s) |\n|---|---:|")
    for name, micros in sorted(per_package.items(), key=lambda kv: -kv[1])[:18]:
        print(f"| {name} | {micros / 1e6:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=["dense", "gitops", "both"], default="both")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sample", type=int, default=200, help="files for the ruamel vs C composer comparison")
    parser.add_argument("--no-pyinstrument", action="store_true")
    parser.add_argument("--phases-only", action="store_true", help="only the phase table (as bench/RESULTS.md shows)")
    args = parser.parse_args()

    if PYLIB.is_dir():
        sys.path.append(str(PYLIB))
    if not args.no_pyinstrument:
        try:
            import pyinstrument  # noqa: F401
        except ImportError:
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(PYLIB), "pyinstrument"],
                           capture_output=True)
            sys.path.append(str(PYLIB))
    sys.setrecursionlimit(10000)

    report = open(OUT / "profile.txt", "w")
    sys.stdout = Tee(sys.__stdout__, report)
    os.chdir(OUT)  # the CLI runs from here in bench/run.py; paths below are relative to it
    corpora = ["dense", "gitops"] if args.corpus == "both" else [args.corpus]
    for name in corpora:
        path = Path(name)
        if not path.is_dir():
            sys.exit(f"missing bench/out/{name}: run bench/run.py (or the generators) first")
        print(f"\n# {name} ({path.resolve()})")
        section("Phases (in-process, one run, warm; CPU time)")
        if name == corpora[0]:
            lint_once(path)  # first pass: imports, catalogs, caches
        phases(path)
        if args.phases_only:
            continue
        section("cProfile")
        cprofile(path, args.top)
        if not args.no_pyinstrument:
            section("pyinstrument (1 ms sampling)")
            pyinstrument_profile(path)
        section("Composer: PyYAML C vs ruamel round-trip")
        parser_compare(path, args.sample)
    one = sorted(Path("dense/vllm-serve").glob("*.yaml"))
    if one and not args.phases_only:
        print("\n# start-up")
        section("Import cost of `cfgcheck lint <one file>`")
        import_time(one[0])
    sys.stdout = sys.__stdout__
    report.close()


if __name__ == "__main__":
    main()
