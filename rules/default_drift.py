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
The drifted defaults of one version change are named in one finding (served models that share the
changed image line share it too): a bump is one decision for the reviewer, not one per default.
Defaults that were or become derived at start-up (the parser leaves them unset) are named together
in one note per served model: their effective value may not change. The finding is an error when the new default crosses a documented ceiling (as CFG204 reads them: a
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


def _remediation(drifts: list[DefaultDrift]) -> str:
    # names no served model: models sharing one image line fold into one finding (lint.distinct)
    pins = ", ".join(_pin(d) for d in drifts)
    accept = f"accept {show(drifts[0].new)}" if len(drifts) == 1 else "accept the new defaults"
    return f"pin the old {'value' if len(drifts) == 1 else 'values'} ({pins}), or {accept} and say so in the " \
           f"change description"


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
    drifts = [d for d in change.drifts if d.dest not in ignored]
    # a default that becomes (or was) derived at start-up may keep its effective value: one note names them
    derived = [d for d in drifts if d.old is None or d.new is None]
    plain = []
    for drift in drifts:
        if drift in derived:
            continue
        crossed = _ceiling_crossed(model, ctx, drift, where, pools)
        if crossed is None:
            plain.append(drift)
        else:
            yield _above_ceiling(change, drift, crossed, where)
    # one version change is one decision for the reviewer: its drifted defaults in one finding
    if plain:
        yield _drifted(change, plain, where)
    if derived:
        names = ", ".join(f"{d.dest} ({show(d.old)} → {show(d.new)})" for d in derived)
        yield Finding(f"{change.label} also changes {len(derived)} default{'s' if len(derived) != 1 else ''} to or "
                      f"from a value derived at start-up that this configuration does not set: {names}",
                      where, remediation="read the engine's release notes for these; pin a value where the old "
                                         "behaviour matters", setting="default:derived", severity="note")
    for env in change.dropped_env:
        yield Finding(f"{change.label}: {env.name} is no longer read by {change.new}; this change makes it inert",
                      env.location, remediation=f"remove {env.name} or find what replaces it in the release notes",
                      setting=f"env:{env.name}")


def _drifted(change: VersionChange, drifts: list[DefaultDrift], where) -> Finding:
    if len(drifts) == 1:
        message = f"{change.label} changes the default of {_change(drifts[0])}; this configuration does not set it"
    else:
        message = f"{change.label} changes {len(drifts)} defaults this configuration does not set: " + \
                  "; ".join(_change(d) for d in drifts)
    setting = f"default:{drifts[0].dest}" if len(drifts) == 1 else "default:" + ",".join(d.dest for d in drifts)
    return Finding(message, where, remediation=_remediation(drifts), setting=setting)


def _above_ceiling(change: VersionChange, drift: DefaultDrift, crossed, where) -> Finding:
    limit, ceiling = crossed
    on = f" documented on {ceiling.documented_on}" if ceiling.documented_on else ""
    message = f"{change.label} changes the default of {_change(drift)}; this configuration does not set it, " \
              f"and {show(drift.new)} is above the ceiling {limit:g}{on}"
    return Finding(message, where, remediation=_remediation([drift]), setting=f"default:{drift.dest}",
                   related=(ceiling.location,), severity="error")
