"""Engine command lines: find the engine launcher in an argv and turn flags into canonical settings.

Which option a written flag means is decided by the engine version's catalog, through argparse itself
(so ``--kv-cache-memory`` is ``--kv-cache-memory-bytes`` on vLLM 0.26 exactly as the engine decides).
Without a catalog for the engine, a flag means the option whose argparse destination it spells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import ArgToken, ServedModel, Setting

# Argparse destinations whose meaning cfgcheck's rules and capacity model reason about, per engine.
CANONICAL_DESTS = {
    "vllm": {
        "model": "model", "revision": "model_revision", "max_model_len": "max_model_len",
        "max_num_seqs": "max_num_seqs", "gpu_memory_utilization": "gpu_memory_utilization",
        "kv_cache_memory_bytes": "kv_cache_memory_bytes", "tensor_parallel_size": "tensor_parallel_size",
        "pipeline_parallel_size": "pipeline_parallel_size", "data_parallel_size": "data_parallel_size",
        "kv_cache_dtype": "kv_cache_dtype", "dtype": "dtype", "quantization": "quantization",
        "max_num_batched_tokens": "max_num_batched_tokens", "block_size": "block_size",
        "num_gpu_blocks_override": "num_gpu_blocks_override", "api_key": "api_key",
        "enable_prefix_caching": "enable_prefix_caching", "served_model_name": "served_model_name",
        "hf_overrides": "hf_overrides", "rope_scaling": "rope_scaling", "enable_expert_parallel": "enable_expert_parallel",
    },
    "sglang": {
        "model_path": "model", "revision": "model_revision", "context_length": "max_model_len",
        "max_running_requests": "max_num_seqs", "mem_fraction_static": "mem_fraction_static",
        "tp_size": "tensor_parallel_size", "pp_size": "pipeline_parallel_size", "dp_size": "data_parallel_size",
        "ep_size": "expert_parallel_size", "kv_cache_dtype": "kv_cache_dtype", "dtype": "dtype",
        "quantization": "quantization", "chunked_prefill_size": "chunked_prefill_size",
        "max_total_tokens": "max_total_tokens", "page_size": "block_size", "api_key": "api_key",
        "served_model_name": "served_model_name", "json_model_override_args": "hf_overrides",
    },
    "llama.cpp": {
        "ctx_size": "max_model_len", "parallel": "max_num_seqs", "model": "model", "api_key": "api_key",
        "n_gpu_layers": "gpu_layers", "hf_repo": "model",
        # llama-server's short forms (-c, -np, -m, -hf, -hfr, -ngl, -a)
        "c": "max_model_len", "np": "max_num_seqs", "m": "model", "hf": "model", "hfr": "model",
        "ngl": "gpu_layers", "gpu_layers": "gpu_layers", "a": "served_model_name", "alias": "served_model_name",
    },
}
CANONICAL_DESTS["tokenspeed"] = CANONICAL_DESTS["sglang"]

INT_SETTINGS = {
    "max_model_len", "max_num_seqs", "kv_cache_memory_bytes", "tensor_parallel_size", "pipeline_parallel_size",
    "data_parallel_size", "expert_parallel_size", "max_num_batched_tokens", "block_size", "num_gpu_blocks_override",
    "chunked_prefill_size", "max_total_tokens", "gpu_layers",
}
FLOAT_SETTINGS = {"gpu_memory_utilization", "mem_fraction_static"}

_HUMAN_INT = re.compile(r"^(\d+)([kKmMgGtT])$")
_SUFFIX_POWER = {"k": 1, "m": 2, "g": 3, "t": 4}

# Launchers: argv prefixes that start an engine, and where the engine's own argv begins.
_PYTHON = re.compile(r"^(.*/)?python[0-9.]*$")


@dataclass(slots=True)
class Launch:
    engine: str
    args: list[ArgToken]  # the engine's own argv, after the launcher
    model: ArgToken | None  # a positional model (``vllm serve MODEL``)


def human_int(text: str) -> int | None:
    """vLLM's human-readable ints: ``32k`` = 32000, ``32K`` = 32768 (decimal lower, binary upper)."""
    text = text.strip()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    match = _HUMAN_INT.match(text)
    if not match:
        return None
    number, suffix = int(match.group(1)), match.group(2)
    base = 1000 if suffix.islower() else 1024
    return number * base ** _SUFFIX_POWER[suffix.lower()]


def convert(name: str, text: str, engine: str) -> object:
    """The value a canonical setting takes from its flag text, or the text when it does not convert."""
    if name in INT_SETTINGS:
        try:
            value = human_int(text) if engine == "vllm" else (int(text) if re.fullmatch(r"[-+]?\d+", text.strip()) else None)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits): not a setting's int
            value = None
        return text if value is None else value
    if name in FLOAT_SETTINGS:
        try:
            return float(text)
        except ValueError:
            return text
    return text


def _base(token: str) -> str:
    return token.rsplit("/", 1)[-1]


