"""Flags a sequence limit pinned below the engine default without a stated reason.

## What it flags
`max_num_seqs` (vLLM `--max-num-seqs`, SGLang `--max-running-requests`, LLMKube `parallelSlots`) set below
what the engine would use by default (vLLM: 256, or 1024 on GPUs with at least 70 GiB that are not
A100s; SGLang: derived from the pool, at least 2048 unless the pool is tiny; TokenSpeed: 160, or 80 with a
speculative algorithm), with no comment on or
directly above the setting that says why, none elsewhere in the file that names the value and what it
limits in words (a header block that explains each flag: "Max concurrent requests: 16 at once"), and none
heading the argument list, command or container the flag is written in that states a constraint in a clause
("Reduced parameters for 16GB VRAM to avoid KV cache issues" above `args:`; a heading that only names the
list, "vLLM server arguments", is no reason).

Not where memory sizes the window: an engine given a slice of a shared GPU (a memory fraction written
at 0.5 or below: several engines split the GPU, and a small window is the point), or a window above what
the estimated KV pool holds at full length but within the margin that keeps CFG203 quiet (too large, not
too small; further above, CFG203 speaks and this finding folds into it).

Not on AWS Neuron or Google TPU deployments: there the engine compiles one graph per batch and sequence
bucket ahead of serving, so a small `--max-num-seqs` is the compiled batch size, pinned by design (vLLM
on Neuron requires it to equal the batch size the model was compiled for:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/libraries/nxd-inference/developer_guides/vllm-user-guide.html;
vLLM on TPU precompiles every batch bucket up to it:
https://docs.vllm.ai/en/latest/getting_started/installation/google_tpu.html). The accelerator is read
from the device resource (`aws.amazon.com/neuron*`, `google.com/tpu`), the node labels or the image.

## Why it matters
A small window is a strong decision: bursts queue in front of it, time-to-first-token grows with the
queue, and in prefill/decode disaggregation the queued requests hit bootstrap timeouts. When the reason
is written down, the next person can tell a deliberate limit (a measured knee, a shared GPU, a mamba
cache limit) from a leftover of a debugging session; without it, nobody dares to change it, or
somebody removes it blindly.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen3-8b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: qwen3-8b
  template:
    metadata:
      labels:
        app: qwen3-8b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args:
            - --max-model-len
            - "32768"
            - --max-num-seqs
            - "4"
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: qwen3-8b
spec:
  replicas: 1
  selector:
    matchLabels:
      app: qwen3-8b
  template:
    metadata:
      labels:
        app: qwen3-8b
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args:
            - --max-model-len
            - "32768"
            # Measured knee of the P0 sweep: TTFT p95 stays under the 1 s SLO up to 4 streams.
            - --max-num-seqs
            - "4"
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

import re

from cfgcheck.api import (DERIVED, ESTIMATE_MARGIN, MEMORY_FRACTION, WRITTEN, Finding, LazyPattern, Option,
                          RuleContext, ServedModel, accelerator_kind, concurrency_at, derived)

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE = "CFG205"
NAME = "unexplained-seq-pin"
SEVERITY = "warning"
OPTIONS = {
    "min-reason-words": Option(int, 2,
        "how many words (not counting flag names, setting names and numbers) a comment needs to "
        "count as a reason."),
}

# Accelerators whose engines compile fixed batch buckets ahead of serving (see the docstring).
COMPILED_BUCKETS = ("neuron", "tpu")

_NOT_WORDS = {
    "max", "num", "seqs", "maxnumseqs", "parallelslots", "parallel", "slots", "running", "requests",
    "maxrunningrequests", "todo", "fixme", "xxx", "yaml", "true", "false",
}


# Run on comments a pull request writes: linear in time (no two adjacent quantifiers match the same
# whitespace; a search starts a key only where no key character precedes it).
_DIRECTIVE = LazyPattern(r"cfgcheck\s*:")
_FLAG = LazyPattern(r"-{1,2}[A-Za-z][\w.-]*(=\S*)?")
_KEY_VALUE_LINE = LazyPattern(r"^\s*(?:-\s*)?[\w.]+\s*:\s*\S+\s*$")
_KEY_VALUE = LazyPattern(r"(?<![\w.])[\w.]+\s*[:=]\s*\S+")
_WORD = LazyPattern(r"[A-Za-z][A-Za-z'-]*")


def reason_words(comments, enough: int | None = None) -> int:
    """Words of explanation in the comments: flags, settings, numbers and directives do not count. With
    ``enough``, counting stops once it is reached (a file of thousands of comments is not read whole)."""
    count = 0
    for text in comments or ():
        if enough is not None and count >= enough:
            break
        if _DIRECTIVE.match(text.lstrip()):
            continue
        text = _FLAG.sub(" ", text)  # --flags
        text = _KEY_VALUE.sub(" ", text) if _KEY_VALUE_LINE.match(text) else text
        for word in _WORD.findall(text):
            if word.lower().replace("-", "").replace("_", "") not in _NOT_WORDS and len(word) > 1:
                count += 1
    return count


# what a sequence limit limits, in the words of a comment that explains it away from the flag
_LIMIT_WORDS = LazyPattern(r"concurren|request|sequence|seqs|batch|slot", re.I)
# Pieces of those words, one of which a match leaves in the lower-cased text: a test of the lowered text a
# tenth of the cost of the case-blind search (most comments name no limit). ``s`` is left out: under
# IGNORECASE the long s (U+017F) matches it, and lowering keeps it.
_LIMIT_PIECES = ("concurren", "eq", "batch", "lot")
_NUMBER = LazyPattern(r"(?<![\d.])\d+(?![\d.])")  # a number as a value is written: not part of 1.5 or 16


def _may_name_limit(text: str) -> bool:
    low = text.lower()
    for piece in _LIMIT_PIECES:  # a loop, not any() over a generator: asked of every comment of the run
        if piece in low:
            return True
    return False


def _stated_elsewhere(model, value: int) -> list[str]:
    """Comments of the document that state this limit away from the setting (a header that explains each
    flag: "Max concurrent requests: 16 at once, 175 MB of KV cache each"): they name the value and what it
    limits in words, not in a flag (a commented-out command is no reason)."""
    return derived(getattr(model, "comments", None), "limits-by-number", _limits_by_number).get(str(value), [])


def _limits_by_number(comments) -> dict[str, list[str]]:
    """The comments that say what a sequence limit limits, by each number they name outside a flag: read
    once for every served model sharing them (``model.Comments``)."""
    found: dict[str, list[str]] = {}
    for _, text in comments:
        # most comments name no limit: the search on the whole text goes first (dropping flags only
        # puts a space where one was, so it can make no word that was not there)
        if not (_may_name_limit(text) and _LIMIT_WORDS.search(text)):
            continue
        words = _FLAG.sub(" ", text)
        if _LIMIT_WORDS.search(words):
            for number in dict.fromkeys(_NUMBER.findall(words)):
                found.setdefault(number, []).append(text)
    return found


# the origins of argv words written in a container's or service's own argv (engines/argv.py keeps the
# token's origin on the setting): the flags a heading of that argv speaks for
_HEADED_ORIGINS = ("args", "command", "entrypoint", "shell")
# what a heading of the whole argument list says when it explains why its limits are small: the memory or
# the constraint that sizes them
_CONSTRAINT = LazyPattern(r"vram|memory|\bmem\b|\d\s*[gm]i?b\b|\bkv\b|cache|\boom\b|\bfits?\b|reduc|lower|"
                          r"smaller|avoid|because|due to|so that|latency|throughput|\bslo\b", re.I)
# a heading names its list in a word or two ("Server arguments"); a reason takes a clause
HEADING_WORDS = 4
_NAMED_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")  # a flag a comment line is about (not low-concurrency)


def _headed_reason(model: ServedModel, setting, enough: int) -> bool:
    """The comment blocks heading the argv the flag is written in (its container's or service's entry,
    its ``args:`` or ``command:``) give its reason: a line that names the flag and says why, or a line that
    names no flag and states a constraint in a clause (the reason for every limit of the list). A line that
    explains another flag (``--gpu-memory-utilization: lowered after the OOM``) is not about this one."""
    if setting.origin not in _HEADED_ORIGINS or not model.launch_comments:
        return False
    own, general = [], []
    for text in model.launch_comments:
        named = {flag.lower() for flag in _NAMED_FLAG.findall(text)}
        if setting.source.lower() in named:
            own.append(text)
        elif not named and _CONSTRAINT.search(text):
            general.append(text)
    words = max(enough, HEADING_WORDS)
    return reason_words(own, enough) >= enough or bool(general) and reason_words(general, words) >= words


def _engine_default(model: ServedModel, ctx: RuleContext) -> tuple[int | None, str]:
    """The sequence window the engine would use unset (its effective default), and how to name it."""
    default = ctx.facts(model).default("max_num_seqs")
    if default.source == DERIVED:
        return default.value, f"{default.who}'s derived default"
    if default.value is None:  # on a GPU not known: the bound that holds on every GPU
        return default.at_least, f"{default.who}'s default on any GPU" if default.at_least is not None else ""
    return default.value, f"{default.who}'s default" + (f" on {default.gpu}" if default.gpu else "")


# a memory fraction written at or below this gives the engine a slice of its GPU: the rest is another
# engine's (several engines splitting one GPU), and the window is sized to the slice by design
SHARED_FRACTION = 0.5


def _sized_by_memory(model: ServedModel, ctx: RuleContext, value: int) -> bool:
    """The window follows from memory, not from a pin: the engine runs on a slice of a shared GPU, or
    the estimated pool holds fewer full-length requests than the window, within the margin that keeps
    CFG203 quiet (a window too large, not too small; above the margin CFG203 speaks and the precedence
    step folds this finding into it)."""
    fraction = ctx.effective(model, MEMORY_FRACTION)
    if fraction.source == WRITTEN and isinstance(fraction.value, float) and fraction.value <= SHARED_FRACTION:
        return True
    est = ctx.capacity(model)
    if not est.max_model_len or est.kv_pool_source != "estimated":
        return False
    conc = concurrency_at(est, est.max_model_len)
    margin = float(ctx.option_of("CFG203", "estimate-margin", ESTIMATE_MARGIN))
    return conc is not None and conc < value <= conc * (1 + margin)


def check(model: ServedModel, ctx: RuleContext) -> Iterator[Finding]:
    options = ctx.options
    setting = model.setting("max_num_seqs") or model.setting("max_running_requests")
    if setting is None:
        return
    if any(s is setting for s, _ in getattr(model, "inert", []) or []):
        return
    try:
        value = int(setting.value)
    except (TypeError, ValueError):
        return
    if accelerator_kind(model) in COMPILED_BUCKETS:
        return  # the compiled batch size: the engine needs it pinned (see the docstring)
    default, what = _engine_default(model, ctx)
    if default is None or value >= default or _sized_by_memory(model, ctx, value):
        return
    comments = list(setting.comments) + _stated_elsewhere(model, value)
    for other in model.occurrences.get(setting.name, []) if getattr(model, "occurrences", None) else []:
        if other is not setting:
            comments.extend(other.comments)
    enough = int(options["min-reason-words"])
    if reason_words(comments, enough) >= enough or _headed_reason(model, setting, enough):
        return
    yield Finding(
        message=f"{setting.source} {value} is pinned below {what} ({default}) with no stated reason",
        location=setting.location,
        remediation=(
            "write the reason in a comment on or above the setting (the measurement or constraint that sets it), "
            "or remove the pin and let the engine's default and the KV pool decide"
        ),
        setting="max_num_seqs",
        model=model.name,
    )
