"""Explanation comments at a value ``propose`` changes: never left silently stale, never made false.

Operators write why a value is what it is next to it (``# 8 seqs: measured on the A100`` above
``maxNumSeqs: 8``). When a proposal changes such a value, the comment lines directly above it (and
above its flag, for a flag's value on its own line) and the comment on its line are read:

* a comment that states neither the old nor the new value is left alone (it may be about something
  else: a measured pool, a directive);
* a comment that states the new value already agrees with the change;
* a comment that only restates the old value (the number and words naming the setting or its unit,
  ``# 256k context``, ``# max 8 sequences``) gets the number rewritten in the form it was written;
* any other comment that states the old value explains or measures it: rewriting its number would
  turn a measurement into a false claim. It is kept as written, a marker line is added below it (in
  YAML, where a comment line cannot change what the file means) and the PR body's checklist names it.

The edits are text edits like the value's own (``Edit``); everything else in the file is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..model import Edit, Location, Setting
from ..yamlio import LoadedFile

MARKER = "cfgcheck propose"  # starts the marker line (no "cfgcheck:": that would read as a directive)
_MARKER_RE = re.compile(r"^" + MARKER + r" \d{4}-\d{2}-\d{2}: (?P<old>\S+) -> (?P<new>\S+);")
# Words that only name a setting or its unit: a comment made of them and the number restates the value.
_RESTATING = frozenset("""
    max maximum min num number of seqs seq sequences sequence concurrent concurrency parallel slots slot
    requests request reqs running batch tokens token context ctx length len window model gpu memory mem
    utilization util fraction static kv cache size image tag version engine set to is at the a per
""".split())


@dataclass
class Explanation:
    """A comment at an edited value that states its old value, and what propose did with it."""

    path: str
    line: int  # the comment line that states the old value (in the edited file)
    comment: str
    setting: str
    old: Any
    new: Any
    action: str  # "updated" (a plain restatement rewritten) | "flagged" (kept as written)
    marked: bool = False  # a marker line below it says so in the file (YAML only)
    now: str | None = None  # the comment as rewritten ("updated")


def forms(value: Any) -> list[tuple[str, str]]:
    """(text, form) for the ways a comment may write ``value``: ``262144``, ``262,144``, ``256k`` (of
    1024 or of 1000), ``0.9`` and ``90%``, an image's tag; longest first."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        found = [(str(value), "plain"), (f"{value:,}", "comma"), (f"{value:_}", "underscore")]
        for base, form in ((1024, "k1024"), (1000, "k1000")):
            if value >= base and value % base == 0:
                found += [(f"{value // base}{k}", form) for k in ("k", "K")]
    elif isinstance(value, float):
        found = [(repr(value), "plain"), (f"{value * 100:g}%", "percent")]
    else:
        text = str(value)
        found = [(text, "plain")] + ([(text.rsplit(":", 1)[1], "tag")] if ":" in text.split("@")[0] else [])
    unique = {text: form for text, form in found if text}
    return sorted(unique.items(), key=lambda item: -len(item[0]))


def _written(value: Any, form: str) -> str | None:
    """``value`` in the form another value was written in, or None when it cannot be."""
    if form == "comma" and isinstance(value, int):
        return f"{value:,}"
    if form == "underscore" and isinstance(value, int):
        return f"{value:_}"
    if form in ("k1024", "k1000") and isinstance(value, int):
        base = 1024 if form == "k1024" else 1000
        return f"{value // base}k" if value % base == 0 else f"{value:,}"
    if form == "percent" and isinstance(value, float):
        return f"{value * 100:g}%"
    if form == "tag" and isinstance(value, str):
        return value.split("@")[0].rsplit(":", 1)[-1] if ":" in value else None
    return str(value) if not isinstance(value, bool) else None


def _find(text: str, value: Any) -> tuple[int, int, str] | None:
    """(start, end, form) of the first place ``text`` writes ``value`` as a whole number or word."""
    for form_text, form in forms(value):
        match = re.search(rf"(?<![\w.,]){re.escape(form_text)}(?![\w%]|[.,]\d)", text)
        if match:
            return match.start(), match.end(), form
    return None


def _restates(comment: str, start: int, end: int, setting: str) -> bool:
    """The comment is the number and words that name the setting or its unit, nothing else."""
    words = re.findall(r"[a-z]+", (comment[:start] + " " + comment[end:]).lower())
    allowed = _RESTATING | set(setting.lower().split("_"))
    return len(words) <= 6 and all(word in allowed for word in words)


