"""Reporters: turn a lint result into text, JSON, SARIF, GitHub workflow commands or Markdown."""

from __future__ import annotations

from typing import Callable

FORMATS = ("text", "json", "sarif", "github", "markdown")


def renderer(fmt: str) -> Callable:
    if fmt == "json":
        from .json_report import render
    elif fmt == "sarif":
        from .sarif import render
    elif fmt == "github":
        from .github import render
    elif fmt == "markdown":
        from .markdown import render
    else:
        from .text import render
    return render
