#!/usr/bin/env python3
"""Generate the wrapper-image table (``src/cfgcheck/data/wrappers.json``) from the wrappers' own sources.

A wrapper image starts an engine from environment variables; the table says which env name sets which
engine argument destination. Those facts are read here from pinned upstream files, never typed:

- RunPod worker-vllm ``src/args_builder.py``: every flag of ``VALUE_FLAGS`` / ``PAIRED_BOOL_FLAGS`` /
  ``BOOL_FLAGS`` is read from its UPPER_SNAKE env name (``flag_to_env_name``) unless the name is in
  ``RESERVED_ENV_VARS``; ``ENV_ALIASES`` win; a ``ZERO_MEANS_UNSET`` flag set to 0 is dropped.
- DJL Serving LMI: ``OPTION_<NAME>`` is ``option.<name>`` (``ModelInfo``); the env names of the
  starting guide, of ``LmiConfigRecommender`` and of the container entrypoint's ``translateTGIToLMI``
  are options too; ``VllmRbProperties.generate_vllm_engine_arg_dict`` renames options to vLLM's
  destinations (``model_id_or_path`` is ``option.model_id``, ``Properties.set_model_id_or_path``) and
  ``DTYPE_MAPPER`` maps dtype spellings; a ``"max".equals`` tensor parallel degree is every GPU.
- Substratus vllm-docker ``entrypoint.sh``: each ``--flag "${ENV}"`` of the command it runs; a variable
  the script computes (``export NUM_GPU=$(...)``) is no user setting.

The build never reaches the network: it reads the excerpts under ``scripts/sources/wrappers/`` (each
headed by repo@commit:path and its license). ``snapshot`` refreshes them from local clones (for instance
the GitHub snapshots of the three repositories) at the pinned commits; ``build`` (the default) writes the
table. Only destinations in cfgcheck's settings vocabulary (``src/cfgcheck/settings.py``) are recorded.

Usage::

    python scripts/build_wrappers.py                       # build from scripts/sources/wrappers/
    python scripts/build_wrappers.py snapshot --git-dir runpod=/tmp/worker-vllm.git \\
        --git-dir djl=/tmp/djl-serving.git --git-dir substratus=/tmp/vllm-docker.git
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "scripts" / "sources" / "wrappers"
OUT = ROOT / "src" / "cfgcheck" / "data" / "wrappers.json"
VLLM_CATALOG = ROOT / "src" / "cfgcheck" / "engines" / "catalogs" / "vllm.json"
sys.path.insert(0, str(ROOT / "src"))
from cfgcheck.settings import DESTS  # noqa: E402  (the vocabulary the table is filtered by)

RUNPOD, DJL, SUBSTRATUS = "runpod", "djl", "substratus"
_COMMENT = {".py": "# {}", ".sh": "# {}", ".java": "// {}", ".md": "<!-- {} -->", ".gpu": "# {}"}


@dataclass(frozen=True)
class Source:
    """One pinned upstream file and what of it the excerpt keeps: Python top-level names or
    ``Class.member``, Java method names, or a regular expression over the lines of any other file."""

    key: str
    repo: str
    commit: str
    path: str
    license: str
    keep: tuple[str, ...] = ()
    lines: str = ""

    @property
    def excerpt(self) -> Path:
        return SOURCES / self.key / Path(self.path).name

    @property
    def cite(self) -> str:
        return f"{self.repo}@{self.commit}:{self.path}"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"


_RUNPOD_AT = ("runpod-workers/worker-vllm", "7a925039a53a10eab38d1764eb717a2ea5bdee07")
# The last release before src/args_builder.py (tag v2.23.0): every AsyncEngineArgs field was read from its
# upper-cased name (MODEL, MAX_MODEL_LEN, ...). Tag v2.24.0 (f1a490b) is the first with args_builder.py.
_RUNPOD_OLD_AT = ("runpod-workers/worker-vllm", "76f345be0895c9747047a0ad58cf2c646b459a23")
RUNPOD_ARGS_BUILDER_FROM = "2.24.0"
_DJL_AT = ("deepjavalibrary/djl-serving", "d21927c4a692335fba62a87cc430a5fc00c5f790")
# The entrypoint the table's Substratus entry has always described (images of late 2023); the custom
# entrypoint was removed with the vLLM v0.6.3 image (ffabc27: images tagged v0.6.3 on run `vllm serve`).
_SUBSTRATUS_AT = ("substratusai/vllm-docker", "2dfb53fbf8f0b7d1ba035fe687edb0cf43d9cda7")
_SUBSTRATUS_NEW_AT = ("substratusai/vllm-docker", "ffabc27979ba6c4d08423ddcb13b69e4224be300")
_PROPS = "engines/python/setup/djl_python/properties_manager/"
PINS = (
    Source(RUNPOD, *_RUNPOD_AT, "src/args_builder.py", "MIT License, Copyright (c) 2025 Runpod",
           keep=("ENV_ALIASES", "RESERVED_ENV_VARS", "VALUE_FLAGS", "PAIRED_BOOL_FLAGS", "BOOL_FLAGS",
                 "ZERO_MEANS_UNSET", "flag_to_env_name")),
    Source(DJL, *_DJL_AT, _PROPS + "vllm_rb_properties.py", "Apache License 2.0, Copyright 2023 Amazon.com, Inc.",
           keep=("DTYPE_MAPPER", "VllmRbProperties.generate_vllm_engine_arg_dict")),
    Source(DJL, *_DJL_AT, _PROPS + "properties.py", "Apache License 2.0, Copyright 2023 Amazon.com, Inc.",
           keep=("Properties.set_model_id_or_path",)),
    Source(DJL, *_DJL_AT, "wlm/src/main/java/ai/djl/serving/wlm/ModelInfo.java", "Apache License 2.0",
           lines=r'key\.startsWith\("OPTION_"\)|key = key\.substring|key = key\.toLowerCase|"option\." \+ key'),
    Source(DJL, *_DJL_AT, "wlm/src/main/java/ai/djl/serving/wlm/LmiConfigRecommender.java",
           "Apache License 2.0, Copyright Amazon.com, Inc.",
           keep=("setTensorParallelDegree", "setPipelineParallelDegree")),
    Source(DJL, *_DJL_AT, "serving/docs/lmi/user_guides/starting-guide.md", "Apache License 2.0",
           lines=r"^\* `[A-Z_]+`: `"),
    Source(DJL, *_DJL_AT, "serving/docker/dockerd-entrypoint-with-cuda-compat.sh", "Apache License 2.0",
           lines=r'^\s*translateTGIToLMI "'),
    Source(SUBSTRATUS, *_SUBSTRATUS_AT, "entrypoint.sh", "Apache License 2.0",
           lines=r"^export \w+=|^\s*--?[a-z][\w-]*\b.*\$"),
)
# Older behaviours of a wrapper, for image tags before a version (``before``): read by the build, listed
# apart so that each entry's ``source`` stays its newest files.
EARLIER = (
    Source(RUNPOD, *_RUNPOD_OLD_AT, "src/engine_args.py", "MIT License, Copyright (c) 2025 Runpod",
           keep=("ENV_ALIASES", "_get_args_from_env_auto_discover")),
    Source(SUBSTRATUS, *_SUBSTRATUS_NEW_AT, "Dockerfile.gpu", "Apache License 2.0",
           lines=r"^ENV VERSION=|^ENTRYPOINT"),
)

# Which images are the wrapper (cfgcheck's image matching, data/images.json conventions), and notes.
IDENTITY = {
    RUNPOD: {"name": "RunPod worker-vllm", "variant": "runpod-worker-vllm",
             "match": ["runpod/worker-v1-vllm", "runpod/worker-vllm"], "engine": "vllm"},
    DJL: {"name": "DJL Serving LMI (SageMaker large model inference) with the vLLM backend", "variant": "djl-lmi",
          "match": ["deepjavalibrary/djl-serving", "*.amazonaws.com/djl-inference"], "tag": "*lmi*",
          "when": {"OPTION_ROLLING_BATCH": ["vllm"], "OPTION_ENTRYPOINT": ["*vllm*"]}, "engine": "vllm"},
    SUBSTRATUS: {"name": "Substratus vLLM image (KubeAI's predecessor)", "variant": "substratus",
                 "match": ["ghcr.io/substratusai/vllm", "substratusai/vllm"], "engine": "vllm"},
}
# cfgcheck's own guess, not a wrapper's fact: the env names an unknown engine-named image's model is
# usually given in (HF Inference DLCs, SageMaker and Vertex samples, in-house wrappers).
GENERIC_MODEL_ENV = ["HF_MODEL_ID", "MODEL_ID", "MODEL_NAME", "MODEL"]
ABOUT = (
    "Generated by scripts/build_wrappers.py from the pinned upstream excerpts under scripts/sources/wrappers/ "
    "(cited per entry); do not edit. Vendor images whose entrypoint starts an engine and reads its settings "
    "from environment variables. An env name becomes an engine argument destination by 'rename' (exact env "
    "name, or the option name after 'prefix'), else by stripping 'prefix' and lower-casing the rest ('prefix' "
    "null: only the renamed names are read); only destinations in the settings vocabulary are recorded. "
    "'values' maps a destination's written values to the engine's (null: decided by the wrapper at start, not "
    "recorded). 'match' are fnmatch patterns over registry/repository (as data/images.json); 'tag' an fnmatch "
    "pattern over the tag; 'when' env values (fnmatch, lower-case), any of which must hold. "
    "'versions': the wrapper's earlier behaviours, each for image tags whose version is before 'before' (its "
    "own prefix, rename, values, notes and source replace the entry's); a tag that names no version is read "
    "with the entry's own (newest) behaviour, and cfgcheck says it assumed so. "
    "'generic.env': env names that are a vLLM option's name upper-cased and that the known vLLM wrappers all read "
    "as that option: read for such an image that names vLLM. "
    "'generic.model_env': env names read as the model by an image that names an engine but is not a known "
    "image and runs without an argv (HF Inference DLCs, SageMaker and Vertex samples, in-house wrappers).")


# ---------------------------------------------------------------- snapshot: excerpts from local clones


def _git_show(git_dir: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True,
                          text=True)
    return done.stdout if done.returncode == 0 else None


def _node_lines(lines: list[str], node: ast.AST) -> list[str]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return lines[first - 1:node.end_lineno]


def _python_excerpt(text: str, keep: tuple[str, ...]) -> list[str]:
    """The kept top-level statements and ``Class.member`` definitions, in file order, with their
    original indentation (a kept member is shown under a bare ``class`` line)."""
    lines, out = text.splitlines(), []
    for node in ast.parse(text).body:
        names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        names.append(getattr(node, "name", ""))
        if any(name in keep for name in names):
            out += _node_lines(lines, node) + [""]
        elif isinstance(node, ast.ClassDef):
            members = [m for m in node.body if f"{node.name}.{getattr(m, 'name', '')}" in keep]
            if members:
                out.append(f"class {node.name}:")
                for member in members:
                    out += _node_lines(lines, member) + [""]
    return out


def _java_excerpt(text: str, keep: tuple[str, ...]) -> list[str]:
    """The kept methods, from their signature to the brace that closes them."""
    out: list[str] = []
    for name in keep:
        start = re.search(rf"^[ \t]*(?:(?:public|protected|private|static|final)\s+)+[\w<>, ]+\s{name}\s*\(",
                          text, re.MULTILINE)
        if start is None:
            raise ValueError(f"method {name} not found")
        depth, end = 0, text.index("{", start.end())
        while True:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        out += text[start.start():end + 1].splitlines() + [""]
    return out


def excerpt(source: Source, text: str) -> str:
    """The part of ``text`` (the pinned file) that the build parses, headed by its citation."""
    suffix = Path(source.path).suffix
    if source.lines:
        body = [line for line in text.splitlines() if re.search(source.lines, line)]
    elif suffix == ".py":
        body = _python_excerpt(text, source.keep)
    else:
        body = _java_excerpt(text, source.keep)
    header = _COMMENT[suffix].format(f"Excerpt of {source.cite} ({source.license}): only what "
                                     "scripts/build_wrappers.py parses; regenerate with its snapshot command.")
    return "\n".join([header, *body]).rstrip() + "\n"


def snapshot(git_dirs: dict[str, Path]) -> int:
    for source in PINS + EARLIER:
        if source.key not in git_dirs:
            continue
        git_dir = git_dirs[source.key]
        text = _git_show(git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir, source.commit, source.path)
        if text is None:
            print(f"error: {source.cite} not in {git_dirs[source.key]}", file=sys.stderr)
            return 2
        source.excerpt.parent.mkdir(parents=True, exist_ok=True)
        source.excerpt.write_text(excerpt(source, text), encoding="utf-8")
        print(f"{source.excerpt}: {source.cite}")
    return 0


# ---------------------------------------------------------------- build: the table from the excerpts


def _text(key: str, name: str) -> str:
    return (SOURCES / key / name).read_text(encoding="utf-8")


def _sources(key: str) -> list[Source]:
    return [source for source in PINS if source.key == key]


def _flag_dests() -> dict[str, str]:
    """vLLM's option strings -> argparse destination (its newest catalogued version)."""
    specs = json.loads(VLLM_CATALOG.read_text(encoding="utf-8"))["specs"]
    return {option: spec["dest"] for spec in specs for option in spec["option_strings"]}


