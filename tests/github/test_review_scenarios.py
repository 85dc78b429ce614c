"""``cfgcheck review`` on the pull requests a team meets, read as a reviewer reads them (fake GitHub with
GitHub's 65,536-character limit, real git repositories built from ``tests/github/scenarios.py``).

Every scenario holds the reviewer's contract (``assert_reviewable``):
- every error ``lint --base`` reports is in the summary, and inline when it is on a changed line;
- no inline comment of lower severity while an error on a changed line has none;
- no message (numbers and names aside) in more than 3 inline comments;
- CFG301/302/303 at most a quarter of the inline comments;
- no capacity table of unknowns;
- every body within GitHub's limit;
- a suggestion block on every inline comment whose finding has a mechanical fix.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from cfgcheck.cli import app
from cfgcheck.config import load
from cfgcheck.diff import lint_diff
from cfgcheck.github.bodies import FP_MARKER, MAX_COMMENT, SUMMARY_MARKER, fingerprint_id
from cfgcheck.github.review import right_lines
from helpers import git, shared
from tests.github import scenarios
from tests.github.scenarios import Scenario

LIMIT = 65_536
SUPPLY = {"CFG301", "CFG302", "CFG303"}


def review(sc: Scenario, monkeypatch, *args: str):
    for key, value in sc.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("CFGCHECK_BOT_LOGIN", raising=False)
    monkeypatch.chdir(sc.repo)
    result = CliRunner().invoke(app, ["review", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def reported(sc: Scenario) -> list:
    """What ``lint --base main`` reports for the pull request (the findings the review must show)."""
    return lint_diff([sc.repo], load(sc.repo), "main").active()


def severity_of(body: str) -> str:
    return re.search(r"\*\*(error|warning|note)\*\*", body).group(1)


def code_of(body: str) -> str:
    return re.search(r"\[(CFG\d{3}) ", body).group(1)


def message_shape(body: str) -> str:
    """An inline comment's message with numbers, quoted values, flags and names folded: what "the same
    message" means to a reviewer."""
    lines = [line for line in body.splitlines() if line.strip() and not line.startswith(("<!--", "**"))]
    text = lines[0].replace("\\", "")
    text = re.sub(r"'[^']*'|`[^`]*`|--?[a-z][\w-]*|\S*[\d_/.:]\S*", "#", text)
    return " ".join(text.split())


def capacity_tables(summary: str) -> list[list[str]]:
    """The rows of each before/after table in the summary."""
    tables = []
    for block in summary.split("| | before | after |")[1:]:
        rows = [line for line in block.split("\n\n", 1)[0].splitlines()[1:] if line.startswith("|")]
        tables.append(rows)
    return tables


def assert_reviewable(sc: Scenario, findings: list) -> tuple[str, list]:
    """The reviewer's contract (module docstring); returns (summary body, inline comments)."""
    (summary,) = sc.summaries()
    inline = sc.inline()
    bodies = [summary.body] + [c.body for c in inline] + [r.body or "" for r in sc.reviews()]
    assert all(len(b) <= LIMIT for b in bodies) and len(summary.body) <= MAX_COMMENT
    changed = {path: right_lines(patch) for path, patch in sc.patches().items()}
    covered = {fp for c in inline for fp in FP_MARKER.findall(c.body)}
    errors = [f for f in findings if f.severity == "error"]
    for error in errors:  # every error in the summary, linked to its line
        assert f"{quote(error.location.path)}#L{error.location.line}" in summary.body, (error.code, error.message)
    on_diff = [f for f in errors if f.location.line in changed.get(f.location.path, ())]
    missing = [f for f in on_diff if fingerprint_id(f) not in covered]
    assert not missing, [(f.code, f.location.line) for f in missing]
    posted = [severity_of(c.body) for c in inline]  # in the order they were posted: errors spend the budget first
    assert posted == sorted(posted, key=["error", "warning", "note"].index), posted
    shapes: dict[str, int] = {}
    for comment in inline:
        shapes[message_shape(comment.body)] = shapes.get(message_shape(comment.body), 0) + 1
    assert max(shapes.values(), default=0) <= 3, shapes
    assert sum(code_of(c.body) in SUPPLY for c in inline) * 4 <= len(inline)
    by_print = {fingerprint_id(f): f for f in findings}
    for comment in inline:  # a one-click fix wherever the finding carries a mechanical one
        anchor = by_print[FP_MARKER.search(comment.body).group(1)]
        if anchor.fix is not None:
            assert "```suggestion\n" in comment.body, comment.body
            assert "cfgcheck fix` applies" not in comment.body
    for rows in capacity_tables(summary.body):
        assert rows and not any(re.search(r"\| — (\([^)]*\) )?\| — ", row) for row in rows), rows
        assert any("**" in row or re.search(r"\d", row.split("|")[2] + row.split("|")[3]) for row in rows)
    return summary.body, inline


