#!/usr/bin/env python3
"""Generate the engine environment-variable catalog (for CFG108) from each release's own source.

For each catalogued version of an engine (the versions of ``src/cfgcheck/engines/catalogs/<engine>.json``)
this reads the engine's source, either from the released wheel on PyPI (``--pypi``: ``pip download
--no-deps --only-binary :all: <engine>==<version>``, opened as a zip, never installed; the wheel's file
name and sha256 are recorded), from its source distribution (``--sdist-cache``, see ``sdist_tree``; the
sdist's file name is recorded) or at the release tag ``v<version>`` of a local clone (``--git-dir``), and
extracts, with ``ast`` (nothing is imported or run), every environment variable name with the engine's prefix:

- in every module of the package (``vllm/``; ``python/sglang``, the wheel's ``sglang/``): the string
  literal first argument of every ``os.getenv`` / ``os.environ.get`` / ``os.environ[...]`` /
  ``get_bool_env_var`` / ``get_int_env_var`` call and every ``"NAME" in os.environ`` test (vLLM reads
  some variables outside ``envs.py``, e.g. in its KV connectors);
- vLLM: also the keys of the ``environment_variables`` dict of ``vllm/envs.py`` and the names declared
  under its ``if TYPE_CHECKING:`` block (prefix ``VLLM_``);
- SGLang: also the attributes of ``class Envs`` in ``python/sglang/srt/environ.py`` (prefixes ``SGLANG_``,
  ``SGL_``).

The result, ``src/cfgcheck/engines/catalogs/<engine>_env.json``, records per version where the names
come from (wheel file and sha256, or tag and commit) and the sorted names; a version that could not be
read is listed under ``unavailable`` with the reason.

Usage::

    python scripts/build_env_catalog.py --engine vllm --pypi          # the released wheels (network: PyPI)
    python scripts/build_env_catalog.py --engine vllm --sdist-cache /tmp/sdists   # the sdists (~10 MB each)

    git clone --bare https://github.com/vllm-project/vllm /tmp/vllm.git   # or any clone with tags
    python scripts/build_env_catalog.py --engine vllm --git-dir /tmp/vllm.git
    python scripts/build_env_catalog.py --engine sglang --git-dir /tmp/sglang.git --versions 0.5.23
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = ROOT / "src" / "cfgcheck" / "engines" / "catalogs"
sys.path.insert(0, str(ROOT / "src"))
from cfgcheck.engines.versions import table_last  # noqa: E402 - the layout the runtime reader expects
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
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and \
                isinstance(node.left.value, str) and isinstance(node.ops[0], (ast.In, ast.NotIn)) and \
                ast.unparse(node.comparators[0]) == "os.environ":
            names.add(node.left.value)  # "VLLM_X" in os.environ: read as a switch
    return names


def source_names(engine: str, path: str, source: str) -> set[str]:
    """The names one source file reads: vLLM's ``envs.py`` declares most of them; every module may read more."""
    found = getter_names(source)
    if engine == "vllm" and path.endswith("vllm/envs.py"):
        found |= vllm_names(source)
    return found


# Where each engine's package lies in its repository (the wheel and the sdist hold it under its own name).
PACKAGE_DIRS = {"vllm": "vllm", "sglang": "python/sglang"}


def _sources(engine: str, git_dir: Path, tag: str) -> list[tuple[str, str]]:
    listing = _git(git_dir, "ls-tree", "-r", "--name-only", tag, PACKAGE_DIRS[engine]) or ""
    paths = [p for p in listing.splitlines() if p.endswith(".py")]
    return [(p, t) for p, t in ((p, _git(git_dir, "show", f"{tag}:{p}")) for p in paths) if t is not None]


def _names(engine: str, sources: list[tuple[str, str]]) -> list[str]:
    found: set[str] = set()
    for path, source in sources:
        try:
            found |= source_names(engine, path, source)
        except SyntaxError:
            continue  # a file of the tree this Python cannot parse: its names are not counted
    return sorted(n for n in found if n.startswith(PREFIXES[engine]))


def names_at(engine: str, git_dir: Path, tag: str) -> list[str]:
    return _names(engine, _sources(engine, git_dir, tag))


def wheel_sources(engine: str, wheel: Path) -> list[tuple[str, str]]:
    """The package's Python files in a wheel, as (path, text)."""
    with zipfile.ZipFile(wheel) as archive:
        members = [name for name in archive.namelist() if name.startswith(f"{engine}/") and name.endswith(".py")]
        return [(name, archive.read(name).decode("utf-8", "replace")) for name in members]


def tree_sources(tree: Path, engine: str) -> list[tuple[str, str]]:
    """The package's Python files under an unpacked source tree (see ``sdist_tree``), as (path, text)."""
    return [(path.relative_to(tree).as_posix(), path.read_text(encoding="utf-8", errors="replace"))
            for path in sorted((tree / engine).rglob("*.py"))]


def _download(engine: str, version: str, folder: Path) -> Path | None:
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
                           "--only-binary", ":all:", f"{engine}=={version}", "-d", str(folder)],
                          capture_output=True, text=True)
    wheels = sorted(folder.glob("*.whl"))
    return wheels[0] if done.returncode == 0 and wheels else None


