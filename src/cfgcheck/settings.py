"""The vocabulary of settings: each canonical setting cfgcheck reasons about, declared once.

A setting has a type, the argparse destinations that spell it per engine, and a one-line doc. Every
table that maps flags or types to settings (``engines.argv``, ``propose``, ``changes``) is a lookup in
``SETTINGS``; the values of every type are parsed here, by the engine's own converter. The typed fields
an operator turns into a setting's flag are declared with the operator's adapter (``OPERATOR_FIELDS`` in
``adapters/formats/``), each naming the canonical setting here.
"""

from __future__ import annotations

import math
import re

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

# Setting types. "size" is an integer the engine reads with its human-readable parser (only the
# options the engines' catalogs type as human-readable-int / si-iec-int); "int" is argparse's int().
INT, SIZE, FLOAT, STR, BOOL, JSON = "int", "size", "float", "str", "bool", "json"
# What a value counts, so that a reader never confuses a token count with a byte count or a fraction:
# the unit of each setting's effective value (``effective.Fact.unit``).
TOKENS, SEQUENCES, FRACTION, BYTES, RANKS, BLOCKS, COUNT = "tokens", "sequences", "fraction", "bytes", "ranks", "blocks", "count"
PORT, ADDRESS, SWITCH, TEXT = "port", "address", "switch", "text"
_UNIT_OF_TYPE = {INT: COUNT, SIZE: COUNT, FLOAT: FRACTION, STR: TEXT, BOOL: SWITCH, JSON: TEXT}


class SettingDef:
    """One canonical setting."""

    def __init__(self, name: str, type: str, doc: str, dests: dict[str, tuple[str, ...]] | None = None,
                 key: bool = False, common: bool = False, unit: str = "") -> None:
        self.name = name
        self.type = type
        self.doc = doc
        self.dests = {} if dests is None else dests  # engine -> argparse dests (first: the flag)
        self.key = key  # shown before/after in pull-request change summaries
        self.common = common  # offered by ``propose`` for a served model of an unknown engine
        self.unit = unit  # what the value counts (TOKENS, BYTES ...); "" takes the type's (_UNIT_OF_TYPE)
        self.__post_init__()

    def __post_init__(self) -> None:
        self.unit = self.unit or _UNIT_OF_TYPE[self.type]


def _on(vllm: tuple[str, ...] = (), sglang: tuple[str, ...] = (), llama: tuple[str, ...] = (),
        tokenspeed: tuple[str, ...] | None = None) -> dict[str, tuple[str, ...]]:
    """Argparse destinations per engine. TokenSpeed's server spells most settings as vLLM does
    (its catalog: --max-model-len, --max-num-seqs, --tensor-parallel-size ...), so it defaults to vLLM's."""
    dests = {"vllm": vllm, "sglang": sglang, "tokenspeed": vllm if tokenspeed is None else tokenspeed,
             "llama.cpp": llama}
    return {engine: names for engine, names in dests.items() if names}


