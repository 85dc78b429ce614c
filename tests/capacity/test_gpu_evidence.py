"""The GPU where no definition states it: the fleet map (`nodes:`), and, assumed with where it was read,
a GPU named beside the workload (a comment on its selector, its GPU request, an operator's GPU count, a
script's header, the model pool), in the file's path, beside another GPU workload on the cluster's only
GPU node, in a README node table or in what the nearest README says its folder runs on; and what capacity
says when none of these states it."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.capacity.gpu_table import gpus_in_text, unknown_gpus_in_text
from cfgcheck.config import ConfigError, validate
from tests.capacity.test_fleet import rows

import pytest

VLLM = 'image: vllm/vllm-openai:v0.10.1\n          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]'


def deployment(name: str = "qwen", placement: str = "", request: str = "nvidia.com/gpu: 1",
               header: str = "") -> str:
    return f"""{header}apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
{placement}      containers:
        - name: vllm
          {VLLM}
          resources:
            limits:
              {request}
"""


def one(repo: Path, files: dict[str, str], config: dict | None = None) -> dict:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    found = [row for row in rows(repo, config) if "qwen" in row["name"]]
    assert len(found) == 1, [row["name"] for row in found]
    return found[0]


def test_free_text_names_gpus_once_and_not_ports_examples_or_links() -> None:
    assert [g.name for g, _ in gpus_in_text("# one 3090")] == ["RTX-3090"]
    assert [g.name for g, _ in gpus_in_text("# with 5090")] == ["RTX-5090"]
    assert [g.name for g, _ in gpus_in_text("fits one H100/80GB")] == ["H100-80GB"]
    assert [g.name for g, _ in gpus_in_text("g5.12xlarge nodes")] == ["A10G"]
    assert [g.name for g, _ in gpus_in_text("Tesla-A100-80G")] == ["A100-80GB"]  # the size picks the card
    assert gpus_in_text("listens on port 5090") == [] and gpus_in_text("host:4090") == []
    assert gpus_in_text("see https://example.com/h100-guide") == []
    assert gpus_in_text("runs on many cards (e.g. T4, L4)") == []
    assert unknown_gpus_in_text("Requires 4x L4 or A100 GPUs") == ["A100"]  # 40 or 80 GB: not a GPU
    assert unknown_gpus_in_text("H264 transcoding") == []
    assert unknown_gpus_in_text("Latency P99: <1s, P95 0.4s") == [] and unknown_gpus_in_text("a P100") == ["P100"]


def test_a_comment_on_the_node_selector(tmp_path: Path) -> None:
    placement = "      # the 4090 box\n      nodeSelector:\n        kubernetes.io/hostname: tower\n"
    row = one(tmp_path / "repo", {"apps/qwen.yaml": deployment(placement=placement)})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-4090", "assumed")
    assert row["gpu_origin"] == "a comment on the node selector at apps/qwen.yaml:8 names '4090'"


def test_a_comment_on_the_gpu_request(tmp_path: Path) -> None:
    row = one(tmp_path / "repo", {"apps/qwen.yaml": deployment(request="nvidia.com/gpu: 1  # one RTX 3090")})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-3090", "assumed")
    assert "a comment on the GPU request at apps/qwen.yaml" in row["gpu_origin"]


def test_a_comment_next_to_the_gpu_count_of_an_operator_resource(tmp_path: Path) -> None:
    service = """apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen
spec:
  modelRef: qwen
  runtime: vllm
  image: vllm/vllm-openai:v0.10.1
  resources:
    gpu: 1  # the L40S
