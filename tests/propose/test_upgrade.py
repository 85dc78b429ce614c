"""``cfgcheck upgrade ENGINE VERSION`` and the OCI registry client: real git repositories in tmp dirs, a
fake registry on 127.0.0.1, never the network."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck.oci import Registry, RegistryError
from cfgcheck.propose import upgrade
from cfgcheck.propose.plan import PlanError
from cfgcheck.propose.run import Options, main as propose_main
from fakeregistry import FakeRegistry
from helpers import FIXTURES, make_repo

ROOT = Path(__file__).resolve().parents[2]

SGLANG = (FIXTURES / "change" / "sglang-deployment.yaml.in").read_text(encoding="utf-8").format(
    image="lmsysorg/sglang:v0.5.5.post3-cu129-amd64@sha256:" + "0" * 64,
    args='            - --cuda-graph-max-bs\n            - "256"')

VLLM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: chat
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.2
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          args: ["--max-model-len", "32768", "--swap-space", "8"]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def run(repo: Path, target: upgrade.Target, *paths: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = propose_main(Options(paths=[repo / p for p in paths], dry_run=target.dry_run, upgrade=target,
                                cwd=repo), out, err)
    return code, out.getvalue(), err.getvalue()


def test_registry_digest_with_anonymous_token_flow() -> None:
    with FakeRegistry() as fake:
        digest = fake.add("lmsysorg/sglang", "v0.5.23-cu129-amd64")
        registry = Registry({"docker.io": fake.url})
        assert registry.digest(None, "lmsysorg/sglang", "v0.5.23-cu129-amd64") == digest
        methods = [(m, p.split("?")[0]) for m, p, _ in fake.requests]
        assert methods == [("HEAD", "/v2/lmsysorg/sglang/manifests/v0.5.23-cu129-amd64"), ("GET", "/token"),
                           ("HEAD", "/v2/lmsysorg/sglang/manifests/v0.5.23-cu129-amd64")]
        accept = fake.requests[-1][2]["Accept"]
        assert "application/vnd.oci.image.index.v1+json" in accept
        assert "application/vnd.docker.distribution.manifest.list.v2+json" in accept
        assert "scope=repository%3Almsysorg%2Fsglang%3Apull" in fake.requests[1][1]
        # without the digest header the manifest is fetched and hashed
        fake.digest_header = False
        assert registry.digest(None, "lmsysorg/sglang", "v0.5.23-cu129-amd64") == digest
        with pytest.raises(RegistryError, match="HTTP 404"):
            registry.digest(None, "lmsysorg/sglang", "v9.9.9")
        # Docker official images live under library/
        fake.add("library/ubuntu", "24.04")
        assert registry.digest(None, "ubuntu", "24.04").startswith("sha256:")


def test_the_pull_token_is_not_sent_across_a_redirect_to_another_host() -> None:
    """A registry that redirects an authenticated manifest request to another host (a second registry
    on another port): that host got the first one's anonymous pull token. It still answers the digest."""
    from fakeregistry import TOKEN

    with FakeRegistry() as first, FakeRegistry() as second:
        digest = second.add("vllm/vllm-openai", "v0.33.0")
        second.anonymous = True
        first.redirect_to = second.url
        assert Registry({"docker.io": first.url}).digest(None, "vllm/vllm-openai", "v0.33.0") == digest
        assert any(headers.get("Authorization") == f"Bearer {TOKEN}" for _, _, headers in first.requests)
        assert second.requests and not [h for _, _, h in second.requests if "Authorization" in h]


def test_registry_refuses_hostile_references_and_unreachable_hosts() -> None:
    with pytest.raises(RegistryError, match="not a valid image reference"):
        Registry().digest(None, "vllm/../../etc", "v1")
    with pytest.raises(RegistryError, match="cannot reach"):
        Registry({"docker.io": "http://127.0.0.1:9"}, timeout=2).digest(None, "vllm/vllm-openai", "v0.33.0")


def test_moved_tag_keeps_the_form() -> None:
    assert upgrade.moved_tag("v0.8.5", "0.10.1") == "v0.10.1"
    assert upgrade.moved_tag("0.8.5", "v0.10.1") == "0.10.1"
    assert upgrade.moved_tag("v0.5.5.post3-cu129-amd64", "0.5.23") == "v0.5.23-cu129-amd64"
    assert upgrade.moved_tag("latest", "0.5.23") is None


def test_upgrade_resolves_the_digest_and_rewrites_renamed_flags(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"apps/coder.yaml": SGLANG})
    with FakeRegistry() as fake:
        digest = fake.add("lmsysorg/sglang", "v0.5.23-cu129-amd64")
        target = upgrade.Target("sglang", "0.5.23", registry=Registry({"docker.io": fake.url}), dry_run=True)
        code, out, err = run(repo, target)
    assert code == 0, out + err
    assert f"+          image: lmsysorg/sglang:v0.5.23-cu129-amd64@{digest}" in out
    assert "-            - --cuda-graph-max-bs\n+            - --cuda-graph-max-bs-decode" in out
    assert "flag rewritten: --cuda-graph-max-bs -> --cuda-graph-max-bs-decode (line 18)" in out
    assert "## Engine upgrade: SGLang 0.5.5.post3 → 0.5.23" in out and "default drift: load_balance_method" in out
    assert "`flag` `--cuda-graph-max-bs` → `--cuda-graph-max-bs-decode`" in out  # one entry, not two settings
    assert "dry run: nothing was committed" in err


