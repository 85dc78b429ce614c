"""Comments anywhere in the repository that a change made stale (CFG402's evidence).

A change that removes a setting, or changes its value, leaves behind the comments that explained
it: beside it, in a CI workflow that runs the model, in a shell script. For each setting a change
removed or changed, ``git grep`` looks for its spellings in every tracked (and untracked, not
ignored) file: the flag (``--max-num-seqs``), the destination (``max_num_seqs``), the operator
fields that carry it (``maxNumSeqs``, ``parallelSlots``: from ``settings.py`` and from where the
base wrote it). A hit counts when it is in a comment and the comment block around it (contiguous
comment lines) also names the same model or engine (or lies in the model's own file), or states the
old value; for a changed value, only a block that states the old value is stale. A comment on the
changed value's line or directly above it is stale when it states the old value and not the new, even
without naming the setting. Lines the change itself added are not reported.

The search costs one ``git grep`` per changed served model, with fixed strings passed with ``-e``
(no shell, no pattern syntax), its output read up to a bound; only files with a hit are read again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import git, settings
from .adapters.core.registry import operator_fields
from .engines.argv import launch_offset, walk
from .engines.catalog import catalog_for
from .engines.versions import DISPLAY
from .model import Location, ServedModel

MAX_HITS = 400  # grep lines read per served model: the rest is not searched (a bound, not a sample)
MAX_LINE = 4096  # bytes of one grep line kept
MAX_FILE = 2 * 1024 * 1024  # a file larger than this is not read for its comment block
_SAFE_SPELLING = re.compile(r"^-{0,2}[A-Za-z][A-Za-z0-9_.-]{2,80}$")
_COMMENT = re.compile(r"(?:^|\s)(#|//)")
# a comment that is one disabled key or flag with its value (``#   max_num_seqs: 128  # note``,
# ``# - "--max-num-seqs"``): configuration switched off, not an explanation of the live value
_DISABLED = re.compile(r"""^-?\s*["']?-{0,2}[\w.-]+["']?\s*(?:[:=]\s*|\s)?\s*["']?[^\s#"']*["']?\s*(?:#.*)?$""")


@dataclass(frozen=True)
class ChangedSetting:
    """A setting (or raw flag) the change removed or gave another value."""

    name: str  # canonical setting, or the flag for a flag outside the vocabulary
    old: Any
    new: Any  # None when removed
    removed: bool
    spellings: tuple[str, ...]
    changed_at: Location  # head location of the new value, or the base location of the removed one


@dataclass(frozen=True)
class StaleComment:
    setting: ChangedSetting
    location: Location  # the comment line that names the setting
    text: str  # that line's comment, trimmed


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def spellings(name: str, engine: str, sources: list[str]) -> tuple[str, ...]:
    """Every way a repository may name a setting: the flag and destination of each engine that has it
    (``settings.py``), their camelCase, its operator fields (each format's, ``operator_fields``), and the keys
    the base wrote it under."""
    found: set[str] = set()
    definition = settings.BY_NAME.get(name)
    dests = [d for names in definition.dests.values() for d in names if len(d) > 2] if definition else []
    if not definition:
        dests = [name.lstrip("-").replace("-", "_")]
    for dest in dests:
        found.update({"--" + dest.replace("_", "-"), dest, _camel(dest)})
    if definition:
        found.update(field for table in operator_fields() for field, (_, canonical) in table.items() if canonical == name)
    for source in sources:
        found.add(source.rsplit(".", 1)[-1] if not source.startswith("-") else source)
    # one plain word ("dtype") would match prose everywhere: a spelling must be a compound
    return tuple(sorted(s for s in found if _SAFE_SPELLING.match(s) and ("_" in s or "-" in s or
                                                                        any(c.isupper() for c in s))))


def _flags(model: ServedModel) -> dict[str, Any]:
    """Full option string -> the token that wrote it, for argv flags outside the vocabulary."""
    catalog = catalog_for(model.engine, model.engine_version)
    if catalog is None or not model.argv:
        return {}
    tokens = list(model.argv)
    known = {settings.canonical_name(model.engine, dest) for dest in settings.DESTS.get(model.engine, {})}
    out = {}
    for flag in walk(catalog, tokens[launch_offset(tokens):]):
        spec = flag.resolution.spec
        if spec is not None and flag.resolution.option and not flag.token.synthetic and \
                settings.canonical_name(model.engine, spec.dest) not in known:
            out[flag.resolution.option] = flag
    return out


def changed_settings(base: ServedModel, head: ServedModel) -> list[ChangedSetting]:
    """Settings and flags ``head`` no longer sets, or sets to another value, than ``base``."""
    found: list[ChangedSetting] = []
    for name, before in base.settings.items():
        after = head.settings.get(name)
        if after is not None and repr(after.value) == repr(before.value):
            continue
        sources = [s.source for s in base.occurrences.get(name, [before])]
        where = after.location if after is not None else before.location
        found.append(ChangedSetting(name, before.value, after.value if after is not None else None, after is None,
                                    spellings(name, head.engine, sources), where))
    after_flags = _flags(head)
    for option, flag in _flags(base).items():
        if option not in after_flags:
            value = flag.value.text if flag.value is not None else flag.inline_value
            found.append(ChangedSetting(option, value, None, True, spellings(option, head.engine, [option]),
                                        flag.token.location))
    return found


def _grep(root: Path, patterns: list[str]) -> list[tuple[str, int, str]]:
    """(path, line, text) of lines holding any of ``patterns`` (fixed strings), at most MAX_HITS; the
    output is read up to MAX_HITS lines of MAX_LINE bytes (a longer line costs the ones after it)."""
    args = ["grep", "--untracked", "-n", "-z", "-I", "-F", "--no-color"]
    for pattern in patterns:
        args += ["-e", pattern]
    args.append("--")
    try:
        out = git.run(root, *args, limit=MAX_HITS * MAX_LINE).stdout
    except git.GitError:
        return []
    hits: list[tuple[str, int, str]] = []
    for raw in out.split(b"\n")[:-1]:  # the last piece is empty, or a line cut at the bound
        parts = raw[:MAX_LINE].split(b"\0", 2)
        if len(parts) == 3 and parts[1].isdigit():
            hits.append((parts[0].decode("utf-8", "surrogateescape"), int(parts[1]),
                         parts[2].decode("utf-8", "replace").rstrip("\r\n")))
        if len(hits) >= MAX_HITS:
            break
    return hits


def _added_lines(root: Path, base: str, paths: list[str]) -> dict[str, set[int]]:
    """Head line numbers the change added to each of ``paths``: one ``git diff -U0`` for all of them (a
    process per file cost a ``--base`` run 37 git starts on one changed setting). A path the change left
    alone has no entry."""
    if not paths:
        return {}
    # explicit prefixes (the user's diff.noPrefix or diff.mnemonicPrefix would change them), no rename
    # pairing (each path is compared with itself, as one diff per path did), pathspecs taken literally
    out = git.run(root, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "--src-prefix=a/",
                  "--dst-prefix=b/", "--end-of-options", base, "--", *sorted(set(paths)),
                  env={"GIT_LITERAL_PATHSPECS": "1"}).stdout.decode("utf-8", "surrogateescape")
    added: dict[str, set[int]] = {}
    current: set[int] | None = None
    content = 0  # lines of the current hunk still to come: a "+++ " among them is content, not a header
    for line in out.split("\n"):
        if content > 0 and line[:1] in ("+", "-", " "):
            content -= 1
        elif line.startswith("diff --git "):
            current = None
        elif line.startswith("+++ "):
            name = _unquoted(line[4:].rstrip("\t"))  # git ends a name holding a space with a tab
            current = added.setdefault(name[2:], set()) if name.startswith("b/") else None
        elif (hunk := _HUNK.match(line)) is not None:
            start, count = int(hunk.group(3)), int(hunk.group(4) or 1)
            content = int(hunk.group(2) or 1) + count  # "\\ No newline at end of file" is not counted
            if current is not None:
                current.update(range(start, start + count))
    return added


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13}