SETTINGS: tuple[SettingDef, ...] = (
    SettingDef("max_model_len", SIZE, "longest request (prompt + output) in tokens",
               _on(("max_model_len",), ("context_length",), ("ctx_size", "c")), key=True, common=True, unit=TOKENS),
    SettingDef("max_num_seqs", INT, "most requests scheduled at once",
               _on(("max_num_seqs",), ("max_running_requests",), ("parallel", "np")), key=True, common=True, unit=SEQUENCES),
    SettingDef("gpu_memory_utilization", FLOAT, "vLLM's fraction of GPU memory for weights, activations and KV cache",
               _on(("gpu_memory_utilization",)), key=True, common=True),
    SettingDef("mem_fraction_static", FLOAT, "SGLang's fraction of GPU memory for weights and KV pool",
               _on(sglang=("mem_fraction_static",)), key=True, common=True),
    SettingDef("kv_cache_memory_bytes", SIZE, "vLLM's KV cache size per GPU, overriding gpu_memory_utilization",
               _on(("kv_cache_memory_bytes",), tokenspeed=()), key=True, common=True, unit=BYTES),
    SettingDef("tensor_parallel_size", INT, "GPUs each layer is split across",
               _on(("tensor_parallel_size",), ("tp_size",)), key=True, common=True, unit=RANKS),
    SettingDef("kv_cache_dtype", STR, "data type of the KV cache (auto, fp8 ...)",
               _on(("kv_cache_dtype",), ("kv_cache_dtype",)), key=True, common=True),
    SettingDef("max_num_batched_tokens", SIZE, "vLLM's token budget of one scheduler step",
               _on(("max_num_batched_tokens",), tokenspeed=()), common=True, unit=TOKENS),
    SettingDef("model", STR, "the model served: a Hugging Face repository or a path",
               _on(("model",), ("model_path",), ("model", "hf_repo", "m", "hf", "hfr"))),
    SettingDef("model_revision", STR, "the model repository's revision (commit, branch or tag)",
               _on(("revision",), ("revision",))),
    SettingDef("pipeline_parallel_size", INT, "pipeline stages the layers are split into",
               _on(("pipeline_parallel_size",), ("pp_size",)), unit=RANKS),
    SettingDef("data_parallel_size", INT, "engine replicas behind one server",
               _on(("data_parallel_size",), ("dp_size",)), unit=RANKS),
    SettingDef("data_parallel_size_local", INT, "data-parallel replicas on this node",
               _on(("data_parallel_size_local",), tokenspeed=()), unit=RANKS),
    SettingDef("expert_parallel_size", INT, "SGLang's expert-parallel group size",
               _on(sglang=("ep_size",), tokenspeed=("expert_parallel_size",)), unit=RANKS),
    SettingDef("enable_expert_parallel", BOOL, "vLLM spreads MoE experts over the TP x DP GPUs",
               _on(("enable_expert_parallel",))),
    SettingDef("dtype", STR, "data type of weights and activations",
               _on(("dtype",), ("dtype",))),
    SettingDef("quantization", STR, "weight quantization method",
               _on(("quantization",), ("quantization",))),
    SettingDef("block_size", INT, "tokens per KV cache block (SGLang: page size)",
               _on(("block_size",), ("page_size",)), unit=TOKENS),
    SettingDef("num_gpu_blocks_override", INT, "vLLM's KV block count, replacing the profiled one",
               _on(("num_gpu_blocks_override",), tokenspeed=()), unit=BLOCKS),
    SettingDef("chunked_prefill_size", INT, "SGLang's most prompt tokens prefilled per chunk",
               _on(sglang=("chunked_prefill_size",), tokenspeed=("chunked_prefill_size",)), unit=TOKENS),
    SettingDef("max_total_tokens", SIZE, "SGLang's KV pool size in tokens",
               _on(sglang=("max_total_tokens",), tokenspeed=("max_total_tokens",)), unit=TOKENS),
    SettingDef("enable_prefix_caching", BOOL, "reuse the KV cache of shared prompt prefixes",
               _on(("enable_prefix_caching",))),
    SettingDef("enable_chunked_prefill", BOOL, "split long prompts over several scheduler steps",
               _on(("enable_chunked_prefill",), tokenspeed=())),
    SettingDef("enable_lora", BOOL, "serve LoRA adapters", _on(("enable_lora",), tokenspeed=())),
    SettingDef("max_loras", INT, "LoRA adapters in one batch", _on(("max_loras",), tokenspeed=())),
    SettingDef("enforce_eager", BOOL, "vLLM runs without CUDA graphs", _on(("enforce_eager",))),
    SettingDef("served_model_name", STR, "the name clients ask for",
               _on(("served_model_name",), ("served_model_name",), ("a", "alias"))),
    SettingDef("api_key", STR, "the key clients must send", _on(("api_key",), ("api_key",), ("api_key",))),
    SettingDef("hf_overrides", JSON, "overrides of the model's config.json",
               _on(("hf_overrides",), ("json_model_override_args",))),
    SettingDef("rope_scaling", JSON, "RoPE scaling of the model's config.json", _on(("rope_scaling",), tokenspeed=())),
    SettingDef("gpu_layers", INT, "llama.cpp's layers offloaded to the GPU",
               _on(llama=("n_gpu_layers", "ngl", "gpu_layers"))),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}
