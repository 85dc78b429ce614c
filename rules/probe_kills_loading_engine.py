"""Flags a liveness (or startup) probe that kills the engine before it can finish loading the model.

## What it flags
- A container with a liveness probe and no startup probe (or with a startup probe) whose budget,
  `initialDelaySeconds + periodSeconds x failureThreshold` with the Kubernetes defaults (0, 10, 3),
  is below a lower bound of the engine's start-up time: the weights read at 2 GB/s (NVMe-class,
  optimistic: a hub download or network volume is far slower), plus 20 s of process start, imports
  and CUDA/NCCL initialisation, plus compilation and CUDA-graph capture (vLLM: 40 s unless
  `--enforce-eager`; SGLang: 20 s unless `--disable-cuda-graph`). The weights come from the bundled
  model table (or `model_configs`); for a model it does not know, only the start-up floor counts.
- A budget that holds that start-up but not a start that downloads a hub model into an empty cache
  first (the first start, or every start when the cache is not on a persistent volume): the weights at
  `download-rate-mb-s` (an assumed 1 Gbit/s) before the load. The rate is assumed, so this is a note
  that states it.
- An SGLang liveness or readiness probe on `/health` or `/health_generate` with a 1-second timeout
  (`/health` only from SGLang 0.4.10.post2, where it began to run a generation; a note when the
  version is assumed).

## Why it matters
The kubelet restarts a container whose liveness probe fails `failureThreshold` times in a row, and a
loading engine answers no HTTP at all: the pod restarts forever in CrashLoopBackOff, each time reading
the weights again (vllm-project/aibrix#772; KServe added startup probes to its vLLM templates for
this, kserve/kserve#5063; the Kubernetes docs recommend a startup probe for slow starters). SGLang's
`/health_generate` runs a one-token generation (sgl-project/sglang#1154), and so does `/health` since
0.4.10.post2 (sgl-project/sglang#8444 routed both to one handler; before it `/health` answered 200 at
once; `SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION` turns it off again from 0.5.5.post3): a generation
queues behind real traffic and takes longer than a second under load (sgl-project/sglang#12938), so a
liveness probe then restarts a healthy, busy server.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "4"]
          livenessProbe:
            httpGet:
              path: /health
              port: 8000
            initialDelaySeconds: 60
            periodSeconds: 10
          resources:
            limits:
              nvidia.com/gpu: 4
```

## Use instead
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-70b
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.26.0
          command: ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size", "4"]
          startupProbe:
            httpGet:
              path: /health
              port: 8000
            periodSeconds: 10
            failureThreshold: 180
          livenessProbe:
            httpGet:
              path: /health
              port: 8000
            periodSeconds: 10
          resources:
            limits:
              nvidia.com/gpu: 4
```

## Options
Declared in `OPTIONS` (type, default, meaning); `cfgcheck rule` lists them.
"""

from __future__ import annotations

from cfgcheck.api import IMAGE_EXACT, Finding, Option, served_architecture, stated, version_key

from ._pod_rules import serves
from ._weights import hub_name, offline, persistent_cache, weight_bytes

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

CODE, NAME, SEVERITY = "CFG502", "probe-kills-loading-engine", "warning"
OPTIONS = {
    "read-rate-gb-s": Option(float, 2.0, "the weight read rate assumed, in GB/s."),
    "download-rate-mb-s": Option(float, 125.0,
        "the Hugging Face hub download rate assumed when a start downloads the weights, in MB/s "
        "(125 MB/s is a 1 Gbit/s link)."),
}

PROCESS_START_S = 20  # imports, worker processes, CUDA context and NCCL init: a lower bound
COMPILE_S = {"vllm": 40, "sglang": 20, "tokenspeed": 20}  # torch.compile and/or CUDA-graph capture
NO_COMPILE_FLAGS = ("enforce_eager", "disable_cuda_graph")
SGLANG_HEALTH_PATHS = ("/health", "/health_generate")
HEALTH_GENERATION_ENV = "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION"
# the first release whose /health runs a generation (sglang 0.4.10.post1 and 0.4.10.post2 wheels,
# python/sglang/srt/entrypoints/http_server.py: sgl-project/sglang#8444)
HEALTH_GENERATES = "0.4.10.post2"


def load_seconds(model, config: dict, read_rate: float) -> tuple[int, str]:
    """A lower bound of the start-up time, and how it was reached (for the message)."""
    eager = any(model.value(flag) is True for flag in NO_COMPILE_FLAGS)
    compile_s = 0 if eager else COMPILE_S.get(model.engine, 0)
    floor = PROCESS_START_S + compile_s
    parts = f"{PROCESS_START_S} s start" + ("" if eager else f" + {compile_s} s compile and CUDA-graph capture")
    source = model.model.value if model.model is not None and isinstance(model.model.value, str) else None
    arch = served_architecture(model, source, config.get("model_configs")) if source else None
    weights = arch.weight_bytes_for() if arch is not None else None
    if not weights:
        return floor, parts
    read = int(weights / (read_rate * 1e9))
    return floor + read, f"{weights / 1e9:.1f} GB of weights at {read_rate:g} GB/s ({read} s) + {parts}"


