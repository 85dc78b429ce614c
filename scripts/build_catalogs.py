#!/usr/bin/env python3
"""Generate cfgcheck's flag catalogs from the engines' own published PyPI wheels.

For each engine version this tool

1. downloads the engine's wheel (``pip download --no-deps --only-binary :all:``), unpacks only its
   ``*.py`` files and ``*.dist-info`` into a scratch directory and deletes the wheel;
2. in a throwaway virtual environment *outside the repository* (``--venv``, default
   ``/tmp/cfgcheck-catvenv``; torch plus the pure-Python dependencies that the imports ask for),
   runs a subprocess (one per version, so versions never share interpreter state) that builds the
   engine's **real** argument parser the way its CLI does and dumps every option of it;
3. verifies the parser's behaviour (abbreviations, underscores, ``--flag=value``, last occurrence
   wins, human-readable integers, dotted JSON keys, ``-O3``) by calling ``parse_args`` on sample
   argv, and classifies each option's ``type=`` callable by calling it on sample strings and
   comparing with the validators of ``cfgcheck.engines.value_types`` (so the linter's value checks are
   proven equal to the engine's own on those samples);
4. merges the result into ``src/cfgcheck/engines/catalogs/<engine>.json``: a shared table of distinct
   option specs plus, per version, the list of spec ids. A patch release whose options and
   behaviour equal those of the previous catalogued patch of the same minor is recorded as an alias
   instead of a new catalog.

Nothing is hand-typed: the option lists come only from the engines' parsers.

Usage::

    python scripts/build_catalogs.py                           # everything not built yet
    python scripts/build_catalogs.py --engine vllm --versions 0.26.0
    python scripts/build_catalogs.py --engine sglang --all-patches   # also check older patches
    python scripts/build_catalogs.py --list                          # what would be built

TokenSpeed 0.1.0 imports modules that tokenspeed-kernel 0.1.4 no longer has: build it with
tokenspeed-kernel 0.1.3 installed in the venv (``pip install --no-deps tokenspeed-kernel==0.1.3``);
each catalog entry records the versions of torch, transformers etc. it was built with.

The build is resumable: versions already in the catalog (or recorded as aliases/unavailable) are
skipped unless ``--force``. Timing and sizes are printed at the end and stored in the catalog.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib import machinery as _machinery
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from cfgcheck.engines.versions import table_last  # noqa: E402 - the layout the runtime reader expects
from cfgcheck.engines.versions import version_key as _vkey  # noqa: E402 - one version order for data and runtime
CATALOG_DIR = ROOT / "src" / "cfgcheck" / "engines" / "catalogs"
ENGINES = ("vllm", "sglang", "tokenspeed")
# Which releases are in scope: vLLM 0.6 and later, SGLang 0.4.x and 0.5.x, every TokenSpeed release.
SCOPE = {
    "vllm": lambda v: _vkey(v)[:2] >= _vkey("0.6")[:2],
    "sglang": lambda v: _vkey("0.4")[:2] <= _vkey(v)[:2] <= _vkey("0.5")[:2],
    "tokenspeed": lambda v: True,
}
FORMAT = 1


# --------------------------------------------------------------------------------------------------
# versions


def _series(engine: str, version: str) -> tuple:
    """The release series whose patches share a catalog when their options are equal.

    vLLM: the minor (0.26.x); SGLang: the three-part release (0.5.5, with 0.5.5.post1..3 as its
    patches); TokenSpeed: the three-part release.
    """
    return _vkey(version)[:2] if engine == "vllm" else _vkey(version)[:3]


def pypi_versions(package: str) -> list[str]:
    """Every released (non pre-release) version on PyPI, via pip's own client."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True, text=True, check=False,
    )
    match = re.search(r"Available versions: (.*)", out.stdout)
    if not match:
        return []
    versions = [v.strip() for v in match.group(1).split(",") if v.strip()]
    versions = [v for v in versions if not re.search(r"(a|b|rc|dev)\d*$", v)]
    return sorted(versions, key=_vkey)


def plan(engine: str, all_patches: bool) -> list[str]:
    """Versions to build: the newest patch of every in-scope minor (all patches with all_patches)."""
    versions = [v for v in pypi_versions(engine) if SCOPE[engine](v)]
    if all_patches:
        return versions
    newest: dict[tuple, str] = {}
    for version in versions:
        newest[_series(engine, version)] = version  # ascending, so the last one wins
    return sorted(newest.values(), key=_vkey)


# --------------------------------------------------------------------------------------------------
# fetching


def fetch(engine: str, version: str, cache: Path) -> tuple[Path, str]:
    """Unpacked sources of the wheel (``*.py`` + dist-info only); the wheel itself is deleted."""
    dest = cache / f"{engine}-{version}"
    marker = dest / ".wheel"
    if marker.exists():
        return dest, marker.read_text().strip()
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "-q", f"{engine}=={version}", "-d", tmp],
            check=True,
        )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise RuntimeError(f"no wheel for {engine}=={version}")
        wheel = wheels[0]
        staging = Path(tmp) / "src"
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".py") or ".dist-info/" in info.filename:
                    archive.extract(info, staging)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(staging), dest)
        marker.write_text(wheel.name + "\n")
        return dest, wheel.name  # the temporary directory (with the wheel) is removed here


