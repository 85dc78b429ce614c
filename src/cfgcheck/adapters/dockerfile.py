"""The Dockerfile a compose service builds (``build: .`` or ``build: {context, dockerfile}``): which
engine its final ``FROM`` image runs, and its ``ENTRYPOINT`` (the exec form ``["vllm", "serve"]`` or
the shell form), each word located on its line. ``ARG`` defaults declared before ``FROM`` are
substituted (``FROM vllm/vllm-openai:${VLLM_VERSION}``), as the builder does without ``--build-arg``.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field

from ..engines.images import parse_image
from ..model import ArgToken, Location
from ..yamlio import YNode
from . import repofiles
from .base import Workspace

_INSTRUCTION = re.compile(r"^[ \t]*(FROM|ARG|ENTRYPOINT)[ \t]+(.*)$", re.I)
_ARG_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}?")


@dataclass
class Built:
    path: str  # the Dockerfile, repository-relative
    image: str | None  # the final FROM image, ARGs substituted
    engine: str | None
    entrypoint: list[ArgToken] = field(default_factory=list)


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
        rel = repofiles.repo_path(base, posixpath.join(context, name))
        text = repofiles.read_text(workspace, rel) if rel else None
        if text is not None:
            return parse(rel, text)
    return None


def parse(rel: str, text: str) -> Built:
    args: dict[str, str] = {}
    built = Built(rel, None, None)
    for number, line in enumerate(text.splitlines(), start=1):
        match = _INSTRUCTION.match(line)
        if match is None:
            continue
        keyword, rest = match.group(1).upper(), match.group(2).strip()
        if keyword == "ARG" and "=" in rest:
            name, _, value = rest.partition("=")
            args[name.strip()] = value.strip().strip('"\'')
        elif keyword == "FROM":
            image = _ARG_REFERENCE.sub(lambda m: args.get(m.group(1), m.group(0)), rest.split()[0])
            built.image, built.engine, built.entrypoint = image, parse_image(image).engine, []
        elif keyword == "ENTRYPOINT":
            built.entrypoint = _words(rel, number, match.start(2) + 1, rest)
    return built


def _words(rel: str, line: int, column: int, rest: str) -> list[ArgToken]:
    """The words of an ENTRYPOINT, located: the exec (JSON) form, else the shell form split on blanks."""
    try:
        words = json.loads(rest) if rest.startswith("[") else None
    except ValueError:
        words = None
    if not isinstance(words, list):
        words = rest.split()
    tokens, cursor = [], 0
    for word in (str(w) for w in words):
        at = rest.find(word, cursor)
        at = cursor if at < 0 else at
        cursor = at + len(word)
        start = column + at
        tokens.append(ArgToken(word, Location(rel, line, start, line, start + len(word)), (), "entrypoint"))
    return tokens
