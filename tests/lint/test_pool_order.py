"""Which files a worker process builds and which the run builds in order (``stages.py``,
``registry.shares_index``, ``registry.ORDER_FREE``): a file whose index hooks only add to what is read once
every file is read is built by a worker, one whose models read what earlier files indexed is handed to the
run, and the report is the same with one process and with two workers however the files are dealt."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cfgcheck import pool, stages, whole_run as whole_run_module
from cfgcheck.config import Config
from cfgcheck.lint import lint, serving_filter
from cfgcheck.lint_command import render_lint

POD = """\
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "{length}", "--port", "{port}"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""
# a GPU workload pinned to a host, a comment naming its GPU (formats/gpu_workloads.py: the cluster definitions)
PINNED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pinned{n}
spec:
  template:
    spec:
      # one RTX 4090 on this box
      nodeName: gpu-box-{n}
""" + POD
# a Job that downloads weights onto a claim the engine mounts (launch/claim_downloads.py)
CLAIMED = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: fetch{n}
spec:
  template:
    spec:
      containers:
        - name: fetch
          image: python:3.12
          command: ["hf", "download", "Qwen/Qwen3-8B", "--local-dir", "/weights/qwen"]
          volumeMounts: [{{name: w, mountPath: /weights}}]
      volumes: [{{name: w, persistentVolumeClaim: {{claimName: weights{n}}}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: claimed{n}
spec:
  template:
    spec:
      volumes: [{{name: w, persistentVolumeClaim: {{claimName: weights{n}}}}}]
""" + POD.replace('"Qwen/Qwen3-8B"', '"/weights/qwen"')
# an nginx upstream in front of engines (launch/colocation.py), beside a served Deployment
UPSTREAM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: balanced{n}
  annotations:
    nginx.conf: |
      upstream engines {{
        server 127.0.0.1:8001;
        server 127.0.0.1:8002;
      }}
spec:
  template:
    spec:
""" + POD
# a KServe InferenceService with its own containers: the runtimes other files index are not read
KSERVE_OWN = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: own{n}
spec:
  predictor:
""" + POD.replace("      containers", "    containers").replace("\n        ", "\n      ")
# a KServe InferenceService that takes a runtime by name: built by the run, after the runtime's file
KSERVE_RUNTIME = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: named{n}
spec:
  predictor:
    model:
      modelFormat: {{name: huggingface}}
      runtime: rt{n}
      storageUri: hf://Qwen/Qwen3-8B
      args: ["--max-model-len", "{length}"]