def test_upgrade_refuses_when_a_removed_flag_cannot_be_rewritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"chat.yaml": VLLM})
    code, out, err = run(repo, upgrade.Target("vllm", "0.26.0", dry_run=True, offline=True))
    assert code == 1
    assert "flag removed in 0.26.0, not rewritten: --swap-space (line 13)" in out
    assert "CFG104" in out and "proposal refused" in err


def test_digest_pinned_image_needs_a_digest_outside_a_dry_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"apps/coder.yaml": SGLANG})
    target = upgrade.Target("sglang", "0.5.23", registry=Registry({"docker.io": "http://127.0.0.1:9"}, timeout=2))
    from cfgcheck.config import Config
    from cfgcheck.lint import lint

    models = lint([repo], Config(repo.resolve())).models
    with pytest.raises(PlanError, match="cannot pin lmsysorg/sglang:v0.5.23-cu129-amd64 by digest .* --digest"):
        upgrade.plan_models(models, target, {})
    target.digest = "sha256:" + "1" * 64
    (plan,) = upgrade.plan_models(models, target, {})
    assert plan.image == "lmsysorg/sglang:v0.5.23-cu129-amd64@sha256:" + "1" * 64


@pytest.mark.parametrize("args, message", [
    (["upgrade", "vllm", "banana", "--dry-run", "--offline"], "'banana' is not an engine version"),
    (["upgrade", "trtllm", "1.0", "--dry-run"], "no flag catalog for engine 'trtllm'"),
    (["upgrade", "vllm", "0.33.0", "--digest", "sha256:xyz", "--dry-run"], "is not a sha256 digest"),
    (["upgrade", "tokenspeed", "0.1.1", "--dry-run", "--offline"], "nothing to upgrade to 0.1.1"),
])
def test_usage_errors_are_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    repo = make_repo(tmp_path, {"chat.yaml": VLLM})
    result = subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_examples_upgrade_to_vllm_0_33_0_dry_run(tmp_path: Path) -> None:
    """The shipped examples (copied into a repository of their own): every pinned vLLM served model
    planned to 0.33.0 (catalogued), the rolling `latest` left alone with the reason, nothing written."""
    examples = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
                for p in (ROOT / "examples").rglob("*") if p.is_file()}
    repo = make_repo(tmp_path, examples)
    result = subprocess.run([sys.executable, "-m", "cfgcheck", "upgrade", "vllm", "0.33.0", "examples/", "--dry-run",
                             "--offline"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    out = result.stdout
    assert "vLLM 0.33.0 is catalogued" in out
    assert "+          image: registry.internal/ml/vllm-openai:v0.33.0" in out
    assert "+  image: vllm/vllm-openai:v0.33.0" in out  # the digest cannot be resolved offline: said so
    assert "the digest of vllm/vllm-openai:v0.33.0 is not known" in out
    assert "not moved: image vllm/vllm-openai:latest has no version tag to move (rolling)" in out
    assert "default drift: gpu_memory_utilization 0.9 -> 0.92" in out  # the 0.10.2 legacy model
    assert "0 new errors" in out


def test_upgrade_opens_one_pull_request_and_rerunning_changes_nothing(tmp_path: Path, fake_github) -> None:
    """A real run: bare remote, fake GitHub; the PR body lists the drifts, the second run is a no-op."""
    from tests.propose.test_propose import REPO, Mirror, branches, cfgcheck, open_pulls
    from tests.propose.test_propose import make_repo as repo_with_remote

    chat = VLLM.replace(', "--swap-space", "8"', "")
    work, bare = repo_with_remote(tmp_path, {"apps/chat.yaml": chat, "apps/other.yaml": chat.replace("chat", "other")})
    Mirror(fake_github, bare)
    args = ["upgrade", "vllm", "0.26.0", "--offline", "--repo", REPO]
    first = cfgcheck(work, *args, fake=fake_github)
    assert first.returncode == 0, first.stdout + first.stderr
    (pull,) = open_pulls(fake_github)
    assert pull.head_ref == "cfgcheck/upgrade-vllm-0-26-0" and pull.title == "Upgrade vLLM to 0.26.0"
    assert "## Engine upgrade: vLLM 0.10.2 → 0.26.0" in pull.body and "`gpu_memory_utilization`" in pull.body
    head = branches(bare)[pull.head_ref]
    changed = subprocess.run(["git", "diff", "--stat", "main", head], cwd=bare, capture_output=True, text=True).stdout
    assert "apps/chat.yaml" in changed and "apps/other.yaml" in changed  # one batched pull request
    again = cfgcheck(work, *args, fake=fake_github)
    assert again.returncode == 0 and "no new commit" in again.stdout
    assert len(fake_github.repo(REPO).pulls) == 1
