"""What a change-advisory board reads in a proposal's ADR and PR body besides the change itself: how
to roll it back (the previous values, the revert command, how long recovery takes) and how to tell that
it worked (success criteria: a metric, a threshold, when it is measured), and the release notes of the
engine versions an upgrade crosses. Values are raw; the templates escape them.

The criteria come from the proposal's capacity arithmetic and from its stated reason (``--why``); the
log lines and metrics they name are the engines' own:

* vLLM start-up: ``Maximum concurrency for {max_model_len:,} tokens per request: {x:.2f}x``
  (vllm/v1/core/kv_cache_utils.py, get_kv_cache_configs); SGLang start-up: ``max_total_num_tokens=N,
  …, context_len=L`` (python/sglang/srt/managers/scheduler.py);
* vLLM Prometheus metrics ``vllm:num_preemptions``, ``vllm:num_requests_waiting``,
  ``vllm:time_to_first_token_seconds`` (vLLM docs, design/metrics.md, "v1 Metrics");
* SGLang's warning ``KV cache pool is full. Retract requests.`` and the ``#queue-req`` of its batch log
  lines (SGLang docs, advanced_features/hyperparameter_tuning.md);
* vLLM's refusal of a prompt over the window, HTTP 400 ``This model's maximum context length is N
  tokens`` (vllm/entrypoints/openai/serving_engine.py).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..engines.versions import DISPLAY, known_versions, version_key
from .rollout import Rollout
from .tables import grouped

# Where each engine publishes its release notes, one page per release tag.
RELEASES = {"vllm": "https://github.com/vllm-project/vllm", "sglang": "https://github.com/sgl-project/sglang"}
MAX_REVERT_SETS = 8  # a propose command with more --set options is not one a person types
FIRST_START = "first start after the rollout"
FIRST_HOUR = "first hour after the rollout, at normal load"

# Words of a proposal's reason and the measurement that shows whether the change achieved it.
_REASONS = (
    (re.compile(r"queu|waiting|admission", re.I), "requests waiting at the same load (vLLM "
     "`vllm:num_requests_waiting`; SGLang `#queue-req` in its batch log lines)", "lower than before the change"),
    (re.compile(r"ttft|latency|first token|slo", re.I), "p95 time to first token at the same load (vLLM "
     "`vllm:time_to_first_token_seconds`; the same benchmark)", "no higher than before the change"),
    (re.compile(r"throughput|goodput|tok(?:en)?s?/s|qps|req(?:uest)?s?/s", re.I),
     "output tokens/s at the same levels (the same benchmark script, levels and output tokens)",
     "higher than before the change"),
    (re.compile(r"\boom|out of memory", re.I), "container restarts for OOM (`OOMKilled`)", "none"),
    (re.compile(r"timeout|timed out", re.I), "request and bootstrap timeouts", "none"),
)


def release_notes(changes: list) -> list[dict]:
    """Per engine version move among ``changes`` (``ModelChange.upgrade``): the releases it crosses,
    each with its release-notes link, and a comparison link where the engine is on GitHub."""
    moves = {(c.upgrade.engine, c.upgrade.old, c.upgrade.new) for c in changes if getattr(c, "upgrade", None)}
    notes = []
    for engine, old, new in sorted(moves, key=lambda m: (m[0], version_key(m[1]), version_key(m[2]))):
        low, high = sorted((old, new), key=version_key)
        crossed = [v for v in known_versions(engine) if version_key(low) < version_key(v) <= version_key(high)]
        if not crossed or version_key(crossed[-1]) != version_key(high):
            crossed.append(high.lstrip("vV"))
        repo = RELEASES.get(engine)
        link = (lambda v: f"{repo}/releases/tag/v{v}") if repo else (lambda v: f"https://pypi.org/project/{engine}/{v}/")
        notes.append({"engine": engine, "label": f"{DISPLAY.get(engine, engine)} {old} → {new}", "old": old, "new": new,
                      "releases": [{"version": v, "url": link(v)} for v in crossed],
                      "compare": f"{repo}/compare/v{old.lstrip('vV')}...v{new.lstrip('vV')}" if repo else None})
    return notes


def _revert_sets(models: list, renamed: bool) -> list[str] | None:
    """``--set`` options that restore every previous value, or None when some value was unset before
    (propose cannot remove a setting), a flag was renamed, or there are too many to type."""
    sets = [f"{m.name}.{r.setting}={r.before}" for m in models for r in m.rows]
    if renamed or not sets or len(sets) > MAX_REVERT_SETS or any(r.before == "(unset)" for m in models for r in m.rows):
        return None
    return sets


def rollback(models: list, rollouts: dict[str, Rollout], title: str, adr: dict | None,
             renames: dict[str, list[dict]]) -> dict:
    """The previous value of every changed setting (``docs.ModelDoc`` rows) and flag an upgrade renamed
    (grouped: one line per setting and value), the commands that revert the change, and the recovery
    of each served model the change restarts (``rollouts``, by identity)."""
    previous = grouped([((r.setting, r.before), m.name) for m in models for r in m.rows] +
                       [(("flag", r["from"]), m.name) for m in models for r in renames.get(m.identity, [])])
    commands = [{"command": "git revert <commit>", "what": f"the commit this pull request adds (subject: {title}); "
                 "for a merge commit, git revert -m 1 <merge commit>. The next sync or deploy applies it"}]
    sets = _revert_sets(models, bool(renames))
    if sets is not None:
        record = f"ADR {adr['number']}" if adr else "this change"
        command = ["cfgcheck", "propose"] + [part for s in sets for part in ("--set", s)] + \
            ["--title", f"Roll back {record}", "--why", f"The success criteria of {record} were not met"]
        commands.append({"command": shlex.join(command), "what": "a pull request that restores exactly the previous values"})
    recovery = grouped((r.recovery, r.name) for r in rollouts.values())
    return {"previous": [{"setting": key[0], "value": key[1], "models": names} for key, names in previous],
            "commands": commands, "recovery": [{"text": key, "models": names} for key, names in recovery]}


def _capacity(doc: Any, engine: str) -> tuple[str, str] | None:
    """The pool-limited concurrency the change promises, as the engine's start-up log states it."""
    if doc.concurrency_after is None or not doc.len_after:
        return None
    known = "" if doc.pool_source in ("measured", "explicit") else f" (from a pool {doc.pool_source}: record the logged value)"
    length = f"{doc.len_after:,}"
    if engine == "sglang" and doc.pool_tokens:
        return (f"KV pool in the start-up log line `max_total_num_tokens=N, …, context_len={doc.len_after}`",
                f"N ≥ {doc.pool_tokens:,}: {doc.concurrency_after:.2f}x full-length requests at {length} tokens{known}")
    if engine == "vllm":
        return (f"KV-pool concurrency in the start-up log line `Maximum concurrency for {length} tokens per request`",
                f"≥ {doc.concurrency_after:.2f}x at max_model_len {length}{known}")
    return (f"KV-pool concurrency at max_model_len {length} (pool ÷ max_model_len)", f"≥ {doc.concurrency_after:.2f}x{known}")