def assert_severity_first(text: str) -> None:
    """Must fix, then the warnings and notes: the step summary and the comment alike."""
    if "#### Must fix" in text and "#### Warnings and notes" in text:
        assert text.index("#### Must fix") < text.index("#### Warnings and notes")
    rows = re.findall(r"(?m)^\| (error|warning|note) \|", text)
    assert rows == sorted(rows, key=["error", "warning", "note"].index), rows


def test_renovate_bump_over_thirty_models(fake_github, tmp_path, monkeypatch) -> None:
    """The bump gives no error on a changed line; the 4 errors (2 causes) on unchanged lines head the summary,
    the drift of 30 models is one section, and each cause is one inline comment."""
    sc = Scenario(fake_github, tmp_path, *scenarios.renovate())
    findings = reported(sc)
    result = review(sc, monkeypatch)
    assert result.exit_code == 1, result.stderr
    summary, inline = assert_reviewable(sc, findings)
    assert len([f for f in findings if f.severity == "error"]) == 4
    assert summary.startswith(SUMMARY_MARKER + "\n### cfgcheck: 4 errors block the merge · SGLang 0.5.5.post3 → "
                              "0.5.23 on 30 served models")
    must_fix = summary.split("#### Must fix (2 causes, 4 places)", 1)[1].split("####", 1)[0]
    assert "CFG102" in must_fix and "CFG104" in must_fix and must_fix.count("not in the diff") == 2
    assert "4 of these errors are on lines this pull request does not change" in must_fix
    assert summary.count("#### Engine upgrade: SGLang 0.5.5.post3 → 0.5.23 (30 served models in 20 files)") == 1
    # each default the bump moves is in the section: a row with the models it matters for, or the folded rest
    assert "load\\_balance\\_method" in summary and "hicache\\_mem\\_layout" in summary
    assert "renamed to --cuda-graph-bs-decode" in summary
    drift = [f for f in findings if f.code == "CFG403"]
    counts = {kind: sum(f.severity == kind for f in drift) for kind in ("warning", "note")}
    # CFG403 speaks only for defaults a model reads (none of these 30 use hierarchical cache or data
    # parallelism): the defaults that move for none of them are one folded line of the section
    if counts["warning"]:
        assert f"CFG403 default-drift: {counts['warning']} warning" in summary
    assert "for none of these served models" in summary
    # one comment per cause (rule and severity here): none repeats, and together they stand for every
    # finding on a changed line
    causes = {(f.code, f.severity) for f in findings if f.severity != "error"}
    assert sorted((code_of(c.body), severity_of(c.body)) for c in inline) == sorted(causes)
    assert sum(len(FP_MARKER.findall(c.body)) for c in inline) == len(findings) - 4
    # the restart note of the 30 rollouts is one comment that folds the other 29 places
    outage = next(c for c in inline if code_of(c.body) == "CFG401")
    assert "The same cause at 29 more places" in outage.body
    assert len(summary) < 15_000, len(summary)
    assert_severity_first(summary)
    assert_severity_first(sc.step_summary.read_text())


def test_pull_request_adding_a_whole_repository(fake_github, tmp_path, monkeypatch) -> None:
    """73 findings: the 3 errors are inline first, the pinning findings one section, the fixable one a suggestion."""
    sc = Scenario(fake_github, tmp_path, *scenarios.whole_repository())
    findings = reported(sc)
    result = review(sc, monkeypatch)
    assert result.exit_code == 1, result.stderr
    summary, inline = assert_reviewable(sc, findings)
    assert {f.code for f in findings if f.severity == "error"} == {"CFG208", "CFG306", "CFG501"}
    severities = [severity_of(c.body) for c in inline]
    assert severities[:3] == ["error"] * 3 and severities == sorted(severities, key=["error", "warning", "note"].index)
    assert not any(code_of(c.body) in SUPPLY for c in inline)
    supply = summary.split("#### Supply chain", 1)[1].split("####", 1)[0]
    pins = {code: sum(f.code == code for f in findings) for code in sorted(SUPPLY)}
    assert any(pins.values())
    for code, what in (("CFG301", "without a digest"), ("CFG302", "on a tag that names no version"),
                       ("CFG303", "without a pinned revision")):
        assert (f"**{pins[code]}** " in supply and what in supply) == bool(pins[code]), code
    files = {f.location.path for f in findings if f.code in SUPPLY}
    assert f"<details><summary>Places ({len(files)} files)</summary>" in supply
    fixable = next(c for c in inline if code_of(c.body) == "CFG101")
    assert "```suggestion\n            - --mem-fraction-static\n```" in fixable.body
    assert fixable.line == 22 and fixable.start_line is None
    (review_body,) = [r.body for r in sc.reviews()]
    assert f"{len(inline)} comments on the changed lines, 3 of them on errors" in review_body
    assert_severity_first(summary)