def _dest(flag: str, flag_dests: dict[str, str]) -> str:
    return flag_dests.get(flag, flag.lstrip("-").replace("-", "_"))


def _literals(text: str) -> dict[str, object]:
    """Top-level ``NAME = <literal>`` (``frozenset({...})`` read as a set) of a Python excerpt."""
    found: dict[str, object] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "frozenset":
                value = value.args[0]
            found[node.targets[0].id] = ast.literal_eval(value)
    return found


def runpod() -> dict:
    names = _literals(_text(RUNPOD, "args_builder.py"))
    flag_dests, vocabulary = _flag_dests(), DESTS["vllm"]
    rename: dict[str, str] = {}
    for flag in sorted(names["VALUE_FLAGS"] | names["PAIRED_BOOL_FLAGS"] | names["BOOL_FLAGS"]):
        env = flag.lstrip("-").replace("-", "_").upper()  # flag_to_env_name
        if env not in names["RESERVED_ENV_VARS"]:
            rename[env] = _dest(flag, flag_dests)
    rename.update({env: _dest(flag, flag_dests) for env, flag in names["ENV_ALIASES"].items()})
    values = {_dest(flag, flag_dests): {"0": None} for flag in sorted(names["ZERO_MEANS_UNSET"])}
    return {"prefix": None,
            "rename": {env: dest for env, dest in sorted(rename.items()) if dest in vocabulary},
            "values": {dest: mapping for dest, mapping in values.items() if dest in vocabulary},
            "versions": [runpod_before_args_builder()]}


