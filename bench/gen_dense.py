#!/usr/bin/env python3
"""Generate a dense corpus of LLM serving configs in every format cfgcheck reads.

Deterministic (seeded). About 15% of the served models carry one or two hazards (an abbreviated flag,
a rolling tag, an unpinned model revision, a value above a ``# HARD CEILING 0.85`` comment, a literal API
key, an oversubscribed max-num-seqs); the rest are pinned and commented the way careful teams write them.

    python bench/gen_dense.py [--out bench/out/dense] [--files 2000] [--seed 10]

Writes ``<out>.manifest.json`` (file count, bytes, files per format, hazards per kind) beside the folder.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

MODELS = [
    # (model id, layers-ish label, context the model supports, sensible 1-GPU max-model-len)
    ("meta-llama/Llama-3.1-8B-Instruct", 131072, 16384),
    ("meta-llama/Llama-3.2-3B-Instruct", 131072, 32768),
    ("meta-llama/Llama-3.1-70B-Instruct", 131072, 32768),
    ("Qwen/Qwen3-8B", 40960, 32768),
    ("Qwen/Qwen3-14B", 40960, 16384),
    ("Qwen/Qwen3-32B", 40960, 16384),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", 262144, 32768),
    ("Qwen/Qwen2.5-7B-Instruct", 32768, 16384),
    ("Qwen/Qwen2.5-Coder-14B-Instruct", 32768, 16384),
    ("Qwen/Qwen2.5-72B-Instruct", 32768, 16384),
    ("Qwen/Qwen3-Embedding-0.6B", 32768, 8192),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 131072, 16384),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", 131072, 16384),
    ("mistralai/Mistral-7B-Instruct-v0.3", 32768, 16384),
    ("google/gemma-2-9b-it", 8192, 8192),
    ("microsoft/Phi-3.5-mini-instruct", 131072, 16384),
]
GPUS = [("NVIDIA-L4", "L4"), ("NVIDIA-A10G", "A10G"), ("NVIDIA-L40S", "L40S"), ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("NVIDIA-A100-SXM4-80GB", "A100"), ("NVIDIA-GeForce-RTX-4090", "RTX-4090"), ("NVIDIA-RTX-6000-Ada-Generation", "RTX-6000")]
VLLM_VERSIONS = ["v0.8.5", "v0.9.2", "v0.10.1.1", "v0.10.2", "v0.11.0", "v0.11.2"]
SGLANG_VERSIONS = ["v0.4.9.post2-cu126", "v0.5.2-cu126", "v0.5.4.post1-cu129-amd64"]
TEAMS = ["search", "assist", "support", "platform", "ml-infra", "growth", "docs", "risk", "ads", "research"]
ENVS = ["prod", "staging", "dev", "canary", "eu-prod", "us-prod"]

REASONS_UTIL = [
    "Leaves ~6 GiB for the CUDA graphs captured at start-up (measured on {gpu}).",
    "Lowered from 0.95 after the OOM on {date} (INC-{num}).",
    "Shared node: the tokenizer sidecar needs headroom.",
    "Tuned in load test LT-{num}: higher values gave no extra KV blocks on {gpu}.",
]
REASONS_LEN = [
    "p99 prompt is ~6k tokens; 2x headroom for tool output.",
    "Long-context RAG: retrieved chunks plus history fit in this window.",
    "Capped below the model's native window so the KV pool holds enough sequences.",
    "Matches the client-side truncation in gateway config ({team}).",
]
REASONS_SEQS = [
    "Load test LT-{num}: {n} concurrent sessions at p95 TTFT < 800 ms.",
    "Batch jobs only; low concurrency, long outputs.",
    "Bounded by the gateway's per-tenant limit ({team}).",
]
GENERAL = [
    "Owned by team {team}; page #{team}-oncall before changing.",
    "Reviewed in ADR-{num}: see docs/adr/{num}-serving-{team}.md",
    "Rollout: canary first, then {env}. Renovate bumps the digest weekly.",
    "Do not enable speculative decoding here until the draft model is evaluated.",
    "Keep in sync with the HPA target in ../hpa.yaml.",
    "Prefix caching: most traffic shares the same 2k-token system prompt.",
]
HAZARDS = ["abbrev", "rolling", "unpinned", "ceiling", "apikey", "oversub"]


class Ctx:
    """Everything one served model needs, with its hazards decided up front."""

    def __init__(self, rng: random.Random, index: int, engine: str, hazards: set[str]):
        self.rng, self.index, self.engine, self.hazards = rng, index, engine, hazards
        self.model, self.native, self.len = rng.choice(MODELS)
        self.gpu_label, self.gpu = rng.choice(GPUS)
        self.team, self.env = rng.choice(TEAMS), rng.choice(ENVS)
        self.name = f"{self.model.split('/')[1].lower().replace('.', '-')[:28].rstrip('-')}-{self.team}-{index}"
        self.revision = sha(rng, 40)
        big = any(size in self.model for size in ("70B", "72B", "32B", "30B"))
        if big:  # large models run tensor-parallel on datacenter cards
            self.gpu_label, self.gpu = rng.choice(GPUS[3:5])
        self.tp = rng.choice([2, 4, 4, 8]) if big else 1
        self.max_len = self.native * 1 if "oversub" in hazards else self.len
        self.seqs = rng.choice([256, 512, 1024]) if "oversub" in hazards else rng.choice([4, 8, 16, 24, 32])
        self.util = rng.choice([0.9, 0.92, 0.95]) if "ceiling" in hazards else rng.choice([0.8, 0.82, 0.85])
        self.ceiling_comment = "ceiling" in hazards or rng.random() < 0.25
        self.port = 8000 if engine == "vllm" else 30000

    def c(self, pool: list[str]) -> str:
        r = self.rng
        return r.choice(pool).format(gpu=self.gpu, date=f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
                                     num=r.randint(100, 9999), team=self.team, env=self.env, n=self.seqs)

    def image(self) -> str:
        if self.engine == "sglang":
            repo, tag = "lmsysorg/sglang", self.rng.choice(SGLANG_VERSIONS)
        else:
            repo, tag = self.rng.choice([("vllm/vllm-openai", None), ("registry.internal/ml/vllm-openai", None)])
            tag = self.rng.choice(VLLM_VERSIONS)
        if "rolling" in self.hazards:
            return f"{repo}:{self.rng.choice(['latest', 'nightly', 'main'])}"
        return f"{repo}:{tag}@sha256:{sha(self.rng, 64)}"

    def image_parts(self) -> tuple[str, str]:
        image = self.image()
        repo, _, tag = image.partition(":")
        return repo, tag

    def hf_source(self) -> str:
        return f"hf://{self.model}" if "unpinned" in self.hazards else f"hf://{self.model}@{self.revision}"


def sha(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


# ---------------------------------------------------------------- argv


def engine_args(x: Ctx, include_model_flag: bool = False) -> list[tuple[str, str | None, str | None]]:
    """(flag, value or None, comment above) for the engine's command line."""
    r = x.rng
    args: list[tuple[str, str | None, str | None]] = []
    if x.engine == "sglang":
        if include_model_flag:
            args.append(("--model-path", x.model, None))
        if "unpinned" not in x.hazards:
            args.append(("--revision", x.revision, "Pinned: the tokenizer changed upstream twice in one month."))
        args.append(("--context-length", str(x.max_len), x.c(REASONS_LEN) if r.random() < 0.6 else None))
        ceiling = "HARD CEILING 0.85: " + x.c(REASONS_UTIL) if x.ceiling_comment else x.c(REASONS_UTIL)
        args.append(("--mem-fraction-static", f"{x.util}", ceiling))
        args.append(("--max-running-requests", str(x.seqs), x.c(REASONS_SEQS) if r.random() < 0.6 else None))
        if x.tp > 1:
            args.append(("--tp", str(x.tp), None))
        args.append(("--host", "0.0.0.0", None))
        args.append(("--port", str(x.port), None))
        if r.random() < 0.5:
            args.append(("--enable-metrics", None, None))
        if "apikey" in x.hazards:
            args.append(("--api-key", "sk-live-" + sha(r, 32), None))
        return args
    if include_model_flag:
        args.append(("--model", x.model, None))
    if "unpinned" not in x.hazards:
        args.append(("--revision", x.revision, "Pinned to the commit evaluated in the quality gate."))
    args.append(("--served-model-name", x.name.rsplit("-", 1)[0], None))
    args.append(("--max-model-len", str(x.max_len), x.c(REASONS_LEN) if r.random() < 0.6 else None))
    ceiling = "HARD CEILING 0.85: " + x.c(REASONS_UTIL) if x.ceiling_comment else x.c(REASONS_UTIL)
    args.append(("--gpu-memory-utilization", f"{x.util}", ceiling))
    args.append(("--max-num-seqs", str(x.seqs), x.c(REASONS_SEQS) if r.random() < 0.6 else None))
    if x.tp > 1:
        args.append(("--tensor-parallel-size", str(x.tp), "One replica spans the node's NVLink island."))
    if r.random() < 0.5:
        args.append(("--enable-prefix-caching", None, x.c(GENERAL) if r.random() < 0.3 else None))
    if r.random() < 0.4:
        args.append(("--kv-cache-dtype", "fp8", "fp8 KV doubles the pool; quality checked in EVAL-%d." % r.randint(10, 999)))
    if "abbrev" in x.hazards:
        args.append(("--kv-cache-memory", str(r.choice([4, 8, 16]) * 1024**3),
                     "Startup log: GPU KV cache size with this explicit size."))
    if r.random() < 0.5:
        args.append(("--disable-log-requests", None, None))
    args.append(("--port", str(x.port), None))
    if "apikey" in x.hazards:
        args.append(("--api-key", "sk-live-" + sha(r, 32), None))
    return args