# --------------------------------------------------------------------------------------------------
# the worker: runs inside the throwaway venv, one process per version

STUB_MODULES = {
    "vllm": ["vllm._C", "vllm._C_stable_libtorch", "vllm._moe_C", "vllm.cumem_allocator",
             "vllm._flashmla_C", "vllm._rocm_C", "vllm._flashmla_extension_C"],
    "sglang": [],
    "tokenspeed": [],
}

# GPU kernel libraries (compiled CUDA extensions) that an engine imports at module level but that
# cannot be installed or loaded without a GPU: replaced by permissive stubs, as vLLM's own _C is.
KERNEL_STUBS = {
    "vllm": [],
    "sglang": [],
    "tokenspeed": ["deep_ep", "trtllm_kernel", "deep_gemm", "flash_mla", "deepselect", "tokenspeed_mla",
                   "fast_hadamard_transform", "flash_attn_interface", "flashkda", "cutedsl_kda",
                   "tokenspeed_kernel.thirdparty.cuda.cuda_ipc",  # dlopens libcudart at import
                   "tokenspeed_triton.profiler"],  # proton, the profiler (tokenspeed-kernel 0.1.3)
}


class _Anything:
    """A stand-in for any attribute of a stubbed kernel library: callable, indexable, subclassable."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __getitem__(self, key):
        return _Anything()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __mro_entries__(self, bases):
        return (object,)


def _kernel_stub(name: str):
    import types

    module = types.ModuleType(name)
    module.__path__ = []  # a package, so submodules can be stubbed too
    module.__getattr__ = lambda attr: _Anything() if not attr.startswith("__") else (_ for _ in ()).throw(
        AttributeError(attr))
    return module


class _StubFinder:
    """Meta-path finder answering imports of the stubbed kernel libraries (and their submodules)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if any(fullname == n or fullname.startswith(n + ".") for n in self.names):
            return _machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return _kernel_stub(spec.name)

    def exec_module(self, module):
        pass


# Strings the ``type=`` callables are probed with; a type class is assigned only when the engine's
# callable and cfgcheck's validator agree on every one of them.
TYPE_SAMPLES = [
    "0", "12", "-3", "+7", " 5 ", "1_000", "007", "1.5", "-0.5", "1e3", "inf", "nan", "32K", "32k",
    "1G", "1g", "2M", "1.5k", "1.5K", "25.6k", "auto", "AUTO", "-1", "abc", "AbC", "", "None",
    "none", "true", "false", "True", "False", "1", "yes", "no", "on", '{"a": 1}', "[1, 2]", "1,2",
    "{bad json", "a b", "{}", "[]", "FP8", "fp8", "auto-x", "a-b_c", "a=1", "image=2,video=1",
]


