"""CFG505 is placed at the volume that loses the weights when the served model's own file writes it, the
model related (a volume another file writes keeps the finding at the model: a chart's named template is
rendered at its object's line, which says nothing of the cache; measured on round 8's charts)."""

from __future__ import annotations

from pathlib import Path

from cfgcheck.config import Config
from cfgcheck.lint import lint
from helpers import make_repo

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: chat}}
spec:
  template:
    spec:
      volumes:
        - name: cache
          emptyDir: {{}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: [{model}]
          volumeMounts:
            - {{name: cache, mountPath: /root/.cache/huggingface}}
"""


def _placed(repo: Path) -> list[tuple[str, int, tuple]]:
    return [(f.location.path, f.location.line, tuple((r.path, r.line) for r in f.related))
            for f in lint([repo], Config(repo)).findings if f.code == "CFG505"]


def test_in_the_models_own_file_at_the_volume(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.yaml": DEPLOYMENT.format(model='"--model", "Qwen/Qwen3-8B"')})
    assert _placed(repo) == [("app.yaml", 8, (("app.yaml", 13),))]

