"""Shell words of a YAML string, each located at its exact line and column in the file.

Two steps. ``lex`` splits the *value* of a string (what the container runtime or shell receives) into
words the way a POSIX shell does, leniently: quotes, backslash escapes and line continuations,
``$(...)`` / ``${...}`` / Helm-Go ``{{ ... }}`` kept whole, ``#`` comments, and command separators
(``;``, ``&&``, ``||``, ``|``, ``&``, and newlines in shell mode) as words of their own. ``eval "..."``
is lexed as the command it evaluates. ``SourceMap`` then maps an offset in the value back to the
source text of the scalar (plain, quoted with escapes, literal or folded block), so each word is
located where it is written.
"""

from __future__ import annotations

import bisect
import re

OPERATORS = (";", "&&", "||", "|", "&")
_WS = " \t\r"


def lex(value: str, shell: bool = True, base: int = 0, ignore_quotes: bool = False) -> list[tuple[str, int, int]]:
    """Words of ``value`` as (text, start, end) offsets into ``value`` (+ ``base``).

    ``start`` is the first character that contributes to the word (inside an opening quote), so the
    source text at the word's location is the word itself for unquoted and quoted words alike.
    In shell mode a newline separates commands and ``#`` starts a comment.
    """
    words: list[tuple[str, int, int]] = []
    i, n = 0, len(value)
    buf: list[str] = []
    start = -1
    end = 0
    in_word = False

    def flush():
        nonlocal buf, start, in_word
        if in_word:
            words.append(("".join(buf), base + (start if start >= 0 else end), base + end))
        buf, start, in_word = [], -1, False

    def put(text: str, at: int, upto: int):
        nonlocal start, end, in_word
        if start < 0:
            start = at
        buf.append(text)
        end = upto
        in_word = True

    while i < n:
        c = value[i]
        if c == "\\" and i + 1 < n and value[i + 1] == "\n":
            i += 2  # line continuation
            continue
        if c in _WS:
            flush()
            i += 1
            continue
        if c == "\n":
            flush()
            if shell:
                words.append((";", base + i, base + i + 1))
            i += 1
            continue
        if shell and c == "#" and not in_word:
            while i < n and value[i] != "\n":
                i += 1
            continue
        if shell and c in ";&|":
            flush()
            op = value[i:i + 2] if value[i:i + 2] in ("&&", "||") else c
            words.append((op, base + i, base + i + len(op)))
            i += len(op)
            continue
        if c == "\\" and i + 1 < n:
            put(value[i + 1], i + 1, i + 2)
            i += 2
            continue
        if c == "'" and not ignore_quotes:
            close = value.find("'", i + 1)
            close = n if close == -1 else close
            if not in_word:
                put("", i + 1, i + 1)
            if close > i + 1:
                put(value[i + 1:close], i + 1, close)
            end = close
            i = close + 1
            continue
        if c == '"' and ignore_quotes:
            i += 1
            continue
        if c == '"':
            if shell and _last_command_word(words, in_word) == "eval":
                close = _eval_end(value, i)
                flush_words = lex(value[i + 1:close], shell, base + i + 1, ignore_quotes=True)
                words.extend(flush_words)
                i = close + 1
                continue
            j = i + 1
            if not in_word:
                put("", j, j)
            while j < n and value[j] != '"':
                if value[j] == "\\" and j + 1 < n:
                    if value[j + 1] == "\n":
                        j += 2
                        continue
                    if value[j + 1] in '"\\$`':
                        put(value[j + 1], j + 1, j + 2)
                        j += 2
                        continue
                if value.startswith("{{", j):
                    stop = value.find("}}", j)
                    stop = n if stop == -1 else stop + 2
                    put(value[j:stop], j, stop)
                    j = stop
                    continue
                put(value[j], j, j + 1)
                j += 1
            end = j
            i = j + 1
            continue
        if value.startswith("{{", i):
            stop = value.find("}}", i)
            stop = n if stop == -1 else stop + 2
            put(value[i:stop], i, stop)
            i = stop
            continue
        if c == "$" and i + 1 < n and value[i + 1] in "({":
            stop = _balanced(value, i + 1)
            put(value[i:stop], i, stop)
            i = stop
            continue
        put(c, i, i + 1)
        i += 1
    flush()
    return words


def _last_command_word(words: list[tuple[str, int, int]], in_word: bool) -> str | None:
    if in_word or not words:
        return None
    return words[-1][0]


def _eval_end(value: str, quote: int) -> int:
    """Where the string given to ``eval`` ends: at the first newline that is not continued, minus a
    closing quote. Inner quotes are not trusted: templates nest them."""
    j = quote + 1
    n = len(value)
    while j < n:
        if value[j] == "\n" and value[j - 1] != "\\":
            break
        j += 1
    k = j - 1
    while k > quote and value[k] in _WS:
        k -= 1
    return k if value[k] == '"' and k > quote else j


def _balanced(value: str, open_at: int) -> int:
    opening = value[open_at]
    closing = ")" if opening == "(" else "}"
    depth = 0
    j = open_at
    quote = None
    while j < len(value):
        c = value[j]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(value)


def segments(words: list[tuple[str, int, int]]) -> list[list[tuple[str, int, int]]]:
    """Split words into commands at separators."""
    found: list[list[tuple[str, int, int]]] = [[]]
    for word in words:
        if word[0] in OPERATORS:
            found.append([])
        else:
            found[-1].append(word)
    return [segment for segment in found if segment]


