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

# Text any served-model config must contain: an engine name (image, command, module) or a format marker.
SERVING_HINT = re.compile(rb"vllm|sglang|tokenspeed|llama[-.]?cpp|llama-server|servingEngineSpec|inference\.llmkube\.dev",
                          re.I)


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
    """The CLI's lint path, in-process: config, lint, text report."""
    from cfgcheck.config import load_for
    from cfgcheck.lint import lint
    from cfgcheck.reporters import renderer

    config = load_for([path])
    result = lint([path], config)
    renderer("text")(result, color=False)
    return result


def phases(path: Path) -> None:
    """Wall time per pipeline phase, using the lint module's own functions (they change; kept loose)."""
    import cfgcheck.lint as L
    from cfgcheck.config import load_for
    from cfgcheck.reporters import renderer
    from cfgcheck.yamlio import decode

    import yaml

    marks = []
    t = time.perf_counter()
    config = load_for([path])
    marks.append(("config (repo root via git, .cfgcheck.yaml)", time.perf_counter() - t))
    t = time.perf_counter()
    files = L.discover([path], config.root, config.get("exclude", []), L.file_suffixes())
    discover_s = time.perf_counter() - t
    t = time.perf_counter()
    loaded = L.load([path], config)
    load_total = time.perf_counter() - t
    parsed = sum(1 for f in loaded if getattr(f, "documents", None))
    marks.append((f"load: discover ({len(files)} files, {discover_s:.3f} s alone) + read + pre-filter + parse "
                  f"({parsed} files with documents)", load_total))
    t = time.perf_counter()
    models = L.served_models(loaded, config)
    marks.append((f"adapters ({len(models)} served models)", time.perf_counter() - t))
    t = time.perf_counter()
    rules = L.enabled_rules(config, None, None)
    findings = L.unreadable(loaded, rules, config) + L.run_rules(rules, config, models)
    marks.append((f"rules ({len(rules)} rules, {len(findings)} raw findings)", time.perf_counter() - t))
    t = time.perf_counter()
    result = L.finalize(findings, loaded, models, rules, config)
    marks.append(("finalize (suppressions, sort)", time.perf_counter() - t))
    t = time.perf_counter()
    renderer("text")(result, color=False)
    marks.append(("text report", time.perf_counter() - t))

    # The parsing work on its own, for scale.
    t = time.perf_counter()
    datas = [f.read_bytes() for f in files]
    texts = [decode(d) for d in datas]
    read = time.perf_counter() - t
    t = time.perf_counter()
    for text in texts:
        try:
            for _ in yaml.compose_all(text, Loader=yaml.CSafeLoader):
                pass
        except yaml.YAMLError:
            pass
    compose = time.perf_counter() - t
    t = time.perf_counter()
    hits = sum(bool(SERVING_HINT.search(d)) for d in datas)
    prefilter = time.perf_counter() - t
    markers = getattr(L, "SERVING_MARKERS", None)
    lint_hits = sum(bool(markers.search(d)) for d in datas) if markers is not None else None
    total = sum(m[1] for m in marks)
    print("| phase | seconds | share |\n|---|---:|---:|")
    for name, seconds in marks:
        print(f"| {name} | {seconds:.3f} | {seconds / total:.0%} |")
    print(f"| **total** | {total:.3f} | |")
    print("\nFor scale, over all discovered files:\n")
    print("| piece | seconds |\n|---|---:|")
    print(f"| read + decode | {read:.3f} |")
    print(f"| PyYAML C composer alone (compose_all, CSafeLoader), every file | {compose:.3f} |")
    print(f"| strict engine-name regex over the bytes (pre-filter cost) | {prefilter:.3f} |")
    print(f"\nStrict engine-name regex `{SERVING_HINT.pattern.decode()}` matches {hits} of {len(datas)} files "
          f"({hits / max(1, len(datas)):.1%}).")
    if lint_hits is not None:
        print(f"cfgcheck.lint.SERVING_MARKERS (the pipeline's own pre-filter) matches {lint_hits} of {len(datas)} files "
              f"({lint_hits / max(1, len(datas)):.1%}).")
    kustomizations = sum(1 for f in files if f.name in ("kustomization.yaml", "kustomization.yml"))
    print(f"kustomization.yaml files: {kustomizations} (each is a `kubectl kustomize` subprocess if rendered).")


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
        section("Phases (in-process, one run, warm)")
        if name == corpora[0]:
            lint_once(path)  # first pass: imports, catalogs, caches
        phases(path)
        section("cProfile")
        cprofile(path, args.top)
        if not args.no_pyinstrument:
            section("pyinstrument (1 ms sampling)")
            pyinstrument_profile(path)
        section("Composer: PyYAML C vs ruamel round-trip")
        parser_compare(path, args.sample)
    one = sorted(Path("dense/vllm-serve").glob("*.yaml"))
    if one:
        print("\n# start-up")
        section("Import cost of `cfgcheck lint <one file>`")
        import_time(one[0])
    sys.stdout = sys.__stdout__
    report.close()


if __name__ == "__main__":
    main()
