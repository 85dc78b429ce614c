"""Containers of an engine image that start no engine themselves: ``docker run --entrypoint /bin/bash ...
vllm/vllm-openai`` kept up for a later ``docker exec``, or a Ray node (``... IMAGE -c "ray start --head"``) that
a multi-node engine is started on afterwards, also through a wrapper script that takes the image as a positional
argument. They serve nothing cfgcheck can read (no model, no flags), but
the image they run is the engine's: a runtime template (``ServedModel.template``) of kind ``container`` holds it,
for the rules that check an image (CFG302) and no other.
"""

from __future__ import annotations

import posixpath
import re

from ... import lazy
from ...engines.images import parse_image
from ...model import CONTAINER_KIND, ArgToken, ServedModel, Setting
from ...yamlio import LoadedFile
from ..core.contexts import Workspace
from ..core.recognition import finish, set_image
from . import named_files
from .shell import OPERATORS, lex, segments


def container_model(loaded: LoadedFile, image: ArgToken, identity: str, name: str | None = None) -> ServedModel:
    """The runtime template of a container of the engine image ``image`` that a script runs with another
    entrypoint (the container's name, else the script's)."""
    stem = posixpath.splitext(posixpath.basename(loaded.path))[0]
    model = ServedModel(name=name or stem, kind=CONTAINER_KIND, path=loaded.path, document=0, location=image.location,
                        identity=f"{loaded.path}#{identity}")
    set_image(None, model, Setting("image", image.text, image.location, "docker run IMAGE", image.comments,
                                   image.location, image.text, "shell"))
    model.template = True
    return finish(model)


# what a wrapper script makes of its positional parameters: ``IMAGE="$1"`` (also ``local``/``readonly``/``export``)
_ASSIGNED = lazy.Pattern(r"""^[ \t]*(?:local[ \t]+|readonly[ \t]+|export[ \t]+)?([A-Za-z_]\w*)=(["']?)\$\{?([1-9])\}?\2[ \t]*$""",
                         re.M)
_POSITIONAL = lazy.Pattern(r"\$\{?([1-9])\}?")
_VARIABLE = lazy.Pattern(r"\$\{?([A-Za-z_]\w*)\}?")
_SCRIPT_RUNNERS = ("bash", "sh", "zsh")


def wrapped_containers(workspace: Workspace, loaded: LoadedFile, words: list[tuple[str, int, int]], locate,
                       value_options: frozenset[str]) -> list[ServedModel]:
    """Containers of an engine image that a script runs through a repository script taking the image as a
    positional argument (``bash run_cluster.sh vllm/vllm-openai HEAD_IP --head``, whose ``docker run`` runs
    ``"${DOCKER_IMAGE}"`` after ``DOCKER_IMAGE="$1"``), each at the argument; ``value_options`` are the
    ``docker run`` options that take a value."""
    found = []
    for index, command in enumerate(segments(words)):
        written = [word for word in command if word[0] not in OPERATORS]
        at = 1 if written and written[0][0].rsplit("/", 1)[-1] in _SCRIPT_RUNNERS else 0
        if at >= len(written) or not written[at][0].endswith(".sh"):
            continue
        position = _image_position(_callee(workspace, loaded.path, written[at][0]), value_options)
        if position is None or position > len(written) - at - 1:
            continue
        word, start, end = written[at + position]
        if parse_image(word).engine is not None:
            location, comments = locate(start, end, word)
            found.append(container_model(loaded, ArgToken(word, location, comments, "shell"), f"wrapped/{index}"))
    return found


def _callee(workspace: Workspace, path: str, written: str) -> str:
    """The text of the repository script ``written`` runs: beside the caller, else from the root."""
    for base in (path, ""):
        rel = named_files.repo_path(base, written)
        text = named_files.read_text(workspace, rel) if rel else None
        if text is not None:
            return text
    return ""


def _image_position(text: str, value_options: frozenset[str]) -> int | None:
    """Which positional parameter the script's ``docker run`` takes its image from, or None."""
    if " run" not in text:
        return None
    assigned = {name: int(number) for name, _, number in _ASSIGNED.findall(text)}
    for command in segments(lex(text, shell=True)):
        texts = [word for word, _, _ in command if word not in OPERATORS]
        runner = next((i for i, t in enumerate(texts[:-1]) if t.rsplit("/", 1)[-1] in ("docker", "podman", "nerdctl")
                       and texts[i + 1] == "run"), None)
        image = _image_word(texts[runner + 2:], value_options) if runner is not None else None
        positional = _POSITIONAL.fullmatch(image or "")
        variable = _VARIABLE.fullmatch(image or "")
        if positional or variable and variable.group(1) in assigned:
            return int(positional.group(1)) if positional else assigned[variable.group(1)]
    return None


def _image_word(texts: list[str], value_options: frozenset[str]) -> str | None:
    """The image of ``docker run`` OPTIONS IMAGE: the first word that is no option, no option's value and no
    array of options (``"${EXTRA_ARGS[@]}"``, ``"$@"``)."""
    index = 0
    while index < len(texts) and (texts[index].startswith("-") or "[@]" in texts[index] or texts[index] in ("$@", "$*")):
        index += 2 if texts[index] in value_options else 1
    return texts[index] if index < len(texts) else None
