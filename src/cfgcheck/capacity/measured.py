"""Measured KV pools: a ``# cfgcheck: kv-pool-tokens=N`` directive, or a comment quoting the engine's
startup log (``GPU KV cache size: N tokens``, SGLang's ``max_total_num_tokens=N``)."""

from __future__ import annotations

import re

from .. import lazy
from ..model import derived
from ..settings import int_value

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterable


# Comments come from pull requests: the patterns run on whole comments are linear in time. A number
# starts only where no digit (or digit and separator) precedes it, so a search never retries inside a
# run of digits; a count of more than _MAX_COUNT_DIGITS digits is not a token count (and would reach
# Python's int-string conversion limit).
_NUM = r"(?<!\d)(?<!\d[,_])(\d{1,3}(?:[,_ ]\d{3})+|\d{4,})(?!\d)( ?[kK](?![a-zA-Z]))?"
_NUM_RE = re.compile(_NUM)
_MAX_COUNT_DIGITS = 15
_ARROW = lazy.Pattern(_NUM + r"\s*(?:tokens?\s*)?(?:->|→|=>|to)\s*" + _NUM)
_DIRECTIVE_WORD = re.compile(r"cfgcheck\s*:")
_POOL_KEYWORD = re.compile(
    r"\bpool\b|kv[ _-]?cache size|kv[- ]pool|gpu kv cache|max_total_num_tokens|#tokens|kv[- ]cache (?:holds|of|is|:)", re.I
)
_AFTER_EXCLUDE = lazy.Pattern(r"^\s*(?:tokens? per request|[-]?token (?:context|window|prompt|request)|max|ctx|context|gib|gb|mib|mb|bytes|b\b|%|x\b|tok/s|ms|s\b|req)", re.I)
# Run on the 40 characters before a number. The run of non-word characters between the word and the
# number (": ", " = ", " -> ") is bounded, so a search costs a few steps per position whatever it is given.
_BEFORE_EXCLUDE = lazy.Pattern(r"(max[-_ ]?model[-_ ]?len|maxmodellen|context(?:[-_ ]?len(?:gth)?)?|ctx|prompts?|at|for|l ?=|cap|window|parallel|slots|requests?)\W{0,10}$", re.I)
_BEFORE_PREFER = lazy.Pattern(r"(gives|now|is|are|measured|reports?|logged|holds|:|=|->|→|to|of)\W{0,10}$", re.I)
_BEFORE_AVOID = lazy.Pattern(r"(was|from|leaves?|without|before|old|previously|instead of)\b[^,;]{0,25}$", re.I)
_HYPOTHETICAL = lazy.Pattern(r"\b(but|oom|ooms|would|if|fails?|crash)", re.I)


def _parse_count(num: str, k: str | None) -> int | None:
    digits = num.replace(",", "").replace("_", "").replace(" ", "")
    if len(digits) > _MAX_COUNT_DIGITS:
        return None
    value = int(digits)
    if k:
        value *= 1000 if k.strip() == "k" else 1024
    return value


def _may_name_pool(text: str) -> bool:
    """A cheap test before ``_POOL_KEYWORD`` (most comments name no pool): a match leaves one of these in the
    lower-cased text. Only ``i``, ``k`` and ``s`` have other letters that match them ignoring case (İ, ı, the
    Kelvin sign, ſ), so the words stop before an ``s`` and hold no ``i``."""
    low = text.lower()
    return "pool" in low or "kv" in low or "max_total_num_token" in low or "#token" in low


def _names_pool(text: str) -> bool:
    return _may_name_pool(text) and _POOL_KEYWORD.search(text) is not None


def _pool_numbers_in(text: str, exclude: Iterable[int] = ()) -> int | None:
    """The pool size a comment line states, or None."""
    if not _names_pool(text):
        return None
    excluded = {x for x in (int_value(v) for v in exclude) if x}
    candidates: list[tuple[int, int, int]] = []  # (score, position, value)
    for m in _NUM_RE.finditer(text):
        value = _parse_count(m.group(1), m.group(2))
        if value is None or value < 256 or value in excluded:
            continue
        before = text[max(0, m.start() - 40): m.start()]
        after = text[m.end(): m.end() + 20]
        tokens_after = re.match(r"^\s*[- ]?tokens?\b", after, re.I)
        if not tokens_after and _AFTER_EXCLUDE.match(after):
            continue
        if not tokens_after and _BEFORE_EXCLUDE.search(before):
            continue
        if re.match(r"^\s*[-]?token (context|window|prompt|request)", after, re.I):
            continue
        if re.match(r"^[-/]\d{1,2}\b", after) or re.search(r"(\d[-/.]|\bv)$", before):
            continue  # a date or a version, not a token count
        near_pool = bool(_POOL_KEYWORD.search(text[max(0, m.start() - 60): m.end() + 30]))
        if not (tokens_after or (near_pool and _BEFORE_PREFER.search(before))):
            continue
        score = 1
        if tokens_after:
            score += 1
        if _BEFORE_PREFER.search(before):
            score += 1
        if _BEFORE_AVOID.search(before):
            score -= 3
        candidates.append((score, m.start(), value))
    if not candidates:
        return None
    arrow = _ARROW.search(text)
    if arrow:
        left = _parse_count(arrow.group(1), arrow.group(2))
        right = _parse_count(arrow.group(3), arrow.group(4))
        return (left if _HYPOTHETICAL.search(text) else right) or None
    best = max(candidates, key=lambda c: (c[0], c[1]))
    return best[2]


def _pool_comments(comments) -> tuple[tuple[int, str], ...]:
    """The comments that may state a pool (a pool keyword, no directive): found once for every served
    model sharing them (``model.Comments``), so each model reads only these."""
    return tuple((line, text) for line, text in comments
                 if _names_pool(text) and not ("cfgcheck" in text and _DIRECTIVE_WORD.search(text)))


def find_measured_pool(model: Any) -> tuple[int | None, str | None]:
    """A documented pool size: ``# cfgcheck: kv-pool-tokens=N`` or a comment quoting the startup log."""
    d = model.directive("kv-pool-tokens") if hasattr(model, "directive") else None
    if d is not None:
        m = _NUM_RE.match(str(d.value).lstrip())
        count = _parse_count(m.group(1), m.group(2)) if m else None
        if count is not None:
            loc = d.location
            return count, f"directive kv-pool-tokens at {loc.path}:{loc.line}"
    exclude = [model.value("max_model_len"), model.value("max_num_batched_tokens")]
    # comments attached to the settings that size the pool first, then every comment of the document
    for name in ("kv_cache_memory_bytes", "num_gpu_blocks_override", "gpu_memory_utilization", "mem_fraction_static", "max_num_seqs", "max_model_len"):
        setting = model.setting(name)
        if setting is None:
            continue
        for text in setting.comments:
            value = _pool_numbers_in(text, exclude)
            if value:
                return value, f"comment on {setting.source} at {setting.location.path}:{setting.location.line}"
    for line, text in derived(getattr(model, "comments", None), "pool-comments", _pool_comments):
        value = _pool_numbers_in(text, exclude)
        if value:
            return value, f"comment at {model.path}:{line}"
    return None, None

