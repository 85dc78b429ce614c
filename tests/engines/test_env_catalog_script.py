"""scripts/build_env_catalog.py on a real local git repository with release tags (no network)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from helpers import REPO

_spec = importlib.util.spec_from_file_location("build_env_catalog", REPO / "scripts" / "build_env_catalog.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)

VLLM_OLD = '''
import os
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    VLLM_USE_V1: bool = True
    LOCAL_RANK: int = 0
environment_variables: dict = {
    "VLLM_USE_V1": lambda: os.getenv("VLLM_USE_V1", "1") == "1",
    "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
    "CUDA_HOME": lambda: os.environ.get("CUDA_HOME", None),
}
'''
VLLM_NEW = '''
import os
environment_variables = {
    "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
    "VLLM_LOGGING_LEVEL": lambda: os.getenv("VLLM_LOGGING_LEVEL", "INFO"),
}
'''
SGLANG_ENVIRON = '''
class Envs:
    SGLANG_TEST_RETRACT = EnvBool(False)
    SGLANG_SET_CPU_AFFINITY: EnvBool = EnvBool(False)
'''
SGLANG_UTIL = '''
import os
a = get_bool_env_var("SGLANG_ENABLE_TORCH_COMPILE")
b = os.environ["SGL_CHUNKED_PREFIX_CACHE_THRESHOLD"]
c = os.getenv("HF_TOKEN")
'''


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args], cwd=cwd, check=True,
                   capture_output=True)


def _commit(repo: Path, files: dict[str, str], tag: str) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", tag)
    _git(repo, "tag", tag)


def test_vllm_names_per_tag_with_commits_and_absent_tags(tmp_path: Path) -> None:
    repo = tmp_path / "vllm"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, {"vllm/envs.py": VLLM_OLD}, "v0.9.2")
    _commit(repo, {"vllm/envs.py": VLLM_NEW}, "v0.10.0")
    out = tmp_path / "vllm_env.json"
    assert script.main(["--engine", "vllm", "--git-dir", str(repo), "--versions", "0.9.2", "0.10.0", "0.11.0",
                        "--out", str(out)]) == 0
    catalog = json.loads(out.read_text())
    assert catalog["versions"]["0.9.2"]["names"] == ["VLLM_HOST_IP", "VLLM_USE_V1"]
    assert catalog["versions"]["0.10.0"]["names"] == ["VLLM_HOST_IP", "VLLM_LOGGING_LEVEL"]
    assert len(catalog["versions"]["0.10.0"]["commit"]) == 40
    assert catalog["unavailable"] == {"0.11.0": "tag v0.11.0 absent"}


def test_sglang_names_from_envs_class_and_getters(tmp_path: Path) -> None:
    repo = tmp_path / "sglang"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, {"python/sglang/srt/environ.py": SGLANG_ENVIRON, "python/sglang/srt/utils.py": SGLANG_UTIL,
                   "python/sglang/broken.py": "def (:\n"}, "v0.5.23")
    catalog = script.build("sglang", repo / ".git", ["0.5.23"])
    assert catalog["versions"]["0.5.23"]["names"] == [
        "SGLANG_ENABLE_TORCH_COMPILE", "SGLANG_SET_CPU_AFFINITY", "SGLANG_TEST_RETRACT",
        "SGL_CHUNKED_PREFIX_CACHE_THRESHOLD"]


@pytest.mark.e2e  # the script runs git
def test_not_a_repository_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert script.main(["--engine", "vllm", "--git-dir", str(tmp_path)]) == 2
    assert "is not a git repository" in capsys.readouterr().err


def _wheel(folder: Path, name: str, members: dict[str, str]) -> Path:
    import zipfile

    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in members.items():
            archive.writestr(member, text)
    return path


def test_released_wheels_give_names_with_file_and_sha256(tmp_path: Path) -> None:
    """``--pypi``: each version's wheel (fetched by pip in real runs; here a fake fetcher, no network)
    is read as a zip, never installed; its file name and sha256 are the provenance."""
    import hashlib

    wheels = {"0.9.2": {"vllm/envs.py": VLLM_OLD, "vllm/other.py": "import os\nos.getenv('VLLM_ELSEWHERE')\n"},
              "0.10.0": {"vllm/envs.py": VLLM_NEW}}
    made: dict[str, bytes] = {}

    def fetch(engine: str, version: str, folder: Path) -> Path | None:
        if version not in wheels:
            return None
        wheel = _wheel(folder, f"{engine}-{version}-cp38-abi3-manylinux1_x86_64.whl", wheels[version])
        made[version] = wheel.read_bytes()
        return wheel

    catalog = script.build_from_wheels("vllm", ["0.9.2", "0.10.0", "0.11.0"], fetch=fetch)
    # every module is read, not only vllm/envs.py: vLLM reads some variables elsewhere
    assert catalog["versions"]["0.9.2"]["names"] == ["VLLM_ELSEWHERE", "VLLM_HOST_IP", "VLLM_USE_V1"]
    assert catalog["versions"]["0.10.0"] == {
        "wheel": "vllm-0.10.0-cp38-abi3-manylinux1_x86_64.whl",
        "sha256": hashlib.sha256(made["0.10.0"]).hexdigest(),
        "names": ["VLLM_HOST_IP", "VLLM_LOGGING_LEVEL"]}
    assert catalog["unavailable"] == {"0.11.0": "no wheel on PyPI for this platform"}
    sglang = script.build_from_wheels("sglang", ["0.5.23"], fetch=lambda engine, version, folder: _wheel(
        folder, "sglang-0.5.23-py3-none-any.whl",
        {"sglang/srt/environ.py": SGLANG_ENVIRON, "sglang/srt/utils.py": SGLANG_UTIL, "sglang/broken.py": "def (:\n"}))
    assert sglang["versions"]["0.5.23"]["names"] == [
        "SGLANG_ENABLE_TORCH_COMPILE", "SGLANG_SET_CPU_AFFINITY", "SGLANG_TEST_RETRACT",
        "SGL_CHUNKED_PREFIX_CACHE_THRESHOLD"]


VLLM_CONNECTOR = """
import os
if "VLLM_NIXL_SIDE_CHANNEL_HOST" in os.environ:
    pass
