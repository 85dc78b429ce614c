"""The table of built-in adapters and renderers, registered in ``protocol``'s registry: what the prefilter
reads of each (its MARKERS, its SUFFIXES, the file NAMES it reads whatever their text). The run asks
``has_serving_marker``, ``always_read``, ``file_format`` and ``file_suffixes`` of it before any file holds a
serving marker, so it imports nothing but ``protocol``; the registry (``registry.py``), with the walks over
the adapters and the contexts they work in, is imported for the first file that holds one."""

from __future__ import annotations

from .protocol import (ADAPTERS, LazyAdapter, always_read, file_format, file_suffixes, has_serving_marker,  # noqa: F401
                       read_by_name, register_all)
# always_read, file_format, file_suffixes, has_serving_marker: the run's questions, asked here (lint, stages)

# Every built-in adapter, by module name with what the prefilter reads of it (its MARKERS, its SUFFIXES,
# the file NAMES it reads whatever their text) and the protocol hooks it defines; each is imported the first time anything else of it is
# asked for, so a run over files without a serving marker imports none of them
# (tests/adapters/test_adapter_protocol.py checks this metadata against each module's own).
YAML_WORDS = ("vllm", "sglang", "tokenspeed", "llama")
ENGINE_CONFIG_WORDS = (
    "max-model-len", "max_model_len", "gpu-memory-utilization", "gpu_memory_utilization", "tensor-parallel-size",
    "tensor_parallel_size", "max-num-seqs", "kv-cache", "mem-fraction", "context-length", "model-path",
    "served-model-name", "max-running-requests")
