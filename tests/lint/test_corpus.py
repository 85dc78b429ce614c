"""The public corpus in ../shared/corpus (skipped where it is absent): no crash, seed expectations."""

from __future__ import annotations

from collections import Counter

from cfgcheck.config import Config
from cfgcheck.lint import lint
from rules._ceilings import documented
from helpers import shared


def test_corpus_lints_without_crash() -> None:
    corpus = shared("corpus")
    result = lint([corpus], Config(corpus))
    assert len(result.files) >= 230
    per_repo = Counter(m.path.split("/")[0] for m in result.models)
    print("\nserved models per corpus repository:")
    for repo, count in sorted(per_repo.items()):
        print(f"  {repo}: {count}")
    for repo in ("Tanguille__cluster", "defilantech__LLMKube", "vllm-project__production-stack",
                 "kubernetes-sigs__lws", "vllm-project__aibrix"):
        assert per_repo[repo] > 0, repo
    unreadable = [f for f in result.findings if f.code == "CFG000"]
    assert all(f.location.line >= 1 for f in unreadable)


def test_seed_sglang_ceiling_from_comment() -> None:
    folder = shared("corpus", "Tanguille__cluster", "_history", "3dbd86ace")
    result = lint([folder], Config(folder))
    sglang = [m for m in result.models if m.engine == "sglang"]
    assert len(sglang) == 1
    (setting, ceiling), = documented(sglang[0], {})
    assert setting.name == "mem_fraction_static" and setting.value == 0.875
    assert ceiling.value is None  # "HARD CEILING ... never raise": the value as written is the ceiling
    assert "HARD CEILING" in ceiling.text
    assert not [f for f in result.findings if f.code == "CFG204"]
