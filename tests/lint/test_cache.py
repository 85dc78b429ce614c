"""The content cache (src/cfgcheck/cache.py): it never changes a finding, is never read for a file whose
text changed, keeps no file whose served models depend on another file, and an entry someone else
wrote is no entry. Every test keeps the cache in its own temporary folder."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from cfgcheck import cache as cache_module, packs
from cfgcheck.cache import ContentCache
from cfgcheck.config import Config
from cfgcheck import lint as lint_module, whole_run as whole_run_module
from cfgcheck.lint import lint
from cfgcheck.lint_command import render_lint
from helpers import REPO, shared
from runcli import invoke

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:{tag}
          args: ["--model", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.9"]
"""  # no GPU request: the run's GPU-workload index (formats/gpu_workloads.py) would keep it from the cache
COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:${TAG}
    env_file: .env
    command: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096"]
"""


def _files(home: Path, kind: str) -> list[Path]:
    return [path for path in (home / "cfgcheck" / kind).rglob("*") if path.is_file()]


def _entries(home: Path, kind: str = "stage") -> list:
    """The entries of file stages, (pack, key) for each (``kind`` "run": the files of whole runs' entries)."""
    if kind != "stage":
        return _files(home, kind)
    found = []
    for pack in _files(home, kind):
        handle = os.open(pack, os.O_RDONLY)
        try:
            index = packs.read_index(handle)
        finally:
            os.close(handle)
        assert index is not None, f"{pack} is not a pack"
        found.extend((pack, key) for key in index)
    return found


def _reads_counted(monkeypatch) -> list[bool]:
    """Whether each lookup of a file stage's entry found one, from now on."""
    read: list[bool] = []
    get = packs.PackedCache.get

    def counted(self, key: str):
        found = get(self, key)
        read.append(found is not None)
        return found

    monkeypatch.setattr(packs.PackedCache, "get", counted)
    return read


def _report(folder: Path, cache: bool, jobs: int = 1) -> str:
    result = lint([folder], Config(folder), cache=cache, jobs=jobs)
    return render_lint(result, "json", None, folder, True, False, False)


@pytest.mark.parametrize("where", ["corpus", "examples"])
def test_the_cache_never_changes_a_finding(where: str, cache_home: Path, monkeypatch) -> None:
    folder = shared("corpus") if where == "corpus" else REPO / "examples"
    without = _report(folder, cache=False)
    assert not cache_home.exists()
    first = _report(folder, cache=True)
    stored = _entries(cache_home)
    assert stored  # served files that need only their own text were kept
    read: list[str] = []

    def counted(get):
        def counting(self, key: str):
            found = get(self, key)
            if self.kind != "stat":  # the whole-run key's index of what files were (StatIndex)
                read.append(found is not None)
            return found
        return counting

    for store in (ContentCache, packs.PackedCache):  # whole runs' entries, file stages' packs
        monkeypatch.setattr(store, "get", counted(store.get))
    second = _report(folder, cache=True)
    assert read == [True]  # the whole run's entry, checked and used
    monkeypatch.setattr(whole_run_module, "whole_run", lambda *args: None)
    read.clear()
    third = _report(folder, cache=True)
    assert sum(read) == len(stored)  # file by file: every entry was read back
    assert first == without and second == without and third == without


def test_a_changed_file_is_not_read_from_the_cache(tmp_path: Path, cache_home: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    app = folder / "app.yaml"
    app.write_text(DEPLOYMENT.format(tag="latest"), encoding="utf-8")
    assert '"0.9"' not in _report(folder, cache=True) or True
    before = _report(folder, cache=True)
    app.write_text(DEPLOYMENT.format(tag="v0.8.5"), encoding="utf-8")
    after = _report(folder, cache=True)
    assert after == _report(folder, cache=False) and after != before
    assert len(_entries(cache_home)) == 2  # one entry per text
    assert len(_entries(cache_home, "run")) == 2  # and per run whose files' texts differ


def test_a_file_read_with_another_is_not_kept(tmp_path: Path, cache_home: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "compose.yaml").write_text(COMPOSE, encoding="utf-8")
    (folder / ".env").write_text("TAG=latest\n", encoding="utf-8")
    first = _report(folder, cache=True)
    assert not _entries(cache_home)  # its served model depends on .env
    assert _entries(cache_home, "run") and _report(folder, cache=True) == first  # the run kept what .env held
    (folder / ".env").write_text("TAG=v0.8.5\n", encoding="utf-8")
    assert _report(folder, cache=True) == _report(folder, cache=False) != first


class _Hostile:
    def __reduce__(self):
        return (Path.touch, (Path(_Hostile.target),))


def test_an_entry_someone_else_wrote_is_no_entry(tmp_path: Path, cache_home: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.yaml").write_text(DEPLOYMENT.format(tag="latest"), encoding="utf-8")
    expected = _report(folder, cache=True)
    [(pack, key)] = _entries(cache_home)
    [entry] = _entries(cache_home, "run")
    _Hostile.target = str(tmp_path / "ran")
    for data in (pickle.dumps(_Hostile()), b"not a pickle"):
        entry.write_bytes(data)
        pack.write_bytes(packs.packed({key: data}))
        assert _report(folder, cache=True) == expected
    assert not (tmp_path / "ran").exists()
    good = packs.packed({key: b"x" * 64})
    for damaged in (b"not a pack", good[:-1], good[:len(packs.MAGIC) + 2]):  # an index past the end of its file
        pack.write_bytes(damaged)
        assert _report(folder, cache=True) == expected


def test_no_cache_writes_nothing_and_lint_writes_its_entries_whole(tmp_path: Path, cache_home: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.yaml").write_text(DEPLOYMENT.format(tag="latest"), encoding="utf-8")
    quiet = invoke("lint", "--no-cache", "-f", "json", ".", cwd=folder)
    assert '"CFG302"' in quiet.stdout and not cache_home.exists()
    kept = invoke("lint", "-f", "json", ".", cwd=folder)
    assert (kept.returncode, kept.stdout) == (quiet.returncode, quiet.stdout)
    names = [path.name for path in _files(cache_home, "stage") + _files(cache_home, "run")]
    assert len(names) == 2 and not any(name.startswith(".entry-") for name in names)  # renamed, no temporary left
    assert names[0].endswith(packs.SUFFIX) and len(_entries(cache_home)) == 1


def test_a_run_of_more_served_models_than_the_bound_keeps_no_whole_entry(cache_home: Path, monkeypatch) -> None:
    folder = REPO / "examples"
    monkeypatch.setattr(cache_module, "RUN_MODELS", 4)  # examples/ serves 5 models
    first = _report(folder, cache=True)
    assert not _entries(cache_home, "run")
    monkeypatch.setattr(cache_module, "RUN_MODELS", 5)
    assert _report(folder, cache=True) == first
    assert len(_entries(cache_home, "run")) == 1


def test_a_whole_run_keeps_a_file_without_a_served_model_as_its_path(tmp_path: Path, cache_home: Path) -> None:
    from cfgcheck import pool

    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.yaml").write_text(DEPLOYMENT.format(tag="latest"), encoding="utf-8")
    (folder / "plain.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", encoding="utf-8")
    (folder / "broken.yaml").write_text("a: [\n", encoding="utf-8")
    first = _report(folder, cache=True)
    [entry] = _entries(cache_home, "run")
    _, _, kept = pool.loads(entry.read_bytes(), lambda _name: {}, restricted=True)
    assert sorted(f if isinstance(f, str) else f"read {f.path}" for f in kept.files) == [
        "plain.yaml", "read app.yaml", "read broken.yaml"]  # a file with a served model or an error is kept whole
    assert _report(folder, cache=True) == first == _report(folder, cache=False)


def test_the_cache_scope_changes_with_every_rule_file(monkeypatch) -> None:
    """A checkout keeps the rules outside the package (``rules/``): the stamp holds their files all the same,
    so an edited rule starts a new cache."""
    monkeypatch.setattr(cache_module, "_STAMP", [])
    stamped = {line.rpartition(":")[0].rpartition(":")[0] for line in cache_module._code_stamp().splitlines()[1:]}
    rules = sorted(path.name for path in (REPO / "rules").glob("*.py"))
    assert rules and all(any(name == rule or name.endswith("/" + rule) for name in stamped) for rule in rules)


def test_packs_past_the_bound_are_merged_into_the_run_s_own(tmp_path: Path, cache_home: Path, monkeypatch) -> None:
    """Each run writes one pack; a run that finds more than ``MAX_PACKS`` writes its entries with theirs and
    removes them, and every entry still reads back."""
    monkeypatch.setattr(packs, "MAX_PACKS", 2)
    folder = tmp_path / "repo"
    folder.mkdir()
    app = folder / "app.yaml"
    tags = ["v0.8.1", "v0.8.2", "v0.8.3", "v0.8.4"]
    for tag in tags:
        app.write_text(DEPLOYMENT.format(tag=tag), encoding="utf-8")
        _report(folder, cache=True)
    # runs 1-3 wrote a pack each; the 4th found 3 (more than 2) and merged them into its own
    assert len(_files(cache_home, "stage")) == 1 and len(_entries(cache_home)) == 4
    monkeypatch.setattr(whole_run_module, "whole_run", lambda *args: None)
    read = _reads_counted(monkeypatch)
    for tag in tags:
        app.write_text(DEPLOYMENT.format(tag=tag), encoding="utf-8")
        _report(folder, cache=True)
    assert read == [True] * 4


def test_a_merged_pack_keeps_the_newest_entries_up_to_its_bound(tmp_path: Path) -> None:
    store = packs.PackedCache({}, True, where=tmp_path)
    for number in range(4):  # four runs, one entry of 100 bytes each
        store.put(f"{number:064x}", bytes([number]) * 100)
        store.close()
    store = packs.PackedCache({}, True, where=tmp_path)
    packs_before = sorted((store.root / "packs").iterdir())
    assert store.get(f"{0:064x}") == bytes([0]) * 100 and len(packs_before) == 4
    store.put(f"{9:064x}", b"new")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(packs, "MAX_PACKS", 3)
        patched.setattr(packs, "MAX_PACK_BYTES", 250)
        store.close()
    [merged] = (store.root / "packs").iterdir()
    store = packs.PackedCache({}, True, where=tmp_path)
    assert [store.get(f"{number:064x}") is not None for number in (9, 3, 2, 1, 0)] == [True, True, True, False, False]
    assert merged not in packs_before


@pytest.mark.e2e  # forks a worker process
def test_a_worker_writes_its_entries_as_a_pack_the_next_run_reads(tmp_path: Path, cache_home: Path,
                                                                     monkeypatch) -> None:
    from cfgcheck import pool

    folder = tmp_path / "repo"
    folder.mkdir()
    for number in range(6):
        (folder / f"app{number}.yaml").write_text(DEPLOYMENT.format(tag=f"v0.8.{number}"), encoding="utf-8")
    monkeypatch.setattr(pool, "MIN_FILES", 2)
    monkeypatch.setattr(pool, "CHUNK", 1)  # the run stages app0, app2, app4; its worker app1, app3, app5
    monkeypatch.setattr(pool, "RUN_AHEAD", 0)
    monkeypatch.setattr(pool, "RUN_SHARE", 100)
    first = _report(folder, cache=True, jobs=2)
    assert len(_files(cache_home, "stage")) == 2 and len(_entries(cache_home)) == 6  # one pack per process
    monkeypatch.setattr(whole_run_module, "whole_run", lambda *args: None)
    read = _reads_counted(monkeypatch)
    assert _report(folder, cache=True) == first == _report(folder, cache=False)
    assert read == [True] * 6


def test_a_whole_run_is_not_reused_when_an_untracked_file_fills_a_path_the_run_found_empty(tmp_path: Path,
                                                                                           cache_home: Path) -> None:
    """In a Git work tree a file Git does not track is never read, so looking for one is not noted (the key
    holds the list of tracked files); whether anything is at a path an engine is told to read is noted all
    the same: an untracked config file is a file the repository has."""
    from helpers import make_repo

    repo = make_repo(tmp_path, {"serve/run.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct --chat-template chat.jinja\n",
                                "README.md": "# serving\n"})
    first = _report(repo, cache=True)
    assert "looked for serve/chat.jinja" in first and first == _report(repo, cache=False)
    (repo / "serve/chat.jinja").write_text("{{ messages }}\n", encoding="utf-8")  # not linted: the same files
    second = _report(repo, cache=True)
    assert second == _report(repo, cache=False) and "looked for serve/chat.jinja" not in second


@pytest.mark.parametrize("direct_url", [None, '{"url": "file:///src", "dir_info": {}}',
                                        '{"url": "file:///src", "dir_info": {"editable": true}}'])
def test_an_installed_distribution_is_stamped_by_its_record(tmp_path: Path, monkeypatch, direct_url) -> None:
    """A regular install changes its files only with its RECORD (one stat a run, not one per file); an
    editable install's files change without it, and are stamped one by one."""
    package = tmp_path / "site-packages" / "cfgcheck"
    package.mkdir(parents=True)
    (package / "lint.py").write_text("# code\n", encoding="utf-8")
    info = package.parent / f"cfgcheck-{cache_module.__version__}.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("cfgcheck/lint.py,sha256=x,7\n", encoding="utf-8")
    if direct_url is not None:
        (info / "direct_url.json").write_text(direct_url, encoding="utf-8")
    monkeypatch.setattr(cache_module, "PACKAGE", package)
    monkeypatch.setattr(cache_module, "_STAMP", [])
    stamp = cache_module._code_stamp()
    editable = direct_url is not None and "editable" in direct_url
    assert ("RECORD" in stamp) is not editable and ("lint.py:7:" in stamp) is editable
    monkeypatch.setattr(cache_module, "_STAMP", [])
    (info / "RECORD").write_text("cfgcheck/lint.py,sha256=y,8\n", encoding="utf-8")  # reinstalled
    assert (cache_module._code_stamp() != stamp) is not editable


GPU_SERVED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat-{n}
spec:
  template:
    spec:{selector}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"]
          resources:
            limits:
              nvidia.com/gpu: "1"
"""


def test_a_whole_run_notes_the_readme_only_the_rules_child_read(tmp_path: Path, cache_home: Path,
                                                                 monkeypatch) -> None:
    """With two processes the last served models are checked in a forked process (``lint.run_rules``): a
    README only their rules read (the GPU of a folder) is part of the run's entry all the same, so that a
    changed README is not answered from the old run."""
    from helpers import make_repo

    selector = "\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"
    files = {f"svc{n}/deploy.yaml": GPU_SERVED.format(n=n, selector=selector if n == 0 else "") for n in range(4)}
    repo = make_repo(tmp_path, {**files, "svc3/README.md": "# chat\n\nRuns on one NVIDIA L4 GPU.\n"})
    monkeypatch.setattr(lint_module, "RULES_APART", 2)  # the run checks svc0 (its GPU selected), the child the rest
    first = _report(repo, cache=True, jobs=2)
    assert '"code": "CFG202"' in first and first == _report(repo, cache=False, jobs=2)
    (repo / "svc3/README.md").write_text("# chat\n\nRuns on one NVIDIA H100 80GB GPU.\n", encoding="utf-8")
    second = _report(repo, cache=True, jobs=2)
    assert '"code": "CFG202"' not in second and second == _report(repo, cache=False, jobs=1)