"""
RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: rt{n}
spec:
  supportedModelFormats: [{{name: huggingface}}]
  containers:
    - name: kserve-container
      image: kserve/huggingfaceserver:v0.15.0
      args: ["--model_name={{{{.Name}}}}", "--backend=vllm", "--gpu-memory-utilization", "0.95"]
      resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
KINDS = {"pinned": PINNED, "claimed": CLAIMED, "upstream": UPSTREAM, "kserve-own": KSERVE_OWN,
         "kserve-named": KSERVE_RUNTIME, "runtime": RUNTIME}


def _tree(folder: Path) -> Path:
    # each kind twice; an InferenceService's runtime in a file after it and one before it
    for n in range(2):
        for kind, text in KINDS.items():
            name = f"{('z', '0')[n] if kind == 'runtime' else 'a'}-{kind}-{n}.yaml"
            (folder / name).write_text(text.format(n=n, length=8192 * (n + 1), port=8001 + n), encoding="utf-8")
    return folder


def _staged(folder: Path) -> dict[str, str]:
    """What a worker answers for each file: "staged" (it built the models) or "text" (the run builds them)."""
    config = Config(folder)
    worker = stages._Worker(config, True, serving_filter(config), None, stages._Watched(config=config.as_dict()))
    return {path.name: worker.stage(path)[0] for path in sorted(folder.glob("*.yaml"))}


def test_a_worker_builds_the_files_whose_models_need_no_earlier_file(tmp_path: Path) -> None:
    answers = _staged(_tree(tmp_path))
    built_here = {name.split("-", 1)[1].rsplit("-", 1)[0] for name, answer in answers.items() if answer == "staged"}
    assert built_here == {"pinned", "claimed", "upstream", "kserve-own"}
    assert {answers["a-kserve-named-0.yaml"], answers["0-runtime-1.yaml"], answers["z-runtime-0.yaml"]} == {"text"}


def test_what_a_worker_file_adds_is_merged_in_the_order_of_the_files(tmp_path: Path) -> None:
    config = Config(_tree(tmp_path))
    worker = stages._Worker(config, True, serving_filter(config), None, stages._Watched(config=config.as_dict()))
    added = {}
    for name in ("a-pinned-0.yaml", "a-claimed-1.yaml", "a-upstream-0.yaml"):
        kind, _, staged = worker.stage(tmp_path / name)
        assert kind == "staged"
        added[name] = {owner.rpartition(".")[2]: what for owner, _, what in staged.added}
    record, fields = added["a-pinned-0.yaml"]["fleet"]
    assert set(fields["hosts"]) == {"gpu-box-0"} and [note.gpu.name for note in fields["notes"]] == ["RTX-4090"]
    assert [claim for _, claim, _, _ in added["a-claimed-1.yaml"]["claim_downloads"]] == ["weights1"]
    assert [name for name, _, _ in added["a-upstream-0.yaml"]["colocation"]] == ["engines"]
    run = stages._Watched(config=config.as_dict())
    stages._merge(run, stages.Staged(None, added=[(stages.adapters.RECORDS[0], "record", (record, fields))]))
    assert run.spaces[stages.adapters.RECORDS[0]].hosts.keys() == {"gpu-box-0"}


def _in_process(workers: int):
    """``pool.ordered`` without processes: chunks dealt as ``pool.owners`` deals them to the run (``here``)
    and to ``workers`` copies of the worker, each with a workspace of its own, as forked workers have."""

    def ordered(work, items, jobs, bounds, here, started=None):
        assert started is None, "a run without the whole-run cache, or whose workers start with the stage"
        bounds[0]()
        copies = [copy.deepcopy(stages._Worker.current) for _ in range(workers)]
        dealt = pool.owners(-(-len(items) // pool.CHUNK), workers + 1)
        for index, item in enumerate(items):
            owner = dealt[index // pool.CHUNK]
            if owner == 0:
                yield here(item)
                continue
            stages._Worker.current = copies[owner - 1]
            yield work(item)
        for worker in copies:
            worker.finish()
    return ordered


@pytest.mark.parametrize("chunk", [1, 3])
def test_two_workers_dealt_any_way_report_what_one_process_reports(tmp_path: Path, monkeypatch, chunk: int) -> None:
    folder = _tree(tmp_path)
    one = render_lint(lint([folder], Config(folder), jobs=1), "json", None, folder, True, False, False)
    monkeypatch.setattr(pool, "MIN_FILES", 2)
    monkeypatch.setattr(pool, "CHUNK", chunk)
    monkeypatch.setattr(pool, "ordered", _in_process(2))
    two = render_lint(lint([folder], Config(folder), jobs=2), "json", None, folder, True, False, False)
    assert two == one
    assert len(json.loads(one)["findings"]) >= 10


KUSTOMIZATION = "resources: [{resource}, missing-{n}.yaml]\n"


def test_a_worker_builds_a_kustomization_it_would_not_render(tmp_path: Path) -> None:
    """A kustomization whose files serve nothing is built by a worker (its references that lead nowhere
    are what it adds); one that reaches a served file goes to the run, which renders it in order."""
    plain, served = tmp_path / "plain", tmp_path / "served"
    plain.mkdir(), served.mkdir()
    (plain / "service.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n", encoding="utf-8")
    (plain / "kustomization.yaml").write_text(KUSTOMIZATION.format(resource="service.yaml", n=0), encoding="utf-8")
    (served / "deploy.yaml").write_text(PINNED.format(n=0, length=8192, port=8001), encoding="utf-8")
    (served / "kustomization.yaml").write_text(KUSTOMIZATION.format(resource="deploy.yaml", n=1), encoding="utf-8")
    config = Config(tmp_path)
    worker = stages._Worker(config, True, serving_filter(config), None, stages._Watched(config=config.as_dict()))
    worker.alone = stages._rendered_alone()
    kind, _, built = worker.stage(plain / "kustomization.yaml")
    assert kind == "staged" and built.models == []
    assert [len(items) for owner, _, items in built.added if owner.endswith("references")] == [1]  # missing-0.yaml
    assert worker.stage(served / "kustomization.yaml")[0] == "text"


def test_what_a_worker_read_beyond_its_file_keeps_the_whole_run_cache_honest(tmp_path: Path, monkeypatch) -> None:
    """A worker notes into its own copy of the run's ``paths.Noted`` (a forked process): what it found
    beyond a file (a compose file's ``.env``) reaches the run's, so a changed ``.env`` is a new run."""
    from cfgcheck import paths

    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    folder = tmp_path / "tree"
    folder.mkdir()
    _tree(folder)
    (folder / "compose.yaml").write_text('services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n    env_file: .env\n'
                                         '    command: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096"]\n',
                                         encoding="utf-8")
    (folder / ".env").write_text("TAG=v0.8.5\n", encoding="utf-8")
    in_process = _in_process(2)

    def forked(work, items, jobs, start, here, started=None):  # each call with a copy of the run's Noted, as a
        return in_process(lambda item: _in_copy(paths, work, item), items, jobs, start, here, started)  # worker has

    monkeypatch.setattr(pool, "MIN_FILES", 2)
    monkeypatch.setattr(whole_run_module, "starter", lambda *args: None)  # workers start with the stage, in this process
    monkeypatch.setattr(pool, "ordered", forked)
    first = render_lint(lint([folder], Config(folder), jobs=2, cache=True), "json", None, folder, True, False, False)
    (folder / ".env").write_text("TAG=v0.4.0\n", encoding="utf-8")
    second = render_lint(lint([folder], Config(folder), jobs=2, cache=True), "json", None, folder, True, False, False)
    assert second == render_lint(lint([folder], Config(folder), jobs=1), "json", None, folder, True, False, False)
    assert second != first


def _in_copy(paths, work, item):
    run = paths._NOTED[:]
    paths._NOTED[:] = [copy.deepcopy(noted) for noted in run]
    try:
        return work(item)
    finally:
        paths._NOTED[:] = run
