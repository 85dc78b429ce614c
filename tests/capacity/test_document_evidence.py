"""The card a repository's documents name as its hardware: a README sentence that says what the project was
designed for or tested on, and, weakest, the hardware lines of the folder's other documents (``docs/*.md``,
``README.rst``) for a repository of one machine. Each is only assumed, and a document naming several cards,
or a card the name leaves open, decides nothing."""

from __future__ import annotations

import pickle
from pathlib import Path

from cfgcheck.cluster import Fleet, NodePool
from cfgcheck.model import Location
from tests.capacity.test_gpu_evidence import one

SCRIPT = "#!/usr/bin/env bash\nvllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
HARDWARE = "# Hardware\n\n| Part | Model |\n|---|---|\n| GPU | NVIDIA GB10 (DGX Spark) |\n| RAM | 128 GB |\n"


def test_a_readme_sentence_saying_what_the_project_is_designed_for_or_tested_on(tmp_path: Path) -> None:
    designed = one(tmp_path / "designed", {"README.md": "# Box\n\nDesigned for the NVIDIA RTX 5060 Ti 16GB.\n",
                                           "serve-qwen.sh": SCRIPT})
    assert (designed["gpu"], designed["gpu_source"]) == ("RTX-5060-Ti-16GB", "assumed")
    tested = one(tmp_path / "tested", {"README.md": "A home server (tested: RTX 4080 16 GB).\n", "serve-qwen.sh": SCRIPT})
    assert (tested["gpu"], tested["gpu_origin"]) == ("RTX-4080", "README.md:1 says 'A home server (tested: RTX 4080 16 GB).'")
    bare = one(tmp_path / "bare", {"README.md": "Designed for NVIDIA RTX 5060 Ti.\n", "serve-qwen.sh": SCRIPT})
    assert bare["gpu"] is None  # sold with 8 GB and with 16 GB: the name leaves the memory open


def test_a_hardware_page_in_docs_is_the_weakest_evidence(tmp_path: Path) -> None:
    row = one(tmp_path / "docs", {"README.md": "# Box\n\nSee docs/.\n", "docs/hardware.md": HARDWARE,
                                  "serve-qwen.sh": SCRIPT})
    assert (row["gpu"], row["gpu_source"], row["gpu_origin"]) == (
        "GB10", "assumed", "docs/hardware.md:5 says '| GPU | NVIDIA GB10 (DGX Spark) |'")
    readme = one(tmp_path / "readme", {"README.md": "Tested on an RTX 4090.\n", "docs/hardware.md": HARDWARE,
                                       "serve-qwen.sh": SCRIPT})
    assert readme["gpu"] == "RTX-4090"  # the README's statement is nearer than the docs folder's pages
    several = {"docs/hardware.md": HARDWARE, "docs/cloud.md": "# GPUs\n\nWe rent an H100 80GB for evaluations.\n"}
    assert one(tmp_path / "several", {**several, "serve-qwen.sh": SCRIPT})["gpu"] is None
    prose = {"docs/history.md": "# History\n\nThe lab once had an A6000.\n"}
    assert one(tmp_path / "prose", {**prose, "serve-qwen.sh": SCRIPT})["gpu"] is None  # a mention, not hardware


def test_documents_speak_only_for_a_repository_of_one_machine() -> None:
    fleet = Fleet()
    assert fleet.one_host()
    fleet.hosts = {"tower": Location("a.yaml", 1, 1), "rack": Location("b.yaml", 1, 1)}
    assert not fleet.one_host()
    assert not Fleet(pools=[NodePool("gpu", "Karpenter NodePool", Location("pool.yaml", 1, 1))]).one_host()


def test_a_fleet_whose_document_readers_never_ran_is_still_stored() -> None:
    fleet = Fleet()
    fleet.unmentioned.append(lambda found: None)  # no served model needed the repository's documents
    assert pickle.loads(pickle.dumps(fleet)).unmentioned == []  # the whole-run cache keeps the result


def test_the_instance_a_paas_readme_deploys_to_rests_cfg202_on_an_assumed_gpu(tmp_path: Path) -> None:
    import shutil
    import subprocess

    from helpers import lint_paths

    repo = tmp_path / "repo"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "fleet" / "pass-paas-readme-instance", repo)
    (repo / "expect.json").unlink()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    found = [f for f in lint_paths(repo).findings if f.code == "CFG202"]
    # 0.9 x 19.6 GiB less 15 GiB of BF16 weights leaves ~18k tokens for the default 131,072-token context
    assert [f.severity for f in found] == ["warning"]  # an assumed GPU is never an error
    assert "131,072" in found[0].message and "assumed: the GPU (README.md:3" in found[0].message
    # only the README's step names it: the link is not needed
    readme = (repo / "README.md").read_text()
    step = one(tmp_path / "step", {"README.md": readme.replace("&instance_type=gpu-nvidia-rtx-4000-sff-ada", ""),
                                   "serve-qwen.sh": SCRIPT})
    assert (step["gpu"], step["gpu_source"]) == ("RTX-4000-Ada", "assumed") and "README.md:8" in step["gpu_origin"]
