#!/usr/bin/env python3
"""Generate vLLM's precision facts per release (for CFG211 and CFG304) from each release's own source.

For each catalogued vLLM version (the versions of ``src/cfgcheck/engines/catalogs/vllm.json``) this reads
the release's source distribution from PyPI (or, for a release published as wheels only, its wheel;
see ``build_env_catalog.source_tree``), with ``ast`` (nothing is imported or run), and records:

- ``quantization``: for each ``--quantization`` value of the ``method_to_config`` table of
  ``vllm/model_executor/layers/quantization/__init__.py`` (and each ``QuantizationConfig`` subclass by its
  ``get_name()``), the class it loads, that class's ``get_min_capability()`` (``80`` = 8.0) and
  ``get_supported_act_dtypes()`` when they return constants (inherited ones followed), and its file. vLLM
  compares both with the GPU and ``--dtype`` when it builds the quantization config and stops: "The
  quantization method fp8 is not supported for the current GPU. Minimum capability: 80. Current capability:
  75." / "torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"
  (``capability_check`` and ``act_dtype_check`` name the file that raises them);
- ``float16_refused``: the ``_FLOAT16_NOT_SUPPORTED_MODELS`` table (model_type -> reason), its file, and
  whether a function of that file raises on it ("The model type 'gemma2' does not support float16.
  Reason: ...") rather than only steering the ``auto`` dtype away from float16.

The result, ``src/cfgcheck/data/vllm_precision.json``, cites per version the sdist (or wheel
and sha256) the facts were read from; a version that could not be read is listed under ``unavailable``.

Usage::

    python scripts/build_vllm_precision.py --sdist-cache /tmp/sdists     # network: PyPI, ~10 MB a release
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_env_catalog import CATALOGS, provenance, source_tree  # noqa: E402 - the sibling script's fetcher

DATA = CATALOGS.parent.parent / "data"
QUANTIZATION_DIR = "vllm/model_executor/layers/quantization"
CAPABILITY_ERROR = "is not supported for the current GPU"
ACT_DTYPE_ERROR = "is not supported for quantization"
FLOAT16_TABLE = "_FLOAT16_NOT_SUPPORTED_MODELS"


def _returned(method: ast.FunctionDef, kind: type) -> object | None:
    """The constant of ``kind`` a method returns, when its only return gives one (``cast(T, "fp8")`` too)."""
    returns = [n for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return None
    constants = [n.value for n in ast.walk(returns[0].value) if isinstance(n, ast.Constant)
                 and isinstance(n.value, kind) and not isinstance(n.value, bool)]
    if isinstance(returns[0].value, (ast.Constant, ast.Call)) and constants:
        return constants[-1]
    return None


# torch dtype attribute -> the --dtype name vLLM's _STR_DTYPE_TO_TORCH_DTYPE maps to it
_DTYPES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32", "float32": "float32"}


def _returned_dtypes(method: ast.FunctionDef) -> list[str] | None:
    """The dtypes ``get_supported_act_dtypes`` returns as a literal list of ``torch.<dtype>``."""
    returns = [n for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1 or not isinstance(returns[0].value, (ast.List, ast.Tuple)):
        return None
    names = [e.attr for e in returns[0].value.elts if isinstance(e, ast.Attribute)]
    if len(names) != len(returns[0].value.elts):
        return None
    return sorted({_DTYPES.get(name, name) for name in names})


def _classes(path: str, source: str) -> dict[str, dict]:
    """Each class of a module: its base names and the constants its own get_name, get_min_capability and
    get_supported_act_dtypes return."""
    found: dict[str, dict] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef)}
        entry = {"bases": [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases], "file": path}
        if "get_name" in methods:
            entry["name"] = _returned(methods["get_name"], str)
        if "get_min_capability" in methods:
            entry["min_capability"] = _returned(methods["get_min_capability"], int)
        if "get_supported_act_dtypes" in methods:
            entry["act_dtypes"] = _returned_dtypes(methods["get_supported_act_dtypes"])
        found[node.name] = entry
    return found


def method_classes(sources: list[tuple[str, str]]) -> dict[str, str]:
    """``--quantization`` value -> the class it loads: the ``method_to_config`` dict of
    ``get_quantization_config`` (``quantization/__init__.py``); aliases such as ``awq`` -> ``AutoAWQConfig``."""
    for path, source in sources:
        if path != f"{QUANTIZATION_DIR}/__init__.py":
            continue
        for node in ast.walk(ast.parse(source)):
            target = node.target if isinstance(node, ast.AnnAssign) else (
                node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
            if isinstance(target, ast.Name) and target.id == "method_to_config" and isinstance(node.value, ast.Dict):
                return {k.value: v.id for k, v in zip(node.value.keys, node.value.values)
                        if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name)}
    return {}


def _inherited(classes: dict[str, dict], name: str, key: str, seen: frozenset = frozenset()) -> object | None:
    entry = classes.get(name)
    if entry is None or name in seen:
        return None
    if key in entry:
        return entry[key]
    for base in entry["bases"]:
        value = _inherited(classes, base, key, seen | {name})
        if value is not None:
            return value
    return None


def _is_quantization_config(classes: dict[str, dict], name: str, seen: frozenset = frozenset()) -> bool:
    if name == "QuantizationConfig":
        return True
    entry = classes.get(name)
    return entry is not None and name not in seen and any(
        _is_quantization_config(classes, base, seen | {name}) for base in entry["bases"])


def quantization_methods(sources: list[tuple[str, str]]) -> dict[str, dict]:
    """method -> minimum capability, supported activation dtypes, class and file: each ``--quantization``
    value of ``method_to_config``, and each QuantizationConfig subclass by its ``get_name()``."""
    classes: dict[str, dict] = {}
    for path, source in sources:
        if path.startswith(QUANTIZATION_DIR + "/") or "QuantizationConfig" in source:  # models define some
            classes.update(_classes(path, source))
    named = {cls: _inherited(classes, cls, "name") for cls in sorted(classes)}
    candidates = [(name, cls) for cls, name in named.items() if isinstance(name, str)]
    table = method_classes(sources)
    methods: dict[str, dict] = {}
    for name, cls in [*candidates, *table.items()]:  # the table, what --quantization loads, last: it wins
        minimum = _inherited(classes, cls, "min_capability")
        if cls == "QuantizationConfig" or not _is_quantization_config(classes, cls) or not isinstance(minimum, int):
            continue
        entry = {"min_capability": minimum, "class": cls, "file": classes[cls]["file"]}
        dtypes = _inherited(classes, cls, "act_dtypes")
        if dtypes:
            entry["act_dtypes"] = dtypes
        methods[name] = entry
    return methods


def _raises_on(tree: ast.Module, table: str) -> bool:
    """Whether a function of the module both reads ``table`` and raises."""
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
        if table in names and any(isinstance(n, ast.Raise) for n in ast.walk(function)):
            return True
    return False


def float16_refused(sources: list[tuple[str, str]]) -> dict | None:
    """The model types the release refuses float16 for, with reasons; None when it has no such table."""
    for path, source in sources:
        if FLOAT16_TABLE not in source:
            continue
        tree = ast.parse(source)
        for node in tree.body:
            target = node.target if isinstance(node, ast.AnnAssign) else (
                node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
            if isinstance(target, ast.Name) and target.id == FLOAT16_TABLE and isinstance(node.value, ast.Dict):
                model_types = {k.value: v.value if isinstance(v, ast.Constant) else ast.unparse(v)
                               for k, v in zip(node.value.keys, node.value.values)
                               if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                return {"file": path, "raises": _raises_on(tree, FLOAT16_TABLE), "model_types": model_types}
    return None


def _raising_file(sources: list[tuple[str, str]], message: str, call: str) -> str | None:
    """The configuration module (outside the quantization package) that raises ``message`` after ``call``."""
    return next((path for path, source in sources if message in source and call in source
                 and not path.startswith(QUANTIZATION_DIR + "/")), None)


def facts(sources: list[tuple[str, str]]) -> dict:
    """The precision facts of one release's ``vllm/`` sources, given as (path, text)."""
    return {"quantization": quantization_methods(sources),
            "capability_check": _raising_file(sources, CAPABILITY_ERROR, "get_min_capability()"),
            "act_dtype_check": _raising_file(sources, ACT_DTYPE_ERROR, "get_supported_act_dtypes()"),
            "float16_refused": float16_refused(sources)}