class SourceMap:
    """Maps offsets in a scalar's value to absolute offsets in the file text."""

    def __init__(self, text: str, node) -> None:
        self.text = text
        value = node.value if isinstance(node.value, str) else text[node.start_index:node.end_index]
        self.value = value
        start = node.start_index
        if node.style in ("'", '"'):
            start += 1
        elif node.style in ("|", ">"):
            newline = text.find("\n", start)
            start = node.end_index if newline == -1 else newline + 1
        self.positions = _align(value, text, start, node.end_index)
        self._line_starts: list[int] | None = None

    def absolute(self, offset: int) -> int:
        offset = max(0, min(offset, len(self.value)))
        return self.positions[offset]

    def span(self, start: int, end: int, word: str) -> tuple[int, int, int]:
        """(line, column, end column) of the word at value offsets ``start``..``end``; a word that
        crosses a line (a continuation) ends where its text would on its first line."""
        line, column = self.line_column(self.absolute(start))
        end_line, end_column = self.line_column(self.absolute(end)) if end > start else (line, column)
        return (line, column, end_column) if end_line == line else (line, column, column + len(word))

    def line_column(self, absolute: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            pos = self.text.find("\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = self.text.find("\n", pos + 1)
            self._line_starts = starts
        index = bisect.bisect_right(self._line_starts, absolute) - 1
        return index + 1, absolute - self._line_starts[index] + 1


def _align(value: str, src: str, j: int, limit: int) -> list[int]:
    """Position in ``src`` of each character of ``value`` (and one past the end).

    Exact for plain scalars and literal blocks; for quoted and folded scalars escapes, doubled quotes,
    indentation and folded line breaks in the source are skipped over.
    """
    positions = [0] * (len(value) + 1)
    end = min(len(src), max(limit, j))
    for i, c in enumerate(value):
        if j >= end:
            positions[i] = end
            continue
        if c in " \t\n":
            positions[i] = j
            if src[j] == c:
                j += 1
            elif src[j] == "\\" and j + 1 < end and src[j + 1] in "ntr ":
                j += 2
            else:
                while j < end and src[j] in " \t\r\n":
                    j += 1
            continue
        k = j
        while k < end and src[k] != c and k - j < 400:
            k += 1
        if k < end and src[k] == c:
            positions[i] = k
            j = k + 1
        else:
            positions[i] = j
    positions[len(value)] = min(j, end)
    return positions


# --------------------------------------------------------------------------------------------------
# parameter expansion

_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_DECLARE = {"export", "readonly", "local", "declare"}
_NOT_LITERAL = ("$", "`")


def expand(words: list[tuple[str, int, int]], env: dict[str, str | None] | None = None) -> list[tuple[str, int, int]]:
    """Shell parameter expansion where the value is literal, as ``sh`` would do it.

    Values come from assignments earlier in the script (``TP=2``, ``export TP=2``) and from ``env``
    (the container's environment: a string, or None when it is set but not literal, e.g. from a
    secret). ``${VAR:-default}`` gives the default when VAR is set nowhere. A reference whose value is
    not literal stays as written: the value is unknown. A word that is exactly one reference is
    relocated to where its value is written (the assignment's value, the default), so that a finding
    or an edit lands there.
    """
    known: dict[str, tuple[str | None, int | None, int | None]] = {
        name: (value, None, None) for name, value in (env or {}).items()}
    out: list[tuple[str, int, int]] = []
    command_start = True
    for word in words:
        text = word[0]
        if text in OPERATORS or text == ";":
            out.append(word)
            command_start = True
            continue
        if command_start and text in _DECLARE:
            out.append(word)
            continue
        assignment = _ASSIGNMENT.match(text) if command_start else None
        if assignment:
            value, start, end = _expanded(word, known)
            literal = not any(mark in value for mark in _NOT_LITERAL)
            offset = start + (len(assignment.group(1)) + 1 if start == word[1] else 0)
            known[assignment.group(1)] = (value.split("=", 1)[1], offset, end) if literal else (None, None, None)
            out.append(word)
            continue
        command_start = False
        out.append(_expanded(word, known))
    return out


class Spliced(str):
    """An environment value that the caller splices in itself where a word is exactly its reference
    (located in the env value, see ``adapters.envlaunch``); inside longer words and assignments it is
    substituted here as any literal value."""


def _expanded(word: tuple[str, int, int], known: dict) -> tuple[str, int, int]:
    text, start, end = word
    whole = _REFERENCE.fullmatch(text)
    if whole:
        found = _lookup(whole, known, start)
        return word if found is None or isinstance(found[0], Spliced) else found

    def replace(match: re.Match) -> str:
        found = _lookup(match, known, start)
        return found[0] if found is not None else match.group(0)

    return _REFERENCE.sub(replace, text), start, end


def _lookup(match: re.Match, known: dict, base: int) -> tuple[str, int, int] | None:
    """(value, start, end) of a reference; None when its value is not known."""
    name = match.group(1) or match.group(4)
    if name in known:
        value, start, end = known[name]
        if value is None:
            return None
        if start is None:  # from the environment: located at the reference
            return value, base + match.start(), base + match.end()
        return value, start, end
    if match.group(2) in (":-", "-", ":=", "="):
        default = match.group(3) or ""
        return default, base + match.start(3), base + match.end(3)
    return None