def _unquoted(name: str) -> str:
    """A path as git's diff header writes it, unquoted: a name with an unusual byte is written in C quotes,
    each such byte as an octal escape (git-scm.com/docs/git-config, ``core.quotePath``)."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    body, raw, index = name[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            after = body[index + 1]
            if after in "01234567":
                raw.append(int(body[index + 1:index + 4], 8) & 0xFF)
                index += 4
                continue
            raw.append(_ESCAPES.get(after, ord(after)))
            index += 2
            continue
        raw.extend(char.encode("utf-8", "surrogateescape"))
        index += 1
    return raw.decode("utf-8", "surrogateescape")


def _read_lines(root: Path, path: str) -> list[str] | None:
    target = root / path
    try:
        if target.is_symlink() or not target.is_file() or target.stat().st_size > MAX_FILE:
            return None
        resolved = target.resolve()
        resolved.relative_to(root.resolve())
        return resolved.read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None


def _comment(text: str) -> tuple[int, str] | None:
    """(column, comment text) when the line holds a comment (``#`` or ``//``)."""
    match = _COMMENT.search(text)
    if match is None:
        return None
    return match.start(1), text[match.end(1):].strip()


def _block(lines: list[str], index: int) -> str:
    """The comment block around ``lines[index]``: the contiguous lines that are comments."""
    start = end = index
    while start > 0 and _comment(lines[start - 1]) is not None and lines[start - 1].lstrip()[:1] in "#/":
        start -= 1
    while end + 1 < len(lines) and _comment(lines[end + 1]) is not None and lines[end + 1].lstrip()[:1] in "#/":
        end += 1
    return "\n".join(c[1] for c in map(_comment, lines[start:end + 1]) if c is not None)


def _names(model: ServedModel) -> list[str]:
    """Words that say a comment is about this served model or its engine."""
    names = {model.name, model.engine, DISPLAY.get(model.engine, model.engine)}
    ident = model.model.value if model.model is not None else None
    if isinstance(ident, str) and ident:
        names.update({ident, ident.rstrip("/").rsplit("/", 1)[-1]})
    served = model.value("served_model_name")
    if isinstance(served, str):
        names.add(served)
    return [n.lower() for n in names if isinstance(n, str) and len(n) >= 3 and n != "unknown"]


def _states(block: str, value: Any) -> bool:
    text = str(value) if not isinstance(value, bool) else ""
    return bool(text) and re.search(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", block) is not None


def find(root: Path, base: str, head: ServedModel, changes: list[ChangedSetting]) -> list[StaleComment]:
    """The comments in the repository at ``root`` that ``changes`` to ``head`` made stale: those that name
    a changed setting (anywhere), and those attached to a changed value that state its old value."""
    named = _named(root, base, head, changes)
    seen = {(c.location.path, c.location.line) for c in named}
    return named + [c for c in _attached(root, base, changes) if (c.location.path, c.location.line) not in seen]


# a comment on the changed line that tells its history ("raised from 8", "was 8", "8 -> 16") states the old
# value on purpose
_HISTORY = re.compile(r"\b(?:was|were|previously|formerly|from|before|old|raised|lowered|bumped|instead of)\b|->|→", re.I)


def _attached(root: Path, base: str, changes: list[ChangedSetting]) -> list[StaleComment]:
    """Comments on the line of a changed value, or in the comment lines directly above it, that state the
    old value and not the new one (``# 8 seqs: measured on the A100`` above ``maxNumSeqs: 16``): an
    explanation of the old value left beside the new. Comment lines above that the change added are its
    own explanation, not stale."""
    found: list[StaleComment] = []
    changed = _added_lines(root, base, [change.changed_at.path for change in changes])
    for change in changes:
        at = change.changed_at
        if change.removed or change.old is None or isinstance(change.old, bool) or isinstance(change.new, bool):
            continue
        lines = _read_lines(root, at.path)
        if lines is None or at.line > len(lines):
            continue
        added = changed.get(at.path, set())
        index, candidates = at.line - 1, [at.line - 1]
        while index > 0 and lines[index - 1].lstrip()[:1] == "#":
            index -= 1
            candidates.append(index)
        for line in candidates:
            comment = _comment(lines[line])
            if comment is None or (line + 1 in added if line + 1 != at.line else _HISTORY.search(comment[1])):
                continue  # the change's own explanation: a comment line it wrote, or history on the value's line
            if _states(comment[1], change.old) and not _states(comment[1], change.new):
                found.append(StaleComment(change, Location(at.path, line + 1, comment[0] + 1), comment[1][:200]))
    return found


def _named(root: Path, base: str, head: ServedModel, changes: list[ChangedSetting]) -> list[StaleComment]:
    patterns = sorted({s for change in changes for s in change.spellings})
    if not patterns:
        return []
    names, found, files = _names(head), [], {}
    hits = [(path, line, comment) for path, line, text in _grep(root, patterns)
            if (comment := _comment(text)) is not None and not _DISABLED.match(comment[1])]
    added = _added_lines(root, base, [path for path, _, _ in hits])
    for path, line, comment in hits:
        if path not in files:
            files[path] = _read_lines(root, path)
        lines = files[path]
        if lines is None or line > len(lines) or line in added.get(path, ()):
            continue
        block = _block(lines, line - 1)
        for change in changes:
            named = [s for s in change.spellings if s in comment[1]]
            if not named:
                continue
            about = path == head.path or any(n in block.lower() for n in names)
            if _states(block, change.old) or (change.removed and about):
                found.append(StaleComment(change, Location(path, line, comment[0] + 1), comment[1][:200]))
                break
    return found
