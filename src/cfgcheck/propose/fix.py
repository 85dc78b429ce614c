"""``cfgcheck fix``: apply the mechanical fixes findings carry (``Finding.fix``), every other byte kept.

Shared with ``propose --fix``, which applies the same edits in its temporary worktree.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from ..lint import LintResult
from ..model import Edit, Finding
from ..yamlio import LoadedFile, apply_edits
from .edit import FileResult
from .files import read_bytes, write_bytes


@dataclass
class FixResult:
    files: list[FileResult] = field(default_factory=list)
    applied: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, why)


def fixable(result: LintResult) -> list[Finding]:
    return [f for f in result.findings if f.fix is not None and f.fix.edits and f.suppressed is None]


def _overlaps(edit: Edit, taken: list[Edit]) -> bool:
    start, end = edit.location.column, edit.location.column + max(len(edit.old), 1)
    for other in taken:
        if other.location.line != edit.location.line:
            continue
        other_start = other.location.column
        other_end = other_start + max(len(other.old), 1)
        if start < other_end and other_start < end:
            return True
    return False


def compute(result: LintResult) -> FixResult:
    """Apply every fix of ``result`` to the loaded texts; a fix that overlaps one already taken, or
    whose text no longer matches, is skipped with a reason."""
    texts: dict[str, LoadedFile] = {f.path: f for f in result.files}
    taken: dict[str, list[Edit]] = {}
    outcome = FixResult()
    for finding in fixable(result):
        edits = list(finding.fix.edits)
        paths = {e.location.path for e in edits}
        if any(p not in texts for p in paths):
            outcome.skipped.append((finding, "its file was not linted"))
            continue
        if any(_overlaps(e, taken.get(e.location.path, [])) for e in edits):
            if all(e in taken.get(e.location.path, []) for e in edits):
                outcome.applied.append(finding)  # the same edit from another finding
            else:
                outcome.skipped.append((finding, "overlaps another fix; run cfgcheck fix again"))
            continue
        try:
            for path in paths:
                apply_edits(texts[path].text, [e for e in edits if e.location.path == path])
        except ValueError as exc:
            outcome.skipped.append((finding, str(exc)))
            continue
        for edit in edits:
            taken.setdefault(edit.location.path, []).append(edit)
        outcome.applied.append(finding)
    for path in sorted(taken):
        before = texts[path].text
        after = apply_edits(before, taken[path])
        if after != before:
            outcome.files.append(FileResult(path, before, after))
    return outcome


def unified_diff(files: list[FileResult]) -> str:
    out = []
    for item in files:
        for line in difflib.unified_diff(item.before.splitlines(keepends=True), item.after.splitlines(keepends=True),
                                         fromfile=f"a/{item.path}", tofile=f"b/{item.path}"):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write(root: Path, files: list[FileResult]) -> None:
    """Write each file back with its original encoding marker (UTF-8 BOM) and line endings; never
    through a symbolic link (``files.UnsafePath``)."""
    for item in files:
        original = read_bytes(root, item.path)
        prefix = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
        if original.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ValueError(f"{item.path}: UTF-16 files are not rewritten; apply the fix by hand")
        write_bytes(root, item.path, prefix + item.after.encode("utf-8"))
