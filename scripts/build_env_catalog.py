#!/usr/bin/env python3
"""Generate the engine environment-variable catalog (for CFG108) from the engine's own git history.

For each catalogued version of an engine (the versions of ``src/cfgcheck/engines/catalogs/<engine>.json``)
this reads the engine's source at the release tag ``v<version>`` of a local clone and extracts, with
``ast`` (nothing is imported or run), every environment variable name with the engine's prefix:

- vLLM: the keys of the ``environment_variables`` dict of ``vllm/envs.py`` and the names declared
  under its ``if TYPE_CHECKING:`` block (prefix ``VLLM_``);
- SGLang: the attributes of ``class Envs`` in ``python/sglang/srt/environ.py`` and the string
  literal first argument of every ``os.getenv`` / ``os.environ.get`` / ``os.environ[...]`` /
  ``get_bool_env_var`` / ``get_int_env_var`` call under ``python/sglang`` (prefixes ``SGLANG_``, ``SGL_``).

The result, ``src/cfgcheck/engines/catalogs/<engine>_env.json``, records per version the tag, its
commit and the sorted names; a version whose tag the clone lacks is listed under ``unavailable``.

Usage::

    git clone --bare https://github.com/vllm-project/vllm /tmp/vllm.git   # or any clone with tags
    python scripts/build_env_catalog.py --engine vllm --git-dir /tmp/vllm.git
    python scripts/build_env_catalog.py --engine sglang --git-dir /tmp/sglang.git --versions 0.5.23
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
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


def sglang_names(source: str) -> set[str]:
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


def names_at(engine: str, git_dir: Path, tag: str) -> list[str]:
    extract = vllm_names if engine == "vllm" else sglang_names
    found: set[str] = set()
    for source in _sources(engine, git_dir, tag):
        try:
            found |= extract(source)
        except SyntaxError:
            continue  # a file of the tree this Python cannot parse: its names are not counted
    return sorted(n for n in found if n.startswith(PREFIXES[engine]))


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=sorted(PREFIXES), required=True)
    parser.add_argument("--git-dir", type=Path, required=True, help="a clone (bare or not) with release tags")
    parser.add_argument("--versions", nargs="*", help="default: every version of the engine's flag catalog")
    parser.add_argument("--out", type=Path, help="default: src/cfgcheck/engines/catalogs/<engine>_env.json")
    args = parser.parse_args(argv)
    git_dir = args.git_dir / ".git" if (args.git_dir / ".git").is_dir() else args.git_dir
    if _git(git_dir, "rev-parse", "--git-dir") is None:
        print(f"error: {args.git_dir} is not a git repository", file=sys.stderr)
        return 2
    versions = args.versions or list(json.loads((CATALOGS / f"{args.engine}.json").read_text())["versions"])
    catalog = build(args.engine, git_dir, versions)
    out = args.out or CATALOGS / f"{args.engine}_env.json"
    out.write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{out}: {len(catalog['versions'])} versions, {len(catalog['unavailable'])} unavailable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
