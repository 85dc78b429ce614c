"""An engine upgrade changes a default that the configuration relies on by leaving it unset.

## What it flags
In diff mode, when a change moves a served model to another engine version (an image tag, a pip pin,
a `version:` field), every setting the configuration does not set whose default differs between the
two versions, with the old and new default: parser defaults from the flag catalogs generated from each
version's wheel (vLLM 0.19 -> 0.20 raises `--gpu-memory-utilization` from 0.9 to 0.92), and defaults
the engine derives at start-up where they are known: vLLM's usage-context `max_num_seqs` and
`max_num_batched_tokens` for the GPU class, prefix caching for hybrid models, chunked prefill, the
V0 -> V1 engine core. Env variables the configuration sets that the new version stops reading are
reported too (when the engine's env catalog is present); flags it removes are CFG104 findings that
the change introduces.
Only the defaults the served model reads are reported: many options are read only under a feature
(SGLang's `--hicache-*` with hierarchical cache on, `--load-balance-method` with data parallel > 1,
`--mamba-*` and `--swa-*` for hybrid and sliding-window models, speculative decoding, LoRA; see
`cfgcheck.applicability`), and a default of a feature the model does not use is counted, not listed.
The drifted defaults of one version change are named in one finding per served model (served models
that share the changed image line share it too): a bump is one decision for the reviewer, not one per
default. Defaults that were or become derived at start-up (the parser leaves them unset) are named in it
too; when they are all it names, it is a note (their effective value may not change). The finding is an
error when a new default crosses a documented ceiling (as CFG204 reads them: a
`# cfgcheck: ceiling=` directive, `ceilings:` in `.cfgcheck.yaml`, or a ceiling documented on another
served model on the same GPUs).

## Why it matters
An image bump looks like a no-op to a reviewer: no setting changed. But the engine now runs with
other defaults: more GPU memory taken from a GPU shared with another workload, a larger admission
window that overcommits the KV pool, prefix caching that changes memory per request. The change
should say so, and either pin the old value or accept the new one on purpose.

## Example
Before:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.19.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--max-model-len", "32768"]
```
After:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.20.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--max-model-len", "32768"]
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.20.0
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--max-model-len", "32768", "--gpu-memory-utilization", "0.9"]
```

## Options
- `ignore` (list, default `[]`): settings (argparse destinations, e.g. `allowed_origins`) whose
  default drift is not reported.
"""

from __future__ import annotations

from cfgcheck.api import (DefaultDrift, Finding, Option, RuleContext, ServedModel, Setting, VersionChange, show,
                          version_change)

from ._ceilings import MEMORY_SETTINGS, ceiling_for, gpu_pools

CODE, NAME, SEVERITY = "CFG403", "default-drift", "warning"
OPTIONS = {"ignore": Option(list, [], "settings (argparse destinations, e.g. `allowed_origins`) whose default drift "
                                        "is not reported.")}
DIFF_ONLY = True
SCOPE = "run"  # a ceiling documented on one served model holds for the others on its GPUs


def _ceiling_crossed(model, ctx, drift: DefaultDrift, where, pools: dict):
    """(limit, ceiling) when the new default is above a ceiling documented for that setting."""
    if drift.setting not in MEMORY_SETTINGS or not isinstance(drift.new, (int, float)):
        return None
    default = Setting(drift.setting, drift.new, where, "default")
    ceiling = ceiling_for(model, default, ctx.config, pools)
    limit = ceiling.limit(drift.old) if ceiling is not None else None
    if limit is None or drift.new <= limit + 1e-9:
        return None
    return limit, ceiling


def _pin(drift: DefaultDrift) -> str:
    """How to keep the old default: the flag and its old value where it has one."""
    if drift.flag and isinstance(drift.old, (int, float, str)) and not isinstance(drift.old, bool):
        return f"{drift.flag} {drift.old}"
    return drift.flag or drift.dest