INT_SETTINGS = frozenset(s.name for s in SETTINGS if s.type in (INT, SIZE))
FLOAT_SETTINGS = frozenset(s.name for s in SETTINGS if s.type == FLOAT)
BOOL_SETTINGS = frozenset(s.name for s in SETTINGS if s.type == BOOL)
KEY_SETTINGS = tuple(s.name for s in SETTINGS if s.key)
COMMON_SETTINGS = tuple(s.name for s in SETTINGS if s.common)
ENGINES = ("vllm", "sglang", "tokenspeed", "llama.cpp")


def dests(engine: str) -> dict[str, str]:
    """Argparse destination -> canonical setting, for the settings ``engine`` has."""
    return {dest: s.name for s in SETTINGS for dest in s.dests.get(engine, ())}


DESTS = {engine: dests(engine) for engine in ENGINES}


def canonical_name(engine: str, dest: str) -> str:
    """The setting an argparse destination of ``engine`` means (the destination itself when unknown)."""
    return DESTS.get(engine, {}).get(dest, dest)


def flag(engine: str, name: str) -> str | None:
    """The long flag ``engine`` spells setting ``name`` with, or None when it has none."""
    setting = BY_NAME.get(name)
    longs = [dest for dest in setting.dests.get(engine, ()) if len(dest) > 2] if setting is not None else []
    return "--" + longs[0].replace("_", "-") if longs else None


# ---------------------------------------------------------------- values

class SizeSyntax:
    """An engine's human-readable int: suffixes that scale decimals, suffixes that take integers only."""

    def __init__(self, pattern: str, decimal: dict[str, int], binary: dict[str, int], scale: Callable[[str, int], int],
                 not_an_int: str, binary_decimals: str) -> None:
        self.pattern = pattern  # compiled by re (and cached there) on first use: most runs read one engine's sizes
        self.decimal = decimal
        self.binary = binary
        self.scale = scale  # number text x multiplier, as the engine computes it
        self.not_an_int = not_an_int  # why a text that matches no suffix is refused
        self.binary_decimals = binary_decimals  # why ``1.5G`` is refused (format keys: number, suffix, lower)

    def parse(self, text: str) -> int:
        """The integer ``text`` means, or ValueError with the reason the engine refuses it."""
        value = text.strip()
        match = re.fullmatch(self.pattern, value)
        if match is None:
            return _argparse_int(value, self.not_an_int)
        number, suffix = match.groups()
        if suffix in self.decimal:
            try:
                return self.scale(number, self.decimal[suffix])
            except OverflowError:
                raise ValueError("is too large") from None
        if "." in number:
            raise ValueError(self.binary_decimals.format(number=number, suffix=suffix, lower=suffix.lower()))
        return _argparse_int(number, "is too large") * self.binary[suffix]


def _argparse_int(text: str, reason: str) -> int:
    try:
        return int(text)
    except ValueError:  # also more digits than Python converts (sys.get_int_max_str_digits)
        raise ValueError(reason) from None


# vLLM's human_readable_int (vllm/engine/arg_utils.py; vllm/utils/argparse_utils.py from 0.11):
# lower-case suffixes are decimal and take decimals (1.5g), upper-case are binary and do not.
VLLM_SIZE = SizeSyntax(
    r"(\d+(?:\.\d+)?)([kKmMgGtT])",
    {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}, {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40},
    lambda number, multiplier: int(float(number) * multiplier),
    "expects an integer (human-readable suffixes like 32k or 32K allowed)",
    "decimals are not allowed with binary suffix {suffix} (use {number}{lower})")


def _decimal_scale(number: str, multiplier: int) -> int:
    """SGLang's ``int(Decimal(number) * multiplier)``, importing decimal only when an SI-suffixed SGLang
    size is read; decimal's InvalidOperation is reported as too large, as an overflow is."""
    from decimal import Decimal, InvalidOperation

    try:
        return int(Decimal(number) * multiplier)
    except InvalidOperation:
        raise OverflowError(number) from None


# SGLang's human_readable_int (python/sglang/srt/utils/common.py): SI k M G T (decimals allowed)
# and IEC Ki Mi Gi Ti (integers only), case-sensitive.
SGLANG_SIZE = SizeSyntax(
    r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)",
    {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}, {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40},
    _decimal_scale,
    "expects an integer (SI suffixes 1k/1M or IEC 1Ki/1Mi allowed, case-sensitive)",
    "decimals are not allowed with IEC suffix {suffix}")
vllm_size, sglang_size = VLLM_SIZE.parse, SGLANG_SIZE.parse


