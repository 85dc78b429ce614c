"""docker compose variables: the ``.env`` file beside a compose file, ``env_file`` files, and
interpolation (``${VAR}``, ``$VAR``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``,
``${VAR:+alternative}``, ``$$``) as docker compose applies it (compose-spec ``interpolation.md``).

A variable the files do not set keeps its reference as written: the shell that runs ``docker
compose`` may set it, so its value is unknown (compose would substitute an empty string with a
warning, or stop for ``:?``). So does a variable whose name says it holds a secret
(``secret_names.secret_name``: ``VLLM_API_KEY``, ``HF_TOKEN``): it is set, its value is never read into an
argument, so no finding can quote it (``--max-model-len ${VLLM_API_KEY}`` is an unknown value, not
the key). A token that is exactly one reference is located where its value is written: the line of
the ``.env`` file, or the default inside the reference.
"""

from __future__ import annotations

import re

from ...model import ArgToken, Location
from ...records import ValueRecord
from ...secret_names import secret_name
from . import named_files
from .expansion import substitute as bounded_substitute
from ..core.contexts import Workspace

_LINE = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*(.*?)[ \t]*$")
_REFERENCE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])((?:[^{}]|\{[^{}]*\})*))?\}"
                        r"|\$([A-Za-z_][A-Za-z0-9_]*)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


class Variable(ValueRecord):
    """One ``KEY=VALUE`` line of an env file."""

    __slots__ = ("value", "location", "comments")

    def __init__(self, value: str | None, location: Location, comments: tuple[str, ...] = ()) -> None:
        self.value = value  # None: set, its value unknown (a secret)
        self.location = location
        self.comments = comments  # the comment lines directly above and on its line (a reason)


def read_env_file(workspace: Workspace, rel: str | None) -> dict[str, Variable] | None:
    """``KEY=VALUE`` lines of a repository env file (``export``, quotes and ``#`` comments as docker
    compose reads them), or None when the file is absent or unreadable."""
    text = named_files.read_text(workspace, rel) if rel else None
    if text is None:
        return None
    found: dict[str, Variable] = {}
    above: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            above.append(line.lstrip()[1:].strip())
            continue
        match = _LINE.match(line)
        if match is None:
            above = []
            continue
        raw, column = match.group(2), match.start(2) + 1
        value = _unquote(raw)
        if raw[:1] in ("'", '"'):
            column += 1
        inline = raw.split(" #", 1)[1].strip() if raw[:1] not in ("'", '"') and " #" in raw else None
        comments = tuple(above) + ((inline,) if inline else ())
        location = Location(rel, number, column, number, column + len(value))
        found[match.group(1)] = Variable(None if secret_name(match.group(1)) else value, location, comments)
        above = []
    return found


def _unquote(raw: str) -> str:
    if raw[:1] == "'" and "'" in raw[1:]:
        return raw[1:raw.index("'", 1)]
    if raw[:1] == '"':
        out, index = [], 1
        while index < len(raw) and raw[index] != '"':
            if raw[index] == "\\" and index + 1 < len(raw):
                out.append(_ESCAPES.get(raw[index + 1], "\\" + raw[index + 1]))
                index += 2
                continue
            out.append(raw[index])
            index += 1
        return "".join(out)
    return re.split(r"[ \t]+#", raw, maxsplit=1)[0]


def substitute(token: ArgToken, env: dict[str, Variable]) -> ArgToken:
    """``token`` with the references whose value is known replaced, as docker compose does."""
    if "$" not in token.text:
        return token
    whole = _REFERENCE.fullmatch(token.text)
    if whole is not None and whole.group(0) != "$$":
        found = _resolve(whole, env, token.location)
        if found is None:
            return token
        return ArgToken(found.value, found.location, found.comments or token.comments, token.origin, token.synthetic)

    def replace(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        found = _resolve(match, env, token.location)
        return match.group(0) if found is None else found.value

    text = bounded_substitute(_REFERENCE, token.text, replace)
    return token if text is None else ArgToken(text, token.location, token.comments, token.origin, token.synthetic)


def _resolve(match: re.Match, env: dict[str, Variable], at: Location) -> Variable | None:
    """The value of one reference, located where it is written; None when it is not known."""
    name = match.group(1) or match.group(4)
    operator, argument = match.group(2), match.group(3) or ""
    variable = env.get(name)
    is_set = variable is not None and (variable.value != "" or not (operator or "").startswith(":"))
    if operator in (":+", "+"):
        return _inner(argument, match.start(3), env, at) if is_set else Variable("", at)
    if is_set:
        return variable if variable.value is not None else None
    if operator in (":-", "-"):
        return _inner(argument, match.start(3), env, at)
    return None  # unset: the shell may set it (compose stops for :? and ?)


def _inner(text: str, offset: int, env: dict[str, Variable], at: Location) -> Variable | None:
    """A default (or alternative) value, itself interpolated, located inside the reference."""
    column = at.column + offset
    location = Location(at.path, at.line, column, at.line, column + len(text))
    if any(m.group(0) != "$$" and _resolve(m, env, location) is None for m in _REFERENCE.finditer(text)):
        return None
    resolved = substitute(ArgToken(text, location), env)
    return Variable(resolved.text, resolved.location, resolved.comments)
