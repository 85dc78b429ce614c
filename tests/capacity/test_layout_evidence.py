"""The GPU a compose layout is written for: an example of the layout in its header (``e.g., Llama-70B on 4x
A100 80GB``) names it, unlike an example list of cards; and a sibling file serving the same model with the
same image shares it. Both only assumed."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.capacity.gpu_table import gpus_in_text
from tests.capacity.test_gpu_evidence import one


def compose(header: str, size: int, image: str = "vllm/vllm-openai:v0.26.0",
            model: str = "meta-llama/Llama-3.3-70B-Instruct") -> str:
    return f"""{header}services:
  qwen:
    image: {image}
    command: ["--model", "{model}", "--tensor-parallel-size", "{size}"]
    ipc: host
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: {size}
              capabilities: [gpu]
"""


LAYOUT = "# Tensor-parallel layout for large models (e.g., Llama-70B on 4x A100 80GB)\n"


def test_an_example_of_the_layout_names_its_gpu_an_example_list_does_not() -> None:
    assert [gpu.name for gpu, _ in gpus_in_text(LAYOUT)] == ["A100-80GB"]
    assert gpus_in_text("# runs on many cards (e.g. T4, L4)") == []


def test_a_sibling_compose_file_of_the_same_model_and_image_shares_its_headers_gpu(tmp_path: Path) -> None:
    files = {"tp/compose.tp4.yaml": compose(LAYOUT, 4).replace("qwen:", "big:"),
             "tp/compose.tp2.yaml": compose("# Two GPUs\n", 2)}
    row = one(tmp_path / "sibling", files)
    assert (row["gpu"], row["gpu_source"]) == ("A100-80GB", "assumed")
    assert row["gpu_origin"].startswith("the header of tp/compose.tp4.yaml, beside it with the same model and image")
    other_image = {**files, "tp/compose.tp2.yaml": compose("# Two GPUs\n", 2, image="lmsysorg/sglang:v0.5.2")}
    assert one(tmp_path / "image", other_image)["gpu"] is None
    elsewhere = {"tp4/compose.yaml": files["tp/compose.tp4.yaml"], "tp2/compose.yaml": files["tp/compose.tp2.yaml"]}
    assert one(tmp_path / "folder", elsewhere)["gpu"] is None