def _python_sources(tree: Path) -> list[tuple[str, str]]:
    sources = []
    for path in sorted((tree / "vllm").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            ast.parse(text)
        except SyntaxError:
            continue  # a file this Python cannot parse: its facts are not counted
        sources.append((path.relative_to(tree).as_posix(), text))
    return sources


def build(versions: list[str], cache: Path, unpack=source_tree) -> dict:
    data: dict = {"engine": "vllm", "format": 1, "versions": {}, "unavailable": {}}
    for version in versions:
        tree = unpack("vllm", version, cache)
        found = facts(_python_sources(tree)) if tree is not None else None
        if found is None or not found["quantization"]:
            data["unavailable"][version] = "no sdist or wheel on PyPI" if tree is None else "no quantization methods"
            continue
        data["versions"][version] = {**provenance(tree), **found}
        print(f"vllm {version}: {len(found['quantization'])} quantization methods", file=sys.stderr)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist-cache", type=Path, required=True, help="folder the sources are unpacked into, once")
    parser.add_argument("--versions", nargs="*", help="default: every version of the vLLM flag catalog")
    parser.add_argument("--out", type=Path, default=DATA / "vllm_precision.json")
    args = parser.parse_args(argv)
    versions = args.versions or list(json.loads((CATALOGS / "vllm.json").read_text())["versions"])
    data = build(versions, args.sdist_cache)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(data['versions'])} versions, {len(data['unavailable'])} unavailable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