def _earlier(key: str) -> Source:
    return next(source for source in EARLIER if source.key == key)


def runpod_before_args_builder() -> dict:
    """Releases before ``args_builder.py``: every engine argument from its upper-cased name (prefix "",
    the rest lower-cased: ``MODEL`` is ``model``), and ``ENV_ALIASES``."""
    source = _earlier(RUNPOD)
    text = _text(RUNPOD, source.excerpt.name)
    if "env_key = field_name.upper()" not in text:
        raise ValueError(f"{source.cite}: no upper-cased field-name lookup")
    aliases = _literals(text)["ENV_ALIASES"]
    return {"before": RUNPOD_ARGS_BUILDER_FROM, "prefix": "",
            "rename": {env: dest for env, dest in sorted(aliases.items()) if dest in DESTS["vllm"]},
            "source": source.url}


def _self_attribute(node: ast.AST) -> str | None:
    return next((n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
                 and isinstance(n.value, ast.Name) and n.value.id == "self"), None)


def _djl_option_dests() -> dict[str, str]:
    """DJL option -> vLLM destination where they differ (``generate_vllm_engine_arg_dict``), the
    property ``model_id_or_path`` being read from ``option.model_id`` (``set_model_id_or_path``)."""
    fed: dict[str, str] = {}
    for node in ast.walk(ast.parse(_text(DJL, "properties.py"))):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            reads = [c.args[0].value for c in ast.walk(node.value) if isinstance(c, ast.Call) and c.args]
            fed[node.targets[0].slice.value] = reads[0]  # the first option read wins (``or``)
    pairs: list[tuple[str, ast.AST]] = []
    for node in ast.walk(ast.parse(_text(DJL, "vllm_rb_properties.py"))):
        if isinstance(node, ast.Dict):
            pairs += [(k.value, v) for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            pairs.append((node.targets[0].slice.value, node.value))
    renamed = {}
    for dest, value in pairs:
        attribute = _self_attribute(value)
        option = fed.get(attribute, attribute)
        if option is not None and option != dest:
            renamed[option] = dest
    return renamed


def _djl_env_options() -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    """(env name, DJL option) pairs (starting guide, ``LmiConfigRecommender``, the entrypoint's
    ``translateTGIToLMI``), and per option the values the server resolves at start (``"max".equals``)."""
    pairs = re.findall(r"^\* `([A-Z_]+)`: `option\.(\w+)`", _text(DJL, "starting-guide.md"), re.M)
    decided: dict[str, list[str]] = {}
    for body in re.split(r"\n\s*(?:private|public|protected) ", _text(DJL, "LmiConfigRecommender.java")):
        env, option = re.search(r'getenv\("(\w+)"', body), re.search(r'setProperty\("option\.(\w+)"', body)
        if env and option:
            pairs.append((env[1], option[1]))
            decided[option[1]] = sorted(set(re.findall(r'"(\w+)"\.equals\(', body)))
    options = dict(pairs)
    prefix = _djl_prefix()
    entrypoint = _text(DJL, "dockerd-entrypoint-with-cuda-compat.sh")
    for alias, target in re.findall(r'translateTGIToLMI "(\w+)" "(\w+)"', entrypoint):
        option = target[len(prefix):].lower() if target.startswith(prefix) else options.get(target)
        if option is not None:  # else a server setting (SERVING_*), no engine argument
            pairs.append((alias, option))
    return pairs, decided


def _djl_prefix() -> str:
    """The env prefix ``ModelInfo`` turns into ``option.`` (lower-casing the rest)."""
    text = _text(DJL, "ModelInfo.java")
    prefix = re.search(r'key\.startsWith\("(\w+)"\)', text)
    if prefix is None or '"option." + key' not in text or "toLowerCase" not in text:
        raise ValueError("ModelInfo.java excerpt: no OPTION_ -> option. translation")
    return prefix[1]


def djl() -> dict:
    vocabulary, option_dests = DESTS["vllm"], _djl_option_dests()
    pairs, decided = _djl_env_options()
    rename = {option: dest for option, dest in option_dests.items() if dest in vocabulary}
    for env, option in pairs:
        dest = option_dests.get(option, option)
        if dest not in vocabulary:
            continue  # e.g. the TensorRT-LLM branch of CUDA_MEMORY_FRACTION
        if rename.get(env, dest) != dest:
            raise ValueError(f"DJL: {env} is both {rename[env]} and {dest}")
        rename[env] = dest
    values: dict[str, dict[str, str | None]] = {}
    mapper = _literals(_text(DJL, "vllm_rb_properties.py"))["DTYPE_MAPPER"]
    values["dtype"] = {spelled: dtype for spelled, dtype in mapper.items() if spelled != dtype}
    for option, words in decided.items():
        if words:
            values[option_dests.get(option, option)] = dict.fromkeys(words)
    return {"prefix": _djl_prefix(), "rename": dict(sorted(rename.items())),
            "values": {dest: mapping for dest, mapping in sorted(values.items()) if dest in vocabulary}}


def substratus() -> dict:
    """Each ``--flag "${ENV}"`` of the entrypoint's command; flags given a variable the script computes
    itself are noted, not read."""
    text, flag_dests = _text(SUBSTRATUS, "entrypoint.sh"), _flag_dests()
    computed = dict(re.findall(r"^export (\w+)=(\$\(.*\))$", text, re.M))
    rename, notes = {}, []
    for flag, env in re.findall(r'(--?[a-z][\w-]*)\s+"?\$\{?(\w+)\}?"?', text):
        if env in computed:
            notes.append(f"{flag} is computed by the entrypoint ({env}={computed[env]}).")
        elif _dest(flag, flag_dests) in DESTS["vllm"]:
            rename[env] = _dest(flag, flag_dests)
    earlier = {"prefix": None, "rename": dict(sorted(rename.items())), "notes": " ".join(notes),
               "source": "; ".join(source.url for source in _sources(SUBSTRATUS))}
    return {**substratus_upstream_entrypoint(), "versions": [earlier]}


def substratus_upstream_entrypoint() -> dict:
    """From the image built for vLLM ``VERSION`` on, the entrypoint is vLLM's own OpenAI server: the
    container's args are its argv and no env name is read; the custom entrypoint is for tags before it."""
    source = _earlier(SUBSTRATUS)
    text = _text(SUBSTRATUS, source.excerpt.name)
    version = re.search(r"^ENV VERSION=(\S+)", text, re.M)
    if version is None or "vllm.entrypoints.openai.api_server" not in text:
        raise ValueError(f"{source.cite}: no vLLM version or upstream entrypoint")
    return {"prefix": None, "rename": {}, "before_version": version[1], "source": source.url,
            "notes": f"From {version[1]} the image runs vLLM's OpenAI server with the container's args; "
                     "no env is read."}


def generic_env(wrappers: list[dict]) -> dict[str, str]:
    """Env names that are a vLLM option's own name upper-cased (``MAX_MODEL_LEN``) and that every known
    vLLM wrapper reading them (any behaviour, any version) maps to that option: what an in-house vLLM
    wrapper image given those names is read with. A name two wrappers read differently, or a vendor's
    own spelling (DJL's ``TENSOR_PARALLEL_DEGREE``), is left out: no guess."""
    seen: dict[str, set[str]] = {}
    for entry in wrappers:
        if entry["engine"] != "vllm":
            continue
        for behaviour in [entry] + entry.get("versions", []):
            for name, dest in behaviour.get("rename", {}).items():
                seen.setdefault(name, set()).add(dest)
    return {name: dest for name, dests in sorted(seen.items()) if len(dests) == 1 and (dest := dests.pop()) == name.lower()}


def build() -> dict:
    wrappers = []
    for key, read in ((RUNPOD, runpod), (DJL, djl), (SUBSTRATUS, substratus)):
        entry = {**IDENTITY[key], **read()}
        entry.setdefault("source", "; ".join(source.url for source in _sources(key)))
        since = entry.pop("before_version", None)
        for earlier in entry.get("versions", []):
            earlier.setdefault("before", since)
        wrappers.append({k: v for k, v in entry.items() if v not in ({}, "") or k == "rename"})
    return {"about": ABOUT, "generated_by": "scripts/build_wrappers.py",
            "sources": [f"{source.cite} ({source.license})" for source in PINS + EARLIER],
            "wrappers": wrappers, "generic": {"model_env": GENERIC_MODEL_ENV, "env": generic_env(wrappers)}}


def render(table: dict) -> str:
    return json.dumps(table, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("build", "snapshot"), default="build")
    parser.add_argument("--git-dir", action="append", default=[], metavar="KEY=PATH",
                        help=f"snapshot: a clone holding the pinned commit, KEY one of {RUNPOD}, {DJL}, {SUBSTRATUS}")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        git_dirs = dict(item.split("=", 1) for item in args.git_dir if "=" in item)
        unknown = set(git_dirs) - set(IDENTITY)
        if unknown or not git_dirs:
            print(f"error: --git-dir KEY=PATH with KEY one of {sorted(IDENTITY)}", file=sys.stderr)
            return 2
        return snapshot({key: Path(path) for key, path in git_dirs.items()})
    args.out.write_text(render(build()), encoding="utf-8")
    print(f"{args.out}: {', '.join(IDENTITY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
