"""What puts engines on one machine or one GPU beyond their own documents: a load balancer's upstream that
lists their ports on one host, and the device plugin's time-slicing (``launch/colocation.py``)."""

from __future__ import annotations

from pathlib import Path

from helpers import FIXTURES, lint_paths

from cfgcheck.config import load as load_config
from cfgcheck.lint import collect

NGINX = """events {}
http {
  upstream local_pool {
    server 127.0.0.1:8001;
    server localhost:8002 max_fails=3;
  }
  upstream spread {
    server gpu-a:9001;
    server gpu-b:9002;
  }
  server { listen 80; location / { proxy_pass http://local_pool; } }
}
"""


def _models(root: Path) -> dict:
    _, models = collect([root], load_config(root))
    return {m.name: m for m in models}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_scripts_behind_one_upstream_run_on_its_host_and_share_gpu_0(tmp_path: Path) -> None:
    _write(tmp_path, {
        "lb/nginx.conf": NGINX,
        "chat.sh": "#!/bin/bash\nvllm serve Qwen/Qwen3-8B --port 8001 --gpu-memory-utilization 0.6\n",
        "embed.sh": "#!/bin/bash\nvllm serve BAAI/bge-m3 --port 8002 --gpu-memory-utilization 0.5\n",
        "a.sh": "#!/bin/bash\nvllm serve Qwen/Qwen3-4B --port 9001 --gpu-memory-utilization 0.9\n",
        "b.sh": "#!/bin/bash\nvllm serve Qwen/Qwen3-4B --port 9002 --gpu-memory-utilization 0.9\n",
        "solo.sh": "#!/bin/bash\nvllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.9\n",
    })
    models = _models(tmp_path)
    assert models["chat"].host == models["embed"].host == "the host of upstream local_pool (lb/nginx.conf:3)"
    assert (models["a"].host, models["b"].host, models["solo"].host) == ("gpu-a", "gpu-b", None)
    found = [f for f in lint_paths(tmp_path, root=tmp_path).findings if f.code == "CFG209"]
    assert [(f.location.path, f.location.line, f.severity) for f in found] == [("embed.sh", 2, "error")]
    assert "GPU 0 on the host of upstream local_pool" in found[0].message
    assert "a process on the host: every GPU, none selected" in found[0].message


def test_a_selected_device_keeps_engines_behind_one_upstream_apart(tmp_path: Path) -> None:
    _write(tmp_path, {
        "nginx.conf": NGINX,
        "chat.sh": "CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B --port 8001 --gpu-memory-utilization 0.6\n",
        "embed.sh": "export CUDA_VISIBLE_DEVICES=1\nvllm serve BAAI/bge-m3 --port 8002 --gpu-memory-utilization 0.5\n",
    })
    assert not [f for f in lint_paths(tmp_path, root=tmp_path).findings if f.code == "CFG209"]


def test_time_slicing_marks_the_pods_that_request_the_shared_resource() -> None:
    root = FIXTURES / "rules" / "CFG209"
    _, models = collect([root / "pass-time-sliced-within-one-gpu.yaml"], load_config(root))
    shared = {m.name: m.pod.shared_gpus for m in models}
    assert shared["big/vllm"] is None  # renameByDefault: nvidia.com/gpu is whole GPUs
    how, where = shared["chat/vllm"]
    assert how == "time-slicing replicas: 2 for nvidia.com/gpu.shared" and where.line == 16