def check(model, ctx) -> Iterator[Finding]:
    pod = model.pod
    if pod is None or pod.format != "kubernetes" or not serves(model):
        return
    options = ctx.options
    probe = pod.probes.get("startup") or pod.probes.get("liveness")
    if probe is not None:
        needed, how = load_seconds(model, ctx.config or {}, float(options["read-rate-gb-s"]))
        what = (f"initialDelaySeconds {probe.initial_delay} + periodSeconds {probe.period}"
                f" x failureThreshold {probe.failure_threshold}")
        hint = "raise failureThreshold" if probe.kind == "startup" else "add a startupProbe"
        if probe.budget < needed:
            yield Finding(f"the {probe.kind} probe restarts the container after {probe.budget} s ({what}) but the "
                          f"engine needs at least {needed} s to start ({how}): it never finishes loading",
                          probe.location, remediation=f"{hint} with a budget above {needed} s "
                          f"(periodSeconds 10, failureThreshold {-(-needed // 10) * 2})",
                          setting=f"{probe.kind}_probe", model=model.name)
        else:
            yield from _download_first(model, pod, probe, (needed, how), f"{probe.budget} s ({what})", hint, ctx)
    yield from _sglang_health_timeout(model, pod)


def _download_first(model, pod, probe, load: tuple[int, str], budget: str, hint: str, ctx) -> Iterator[Finding]:
    """The start that downloads a hub model into an empty cache (the first one, or every one when the
    cache is not persistent) spends the download before the load: at an assumed rate, so a note."""
    name = hub_name(model)
    if name is None or offline(model) is not None:
        return  # a local path or offline mode: no download
    weights = weight_bytes(name, ctx.config or {})
    rate = float(ctx.options["download-rate-mb-s"])
    if not weights or rate <= 0:
        return
    download = int(weights / (rate * 1e6))
    needed = load[0] + download
    if probe.budget >= needed:
        return
    kept, where, _ = persistent_cache(model, pod)
    when = "its first start (into an empty cache)" if kept else f"every start ({where} is not persistent)"
    outcome = "restarts it until the cache is full" if kept else "restarts it before it ever loads"
    yield Finding(f"the {probe.kind} probe restarts the container after {budget}, but on {when} the engine "
                  f"first downloads {weights / 1e9:.1f} GB of {name} from the Hugging Face hub ({download} s at an "
                  f"assumed {rate:g} MB/s) and then loads it ({load[1]}): at least {needed} s, so the probe "
                  f"{outcome}", probe.location,
                  remediation=f"{hint} with a budget above {needed} s (periodSeconds 10, failureThreshold "
                              f"{-(-needed // 10) * 2}), or fill the cache before the engine starts",
                  setting=f"{probe.kind}_probe", model=model.name, severity="note")


def _sglang_health_timeout(model, pod) -> Iterator[Finding]:
    if model.engine != "sglang":
        return
    generation = model.env.get(HEALTH_GENERATION_ENV)
    health = _health_generates(model)
    for kind in ("liveness", "readiness"):
        probe = pod.probes.get(kind)
        if probe is None or probe.handler != "httpGet" or probe.path not in SGLANG_HEALTH_PATHS or probe.timeout > 1:
            continue
        severity, assumed = "", ""
        if probe.path == "/health":
            if health is None or generation is not None and str(generation.value).lower() in ("0", "false"):
                continue
            severity, assumed = health
        effect = "restarts" if kind == "liveness" else "takes out of the Service"
        yield Finding(f"the {kind} probe gives SGLang's {probe.path} {probe.timeout} s, but it runs a one-token "
                      f"generation that queues behind traffic{assumed}: under load the probe {effect} a healthy "
                      "server", probe.timeout_location or probe.location,
                      remediation="set timeoutSeconds to 10 or more (or probe /health with "
                                  f"{HEALTH_GENERATION_ENV}=false for liveness)",
                      setting=f"{kind}_probe_timeout", model=model.name, severity=severity)


def _health_generates(model) -> tuple[str, str] | None:
    """Whether SGLang's ``/health`` runs a generation in this model's version: (severity, what was
    assumed) when it does or may, None when the version is known to be older than ``HEALTH_GENERATES``."""
    sure, why = stated(model)
    version = model.engine_version
    if isinstance(version, str) and version and sure == IMAGE_EXACT:
        return None if version_key(version) < version_key(HEALTH_GENERATES) else ("", "")
    return "note", f" (from SGLang {HEALTH_GENERATES}; the version is assumed: {why or 'not stated'})"
