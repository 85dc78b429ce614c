"""Extract the Hugging Face ``config.json`` dictionaries listed in scripts/model_sources.json from local
git mirrors of the repositories that vendor them, into scripts/model_configs/<slug>.json.

    python scripts/vendor_model_configs.py --mirror mlc-ai/mlc-llm=/path/to/mlc-llm.git \
        --mirror NVIDIA-NeMo/Megatron-Bridge=/path/to/Megatron-Bridge.git

A source names ``repo``, ``commit``, ``path`` and ``symbol``: a module-level ``NAME = {...}``, a key of one
(``NAME.key``), or a function/fixture whose ``return {...}`` is the config. Values are read with
``ast.literal_eval`` (never executed); entries that are not literals (``torch.bfloat16``) are dropped.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "model_sources.json"
OUT = HERE / "model_configs"


def slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "__", model_id)


def _literal_dict(node: ast.Dict) -> dict:
    out = {}
    for key, value in zip(node.keys, node.values):
        try:
            out[ast.literal_eval(key)] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError):
            continue
    return out


def _find(tree: ast.AST, symbol: str) -> dict | None:
    name, _, key = symbol.partition(".")
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                data = node.value
                if not key:
                    return _literal_dict(data)
                for k, v in zip(data.keys, data.values):
                    if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Dict):
                        return _literal_dict(v)
        if isinstance(node, ast.FunctionDef) and node.name == name:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Return) and isinstance(sub.value, ast.Dict):
                    return _literal_dict(sub.value)
    return None


def vendor(source: dict, mirrors: dict[str, str]) -> Path:
    gitdir = mirrors.get(source["repo"])
    if gitdir is None:
        raise SystemExit(f"no --mirror for {source['repo']}")
    text = subprocess.run(["git", "--git-dir", gitdir, "show", f"{source['commit']}:{source['path']}"],
                          check=True, capture_output=True, text=True).stdout
    config = _find(ast.parse(text), source["symbol"])
    if not config:
        raise SystemExit(f"{source['symbol']} not found in {source['repo']}@{source['commit']}:{source['path']}")
    cite = f"{source['repo']}@{source['commit']}:{source['path']}#{source['symbol']}"
    out = OUT / f"{slug(source['ids'][0])}.json"
    out.write_text(json.dumps({"source": cite, "config": config}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR")
    args = parser.parse_args(argv)
    mirrors = dict(m.split("=", 1) for m in args.mirror)
    OUT.mkdir(exist_ok=True)
    for source in json.loads(SOURCES.read_text(encoding="utf-8"))["sources"]:
        print(vendor(source, mirrors).relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
