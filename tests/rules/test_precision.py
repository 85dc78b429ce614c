"""The classes of false positives found on real repositories, each with a fixture of its own.

Every YAML here is written for the test (shapes seen in public repositories, none copied). Each test
failed before the fix: the engine version guessed and trusted, variant images, shell and Kubernetes
variables read as values, GPUs of other pods not counted, local builds and digest-pinned nightlies
treated as unpinned.
"""

from __future__ import annotations

import pytest

from cfgcheck.engines.catalog import catalog_for
from cfgcheck.engines.versions import known_versions, versions
from cfgcheck.engines.images import image_engine, parse_image
from helpers import FIXTURES, lint_fixture, lint_paths, lint_text


def findings(result, code: str | None = None) -> list:
    return [f for f in result.findings if f.suppressed is None and (code is None or f.code == code)]


def deployment(image: str, args: str, gpus: int = 1, extra: str = "", command: str = "") -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      containers:
        - name: engine
          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
          image: {image}
{command}          args: {args}
{extra}"""


# -- class 1: the engine version guessed wrong, then trusted --------------------------------------------


@pytest.mark.parametrize("text, registry, repository, tag, digest, version", [
    ("vllm/vllm-openai:v0.9.0.1", None, "vllm/vllm-openai", "v0.9.0.1", None, "0.9.0.1"),
    ("docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64", None, "lmsysorg/sglang", "v0.5.5.post3-cu129-amd64",
     None, "0.5.5.post3"),
    ("registry.local:5000/team/vllm:0.10.1rc1", "registry.local:5000", "team/vllm", "0.10.1rc1", None, "0.10.1rc1"),
    ("vllm/vllm-openai:nightly@sha256:" + "a" * 64, None, "vllm/vllm-openai", "nightly", "sha256:" + "a" * 64, None),
    ("index.docker.io/library/team-vllm", None, "team-vllm", None, None, None),
])
def test_image_reference_parts(text, registry, repository, tag, digest, version) -> None:
    ref = parse_image(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest, ref.version) == (registry, repository, tag, digest,
                                                                                  version)


@pytest.mark.parametrize("text, engine, variant, version, confidence", [
    ("vllm/vllm-openai:v0.9.0.1", "vllm", None, "0.9.0.1", "exact"),
    ("vllm/vllm-openai:latest", "vllm", None, None, "assumed"),
    ("lmsysorg/sglang:v0.4.6.post1-rocm630", "sglang", "rocm", "0.4.6.post1", "exact"),
    ("vllm/vllm-omni:v0.11.0", "vllm", "omni", "0.11.0", "assumed"),
    ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "vllm", "rocm", "0.8.5", "assumed"),
    ("nvcr.io/nvidia/vllm:25.09-py3", "vllm", "ngc", None, "unknown"),
    ("nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.0", "sglang", "dynamo", None, "unknown"),
    ("ghcr.io/llm-d/llm-d-cuda:v0.3.0", "vllm", "llm-d", None, "unknown"),
    ("ghcr.io/llm-d/llm-d-inference-sim:v0.5.0", None, "llm-d component", None, "unknown"),
    ("mirror.example.com/hub/vllm-openai:v0.9.2", "vllm", None, "0.9.2", "assumed"),
    ("team-sglang:v1.2.2", "sglang", None, None, "unknown"),
    ("${VLLM_IMAGE}", "vllm", None, None, "unknown"),
])
def test_known_images_and_confidence(text, engine, variant, version, confidence) -> None:
    found = image_engine(parse_image(text))
    assert (found.engine, found.variant, found.version, found.confidence) == (engine, variant, version, confidence)
    assert found.why


def test_four_part_version_is_not_checked_as_the_newest(tmp_path) -> None:
    # --preemption-mode existed up to vLLM 0.10.x: before, v0.9.0.1 read as "no version" and 0.33 assumed
    result = lint_text(tmp_path, deployment("vllm/vllm-openai:v0.9.0.1@sha256:" + "b" * 64,
                                            '["--model", "m", "--preemption-mode", "swap"]'))
    assert not [f for f in findings(result) if f.code in ("CFG103", "CFG104") and f.severity == "error"]


def test_version_older_than_every_catalog_is_assumed_not_exact(tmp_path) -> None:
    oldest = versions("vllm")[0]
    catalog = catalog_for("vllm", "0.5.4")
    assert catalog.version == oldest and catalog.assumed
    # --swap-space was removed later; on an assumed version a removed-flag is a warning, never an error
    result = lint_text(tmp_path, deployment("vllm/vllm-openai:v0.5.4", '["--model", "m", "--swap-space", "4"]'))
    assert all(f.severity != "error" for f in findings(result) if f.code.startswith("CFG10"))


def test_local_build_tag_is_not_an_engine_version(tmp_path) -> None:
    result = lint_text(tmp_path, deployment("team-sglang:v1.2.2", '["python3", "-m", "sglang.launch_server", '
                                            '"--model-path", "m", "--enable-deepep-moe"]'))
    removed = findings(result, "CFG104")
    # the newest catalog is only a guess for a version no tag names: a note, never a claim of removal
    assert removed and all(f.severity == "note" and "was removed" not in f.message for f in removed)
    assert "names no SGLang version" in removed[0].message and "local build" in removed[0].message
    assert not findings(result, "CFG301") and not findings(result, "CFG302")


def test_directive_states_the_version_exactly(tmp_path) -> None:
    text = "# cfgcheck: engine-version=0.26.0 built from the v0.26.0 release branch\n" + deployment(
        "team-vllm:dev", '["vllm", "serve", "m", "--kv-cache-memory", "4G"]')
    (finding,) = findings(lint_text(tmp_path, text), "CFG101")
    assert finding.severity == "error" and "(vLLM 0.26.0)" in finding.message


def test_flag_wrong_in_every_version_stays_an_error_when_assumed(tmp_path) -> None:
    result = lint_text(tmp_path, deployment("vllm/vllm-openai:latest", '["--model", "m", "--gpu-memory-utilisation", "0.8"]'))
    (finding,) = findings(result, "CFG103")
    assert finding.severity == "error" and "assumed vLLM" in finding.message


def test_flag_added_later_is_a_warning_when_the_version_is_assumed(tmp_path) -> None:
    # a flag only later versions accept: an error on an exact version, a warning on an assumed one
    if "0.16.0" not in known_versions("vllm"):
        pytest.skip("needs vLLM 0.16.0")
    args = '["--model", "m", "--disable-access-log-for-endpoints", "/health"]'
    exact = findings(lint_text(tmp_path, deployment("vllm/vllm-openai:v0.10.2", args)), "CFG103")
    assumed = findings(lint_text(tmp_path, deployment("mirror.example.com/x/vllm-openai:v0.10.2", args)), "CFG103")
    assert [f.severity for f in exact] == ["error"] and [f.severity for f in assumed] == ["warning"]
    assert "mirror" in assumed[0].message


# -- class 2: variant images add flags --------------------------------------------------------------------


def test_variant_flag_is_a_note_but_a_typo_is_not(tmp_path) -> None:
    result = lint_text(tmp_path, deployment("vllm/vllm-omni:v0.11.0", '["vllm", "serve", "m", "--omni", '
                                            '"--gpu-memory-utilisation", "0.8"]', command=""))
    by_flag = {f.setting: f for f in findings(result, "CFG103")}
    assert by_flag["--omni"].severity == "note"
    assert by_flag["--gpu-memory-utilisation"].severity == "error"


def test_simulator_image_is_not_an_engine(tmp_path) -> None:
    result = lint_text(tmp_path, deployment("ghcr.io/llm-d/llm-d-inference-sim:v0.5.0",
                                            '["--mode", "random", "--model", "m", "--kv-cache-size", "1024"]'))
    assert not [f for f in findings(result) if f.code.startswith("CFG10")]


def test_templated_image_caps_flag_findings_at_warning(tmp_path) -> None:
    result = lint_text(tmp_path, deployment("${ENGINE_IMAGE}", '["vllm", "serve", "m", "--mode", "echo"]'))
    assert [f.severity for f in findings(result, "CFG102")] == ["warning"]


# -- class 3: shell and Kubernetes variables are not values ----------------------------------------------


def test_shell_variable_is_not_an_invalid_integer(tmp_path) -> None:
    script = """
            - |
              START_RANK=$(( LWS_WORKER_INDEX * 2 ))
              exec vllm serve m --data-parallel-size 4 --data-parallel-start-rank $START_RANK"""
    text = deployment("vllm/vllm-openai:v0.26.0", script, gpus=2, command='          command: ["/bin/sh", "-c"]\n')
    assert not findings(lint_text(tmp_path, text), "CFG105")


def test_a_positional_parameter_is_not_an_invalid_integer(tmp_path) -> None:
    (tmp_path / "serve.sh").write_text('vllm serve "$1" --port $2 --max-num-seqs "$3" --max-model-len 4k5\n')
    result = lint_paths(tmp_path, root=tmp_path)
    assert [f.setting for f in findings(result, "CFG105")] == ["--max-model-len"]  # $2, $3: values not known


@pytest.mark.parametrize(("tag", "severity"), [("v0.4.3.post3-cu124", "note"), ("v0.4.2.post4-cu124", "error")])
def test_a_flag_added_between_two_catalogs_around_an_uncatalogued_version_is_undecided(tmp_path, tag, severity):
    text = deployment(f"lmsysorg/sglang:{tag}", '["python3", "-m", "sglang.launch_server", "--model-path", "m", '
                      '"--reasoning-parser", "deepseek-r1"]')
    found = findings(lint_text(tmp_path, text), "CFG103")
    assert [f.severity for f in found] == [severity]  # 0.4.3.post3: between 0.4.2.post4 (lacks) and 0.4.4.post4


@pytest.mark.parametrize(("tag", "severity"), [("v0.4.5-cu125", "note"), ("v0.4.5.post3-cu124", "error")])
def test_a_flag_removed_between_two_catalogs_around_an_uncatalogued_version_is_undecided(tmp_path, tag, severity):
    text = deployment(f"lmsysorg/sglang:{tag}", '["python3", "-m", "sglang.launch_server", "--model-path", "m", '
                      '"--disable-mla"]')
    found = findings(lint_text(tmp_path, text), "CFG104")
    assert [f.severity for f in found] == [severity]  # 0.4.5: between 0.4.4.post4 (accepts) and 0.4.5.post3


def test_literal_script_variables_are_expanded_where_written(tmp_path) -> None:
    script = """
            - |
              TP=4
              export MAX_LEN=${MAX_LEN:-8192}
              vllm serve m --tensor-parallel-size $TP --max-model-len ${MAX_LEN} --max-num-seqs ${SEQS:-16}"""
    text = deployment("vllm/vllm-openai:v0.26.0", script, gpus=2, command='          command: ["bash", "-c"]\n')
    result = lint_text(tmp_path, text)
    (mismatch,) = findings(result, "CFG208")
    assert "tensor 4" in mismatch.message and mismatch.severity == "error"
    assert mismatch.location.line == 14  # the "4" of TP=4, where the value is written


def test_kubelet_expands_container_env(tmp_path) -> None:
    env = """          env:
            - name: MODEL_ID
              value: org/model
            - name: TP
              value: "2"
            - name: TOKEN
              valueFrom: {secretKeyRef: {name: hf, key: token}}
