"""Pull requests as reviewers meet them, written for the tests (never copied from ../shared/corpus), and a
runner that makes each one twice: commits in a real local git repository (what diff mode lints) and a
pull request on the fake GitHub (what the API answers). ``bench/review/render_renovate.py`` uses the
same builders to render the Renovate summary before and after.

- ``renovate``: an image bump of 30 served SGLang models in 20 files, v0.5.5.post3 -> v0.5.23; two
  prefill/decode decode servers keep ``--cuda-graph-bs`` (ambiguous in 0.5.23: ``-decode``/``-prefill``)
  and ``--prefill-round-robin-balance`` (gone after 0.5.19) on lines the bump does not touch.
- ``whole_repository``: a pull request adding 24 manifests at once: unpinned images and model revisions
  everywhere, and a few errors of several rules (a parallel size without GPUs, remote code at a moving
  revision, parallel ranks without shared memory, an abbreviated flag with a mechanical fix).
- ``clean``: a pinned, documented served model whose replica count changes.
- ``seed_raise``: the seed ticket's change, ``--max-num-seqs`` 4 -> 64 without capping the context, in a
  repository whose other 20 manifests have the pinning findings of a real one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from helpers import git

NAME = "acme/serving"
DIGEST = "sha256:" + "b" * 64
OLD_SGLANG = "lmsysorg/sglang:v0.5.5.post3-cu129-amd64"
NEW_SGLANG = "lmsysorg/sglang:v0.5.23-cu129-amd64"
MODELS = ["Qwen/Qwen3-8B", "Qwen/Qwen3-4B", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
          "mistralai/Mistral-7B-Instruct-v0.3", "Qwen/Qwen3-0.6B"]
GPU = "NVIDIA-H100-80GB-HBM3"


def deployment(name: str, image: str, args: list[str], *, gpus: int = 1, gpu: str | None = None,
               command: str = '["python3", "-m", "sglang.launch_server"]', shm: bool = False,
               replicas: int = 1, annotations: str = "") -> str:
    """A Deployment of one engine container, the way serving repositories write them."""
    selector = f"      nodeSelector:\n        nvidia.com/gpu.product: {gpu}\n" if gpu else ""
    volumes = ("          volumeMounts:\n            - {name: shm, mountPath: /dev/shm}\n" if shm else "")
    pod_volumes = ("      volumes:\n        - name: shm\n          emptyDir: {medium: Memory, sizeLimit: 16Gi}\n"
                   if shm else "")
    arg_lines = "".join(f"            - {a}\n" for a in args)
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{annotations}spec:\n"
            f"  replicas: {replicas}\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n"
            f"    metadata:\n      labels: {{app: {name}}}\n    spec:\n{selector}      containers:\n"
            f"        - name: engine\n          image: {image}\n          command: {command}\n"
            f"          args:\n{arg_lines}{volumes}          resources:\n            limits:\n"
            f"              nvidia.com/gpu: {gpus}\n{pod_volumes}")


def _sglang_models(image: str) -> dict[str, str]:
    """30 served SGLang models in 20 files; the two decode servers of ``pd/decode.yaml`` carry the flags
    0.5.23 no longer reads as they are written."""
    files: dict[str, list[str]] = {}
    for index in range(28):
        model = MODELS[index % len(MODELS)]
        path = f"serving/team-{index // 2 % 9}/svc-{index // 2}.yaml" if index < 18 else f"serving/solo/svc-{index}.yaml"
        gpu = GPU if index % 3 == 0 else None
        files.setdefault(path, []).append(deployment(
            f"svc-{index}", image, ["--model-path", model, "--context-length", "32768", "--mem-fraction-static",
                                    "0.85", "--max-running-requests", "64"], gpu=gpu))
    for role in ("decode-a", "decode-b"):
        files.setdefault("serving/pd/decode.yaml", []).append(deployment(
            f"pd-{role}", image, ["--model-path", "Qwen/Qwen3-8B", "--disaggregation-mode", "decode",
                                  "--context-length", "32768", "--cuda-graph-bs", "8", "16", "32",
                                  "--prefill-round-robin-balance"], gpu=GPU))
    return {path: "---\n".join(docs) for path, docs in files.items()}


def renovate() -> tuple[dict[str, str], dict[str, str]]:
    """(base files, head files) of the Renovate-style bump."""
    base = _sglang_models(OLD_SGLANG)
    head = {path: text.replace(OLD_SGLANG, NEW_SGLANG) for path, text in base.items()}
    return base, head


def _repository(count: int, *, pinned: bool) -> dict[str, str]:
    """``count`` vLLM manifests as a real repository has them: pinned by digest and revision, or not."""
    files = {}
    for index in range(count):
        model = MODELS[index % len(MODELS)]
        image = f"vllm/vllm-openai:v0.26.0@{DIGEST}" if pinned else \
            ("vllm/vllm-openai:latest" if index % 5 == 0 else "vllm/vllm-openai:v0.26.0")
        args = [model, "--max-model-len", "32768"] + (["--revision", "a" * 40] if pinned else [])
        files[f"apps/{model.split('/')[1].lower()}-{index}.yaml"] = deployment(
            f"app-{index}", image, args, command='["vllm", "serve"]', gpu=GPU)
    return files


def whole_repository() -> tuple[dict[str, str], dict[str, str]]:
    """(base, head): a README, then 20 unpinned manifests and 4 with errors of several rules."""
    head = _repository(20, pinned=False)
    head["apps/broken/tp-without-gpus.yaml"] = deployment(
        "tp-without-gpus", "vllm/vllm-openai:v0.26.0", ["Qwen/Qwen3-8B", "--tensor-parallel-size", "2"],
        command='["vllm", "serve"]', gpu=GPU, shm=True)
    head["apps/broken/remote-code.yaml"] = deployment(
        "remote-code", "vllm/vllm-openai:v0.26.0", ["microsoft/Phi-3.5-mini-instruct", "--trust-remote-code"],
        command='["vllm", "serve"]', gpu=GPU)
    head["apps/broken/no-shm.yaml"] = deployment(
        "no-shm", "vllm/vllm-openai:v0.26.0", ["meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"],
        command='["vllm", "serve"]', gpus=2, gpu=GPU)
    head["apps/broken/abbreviated.yaml"] = deployment(
        "abbreviated", OLD_SGLANG, ["--model-path", "Qwen/Qwen3-8B", "--mem-frac", "0.85"], gpu=GPU)
    return {"README.md": "# serving\n"}, {"README.md": "# serving\n", **head}


CLEAN = deployment("chat", f"vllm/vllm-openai:v0.26.0@{DIGEST}",
                   ["Qwen/Qwen3-8B", "--revision", "a" * 40, "--max-model-len", "32768"],
                   command='["vllm", "serve"]', gpu=GPU, replicas=2)


def clean() -> tuple[dict[str, str], dict[str, str]]:
    """(base, head): one pinned served model whose replica count goes from 2 to 3."""
    return {"apps/chat.yaml": CLEAN}, {"apps/chat.yaml": CLEAN.replace("replicas: 2", "replicas: 3")}


SEED = deployment("qwen3-5-2b", "vllm/vllm-openai:v0.26.0",
                  ["Qwen/Qwen3-8B", "--max-model-len", "131072", "--max-num-seqs", "4"],
                  command='["vllm", "serve"]', gpu=GPU)


def seed_raise() -> tuple[dict[str, str], dict[str, str]]:
    """(base, head): the window raised 4 -> 64 at a 131,072-token context, beside 20 unpinned manifests."""
    base = {**_repository(20, pinned=False), "apps/prod/qwen3-5-2b.yaml": SEED}
    return base, {**base, "apps/prod/qwen3-5-2b.yaml": SEED.replace('- "4"', '- "64"').replace("- 4\n", "- 64\n")}


@dataclass
class Scenario:
    """A pull request in a local checkout and on the fake server, and the environment of an Actions step."""

    gh: object
    tmp: Path
    base: dict[str, str]
    head: dict[str, str]
    repo: Path = field(init=False)
    number: int = field(init=False)

    def __post_init__(self) -> None:
        self.repo = self.tmp / "checkout"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        self._commit(self.base, "base")
        self.base_sha = git(self.repo, "rev-parse", "HEAD").strip()
        git(self.repo, "checkout", "-q", "-b", "feature")
        self._commit(self.head, "change")
        self.gh.add_repo(NAME, files=self.base)
        changes = {path: text for path, text in self.head.items() if self.base.get(path) != text}
        changes.update({path: None for path in self.base if path not in self.head})
        self.number = self.gh.add_pull(NAME, head="feature", changes=changes).number
        self.event = self.tmp / "event.json"
        self._write_event()
        self.step_summary = self.tmp / "step-summary.md"

    def _write_event(self) -> None:
        self.event.write_text(json.dumps({
            "action": "synchronize", "number": self.number,
            "pull_request": {"number": self.number, "base": {"ref": "main", "sha": self.base_sha},
                             "head": {"ref": "feature", "sha": self.gh.repo(NAME).branches["feature"]}},
            "repository": {"full_name": NAME}}))

    def push(self, files: dict[str, str]) -> None:
        """A new commit on the pull request's branch, in the checkout and on the server: ``files`` changed."""
        self.head = {**self.head, **files}
        self._commit(self.head, "push")
        self.gh.push(NAME, "feature", files)
        self._write_event()

    def _commit(self, files: dict[str, str], message: str) -> None:
        for path in git(self.repo, "ls-files").split():
            if path not in files:
                (self.repo / path).unlink()
        for path, text in files.items():
            (self.repo / path).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / path).write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", message)

    def env(self) -> dict[str, str]:
        """What the Action's step sees."""
        return {"GITHUB_TOKEN": self.gh.token, "GITHUB_API_URL": self.gh.url, "GITHUB_REPOSITORY": NAME,
                "GITHUB_EVENT_PATH": str(self.event), "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_STEP_SUMMARY": str(self.step_summary), "GITHUB_OUTPUT": str(self.tmp / "output.txt"),
                "CFGCHECK_GITHUB_THROTTLE": "0", "GITHUB_ACTIONS": "true", "CFGCHECK_HUB": "0"}

    # what the server holds
    def inline(self) -> list:
        return [c for c in self.gh.repo(NAME).review_comments.values() if c.in_reply_to_id is None]

    def summaries(self) -> list:
        return list(self.gh.repo(NAME).issue_comments.values())

    def reviews(self) -> list:
        return list(self.gh.repo(NAME).reviews.values())

    def patches(self) -> dict[str, str | None]:
        return {f["filename"]: f.get("patch") for f in self.gh.repo(NAME).pull_files(self.gh.repo(NAME).pull(self.number))}