def yaml_str(value: str) -> str:
    return f'"{value}"' if value.replace(".", "").isdigit() or value in ("true", "false") else value


def render_list(args, indent: str, style: str) -> list[str]:
    """Args as a YAML block list; style 'pair' (flag and value items) or 'eq' (--flag=value)."""
    out = []
    for flag, value, comment in args:
        if comment:
            out.append(f"{indent}# {comment}")
        if value is None:
            out.append(f"{indent}- {flag}")
        elif style == "eq":
            out.append(f"{indent}- {flag}={value}")
        else:
            out.append(f"{indent}- {flag}")
            out.append(f"{indent}- {yaml_str(value)}")
    return out


def flat(args) -> str:
    return " ".join(flag if value is None else f"{flag} {value}" for flag, value, _ in args)


def comments_of(args, indent: str) -> list[str]:
    return [f"{indent}# {flag}: {comment}" for flag, _, comment in args if comment]


# ---------------------------------------------------------------- shared pieces


def metadata(x: Ctx, kind_label: str, annotations: bool = True) -> list[str]:
    r = x.rng
    out = ["metadata:", f"  name: {x.name}", f"  namespace: llm-{x.env}", "  labels:",
           f"    app.kubernetes.io/name: {x.name}", f"    app.kubernetes.io/component: {kind_label}",
           f"    app.kubernetes.io/part-of: llm-{x.team}", f"    team: {x.team}"]
    if annotations and r.random() < 0.4:
        out += ["  annotations:", f"    owner: team-{x.team}@example.com",
                f"    runbook: https://wiki.example.com/llm/{x.team}/{x.name.rsplit('-', 1)[0]}"]
        if r.random() < 0.5:
            out.append(f"    argocd.argoproj.io/sync-wave: \"{r.randint(0, 5)}\"")
    return out


