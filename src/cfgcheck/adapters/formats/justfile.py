"""Justfiles (``just``) whose recipes start an engine, read as Makefiles are (``formats/makefile.py``).

A recipe is a header at the start of a line (``name PARAM="default": dependencies``, an ``@`` before the
name quiets it) followed by its indented body; each body line is a shell command, and a trailing
backslash continues it (just manual, "Recipes", "Line continuation"). Assignments ``NAME := "value"``
(also ``export NAME := ...``) give the variables ``{{NAME}}`` interpolates (spaces inside the braces
allowed); a value that is not one quoted string (a backtick, a concatenation, a function call) is
unknown, as is a recipe parameter. ``set`` lines, attributes (``[group('x')]``), comments and ``@`` /
``-`` prefixes of body lines are not commands. The served model is named after its recipe. Variables
set on the command line (``just MODEL=other serve``) override a value: the default written in the file
is what is checked.
"""

from __future__ import annotations

import re

from ...model import ServedModel
from ...yamlio import LoadedFile
from ..core.contexts import Workspace
from ..core.recognition import ENGINE_MARKERS
from ..launch.scripts import recipe_models
from ..launch.scripts import scan_comments  # noqa: F401 - the protocol hook: `#` comments, in bodies too

MARKERS = ENGINE_MARKERS
SUFFIXES = ("Justfile", "justfile", ".just")

_ASSIGNMENT = re.compile(r"^(?:export[ \t]+)?([A-Za-z_][\w-]*)[ \t]*:=[ \t]*(.*?)[ \t]*$")
_QUOTED = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'([^']*)'")
_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)(?:[ \t]+[^:]*?)?[ \t]*:(?!=)")
_INTERPOLATION = re.compile(r"\{\{[ \t]*([A-Za-z_]\w*)[ \t]*\}\}")  # a name the shell can hold (no dash)
# the alias a {{NAME}} is read through: the same length as the braces it replaces, so the body keeps the
# file's offsets (``${`` + name + padding + ``}``)
_PAD = "_"


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    return recipe_models(workspace, loaded, _read, "just recipe", "just")


def _read(text: str) -> tuple[str, list[tuple[int, str]], dict[str, str | None]]:
    """The recipe bodies as shell text at the file's offsets (everything else blanked, newlines kept),
    the recipes' (line, name) in order, and the variables (aliases of ``{{NAME}}`` included)."""
    shell: list[str] = []
    recipes: list[tuple[int, str]] = []
    assigned: dict[str, str | None] = {}
    in_recipe = continued = False
    for number, line in enumerate(text.split("\n"), start=1):
        if in_recipe and (line[:1] in (" ", "\t") or not line.strip()):
            shell.append(line if continued else _command(line))
            continued = line.endswith("\\")
            continue
        shell.append(" " * len(line))
        assignment = _ASSIGNMENT.match(line)
        recipe = None if assignment or line.startswith(("set ", "[", "#", "alias ", "import ", "mod ")) \
            else _RECIPE.match(line)
        if assignment is not None:
            assigned[assignment.group(1)] = _literal(assignment.group(2))
        elif recipe is not None:
            recipes.append((number, recipe.group(1)))
        in_recipe = recipe is not None or (in_recipe and line.startswith("#"))
    body = "\n".join(shell)
    variables = dict(assigned)
    for match in _INTERPOLATION.finditer(body):
        alias = _alias(match)
        variables[alias] = assigned.get(match.group(1))
    return _INTERPOLATION.sub(lambda match: "${" + _alias(match) + "}", body), recipes, variables


def _alias(match: re.Match) -> str:
    return match.group(1) + _PAD * (len(match.group(0)) - len(match.group(1)) - 3)


def _command(line: str) -> str:
    """The first line of a body command as the shell receives it, character for character: its ``@`` /
    ``-`` prefix is a space."""
    stripped = line.lstrip(" \t")
    prefix = len(stripped) - len(stripped.lstrip("@-"))
    return line[:len(line) - len(stripped)] + " " * prefix + stripped[prefix:]


def _literal(value: str) -> str | None:
    """The value of one quoted string (``"org/name"``, ``'0.5'``), else None: just evaluates the rest."""
    value = value.split(" #", 1)[0].strip()
    match = _QUOTED.fullmatch(value)
    if match is None:
        return None
    text = match.group(1) if match.group(1) is not None else match.group(2)
    return None if "{{" in text else text
