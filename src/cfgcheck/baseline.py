"""A baseline: the findings a repository already had when it adopted cfgcheck, so that only new ones
are reported (``--write-baseline FILE`` records them, ``--baseline FILE`` reads them).

The file is JSON, written sorted and without timestamps so that it diffs cleanly in review::

    {"version": 1, "tool": "cfgcheck",
     "findings": [{"code": "CFG203", "path": "k8s/chat.yaml", "model": "k8s/chat.yaml#Deployment/chat",
                   "setting": "max_num_seqs", "count": 1}]}

A finding is identified by its rule, file, served model and setting, never by its line, so edits that
move it keep it baselined. A finding about no particular setting is identified by its message
instead (``"message"`` in place of ``"setting"``). ``count`` is how many such findings there were: a
second one with the same identity is new. Baselined findings stay in the report as suppressed
(reason: the baseline file), so JSON and SARIF still show them.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from .errors import ConfigError
from .paths import UnsafePath, blob_at, inside_repo, repo_relative
from .model import Finding

VERSION = 1
MAX_BYTES = 16 * 1024 * 1024  # a baseline read from a commit: far above any real one (a few KB per 100 findings)
Key = tuple[str, str, str, str, str]  # code, path, served model, setting, message (one of the last two)


def key(finding: Finding) -> Key:
    model = finding.model_identity or ""
    if finding.setting:
        return (finding.code, finding.location.path, model, finding.setting, "")
    return (finding.code, finding.location.path, model, "", finding.message)


def write(path: Path, findings: list[Finding]) -> int:
    """Record the unsuppressed ``findings`` in ``path``; returns how many were recorded."""
    counts = Counter(key(f) for f in findings if f.suppressed is None)
    entries = []
    for (code, where, model, setting, message), count in sorted(counts.items()):
        entry = {"code": code, "path": where, "model": model or None}
        entry.update({"setting": setting} if setting else {"message": message})
        entry["count"] = count
        entries.append(entry)
    text = json.dumps({"version": VERSION, "tool": "cfgcheck", "findings": entries}, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the baseline {path}: {exc.strerror or exc}") from None
    return sum(counts.values())


def load(path: Path) -> Counter:
    """The recorded identities with their counts; a one-line ConfigError for anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the baseline {path}: {exc.strerror or exc}") from None
    return loads(text, str(path))


def loads(text: str, name: str) -> Counter:
    """``load`` for a baseline's text (``review`` reads it from the base commit, not the work tree)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"the baseline {name} is not JSON: {exc}") from None
    except RecursionError:  # json's decoder recurses
        raise ConfigError(f"the baseline {name} is not JSON: nested too deeply") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("findings"), list):
        raise ConfigError(f"the baseline {name} is not a version {VERSION} cfgcheck baseline "
                          "(write one with --write-baseline)")
    counts: Counter = Counter()
    for entry in data["findings"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("code"), str) \
                or not isinstance(entry.get("path"), str) or not isinstance(entry.get("count", 1), int):
            raise ConfigError(f"the baseline {name} has a malformed entry: {str(entry)[:80]}")
        counts[(entry["code"], entry["path"], entry.get("model") or "", entry.get("setting") or "",
                "" if entry.get("setting") else str(entry.get("message") or ""))] += entry.get("count", 1)
    return counts


def apply(findings: list[Finding], recorded: Counter, name: str) -> int:
    """Mark as suppressed the findings the baseline holds (up to its count of each); returns how many
    recorded findings did not occur (fixed since, or moved to another file or served model)."""
    left = Counter(recorded)
    for finding in findings:
        if finding.suppressed is not None:
            continue
        identity = key(finding)
        if left[identity] > 0:
            left[identity] -= 1
            finding.suppressed = f"in the baseline {name}"
    return sum(left.values())


def reviewed(root: Path, commit: str, path: Path) -> tuple[Counter | None, list[str]]:
    """The baseline a pull request's review applies: ``path`` as ``commit`` (the base) has it, never as the
    pull request has it (it could record the findings it introduces); and, one line, what the pull
    request changes in it (applied once merged). None when the base has no such file."""

    try:
        relative = repo_relative(root, os.path.abspath(path), what="baseline")
        raw = blob_at(root, commit, relative, what="baseline", limit=MAX_BYTES)
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None
    before = loads(raw.decode("utf-8", "replace"), f"{relative} at {commit[:12]}") if raw is not None else None
    try:  # the pull request's copy: only compared, and a broken one never stops the review
        head = inside_repo(root, relative, what="baseline", links=False)
        after = load(head) if head.is_file() else None
    except (UnsafePath, ConfigError) as exc:
        return before, [f"the pull request's baseline cannot be used ({exc}); it would fail after merge"]
    if before == after:
        return before, []
    return before, [f"baseline {relative} changed ({_size(before)} → {_size(after)} findings recorded), "
                    "used once merged"]


def _size(counts: Counter | None) -> str:
    return "no file" if counts is None else str(sum(counts.values()))