def pod_extras(x: Ctx, indent: str) -> list[str]:
    """Probes, resources, volumes: what makes real serving manifests dense."""
    r = x.rng
    i = indent
    out = [f"{i}ports: [{{name: http, containerPort: {x.port}}}]",f"{i}# Model load takes up to 10 minutes on a cold node.",
            f"{i}startupProbe:", f"{i}  httpGet: {{path: /health, port: http}}",
            f"{i}  failureThreshold: {r.choice([60, 90, 120])}", f"{i}  periodSeconds: 10",
            f"{i}readinessProbe: {{httpGet: {{path: /health, port: http}}, periodSeconds: 5}}"]
    gpus = x.tp
    out += [f"{i}resources:", f"{i}  requests:", f"{i}    cpu: \"{r.choice([4, 8, 12])}\"",
            f"{i}    memory: {r.choice([32, 48, 64, 96])}Gi", f"{i}    nvidia.com/gpu: {gpus}",
            f"{i}  limits:", f"{i}    memory: {r.choice([64, 96, 128])}Gi", f"{i}    nvidia.com/gpu: {gpus}"]
    out += [f"{i}volumeMounts:", f"{i}  - name: model-cache", f"{i}    mountPath: /root/.cache/huggingface",
            f"{i}  - name: shm", f"{i}    mountPath: /dev/shm"]
    return out


