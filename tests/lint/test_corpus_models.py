"""The real-world corpus (../shared/corpus, read in place, never copied): every file is read without a
traceback, the served models found per repository match the table below, and known hazards are found."""

from __future__ import annotations

from collections import Counter

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import collect, lint
from helpers import CORPUS

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS}")

# served models per (repository, engine); update deliberately when an adapter learns a new shape
EXPECTED = {
    ("Aviator-Coding__home-ops", "llama.cpp"): 1,  # app-template release "vllm" running llama-server
    ("Aviator-Coding__home-ops", "vllm"): 1,
    ("Diaoul__home-ops", "llama.cpp"): 1,
    ("LukeEvansTech__talos-cluster", "llama.cpp"): 1,
    ("Tanguille__cluster", "llama.cpp"): 3,
    ("Tanguille__cluster", "sglang"): 13,
    ("Tanguille__cluster", "vllm"): 17,
    ("amasolov__home-ops", "vllm"): 1,
    ("bjw-s-labs__home-ops", "llama.cpp"): 1,
    ("chingcodes__home-ops", "vllm"): 1,
    ("dapperdivers__dapper-cluster", "vllm"): 1,
    ("defilantech__LLMKube", "llama.cpp"): 14,
    ("defilantech__LLMKube", "vllm"): 5,
    ("eleboucher__homelab", "llama.cpp"): 2,
    ("kserve__kserve", "vllm"): 34,
    ("kubernetes-sigs__lws", "sglang"): 2,
    ("kubernetes-sigs__lws", "vllm"): 2,
    # e2e_test/infra/model_specs.py: a spec per engine-args list, and the entries without any (engine unknown)
    ("lightseekorg__smg", "sglang"): 7,
    ("lightseekorg__smg", "tokenspeed"): 1,
    ("lightseekorg__smg", "unknown"): 9,
    ("lightseekorg__smg", "vllm"): 10,
    ("nklmilojevic__home", "llama.cpp"): 2,
    ("sgl-project__ome", "sglang"): 40,
    ("sgl-project__ome", "vllm"): 19,
    ("teo__homelab-gitops", "vllm"): 1,
    ("vllm-project__aibrix", "sglang"): 14,
    # a KubeRay worker without command runs `ray start`, not the engine; 10 Dynamo graph workers (6 in
    # brixbench, 4 of Dynamo 0.3 graphs whose arguments are in DYN_DEPLOYMENT_CONFIG)
    ("vllm-project__aibrix", "vllm"): 69,
    ("vllm-project__production-stack", "vllm"): 45,
}

# files that hold no served model, and why (everything else must yield at least one)
NOT_SERVED = {
    "defilantech__LLMKube/config/crd/bases/": "CRD schemas",
    "defilantech__LLMKube/config/samples/inference_v1alpha1_model.yaml": "a Model without an InferenceService",
    "defilantech__LLMKube/config/samples/model_prefetch.yaml": "a Model without an InferenceService",
    "defilantech__LLMKube/config/samples/model_s3_source.yaml": "a Model without an InferenceService",
    "defilantech__LLMKube/config/samples/inference_v1alpha1_modelpool.yaml": "ModelPool: no engine",
    "defilantech__LLMKube/config/samples/inference_v1alpha1_modelrouter.yaml": "ModelRouter: no engine",
    "vllm-project__aibrix/samples/modelclaim/": "ModelClaim: no engine",
    "vllm-project__aibrix/samples/batch/": "engine args inside a ConfigMap data string (batch templates)",
    "vllm-project__production-stack/helm/values.schema.json": "not YAML",
    "lightseekorg__smg/.github/workflows/": "CI installs the engines; the e2e harness starts them from model_specs.py",
}


@pytest.fixture(scope="module")
def corpus():
    config = Config(CORPUS)
    loaded, models = collect([CORPUS], config)
    return config, loaded, models


def test_every_file_is_read_and_interpreted_without_traceback(corpus):
    _, loaded, _ = corpus  # collect() ran every adapter on every file: an adapter bug would have raised
    unreadable = {f.path: f.error.message for f in loaded if f.error is not None}
    assert unreadable == {}


def test_served_models_per_repository(corpus):
    _, _, models = corpus
    found = Counter((m.path.split("/")[0], m.engine) for m in models)
    assert dict(found) == EXPECTED
    identities = [m.identity for m in models]
    assert len(identities) == len(set(identities)), "identities must pair base/head versions one to one"
    assert all(m.name and m.name.strip() for m in models)


def test_every_file_with_an_engine_yields_a_model(corpus):
    _, loaded, models = corpus
    with_models = {m.path for m in models}
    missing = [f.path for f in loaded if f.path not in with_models and "/_history/" not in f.path
               and not any(f.path.startswith(prefix) for prefix in NOT_SERVED)]
    assert missing == []


def _models(models, repo):
    return [m for m in models if m.path.startswith(repo + "/")]


def test_teo_homelab_hazards(corpus):
    config, _, models = corpus
    (model,) = _models(models, "teo__homelab-gitops")
    assert model.value("max_num_seqs") == 2
    result = lint([CORPUS / "teo__homelab-gitops"], config, select=["CFG302", "CFG303"])
    codes = {(f.code, f.location.line) for f in result.findings}
    assert ("CFG302", 78) not in codes  # tag: nightly@sha256:... a digest-pinned nightly does not roll (#15)
    assert model.engine_version_confidence == "assumed" and "sha256" in model.engine_version_why
    assert ("CFG303", 79) in codes  # modelURL without a revision


def test_amasolov_hazards(corpus):
    config, _, _ = corpus
    result = lint([CORPUS / "amasolov__home-ops"], config, select=["CFG302", "CFG305"])
    found = {(f.code, f.location.line, f.location.column) for f in result.findings}
    assert ("CFG302", 37, 17) in found  # tag: "latest"
    assert ("CFG305", 45, 40) in found  # extraArgs: ["--api-key", "token-abc123", ...]


def test_kserve_deepseek_dp_ep_utilization_from_env_string(corpus):
    _, _, models = corpus
    path = ("kserve__kserve/docs/samples/llmisvc/dp-ep/deepseek-r1-gpu-rdma-roce/"
            "llm-inference-service-dp-ep-deepseek-r1-pd-gpu-p-deepep-ht-d-pplx.yaml")
    by_name = {m.name: m for m in models if m.path == path}
    decode = by_name["deepseek-r1-0528-pd/decode"]
    setting = decode.setting("gpu_memory_utilization")
    assert setting.value == 0.99 and setting.origin == "env:VLLM_ADDITIONAL_ARGS"
    assert (setting.location.line, setting.location.column) == (38, 46)
    assert decode.value("data_parallel_size") == 16 and decode.gpus.value == 8
    assert by_name["deepseek-r1-0528-pd/prefill"].value("gpu_memory_utilization") == 0.97


def test_app_template_vllm_release_running_llama_cpp(corpus):
    _, _, models = corpus
    by_name = {m.name: m for m in _models(models, "Aviator-Coding__home-ops")}
    assert by_name["vllm"].engine == "llama.cpp"
    assert by_name["vllm"].value("max_model_len") == 262144
    assert "max_num_seqs" not in by_name["vllm"].settings
    assert by_name["vllm/vllm-embed"].engine == "vllm" and by_name["vllm/vllm-embed"].value("gpu_memory_utilization") == 0.2
