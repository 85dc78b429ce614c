"""The bounds on variable expansion, one place for every expander of the adapters: shell parameters
(``launch/shell.expand``: scripts, Makefile recipes, ``sh -c`` strings, supervisord ``command=``),
Makefile variables (``formats/makefile``), docker compose interpolation (``launch/dotenv``), the
kubelet's ``$(VAR)`` (``launch/containers``), env values spliced into a command (``launch/env_argv``),
supervisord's ``%(name)s`` (``formats/supervisord``), llm-d's model variables (``formats/llmd``), a
Dockerfile's ``ARG`` (``launch/dockerfile``) and the build commands of ``launch/image_builds``.

Expansion multiplies text: twenty-four lines ``V1=$V0$V0`` make 128 MiB from 400 bytes, and one word
naming a long value a hundred thousand times makes gigabytes ("billion laughs", bounded for YAML
aliases in ``yamlbounds``). So:

* an expanded value longer than ``MAX_VALUE_CHARS`` is unknown, as a value from a Secret is: the
  reference stays as written, and nothing is claimed about it (no engine argument a person writes comes
  near the bound: the longest JSON option values of vLLM's docs are a few hundred characters);
* the text one file's expansions produce, together, is at most ``core/contexts.MAX_FILE_CHARS``; past
  it every further expansion in that file is unknown, so the work per file is bounded whatever its lines
  repeat (the registry reads each file's served models inside ``contexts.one_file()``, which keeps the
  budget: the core opens it, this module spends it);
* a value split into words adds at most ``MAX_SPLICED_WORDS`` words to one command, and a value
  substituted inside a longer word from the environment is at most ``MAX_INLINE_CHARS`` long.

Each substitution is checked while it is built, so a refused one costs at most the bound.
"""

from __future__ import annotations

import re

from ..core.contexts import spend

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Callable

MAX_VALUE_CHARS = 65_536
# An engine argv a person wrote is a few hundred words; past this many words from split values the rest
# of the references stay as written (unknown) rather than multiply a long value without end.
MAX_SPLICED_WORDS = 20_000
MAX_INLINE_CHARS = 4_096  # an env value substituted inside a longer word: longer ones stay unknown


def bounded(value: str) -> bool:
    """Whether a value built by expansion (a Makefile ``+=``) may be known: within the value bound and
    the file's budget."""
    return len(value) <= MAX_VALUE_CHARS and spend(len(value))


def substitute(pattern: re.Pattern, text: str, replace: Callable[[re.Match], str]) -> str | None:
    """``pattern.sub(replace, text)``, or None when the result would pass ``MAX_VALUE_CHARS`` or the
    file's budget: the caller keeps the text as written (unknown). ``text`` without a match is returned
    as it is."""
    pieces: list[str] = []
    size = last = 0
    for match in pattern.finditer(text):
        piece = replace(match)
        size += match.start() - last + len(piece)
        if size > MAX_VALUE_CHARS:
            return None
        pieces += (text[last:match.start()], piece)
        last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    size += len(text) - last
    return "".join(pieces) if size <= MAX_VALUE_CHARS and spend(size) else None