def pod_volumes(x: Ctx, indent: str) -> list[str]:
    i = indent
    return [f"{i}volumes:", f"{i}  - name: model-cache",
            f"{i}    persistentVolumeClaim: {{claimName: hf-cache-{x.team}}}", f"{i}  - name: shm", f"{i}    emptyDir:",
            f"{i}      medium: Memory", f"{i}      sizeLimit: 16Gi",
            f"{i}nodeSelector:", f"{i}  nvidia.com/gpu.product: {x.gpu_label}",
            f"{i}tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]"]


def env_block(x: Ctx, indent: str, extra: list[str] | None = None) -> list[str]:
    i = indent
    out = [f"{i}env:", f"{i}  - name: HF_TOKEN",
           f"{i}    valueFrom: {{secretKeyRef: {{name: hf-token, key: token}}}}", f"{i}  - name: HF_HUB_ENABLE_HF_TRANSFER",
           f"{i}    value: \"1\""]
    if x.engine == "vllm":
        out += [f"{i}  - name: VLLM_LOGGING_LEVEL", f"{i}    value: INFO"]
    return out + (extra or [])


def workload(x: Ctx, kind: str, container: list[str]) -> str:
    r = x.rng
    head = [f"# {x.c(GENERAL)}", "apiVersion: apps/v1", f"kind: {kind}"] + metadata(x, "inference")
    spec = ["spec:", f"  replicas: {r.choice([1, 1, 2, 3])}"]
    if kind == "StatefulSet":
        spec.append(f"  serviceName: {x.name}")
    elif r.random() < 0.6:
        spec += ["  # Recreate: two replicas of this model do not fit on one node during a rollout.",
                 "  strategy:", "    type: Recreate"]
    spec += ["  selector:", "    matchLabels:", f"      app.kubernetes.io/name: {x.name}", "  template:",
             "    metadata:", "      labels:", f"        app.kubernetes.io/name: {x.name}", "    spec:",
             "      terminationGracePeriodSeconds: 120", "      containers:"]
    spec += container
    spec += pod_volumes(x, "      ")
    return "\n".join(head + spec) + "\n"


# ---------------------------------------------------------------- formats


def fmt_vllm_serve(x: Ctx) -> str:
    args = engine_args(x)
    c = ["        - name: vllm", f"          image: {x.image()}", "          imagePullPolicy: IfNotPresent",
         f"          command: [\"vllm\", \"serve\", \"{x.model}\"]", "          args:"]
    c += render_list(args, "            ", x.rng.choice(["pair", "pair", "eq"]))
    c += env_block(x, "          ") + pod_extras(x, "          ")
    return workload(x, x.rng.choice(["Deployment", "Deployment", "StatefulSet"]), c)


def fmt_python_m_vllm(x: Ctx) -> str:
    args = engine_args(x, include_model_flag=True)
    c = ["        - name: server", f"          image: {x.image()}",
         "          command: [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]", "          args:"]
    c += render_list(args, "            ", "pair")
    c += env_block(x, "          ") + pod_extras(x, "          ")
    return workload(x, "StatefulSet", c)


def fmt_sglang(x: Ctx) -> str:
    args = engine_args(x, include_model_flag=True)
    c = ["        - name: sglang", f"          image: {x.image()}", "          command:", "            - python3",
         "            - -m", "            - sglang.launch_server", "          args:"]
    c += render_list(args, "            ", "pair")
    c += env_block(x, "          ") + pod_extras(x, "          ")
    return workload(x, "Deployment", c)