def sdist_tree(engine: str, version: str, cache: Path) -> Path | None:
    """The unpacked source distribution of ``engine==version`` under ``cache`` (downloaded once).

    ``pip download --no-binary :all:`` fetches the sdist (a vLLM one is ~10 MB, its wheel ~400 MB) and then
    fails to build its metadata (vLLM's ``setup.py`` needs torch); ``--no-clean`` keeps the unpacked tree,
    which is moved to ``cache/<engine>-<version>/`` with a file ``SDIST`` naming the archive.
    """
    tree = cache / f"{engine}-{version}"
    if (tree / "SDIST").is_file():
        return tree
    scratch = cache / f".pip-{engine}-{version}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-v", "--no-clean", "--no-deps",
                           "--no-cache-dir", "--no-binary", ":all:", "--no-build-isolation",
                           f"{engine}=={version}", "-d", str(scratch)],
                          capture_output=True, text=True, env={**os.environ, "TMPDIR": str(scratch)})
    archive = re.search(rf"Downloading ({re.escape(engine)}-[^\s]+\.tar\.gz)", done.stdout + done.stderr)
    unpacked = [d for d in scratch.glob("pip-download-*/*") if (d / engine).is_dir()]
    if archive is None or not unpacked:
        shutil.rmtree(scratch, ignore_errors=True)
        return None
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir()
    shutil.move(str(unpacked[0] / engine), str(tree / engine))
    (tree / "SDIST").write_text(json.dumps({"sdist": archive.group(1)}) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)
    return tree


def source_tree(engine: str, version: str, cache: Path, fetch_sdist=sdist_tree, fetch_wheel=_download) -> Path | None:
    """``sdist_tree``, or for a release published as wheels only (vLLM 0.15.0) its wheel's package files."""
    tree = fetch_sdist(engine, version, cache)
    if tree is not None:
        return tree
    tree = cache / f"{engine}-{version}"
    with tempfile.TemporaryDirectory() as folder:
        wheel = fetch_wheel(engine, version, Path(folder))
        if wheel is None:
            return None
        shutil.rmtree(tree, ignore_errors=True)
        for path, text in wheel_sources(engine, wheel):
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_text(text, encoding="utf-8")
        provenance = {"wheel": wheel.name, "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    (tree / "SDIST").write_text(json.dumps(provenance) + "\n")
    return tree


def provenance(tree: Path) -> dict:
    """Where an unpacked tree came from: ``{"sdist": file}`` or ``{"wheel": file, "sha256": digest}``."""
    return json.loads((tree / "SDIST").read_text())


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


def build_from_sdists(engine: str, versions: list[str], cache: Path, unpack=source_tree) -> dict:
    """The catalog from each version's source distribution, unpacked under ``cache`` by ``unpack``."""
    catalog: dict = {"engine": engine, "format": 1, "prefixes": list(PREFIXES[engine]),
                     "versions": {}, "unavailable": {}}
    for version in versions:
        tree = unpack(engine, version, cache)
        names = _names(engine, tree_sources(tree, engine)) if tree is not None else []
        if not names:
            catalog["unavailable"][version] = "no sdist or wheel on PyPI" if tree is None else \
                f"no {engine} env vars in its source"
            continue
        catalog["versions"][version] = {**provenance(tree), "names": names}
        print(f"{engine} {version}: {len(names)} names", file=sys.stderr)
    return catalog


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=sorted(PREFIXES), required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--git-dir", type=Path, help="a clone (bare or not) with release tags")
    source.add_argument("--pypi", action="store_true", help="read each version's released wheel from PyPI")
    source.add_argument("--sdist-cache", type=Path,
                        help="read each version's sdist from PyPI, unpacked once into this folder")
    source.add_argument("--rewrite", action="store_true", help="write the committed catalog again in the current "
                        "layout (a version a line, read one by one at run time), nothing downloaded or built")
    parser.add_argument("--versions", nargs="*", help="default: every version of the engine's flag catalog")
    parser.add_argument("--out", type=Path, help="default: src/cfgcheck/engines/catalogs/<engine>_env.json")
    args = parser.parse_args(argv)
    versions = args.versions or list(json.loads((CATALOGS / f"{args.engine}.json").read_text())["versions"])
    if args.rewrite:
        catalog = json.loads((CATALOGS / f"{args.engine}_env.json").read_text(encoding="utf-8"))
    elif args.pypi:
        catalog = build_from_wheels(args.engine, versions)
    elif args.sdist_cache:
        catalog = build_from_sdists(args.engine, versions, args.sdist_cache)
    else:
        git_dir = args.git_dir / ".git" if (args.git_dir / ".git").is_dir() else args.git_dir
        if _git(git_dir, "rev-parse", "--git-dir") is None:
            print(f"error: {args.git_dir} is not a git repository", file=sys.stderr)
            return 2
        catalog = build(args.engine, git_dir, versions)
    out = args.out or CATALOGS / f"{args.engine}_env.json"
    out.write_text(table_last(catalog, "versions"), encoding="utf-8")
    print(f"{out}: {len(catalog['versions'])} versions, {len(catalog['unavailable'])} unavailable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