"""
    args = '["--model", "$(MODEL_ID)", "--tensor-parallel-size", "$(TP)", "--max-model-len", "$(LEN)"]'
    from cfgcheck.config import Config
    from cfgcheck.lint import collect

    target = tmp_path / "d.yaml"
    target.write_text(deployment("vllm/vllm-openai:v0.26.0", args, gpus=2, extra=env))
    _, (model,) = collect([target], Config(tmp_path))
    assert model.value("model") == "org/model" and model.value("tensor_parallel_size") == 2
    assert model.setting("tensor_parallel_size").location.line == 16  # the env value
    assert model.value("max_model_len") == "$(LEN)"  # undefined: stays as written, unknown
    assert not findings(lint_text(tmp_path, target.read_text()), "CFG105")


# -- class 4: multi-node and shared topologies ------------------------------------------------------------

RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: two-node
spec:
  headGroupSpec:
    template:
      spec:
        containers:
          - name: head
            image: vllm/vllm-openai:v0.26.0
            command: ["/bin/bash", "-c"]
            args: ["ray start --head; vllm serve m --tensor-parallel-size {tp} --distributed-executor-backend ray"]
            resources:
              limits:
                nvidia.com/gpu: 1
  workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      template:
        spec:
          containers:
            - name: worker
              image: vllm/vllm-openai:v0.26.0
              resources:
                limits:
                  nvidia.com/gpu: 1
"""