def _jsonable(value, limit: int = 300):
    """The value as JSON data, or {"$repr": ...} when it is not serialisable or too long."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = None
    if text is not None and len(text) <= limit:
        return json.loads(text)
    rep = text if text is not None else repr(value)
    return {"$repr": rep[:limit] + ("..." if len(rep) > limit else "")}


def _probe(func, sample):
    try:
        result = func(sample)
    except Exception as exc:  # noqa: BLE001 - any failure is argparse's "invalid value"
        return ("err", type(exc).__name__)
    return ("ok", _norm_result(result))


def _norm_result(result):
    if isinstance(result, bool | int | float | str) or result is None:
        if isinstance(result, float) and result != result:
            return "nan"
        return result
    try:
        return json.loads(json.dumps(result))
    except (TypeError, ValueError):
        return {"$type": type(result).__name__, "$str": str(result)[:80]}


def _type_name(func) -> str | None:
    if func is None:
        return None
    inner = func
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None)
    if name is None and hasattr(inner, "func"):  # functools.partial
        name = getattr(inner.func, "__qualname__", type(inner).__name__)
    return name or type(inner).__name__


def _classify(func, validators) -> tuple[str, bool, bool, dict]:
    """(type class, optional, exact, probes) for a ``type=`` callable, decided by calling it.

    A class is *exact* when cfgcheck's validator and the engine's callable agree on every sample
    (accept/refuse and the converted value). Failing that, a class is accepted when it is *sound*:
    it never refuses a sample the engine accepts and converts the accepted ones alike, so cfgcheck
    reports no false "invalid value" (it may miss some). Otherwise the type is "other" (unchecked).
    """
    if func is None:
        return "str", False, True, {}
    probes = {s: _probe(func, s) for s in TYPE_SAMPLES}
    sound: list[tuple[int, str, bool]] = []
    for optional in (False, True):
        for cls in validators.TYPE_CLASSES:
            exact, ok, agree = True, True, 0
            compare = cls not in validators.VALUE_FREE
            for sample, (status, result) in probes.items():
                mine = validators.convert(cls, sample, optional)
                mine_ok = not isinstance(mine, validators.Invalid)
                if status == "err":
                    if mine_ok:
                        exact = False
                    else:
                        agree += 1
                elif not mine_ok or (compare and _norm_result(mine) != result):
                    ok = exact = False
                    break
                else:
                    agree += 1
            if exact and compare:
                return cls, optional, True, {}
            if ok:
                sound.append((agree, cls, optional))
    if sound:
        agree, cls, optional = max(sound, key=lambda t: (t[0], not t[2]))
        if cls != "str":
            return cls, optional, False, {}
    return "other", False, False, {s: p[0] for s, p in probes.items()}


def _dump_parser(parser, engine: str, deprecated_actions, validators) -> tuple[list, list, dict]:
    import argparse as ap

    options, positionals, unknown_types = [], [], {}
    # What argparse matches against is the parser's registry, not action.option_strings: vLLM 0.33
    # registers hidden spellings (--no-enable-x) and then trims option_strings for the help text.
    registry: dict[int, list[str]] = {}
    for opt, registered in parser._option_string_actions.items():
        registry.setdefault(id(registered), []).append(opt)
    seen = set()
    for action in parser._actions:
        if id(action) in seen:
            continue
        seen.add(id(action))
        cls = type(action).__name__
        if not action.option_strings:
            positionals.append({"dest": action.dest, "nargs": action.nargs, "action": cls})
            continue
        takes_value = action.nargs != 0
        tclass, optional, exact, probes = (
            _classify(action.type, validators) if takes_value else (None, False, True, {}))
        if probes:
            unknown_types[_type_name(action.type)] = probes
        negative_forms = []
        negative = False
        if isinstance(action, ap.BooleanOptionalAction):
            negative_forms = [o for o in action.option_strings if o.startswith("--no-")]
        elif isinstance(action, ap._StoreFalseAction) or (
            isinstance(action, ap._StoreConstAction) and action.const is False
        ):
            negative = True
        deprecated = bool(getattr(action, "deprecated", False)) or action in deprecated_actions \
            or "deprecat" in cls.lower()
        help_text = action.help if isinstance(action.help, str) else ""
        note = None
        for sentence in re.split(r"(?<=[.!])\s+", " ".join(help_text.split())):
            if re.search(r"deprecat|will be removed|is removed|no longer|has no effect", sentence, re.I):
                note = sentence[:200]
                break
        choices = None
        if action.choices is not None:
            choices = [_jsonable(c) for c in action.choices]
        strings = list(action.option_strings)
        hidden = [o for o in registry.get(id(action), []) if o not in strings]
        spec = {
            "option_strings": strings + hidden,
            "hidden_forms": hidden,
            "dest": action.dest,
            "action": cls,
            "takes_value": takes_value,
            "nargs": action.nargs,
            "type": tclass,
            "type_name": _type_name(action.type),
            "optional": optional,
            "type_exact": exact,
            "choices": choices,
            "default": None if action.default is ap.SUPPRESS else _jsonable(action.default),
            "const": None if action.const is None else _jsonable(action.const),
            "negative": negative,
            "negative_forms": negative_forms,
            "deprecated": deprecated,
            "deprecated_note": note,
            "required": bool(action.required),
        }
        options.append(spec)
    return options, positionals, unknown_types


def _try_parse(parse, argv):
    """(ok, namespace-or-error) from calling the real parser; SystemExit means argparse refused."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            return True, parse(argv)
    except SystemExit:
        lines = [ln for ln in err.getvalue().strip().splitlines() if ln.strip()]
        return False, lines[-1] if lines else "exit"
    except Exception as exc:  # noqa: BLE001
        return False, f"{type(exc).__name__}: {exc}"[:200]


