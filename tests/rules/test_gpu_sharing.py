"""CFG209 on engines that share one GPU, for every engine and mixed: the fraction each engine counts is the
one the capacity estimate uses (``cfgcheck.effective``), and the message says where each comes from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cfgcheck import capacity
from cfgcheck.config import load as load_config
from cfgcheck.lint import lint
from helpers import FIXTURES, lint_text

IMAGES = {
    "vllm": ("vllm/vllm-openai:v0.26.0", '["--model", "Qwen/Qwen3-8B"{extra}]'),
    "sglang": ("lmsysorg/sglang:v0.5.23",
               '["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"{extra}]'),
    "tokenspeed": ("lightseekorg/tokenspeed:v0.1.1", '["tokenspeed", "serve", "--model", "Qwen/Qwen3-8B"{extra}]'),
}
# what each engine's unset fraction is on an H100 80GB, and the words the message gives its source in
UNSET = {"vllm": (0.92, "default of vLLM 0.26.0"), "sglang": (0.842, "derived on H100-80GB"),
         "tokenspeed": (0.95, "default of TokenSpeed 0.1.1")}
PAIRS = [("vllm", "vllm"), ("sglang", "sglang"), ("tokenspeed", "tokenspeed"), ("vllm", "sglang"),
         ("sglang", "tokenspeed"), ("tokenspeed", "vllm")]


def _command(engine: str, fraction: str | None) -> str:
    flag = "--mem-fraction-static" if engine == "sglang" else "--gpu-memory-utilization"
    return IMAGES[engine][1].format(extra=f', "{flag}", "{fraction}"' if fraction else "")


def compose(engines: tuple[str, ...], fractions: tuple[str | None, ...] = (None, None)) -> str:
    services = []
    for index, (engine, fraction) in enumerate(zip(engines, fractions)):
        services.append(f"""  {engine}-{index}:
    image: {IMAGES[engine][0]}
    command: {_command(engine, fraction)}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
""")
    return "services:\n" + "".join(services)


def pods(engines: tuple[str, str], fractions: tuple[str | None, str | None] = (None, None)) -> str:
    documents = []
    for index, (engine, fraction) in enumerate(zip(engines, fractions)):
        documents.append(f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {engine}-{index}
spec:
  template:
    spec:
      nodeSelector:
        kubernetes.io/hostname: gpu-node-1
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      runtimeClassName: nvidia
      containers:
        - name: engine
          image: {IMAGES[engine][0]}
          command: {_command(engine, fraction)}
          env:
            - name: NVIDIA_VISIBLE_DEVICES
              value: "0"
""")
    return "---\n".join(documents)


def _shared(tmp_path: Path, text: str, name: str, config: dict | None = None):
    result = lint_text(tmp_path, text, name=name, config=config, select=["CFG209"])
    return result, [f for f in result.findings if f.code == "CFG209"]