def find_launch(tokens: list[ArgToken], image_engine: str | None) -> Launch | None:
    """Find the engine start in ``tokens`` (command + args). ``image_engine`` is the engine the image
    runs; with it, an argv of only flags is the engine's own argv (the image's entrypoint starts it)."""
    texts = [t.text for t in tokens]
    for index, text in enumerate(texts):
        base = _base(text)
        nxt = texts[index + 1] if index + 1 < len(texts) else None
        if base == "vllm" and nxt == "serve":
            return _with_positional("vllm", tokens[index + 2:])
        if base in ("sglang", "tokenspeed") and nxt in ("serve", "launch_server"):
            return _with_positional(base, tokens[index + 2:], positional=False)
        if base in ("llama-server", "llama-cpp-server"):
            return Launch("llama.cpp", tokens[index + 1:], None)
        if _PYTHON.match(base) and nxt == "-m" and index + 2 < len(texts):
            module = texts[index + 2]
            engine = _engine_of_module(module)
            if engine:
                return Launch(engine, tokens[index + 3:], None)
        if text == "-m" and nxt and index == 0:
            engine = _engine_of_module(nxt)
            if engine:
                return Launch(engine, tokens[index + 2:], None)
    if image_engine and tokens and tokens[0].text.startswith("-"):
        return Launch(image_engine, tokens, None)
    if image_engine and not tokens:
        return Launch(image_engine, [], None)
    return None


def _engine_of_module(module: str) -> str | None:
    if module.startswith("vllm.entrypoints"):
        return "vllm"
    if module.startswith("sglang.launch_server") or module.startswith("sglang.srt") or module == "sglang.launch_server":
        return "sglang"
    if module.startswith("tokenspeed"):
        return "tokenspeed"
    if module == "dynamo.vllm":  # NVIDIA Dynamo's vLLM worker takes vLLM's engine args
        return "vllm"
    if module == "dynamo.sglang":
        return "sglang"
    return None


def _with_positional(engine: str, rest: list[ArgToken], positional: bool = True) -> Launch:
    if positional and rest and not rest[0].text.startswith("-"):
        return Launch(engine, rest[1:], rest[0])
    return Launch(engine, rest, None)


def canonical_name(engine: str, dest: str) -> str:
    return CANONICAL_DESTS.get(engine, {}).get(dest, dest)


def _dest_of(flag: str) -> str:
    return flag.lstrip("-").split("=", 1)[0].replace("-", "_")


_NUMBER = re.compile(r"^-\d")


def walk_tokens(model: ServedModel, tokens: list[ArgToken]):
    """Yield (flag token, argparse dest or None, value token or None, flag as written, negative) per flag.

    The catalog of the model's engine version decides, through argparse itself, what a flag resolves
    to and whether it takes a value; without a catalog, a flag takes the next token as its value
    unless that token is a flag, and its destination is the one argparse would derive from its name.
    """
    from .catalog import catalog_for, walk

    catalog = catalog_for(model.engine, model.engine_version) if model.engine != "unknown" else None
    if catalog is not None:
        for parsed in walk(catalog, tokens):
            spec, resolution = parsed.resolution.spec, parsed.resolution
            dest = spec.dest if spec is not None and not resolution.suffix else None
            negative = bool(spec is not None and resolution.option and spec.is_negative(resolution.option))
            yield parsed.token, dest, parsed.value, resolution.written, negative
        return
    index = 0
    while index < len(tokens):
        token = tokens[index]
        text = token.text
        if not text.startswith("-") or text in ("-", "--") or _NUMBER.match(text):
            index += 1
            continue
        written = text.split("=", 1)[0]
        nxt = tokens[index + 1] if index + 1 < len(tokens) else None
        takes_next = "=" not in text and nxt is not None and (not nxt.text.startswith("-") or _NUMBER.match(nxt.text))
        negative = written.startswith(("--no-", "--disable-"))
        yield token, None, nxt if takes_next else None, written, negative
        index += 2 if takes_next else 1


def apply_argv(model: ServedModel, tokens: list[ArgToken]) -> None:
    """Record every flag of ``tokens`` as a setting of ``model`` (a later occurrence wins)."""
    for flag_token, spec_dest, value_token, written, negative in walk_tokens(model, tokens):
        dest = spec_dest or _dest_of(written)
        name = canonical_name(model.engine, dest)
        if value_token is not None:
            text, location, value_comments = value_token.text, value_token.location, value_token.comments
        elif "=" in flag_token.text:
            text = flag_token.text.split("=", 1)[1]
            offset = len(flag_token.text) - len(text)
            loc = flag_token.location
            location = type(loc)(loc.path, loc.line, loc.column + offset, loc.line, loc.column + len(flag_token.text))
            value_comments = ()
        else:
            text, location, value_comments = None, flag_token.location, ()
        value: object = (not negative) if text is None else convert(name, text, model.engine)
        comments = tuple(dict.fromkeys(flag_token.comments + value_comments))
        model.add(Setting(name, value, location, written, comments, flag_token.location, text, flag_token.origin))
