"""The Dockerfile a compose service builds (``build: .`` or ``build: {context, dockerfile}``): which
engine its final ``FROM`` image runs, and its ``ENTRYPOINT`` and ``CMD`` (exec or shell form), each
word located where it is written; and the Dockerfile lexer this and ``formats/containerfile.py`` read
with (instructions over continuation lines, ``FROM --platform``, stages, ``ENV``/``ARG`` values, the
exec and shell forms). The ``ARG``s declared before the first ``FROM`` are substituted in it
(``FROM vllm/vllm-openai:${VLLM_VERSION}``): the value the compose file's ``build.args`` gives, else the
default, as the builder does (a build argument no ``ARG`` declares is not used).
"""

from __future__ import annotations

import posixpath
import re

from ...engines.images import parse_image
from ...model import ArgToken, Setting
from ...records import ValueRecord
from ...yamlio import Comment, LoadedFile, YNode
from . import engine_pins, named_files
from ..core.contexts import Workspace
from .expansion import substitute
from .scripts import locator
from .shell import lex

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)[ \t]+", re.M)
_ARG_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}?")


class Built(ValueRecord):
    """What a Dockerfile builds: its final stage's image, engine, entrypoint, command and environment."""

    __slots__ = ("path", "image", "engine", "entrypoint", "command", "shell_entrypoint", "env", "base", "pin")

    def __init__(self, path: str, image: str | None, engine: str | None, entrypoint: list[ArgToken] | None = None,
                 command: list[ArgToken] | None = None, shell_entrypoint: bool = False,
                 env: dict[str, Setting] | None = None, base: Setting | None = None,
                 pin: engine_pins.Pin | None = None) -> None:
        self.path = path  # the Dockerfile, repository-relative
        self.image = image  # the final FROM image, ARGs substituted
        self.engine = engine
        self.entrypoint = [] if entrypoint is None else entrypoint
        self.command = [] if command is None else command  # CMD: what the entrypoint receives by default
        self.shell_entrypoint = shell_entrypoint  # ENTRYPOINT in shell form: /bin/sh -c runs it, ignores CMD and args
        self.env = {} if env is None else env  # the final stage's ENV: the container's defaults
        self.base = base  # the final FROM image, located at its FROM line (ARGs substituted)
        self.pin = pin  # the engine version a RUN pip install pins


def read(workspace: Workspace, compose_file: str, build: YNode, args: dict[str, str] | None = None) -> Built | None:
    """The Dockerfile of ``build`` relative to the compose file, or None when it cannot be read; ``args``:
    the build arguments the service gives (``build.args``, its variables expanded)."""
    if build.kind == "scalar":
        context, name = str(build.value), "Dockerfile"
    elif build.kind == "map":
        context, name = str(build.scalar("context", default=".")), str(build.scalar("dockerfile", default="Dockerfile"))
    else:
        return None
    # relative to the compose file's folder (the project directory), else to the repository root
    # (stacks run with --project-directory at the root and -f services/compose.x.yml)
    for base in (compose_file, ""):
        rel = named_files.repo_path(base, posixpath.join(context, name))
        text = named_files.read_text(workspace, rel) if rel else None
        if text is not None:
            return parse(rel, text, args)
    return None


def parse(rel: str, text: str, args: dict[str, str] | None = None) -> Built:
    stage = final_stage(text)
    written = stage.get("FROM")
    image = from_image(stage, args)
    built = Built(rel, image, parse_image(image).engine if image else None)
    built.pin = engine_pins.installed(*build_runs(text))
    built.engine = built.engine or (built.pin.engine if built.pin is not None else None)
    locate = locator(LoadedFile(rel, text, [], scan_comments(text)))
    if written and image and written[0].lower() not in _stage_names(text):  # not an earlier stage (AS name)
        location, comments = locate(written[1], written[1] + len(written[0]), written[0])
        built.base = Setting("image", image, location, "FROM (Dockerfile)", comments, location, written[0], "dockerfile")
    for keyword, origin in (("ENTRYPOINT", "entrypoint"), ("CMD", "command")):
        if stage.get(keyword) is not None:
            tokens = [ArgToken(word, *locate(start, end, word), origin)
                      for word, start, end in instruction_words(text, stage[keyword])]
            setattr(built, origin, tokens)
    built.shell_entrypoint = stage.get("ENTRYPOINT", ("exec",))[0] == "shell"
    for start, end in stage.get("ENV", ()):
        built.env.update(_env_settings(text, start, end, locate))
    return built