def _remediation(plain: list[DefaultDrift], derived: list[DefaultDrift]) -> str:
    # names no served model: models sharing one image line fold into one finding (lint.distinct)
    parts = []
    if plain:
        pins = ", ".join(_pin(d) for d in plain)
        accept = f"accept {show(plain[0].new)}" if len(plain) == 1 else "accept the new defaults"
        parts.append(f"pin the old {'value' if len(plain) == 1 else 'values'} ({pins}), or {accept} and say so in "
                     "the change description")
    if derived:
        parts.append(f"read the engine's release notes for {', '.join(d.dest for d in derived)}; pin a value where "
                     "the old behaviour matters")
    return "; ".join(parts)


def _change(drift: DefaultDrift) -> str:
    how = f" ({drift.derived})" if drift.derived else ""
    return f"{drift.dest}{how} from {show(drift.old)} to {show(drift.new)}"


def check(models: list[ServedModel], ctx: RuleContext):
    pools = gpu_pools(ctx.models)
    for model in models:
        for finding in _drifts(model, ctx, pools):
            finding.model, finding.model_identity = model.name, model.identity
            yield finding


def _drifts(model: ServedModel, ctx: RuleContext, pools: dict):
    base = ctx.base_of(model)
    if base is None:
        return
    change: VersionChange | None = version_change(base, model, ctx.config)
    if change is None:
        return
    where = model.image.location if model.image is not None else model.location
    ignored = set(ctx.options.get("ignore") or ())
    relevant = [d for d in change.relevant if d.dest not in ignored]
    # one version change is one decision for the reviewer: the defaults it changes under this served
    # model's features in one finding; those of features it does not use stay on the change (drift.py)
    if relevant:
        yield _drifted(model, ctx, change, relevant, where, pools)
    for env in change.dropped_env:
        yield Finding(f"{change.label}: {env.name} is no longer read by {change.new}; this change makes it inert",
                      env.location, remediation=f"remove {env.name} or find what replaces it in the release notes",
                      setting=f"env:{env.name}")


def _drifted(model, ctx, change: VersionChange, relevant: list[DefaultDrift], where, pools: dict) -> Finding:
    """The defaults that drift under this served model, in one finding: an error when one crosses a documented
    ceiling, a note when all of them were or become derived at start-up (their effective value may stay)."""
    crossed = {d.dest: c for d in relevant if (c := _ceiling_crossed(model, ctx, d, where, pools)) is not None}
    plain = [d for d in relevant if d.old is not None and d.new is not None]
    derived = [d for d in relevant if d.old is None or d.new is None]
    said = [_change(d) + _above(crossed.get(d.dest)) for d in plain]
    if len(said) == 1 and not derived:
        message = f"{change.label} changes the default of {said[0]}; this configuration does not set it"
    elif said:
        message = f"{change.label} changes {len(said)} defaults this configuration does not set: " + "; ".join(said)
    else:
        message = f"{change.label} changes {len(derived)} default{'s' if len(derived) != 1 else ''} to or from a " \
                  "value derived at start-up that this configuration does not set"
    if derived:
        names = ", ".join(f"{d.dest} ({show(d.old)} → {show(d.new)})" for d in derived)
        message += f"{'; and to or from a value derived at start-up: ' if said else ': '}{names}"
    message += _unread(change, set(ctx.options.get("ignore") or ()))
    severity = "error" if crossed else "" if plain else "note"
    dests = ",".join(d.dest for d in relevant)
    return Finding(message, where, remediation=_remediation(plain, derived), setting=f"default:{dests}",
                   related=tuple(c[1].location for c in crossed.values()), severity=severity)


def _above(crossed) -> str:
    if crossed is None:
        return ""
    limit, ceiling = crossed
    on = f" documented on {ceiling.documented_on}" if ceiling.documented_on else ""
    return f", above the ceiling {limit:g}{on}"


def _unread(change: VersionChange, ignored: set[str]) -> str:
    """What else drifts, for features this served model does not use or that are not known for it."""
    text = ""
    undecided = [d for d in change.undecided if d.dest not in ignored]
    if undecided:
        features = " or ".join(dict.fromkeys(d.feature for d in undecided))
        text += f"; and where it is {features} (not known here): {', '.join(d.dest for d in undecided)}"
    count = len([d for d in change.irrelevant if d.dest not in ignored])
    if count:
        text += f"; {count} more default{'s' if count != 1 else ''} change for features it does not use"
    return text
