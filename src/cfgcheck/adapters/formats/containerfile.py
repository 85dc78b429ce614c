"""A Dockerfile (or Containerfile) whose final stage starts an engine: an image deployed as it is built
(Cloud Run, Koyeb, Hugging Face Spaces, ``docker run IMAGE`` without arguments).

The served model is the final stage's ``ENTRYPOINT`` and ``CMD`` as the container runs them (Dockerfile
reference, "Understand how CMD and ENTRYPOINT interact"): an exec-form ``ENTRYPOINT`` receives ``CMD`` as
arguments; a shell-form one runs under ``/bin/sh -c`` and ignores ``CMD``; without ``ENTRYPOINT`` the
``FROM`` image's entrypoint receives ``CMD`` (``vllm/vllm-openai``: ``vllm serve``, so flags alone, or a
model then flags). Instructions continue over ``\\``-newlines; a shell form is read as
``adapters/scripts.py`` reads a script, with the stage's literal ``ENV`` and ``ARG`` defaults
(``${MODEL:-org/name}`` gives its default). A stage with neither instruction only customises its base
image and serves nothing here. A Dockerfile that a compose file in its folder (or the folder above)
builds is that compose service's, read by ``adapters/compose.py``, when the compose file names an
engine (one that does not is never read, and the Dockerfile is the served model).
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

from ...model import ArgToken, ServedModel
from ...yamlio import Comment, LoadedFile
from ..launch import named_files
from ..core.contexts import Workspace
from ..core.recognition import ENGINE_MARKERS
from ..core.protocol import has_serving_marker
from ..launch.scripts import Launched, launches, locator, script_model
from ..launch.shell import expand, lex

MARKERS = ENGINE_MARKERS
SUFFIXES = ("Dockerfile", "Containerfile", ".dockerfile")
_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)[ \t]+", re.M)
_COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")


def scan_comments(text: str) -> dict[int, Comment]:
    """Lines that begin with ``#`` (parser directives included): a Dockerfile has no trailing comments."""
    found: dict[int, Comment] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            found[number] = Comment(number, len(line) - len(stripped) + 1, stripped[1:].strip(), True)
    return found


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    if not any(marker in loaded.text.lower() for marker in MARKERS) or _built_by_compose(workspace, loaded.path):
        return []
    stage = final_stage(loaded.text)
    if stage.get("ENTRYPOINT") is None and stage.get("CMD") is None:
        return []
    locate = locator(loaded)
    words, shell, own_entrypoint = _argv(loaded.text, stage)
    image = stage.get("FROM")
    image_token = ArgToken(image[0], *locate(image[1], image[1] + len(image[0]), image[0]), "image") if image else None
    if shell:  # /bin/sh -c: the commands of the string, the engine's among them
        launched = next(iter(launches(expand(words, stage["variables"]), locate)), None)
        if launched is None:
            return []
        launched.image, launched.own_entrypoint = image_token, True
    else:  # exec form: the words as they are, no variable expanded
        tokens = [ArgToken(word, *locate(start, end, word), "args") for word, start, end in words]
        launched = Launched(tokens, image=image_token, own_entrypoint=own_entrypoint)
    last = max([t.location.line for t in launched.tokens] or [1])
    model = script_model(workspace, loaded, launched, "Dockerfile", "dockerfile/0", 0, (0, last))
    return [model] if model is not None else []


def _built_by_compose(workspace: Workspace, path: str) -> bool:
    folder = posixpath.dirname(path)
    for base in (folder, posixpath.dirname(folder) if folder else None):
        if base is None:
            continue
        for name in _COMPOSE_FILES:
            text = named_files.read_text(workspace, posixpath.join(base, name) if base else name)
            if text is not None and "build" in text and has_serving_marker(text):
                return True  # a compose file without an engine word is not read: the Dockerfile is
    return False


def final_stage(text: str) -> dict:
    """The last stage's FROM image (name, offset), ENTRYPOINT and CMD as (form, start, end) offsets of
    their arguments, its literal ARG defaults and ENV values, and under ``"global"`` the ARG defaults
    declared before the first FROM (the only ones a FROM line can use)."""
    stage: dict = {"variables": {}}
    for keyword, start, end in instructions(text):
        rest = text[start:end]
        if keyword == "FROM":
            image, at = _from_image(rest)
            global_args = stage["global"] if "FROM" in stage else stage["variables"]
            stage = {"variables": {}, "FROM": (image, start + at), "global": global_args}
        elif keyword in ("ENTRYPOINT", "CMD"):
            stage[keyword] = ("exec" if rest.lstrip().startswith("[") else "shell", start, end)
        elif keyword in ("ENV", "ARG"):
            _variables(stage["variables"], rest)
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


def _variables(variables: dict[str, str | None], rest: str) -> None:
    """``ENV A=1 B="two"`` / ``ENV A 1`` / ``ARG A=1`` (an ARG without default is unknown)."""
    words = [word for word, _, _ in lex(rest.replace("\\\n", " "), shell=False)]
    if len(words) >= 2 and "=" not in words[0]:
        variables[words[0]] = " ".join(words[1:])
        return
    for word in words:
        name, assigned, value = word.partition("=")
        if name.isidentifier():
            variables[name] = value if assigned and "$" not in value else None


def _argv(text: str, stage: dict) -> tuple[list[tuple[str, int, int]], bool, bool]:
    """The words the container runs (offsets into ``text``), whether a shell runs them, and whether
    the Dockerfile set the entrypoint (else the FROM image's receives them)."""
    entrypoint, command = stage.get("ENTRYPOINT"), stage.get("CMD")
    if entrypoint is not None and entrypoint[0] == "shell":
        return instruction_words(text, entrypoint), True, True
    if entrypoint is None and command[0] == "shell":  # /bin/sh -c replaces the image's entrypoint
        return instruction_words(text, command), True, True
    words = (instruction_words(text, entrypoint) if entrypoint else []) + (instruction_words(text, command) if command else [])
    return words, False, entrypoint is not None


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