def fmt_shell(x: Ctx) -> str:
    args = engine_args(x, include_model_flag=x.engine == "sglang")
    lead = ("python3 -m sglang.launch_server" if x.engine == "sglang" else f"vllm serve {x.model}")
    lines = [lead] + [flag if value is None else f"{flag} {value}" for flag, value, _ in args]
    c = ["        - name: server", f"          image: {x.image()}"]
    c += comments_of(args, "          ")
    if x.rng.random() < 0.5:
        c += ["          command: [\"/bin/sh\", \"-c\"]", "          args:", "            - |"]
        c += ["              set -e", "              pip list 2>/dev/null | grep -i -E 'vllm|sglang|torch' || true",
              "              exec " + " \\\n                ".join(lines)]
    else:
        c += ["          command:", "            - /bin/bash", "            - -c", "            - >-"]
        c += ["              " + lines[0]] + ["              " + line for line in lines[1:]]
    c += env_block(x, "          ") + pod_extras(x, "          ")
    return workload(x, "Deployment", c)


def fmt_env_args(x: Ctx) -> str:
    """Flags in VLLM_ADDITIONAL_ARGS, as the KServe Hugging Face runtime and many images read them."""
    x.engine = "vllm"
    args = engine_args(x)
    c = ["        - name: vllm", f"          image: {x.image()}",
         f"          command: [\"vllm\", \"serve\", \"{x.model}\"]"]
    c += comments_of(args, "          ")
    extra = ["            - name: VLLM_ADDITIONAL_ARGS", f"              value: \"{flat(args)}\""]
    c += env_block(x, "          ", extra) + pod_extras(x, "          ")
    return workload(x, "Deployment", c)


def fmt_kserve(x: Ctx) -> str:
    x.engine = "vllm"
    r = x.rng
    args = engine_args(x)
    out = [f"# {x.c(GENERAL)}", "apiVersion: serving.kserve.io/v1beta1", "kind: InferenceService"]
    out += metadata(x, "kserve")
    out += ["spec:", "  predictor:", f"    minReplicas: {r.choice([1, 2])}", f"    maxReplicas: {r.choice([2, 4, 8])}",
            "    containers:", "      - name: kserve-container", f"        image: {x.image()}",
            "        command: [\"bash\", \"-c\"]"]
    out += comments_of(args, "        ")
    out += ["        args:", "          - >-", f"            vllm serve {x.model}"]
    out += ["            " + (flag if value is None else f"{flag} {value}") for flag, value, _ in args]
    out += env_block(x, "        ", ["          - name: VLLM_ADDITIONAL_ARGS",
                                     "            value: \"--disable-log-stats --uvicorn-log-level warning\""])
    out += pod_extras(x, "        ")
    out += pod_volumes(x, "    ")
    return "\n".join(out) + "\n"


def fmt_compose(x: Ctx) -> str:
    r = x.rng
    args = engine_args(x, include_model_flag=x.engine == "sglang")
    lead = ["python3", "-m", "sglang.launch_server"] if x.engine == "sglang" else ["vllm", "serve", x.model]
    out = [f"# {x.c(GENERAL)}", "# docker compose -f compose.yaml up -d", "name: " + x.name, "services:",
           f"  {x.engine}:", f"    image: {x.image()}", "    restart: unless-stopped", "    ipc: host",
           "    ports:", f"      - \"{x.port}:{x.port}\""]
    out += comments_of(args, "    ")
    if r.random() < 0.5:
        out += ["    command:"] + [f"      - {t}" for t in lead]
        for flag, value, _ in args:
            out.append(f"      - {flag}")
            if value is not None:
                out.append(f"      - {yaml_str(value)}")
    else:
        out += ["    command: >-", "      " + " ".join(lead)] + ["      " + (f if v is None else f"{f} {v}") for f, v, _ in args]
    out += ["    environment:", "      HF_TOKEN: ${HF_TOKEN}", "      HF_HUB_ENABLE_HF_TRANSFER: \"1\"",
            "    volumes:", "      - ~/.cache/huggingface:/root/.cache/huggingface", "    deploy:", "      resources:",
            "        reservations:", "          devices:", "            - driver: nvidia",
            f"              count: {x.tp}", "              capabilities: [gpu]",
            "    healthcheck:", f"      test: [\"CMD\", \"curl\", \"-f\", \"http://localhost:{x.port}/health\"]",
            "      interval: 30s", "      retries: 20",
            "  open-webui:", "    image: ghcr.io/open-webui/open-webui:v0.6.18", "    environment:",
            f"      OPENAI_API_BASE_URL: http://{x.engine}:{x.port}/v1", "    ports:", "      - \"3000:8080\""]
    return "\n".join(out) + "\n"


