"""The step a sequence limit may change by at once: CFG206 (unattributable-step) flags a larger one, and
advice elsewhere (CFG203) keeps to it. Not a diff-only module: a lint run imports it without CFG206."""

from __future__ import annotations

# raise in attributable steps (4 -> 16, not 4 -> 64): a larger change cannot be measured as one effect
# (rules/unattributable_step.py, "Why it matters")
MAX_STEP = 4


def step_limit(ctx) -> int:
    """CFG206's ``max-step`` as this run configures it (``rules:`` in .cfgcheck.yaml), else ``MAX_STEP``."""
    return int(ctx.option_of("CFG206", "max-step", MAX_STEP))
