#!/usr/bin/env python3
"""Generate the engine environment-variable catalog (for CFG108) from each release's own source.

For each catalogued version of an engine (the versions of ``src/cfgcheck/engines/catalogs/<engine>.json``)
this reads the engine's source, either from the released wheel on PyPI (``--pypi``: ``pip download
--no-deps --only-binary :all: <engine>==<version>``, opened as a zip, never installed; the wheel's file
name and sha256 are recorded) or at the release tag ``v<version>`` of a local clone (``--git-dir``), and
extracts, with ``ast`` (nothing is imported or run), every environment variable name with the engine's prefix:

- vLLM: the keys of the ``environment_variables`` dict of ``vllm/envs.py`` and the names declared
  under its ``if TYPE_CHECKING:`` block (prefix ``VLLM_``);
- SGLang: the attributes of ``class Envs`` in ``python/sglang/srt/environ.py`` and the string
  literal first argument of every ``os.getenv`` / ``os.environ.get`` / ``os.environ[...]`` /
  ``get_bool_env_var`` / ``get_int_env_var`` call under ``python/sglang`` (the wheel's ``sglang/``;
  prefixes ``SGLANG_``, ``SGL_``).

The result, ``src/cfgcheck/engines/catalogs/<engine>_env.json``, records per version where the names
come from (wheel file and sha256, or tag and commit) and the sorted names; a version that could not be
read is listed under ``unavailable`` with the reason.

Usage::

    python scripts/build_env_catalog.py --engine vllm --pypi          # the released wheels (network: PyPI)

    git clone --bare https://github.com/vllm-project/vllm /tmp/vllm.git   # or any clone with tags
    python scripts/build_env_catalog.py --engine vllm --git-dir /tmp/vllm.git
    python scripts/build_env_catalog.py --engine sglang --git-dir /tmp/sglang.git --versions 0.5.23
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

CATALOGS = Path(__file__).resolve().parent.parent / "src" / "cfgcheck" / "engines" / "catalogs"
PREFIXES = {"vllm": ("VLLM_",), "sglang": ("SGLANG_", "SGL_")}
_GETTERS = {"getenv", "get", "get_bool_env_var", "get_int_env_var", "get_float_env_var", "get_str_env_var"}


def _git(git_dir: Path, *args: str) -> str | None:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def vllm_names(source: str) -> set[str]:
    """Keys of ``environment_variables`` and names declared under ``if TYPE_CHECKING:``."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            names.update(n.target.id for n in node.body
                         if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(node.value, ast.Dict):
            names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def getter_names(source: str) -> set[str]:
    """``class Envs`` attributes and string literals read through the environment getters."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == "Envs":
            names.update(n.targets[0].id for n in node.body
                         if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name))
            names.update(n.target.id for n in node.body
                         if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _GETTERS and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, str) and ast.unparse(node.value) == "os.environ":
            names.add(node.slice.value)
    return names


def _sources(engine: str, git_dir: Path, tag: str) -> list[str]:
    if engine == "vllm":
        text = _git(git_dir, "show", f"{tag}:vllm/envs.py")
        return [text] if text is not None else []
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", tag, "python/sglang") or ""
    paths = [p for p in listing.splitlines() if p.endswith(".py")]
    return [t for t in (_git(git_dir, "show", f"{tag}:{p}") for p in paths) if t is not None]


def _names(engine: str, sources: list[str]) -> list[str]:
    extract = vllm_names if engine == "vllm" else getter_names
    found: set[str] = set()
    for source in sources:
        try:
            found |= extract(source)
        except SyntaxError:
            continue  # a file of the tree this Python cannot parse: its names are not counted
    return sorted(n for n in found if n.startswith(PREFIXES[engine]))


def names_at(engine: str, git_dir: Path, tag: str) -> list[str]:
    return _names(engine, _sources(engine, git_dir, tag))


def wheel_sources(engine: str, wheel: Path) -> list[str]:
    """The source files of a wheel the names are read from (``vllm/envs.py``; every ``sglang/**.py``)."""
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist()
                   if (name == "vllm/envs.py" if engine == "vllm" else name.startswith("sglang/") and name.endswith(".py"))]
        return [archive.read(name).decode("utf-8", "replace") for name in members]


def _download(engine: str, version: str, folder: Path) -> Path | None:
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
                           "--only-binary", ":all:", f"{engine}=={version}", "-d", str(folder)],
                          capture_output=True, text=True)
    wheels = sorted(folder.glob("*.whl"))
    return wheels[0] if done.returncode == 0 and wheels else None


def build(engine: str, git_dir: Path, versions: list[str]) -> dict:
    catalog: dict = {"engine": engine, "format": 1, "prefixes": list(PREFIXES[engine]),
                     "versions": {}, "unavailable": {}}
    for version in versions:
        tag = f"v{version}"
        commit = _git(git_dir, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}")
        names = names_at(engine, git_dir, tag) if commit else []
        if not names:
            catalog["unavailable"][version] = f"tag {tag} absent" if not commit else f"no {engine} env vars at {tag}"
            continue
        catalog["versions"][version] = {"tag": tag, "commit": commit.strip(), "names": names}
    return catalog


def build_from_wheels(engine: str, versions: list[str], fetch=_download) -> dict:
    """The catalog from each version's released wheel, fetched by ``fetch(engine, version, folder)``."""
    catalog: dict = {"engine": engine, "format": 1, "prefixes": list(PREFIXES[engine]),
                     "versions": {}, "unavailable": {}}
    for version in versions:
        with tempfile.TemporaryDirectory() as folder:  # a vLLM wheel is ~400 MB: one at a time
            wheel = fetch(engine, version, Path(folder))
            if wheel is None:
                catalog["unavailable"][version] = "no wheel on PyPI for this platform"
                continue
            names = _names(engine, wheel_sources(engine, wheel))
            if not names:
                catalog["unavailable"][version] = f"no {engine} env vars in {wheel.name}"
                continue
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            catalog["versions"][version] = {"wheel": wheel.name, "sha256": digest, "names": names}
        print(f"{engine} {version}: {len(names)} names", file=sys.stderr)
    return catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=sorted(PREFIXES), required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--git-dir", type=Path, help="a clone (bare or not) with release tags")
    source.add_argument("--pypi", action="store_true", help="read each version's released wheel from PyPI")
    parser.add_argument("--versions", nargs="*", help="default: every version of the engine's flag catalog")
    parser.add_argument("--out", type=Path, help="default: src/cfgcheck/engines/catalogs/<engine>_env.json")
    args = parser.parse_args(argv)
    versions = args.versions or list(json.loads((CATALOGS / f"{args.engine}.json").read_text())["versions"])
    if args.pypi:
        catalog = build_from_wheels(args.engine, versions)
    else:
        git_dir = args.git_dir / ".git" if (args.git_dir / ".git").is_dir() else args.git_dir
        if _git(git_dir, "rev-parse", "--git-dir") is None:
            print(f"error: {args.git_dir} is not a git repository", file=sys.stderr)
            return 2
        catalog = build(args.engine, git_dir, versions)
    out = args.out or CATALOGS / f"{args.engine}_env.json"
    out.write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{out}: {len(catalog['versions'])} versions, {len(catalog['unavailable'])} unavailable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