"""
    row = one(tmp_path / "repo", {"llm/service.yaml": service})
    assert (row["gpu"], row["gpu_source"]) == ("L40S", "assumed")
    assert row["gpu_origin"].startswith("a comment on the GPU request at llm/service.yaml:10")


def test_a_scripts_header(tmp_path: Path) -> None:
    script = "#!/usr/bin/env bash\n# with 5090\nset -e\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
    row = one(tmp_path / "repo", {"serve-qwen.sh": script})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-5090", "assumed")
    assert row["gpu_origin"] == "the file's header at serve-qwen.sh:2 names '5090'"


def test_a_comment_on_the_model_pool(tmp_path: Path) -> None:
    values = """servingEngineSpec:
  # one 3090
  modelSpec:
    - name: qwen
      repository: vllm/vllm-openai
      tag: v0.10.1
      modelURL: Qwen/Qwen2.5-7B-Instruct
      requestGPU: 1
      vllmConfig:
        maxModelLen: 8192
  # the router sits on the CPU nodes; L4 nodes come later
routerSpec:
  replicaCount: 1
"""
    row = one(tmp_path / "repo", {"values.yaml": values})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-3090", "assumed")
    assert row["gpu_origin"] == "a comment on the served model's definition at values.yaml:2 names '3090'"


def test_a_comment_beside_another_workload_on_the_clusters_only_gpu_node(tmp_path: Path) -> None:
    jellyfin = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: jellyfin
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/hostname: gpu-node  # the only GPU node: an RTX 3060
      containers:
        - name: jellyfin
          image: jellyfin/jellyfin:10.10.0
          resources:
            limits:
              nvidia.com/gpu: 1
"""
    row = one(tmp_path / "repo", {"media/jellyfin.yaml": jellyfin, "ai/qwen.yaml": deployment()})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-3060", "assumed")
    assert row["gpu_origin"] == ("a comment beside another GPU workload at media/jellyfin.yaml:9 names 'rtx 3060' "
                                 "for host gpu-node, the only GPU node named")


def test_a_readme_node_table_by_node_name_and_not_a_mere_mention(tmp_path: Path) -> None:
    readme = "# Lab\n\nThe lab once had an A6000.\n\n| Node | CPU | GPU |\n|---|---|---|\n| `tower` | Ryzen 9 | RTX 3090 |\n"
    pinned = "      nodeName: tower\n"
    row = one(tmp_path / "repo", {"README.md": readme, "apps/qwen.yaml": deployment(placement=pinned)})
    assert (row["gpu"], row["gpu_source"]) == ("RTX-3090", "assumed")
    assert row["gpu_origin"] == "a README node table at README.md:7 names 'rtx 3090' for host tower"
    mention = one(tmp_path / "mention", {"README.md": "# Lab\n\nThe lab once had an A6000.\n", "apps/qwen.yaml": deployment()})
    assert mention["gpu"] is None


def test_what_the_nearest_readme_says_its_folder_runs_on(tmp_path: Path) -> None:
    section = "# Qwen\n\n## Hardware\n\n- 2x NVIDIA L40S (48 GB)\n\n## Usage\n\nkubectl apply -f .\n"
    row = one(tmp_path / "repo", {"samples/qwen/README.md": section, "samples/qwen/deploy.yaml": deployment()})
    assert (row["gpu"], row["gpu_source"]) == ("L40S", "assumed")
    assert row["gpu_origin"] == "samples/qwen/README.md:5 says '- 2x NVIDIA L40S (48 GB)'"
    files = {"README.md": "Tested on a single L4.\n", "a/README.md": "# A\n\nVerified on 8x H100 80GB nodes.\n",
             "a/deep/qwen.yaml": deployment()}
    nearest = one(tmp_path / "nearest", files)
    assert (nearest["gpu"], nearest["gpu_origin"]) == ("H100-80GB", "a/README.md:3 says 'Verified on 8x H100 80GB nodes.'")
    sibling = one(tmp_path / "sibling", {"a/README.md": "Tested on 8x H100.\n", "b/qwen.yaml": deployment()})
    assert sibling["gpu"] is None  # another folder's README speaks for its own files only


