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
from collections import Counter
from pathlib import Path

from .errors import ConfigError
from .model import Finding

VERSION = 1
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
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the baseline {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"the baseline {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("findings"), list):
        raise ConfigError(f"the baseline {path} is not a version {VERSION} cfgcheck baseline "
                          "(write one with --write-baseline)")
    counts: Counter = Counter()
    for entry in data["findings"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("code"), str) \
                or not isinstance(entry.get("path"), str) or not isinstance(entry.get("count", 1), int):
            raise ConfigError(f"the baseline {path} has a malformed entry: {str(entry)[:80]}")
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
