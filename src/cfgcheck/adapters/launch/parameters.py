"""One shell parameter reference's value (``$VAR``, ``${VAR}``, ``${VAR:-word}``, ``${VAR-word}``, ``$1``,
``${VAR:=word}``, ``${VAR=word}``) and the quoting of the words the shell lexer (``launch/shell``) reads:
the value a variable has, or the default word after quote removal, located where it is written."""

from __future__ import annotations

import re

from ... import lazy

# a variable, or a positional parameter (``$1``, ``${10}``, ``${5:-default}``: what a caller passes a script)
REFERENCE = lazy.Pattern(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*|[1-9]))")


class Quoted(str):
    """The text of a word written (at least partly) inside quotes: ``"$VAR"`` is one word whatever VAR
    holds, where an unquoted ``$VAR`` is split into words (POSIX 2.6.5, field splitting applies only to
    the results of unquoted expansions)."""


def lookup(match: re.Match, known: dict, base: int, double: bool = False) -> tuple[str, int, int] | None:
    """(value, start, end) of a reference; None when its value is not known. ``double``: the reference
    is inside double quotes, where single quotes in its default are literal."""
    name = match.group(1) or match.group(4)
    if name in known:
        value, start, end = known[name]
        if value is None:
            return None
        if start is None:  # from the environment: located at the reference
            return value, base + match.start(), base + match.end()
        return value, start, end
    if match.group(2) in (":-", "-", ":=", "="):
        default = quote_removed(match.group(3) or "", base + match.start(3), double)
        if match.group(2) in (":=", "="):  # ``${VAR:=word}`` also assigns VAR for the rest of the script
            known[name] = (str(default[0]), default[1], default[2])
        return default
    return None


def quote_removed(word: str, start: int, double: bool) -> tuple[str, int, int]:
    """The default ``word`` of ``${VAR:-word}`` as the command receives it: the shell removes its quotes
    and backslashes (POSIX 2.6.2 expands the word, 2.6.7 quote removal), ``${DTYPE:-"auto"}`` is
    ``auto``. Inside double quotes a single quote is literal and a backslash escapes only ``$ ` " \\``
    (POSIX 2.2.3). What was quoted is not split into fields (``Quoted``). A default wholly inside one
    pair of quotes is located inside them."""
    if "'" not in word and '"' not in word and "\\" not in word:
        return word, start, start + len(word)
    out: list[str] = []
    quote, i = "", 0
    while i < len(word):
        c = word[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
        elif c == "\\" and i + 1 < len(word) and (not (quote or double) or word[i + 1] in '$`"\\'):
            out.append(word[i + 1])
            i += 1
        elif c == '"':
            quote = "" if quote else c
        elif c == "'" and not (quote or double):
            quote = c
        else:
            out.append(c)
        i += 1
    quotes = "\"" if double else "'\""
    inner = len(word) > 1 and word[0] == word[-1] and word[0] in quotes and word[0] not in word[1:-1]
    return Quoted("".join(out)), start + inner, start + len(word) - inner