def _anchors(setting: Setting) -> list[int]:
    """The lines whose comments belong to the value: its own, and its key's or flag's when that is above."""
    lines = [setting.location.line]
    key = setting.key_location
    if key is not None and key.line < setting.location.line:
        lines.insert(0, key.line)
    return lines


def _block(loaded: LoadedFile, line: int) -> list[int]:
    """Lines of the full-line comments directly above ``line`` (no blank line between), top first."""
    found = []
    probe = line - 1
    while probe >= 1 and (comment := loaded.comments.get(probe)) is not None and comment.full_line:
        found.insert(0, probe)
        probe -= 1
    return found


def _comment_lines(loaded: LoadedFile, setting: Setting) -> list[int]:
    anchors = _anchors(setting)
    lines = _block(loaded, anchors[0])
    for anchor in anchors:
        own = loaded.comments.get(anchor)
        if own is not None and not own.full_line:
            lines.append(anchor)
    return lines


def _marker(date: str, old: Any, new: Any) -> str:
    return f"{MARKER} {date}: {old} -> {new}; the comment above is about {old}: re-measure, then update it"


def _text_column(loaded: LoadedFile, line: int) -> int:
    """The 1-based column where the comment text of ``line`` starts (after ``#`` and spaces)."""
    comment = loaded.comments[line]
    raw = loaded.text.splitlines()[line - 1][comment.column:]
    return comment.column + 1 + len(raw) - len(raw.lstrip())


def _span_edit(loaded: LoadedFile, line: int, start: int, end: int, new: str) -> Edit:
    column = _text_column(loaded, line) + start
    old = loaded.comments[line].text[start:end]
    return Edit(Location(loaded.path, line, column, line, column + len(old)), old, new)


def _remarked(loaded: LoadedFile, lines: list[int], new: Any) -> tuple[list[Edit], list[int]] | None:
    """A marker an earlier proposal left: its new value moved on to ``new``; the lines it flags."""
    for line in lines:
        match = _MARKER_RE.match(loaded.comments[line].text)
        if match is None:
            continue
        edit = _span_edit(loaded, line, match.start("new"), match.end("new"), str(new))
        flagged = [n for n in lines if n != line and _find(loaded.comments[n].text, match.group("old"))]
        return ([edit] if edit.old != edit.new else []), flagged
    return None


def review(loaded: LoadedFile, setting: Setting, new: Any, date: str, text) -> tuple[list[Edit], list[Explanation]]:
    """The comment edits that go with changing ``setting`` to ``new`` in ``loaded`` (``text``: the
    file as ``edit.Text``), and the comments that state its old value."""
    old = setting.value
    lines = [n for n in _comment_lines(loaded, setting) if "cfgcheck:" not in loaded.comments[n].text]
    earlier = _remarked(loaded, lines, new)
    if earlier is not None:
        edits, flagged = earlier
        return edits, [Explanation(loaded.path, n, loaded.comments[n].text, setting.name, old, new, "flagged",
                                   marked=True) for n in flagged]
    stating = [(n, found) for n in lines if (found := _find(loaded.comments[n].text, old)) is not None]
    if not stating or any(_find(loaded.comments[n].text, new) for n in lines):
        return [], []
    edits, notes, flagged = [], [], False
    for line, (start, end, form) in stating:
        comment = loaded.comments[line].text
        replacement = _written(new, form)
        if replacement is not None and _restates(comment, start, end, setting.name):
            edits.append(_span_edit(loaded, line, start, end, replacement))
            notes.append(Explanation(loaded.path, line, comment, setting.name, old, new, "updated",
                                     now=comment[:start] + replacement + comment[end:]))
        else:
            flagged = True
            notes.append(Explanation(loaded.path, line, comment, setting.name, old, new, "flagged"))
    top = _anchors(setting)[0]
    if flagged and top > 1 and loaded.documents and loaded.path.endswith((".yaml", ".yml")):
        indent = text.content(top)[:len(text.content(top)) - len(text.content(top).lstrip())]
        edits.append(text.append_after(top - 1, [f"{indent}# {_marker(date, old, new)}"]))
        for note in notes:
            note.marked = note.action == "flagged"
    return edits, notes