def _verify_behaviour(parse, prefix: list[str], options: list[dict]) -> dict:
    """Decide parser behaviour by calling ``parse(prefix + argv)`` on samples built from the options."""
    longs = sorted(o for spec in options for o in spec["option_strings"] if o.startswith("--"))
    by_opt = {o: spec for spec in options for o in spec["option_strings"]}
    behaviour: dict = {}
    evidence: dict = {}

    def simple_int(spec):
        return (spec["takes_value"] and spec["nargs"] in (None,) and spec["type"] in ("int",)
                and not spec["choices"] and spec["action"] == "_StoreAction")

    ints = [o for o in longs if simple_int(by_opt[o]) and "-" in o[2:]]
    probe = ints[0] if ints else None
    dest = by_opt[probe]["dest"] if probe else None

    def run(extra, check):
        ok, ns = _try_parse(parse, prefix + extra)
        result = bool(ok and check(ns))
        evidence[" ".join(extra)] = "ok" if ok else ns
        return result

    if probe:
        # an abbreviation: the shortest prefix of probe that no other option shares
        abbrev = None
        for n in range(4, len(probe)):
            cand = probe[:n]
            if cand in by_opt:
                continue
            if [o for o in longs if o.startswith(cand)] == [probe]:
                abbrev = cand
                break
        if abbrev:
            behaviour["allow_abbrev"] = run([abbrev, "7"], lambda ns: getattr(ns, dest) == 7)
            behaviour["abbrev_with_equals"] = run([abbrev + "=7"], lambda ns: getattr(ns, dest) == 7)
        behaviour["equals_value"] = run([probe + "=7"], lambda ns: getattr(ns, dest) == 7)
        behaviour["last_wins"] = run([probe, "7", probe, "9"], lambda ns: getattr(ns, dest) == 9)
        behaviour["underscores_to_dashes"] = run(
            ["--" + probe[2:].replace("-", "_"), "7"], lambda ns: getattr(ns, dest) == 7)
        behaviour["underscores_with_equals"] = run(
            ["--" + probe[2:].replace("-", "_") + "=7"], lambda ns: getattr(ns, dest) == 7)
        # ambiguity is reported as an error by argparse (not a guess)
        amb = None
        for n in range(4, len(probe)):
            cand = probe[:n]
            if cand not in by_opt and len([o for o in longs if o.startswith(cand)]) > 1:
                amb = cand
        if amb:
            ok, msg = _try_parse(parse, prefix + [amb, "7"])
            behaviour["ambiguous_is_error"] = (not ok) and "ambiguous" in str(msg)
            evidence[f"{amb} 7"] = "ok" if ok else msg
    hri = [o for o in longs if by_opt[o]["type"] in ("human-readable-int", "human-readable-int-or-auto", "si-iec-int")
           and by_opt[o]["takes_value"] and by_opt[o]["nargs"] is None]
    if hri:
        d = by_opt[hri[0]]["dest"]
        behaviour["human_readable_ints"] = run([hri[0], "32k"], lambda ns: getattr(ns, d) == 32000)
        behaviour["human_readable_32K"] = run([hri[0], "32K"], lambda ns: getattr(ns, d) == 32768)
        evidence["human_readable_option"] = hri[0]
    else:
        behaviour["human_readable_ints"] = False
    jsons = [o for o in longs if by_opt[o]["type"] in ("json", "json-object") and by_opt[o]["takes_value"]]
    jsons.sort(key=lambda o: (o != "--hf-overrides", o))
    if jsons:
        d = by_opt[jsons[0]]["dest"]

        def has_key(ns):
            value = getattr(ns, d)
            if isinstance(value, dict):
                return value.get("cfgcheck_probe") == 3
            return getattr(value, "cfgcheck_probe", None) == 3 or "cfgcheck_probe" in str(value)

        behaviour["dotted_json_keys"] = run([jsons[0] + ".cfgcheck_probe", "3"], has_key)
    else:
        behaviour["dotted_json_keys"] = False
    if "--optimization-level" in by_opt:
        d = by_opt["--optimization-level"]["dest"]
        behaviour["O_shorthand"] = run(["-O3"], lambda ns: str(getattr(ns, d)) in ("3", "O3"))
    else:
        behaviour["O_shorthand"] = False
    behaviour["evidence"] = evidence
    behaviour["probe_option"] = probe
    return behaviour


def _verify_negatives(parse, prefix: list[str], options: list[dict]) -> None:
    """Which switch spellings set their destination to False, decided by parsing each one alone."""
    for spec in options:
        if spec["takes_value"] or spec["action"] in ("_HelpAction", "_VersionAction", "_CountAction"):
            continue
        negatives = []
        for opt in spec["option_strings"]:
            ok, ns = _try_parse(parse, prefix + [opt])
            if ok and getattr(ns, spec["dest"], None) is False:
                negatives.append(opt)
        if negatives and len(negatives) == len(spec["option_strings"]):
            spec["negative"], spec["negative_forms"] = True, []
        else:
            spec["negative"], spec["negative_forms"] = False, negatives


def _tolerate_transformers_reregistration() -> None:
    """The venv's transformers may already ship configs that older SGLang and vLLM releases register
    themselves ("'qwen3_asr' is already used by a Transformers config"): let theirs win."""
    try:
        import transformers

        for registry in (transformers.AutoConfig, getattr(transformers, "AutoProcessor", None)):
            if registry is None or not hasattr(registry, "register"):
                continue
            original = registry.register

            def register(*args, _original=original, **kwargs):
                kwargs["exist_ok"] = True
                try:
                    return _original(*args, **kwargs)
                except TypeError:
                    kwargs.pop("exist_ok")
                    return _original(*args, **kwargs)

            registry.register = register
    except ImportError:
        pass


