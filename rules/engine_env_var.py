"""Flags an engine environment variable that this engine version does not read.

## What it flags
A container environment variable with the engine's own prefix (`VLLM_` for vLLM; `SGLANG_` or `SGL_`
for SGLang) that the served engine version does not read:

- one that other releases read but this one does not: removed or renamed (`VLLM_USE_V1` after vLLM
  dropped the V0 engine), or only read by newer releases;
- one no release reads that is a misspelling of a real one (`VLLM_LOGGING_LEVLE`), with the real name.

A name no release reads and that resembles none is left alone: images, charts and operators read
variables of their own with these prefixes (`VLLM_ADDITIONAL_ARGS`, `VLLM_VERSION`). The names each
release reads come from its released source, read with `ast` by `scripts/build_env_catalog.py`: every
module of the package, not only `vllm/envs.py` (vLLM reads some variables elsewhere, e.g. in its KV
connectors), through `os.getenv`, `os.environ.get`, `os.environ[...]` and `"NAME" in os.environ`; SGLang's
`Envs` class and environment getters too. The data cites each release's sdist (or wheel and sha256).

vLLM on Gaudi or Neuron (the accelerator, or their runtimes' `PT_HPU_`/`HABANA_`/`NEURON_RT_` settings in
the container) is not judged: since vLLM dropped its in-tree HPU (0.10.0) and Neuron (0.10.2)
platforms it runs there through out-of-tree plugins (vllm-gaudi, vllm-neuron) whose own `VLLM_`
variables (`VLLM_SKIP_WARMUP`) no upstream release reads.

## Why it matters
The engine reads its settings from environment variables by exact name and ignores every other
one without a word. A removed or misspelled variable leaves the engine on its default: the V1 engine
still runs although `VLLM_USE_V1=0` asked for V0 (the released wheels read `VLLM_USE_V1` up to vLLM
0.11.0 and not from 0.11.1, when the V0 engine was removed), a debug log level never applies, a
timeout stays at its default and requests fail later.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          env:
            - name: VLLM_USE_V1
              value: "0"
            - name: VLLM_LOGGING_LEVLE
              value: DEBUG
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
          env:
            - name: VLLM_LOGGING_LEVEL
              value: DEBUG
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Options
None. A note instead of a warning when the engine version is assumed (the `latest` tag, a version
between catalogued ones); nothing when the image names no version (a vendor build, a fork or a date
tag may hold any release).
"""

from __future__ import annotations

from cfgcheck.api import (DISPLAY, Finding, IMAGE_EXACT as EXACT, IMAGE_UNKNOWN as UNKNOWN, accelerator_kind,
                          catalog_for, confidence, label, names_read, parse_image, prefixes, readers, typo_of,
                          version_key, version_ranges)

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG108", "engine-env-var", "warning"
OPTIONS: dict = {}

# vLLM dropped its in-tree HPU platform in 0.10.0 and its Neuron one in 0.10.2 (vllm/platforms/hpu.py,
# neuron.py): Gaudi and Neuron run it through out-of-tree plugins (vllm-gaudi, vllm-neuron) that read VLLM_
# variables of their own, such as VLLM_SKIP_WARMUP.
_PLUGIN_PLATFORMS = frozenset({"gaudi", "neuron"})
# Settings only those platforms' runtimes read: Intel Gaudi's PyTorch bridge (PT_HPU_*, HABANA_*) and the
# AWS Neuron runtime and compiler (NEURON_RT_*, NEURON_CC_FLAGS); a chart may name the device elsewhere.
_PLUGIN_PLATFORM_ENV = ("PT_HPU_", "HABANA_", "NEURON_RT_", "NEURON_CC_FLAGS")


def check(model, ctx) -> Iterator[Finding]:
    engine_prefixes = prefixes(model.engine)
    ours = [name for name in model.env if name.startswith(engine_prefixes)] if engine_prefixes else []
    if ours and model.engine == "vllm" and _plugin_platform(model):
        return  # a platform plugin's variables: no upstream release lists them
    catalog = catalog_for(model.engine, model.engine_version) if ours else None
    names = names_read(model.engine, catalog.version) if catalog is not None else None
    if names is None:
        return
    sure = confidence(model, catalog)
    if sure == UNKNOWN or catalog.requested is None and not _latest(model):
        return  # no version named (a vendor build, a fork, a date tag): any release may be inside
    severity = SEVERITY if sure == EXACT else "note"
    checked = label(model, catalog)
    engine = DISPLAY.get(model.engine, model.engine)
    for name in ours:
        if name in names:
            continue
        setting = model.env[name]
        elsewhere = readers(model.engine, name)
        if elsewhere:
            message = f"{name} is not read by {checked}: {engine} {version_ranges(model.engine, elsewhere)} " \
                      f"read it{_when(elsewhere, catalog.version)}"
            remediation = "remove it (this version ignores it) or use what replaced it (see the release notes)"
        else:
            real = typo_of(model.engine, name, names)
            if real is None:
                continue  # an image's, chart's or operator's own variable, not the engine's
            message = f"{name} is not an environment variable {checked} reads; did you mean {real}?"
            remediation = f"rename it to {real}"
        yield Finding(message, setting.location, remediation=remediation, setting=f"env:{name}",
                      severity=severity, model=model.name)


def _plugin_platform(model) -> bool:
    """vLLM runs on Gaudi or Neuron: the accelerator says so, or the container sets their runtimes' settings."""
    return accelerator_kind(model) in _PLUGIN_PLATFORMS or any(name.startswith(_PLUGIN_PLATFORM_ENV) for name in model.env)


def _latest(model) -> bool:
    """The image is the engine's ``latest`` tag: the newest catalogued release is what it runs."""
    image = model.image.value if model.image is not None else None
    return isinstance(image, str) and parse_image(image).tag == "latest"


def _when(readers: list[str], version: str) -> str:
    """Whether the versions that read a variable all come before ``version`` or all after it."""
    own = version_key(version)
    if all(version_key(v) < own for v in readers):
        return " (removed or renamed since)"
    if all(version_key(v) > own for v in readers):
        return " (added in a newer release)"
    return ""