# The size parser of each engine (the catalogs type these options human-readable-int / si-iec-int;
# TokenSpeed's and llama.cpp's are plain ints).
_SIZE_PARSERS: dict[str, Callable[[str], int]] = {"vllm": vllm_size, "sglang": sglang_size}


# ---------------------------------------------------------------- numbers as the rules and capacity read them
#
# A value reaches cfgcheck parsed by the engine's converter (``parse`` above, for argv), typed by YAML
# (an operator's field), or as text still holding a variable. These read a number out of any of them,
# None (or ``default``) when there is none: one definition for every reader.


def as_int(value: object, default: int | None = None) -> int | None:
    """A whole number as written: an int, an integral float, or digits (``" 8 "``); else ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        try:
            return int(value.strip())
        except ValueError:  # "²" is a digit to isdigit(), and Python refuses ints of over 4,300 digits
            return default
    return default


def scaled_pods(setting: object, replicas: int, default: str, round_up: bool) -> int | None:
    """A Deployment's ``maxSurge`` / ``maxUnavailable`` (a ``Setting`` or None for ``default``) as a number of
    pods: a count, or a percentage of the replicas rounded up (surge) or down (unavailable) as Kubernetes
    does (k8s.io/apimachinery intstr.GetScaledValueFromIntOrPercent); None when it is neither."""
    text = str(setting.value).strip() if setting is not None else default  # type: ignore[attr-defined]
    if text.endswith("%"):
        try:
            share = replicas * float(text[:-1]) / 100
        except ValueError:
            return None
        return math.ceil(share) if round_up else math.floor(share)
    return as_int(text)


def int_value(value: object) -> int | None:
    """A number truncated to an int as Helm's ``int`` does (``0.5`` -> 0, ``"2"`` -> 2); None for text, a
    boolean, infinity or NaN."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(float(value))  # type: ignore[arg-type]  # anything else is refused below
    except (TypeError, ValueError, OverflowError):
        return None


def float_value(value: object) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)  # type: ignore[arg-type]  # anything else is refused below
    except (TypeError, ValueError):
        return None


def truthy(value: object) -> bool | None:
    """A switch as written: a boolean, or 1/true/yes/on (a valueless flag is ``""``); None when unset."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("1", "true", "yes", "on", "")


def human_int(value: object) -> int | None:
    """vLLM's human-readable int (``4G`` = 4 GiB, ``4g`` = 4e9, ``32k`` = 32000, plain digits) of a text,
    an int as it is, a float truncated; None when vLLM refuses it."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int_value(value)
    try:
        return vllm_size(str(value))
    except ValueError:
        return None


def parse(name: str, text: str, engine: str) -> object:
    """The value setting ``name`` takes from ``text`` on ``engine``, or the text when it does not convert."""
    setting = BY_NAME.get(name)
    kind = setting.type if setting is not None else STR
    parse_size = _SIZE_PARSERS.get(engine) if kind == SIZE else None
    try:
        if parse_size is not None:
            return parse_size(text)
        if kind in (INT, SIZE):  # argparse's int()
            return int(text.strip())
        if kind == FLOAT:
            return float(text)
    except ValueError:  # the engine refuses it: the text stays, and CFG rules on values say why
        return text
    return text


# The engine's own flags cfgcheck reads beside the vocabulary (argv settings named by their destination).
_OTHER_UNITS = {"port": PORT, "host": ADDRESS}


def unit_of(name: str) -> str:
    """What setting ``name``'s value counts."""
    setting = BY_NAME.get(name)
    return setting.unit if setting is not None else _OTHER_UNITS.get(name, TEXT)


def typed(name: str, value: object) -> object:
    """The value of setting ``name`` in its unit (a float fraction, an int count of tokens, bytes or
    ranks, a switch, an address), or None when what is written is no such value (a variable, a typo)."""
    unit = unit_of(name)
    if unit == FRACTION:
        return float_value(value)
    if unit == SWITCH:
        return truthy(value)
    if unit == TEXT:  # a text, a list or a JSON object, as the engine's parser left it
        return value
    if unit == ADDRESS:
        return None if value is None else str(value)
    setting = BY_NAME.get(name)
    return human_int(value) if setting is not None and setting.type == SIZE else int_value(value)
