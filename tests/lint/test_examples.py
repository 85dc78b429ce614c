"""The bundled examples/ tree: located findings on the hazards, nothing on the clean served models."""

from __future__ import annotations

from helpers import REPO, lint_paths


def test_examples_findings() -> None:
    result = lint_paths(REPO / "examples", root=REPO)
    found = {(f.code, f.location.path.split("/")[-1], f.location.line) for f in result.findings if f.suppressed is None}
    for expected in [
        ("CFG204", "qwen-chat.yaml", 36),  # the seed: above the documented ceiling, explicit KV size or not
        ("CFG107", "coder.yaml", 22),
        ("CFG302", "helmrelease.yaml", 20),  # latest: one finding, not also CFG301
        ("CFG303", "helmrelease.yaml", 21),
        ("CFG305", "statefulset.yaml", 23),
    ]:
        assert expected in found, (expected, sorted(found))
    assert ("CFG107", "qwen-chat.yaml", 36) not in found  # the fraction is not inert: vLLM checks it at start-up
    clean = {f.location.path for f in result.findings if f.suppressed is None}
    assert not any(p.endswith(("embeddings/deployment.yaml", "media/jellyfin.yaml")) for p in clean)
    assert any(f.suppressed and f.code == "CFG301" for f in result.findings)
    names = {m.name for m in result.models}
    assert {"qwen-chat", "qwen-coder", "embeddings/vllm", "vllm-stack/llama3", "legacy-chat/server"} <= names
    assert "jellyfin/jellyfin" not in names
