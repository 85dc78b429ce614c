"""Edits keep every other byte, on every file of ../shared/corpus (real public GitOps repositories).

For each file: a no-op edit of every located setting round-trips byte-identically; and for each served
model, changing the value of its first located setting (as ``propose`` would) changes exactly that
one line, and the file still parses.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgcheck.config import Config
from cfgcheck.lint import served_models
from cfgcheck.model import Edit
from cfgcheck.propose import edit, plan
from cfgcheck.yamlio import apply_edits, decode, parse_text
from helpers import CORPUS
SUFFIXES = (".yaml", ".yml")


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def _load(path: Path):
    try:
        text = decode(path.read_bytes())
    except Exception as exc:  # noqa: BLE001 - a file we cannot decode is not edited either
        pytest.skip(f"{path.name}: not text ({exc})")
    loaded = parse_text(path.relative_to(CORPUS).as_posix(), text)
    return loaded, served_models([loaded], Config(CORPUS, {}))


def _new_value(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return 0.5 if value != 0.5 else 0.25
    if isinstance(value, str) and value:
        return value + "x"
    return None


def _first_located(model, loaded):
    lines = loaded.text.splitlines(keepends=True)
    for name, setting in model.settings.items():
        loc = setting.location
        if setting.text is None or loc.path != loaded.path or loc.end_line not in (None, loc.line) or loc.end_column is None:
            continue
        if not 1 <= loc.line <= len(lines):
            continue
        if lines[loc.line - 1][loc.column - 1:loc.end_column - 1] != setting.text:
            continue  # an escaped word inside a shell string: propose refuses those
        if _new_value(setting.value) is not None:
            return name, setting
    return None, None


FILES = corpus_files()


@pytest.mark.skipif(not FILES, reason=f"{CORPUS} not found: ../shared is only beside the project's own checkout")
@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(CORPUS).as_posix() for p in FILES])
def test_edits_preserve_bytes(path: Path):
    loaded, models = _load(path)
    text = loaded.text
    assert apply_edits(text, []) == text

    noop = []
    for model in models:
        for occurrences in model.occurrences.values():
            for setting in occurrences:
                loc = setting.location
                if setting.text is None or loc.path != loaded.path or loc.end_line not in (None, loc.line):
                    continue
                line = text.splitlines(keepends=True)[loc.line - 1]
                if line[loc.column - 1:loc.column - 1 + len(setting.text)] == setting.text:
                    noop.append(Edit(loc, setting.text, setting.text))
    assert apply_edits(text, noop) == text

    for model in models:
        name, setting = _first_located(model, loaded)
        if setting is None:
            continue
        value = _new_value(setting.value)
        change = plan.Change(model.name, name, value)
        resolved = plan.Resolved(change, model, name, None, value, [setting])
        try:
            edits = edit.edits_for(resolved, loaded, {})
        except plan.PlanError as exc:  # a value propose will not write there (it says so, in one line)
            assert "\n" not in str(exc)
            continue
        assert len(edits) == 1, (model.name, name)
        after = apply_edits(text, edits)
        before_lines, after_lines = text.splitlines(keepends=True), after.splitlines(keepends=True)
        assert len(before_lines) == len(after_lines)
        differing = [i for i, (a, b) in enumerate(zip(before_lines, after_lines)) if a != b]
        assert differing == [setting.location.line - 1], (model.name, name)
        assert parse_text(loaded.path, after).error is None
