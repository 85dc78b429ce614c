"""A Dockerfile (or Containerfile) whose final stage starts an engine: an image deployed as it is built
(Cloud Run, Koyeb, Hugging Face Spaces, ``docker run IMAGE`` without arguments).

The served model is the final stage's ``ENTRYPOINT`` and ``CMD`` as the container runs them (Dockerfile
reference, "Understand how CMD and ENTRYPOINT interact"): an exec-form ``ENTRYPOINT`` receives ``CMD`` as
arguments; a shell-form one runs under ``/bin/sh -c`` and ignores ``CMD``; without ``ENTRYPOINT`` the
``FROM`` image's entrypoint receives ``CMD`` (``vllm/vllm-openai``: ``vllm serve``, so flags alone, or a
model then flags). Instructions continue over ``\\``-newlines; a shell form is read as
``launch/scripts.py`` reads a script, with the stage's literal ``ENV`` and ``ARG`` defaults
(``${MODEL:-org/name}`` gives its default). A ``RUN pip install vllm==X`` of the image's stages gives
the engine version (launch/engine_pins.py). A stage with neither instruction only customises its base
image and serves nothing here. A Dockerfile that a compose file in its folder (or the folder above)
builds is that compose service's, read by ``formats/compose.py``, when the compose file names an
engine (one that does not is never read, and the Dockerfile is the served model).
"""

from __future__ import annotations

import posixpath
import re

from ...model import ArgToken, ServedModel
from ...yamlio import LoadedFile
from ..launch import engine_pins, named_files
from ..core.contexts import Workspace
from ..core.recognition import ENGINE_MARKERS
from ..core.protocol import has_serving_marker
from ..launch.dockerfile import build_runs, final_stage, from_image, instruction_words
from ..launch.dockerfile import scan_comments  # noqa: F401 - the protocol hook: a Dockerfile's comments
from ..launch.launched import Launched
from ..launch.scripts import launches, locator, script_model
from ..launch.shell import expand, lex
from ...engines.argv import IF_SET

MARKERS = ENGINE_MARKERS
SUFFIXES = ("Dockerfile", "Containerfile", ".dockerfile", "Dockerfile.", "Containerfile.")  # builtin.py
_COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_IF_SET = re.compile(r"\$\{([A-Za-z_]\w*):?\+(-[^}]*)\}")  # ${VAR:+--flag "$VAR"}, ${VAR:+--switch}


def file_models(workspace: Workspace, loaded: LoadedFile) -> list[ServedModel]:
    if not any(marker in loaded.text.lower() for marker in MARKERS) or _built_by_compose(workspace, loaded.path):
        return []
    stage = final_stage(loaded.text)
    if stage.get("ENTRYPOINT") is None and stage.get("CMD") is None:
        return []
    locate = locator(loaded)
    words, shell, own_entrypoint = _argv(loaded.text, stage)
    image = stage.get("FROM")  # located where written, its ARGs substituted (FROM ${BASE})
    image_token = ArgToken(from_image(stage) or image[0], *locate(image[1], image[1] + len(image[0]), image[0]),
                           "image") if image else None
    conditional: list[ArgToken] = []
    if shell:  # /bin/sh -c: the commands of the string, the engine's among them
        launched = next(iter(launches(expand(words, stage["variables"]), locate)), None)
        if launched is None:
            return []
        launched.image, launched.own_entrypoint = image_token, True
        conditional = _if_set_flags(words, stage["variables"], locate)
    else:  # exec form: the words as they are, no variable expanded
        tokens = [ArgToken(word, *locate(start, end, word), "args") for word, start, end in words]
        launched = Launched(tokens, image=image_token, own_entrypoint=own_entrypoint)
    # the served model is where the ENTRYPOINT / CMD starts the engine, not at FROM lines above it
    launched.command = launched.tokens[0] if launched.tokens else None
    last = max([t.location.line for t in launched.tokens] or [1])
    model = script_model(workspace, loaded, launched, "Dockerfile", "dockerfile/0", 0, (0, last))
    if model is None:
        return []
    model.argv.extend(conditional)  # checked as flags, never read as settings: the variable may be unset
    engine_pins.apply(model, engine_pins.installed(*build_runs(loaded.text)))  # replaces the base image's
    return [model]


def _if_set_flags(words: list[tuple[str, int, int]], variables: dict, locate) -> list[ArgToken]:
    """The flags of ``${VAR:+--flag "$VAR"}`` words whose variable the Dockerfile leaves unset: the shell
    passes them only when it is set at run time, so they are located but marked ``if-set:VAR``."""
    found: list[ArgToken] = []
    for word, start, _ in words:
        match = _IF_SET.fullmatch(word)
        if match is None or variables.get(match.group(1)):
            continue
        for inner, offset, stop in lex(match.group(2), base=start + match.start(2)):
            found.append(ArgToken(inner, *locate(offset, stop, inner), f"{IF_SET}{match.group(1)}"))
    return found


def _built_by_compose(workspace: Workspace, path: str) -> bool:
    """Whether a compose file in the Dockerfile's folder or the one above builds it (``build:`` whose
    context and dockerfile name it, from the compose file's folder or the repository root, as
    ``launch/dockerfile.read`` finds it), in a file that names an engine (another is never read)."""
    folder = posixpath.dirname(path)
    for base in (folder, posixpath.dirname(folder) if folder else None):
        if base is None:
            continue
        for name in _COMPOSE_FILES:
            compose = posixpath.join(base, name) if base else name
            text = named_files.read_text(workspace, compose)
            if text is not None and "build" in text and has_serving_marker(text) and \
                    path in _built_dockerfiles(workspace, compose):
                return True
    return False


def _built_dockerfiles(workspace: Workspace, compose: str) -> set[str]:
    loaded = named_files.read_yaml(workspace, compose)
    root = loaded.documents[0].root if loaded is not None and loaded.documents else None
    services = root.get("services") if root is not None and root.kind == "map" else None
    found: set[str] = set()
    for _, service in services.items() if services is not None and services.kind == "map" else ():
        build = service.get("build") if service.kind == "map" else None
        if build is not None and build.kind == "scalar":
            written = posixpath.join(str(build.value), "Dockerfile")
        elif build is not None and build.kind == "map":
            written = posixpath.join(str(build.scalar("context", default=".")),
                                     str(build.scalar("dockerfile", default="Dockerfile")))
        else:
            continue
        found.update(filter(None, (named_files.repo_path(compose, written), named_files.repo_path("", written))))
    return found


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