def test_a_readme_that_names_several_gpus_code_or_examples_decides_nothing(tmp_path: Path) -> None:
    several = one(tmp_path / "several", {"README.md": "Tested on A10G and on L4.\n", "qwen.yaml": deployment()})
    assert several["gpu"] is None and "README.md names several GPUs: 'a10g'" in several["gpu_hint"]
    code = "```\n# runs on h100\nkubectl apply -f qwen.yaml\n```\nRuns on any GPU (e.g. T4, L4).\n"
    assert one(tmp_path / "code", {"README.md": code, "qwen.yaml": deployment()})["gpu"] is None
    near = "      # A10G in staging, L4 in production\n      nodeSelector:\n        role: inference\n"
    left_open = one(tmp_path / "open", {"README.md": "Tested on H100 80GB.\n", "qwen.yaml": deployment(placement=near)})
    assert left_open["gpu"] is None  # the README does not decide what a nearer comment left open


def test_a_readme_is_read_only_for_a_served_model_whose_gpu_nothing_nearer_states(tmp_path: Path) -> None:
    from cfgcheck.adapters.core.contexts import Workspace
    from cfgcheck.adapters.formats import readme_nodes
    from cfgcheck.capacity.evidence import documented_gpu
    from cfgcheck.yamlio import LoadedFile

    (tmp_path / "README.md").write_text("Tested on 8x H100 80GB.\n")
    workspace = Workspace(config={"root": str(tmp_path)})
    readme_nodes.index(workspace, LoadedFile("apps/qwen.yaml", "", [], {}))
    found = workspace.spaces["cfgcheck.adapters.core.fleet"]
    assert found.unread and not found.statements  # indexing reads no README
    model = type("Model", (), {"path": "apps/qwen.yaml"})()
    assert documented_gpu(model, found.read_far().statements).gpu.name == "H100-80GB"
    assert not found.unread


def test_a_readme_line_labelled_as_the_gpu_and_a_hardware_sidecar(tmp_path: Path) -> None:
    script = "#!/usr/bin/env bash\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
    label = one(tmp_path / "label", {"README.md": "# Box\n\n- **GPU:** RTX 4090\n- CPU: Ryzen 9\n", "serve-qwen.sh": script})
    assert (label["gpu"], label["gpu_origin"]) == ("RTX-4090", "README.md:3 says '- **GPU:** RTX 4090'")
    table = "| Part | Model |\n|---|---|\n| CPU | Xeon |\n| GPU | NVIDIA Tesla T4 (16GB) |\n"
    row = one(tmp_path / "table", {"README.md": table, "serve-qwen.sh": script})
    assert (row["gpu"], row["gpu_origin"]) == ("T4", "README.md:4 says '| GPU | NVIDIA Tesla T4 (16GB) |'")
    soc = one(tmp_path / "soc", {"README.md": "A box built around the NVIDIA GB10 SoC.\n", "serve-qwen.sh": script})
    assert soc["gpu"] == "GB10"
    support = one(tmp_path / "support", {"README.md": "vLLM has support for H100 and L4.\n", "serve-qwen.sh": script})
    assert support["gpu"] is None
    floor = one(tmp_path / "floor", {"README.md": "FP8 requires an H100 or newer.\n", "serve-qwen.sh": script})
    assert floor["gpu"] is None  # a threshold names a generation, not the card
    sidecar = '{\n  "host": "lab",\n  "system": {"gpu": "AMD Instinct MI300X", "count": 8}\n}\n'
    files = {"README.md": "Tested on an RTX 4090.\n", "runs/hardware.json": sidecar, "runs/serve-qwen.sh": script}
    row = one(tmp_path / "sidecar", files)
    assert (row["gpu"], row["gpu_source"], row["gpu_origin"]) == (
        "MI300X", "assumed", "runs/hardware.json:3 says 'gpu: AMD Instinct MI300X'")