FILE_HOOKS = ("scan_comments", "file_models")  # a format that is not YAML
# In the order they are tried: the user's values mappings first (they override the built-in formats),
# the generic pod-spec walker last.
BUILT_IN = (
    LazyAdapter("formats.mapped", (), hooks=("served_models", "setting_home")),
    LazyAdapter("formats.llmkube", ("llmkube",),
                hooks=("served_models", "index", "refers_forward", "setting_home", "OPERATOR_FIELDS"),
                index_words=("llmkube",)),
    LazyAdapter("formats.production_stack", ("servingenginespec",), hooks=("served_models", "setting_home", "OPERATOR_FIELDS")),
    LazyAdapter("formats.vllm_runtime", ("vllm",), hooks=("served_models", "OPERATOR_FIELDS")),
    LazyAdapter("formats.kserve", ("inferenceservice", "servingruntime"),
                hooks=("served_models", "index", "refers_forward", "OPERATOR_FIELDS"),
                index_words=("inferenceservice", "servingruntime")),
    LazyAdapter("formats.ome", ("ome.io",)),
    LazyAdapter("formats.kubeai", ("kubeai.org", "resourceprofile"), hooks=("served_models", "index", "refers_forward"),
                index_words=("modelservers", "resourceprofile", "kubeai.org")),
    LazyAdapter("formats.rayserve", ("serveconfigv2", "llm_configs", "import_path")),
    LazyAdapter("formats.dynamo", ("dynamographdeployment", "dynamocomponentdeployment")),
    LazyAdapter("formats.kaito", ("kaito.sh", "inference_config"), hooks=("served_models", "refers_forward"),
                index_words=("kaito.sh",)),
    LazyAdapter("formats.llmd", ("modelartifacts", "disaggregatedset")),
    LazyAdapter("formats.llama_swap", ("cmd:",)),
    LazyAdapter("formats.chart_values", YAML_WORDS + ("servingenginespec",)),
    LazyAdapter("formats.compose", YAML_WORDS, documents="plain"),
    LazyAdapter("launch.device_claims", ("resourceclaim",), hooks=("served_models", "index", "refers_forward"),
                index_words=("resource.k8s.io", "resourceclaim")),
    LazyAdapter("launch.config_file", ENGINE_CONFIG_WORDS,
                hooks=("served_models", "index", "refers_forward", "complete_model"), index_words=("--config",)),
    LazyAdapter("launch.model_presets", ("models-preset", "llama_arg_models_preset"),
                hooks=("served_models", "refers_forward", "complete_model"),
                index_words=("models-preset", "llama_arg_models_preset")),
    LazyAdapter("formats.scripts", YAML_WORDS, suffixes=(".sh", ".bash", ".slurm", ".sbatch"), hooks=FILE_HOOKS + ("index",)),
    LazyAdapter("formats.supervisord", ("[program:",), suffixes=(".conf",), hooks=FILE_HOOKS + ("heredoc_models",)),
    LazyAdapter("formats.makefile", YAML_WORDS, suffixes=("Makefile", "makefile", "GNUmakefile", ".mk"), hooks=FILE_HOOKS),
    LazyAdapter("formats.justfile", YAML_WORDS, suffixes=("Justfile", "justfile", ".just"), hooks=FILE_HOOKS),
    # Triton's vLLM backend: a model.json of engine arguments, offered by its name and the engine-argument words
    LazyAdapter("formats.triton_vllm", ENGINE_CONFIG_WORDS, suffixes=("model.json",), hooks=FILE_HOOKS),
    # Dockerfile.gpu, Containerfile.rocm: one Dockerfile per variant, as `docker build -f` names them
    LazyAdapter("formats.containerfile", YAML_WORDS, suffixes=("Dockerfile", "Containerfile", ".dockerfile",
                                                               "Dockerfile.", "Containerfile."),
                hooks=FILE_HOOKS),
    LazyAdapter("formats.pyspec", ("vllm_args", "sglang_args", "tokenspeed_args", "ray.serve.llm", "engineargs"),
                suffixes=(".py",), hooks=FILE_HOOKS),
    LazyAdapter("formats.workflows", YAML_WORDS, documents="plain"),
    LazyAdapter("formats.skypilot", YAML_WORDS, documents="plain"),
    # cluster definitions: read for the GPU of the served models' pods (capacity/fleet.py), they own no model
    LazyAdapter("formats.karpenter", ("karpenter.sh",), hooks=("served_models", "index"), index_words=("karpenter.sh",)),
    LazyAdapter("formats.eksctl", ("eksctl.io",), hooks=("served_models", "index"), index_words=("eksctl.io",)),
    LazyAdapter("formats.gke_compute_class", ("computeclass",), hooks=("served_models", "index"),
                index_words=("computeclass",)),
    LazyAdapter("formats.ome_accelerators", ("acceleratorclass",), hooks=("served_models", "index"),
                index_words=("acceleratorclass",)),
    LazyAdapter("formats.node_labels", ("nodelabels", "node-label", "kind: node", "nodefeaturerule"),
                hooks=("served_models", "index"), index_words=("nodelabels", "node-label", "kind: node", "nodefeaturerule")),
    LazyAdapter("formats.time_slicing", ("timeslicing",), hooks=("served_models", "index"), index_words=("timeslicing",)),
    LazyAdapter("formats.mig_configs", ("mig-configs", "migconfig"), hooks=("served_models", "index"),
                index_words=("mig-configs", "migconfig")),
    # index words: capacity.gpus.RESOURCE_KINDS lower-cased (tests/adapters/test_adapter_protocol.py compares)
    LazyAdapter("formats.gpu_workloads", ("nvidia.com/gpu", "amd.com/gpu"), hooks=("served_models", "index"),
                index_words=("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe", "google.com/tpu",
                             "aws.amazon.com/neuron", "aws.amazon.com/neurondevice", "aws.amazon.com/neuroncore",
                             "habana.ai/gaudi")),
    LazyAdapter("formats.readme_nodes", (), hooks=("served_models", "index")),
    LazyAdapter("formats.terraform", ("node_pool", "node_group", "guest_accelerator", "instance_types", "vm_size",
                                      "machine_type", 'variable "') + YAML_WORDS, suffixes=(".tf", ".tfvars", ".tf.txt"),
                hooks=FILE_HOOKS),
    # its index only appends the file's Services to a list the rules read once every file is in it
    LazyAdapter("formats.workloads", YAML_WORDS, hooks=("served_models", "index"), index_words=("service",)),
    # indexes ConfigMaps for env, scripts and --config files taken from them; reads no document itself
    LazyAdapter("launch.configmaps", (), hooks=("served_models", "index", "refers_forward"), index_words=("configmap",)),
    # records the files kustomizations name that do not exist; once every model is known, applies their
    # images: to the models of the files they include and makes renderings alike one; reads no document itself
    LazyAdapter("launch.kustomizations", (), hooks=("served_models", "index", "settle")),
    # indexes the downloads Jobs make onto claims; once every model is known, names the local paths they fill
    LazyAdapter("launch.claim_downloads", (), hooks=("served_models", "index", "settle"),
                index_words=("persistentvolumeclaim",)),
    # once every model is known, names a local path that is a model folder of the repository by its config.json
    LazyAdapter("launch.repository_models", (), hooks=("served_models", "settle")),
    # once every model is known, the flags of the engine's own arguments source a fork of the engine holds
    LazyAdapter("launch.engine_sources", (), hooks=("served_models", "settle")),
    # indexes load-balancer upstreams; once every model is known, places engines and time-sliced GPUs
    LazyAdapter("launch.colocation", ("upstream",), hooks=("served_models", "index", "settle"), index_words=("upstream",)),
)
register_all(BUILT_IN)
# The renderers of the input stage, by module (under cfgcheck.render) with the file names each renders
# whatever their text (tests/adapters/test_adapter_protocol.py checks them against each module's NAMES).
RENDERERS = {"kustomize": ("kustomization.yaml", "kustomization.yml", "Kustomization"), "helm": ("Chart.yaml",)}
RENDER_PACKAGE = f"{__package__.split('.')[0]}.render"
for renderer, names in RENDERERS.items():
    read_by_name(f"{RENDER_PACKAGE}.{renderer}", names)
# Formats read by name whatever their text: a Terraform module's variables hold the node pools' machine
# types without a word the prefilter knows (checked against formats/terraform.NAMES like the renderers).
NAMED_FORMATS = {"formats.terraform": ("variables.tf", "terraform.tfvars")}
for module, names in NAMED_FORMATS.items():
    read_by_name(f"{ADAPTERS}.{module}", names)