def test_clean_pull_request_gets_nothing(fake_github, tmp_path, monkeypatch) -> None:
    """No finding: no review, no comment, no summary; the step summary (the run's own page) still says so."""
    sc = Scenario(fake_github, tmp_path, *scenarios.clean())
    assert reported(sc) == []
    result = review(sc, monkeypatch)
    assert result.exit_code == 0, result.stderr
    assert sc.inline() == [] and sc.summaries() == [] and sc.reviews() == []
    assert not [r for r in fake_github.requests if r.method in ("POST", "PATCH", "DELETE")]
    assert "### cfgcheck: no new findings" in sc.step_summary.read_text()


def test_a_summary_from_an_earlier_push_is_edited_to_say_the_findings_are_gone(fake_github, tmp_path,
                                                                               monkeypatch) -> None:
    base, head = scenarios.clean()
    broken = {"apps/chat.yaml": head["apps/chat.yaml"].replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0")}
    sc = Scenario(fake_github, tmp_path, base, broken)
    assert review(sc, monkeypatch).exit_code == 1
    (first,) = sc.summaries()
    sc.push(head)
    assert review(sc, monkeypatch).exit_code == 0
    (edited,) = sc.summaries()
    assert edited.id == first.id and "### cfgcheck: no new findings" in edited.body
    assert sc.inline() == []


def test_a_rerun_is_quiet_and_a_cause_that_loses_places_is_updated_in_place(fake_github, tmp_path,
                                                                            monkeypatch) -> None:
    base, head = scenarios.renovate()
    sc = Scenario(fake_github, tmp_path, base, head)
    review(sc, monkeypatch)
    comments = {c.id: c.body for c in sc.inline()}
    mark = len(fake_github.requests)
    review(sc, monkeypatch)
    writes = [r for r in fake_github.requests[mark:] if r.method in ("POST", "PATCH", "DELETE")]
    assert writes == [], [r.op for r in writes]
    # the bump is taken back in one file (two served models): their places leave the comments of their causes
    sc.push({"serving/team-0/svc-0.yaml": base["serving/team-0/svc-0.yaml"]})
    mark = len(fake_github.requests)
    review(sc, monkeypatch)
    ops = [r.op for r in fake_github.requests[mark:] if r.method in ("POST", "PATCH", "DELETE")]
    assert "pulls/create-review" not in ops and "pulls/delete-review-comment" not in ops
    assert {c.id for c in sc.inline()} == set(comments)
    outage = next(c for c in sc.inline() if code_of(c.body) == "CFG401")
    assert outage.body != comments[outage.id] and "The same cause at 27 more places" in outage.body
    assert len(FP_MARKER.findall(outage.body)) == 28


def test_seed_style_raise_in_a_repository_full_of_pinning_findings(fake_github, tmp_path, monkeypatch) -> None:
    """The old findings of the other 20 manifests stay out; the raise is an error inline on its line, with the
    capacity table of the one model whose numbers are known, and no chart that repeats it."""
    sc = Scenario(fake_github, tmp_path, *scenarios.seed_raise())
    findings = reported(sc)
    result = review(sc, monkeypatch)
    assert result.exit_code == 1, result.stderr
    summary, inline = assert_reviewable(sc, findings)
    assert not SUPPLY & ({f.code for f in findings} | {code_of(c.body) for c in inline})
    assert "Supply chain" not in summary
    assert [severity_of(c.body) for c in inline][0] == "error" and code_of(inline[0].body) == "CFG201"
    assert "| max\\_num\\_seqs | 4 | **64** |" in summary
    assert "```mermaid" not in summary  # the pool does not move: the curve would repeat the table
    assert "Not estimated for" not in summary and len(capacity_tables(summary)) == 1
    assert_severity_first(summary)


def test_supply_chain_inline_when_the_configuration_asks(fake_github, tmp_path, monkeypatch) -> None:
    base, head = scenarios.whole_repository()
    config = "review:\n  supply-chain: inline\n"
    sc = Scenario(fake_github, tmp_path, {**base, ".cfgcheck.yaml": config}, {**head, ".cfgcheck.yaml": config})
    review(sc, monkeypatch)
    codes = [code_of(c.body) for c in sc.inline()]
    pins = {f.code for f in reported(sc) if f.code in SUPPLY}
    assert pins and pins <= set(codes) and len(codes) == len(set(codes))
    assert "each on its line as a review comment as well" in sc.summaries()[0].body


def test_the_pull_request_cannot_widen_the_baseline_that_judges_it(fake_github, tmp_path, monkeypatch) -> None:
    """The baseline is the base commit's: a pull request that records its own error there still fails, and the
    summary says the baseline changes once merged."""
    base, head = scenarios.whole_repository()
    sc = Scenario(fake_github, tmp_path, base, {**head, ".cfgcheck-baseline.json": "{}"})
    runner = CliRunner()
    monkeypatch.chdir(sc.repo)
    runner.invoke(app, ["lint", "--write-baseline", ".cfgcheck-baseline.json", "."])
    git(sc.repo, "commit", "-qam", "record everything")
    result = review(sc, monkeypatch, "--baseline", ".cfgcheck-baseline.json")
    assert result.exit_code == 1, result.stderr
    (summary,) = sc.summaries()
    assert re.search(r"baseline \.cfgcheck-baseline\.json changed \\\(no file → \d+ findings recorded\\\), used "
                     r"once merged", summary.body)
    assert "CFG208" in summary.body


def test_push_with_a_baseline_fails_only_for_what_is_not_recorded(tmp_path, monkeypatch) -> None:
    """The default branch with old findings and a committed baseline passes; one new error fails it."""
    _, head = scenarios.whole_repository()
    repo = tmp_path / "repo"
    repo.mkdir()
    for path, text in head.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step.md"))
    for key in ("GITHUB_EVENT_PATH", "GITHUB_TOKEN", "CFGCHECK_MODE"):
        monkeypatch.delenv(key, raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["lint", "--write-baseline", ".cfgcheck-baseline.json", "."]).exit_code == 0
    assert runner.invoke(app, ["review"]).exit_code == 1  # without it: the old errors fail
    passed = runner.invoke(app, ["review", "--baseline", ".cfgcheck-baseline.json"])
    assert passed.exit_code == 0, passed.stderr
    assert re.search(r"baseline \.cfgcheck-baseline\.json \(\d+ recorded findings, not reported\)",
                     (tmp_path / "step.md").read_text())
    (repo / "apps/broken/new.yaml").write_text(head["apps/broken/no-shm.yaml"].replace("no-shm", "new"))
    failed = runner.invoke(app, ["review", "--baseline", ".cfgcheck-baseline.json"])
    assert failed.exit_code == 1 and "apps/broken/new.yaml" in failed.stdout


def test_renovate_bump_on_the_corpus(fake_github, tmp_path, monkeypatch) -> None:
    """The real case of the issue: sgl-project__ome's 29 files bumped as Renovate does."""
    corpus = shared("corpus", "sgl-project__ome")
    base = {p.relative_to(corpus).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(corpus.rglob("*")) if p.is_file()}
    old, new = "sglang:v0.5.5.post3-cu129-amd64", "sglang:v0.5.23-cu129-amd64"
    head = {path: text.replace(old, new) for path, text in base.items()}
    sc = Scenario(fake_github, tmp_path, base, head)
    findings = reported(sc)
    review(sc, monkeypatch)
    summary, inline = assert_reviewable(sc, findings)
    assert len(summary) < 20_000 and len(inline) <= 3
    assert "#### Must fix (2 causes, 4 places)" in summary


@pytest.mark.parametrize("notes, warnings", [(400, 0), (300, 300)])
def test_a_summary_over_the_limit_drops_notes_then_warnings_never_an_error(notes: int, warnings: int) -> None:
    from cfgcheck.github.summary import render_summary
    from cfgcheck.lint import LintResult
    from cfgcheck.model import Finding, Location

    def many(count: int, severity: str, code: str) -> list[Finding]:
        """``count`` distinct causes: each headline names another kind, spelled in letters (digits fold)."""
        kinds = ["".join("abcdefghij"[int(d)] for d in str(i)) for i in range(count)]
        return [Finding(f"{severity} of kind {kind} here: " + "words " * 40, Location(f"{code}.yaml", i + 1, 1),
                        code=code, rule="r", severity=severity) for i, kind in enumerate(kinds)]

    findings = many(150, "error", "CFG204") + many(warnings, "warning", "CFG203") + many(notes, "note", "CFG103")
    body = render_summary(LintResult(findings, [], []), [], None)
    assert len(body) <= MAX_COMMENT
    assert body.count("| error |") == 150, "no error row is ever cut"
    assert "Left out to stay within GitHub's 65,536-character limit:" in body and "no error." in body
    kept = {kind: body.count(f"| {kind} |") for kind in ("warning", "note")}
    assert kept["note"] < notes and f"{notes - kept['note']} note rows;" in body
    if warnings:  # the notes go first, all of them, before a warning does
        assert kept["note"] == 0 and kept["warning"] > 0


def test_silenced_by_this_pr_is_shown_when_the_result_carries_it(tmp_path) -> None:
    from cfgcheck.github.summary import render_summary
    from cfgcheck.lint import LintResult
    from cfgcheck.model import Finding, Location
    from cfgcheck.suppressions import Silenced, Suppression

    silenced = Finding("max_num_seqs 64 > 3.11 full-length requests", Location("a.yaml", 9, 1), code="CFG203",
                       rule="seqs-exceed-kv-concurrency", severity="warning", suppressed="benchmarked on H100")
    suppression = Suppression({"CFG203"}, "benchmarked on H100", Location("a.yaml", 9, 20), "lines", written="CFG203")
    result = LintResult([silenced], [], [])
    result.silenced = [Silenced(silenced, suppression)]
    body = render_summary(result, [], None)
    assert body.count("#### Silenced by this PR") == 1
    assert "no new findings · 1 new finding silenced by a suppression this PR adds" in body.splitlines()[1]
    section = body.split("#### Silenced by this PR", 1)[1]
    assert "| warning | [CFG203]" in section and "| a.yaml:9 CFG203: benchmarked on H100 |" in section


def test_a_multi_line_fix_is_one_suggestion_over_its_lines() -> None:
    from cfgcheck.github.suggestions import suggest
    from cfgcheck.model import Edit, Finding, Fix, Location

    text = "args:\n  - --kv-cache-memory\n  - \"4294967296\"\n  - --foo\n"
    fix = Fix("spell out and quote", (Edit(Location("a.yaml", 2, 5), "--kv-cache-memory", "--kv-cache-memory-bytes"),
                                      Edit(Location("a.yaml", 3, 5), '"4294967296"', "4Gi")))
    finding = Finding("m", Location("a.yaml", 2, 5), fix=fix)
    made = suggest(finding, text, {1, 2, 3, 4}, lambda s: True)
    assert (made.start, made.end) == (2, 3) and made.text == "  - --kv-cache-memory-bytes\n  - 4Gi"
    assert made.block().startswith("```suggestion\n") and made.block().endswith("\n```")
    assert suggest(finding, text, {2}, lambda s: True) is None, "line 3 is not in the diff"
    assert suggest(finding, text, {1, 2, 3}, lambda s: False) is None, "redaction would change the lines"
    hidden = text.replace('"4294967296"', '"4294967296"\u202e')
    assert suggest(finding, hidden, {1, 2, 3}, lambda s: True) is None, "a bidirectional override is not suggested"
    fenced = suggest(Finding("m", Location("a.yaml", 1, 1), fix=Fix("x", (Edit(Location("a.yaml", 1, 1), "args",
                                                                                 "a```b"),))), text, {1}, lambda s: True)
    assert fenced.block().startswith("````suggestion\n")


def test_cause_keys_fold_names_and_numbers_not_meaning() -> None:
    from cfgcheck.github.causes import cause_key
    from cfgcheck.model import Finding, Location

    def key(message: str, severity: str = "warning", model: str | None = None):
        return cause_key(Finding(message, Location("a", 1, 1), code="CFG101", severity=severity, model=model))

    assert key("'--tp' is an abbreviation of --tp-size (SGLang 0.5.5.post3)") == \
        key("'--mem-frac' is an abbreviation of --mem-fraction-static (assumed SGLang 0.5.23 (image tag 'dev'))")
    assert key("parallel size 2 (tensor 2) but 1 GPU requested: the engine cannot start", "error") != \
        key("parallel size 1 (tensor 1) but 2 GPUs requested: 1 stay idle", "warning")
    assert key("ceiling 0.8 documented on chat", model="chat") == key("ceiling 0.9 documented on qwen", model="qwen")
    assert key("image a has tag 'latest'") != key("image a is not pinned by digest")

