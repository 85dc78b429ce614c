"""Operator formats: KubeAI, KAITO, Dynamo, Ray Serve LLM, llm-d,
each served model with its engine, model, GPUs and settings located where the file writes them."""

from __future__ import annotations

from cfgcheck.adapters.core.registry import Workspace, index, served_models
from cfgcheck.capacity.gpus import resolve_gpu
from cfgcheck.config import Config
from cfgcheck.lint import lint
from cfgcheck.yamlio import parse_text
from helpers import FIXTURES

OPERATORS = FIXTURES / "formats" / "operators"


def models_of(name: str):
    loaded = parse_text(name, (OPERATORS / name).read_text())
    assert loaded.error is None
    workspace = Workspace(config={"root": str(OPERATORS)})
    index(workspace, loaded)
    return {m.name: m for m in served_models(workspace, loaded)}


def at(setting):
    return setting.location.line, setting.location.column


def findings(name: str, code: str):
    result = lint([OPERATORS / name], Config(root=OPERATORS))
    return [(f.location.line, f.location.column, f.severity) for f in result.findings if f.code == code]


def test_kubeai_vllm_model_profile_gpus_and_skipped_servers():
    models = models_of("kubeai-models.yaml")
    assert set(models) == {"qwen-coder-l4", "llama-pvc"}  # the OLlama model is not ours
    qwen = models["qwen-coder-l4"]
    assert qwen.engine == "vllm" and qwen.model.value == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert at(qwen.model) == (8, 8)  # spec.url
    assert qwen.value("max_model_len") == 32768 and qwen.gpus.value == 2 and at(qwen.gpus) == (18, 20)
    assert resolve_gpu(qwen)[0].name == "L4"
    assert qwen.engine_version_confidence == "assumed" and qwen.replicas.value == 1
    assert qwen.env["VLLM_LOGGING_LEVEL"].value == "INFO"
    pvc = models["llama-pvc"]
    assert pvc.model.value == "/model" and pvc.engine_version == "0.10.1"
    assert resolve_gpu(pvc)[0].name == "A100-80GB"
    assert (12, 7, "warning") in findings("kubeai-models.yaml", "CFG101")  # --max-num-batched-token


def test_kaito_workspace_reads_its_configmap_keys_as_flags():
    models = models_of("kaito-workspace.yaml")
    assert set(models) == {"workspace-qwen"}  # the transformers runtime is not vLLM
    qwen = models["workspace-qwen"]
    assert qwen.model.value == "Qwen/Qwen2.5-Coder-7B-Instruct" and at(qwen.model) == (26, 11)  # the preset's model
    assert len(qwen.model_revision.value) == 40 and qwen.engine_version_confidence == "assumed"
    assert qwen.gpus.value == 1 and resolve_gpu(qwen)[0].name == "A100-80GB"  # KAITO's SKU table
    assert qwen.value("max_model_len") == 16384 and at(qwen.setting("max_model_len")) == (10, 22)
    assert qwen.node_selector == {"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4"}
    assert (12, 7) in [f[:2] for f in findings("kaito-workspace.yaml", "CFG101")]  # max-num-seq


def test_kaito_inferenceset_template_and_replicas():
    phi = models_of("kaito-inferenceset.yaml")["phi-set"]
    assert phi.engine == "vllm" and phi.replicas.value == 3 and at(phi.replicas) == (6, 13)
    assert phi.gpu_labels == [("node.kubernetes.io/instance-type", "Standard_NV36ads_A10_v5")]
    assert phi.model.value == "microsoft/Phi-4-mini-instruct" and resolve_gpu(phi)[0].name.startswith("A10")


def test_kaito_node_estimate_spreads_a_large_preset_over_nodes():
    from cfgcheck.adapters.formats.kaito import estimated_nodes
    a100 = {"gpus": 1, "gpu_memory_bytes": 80 * 1024**3, "gpu_model": "NVIDIA A100"}
    assert estimated_nodes("meta-llama/Llama-3.1-8B-Instruct", a100) == 1
    assert estimated_nodes("meta-llama/Llama-3.3-70B-Instruct", a100) == 3  # ~141 GB at ~62 GiB a GPU
    assert estimated_nodes("some/unknown-model", a100) == 1


def test_dynamo_graph_workers_roles_gpus_and_skipped_services():
    models = models_of("dynamo-graph.yaml")
    assert set(models) == {"chat/decode", "chat/prefill"}  # frontend and TensorRT-LLM are not engines
    decode, prefill = models["chat/decode"], models["chat/prefill"]
    assert decode.gpus.value == 8 and decode.gpus_span == "group"  # 4 per node x 2 nodes
    assert decode.replicas.value == 2 and decode.value("tensor_parallel_size") == 8
    assert resolve_gpu(decode)[0].name == "H100-80GB"
    assert decode.disaggregation[1] == "decode" and prefill.disaggregation == (decode.disaggregation[0], "prefill")
    assert prefill.model.value == "meta-llama/Llama-3.3-70B-Instruct" and prefill.gpus.value == 4
    assert findings("dynamo-graph.yaml", "CFG215") == []


