"""Offsets in a text as 1-based lines and columns: the line starts found once per text, a binary search
per offset (a script of thousands of lines is not rescanned for each word)."""

from __future__ import annotations

import bisect

from ... import lazy

_NEWLINE = lazy.Pattern("\n")


class LineIndex:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def line_column(self, offset: int) -> tuple[int, int]:
        """(line, column) of the character at ``offset``."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


_last: list = [None, None]  # the text indexed last (by identity) and its LineIndex


def line_index(text: str) -> LineIndex:
    """The LineIndex of ``text``, made once for the callers that ask about the same text in a row: every
    shell string of a file maps its words into the file's text, which was scanned whole for each."""
    if _last[0] is not text:
        _last[0], _last[1] = text, LineIndex(text)
    return _last[1]
