"""Suppressions as flexible as ruff's and Checkov's: prefixes, names, a file-level form,
per-file-ignores, and malformed directives reported."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from cfgcheck.config import ConfigError
from helpers import codes, lint_text
from tests.lint.test_lint_pipeline import ROLLING

def deployment(above: str = "", inline: str = "", head: str = "") -> str:
    """A vLLM Deployment on a rolling tag, with a comment above or beside its image line."""
    text = ROLLING.replace("          image:", (f"          # {above}\n" if above else "") + "          image:")
    return head + (text.replace("nightly", f"nightly  # {inline}") if inline else text)


def suppressed(result) -> dict[str, str]:
    return {f.code: f.suppressed for f in result.findings if f.suppressed is not None}


@pytest.mark.parametrize("written", ["CFG3", "CFG30", "cfg3", "CFG301,rolling-tag", "unpinned-image, CFG302"])
def test_prefixes_and_names_suppress_on_the_line_below(tmp_path: Path, written: str) -> None:
    result = lint_text(tmp_path, deployment(above=f"cfgcheck: ignore[{written}] we track nightly on purpose"))
    assert {"CFG302"} <= set(suppressed(result)), suppressed(result)
    assert "CFG001" not in codes(result)


def test_file_level_form_covers_the_whole_file(tmp_path: Path) -> None:
    head = "# cfgcheck: ignore-file[CFG3] a sandbox cluster: images and revisions float on purpose\n"
    result = lint_text(tmp_path, deployment(head=head))
    assert {"CFG302", "CFG303"} <= set(suppressed(result))
    assert not [c for c in codes(result) if c.startswith("CFG3")]
    other = lint_text(tmp_path, deployment(), name="other.yaml")
    assert "CFG302" in codes(other), "a file-level suppression stays in its file"


def test_file_level_form_that_suppresses_nothing_is_reported(tmp_path: Path) -> None:
    result = lint_text(tmp_path, deployment(head="# cfgcheck: ignore-file[CFG208] no GPU request here\n"))
    assert "CFG002" in codes(result)


def test_per_file_ignores_use_gitignore_patterns(tmp_path: Path) -> None:
    config = {"per-file-ignores": {"sandbox/**": ["CFG3"], "*.yaml": ["unpinned-model-revision"]}}
    sandbox = lint_text(tmp_path, deployment(), name="sandbox/deep/embed.yaml", config=config)
    assert {"CFG302", "CFG303"} <= set(suppressed(sandbox))
    assert suppressed(sandbox)["CFG302"] == "per-file-ignores 'sandbox/**' in .cfgcheck.yaml"
    elsewhere = lint_text(tmp_path, deployment(), name="prod/embed.yaml", config=config)
    assert "CFG302" in codes(elsewhere) and "CFG303" not in codes(elsewhere)
    with pytest.raises(ConfigError, match="per-file-ignores 'x/\\*\\*': unknown rule 'CFG999'"):
        lint_text(tmp_path, deployment(), name="x/a.yaml", config={"per-file-ignores": {"x/**": ["CFG999"]}})


@pytest.mark.parametrize("directive, message", [
    ("cfgcheck: ignore everything", "malformed suppression 'ignore everything'"),
    ("cfgcheck: ignore", "malformed suppression 'ignore'"),
    ("cfgcheck: ignore[CFG302 we track nightly", "malformed suppression"),
    ("cfgcheck: ignore-file all of it", "write 'cfgcheck: ignore-file[CODE,...] reason'"),
    ("cfgcheck: ignore[] no codes", "names no rule"),
    ("cfgcheck: ignore[CFG9] why", "unknown rule 'CFG9'"),
    ("cfgcheck: ignore[rolling-tags] why", "unknown rule 'rolling-tags'"),
    ("cfgcheck: ignore[CFG302]", "gives no reason"),
])
def test_malformed_directives_are_reported(tmp_path: Path, directive: str, message: str) -> None:
    result = lint_text(tmp_path, deployment(above=directive))
    problems = [f for f in result.findings if f.code == "CFG001"]
    assert problems and message in problems[0].message, [f.message for f in problems]
    assert problems[0].location.line == 10


def test_prose_mentioning_cfgcheck_is_not_a_directive(tmp_path: Path) -> None:
    result = lint_text(tmp_path, deployment(above="cfgcheck: ignored until the upgrade, see the ADR"))
    assert "CFG001" not in codes(result) and "CFG302" in codes(result)


@pytest.mark.parametrize("hostile", [
    "cfgcheck: ignore[" * 20000,
    "cfgcheck:" + " " * 100000 + "x",
    "cfgcheck: ignore" + "[" * 100000,
    "cfgcheck: ignore[" + "CFG1," * 20000,
])
def test_directive_parsing_is_linear(tmp_path: Path, hostile: str) -> None:
    start = time.process_time()  # CPU, not wall time: a busy runner does not fail it, quadratic work does
    lint_text(tmp_path, deployment(inline=hostile))
    assert time.process_time() - start < 5


def test_directive_patterns_have_no_nested_quantifiers() -> None:
    from cfgcheck import registry, suppressions

    for pattern in (suppressions._START, suppressions._DIRECTIVE, registry._PREFIX):
        assert not re.search(r"\([^)]*[*+][^)]*\)[*+]", pattern.pattern), pattern.pattern