def build_runs(text: str) -> tuple[list[tuple[str, int]], dict[str, str | None]]:
    """The RUN instructions (text, line) that make the final image, in order: those of the stages it is
    built ``FROM`` by name, then its own; and the literal ARG and ENV defaults they see."""
    stages: dict[str, str] = {}  # a stage's name -> the stage it is built from
    runs: dict[str, list[tuple[str, int]]] = {}
    variables: dict[str, dict[str, str | None]] = {}
    current = ""
    for keyword, start, end in instructions(text):
        rest = text[start:end]
        if keyword == "FROM":
            words = rest.split()
            current = words[-1].lower() if len(words) >= 3 and words[-2].lower() == "as" else f"#{len(stages)}"
            image, _ = _from_image(rest)
            stages[current] = image.lower()
            variables[current] = dict(variables.get(image.lower(), {}))
        elif keyword == "RUN" and current:
            runs.setdefault(current, []).append((rest, text.count("\n", 0, start) + 1))
        elif keyword in ("ARG", "ENV") and current:
            _variables(variables[current], rest, keyword == "ARG")
    chain, stage = [], current
    while stage in stages and stage not in chain:
        chain.append(stage)
        stage = stages[stage]
    commands = [run for name in reversed(chain) for run in runs.get(name, [])]
    return commands, variables.get(current, {})


def _stage_names(text: str) -> set[str]:
    """The names stages are given (``FROM image AS name``), lower-cased as the builder compares them."""
    names = set()
    for keyword, start, end in instructions(text):
        words = text[start:end].split()
        if keyword == "FROM" and len(words) >= 2 and words[-2].lower() == "as":
            names.add(words[-1].lower())
    return names


def _env_settings(text: str, start: int, end: int, locate) -> dict[str, Setting]:
    """``ENV A=1 B="two"`` (or the legacy ``ENV A 1``) as settings located at each value; a value that
    holds a variable is unknown (None)."""
    words = lex(text[start:end].replace("\\\n", "  "), shell=False, base=start)
    pairs = [(word, offset, stop) for word, offset, stop in words]
    if len(pairs) >= 2 and "=" not in pairs[0][0]:
        name, value = pairs[0][0], " ".join(word for word, _, _ in pairs[1:])
        pairs = [(f"{name}={value}", pairs[0][1], pairs[-1][2])]
    found = {}
    for word, offset, stop in pairs:
        name, assigned, value = word.partition("=")
        if assigned and name.isidentifier():
            location, comments = locate(offset + len(name) + 1, stop, value)
            found[name] = Setting(name, None if "$" in value else value, location, f"ENV {name} (Dockerfile)",
                                  comments, location, value, "env")
    return found


# ---------------------------------------------------------------- the lexer


def scan_comments(text: str) -> dict[int, Comment]:
    """Lines that begin with ``#`` (parser directives included): a Dockerfile has no trailing comments."""
    found: dict[int, Comment] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            found[number] = Comment(number, len(line) - len(stripped) + 1, stripped[1:].strip(), True)
    return found


def final_stage(text: str) -> dict:
    """The last stage's FROM image (name, offset), ENTRYPOINT and CMD as (form, start, end) offsets of
    their arguments, its literal ARG defaults and ENV values, and under ``"declared"`` the ARG
    instructions before the first FROM as written (the only ones a FROM line can use: ``from_image``)."""
    stage: dict = {"variables": {}}
    for keyword, start, end in instructions(text):
        rest = text[start:end]
        if keyword == "FROM":
            image, at = _from_image(rest)
            stage = {"variables": {}, "FROM": (image, start + at), "declared": stage.get("declared", [])}
        elif keyword in ("ENTRYPOINT", "CMD"):
            stage[keyword] = ("exec" if rest.lstrip().startswith("[") else "shell", start, end)
        elif keyword in ("ENV", "ARG"):
            _variables(stage["variables"], rest, keyword == "ARG")
            if keyword == "ARG" and "FROM" not in stage:  # as written: a build argument given changes what uses it
                stage.setdefault("declared", []).append(rest)
            if keyword == "ENV":
                stage.setdefault("ENV", []).append((start, end))
    return stage