def test_ray_worker_gpus_are_counted(tmp_path) -> None:
    assert not findings(lint_text(tmp_path, RAY.format(tp=2)), "CFG208")
    (finding,) = findings(lint_text(tmp_path, RAY.format(tp=4)), "CFG208")
    assert "2 GPUs requested: the engine cannot start" in finding.message


def test_leader_worker_set_group_is_counted(tmp_path) -> None:
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: big
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
          - name: leader
            image: vllm/vllm-openai:v0.26.0
            command: ["sh", "-c", "ray start --head && vllm serve m --tensor-parallel-size 8 --pipeline-parallel-size 2"]
            resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      spec:
        containers: [{name: worker, image: "vllm/vllm-openai:v0.26.0", resources: {limits: {nvidia.com/gpu: 8}},
                      command: ["sh", "-c", "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"]}]
"""
    assert not findings(lint_text(tmp_path, text), "CFG208")


def test_production_stack_ray_spec_is_counted(tmp_path) -> None:
    text = """servingEngineSpec:
  modelSpec:
    - name: pp
      repository: vllm/vllm-openai
      tag: v0.26.0
      modelURL: org/model
      replicaCount: 1
      requestGPU: 1
      vllmConfig:
        tensorParallelSize: 1
        pipelineParallelSize: 2
      raySpec:
        enabled: true
        headNode:
          requestGPU: 1
