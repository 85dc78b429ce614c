"""Findings grouped by cause, severity first: what a review shows once instead of once per place.

A Renovate bump over 36 served models gives the same drift warning 36 times, and a repository added
in one pull request the same "image not pinned by digest" on every manifest. A reviewer reads such a
cause once, with the count and the places folded away. Two findings share a cause when they come from
the same rule at the same severity and their messages say the same thing once what names a place is
folded away (``cause_key``):

* qualifiers in parentheses go (``(SGLang 0.5.23)``, ``(assumed vLLM 0.33.0 (image tag 'dev' ...))``);
* only the headline clause counts, up to the first ``": "`` (the rest explains the consequence, with
  numbers: "... : could match --cuda-graph-bs-decode, --cuda-graph-bs-prefill");
* the served model's name, quoted values, flags, numbers, versions, paths, image and model ids,
  setting and environment names (any word holding a digit, ``_``, ``/``, ``.``, ``:``, ``@`` or ``=``)
  become one placeholder.

So "'--tp' is an abbreviation of --tp-size (SGLang 0.5.5.post3)" and "'--mem-frac' is an abbreviation of
--mem-fraction-static (SGLang 0.5.23)" are one cause; "parallel size 2 (tensor 2) but 1 GPU requested:
the engine cannot start" (error) and "parallel size 1 (tensor 1) but 2 GPUs requested: 1 stay idle"
(warning) are two, by severity. Each place keeps its own message, shown where they differ.

Supply-chain findings (CFG301/302/303) are summarised per pull request rather than commented line by
line unless the configuration asks (``review: {supply-chain: inline}``); an error is never folded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Finding
from ..reporters import severity_first

# code -> what one finding is about, as the summary counts them ("29 images without a digest")
SUPPLY_CHAIN = {
    "CFG301": ("image", "images", "without a digest"),
    "CFG302": ("image", "images", "on a tag that names no version"),
    "CFG303": ("model", "models", "without a pinned revision"),
}
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_PARENS = re.compile(r"\([^()]*\)")
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_NAME = re.compile(r"\S*[\d_/.:@=]\S*")
_HOLE = "‹›"


def cause_key(finding: Finding) -> tuple[str, str, str]:
    """(code, severity, headline with names folded): equal for findings a reviewer reads as one cause."""
    text = finding.message
    if finding.model and len(finding.model) > 2:  # "documented on chat" and "documented on qwen" alike
        text = text.replace(finding.model, _HOLE)
    text = _QUOTED.sub(_HOLE, text)
    while True:  # nested qualifiers: innermost first
        shorter = _PARENS.sub("", text)
        if shorter == text:
            break
        text = shorter
    headline = _fold(text.split(": ", 1)[0])
    # a headline that is only a name ("Qwen/Qwen2.5-7B: its 28 attention heads ...") says nothing alone
    return finding.code, finding.severity, headline if re.search(r"[A-Za-z]", headline) else _fold(text)


def _fold(text: str) -> str:
    text = _NAME.sub(_HOLE, _FLAG.sub(_HOLE, text))
    return " ".join(re.sub(f"(?:{_HOLE}\\s*)+", _HOLE + " ", text).split())


@dataclass(eq=False)
class Cause:
    """Findings of one cause, in severity-first order (the first is the one a comment is anchored on)."""

    key: tuple[str, str, str]
    findings: list[Finding] = field(default_factory=list)

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def code(self) -> str:
        return self.first.code

    @property
    def severity(self) -> str:
        return self.first.severity

    @property
    def supply_chain(self) -> bool:
        """Summarised per pull request: a CFG301/302/303 below error (an error is a finding like any other)."""
        return self.code in SUPPLY_CHAIN and self.severity != "error"

    def counted(self) -> str:
        """"×36 served models" when every place is another served model, else "×5 places"."""
        models = {f.model_identity or f.model for f in self.findings}
        count = len(self.findings)
        if None not in models and len(models) == count:
            return f"×{count} served model{'s' if count != 1 else ''}"
        return f"×{count} place{'s' if count != 1 else ''}"


def group(findings: list[Finding]) -> list[Cause]:
    """``findings`` by cause: errors first, then warnings, then notes; within a severity by the first
    place (file, line), so a review spends its inline-comment budget on errors before anything else."""
    causes: dict[tuple[str, str, str], Cause] = {}
    for finding in severity_first(findings):
        key = cause_key(finding)
        causes.setdefault(key, Cause(key)).findings.append(finding)
    return list(causes.values())  # insertion order: the first finding of each, severity first


def supply_chain_counts(causes: list[Cause]) -> list[tuple[str, int, str]]:
    """(code, count, "images without a digest") per supply-chain rule, in code order."""
    totals: dict[str, int] = {}
    for cause in causes:
        if cause.supply_chain:
            totals[cause.code] = totals.get(cause.code, 0) + len(cause.findings)
    out = []
    for code in sorted(totals):
        one, many, what = SUPPLY_CHAIN[code]
        out.append((code, totals[code], f"{one if totals[code] == 1 else many} {what}"))
    return out
