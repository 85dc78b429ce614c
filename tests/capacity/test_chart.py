"""`cfgcheck capacity --chart FILE` and the before/after curve of the pull-request summary."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

from typer.testing import CliRunner

from cfgcheck.changes import ModelChange, side
from cfgcheck.cli import app
from cfgcheck.github.bodies import chart
from cfgcheck.model import Location, ServedModel, Setting

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: "{name}"}}
spec:
  template:
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.26.0
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '{mml}', --max-num-seqs, '64']
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def test_svg_chart_plots_each_model_with_its_marks(tmp_path):
    (tmp_path / "a.yaml").write_text(MANIFEST.format(name="chat", mml=32768))
    (tmp_path / "b.yaml").write_text(MANIFEST.format(name="x<script>alert(1)</script>", mml=131072))
    out = tmp_path / "c.svg"
    result = CliRunner().invoke(app, ["capacity", "--chart", str(out), str(tmp_path)])
    assert result.exit_code == 0, result.output
    root = ET.fromstring(out.read_text())  # well-formed: names from files are escaped
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 2
    dashed = [line for line in root.findall(f"{ns}line") if line.get("stroke-dasharray") == "6 4"]
    dotted = [line for line in root.findall(f"{ns}line") if line.get("stroke-dasharray") == "2 3"]
    assert len(dashed) == 2 and len(dotted) == 2  # configured max_model_len and max_num_seqs of each model
    assert "<script>" not in out.read_text()


def test_html_chart_is_self_contained(tmp_path):
    (tmp_path / "a.yaml").write_text(MANIFEST.format(name="chat", mml=32768))
    out = tmp_path / "c.html"
    assert CliRunner().invoke(app, ["capacity", "--chart", str(out), str(tmp_path)]).exit_code == 0
    text = out.read_text()
    assert "<svg" in text and "<script" not in text and "src=" not in text and "<link" not in text


def test_chart_needs_a_known_suffix(tmp_path):
    (tmp_path / "a.yaml").write_text(MANIFEST.format(name="chat", mml=32768))
    result = subprocess.run([sys.executable, "-m", "cfgcheck", "capacity", "--chart", str(tmp_path / "c.png"), str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "must end in .svg or .html" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "c.png").exists()


def _served(mml: int) -> ServedModel:
    loc = Location("m.yaml", 1, 1)
    m = ServedModel(name="chat", kind="Deployment", path="m.yaml", document=0, location=loc, engine="vllm",
                    engine_version="0.26.0")
    m.model = Setting("model", "meta-llama/Llama-3.1-8B-Instruct", loc, "model")
    m.add(Setting("max_model_len", mml, loc, "max_model_len"))
    m.add(Setting("max_num_seqs", 64, loc, "max_num_seqs"))
    m.gpu_product = "NVIDIA-H100-80GB-HBM3"
    return m


def test_summary_curve_before_and_after():
    change = ModelChange("chat", "m.yaml", side(_served(8192), {}), side(_served(131072), {}), ["max_model_len"])
    data = chart(change)
    assert "8K*" in data["labels"] and "128K*" in data["labels"]
    assert len(data["before"]) == len(data["after"]) == len(data["labels"]) == len(data["line"])
    assert data["before"] == data["after"]  # same pool: the curve does not move, the configured point does
    unchanged = ModelChange("chat", "m.yaml", side(_served(8192), {}), side(_served(8192), {}), [])
    assert chart(unchanged) is None