def test_rayservice_llm_config_engine_kwargs_are_keywords():
    models = models_of("rayservice-llm.yaml")
    assert set(models) == {"llm/llms/0"}  # the head runs `ray start`, not an engine
    llm = models["llm/llms/0"]
    assert llm.model.value == "Qwen/Qwen2.5-7B-Instruct" and at(llm.model) == (15, 27)
    assert llm.value("max_model_len") == 8192 and at(llm.setting("max_model_len")) == (18, 28)
    assert llm.gpu_product == "L4" and llm.gpus.value == 4 and llm.replicas.value == 1
    unknown = findings("rayservice-llm.yaml", "CFG103")
    assert [f[:2] for f in unknown] == [(20, 13), (21, 13)]  # max_num_seq (a prefix), enable-prefix-caching (dashes)
    assert findings("rayservice-llm.yaml", "CFG101") == []


def test_ray_head_running_ray_start_is_not_a_served_model():
    models = models_of("raycluster-head-only.yaml")
    assert set(models) == {"serve-job/ray-head"}  # the RayCluster's head and workers only join Ray
    job = models["serve-job/ray-head"]
    assert job.gpus.value == 8 and job.gpus_span == "group"  # 2 workers x 4 GPUs
    assert findings("raycluster-head-only.yaml", "CFG208") == []


def test_llmd_values_decode_and_prefill_from_chart_semantics():
    models = models_of("llmd-values.yaml")
    assert set(models) == {"decode/vllm", "prefill/vllm"}
    decode, prefill = models["decode/vllm"], models["prefill/vllm"]
    assert decode.model.value == "Qwen/Qwen3-32B" and at(decode.model) == (3, 9)  # inside the quotes of modelArtifacts.uri
    assert decode.value("tensor_parallel_size") == 4 and decode.gpus.value == 4 and decode.replicas.value == 2
    assert str(decode.value("port")) == "8200" and decode.value("max_model_len") == 32768
    assert prefill.value("tensor_parallel_size") == 2 and prefill.value("max_num_seqs") == 8
    assert decode.engine_variant == "llm-d" and decode.disaggregation[1] == "decode"
    assert findings("llmd-values.yaml", "CFG215") == []


def test_llmd_values_ports_are_the_charts_decode_behind_the_proxy_prefill_on_the_service_port():
    """Values that leave routing.proxy to the chart's defaults (enabled, targetPort 8200): the chart runs decode's
    vLLM with --port 8200 behind the routing sidecar and prefill's with routing.servicePort, so the containerPorts
    8200 and 8000 are the engines' (no CFG503)."""
    models = models_of("llmd-values-chart-ports.yaml")
    decode, prefill = models["decode/vllm"], models["prefill/vllm"]
    assert str(decode.value("port")) == "8200" and str(prefill.value("port")) == "8000"
    assert decode.model.value == "Qwen/Qwen3-0.6B"
    assert findings("llmd-values-chart-ports.yaml", "CFG503") == []
    assert str(models_of("llmd-values.yaml")["prefill/vllm"].value("port")) == "8000"  # servicePort, not targetPort


def test_kubeai_models_chart_catalog_enabled_entries_only():
    models = models_of("kubeai-catalog-values.yaml")
    assert set(models) == {"mistral-small-h100", "gemma-tpu"}  # disabled entries and OLlama are not vLLM's
    tpu = models["gemma-tpu"]
    assert tpu.gpu_resource == "google.com/tpu" and tpu.gpus.value == 1
    assert tpu.node_selector["cloud.google.com/gke-tpu-accelerator"] == "tpu-v5-lite-podslice"  # the GKE values
    mistral = models["mistral-small-h100"]
    assert mistral.value("tensor_parallel_size") == 2 and mistral.gpus.value == 2
    assert mistral.gpus.source.startswith("catalog.mistral-small-h100.resourceProfile")
    assert resolve_gpu(mistral)[0].name == "H100-80GB"


def test_kaito_multirole_inference_prefill_and_decode():
    models = models_of("kaito-multirole.yaml")
    prefill, decode = models["llama-pd/prefill"], models["llama-pd/decode"]
    assert prefill.model.value == decode.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert prefill.replicas.value == 2 and decode.value("max_model_len") == 32768
    assert at(decode.setting("max_model_len")) == (8, 22) and prefill.value("max_model_len") == "auto"  # KAITO passes auto
    assert prefill.disaggregation[1] == "prefill" and decode.disaggregation == (prefill.disaggregation[0], "decode")


