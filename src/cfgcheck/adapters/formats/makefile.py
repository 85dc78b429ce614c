"""Makefiles whose recipes start an engine (``make serve``: ``vllm serve Qwen/Qwen3-4B --max-model-len ...``).

A recipe is the tab-indented lines after a rule's ``target:`` line (GNU make manual, "Rule Syntax" and
"Recipe Syntax"); a backslash-newline continues the command on the next line. Each recipe line is a
shell command, read as ``launch/scripts.py`` reads a script: its ``@``/``-``/``+`` prefixes dropped,
``$(NAME)`` / ``${NAME}`` expanded from the makefile's literal variables (``NAME ?= value``, ``:=``,
``=``, ``::=``, optionally ``export``/``override``), ``$$`` the shell's ``$``. The served model is named
after its target. Variables set on the command line (``make serve MODEL=...``) override a value: the
default written in the file is what is checked.
"""

from __future__ import annotations

import re

from ...model import ServedModel
from ...yamlio import Comment, LoadedFile
from ..core.contexts import Workspace
from ..core.recognition import ENGINE_MARKERS
from ..launch.expansion import bounded, substitute
from ..launch.scripts import scan_comments as _shell_comments
from ..launch.scripts import recipe_models

MARKERS = ENGINE_MARKERS
SUFFIXES = ("Makefile", "makefile", "GNUmakefile", ".mk")

_ASSIGNMENT = re.compile(r"^(?:(?:export|override)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|::?=|:::=|\+=|=)\s*(.*)$")
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)(.*)$")
_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def scan_comments(text: str) -> dict[int, Comment]:
    """``#`` comments, at the top level and in recipes (where the shell reads them) alike."""
    return _shell_comments(text)


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    return recipe_models(workspace, loaded, _read, "make target", "make")


def _read(text: str) -> tuple[str, list[tuple[int, str]], dict[str, str | None]]:
    """The recipes as shell text at the makefile's offsets (everything else blanked, newlines kept),
    the rules' (line, first target) in order, and the literal variables."""
    lines = text.split("\n")
    shell: list[str] = []
    targets: list[tuple[int, str]] = []
    variables: dict[str, str | None] = {}
    in_rule = continued = False
    for number, line in enumerate(lines, start=1):
        if (in_rule and line.startswith("\t")) or continued:
            shell.append(_command(line, first=not continued))
            continued = line.endswith("\\")
            continue
        shell.append(" " * len(line))
        assignment = _ASSIGNMENT.match(line)
        rule = None if assignment or line.startswith("\t") else _RULE.match(line)
        if assignment:
            _assign(variables, *assignment.groups())
        elif rule is not None and not rule.group(1).startswith("."):
            targets.append((number, rule.group(1).split()[0]))
        in_rule = rule is not None or (in_rule and not line.strip()) or (in_rule and line.lstrip().startswith("#"))
    return "\n".join(shell), targets, variables


def _command(line: str, first: bool) -> str:
    """One recipe line as the shell receives it, character for character: the recipe tab and, on a
    command's first line, the ``@ - +`` prefixes are spaces, ``$(NAME)`` is ``${NAME}`` and ``$$`` an
    escaped ``$``."""
    tab = 1 if line.startswith("\t") else 0
    body = line[tab:]
    prefix = len(body) - len(body.lstrip("@-+ \t")) if first else 0
    body = " " * (tab + prefix) + body[prefix:]
    body = body.replace("$$", "\\$")
    return _REFERENCE.sub(lambda match: "${" + match.group(1) + "}", body)


def _assign(variables: dict[str, str | None], name: str, operator: str, value: str) -> None:
    value = value.split("#", 1)[0].strip()
    if operator == "?=" and name in variables:
        return
    if operator == "+=":
        base = variables.get(name)
        joined = None if base is None and name in variables else f"{base or ''} {value}".strip()
        variables[name] = joined if joined is None or bounded(joined) else None  # expansion.py: past it, unknown
        return
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]  # the shell unquotes the expanded word
    expanded = substitute(_REFERENCE, value, lambda match: variables.get(match.group(1)) or match.group(0))
    variables[name] = None if expanded is None or "$" in expanded else expanded
