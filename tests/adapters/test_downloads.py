"""Downloads before the engine starts: which repository, at which revision, written where; and the
hub repository a local model path then holds (``model_named``)."""

from __future__ import annotations

from cfgcheck.adapters.core.registry import Workspace, index, served_models
from cfgcheck.yamlio import parse_text

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      initContainers:
        - name: fetch
          image: alpine/git:2.45.2
          workingDir: /work
          command: ["sh", "-c"]
          args:
            - |
              cd /data
              git clone --branch v2 https://huggingface.co/org-a/model-a
              git -C model-a checkout 0123456789abcdef0123456789abcdef01234567
              hf download org-b/model-b --local-dir=b --revision main
              aria2c -x 8 -d /data/gguf -o c.gguf https://huggingface.co/org-c/model-c-GGUF/resolve/main/c-Q4_K_M.gguf
          volumeMounts:
            - name: data
              mountPath: /data
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.0
          args: ["--model", "/srv/b"]
          volumeMounts:
            - name: data
              mountPath: /srv
      volumes:
        - name: data
          emptyDir: {}
"""


def _model(text: str):
    loaded = parse_text("pod.yaml", text)
    workspace = Workspace(config={"root": "."})
    index(workspace, loaded)
    (model,) = served_models(workspace, loaded)
    return model


def test_each_download_with_its_revision_target_and_volume() -> None:
    model = _model(POD)
    found = [(d.repo, d.revision, d.target, d.volume, d.location.line) for d in model.downloads]
    assert found == [
        ("org-a/model-a", "0123456789abcdef0123456789abcdef01234567", "/data/model-a", ("data", "model-a"), 16),
        ("org-b/model-b", "main", "/data/b", ("data", "b"), 18),
        ("org-c/model-c-GGUF", "main", "/data/gguf/c.gguf", ("data", "gguf/c.gguf"), 19),
    ]


def test_a_local_path_holds_what_is_downloaded_to_it_through_the_volume() -> None:
    model = _model(POD)
    assert model.model_named is not None
    assert (model.model_named.value, model.model_named.location.line) == ("org-b/model-b", 18)
    assert model.model_named.source == "hf download in init container 'fetch'"
    assert model.model_id() == "org-b/model-b"


def test_a_served_name_names_the_folder_only_when_its_name_is_the_folders() -> None:
    same = _model(POD.replace('"/srv/b"]', '"/srv/Qwen3-8B", "--served-model-name", "Qwen/Qwen3-8B"]'))
    assert same.model_named is not None and same.model_named.value == "Qwen/Qwen3-8B"
    other = _model(POD.replace('"/srv/b"]', '"/srv/chat", "--served-model-name", "Qwen/Qwen3-8B"]'))
    assert other.model_named is None and other.model_id() == "/srv/chat"


def test_a_download_chained_before_the_engine_in_its_own_container_names_the_model() -> None:
    """sh -c "huggingface-cli download ORG/NAME --local-dir /models; vllm ... --model /models": the served
    model is ORG/NAME, unpinned (CFG303), its code trusted at the default branch (CFG306) and written to an
    emptyDir on every start (CFG505); pinned to a commit onto a claim, none of them."""
    from helpers import FIXTURES

    from cfgcheck.config import load as load_config
    from cfgcheck.lint import lint

    folder = FIXTURES / "formats" / "chained-download"
    result = lint([folder], load_config(folder))
    chained = [m for m in result.models if m.name.startswith("chained-download-leader")]
    assert [m.model_named.value for m in chained] == ["Qwen/Qwen3-8B"]
    found = {(f.code, f.location.path.rsplit("/", 1)[-1], f.location.line) for f in result.findings
             if f.code in ("CFG303", "CFG306", "CFG505")}
    leader = "leader-downloads-then-serves.yaml"
    assert found == {("CFG303", leader, 20), ("CFG505", leader, 20), ("CFG306", leader, 22)}


def test_a_script_s_download_names_the_folder_its_engine_serves():
    """``uv run huggingface-cli download --local-dir "$MODEL_LOCATION" $MODEL_NAME`` then ``--model
    "$MODEL_LOCATION"``: the folder holds the repository, for the architecture and the pinning rule."""
    from helpers import FIXTURES, lint_paths

    from cfgcheck.config import load as load_config
    from cfgcheck.lint import collect

    folder = FIXTURES / "formats" / "script-download"
    _, found = collect([folder], load_config(folder))
    models = {m.name: m for m in found}
    serve = models["serve"]
    assert serve.model.value == "$HOME/llm_model" and serve.model_named.value == "Qwen/Qwen2.5-7B-Instruct"
    assert models["pinned"].model_named.value == "Qwen/Qwen3-8B"  # ./models/qwen3, relative to the script's folder
    assert models["moved"].model_named is None  # after a cd elsewhere, ./models/qwen3 is another folder
    pinning = {(f.location.path, f.location.line) for f in lint_paths(folder, root=folder).findings if f.code == "CFG303"}
    assert ("serve.sh", 2) in pinning and not any(path == "pinned.sh" for path, _ in pinning)