def fmt_llmkube(x: Ctx) -> str:
    r = x.rng
    runtime = x.engine
    args = engine_args(x)
    typed = {"--max-model-len": "maxModelLen", "--gpu-memory-utilization": "gpuMemoryUtilization",
             "--tensor-parallel-size": "tensorParallelSize", "--kv-cache-dtype": "kvCacheDtype"}
    if runtime == "sglang":
        typed = {"--context-length": "contextLength", "--mem-fraction-static": "memFractionStatic",
                 "--max-running-requests": "maxRunningRequests", "--tp": "tensorParallelSize"}
    out = ["---", f"# {x.c(GENERAL)}", "apiVersion: inference.llmkube.dev/v1alpha1", "kind: Model", "metadata:",
           f"  name: {x.name}", f"  namespace: llm-{x.env}", "spec:", f"  source: {x.hf_source()}",
           "  format: safetensors", "  hardware:", "    accelerator: cuda", "    gpu:", "      enabled: true",
           f"      count: {x.tp}", "      vendor: nvidia", f"      memory: {r.choice([24, 48, 80])}Gi",
           "---", "apiVersion: inference.llmkube.dev/v1alpha1", "kind: InferenceService"]
    out += metadata(x, "llmkube")
    out += ["spec:", f"  modelRef: {x.name}", f"  runtime: {runtime}", f"  image: {x.image()}",
            f"  replicas: {r.choice([1, 1, 2])}"]
    if runtime == "vllm":
        out += [f"  # {x.c(REASONS_SEQS)}", f"  parallelSlots: {x.seqs}"]
    out += ["  nodeSelector:", f"    nvidia.com/gpu.product: {x.gpu_label}", f"  {runtime}Config:"]
    extra = []
    for flag, value, comment in args:
        if flag in typed and value is not None:
            if comment:
                out.append(f"    # {comment}")
            out.append(f"    {typed[flag]}: {value}")
        elif flag not in ("--revision", "--max-num-seqs"):
            extra.append((flag, value, comment))
    out += ["  resources:", f"    gpu: {x.tp}", "    memory: 64Gi", "  extraArgs:"]
    out += render_list(extra, "    ", "pair")
    return "\n".join(out) + "\n"


def prodstack_values(x: Ctx, indent: str, models: int) -> list[str]:
    r = x.rng
    i = indent
    out = [f"{i}servingEngineSpec:", f"{i}  runtimeClassName: nvidia",
           f"{i}  # {x.c(GENERAL)}", f"{i}  strategy:", f"{i}    type: Recreate", f"{i}  modelSpec:"]
    base_index = x.index
    for n in range(models):
        if n:
            hz = x.hazards if r.random() < 0.3 else set()
            x = Ctx(r, base_index * 10 + n, "vllm", hz)
        x.engine = "vllm"
        repo, tag = x.image_parts()
        args = engine_args(x)
        typed = {"--max-model-len": "maxModelLen", "--gpu-memory-utilization": "gpuMemoryUtilization",
                 "--max-num-seqs": "maxNumSeqs", "--tensor-parallel-size": "tensorParallelSize",
                 "--kv-cache-dtype": "kvCacheDtype", "--enable-prefix-caching": "enablePrefixCaching"}
        out += [f"{i}    - name: {x.name.rsplit('-', 1)[0]}", f"{i}      repository: {repo}",
                f"{i}      tag: \"{tag}\"", f"{i}      modelURL: {x.model}", f"{i}      replicaCount: {r.choice([1, 2])}",
                f"{i}      requestCPU: {r.choice([6, 8, 10])}", f"{i}      requestMemory: \"{r.choice([32, 64])}Gi\"",
                f"{i}      requestGPU: {x.tp}", f"{i}      pvcStorage: \"{r.choice([50, 100, 200])}Gi\"",
                f"{i}      vllmConfig:"]
        extra = []
        for flag, value, comment in args:
            if flag in typed:
                if comment:
                    out.append(f"{i}        # {comment}")
                out.append(f"{i}        {typed[flag]}: {'true' if value is None else value}")
            else:
                extra.append((flag, value, comment))
        out.append(f"{i}        extraArgs:")
        out += render_list(extra, f"{i}          ", "pair")
        out += [f"{i}      env:", f"{i}        - name: VLLM_LOGGING_LEVEL", f"{i}          value: INFO",
                f"{i}      nodeSelectorTerms:", f"{i}        - matchExpressions:",
                f"{i}            - key: nvidia.com/gpu.product", f"{i}              operator: In",
                f"{i}              values: [\"{x.gpu_label}\"]"]
    out += [f"{i}routerSpec:", f"{i}  repository: lmcache/lmstack-router", f"{i}  tag: \"0.1.5\"",
            f"{i}  replicaCount: 1", f"{i}  routingLogic: session", f"{i}  sessionKey: x-user-id"]
    return out


