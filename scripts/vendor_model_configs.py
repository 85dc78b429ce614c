"""Extract the Hugging Face ``config.json`` dictionaries listed in scripts/model_sources.json from local
git mirrors of the repositories that vendor them, into scripts/model_configs/<slug>.json.

    python scripts/vendor_model_configs.py --mirror mlc-ai/mlc-llm=/path/to/mlc-llm.git \
        --mirror NVIDIA-NeMo/Megatron-Bridge=/path/to/Megatron-Bridge.git

A source names ``repo``, ``commit`` and ``path``, and one of:

- ``symbol``: in a Python file, a module-level ``NAME = {...}``, a key of one (``NAME.key``), or a
  function/fixture whose ``return {...}`` is the config. Values are read with ``ast.literal_eval`` (never
  executed); entries that are not literals (``torch.bfloat16``) are dropped.
- ``json_after``: the config is JSON text (a config.json, or one quoted in a Go/Rust/Swift test): the first
  balanced ``{...}`` after the first occurrence of that anchor text (``""``: the file's first object);
  ``json_key`` then picks a key of it.
- ``literal_after``: the same for a config quoted as a Python dict literal (``True``, ``None``), read with
  ``ast.literal_eval``.
- ``base`` with ``evidence``: a full fine-tune of a model of the table (same architecture); ``evidence`` is a
  line of the file (a training recipe naming the base model) that must be present at that commit.
- ``quantized_from`` with ``evidence`` (lines) and ``checkpoint``: a quantized checkpoint of a model of the table,
  made by the conversion script at that commit; every evidence line (the script's own code stating the group size
  and the tensors it leaves unquantized) must be present, and ``checkpoint`` says what those lines state.
- ``vision`` with ``evidence`` (lines): a checkpoint's vision tower and image preprocessor as public lines state them
  (the tower's widths, the preprocessor's ``size.longest_edge``); ``vision`` says what those lines state and is
  merged into the ``vision_tower`` of the table's entry holding the first id.
- ``catalog``: KAITO's generated model catalog (YAML read from Hugging Face config.json files and the weight
  files' sizes); the whole catalog is vendored as ``<slug of the first id>.json``.
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


def _json_after(text: str, anchor: str) -> dict | None:
    """The first JSON object after ``anchor`` (Go raw strings and Rust ``r#"`` quote it verbatim); braces
    that open no JSON (a function body) are skipped."""
    at = text.find(anchor)
    if at < 0:
        return None
    start = text.find("{", at + len(anchor))
    while start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return value if isinstance(value, dict) else None
    return None


def _literal_after(text: str, anchor: str) -> dict | None:
    """The first balanced ``{...}`` after ``anchor`` read as a Python literal (a config.json quoted as a dict in
    Python code, with ``True``/``None``); never executed."""
    at = text.find(anchor)
    start = text.find("{", at + len(anchor)) if at >= 0 else -1
    depth = 0
    for end in range(start, len(text) if start >= 0 else 0):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            try:
                value = ast.literal_eval(text[start:end + 1])
            except (ValueError, SyntaxError):
                return None
            return value if isinstance(value, dict) else None
    return None


# Sources whose facts are stated by lines of the cited file, every one of which must be present at that commit:
# what those lines say is carried as the source writes it.
_STATED_BY_LINES = {"quantized_from": ("quantized_from", "evidence", "checkpoint"), "vision": ("vision", "evidence")}


def _extract(source: dict, text: str) -> tuple[dict, str]:
    """(what the file gives, the symbol part of the citation)."""
    if source.get("catalog"):
        from ruamel.yaml import YAML  # cfgcheck's own YAML reader

        models = (YAML(typ="safe").load(text) or {}).get("models") or []
        return {"catalog": {m["name"]: m for m in models if isinstance(m, dict) and m.get("name")}}, "models"
    if "base" in source:
        if source["evidence"] not in (line.strip() for line in text.splitlines()):
            return {}, ""
        return {"base": source["base"], "evidence": source["evidence"]}, f"evidence={source['evidence']!r}"
    for kind, keys in _STATED_BY_LINES.items():
        if kind in source:
            lines = {line.strip() for line in text.splitlines()}
            if any(line not in lines for line in source["evidence"]):
                return {}, ""
            return {k: source[k] for k in keys}, "evidence"
    if "literal_after" in source:
        return _literal_after(text, source["literal_after"]) or {}, f"literal after {source['literal_after']!r}"
    if "json_after" in source:
        config = _json_after(text, source["json_after"]) or {}
        if source.get("json_key"):
            config = config.get(source["json_key"]) or {}
        where = f"json after {source['json_after']!r}" + (f" [{source['json_key']}]" if source.get("json_key") else "")
        return config, where
    return _find(ast.parse(text), source["symbol"]) or {}, source["symbol"]


def vendor(source: dict, mirrors: dict[str, str]) -> Path:
    gitdir = mirrors.get(source["repo"])
    if gitdir is None:
        raise SystemExit(f"no --mirror for {source['repo']}")
    text = subprocess.run(["git", "--git-dir", gitdir, "show", f"{source['commit']}:{source['path']}"],
                          check=True, capture_output=True, text=True).stdout
    found, symbol = _extract(source, text)
    where = f"{source['repo']}@{source['commit']}:{source['path']}"
    if not found:
        raise SystemExit(f"nothing found for {source['ids'][0]} in {where}")
    body = {"source": f"{where}#{symbol}"}
    body.update(found if "base" in source or _STATED_BY_LINES.keys() & source.keys() or source.get("catalog") else {"config": found})
    out = OUT / f"{slug(source['ids'][0])}.json"
    out.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", action="append", default=[], help="owner/name=GIT_DIR")
    parser.add_argument("--only", nargs="*", help="vendor only these sources (their first id)")
    args = parser.parse_args(argv)
    mirrors = dict(m.split("=", 1) for m in args.mirror)
    OUT.mkdir(exist_ok=True)
    for source in json.loads(SOURCES.read_text(encoding="utf-8"))["sources"]:
        if args.only and source["ids"][0] not in args.only or "catalog_entry" in source:
            continue  # a catalog_entry source is derived from the vendored catalog by scripts/build_models.py
        print(vendor(source, mirrors).relative_to(HERE.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