@pytest.mark.parametrize("layout", ["compose", "pods"])
@pytest.mark.parametrize("engines", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_unset_fractions_on_one_gpu_are_counted_as_capacity_counts_them(tmp_path: Path, layout: str,
                                                                         engines: tuple[str, str]) -> None:
    text = compose(engines) if layout == "compose" else pods(engines)
    config = {"gpu": "H100"} if layout == "compose" else None  # a compose file names no GPU product
    result, found = _shared(tmp_path, text, "compose.yaml" if layout == "compose" else "pods.yaml", config)
    (finding,) = found
    total = sum(UNSET[engine][0] for engine in engines)
    assert f"sum to {total:.2f}" in finding.message
    for engine in engines:
        assert f"{UNSET[engine][0]:g} ({UNSET[engine][1]}" in finding.message
    for model in result.models:  # the very fraction the capacity estimate of each engine uses
        assert capacity.estimate(model, config or {}).gpu_memory_utilization == pytest.approx(UNSET[model.engine][0])
    assert finding.model_identity == result.models[1].identity  # reported on the engine after the first


@pytest.mark.parametrize("layout", ["compose", "pods"])
def test_written_fractions_say_so_and_a_fit_is_quiet(tmp_path: Path, layout: str) -> None:
    make, name = (compose, "compose.yaml") if layout == "compose" else (pods, "pods.yaml")
    config = {"gpu": "H100"} if layout == "compose" else None
    _, (finding,) = _shared(tmp_path, make(("vllm", "sglang"), ("0.5", None)), name, config)
    assert "sum to 1.34 (vllm-0" in finding.message and "0.5 (written)" in finding.message
    assert "0.842 (derived on H100-80GB" in finding.message
    _, quiet = _shared(tmp_path, make(("sglang", "tokenspeed"), ("0.45", "0.5")), name, config)
    assert quiet == []


def test_sglang_on_an_unknown_gpu_is_counted_at_the_least_it_derives_on_any_gpu(tmp_path: Path) -> None:
    """Without the GPU SGLang's start-up derivation cannot be done: its fraction counts at the least it is on
    any catalogued GPU (0.535 for SGLang 0.5.23, on an 8 GB card). Known fractions above the limit are sure
    (an error); a sum that only the bound takes above it is assumed (a warning that says so)."""
    _, found = _shared(tmp_path, compose(("vllm", "vllm", "sglang"), ("0.6", "0.5", None)), "compose.yaml")
    assert len(found) == 2  # on each engine after the first
    for finding in found:
        assert "sum to at least 1.64" in finding.message and finding.severity == "error"
        assert "sglang-2 at least 0.535 (SGLang's default on any catalogued GPU)" in finding.message
        assert "assumed" not in finding.message
    _, (finding,) = _shared(tmp_path, compose(("vllm", "sglang"), ("0.9", None)), "compose.yaml")
    assert "sum to at least 1.44" in finding.message and finding.severity == "warning"
    assert "assumed: the GPU is not known" in finding.message
    _, quiet = _shared(tmp_path, compose(("vllm", "sglang"), ("0.4", None)), "compose.yaml")
    assert quiet == []  # 0.4 + 0.535 fits


def test_built_engines_with_mounted_scripts_share_device_0_through_count_all() -> None:
    """Two compose services that build their engine images and start them from bind-mounted scripts: one
    reserves device 0 at 0.9, the other ``count: "all"`` with SGLang's default, so it starts on device 0."""
    folder = FIXTURES / "formats" / "compose-built-engines"
    result = lint([folder], load_config(folder), select=["CFG209"])
    (finding,) = result.findings
    assert (finding.location.path, finding.location.line, finding.model) == ("docker-compose.yml", 14, "embed")
    assert "GPU 0" in finding.message and "llm 0.9 (written)" in finding.message
    # the bound is that of the SGLang the built image runs (the newest release's when its version is not known)
    assert re.search(r"embed at least 0\.\d+ \(SGLang's default on any catalogued GPU\)", finding.message)
    assert finding.severity == "warning"


def test_scripts_of_one_folder_that_start_engines_in_the_background_share_the_first_gpu(tmp_path: Path) -> None:
    import shutil

    from helpers import expected_markers, git

    folder = FIXTURES / "formats" / "background-scripts"
    repo = tmp_path / "repo"
    shutil.copytree(folder, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    found = [f for f in lint([repo], load_config(repo)).findings if f.code == "CFG209"]
    expected = {(path.relative_to(folder).as_posix(), line) for path in folder.rglob("*.sh")
                for code, line in expected_markers(path) if code == "CFG209"}
    # foreground alternatives and a CUDA_VISIBLE_DEVICES split are not: only the backgrounded pair at 0.5 + 0.5
    assert {(f.location.path, f.location.line) for f in found} == expected
    assert found[0].severity == "warning" and "if they run at once" in found[0].message
    assert "L40S: spot/start-host.sh:1" in found[0].message and "sum to 1.00" in found[0].message
    # backgrounded alternatives, each sized for the whole L40S (0.85 + 0.85): not meant to run together
    assert not any(f.location.path.startswith("alternatives-background/") for f in found)
    alternatives = [m for m in lint([repo], load_config(repo)).models if m.path.startswith("alternatives-background/")]
    assert len(alternatives) == 2 and all(m.in_background for m in alternatives)
