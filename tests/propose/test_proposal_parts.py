"""The parts of a proposal's documents, one by one: the rollout a strategy gives, explanation comments
at an edited value, the grouping of drifts, the fit step and the marker within GitHub's limit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from cfgcheck.config import Config
from cfgcheck.drift import DefaultDrift
from cfgcheck.github.proposals import BODY_LIMIT, read_marker
from cfgcheck.lint import served_models
from cfgcheck.propose import comments, edit, plan
from cfgcheck.propose.documents import body_marker
from cfgcheck.propose.fit import Fold, fit
from cfgcheck.propose.rollout import rollout
from cfgcheck.propose.tables import drift_groups
from cfgcheck.yamlio import parse_text

DEPLOYMENT = """\
apiVersion: apps/v1
kind: {kind}
metadata:
  name: chat
spec:
  replicas: {replicas}
{strategy}  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--model", "Qwen/Qwen3-8B", "--max-num-seqs", "8"]
{probe}          resources:
            limits:
              nvidia.com/gpu: 2
"""
STARTUP = """\
          startupProbe:
            httpGet: {path: /health, port: 8000}
            periodSeconds: 10
            failureThreshold: 60
"""


def _model(kind="Deployment", replicas=1, strategy="", probe="", node=None):
    text = DEPLOYMENT.replace("    spec:\n", f"    spec:\n      nodeName: {node}\n", 1) if node else DEPLOYMENT
    loaded = parse_text("d.yaml", text.format(kind=kind, replicas=replicas, strategy=strategy, probe=probe))
    (model,) = served_models([loaded], Config(Path("."), {}))
    return model


@pytest.mark.parametrize("kind, replicas, strategy, outage, restarts", [
    ("Deployment", 1, "  strategy:\n    type: Recreate\n", True, "yes, outage: Recreate, 1 replica"),
    ("Deployment", 3, "  strategy:\n    type: Recreate\n", True, "yes, outage: Recreate (every replica stops first)"),
    ("Deployment", 1, "", False, "yes, rolling: the old pod serves until the new one is Ready (the new pod needs 2 "
                                 "free GPUs beside it, else it waits Pending)"),
    ("Deployment", 1, "  strategy:\n    rollingUpdate: {maxUnavailable: 1, maxSurge: 0}\n", True,
     "yes, outage: RollingUpdate with maxUnavailable 1 of 1 replica stops the old pod first"),
    ("Deployment", 4, "", False, "yes, rolling: up to 1 of 4 replicas down at a time (less capacity, no outage)"),
    ("StatefulSet", 3, "", False, "yes, StatefulSet: one pod at a time (less capacity, no outage)"),
    ("StatefulSet", 1, "", True, "yes, outage: StatefulSet, 1 replica"),
])
def test_the_rollout_follows_the_strategy(kind, replicas, strategy, outage, restarts):
    found = rollout(_model(kind, replicas, strategy))
    assert (found.outage, found.restarts) == (outage, restarts)
    assert ("same outage again" in found.recovery) == outage
    assert found.name == "chat/vllm" and found.path == "d.yaml"


def test_a_surge_pod_pinned_to_one_host_is_an_outage_unless_its_gpus_are_free():
    found = rollout(_model(strategy="  strategy:\n    rollingUpdate: {maxUnavailable: 0}\n", node="gpu-box-1"))
    assert found.outage and found.needs_free_gpus == 2
    assert found.restarts == "yes, outage unless gpu-box-1 has 2 more GPUs free: the new pod must start beside the old one there"
    assert found.recovery.startswith("a revert is the same outage again unless the GPUs are free")


def test_recovery_names_the_time_the_startup_probe_allows():
    found = rollout(_model(probe=STARTUP))
    assert found.recovery.endswith("one engine start: model load, compile and CUDA-graph capture, minutes "
                                   "(the startup probe allows 600 s)")


def _edit(text: str, change: str, date: str = "2026-09-10") -> tuple[str, list]:
    loaded = parse_text("v.yaml", text)
    (model,) = served_models([loaded], Config(Path("."), {}))
    edits, notes = [], []
    for item in plan.resolve(plan.build([change], None, "t", "w", [model.name]), [model]):
        edits += edit.edits_for(item, loaded, {})
        found, said = edit.comment_edits(item, loaded, date)
        edits += found
        notes += said
    (result,) = edit.apply({loaded.path: loaded}, {loaded.path: edits})
    for note in notes:
        note.line = edit.shifted(note.line, edits)
    return result.after, notes


LLMKUBE = """\
apiVersion: inference.llmkube.dev/v1alpha1
kind: InferenceService
metadata:
  name: chat
