"""The Dockerfile a compose service builds (``build: .`` or ``build: {context, dockerfile}``): which
engine its final ``FROM`` image runs, and its ``ENTRYPOINT`` and ``CMD`` (exec or shell form), each
word located where it is written. Read with ``adapters/containerfile.py``'s instruction lexer
(continuation lines, ``FROM --platform``, stages). The ``ARG`` defaults declared before the first
``FROM`` are substituted in it (``FROM vllm/vllm-openai:${VLLM_VERSION}``), as the builder does without
``--build-arg``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from ...engines.images import parse_image
from ...model import ArgToken
from ...yamlio import LoadedFile, YNode
from . import named_files
from ..core.contexts import Workspace
from ..formats.containerfile import final_stage, instruction_words, scan_comments
from .scripts import locator

_ARG_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}?")


@dataclass
class Built:
    path: str  # the Dockerfile, repository-relative
    image: str | None  # the final FROM image, ARGs substituted
    engine: str | None
    entrypoint: list[ArgToken] = field(default_factory=list)
    command: list[ArgToken] = field(default_factory=list)  # CMD: what the entrypoint receives by default
    shell_entrypoint: bool = False  # ENTRYPOINT in shell form: /bin/sh -c runs it and ignores CMD and args


def read(workspace: Workspace, compose_file: str, build: YNode) -> Built | None:
    """The Dockerfile of ``build`` relative to the compose file, or None when it cannot be read."""
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
            return parse(rel, text)
    return None


def parse(rel: str, text: str) -> Built:
    stage = final_stage(text)
    written = stage.get("FROM")
    global_args = stage.get("global", {})
    image = _ARG_REFERENCE.sub(lambda m: global_args.get(m.group(1)) or m.group(0), written[0]) if written else None
    built = Built(rel, image, parse_image(image).engine if image else None)
    locate = locator(LoadedFile(rel, text, [], scan_comments(text)))
    for keyword, origin in (("ENTRYPOINT", "entrypoint"), ("CMD", "command")):
        if stage.get(keyword) is not None:
            tokens = [ArgToken(word, *locate(start, end, word), origin)
                      for word, start, end in instruction_words(text, stage[keyword])]
            setattr(built, origin, tokens)
    built.shell_entrypoint = stage.get("ENTRYPOINT", ("exec",))[0] == "shell"
    return built