def test_a_path_that_names_one_gpu(tmp_path: Path) -> None:
    row = one(tmp_path / "repo", {"gpu/h100/qwen.yaml": deployment()})
    assert (row["gpu"], row["gpu_source"], row["gpu_origin"]) == (
        "H100-80GB", "assumed", "the file's path gpu/h100/qwen.yaml names 'h100'")
    assert one(tmp_path / "two", {"l4-vs-a10g/qwen.yaml": deployment()})["gpu"] is None
    script = "#!/usr/bin/env bash\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
    level = one(tmp_path / "level", {"bench/MI300X/serve-qwen.sh": script})
    assert (level["gpu"], level["gpu_origin"]) == ("MI300X", "the file's path bench/MI300X/serve-qwen.sh names 'mi300x'")


def test_comments_that_name_several_gpus_or_a_port_decide_nothing_and_say_what_would(tmp_path: Path) -> None:
    placement = "      # A10G in staging, L4 in production\n      nodeSelector:\n        role: inference\n"
    row = one(tmp_path / "repo", {"apps/qwen.yaml": deployment(placement=placement)})
    assert row["gpu"] is None and row["gpu_source"] is None
    assert "names several GPUs: 'a10g'" in row["gpu_hint"] and "nvidia.com/gpu.product" in row["gpu_hint"]
    port = one(tmp_path / "port", {"apps/qwen.yaml": deployment(request="nvidia.com/gpu: 1  # metrics on port 5090")})
    assert port["gpu"] is None


def test_the_fleet_map(tmp_path: Path) -> None:
    pinned = "      nodeSelector:\n        kubernetes.io/hostname: gpu-box\n"
    row = one(tmp_path / "repo", {"apps/qwen.yaml": deployment(placement=pinned)}, {"nodes": {"gpu-box": "RTX-3090"}})
    assert (row["gpu"], row["gpu_source"], row["gpu_origin"]) == ("RTX-3090", "exact", "nodes.gpu-box in .cfgcheck.yaml")
    unknown = one(tmp_path / "unknown", {"apps/qwen.yaml": deployment(placement=pinned)}, {"nodes": {"gpu-box": "RTX-9999"}})
    assert unknown["gpu"] is None and "unknown GPU 'RTX-9999' (nodes.gpu-box in .cfgcheck.yaml)" in unknown["gpu_hint"]
    empty = one(tmp_path / "empty", {"apps/qwen.yaml": deployment(placement=pinned)}, {"nodes": {"gpu-box": None}})
    assert empty["gpu"] is None and "`nodes: {gpu-box: GPU}` in .cfgcheck.yaml" in empty["gpu_hint"]
    only = one(tmp_path / "only", {"apps/qwen.yaml": deployment()}, {"nodes": {"gpu-box": "RTX-3090"}})
    assert (only["gpu"], only["gpu_source"]) == ("RTX-3090", "assumed")
    assert "the fleet map's only GPU node" in only["gpu_origin"]


def test_the_fleet_map_is_validated() -> None:
    assert validate({"nodes": {"gpu-box": "RTX-3090", "nas": None}}, ".cfgcheck.yaml")
    with pytest.raises(ConfigError, match="nodes.gpu-box: expected a GPU name such as RTX-3090"):
        validate({"nodes": {"gpu-box": 3090}}, ".cfgcheck.yaml")
    with pytest.raises(ConfigError, match="nodes: expected a mapping"):
        validate({"nodes": ["gpu-box"]}, ".cfgcheck.yaml")