def test_ray_serve_application_of_its_own_one_model_per_variable():
    models = models_of("rayservice-custom-app.yaml")
    assert set(models) == {"multiplex/llm/MODEL_1_ID", "multiplex/llm/MODEL_2_ID"}  # not SERVED_MODEL_NAME
    gemma = models["multiplex/llm/MODEL_1_ID"]
    assert gemma.engine == "vllm" and gemma.engine_version == "0.6.3" and gemma.engine_version_confidence == "exact"
    assert gemma.model.value == "google/gemma-2-9b-it" and gemma.replicas.value == 2
    assert gemma.gpus.value == 4 and resolve_gpu(gemma)[0].name == "L4"


def test_serve_config_file_llm_configs_of_a_builder_of_its_own():
    models = models_of("serve-config.yaml")
    falcon = models["serve-config.yaml/falcon/0"]
    assert falcon.model.value == "tiiuae/Falcon3-1B-Instruct" and falcon.value("max_model_len") == 4096
    assert falcon.value("enable_prefix_caching") is False  # a false keyword is False, not the bare switch
    unknown = findings("serve-config.yaml", "CFG103")
    assert [f[:3] for f in unknown] == [(13, 9, "error"), (15, 9, "error")]  # a prefix; a typo set to false


def test_cpu_offload_keeps_weights_off_the_gpu_in_the_pool_estimate():
    from cfgcheck.capacity import estimate
    model = models_of("kubeai-cpu-offload.yaml")["llama-70b-offload"]
    est = estimate(model)
    assert est.gpu == "H100-80GB" and est.kv_pool_tokens and est.kv_pool_tokens > 16384
    assert findings("kubeai-cpu-offload.yaml", "CFG202") == []


def test_dynamo_03_graph_arguments_from_the_deployment_config_json():
    models = models_of("dynamo-graph-v03.yaml")
    assert set(models) == {"chat-v03/VllmWorker", "chat-v03/PrefillWorker"}  # the Processor requests no GPU
    decode, prefill = models["chat-v03/VllmWorker"], models["chat-v03/PrefillWorker"]
    assert decode.model.value == "Qwen/Qwen3-8B" and decode.value("max_model_len") == 16384
    assert decode.replicas.value == 2 and decode.disaggregation[1] == "decode" and prefill.disaggregation[1] == "prefill"
    line = (OPERATORS / "dynamo-graph-v03.yaml").read_text().splitlines()[9]
    assert at(decode.setting("max_num_seqs")) == (10, line.index('"max-num-seq"') + 2)  # the key inside the JSON
    assert (10, line.index('"max-num-seq"') + 2) in [f[:2] for f in findings("dynamo-graph-v03.yaml", "CFG101")]


def test_llmd_model_service_resource_roles_model_variables_and_accelerator():
    models = models_of("llmd-modelservice.yaml")
    assert set(models) == {"mistral-pd/decode/vllm", "mistral-pd/prefill/vllm", "from-a-claim/decode/vllm"}
    decode, prefill = models["mistral-pd/decode/vllm"], models["mistral-pd/prefill/vllm"]  # no busybox, no
    # ModelService of another API group
    assert decode.engine == "vllm" and decode.model.value == "mistralai/Mistral-7B-Instruct-v0.3"
    assert at(decode.model) == (25, 14) and decode.value("max_model_len") == 16384
    assert decode.value("tensor_parallel_size") == 2 and decode.gpus is None  # the base config's resources
    assert decode.gpu_product == "NVIDIA-L40S" and resolve_gpu(decode)[0].name == "L40S"
    assert decode.disaggregation[1] == "decode" and decode.replicas.value == 2
    assert prefill.model.value == "mistralai/Mistral-7B-Instruct-v0.3" and prefill.gpu_product is None
    assert prefill.value("max_num_batched_tokens") == 8192 and prefill.disaggregation[1] == "prefill"
    claim = models["from-a-claim/decode/vllm"]
    assert claim.model.value == "/model-cache/models/qwen3-14b" and claim.value("gpu_memory_utilization") == 0.9


def test_kubeai_profile_image_name_selects_the_image_the_repositorys_kubeai_values_set():
    models = models_of("kubeai-profile-images.yaml")
    radeon, l4 = models["qwen-radeon"], models["qwen-l4"]
    assert radeon.image.value == "rocm/vllm:latest" and at(radeon.image) == (22, 20)
    assert radeon.image.source == "spec.values.modelServers.VLLM.images.amd-gpu"
    assert l4.image is None and l4.engine_version_confidence == "assumed"  # the chart's nvidia-gpu image
    assert findings("kubeai-profile-images.yaml", "CFG302") == [(22, 20, "warning")]