def _build_vllm(src: Path):
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cuda")
    _tolerate_transformers_reregistration()
    import vllm.platforms as platforms
    from vllm.platforms.cuda import CudaPlatform

    # No GPU here: answer the device queries that module-level code makes as an H100 80GB would
    # (only defaults can depend on this; the option set does not).
    from vllm.platforms import interface as pi

    capability = pi.DeviceCapability(major=9, minor=0)
    stubs = {
        "get_device_capability": classmethod(lambda cls, device_id=0: capability),
        "has_device_capability": classmethod(
            lambda cls, cap, device_id=0: (capability.to_int() >= (cap if isinstance(cap, int) else cap[0] * 10 + cap[1]))),
        "get_device_name": classmethod(lambda cls, device_id=0: "NVIDIA H100 80GB HBM3"),
        "get_device_total_memory": classmethod(lambda cls, device_id=0: 80 * 2**30),
        "is_fully_connected": classmethod(lambda cls, physical_device_ids: True),
        "device_count": classmethod(lambda cls: 1),
    }
    import torch

    class _NoKernels:  # the compiled kernel libraries are not loaded: every op query says "no"
        def __init__(self, name):
            self._name = name

        def __getattr__(self, op):
            # capability queries answer False; kernels stay absent (hasattr() is False for them)
            if re.search(r"support|^is_|^get_|capab", op) and not op.startswith("__"):
                return lambda *args, **kwargs: False
            raise AttributeError(op)

    for lib in ("_C", "_moe_C", "_rocm_C", "_C_cache_ops", "_C_custom_ar", "_vllm_fa2_C", "_vllm_fa3_C"):
        setattr(torch.ops, lib, _NoKernels(lib))
    stubbed = type("CudaPlatformNoGPU", (CudaPlatform,), {k: v for k, v in stubs.items() if hasattr(CudaPlatform, k)})
    platforms.current_platform = stubbed()
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    try:
        import vllm.entrypoints.cli.serve as serve_mod
    except ImportError:  # before 0.7.3 `vllm serve` was built by vllm.scripts from make_arg_parser
        return _build_vllm_scripts(FlexibleArgumentParser)
    parser = FlexibleArgumentParser(description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    for cmd in serve_mod.cmd_init():
        cmd.subparser_init(subparsers)
    serve = subparsers.choices["serve"]
    deprecated = set()  # a class attribute up to 0.32, an instance attribute per parser in 0.33
    for holder in (FlexibleArgumentParser, parser, serve):
        deprecated |= set(getattr(holder, "_deprecated", None) or ())
    return {
        "parser": serve,
        "parse": parser.parse_args,
        "prefix": ["serve", "cfgcheck/probe-model"],
        "deprecated": deprecated,
        "parser_class": f"{type(serve).__module__}.{type(serve).__name__}",
        "how": "FlexibleArgumentParser + add_subparsers + vllm.entrypoints.cli.serve cmd.subparser_init",
    }


def _build_vllm_scripts(parser_class):
    """vLLM 0.6.x-0.7.2: ``vllm serve`` is ``vllm.scripts.main``'s subparser filled by
    ``vllm.entrypoints.openai.cli_args.make_arg_parser`` (vllm/scripts.py of those releases)."""
    from vllm.entrypoints.openai.cli_args import make_arg_parser

    parser = parser_class(description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve = subparsers.add_parser("serve", help="Start the vLLM OpenAI Compatible API server",
                                  usage="vllm serve <model_tag> [options]")
    serve.add_argument("model_tag", type=str, help="The model tag to serve")
    serve = make_arg_parser(serve)
    return {
        "parser": serve,
        "parse": parser.parse_args,
        "prefix": ["serve", "cfgcheck/probe-model"],
        "deprecated": set(getattr(parser_class, "_deprecated", None) or ()),
        "parser_class": f"{type(serve).__module__}.{type(serve).__name__}",
        "how": "FlexibleArgumentParser + add_subparsers + vllm.scripts serve subparser + make_arg_parser",
    }


def _build_sglang(src: Path):
    import argparse as ap

    _tolerate_transformers_reregistration()
    from sglang.srt.server_args import ServerArgs, prepare_server_args

    import inspect
    source = inspect.getsource(prepare_server_args)
    m = re.search(r"argparse\.ArgumentParser\(([^)]*)\)", source)
    kwargs = {}
    if m and m.group(1).strip():
        kwargs = eval(f"dict({m.group(1)})", {})  # the literal kwargs of the CLI's own call
    parser = ap.ArgumentParser(**kwargs)
    ServerArgs.add_cli_args(parser)
    return {
        "parser": parser,
        "parse": parser.parse_args,
        "prefix": [],
        "deprecated": set(),
        "parser_class": "argparse.ArgumentParser",
        "how": f"argparse.ArgumentParser({m.group(1) if m else ''}) + ServerArgs.add_cli_args (as prepare_server_args)",
    }


def _fake_triton_driver(module_name: str) -> None:
    """Make ``<triton>.runtime.driver.active`` answer as an H100 (no GPU driver is loaded here)."""
    import importlib

    try:
        triton = importlib.import_module(module_name)
        gpu_target = importlib.import_module(f"{module_name}.backends.compiler").GPUTarget
    except Exception:  # noqa: BLE001 - not installed: the engine's import will say so
        return

    class _Utils:
        @staticmethod
        def get_device_properties(index):
            return {"max_shared_mem": 232448, "multiprocessor_count": 132, "max_num_regs": 65536,
                    "warpSize": 32, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}

    class _FakeDriver:
        utils = _Utils()

        def get_current_target(self):
            return gpu_target("cuda", 90, 32)

        def get_current_device(self):
            return 0

        def get_active_torch_device(self):
            import torch

            return torch.device("cpu")

    triton.runtime.driver.set_active(_FakeDriver())


def _build_tokenspeed(src: Path):
    import argparse as ap

    # No GPU here: tokenspeed_kernel refuses to detect a platform. Describe an H100 80GB instead
    # (only defaults can depend on it; the option set does not).
    import importlib.util
    import types

    # load tokenspeed_kernel.platform alone (the package __init__ imports every kernel library and
    # asks for the platform at import)
    kspec = importlib.util.find_spec("tokenspeed_kernel")
    placeholder = types.ModuleType("tokenspeed_kernel")
    placeholder.__path__ = list(kspec.submodule_search_locations)
    sys.modules["tokenspeed_kernel"] = placeholder
    import tokenspeed_kernel.platform as kp

    arch = kp.ArchVersion(9, 0)
    features = kp._get_cuda_sm_features(arch) if hasattr(kp, "_get_cuda_sm_features") else frozenset()
    fake = kp.PlatformInfo(vendor="nvidia", arch_version=arch, device_name="NVIDIA H100 80GB HBM3",
                           device_count=1, total_memory=80 * 2**30, memory_bandwidth=3350.0, sm_count=132,
                           max_threads_per_sm=2048, max_shared_memory_per_sm=228 * 1024, sm_features=features)
    kp._detect_platform = lambda: fake
    # triton has no active driver without a GPU: answer its target queries as an H100 would
    # (tokenspeed_kernel uses its own triton fork, tokenspeed_triton)
    for triton_name in ("tokenspeed_triton", "triton"):
        _fake_triton_driver(triton_name)
    # the package __init__ (which imports every GPU kernel library) stays unexecuted: server_args
    # only imports tokenspeed_kernel submodules

    from tokenspeed.runtime.utils.server_args import ServerArgs, prepare_server_args

    import inspect
    source = inspect.getsource(prepare_server_args)
    m = re.search(r"argparse\.ArgumentParser\(([^)]*)\)", source)
    kwargs = eval(f"dict({m.group(1)})", {}) if m and m.group(1).strip() else {}
    parser = ap.ArgumentParser(**kwargs)
    ServerArgs.add_cli_args(parser)
    # `ts serve` routes argv between its orchestrator, the engine (exact ServerArgs flags only) and
    # the smg gateway (everything else): record its routing tables as the module defines them
    routing: dict = {}
    try:
        import tokenspeed.cli._argsplit as split

        for name in ("_ORCH_FLAGS", "_FANOUT_FLAGS", "_ALIASES", "_GATEWAY_USER_FACING", "_GATEWAY_OVERRIDE",
                     "_ENGINE_EXPLICIT", "_ENGINE_MULTI_VALUE_FLAGS", "_HEADLESS_FLAG"):
            value = getattr(split, name, None)
            if isinstance(value, (set, frozenset, list, tuple)):
                routing[name.strip("_").lower()] = sorted(value)
            elif value is not None:
                routing[name.strip("_").lower()] = value
    except Exception as exc:  # noqa: BLE001
        routing = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    return {
        "parser": parser,
        "parse": parser.parse_args,
        "prefix": [],
        "deprecated": set(),
        "parser_class": "argparse.ArgumentParser",
        "how": f"argparse.ArgumentParser({m.group(1) if m else ''}) + ServerArgs.add_cli_args (as prepare_server_args)",
        "extra_behaviour": {"ts_serve_routing": routing,
                            "unknown_flags_go_to": "the smg gateway (ts serve passes flags the engine lacks to it)"},
    }


def _triton_compat() -> None:
    """vLLM 0.6 and SGLang 0.4 import ``default_cache_dir`` / ``default_dump_dir`` /
    ``default_override_dir`` from ``triton.runtime.cache``, which later triton dropped
    (triton/runtime/cache.py): give them back as they were (``~/.triton/<kind>``)."""
    try:
        import triton.runtime.cache as cache
    except Exception:  # noqa: BLE001 - no triton: the engine's import will say so
        return
    for kind in ("cache", "dump", "override"):
        if not hasattr(cache, f"default_{kind}_dir"):
            setattr(cache, f"default_{kind}_dir",
                    lambda kind=kind: os.path.join(os.path.expanduser("~"), ".triton", kind))


def worker(engine: str, version: str, src: str, out: str) -> None:
    """Runs inside the venv: build the real parser of one version and write its dump as JSON."""
    import logging
    import types

    start = time.time()
    logging.disable(logging.WARNING)
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, src)
    for name in STUB_MODULES[engine]:
        sys.modules.setdefault(name, types.ModuleType(name))
    if KERNEL_STUBS[engine]:
        sys.meta_path.insert(0, _StubFinder(KERNEL_STUBS[engine]))
    # cfgcheck's own validators (stdlib only) are what the type classes are checked against
    from cfgcheck.engines import value_types as validators

    _triton_compat()
    built = {"vllm": _build_vllm, "sglang": _build_sglang, "tokenspeed": _build_tokenspeed}[engine](Path(src))
    parser = built["parser"]
    options, positionals, unknown_types = _dump_parser(parser, engine, built["deprecated"], validators)
    prefix = list(built["prefix"])
    for spec in options:  # required options (SGLang's --model-path) get a dummy value
        if spec["required"] and not any(o in prefix for o in spec["option_strings"]):
            prefix += [spec["option_strings"][0], "cfgcheck/probe-model"]
    behaviour = _verify_behaviour(built["parse"], prefix, options)
    _verify_negatives(built["parse"], prefix, options)
    behaviour.update(built.get("extra_behaviour", {}))
    behaviour["allow_abbrev_attr"] = bool(parser.allow_abbrev)
    behaviour["parser_class"] = built["parser_class"]
    behaviour["built_as"] = built["how"]
    behaviour["python"] = sys.version.split()[0]
    import importlib.metadata as md

    environment = {}
    for dist in ("torch", "transformers", "pydantic", "triton", "tokenspeed-kernel", "tokenspeed-triton"):
        try:
            environment[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    result = {
        "environment": environment,
        "engine": engine,
        "version": version,
        "options": options,
        "positionals": positionals,
        "behaviour": behaviour,
        "unknown_types": unknown_types,
        "seconds": round(time.time() - start, 1),
    }
    Path(out).write_text(json.dumps(result, indent=1, sort_keys=True))


# --------------------------------------------------------------------------------------------------
# catalogs


def load_catalog(engine: str) -> dict:
    path = CATALOG_DIR / f"{engine}.json"
    if path.exists():
        return json.loads(path.read_text())
    return {"engine": engine, "format": FORMAT, "specs": [], "versions": {}, "aliases": {},
            "unavailable": {}, "checked": {}}


def _spec_key(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True)


def save_catalog(catalog: dict) -> Path:
    CATALOG_DIR.mkdir(parents=True, exist_ok=True)
    # rebuild the shared spec table (drop specs no version uses) with stable ordering
    used = sorted({i for v in catalog["versions"].values() for i in v["specs"]})
    remap = {old: new for new, old in enumerate(used)}
    catalog["specs"] = [catalog["specs"][i] for i in used]
    for entry in catalog["versions"].values():
        entry["specs"] = sorted(remap[i] for i in entry["specs"])
    catalog["versions"] = dict(sorted(catalog["versions"].items(), key=lambda kv: _vkey(kv[0])))
    catalog["aliases"] = dict(sorted(catalog["aliases"].items(), key=lambda kv: _vkey(kv[0])))
    path = CATALOG_DIR / f"{catalog['engine']}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(table_last(catalog, "versions", "specs"))
    os.replace(tmp, path)  # readers never see a half-written catalog
    return path


def add_version(catalog: dict, dump: dict, wheel: str) -> str:
    """Merge one dump; returns 'new', 'alias of X' or 'replaced'."""
    index = {_spec_key(s): i for i, s in enumerate(catalog["specs"])}
    ids = []
    for spec in dump["options"]:
        key = _spec_key(spec)
        if key not in index:
            index[key] = len(catalog["specs"])
            catalog["specs"].append(spec)
        ids.append(index[key])
    behaviour = {k: v for k, v in dump["behaviour"].items() if k != "evidence"}
    version = dump["version"]
    entry = {
        "wheel": wheel,
        "specs": sorted(ids),
        "positionals": dump["positionals"],
        "behaviour": behaviour,
        "evidence": dump["behaviour"].get("evidence", {}),
        "extract_seconds": dump["seconds"],
        "environment": dump.get("environment", {}),
    }
    if dump.get("unknown_types"):
        entry["unknown_types"] = sorted(dump["unknown_types"])
    # a patch identical to the previous catalogued patch of the same minor is an alias of it
    engine = catalog["engine"]
    same_minor = [v for v in catalog["versions"]
                  if _series(engine, v) == _series(engine, version) and v != version]
    lower = [v for v in same_minor if _vkey(v) < _vkey(version)]
    higher = [v for v in same_minor if _vkey(v) > _vkey(version)]

    def same(other):
        o = catalog["versions"][other]
        return o["specs"] == entry["specs"] and o["behaviour"] == behaviour and \
            o["positionals"] == entry["positionals"]

    if lower:
        prev = max(lower, key=_vkey)
        if same(prev):
            catalog["versions"].pop(version, None)  # a forced rebuild of a former catalog
            catalog["aliases"][version] = prev
            return f"alias of {prev}"
    catalog["versions"][version] = entry
    catalog["aliases"].pop(version, None)
    if higher:  # a later patch that equals this one becomes its alias
        nxt = min(higher, key=_vkey)
        if same(nxt):
            del catalog["versions"][nxt]
            catalog["aliases"][nxt] = version
            for k, v in list(catalog["aliases"].items()):
                if v == nxt:
                    catalog["aliases"][k] = version
            catalog["checked"][nxt] = f"alias of {version}"
            return f"new; {nxt} is now an alias of it"
    return "new"


def run_worker(python: str, engine: str, version: str, src: Path, timeout: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--worker", engine, version, str(src), out],
            capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir(),
            # a fixed hash seed: choices that an engine builds from a set come out in the same order
            env={**os.environ, "PYTHONNOUSERSITE": "1", "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0",
                 "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"},
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
            raise RuntimeError("\n".join(tail))
        return json.loads(Path(out).read_text())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", choices=ENGINES, action="append")
    ap.add_argument("--versions", nargs="+", help="exact versions (default: the plan)")
    ap.add_argument("--all-patches", action="store_true", help="also check older patches of each minor")
    ap.add_argument("--force", action="store_true", help="rebuild versions already catalogued")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--venv", help="throwaway venv with torch etc. (default /tmp/cfgcheck-catvenv for vLLM, "
                    "/tmp/cfgcheck-catvenv-ENGINE for the others)")
    ap.add_argument("--cache", default="/tmp/cfgcheck-src", help="scratch dir for unpacked wheels")
    ap.add_argument("--keep-sources", action="store_true", help="keep unpacked sources after use")
    ap.add_argument("--timeout", type=int, default=480, help="seconds per version")
    ap.add_argument("--worker", nargs=4, metavar=("ENGINE", "VERSION", "SRC", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--rewrite", action="store_true", help="write the catalogs again in the current layout, "
                    "nothing downloaded or built (their content unchanged)")
    args = ap.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    if args.rewrite:
        for engine in args.engine or ENGINES:
            if (CATALOG_DIR / f"{engine}.json").exists():
                print(save_catalog(load_catalog(engine)))
        return 0

    cache = Path(args.cache)
    total_start = time.time()
    failures = 0
    for engine in args.engine or ENGINES:
        versions = args.versions or plan(engine, args.all_patches)
        if not versions:
            print(f"{engine}: not on PyPI (pip index versions {engine} found nothing); no catalog")
            continue
        print(f"{engine}: {len(versions)} version(s): {' '.join(versions)}")
        if args.list:
            continue
        venv = args.venv or ("/tmp/cfgcheck-catvenv" if engine == "vllm" else f"/tmp/cfgcheck-catvenv-{engine}")
        python = str(Path(venv) / "bin" / "python")
        if not Path(python).exists():
            print(f"  no venv at {venv}: python -m venv {venv} && {venv}/bin/pip install "
                  "torch==2.13.0 <pure-python deps the imports ask for>", file=sys.stderr)
            failures += 1
            continue
        catalog = load_catalog(engine)
        for version in versions:
            done = version in catalog["versions"] or version in catalog["aliases"]
            if done and not args.force:
                print(f"  {version}: already built, skipped")
                continue
            t0 = time.time()
            try:
                src, wheel = fetch(engine, version, cache)
                t_fetch = time.time() - t0
                dump = run_worker(python, engine, version, src, args.timeout)
            except Exception as exc:  # noqa: BLE001
                failures += 1
                reason = str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else type(exc).__name__
                catalog["unavailable"][version] = reason
                print(f"  {version}: FAILED: {reason}")
                save_catalog(catalog)
                continue
            catalog["unavailable"].pop(version, None)
            outcome = add_version(catalog, dump, wheel)
            catalog["checked"][version] = "catalogued" if outcome.startswith("new") else outcome
            save_catalog(catalog)
            if not args.keep_sources:
                shutil.rmtree(src, ignore_errors=True)
            b = dump["behaviour"]
            print(f"  {version}: {len(dump['options'])} options, {outcome}; fetch {t_fetch:.0f}s, "
                  f"parser {dump['seconds']}s; abbrev={b.get('allow_abbrev')} "
                  f"underscores={b.get('underscores_to_dashes')} hri={b.get('human_readable_ints')}"
                  + (f"; unclassified types: {sorted(dump['unknown_types'])}" if dump["unknown_types"] else ""))
        if not args.list:
            catalog.setdefault("build", {})["last_run_seconds"] = round(time.time() - total_start, 1)
            path = save_catalog(catalog)
            print(f"{engine}: {len(catalog['versions'])} catalogs, {len(catalog['aliases'])} aliases, "
                  f"{len(catalog['specs'])} distinct specs, {path.stat().st_size:,} bytes")
    print(f"total {time.time() - total_start:.0f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