def test_an_assumed_gpu_lowers_the_findings_that_rest_on_it(tmp_path: Path) -> None:
    from cfgcheck.lint import lint
    from cfgcheck.config import Config

    repo = tmp_path / "repo"
    repo.mkdir()
    long = deployment(request="nvidia.com/gpu: 1  # one T4").replace('"8192"', '"131072"').replace(
        "Qwen2.5-7B-Instruct", "Qwen2.5-14B-Instruct")
    (repo / "qwen.yaml").write_text(long)
    found = [f for f in lint([repo], Config(repo, {})).findings if f.code == "CFG202"]
    assert found and all(f.severity == "warning" for f in found), [(f.severity, f.message) for f in found]
    assert "assumed: the GPU (a comment on the GPU request" in found[0].message
    huge = deployment(request="nvidia.com/gpu: 1  # one T4").replace("Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-405B-Instruct")
    (repo / "qwen.yaml").write_text(huge)
    sure = [f for f in lint([repo], Config(repo, {})).findings if f.code == "CFG202"]
    # 405B in bf16 on one GPU fits no GPU cfgcheck knows: whichever GPU it is, the engine stops
    assert sure and all(f.severity == "error" for f in sure), [(f.severity, f.message) for f in sure]
    assert "the GPU is assumed (a comment on the GPU request" in sure[0].message and "not even" in sure[0].message


def test_readme_tables_are_looked_for_in_the_repository_only_whatever_the_input_is_named(tmp_path: Path) -> None:
    from cfgcheck.adapters.core.contexts import Workspace
    from cfgcheck.adapters.formats import readme_nodes
    from cfgcheck.yamlio import LoadedFile

    (tmp_path / "README.md").write_text("| Host | GPU |\n|---|---|\n| tower | RTX 3090 |\n")
    workspace = Workspace(config={"root": str(tmp_path)})
    for path in ("/dev/stdin", "<stdin>", "../outside/x.yaml", "apps/deep/x.yaml"):
        readme_nodes.index(workspace, LoadedFile(path, "", [], {}))  # returns: no walk above the root
    notes = workspace.spaces["cfgcheck.adapters.core.fleet"].read_far().notes
    assert [(n.host, n.gpu.name, n.location.line) for n in notes] == [("tower", "RTX-3090", 3)]


def test_an_llmkube_models_gpu_memory_is_the_least_a_card_named_beside_it_has(tmp_path: Path) -> None:
    def pair(memory: str, comment: str) -> str:
        return f"""apiVersion: inference.llmkube.dev/v1alpha1
kind: Model
metadata:
  name: qwen
spec:
  source: hf://Qwen/Qwen3-8B
  hardware:
    gpu:
      count: 1
      memory: {memory}  # {comment}
---
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: qwen
spec:
  modelRef: qwen
  runtime: vllm
  resources:
    gpu: 1
"""
    named = one(tmp_path / "named", {"qwen.yaml": pair("8Gi", "needs 8 GB; the L4 has 23 GB")})
    assert (named["gpu"], named["gpu_source"]) == ("L4", "assumed")
    assert named["gpu_origin"].endswith("names 'l4', which has the 8 GiB stated as the least memory")
    smaller = one(tmp_path / "smaller", {"qwen.yaml": pair("32Gi", "was a T4")})  # a T4 has less: not this card
    assert (smaller["gpu"], smaller["gpu_source"], smaller["gpu_origin"]) == ("32GiB", "exact", "stated memory")


def test_a_switched_off_parameter_under_a_list_of_examples_states_no_gpu(tmp_path: Path) -> None:
    app = '''from ray import serve
from ray.serve.llm import LLMConfig, build_openai_app

qwen = LLMConfig(
    model_loading_config=dict(model_id="qwen", model_source="Qwen/Qwen2.5-7B-Instruct"),
    # Pass the desired accelerator type (e.g. A10G, L4, etc.)
    # accelerator_type="A10G",
    engine_kwargs=dict(max_model_len=8192),
)
serve.run(build_openai_app({"llm_configs": [qwen]}))
'''
    row = one(tmp_path / "repo", {"serve_app.py": app})
    assert row["gpu"] is None and row["gpu_source"] is None, row["gpu_origin"]
    stated = app.replace('    # accelerator_type="A10G",\n', "    # runs on one L4\n")
    row = one(tmp_path / "stated", {"serve_app.py": stated})  # a sentence beside it still states the GPU
    assert (row["gpu"], row["gpu_source"]) == ("L4", "assumed")