"""
    assert not findings(lint_text(tmp_path, text, name="values.yaml"), "CFG208")


def test_compose_gpu_ids_from_a_variable_are_unknown(tmp_path) -> None:
    text = """services:
  engine:
    image: vllm/vllm-openai:v0.26.0
    command: ["--model", "m", "--tensor-parallel-size", "2"]
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["${GPU_IDS}"]
              capabilities: [gpu]
"""
    assert not findings(lint_text(tmp_path, text, name="compose.yaml"), "CFG208")


def test_idle_gpus_are_a_warning(tmp_path) -> None:
    (finding,) = findings(lint_text(tmp_path, deployment("vllm/vllm-openai:v0.26.0", '["--model", "m"]', gpus=2)),
                          "CFG208")
    assert finding.severity == "warning" and "stay idle" in finding.message


# -- class 5: locally built images -------------------------------------------------------------------------


def test_compose_build_has_nothing_to_pin(tmp_path) -> None:
    text = """services:
  engine:
    build: ./engine
    image: team/engine:dev
    command: ["vllm", "serve", "m", "--swap-space", "4"]
"""
    result = lint_text(tmp_path, text, name="compose.yaml")
    assert not findings(result, "CFG301") and not findings(result, "CFG302")
    assert all(f.severity == "note" for f in findings(result, "CFG104"))  # the build names no version


# -- class 6: digest-pinned rolling tags do not roll ---------------------------------------------------------


def test_digest_pinned_nightly_is_not_unpinned_and_says_what_it_assumed(tmp_path) -> None:
    image = "vllm/vllm-openai:nightly@sha256:" + "c" * 64
    result = lint_text(tmp_path, deployment(image, '["--model", "m", "--swap-space", "4"]'))
    assert not findings(result, "CFG301") and not findings(result, "CFG302")
    (removed,) = findings(result, "CFG104")
    assert removed.severity == "warning" and "nightly" in removed.message and "sha256" in removed.message


def test_nnodes_counts_the_pods_of_one_template(tmp_path) -> None:
    statefulset = deployment("lmsysorg/sglang:v0.5.5", '["python3", "-m", "sglang.launch_server", "--model-path", "m", '
                             '"--tp", "{tp}", "--nnodes", "2", "--node-rank", "$(RANK)"]', gpus=4).replace(
                                 "kind: Deployment", "kind: StatefulSet")
    assert not findings(lint_text(tmp_path, statefulset.replace("{tp}", "8")), "CFG208")
    (finding,) = findings(lint_text(tmp_path, statefulset.replace("{tp}", "16")), "CFG208")
    assert "8 GPUs requested (2 nodes x 4)" in finding.message and finding.severity == "error"


def test_sizing_from_variables_is_unknown_not_the_default(tmp_path) -> None:
    script = """
            - |
              vllm serve Qwen/Qwen3-8B --max-model-len $MAX_LEN --gpu-memory-utilization ${UTIL}"""
    text = deployment("vllm/vllm-openai:v0.26.0", script, command='          command: ["sh", "-c"]\n')
    text += "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
    result = lint_text(tmp_path, text)
    assert not [f for f in findings(result) if f.code.startswith("CFG2")]  # before: CFG202 on the defaults
    from cfgcheck.capacity import estimate

    (model,) = result.models
    assert "set from a variable: not known" in " ".join(estimate(model).reasons)


def test_sglang_caps_requests_at_the_pool_instead_of_refusing_to_start(tmp_path) -> None:
    """SGLang's max_req_len is min(context_len, pool) - 1 (managers/tp_worker.py): a context above the
    pool is a warning that says what SGLang refuses, not a start failure."""
    fixture = FIXTURES / "rules" / "CFG202" / "fail-sglang-pool-below-context.yaml"
    (finding,) = [f for f in lint_fixture(fixture, tmp_path).findings if f.code == "CFG202"]
    assert finding.severity == "warning", finding.message
    assert "SGLang starts and refuses requests longer than 8,191 tokens" in finding.message
    assert "will not start" not in finding.message