timeout = int(os.environ.get("VLLM_NIXL_ABORT_REQUEST_TIMEOUT", "120"))
"""


def test_sdists_read_every_module_and_wheel_only_releases(tmp_path: Path) -> None:
    """``--sdist-cache``: each version's unpacked sdist; a release published as wheels only is read from
    its wheel, with the wheel's name and sha256 (fake fetchers, no network)."""
    import hashlib

    cache = tmp_path / "cache"
    tree = cache / "vllm-0.10.0"
    (tree / "vllm" / "distributed").mkdir(parents=True)
    (tree / "vllm" / "envs.py").write_text(VLLM_NEW)
    (tree / "vllm" / "distributed" / "nixl.py").write_text(VLLM_CONNECTOR)
    (tree / "SDIST").write_text(json.dumps({"sdist": "vllm-0.10.0.tar.gz"}))
    made: dict[str, bytes] = {}

    def wheel(engine: str, version: str, folder: Path) -> Path | None:
        if version != "0.15.0":
            return None
        path = _wheel(folder, f"vllm-{version}-cp38-abi3-manylinux1_x86_64.whl", {"vllm/envs.py": VLLM_OLD})
        made[version] = path.read_bytes()
        return path

    def unpack(engine: str, version: str, folder: Path) -> Path | None:
        if (folder / f"{engine}-{version}" / "SDIST").is_file():
            return folder / f"{engine}-{version}"
        return script.source_tree(engine, version, folder, fetch_sdist=lambda *_: None, fetch_wheel=wheel) if version == "0.15.0" else None

    catalog = script.build_from_sdists("vllm", ["0.10.0", "0.15.0", "0.99.0"], cache, unpack=unpack)
    assert catalog["versions"]["0.10.0"] == {"sdist": "vllm-0.10.0.tar.gz", "names": [
        "VLLM_HOST_IP", "VLLM_LOGGING_LEVEL", "VLLM_NIXL_ABORT_REQUEST_TIMEOUT", "VLLM_NIXL_SIDE_CHANNEL_HOST"]}
    assert catalog["versions"]["0.15.0"] == {
        "wheel": "vllm-0.15.0-cp38-abi3-manylinux1_x86_64.whl", "sha256": hashlib.sha256(made["0.15.0"]).hexdigest(),
        "names": ["VLLM_HOST_IP", "VLLM_USE_V1"]}
    assert catalog["unavailable"] == {"0.99.0": "no sdist or wheel on PyPI"}