def instructions(text: str) -> Iterator[tuple[str, int, int]]:
    """(KEYWORD, start, end) of every instruction: offsets of its arguments, continuation lines included."""
    position = 0
    while (match := _INSTRUCTION.search(text, position)) is not None:
        keyword, start = match.group(1).upper(), match.end()
        position = _instruction_end(text, start)  # the next instruction starts after this one's continuation lines
        yield keyword, start, position


def _from_image(rest: str) -> tuple[str, int]:
    """The image of ``FROM [--platform=...] IMAGE [AS name]`` and its offset in ``rest``."""
    image = next((word for word in rest.split() if not word.startswith("--")), "")
    return image, rest.find(image) if image else 0


def _instruction_end(text: str, start: int) -> int:
    """Where an instruction's arguments end: the first newline not escaped by a trailing backslash."""
    position = start
    while True:
        newline = text.find("\n", position)
        if newline < 0:
            return len(text)
        if not text[position:newline].rstrip().endswith("\\"):
            return newline
        position = newline + 1


def _variables(variables: dict[str, str | None], rest: str, arg: bool = False) -> None:
    """``ENV A=1 B="two"`` / ``ENV A 1`` / ``ARG A=1`` (an ARG without default is unknown). An ARG default
    that references earlier ARGs (``ARG BASE=nvidia/cuda:${CUDA_VERSION}-devel``) takes their values when
    every one is known and not empty; an ENV value with a variable stays unknown (a build argument the
    caller supplies)."""
    words = [word for word, _, _ in lex(rest.replace("\\\n", " "), shell=False)]
    if len(words) >= 2 and "=" not in words[0]:
        variables[words[0]] = " ".join(words[1:])
        return
    for word in words:
        name, assigned, value = word.partition("=")
        if name.isidentifier():
            variables[name] = (value if "$" not in value else _resolved(value, variables) if arg else None) \
                if assigned else None


def _resolved(value: str, variables: dict[str, str | None]) -> str | None:
    resolved = substitute(_ARG_REFERENCE, value, lambda m: variables.get(m.group(1)) or "$")
    return resolved if resolved is not None and "$" not in resolved else None


def from_image(stage: dict, args: dict[str, str] | None = None) -> str | None:
    """The final stage's FROM image with the ARGs declared before the first FROM substituted: the value
    ``args`` (the build arguments given) sets for a declared one, else its default."""
    written = stage.get("FROM")
    if not written:
        return None
    global_args: dict[str, str | None] = {}
    for declaration in stage.get("declared", ()):  # in order: a default sees the ARGs above it, given or not
        _variables(global_args, declaration, True)
        global_args.update({name: value for name, value in (args or {}).items() if name in global_args})
    return substitute(_ARG_REFERENCE, written[0], lambda m: global_args.get(m.group(1)) or m.group(0))


def instruction_words(text: str, instruction: tuple[str, int, int]) -> list[tuple[str, int, int]]:
    """The words of an ENTRYPOINT or CMD as (word, start, end) offsets into ``text``."""
    form, start, end = instruction
    body = text[start:end]
    if form == "exec":  # a JSON array: its brackets and commas are spaces, its strings shell-quoted words
        body = _unbracket(body)
    return lex(body, shell=form == "shell", base=start)


def _unbracket(body: str) -> str:
    out, quoted, previous = [], False, ""
    for char in body:
        if char == '"' and previous != "\\":
            quoted = not quoted
        out.append(" " if not quoted and char in "[],\\" else char)
        previous = char
    return "".join(out)