spec:
  runtime: vllm
  image: vllm/vllm-openai:v0.11.0
{above}  parallelSlots: 8{beside}
  vllmConfig:
    maxModelLen: 32768
"""


@pytest.mark.parametrize("above, beside, expected, action", [
    ("  # max 8 sequences\n", "", "  # max 16 sequences\n  parallelSlots: 16\n", "updated"),
    ("", "  # 8 concurrent seqs", "  parallelSlots: 16  # 16 concurrent seqs\n", "updated"),
    ("  # 8 seqs: measured on the A100\n", "",
     "  # 8 seqs: measured on the A100\n  # cfgcheck propose 2026-09-10: 8 -> 16; the comment above is about 8: "
     "re-measure, then update it\n  parallelSlots: 16\n", "flagged"),
    ("  # pinned to 8 because the sidecar shares the GPU\n", "",
     "  # pinned to 8 because the sidecar shares the GPU\n  # cfgcheck propose 2026-09-10: 8 -> 16;", "flagged"),
])
def test_an_explanation_comment_is_updated_only_when_it_restates_the_value(above, beside, expected, action):
    after, notes = _edit(LLMKUBE.format(above=above, beside=beside), "chat.max_num_seqs=16")
    assert expected in after
    (note,) = notes
    assert note.action == action and (note.old, note.new) == (8, 16)
    assert note.comment in after.splitlines()[note.line - 1] or action == "updated"  # the comment's line
    assert "#" in after.splitlines()[note.line - 1]


@pytest.mark.parametrize("above, beside", [
    ("  # GPU KV cache size: 995,932 tokens (engine start-up log)\n", ""),  # about something else
    ("  # cfgcheck: ceiling=8 shared GPU\n", ""),  # a directive is never rewritten
    ("  # raise to 16 once the A100s arrive\n", ""),  # already states the new value
    ("  # image v0.8.5 on the A100\n", ""),  # "8" inside a version and a GPU name is not the value
])
def test_comments_about_something_else_are_left_alone(above, beside):
    text = LLMKUBE.format(above=above, beside=beside)
    after, notes = _edit(text, "chat.max_num_seqs=16")
    assert notes == [] and after == text.replace("parallelSlots: 8", "parallelSlots: 16")


def test_a_later_proposal_moves_the_marker_on_instead_of_adding_one():
    first, _ = _edit(LLMKUBE.format(above="  # 8 seqs: measured on the A100\n", beside=""), "chat.max_num_seqs=16")
    second, notes = _edit(first, "chat.max_num_seqs=32", date="2026-10-01")
    assert second.count("cfgcheck propose") == 1 and "2026-09-10: 8 -> 32;" in second
    (note,) = notes
    assert note.action == "flagged" and note.marked and "measured on the A100" in note.comment


def test_value_forms():
    assert [text for text, _ in comments.forms(262144)] == ["262,144", "262_144", "262144", "256k", "256K"]
    assert ("90%", "percent") in comments.forms(0.9)
    assert ("v0.11.0", "tag") in comments.forms("vllm/vllm-openai:v0.11.0")


def _change(name: str, drifts: list, old: str = "0.5.5.post3", new: str = "0.5.23"):
    upgrade = SimpleNamespace(engine="sglang", old=old, new=new, label=f"SGLang {old} → {new}", drifts=drifts,
                              removed_flags=[], dropped_env=[], notes=[])
    return SimpleNamespace(name=name, path=f"{name}.yaml", upgrade=upgrade)


def test_drift_groups_are_one_per_version_pair_and_set_of_defaults():
    layout = DefaultDrift("hicache_mem_layout", "--hicache-mem-layout", "layer_first", "page_first")
    balance = DefaultDrift("load_balance_method", "--load-balance-method", "round_robin", "auto")
    changes = [_change(f"m{i}", [layout, balance]) for i in range(30)] + [_change("pd", [layout])] + \
        [_change("old", [layout, balance], old="0.5.4")] + [SimpleNamespace(name="still", upgrade=None)]
    groups = drift_groups(changes)
    assert [(g.label, len(g.drifts), len(g.models)) for g in groups] == [
        ("SGLang 0.5.5.post3 → 0.5.23", 2, 30), ("SGLang 0.5.5.post3 → 0.5.23", 1, 1), ("SGLang 0.5.4 → 0.5.23", 2, 1)]
    assert groups[0].drifts[0] == {"setting": "hicache_mem_layout", "before": "layer_first", "after": "page_first",
                                   "how": "", "pin": "--hicache-mem-layout"}


def _context(rows: int) -> dict:
    groups = [{"severity": "error", "code": "CFG104", "places": [{"where": f"a.yaml:{i}"} for i in range(3)]},
              {"severity": "note", "code": "CFG403", "places": [{"where": f"b.yaml:{i}"} for i in range(rows)]}]
    return {"lint": {"groups": groups, "hidden": {}}, "rows": [f"| row {i} |" for i in range(rows)]}


def _render(c: dict) -> str:
    lint = "\n".join(f"{g['severity']} {g['code']} " + " ".join(p["where"] for p in g["places"]) for g in c["lint"]["groups"])
    return f"folded: {c['folded']}\n{lint}\n" + "\n".join(c["rows"]) + "\n"


def _places(c: dict) -> dict | None:
    groups = c["lint"]["groups"]
    if all(len(g["places"]) <= 1 for g in groups):
        return None
    return dict(c, lint=dict(c["lint"], groups=[dict(g, places=g["places"][:1]) for g in groups]))


def _notes(c: dict) -> dict | None:
    kept = [g for g in c["lint"]["groups"] if g["severity"] != "note"]
    return None if len(kept) == len(c["lint"]["groups"]) else dict(c, lint=dict(c["lint"], groups=kept))


def _halve(c: dict) -> dict | None:
    return dict(c, rows=c["rows"][:len(c["rows"]) // 2]) if len(c["rows"]) > 1 else None


FOLDS = [Fold("places", _places), Fold("notes", _notes), Fold("rows", _halve)]


def test_fit_folds_in_order_until_it_fits_and_says_what():
    tail = "\n<!-- marker -->\n"
    assert fit(_render, _context(3), FOLDS, tail, 10_000) == _render(dict(_context(3), folded=[])) + tail
    text = fit(_render, _context(400), FOLDS, tail, 2_000)
    assert len(text) <= 2_000 and text.endswith(tail)
    assert "folded: ['places', 'notes', 'rows']" in text and "error CFG104 a.yaml:0" in text
    assert "CFG403" not in text


def test_a_template_that_ignores_the_folds_is_cut_at_a_line_keeping_the_marker():
    tail = "\n<!-- cfgcheck-propose {} -->\n"
    text = fit(lambda c: "line of text\n" * 10_000, {}, [], tail, 5_000)
    assert len(text) <= 5_000 and text.endswith(tail) and "cut here" in text


def test_the_marker_stays_within_a_quarter_of_the_limit_and_readable():
    data = {"models": [f"apps/team-{i:04d}/serving.yaml#Deployment/chat-{i}/vllm" for i in range(3000)],
            "branch": "cfgcheck/upgrade-vllm-0-33-0", "adr": "docs/adr/0001-x.md",
            "proposals": [{"title": "Upgrade", "why": "w", "changes": [f"chat-{i}.image=x" for i in range(3000)]}]}
    text = body_marker(data, BODY_LIMIT)
    assert len(text) <= BODY_LIMIT // 4
    found = read_marker(text)
    assert found["branch"] == data["branch"] and found["proposals"][0]["changes"] == [] and found["models"]
    small = dict(data, models=data["models"][:3], proposals=[dict(data["proposals"][0], changes=["a.image=x"])])
    assert read_marker(body_marker(small, BODY_LIMIT)) == small


def test_a_body_over_the_limit_is_refused_before_anything_is_sent():
    from cfgcheck.github.client import GitHubError
    from cfgcheck.github.proposals import Hub

    hub = Hub("acme/app", token="ghs_" + "a" * 36, api_url="http://127.0.0.1:9")
    title, body = hub.outgoing("t" * 300, "ok")
    assert len(title) == 256 and body == "ok"
    with pytest.raises(GitHubError, match="over GitHub's limit of 65,536; nothing was pushed"):
        hub.outgoing("t", "x" * (BODY_LIMIT + 1))