def fmt_prodstack_values(x: Ctx) -> str:
    x.engine = "vllm"
    out = ["# vLLM production-stack values (helm upgrade --install vllm vllm/vllm-stack -f values.yaml)",
           f"# {x.c(GENERAL)}"]
    out += prodstack_values(x, "", x.rng.choice([1, 1, 2]))
    return "\n".join(out) + "\n"


def fmt_helmrelease(x: Ctx) -> str:
    x.engine = "vllm"
    r = x.rng
    out = [f"# {x.c(GENERAL)}", "apiVersion: helm.toolkit.fluxcd.io/v2", "kind: HelmRelease"]
    out += metadata(x, "production-stack", annotations=False)
    out += ["spec:", f"  interval: {r.choice(['10m', '30m', '1h'])}", "  timeout: 15m", "  chart:", "    spec:",
            "      chart: vllm-stack", f"      version: 0.1.{r.randint(3, 9)}", "      sourceRef:",
            "        kind: HelmRepository", "        name: vllm", "        namespace: flux-system",
            "  install:", "    remediation:", "      retries: 3", "  upgrade:", "    cleanupOnFail: true",
            "  values:"]
    out += prodstack_values(x, "    ", r.choice([1, 1, 2]))
    return "\n".join(out) + "\n"


FORMATS = [
    # (name, generator, weight, engine)
    ("llmkube", fmt_llmkube, 12, None),
    ("prodstack-values", fmt_prodstack_values, 8, "vllm"),
    ("helmrelease", fmt_helmrelease, 10, "vllm"),
    ("vllm-serve", fmt_vllm_serve, 16, "vllm"),
    ("python-m-vllm", fmt_python_m_vllm, 8, "vllm"),
    ("sglang", fmt_sglang, 10, "sglang"),
    ("shell", fmt_shell, 12, None),
    ("env-args", fmt_env_args, 8, "vllm"),
    ("kserve", fmt_kserve, 8, "vllm"),
    ("compose", fmt_compose, 8, None),
]


def generate(out: Path, files: int, seed: int) -> dict:
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = [f[0] for f in FORMATS]
    weights = [f[2] for f in FORMATS]
    manifest = {"seed": seed, "files": 0, "bytes": 0, "formats": {}, "hazards": {h: 0 for h in HAZARDS},
                "hazardous_files": 0}
    for index in range(files):
        name = rng.choices(names, weights)[0]
        _, func, _, engine = FORMATS[names.index(name)]
        engine = engine or rng.choice(["vllm", "vllm", "sglang"])
        hazards: set[str] = set()
        if rng.random() < 0.15:
            pool = [h for h in HAZARDS if not (h == "abbrev" and engine == "sglang")]
            hazards = set(rng.sample(pool, rng.choice([1, 1, 2])))
        ctx = Ctx(rng, index, engine, hazards)
        text = func(ctx)
        if name == "compose":
            path = out / name / f"{ctx.name}" / "compose.yaml"
        elif name == "prodstack-values":
            path = out / name / f"{ctx.name}" / "values.yaml"
        else:
            path = out / name / f"{ctx.name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        manifest["files"] += 1
        manifest["bytes"] += len(text.encode())
        manifest["formats"][name] = manifest["formats"].get(name, 0) + 1
        for h in hazards:
            manifest["hazards"][h] += 1
        manifest["hazardous_files"] += bool(hazards)
    (out.parent / f"{out.name}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "dense")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    manifest = generate(args.out, args.files, args.seed)
    print(f"dense corpus: {manifest['files']} files, {manifest['bytes'] / 1e6:.2f} MB, "
          f"{manifest['hazardous_files']} with hazards -> {args.out}")


if __name__ == "__main__":
    main()