def _model_criteria(doc: Any, engine: str) -> list[tuple[str, str, str]]:
    found = []
    capacity = _capacity(doc, engine)
    raised = None not in (doc.seqs_before, doc.seqs_after) and doc.seqs_after > doc.seqs_before
    if capacity is not None and (raised or doc.len_after != doc.len_before):
        found.append((*capacity, FIRST_START))
    if raised:
        if engine == "sglang":
            found.append(("the warning `KV cache pool is full. Retract requests.` in the engine log", "none", FIRST_HOUR))
        else:
            found.append(("preempted requests (`vllm:num_preemptions`)", "no increase", FIRST_HOUR))
    if None not in (doc.len_before, doc.len_after) and doc.len_after < doc.len_before:
        refusal = f"HTTP 400 `This model's maximum context length is {doc.len_after} tokens`" if engine == "vllm" \
            else f"requests refused as longer than {doc.len_after:,} tokens"
        found.append((refusal, "none from a client that needs more (tell those clients first)", "first day after the rollout"))
    return found


def success_criteria(models: list, engines: dict[str, str], why: str, upgrade: bool, canary: str | None) -> list[dict]:
    """Metric, threshold and when to measure it: from the capacity arithmetic of each changed served
    model (``docs.ModelDoc``; ``engines``: identity -> engine), from an engine upgrade, and from the
    words of the proposal's reason. Criteria alike for several served models are one entry."""
    items: list[tuple[tuple, str]] = []
    for doc in models:
        items += [(criterion, doc.name) for criterion in _model_criteria(doc, engines.get(doc.identity, ""))]
    if upgrade:
        items += [(("pods of every moved served model Ready on the new version", "all, none restarting",
                    "within the start-up time of the rollout"), m.name) for m in models]
        items += [(("start-up errors in the engine log (`unrecognized arguments`, a removed flag)", "none",
                    FIRST_START), m.name) for m in models]
        if canary is not None:
            items.append((("p95 time to first token and output tokens/s on the canary (the same benchmark as before)",
                           "no worse than the last run before the upgrade", "on the canary, before the others roll out"),
                          canary))
    for pattern, metric, threshold in _REASONS:
        if pattern.search(why or ""):
            items += [((f"{metric}: the reason given for this change", threshold, "first day after the rollout"),
                       m.name) for m in models]
    return [{"metric": key[0], "threshold": key[1], "when": key[2], "models": names} for key, names in grouped(items)]
