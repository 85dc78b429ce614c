"""Comments of a YAML file: where each ``#`` comment is, found without parsing the YAML again.

A ``#`` inside a scalar (a quoted string, a block scalar) is not a comment: the parser gives the spans of
the scalars that hold one, and the scan skips them."""

from __future__ import annotations


from .records import ValueRecord

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator


class Comment(ValueRecord):
    """One ``#`` comment of a file: where it starts, its text, and whether it is alone on its line (compared by
    value: a file's comments scanned two ways are the same)."""

    __slots__ = ("line", "column", "text", "full_line")

    def __init__(self, line: int, column: int, text: str, full_line: bool) -> None:
        self.line = line
        self.column = column
        self.text = text  # without the leading "#" and surrounding space
        self.full_line = full_line  # the comment is alone on its line


def scan_comments(text: str, spans: list[tuple[int, int]]) -> dict[int, Comment]:
    """Find ``#`` comments outside the spans of scalars that contain a ``#`` (so a ``#`` in a string or a
    block scalar is not one). ``spans`` are sorted (start, end) character offsets."""
    comments: dict[int, Comment] = {}
    span_index = 0
    lines = _all_lines(text) if _other_breaks(text) else _lines_with_a_hash(text)
    for line_number, line_start, line in lines:
        position = line.find("#")
        while position != -1:
            absolute = line_start + position
            while span_index < len(spans) and spans[span_index][1] <= absolute:
                span_index += 1
            inside = span_index < len(spans) and spans[span_index][0] <= absolute < spans[span_index][1]
            if inside:  # skip the rest of the scalar at once (a line of 5 million '#' in a string)
                position = line.find("#", spans[span_index][1] - line_start)
                continue
            if position == 0 or line[position - 1] in " \t":
                body = line[position + 1:].rstrip("\r\n")
                comments[line_number] = Comment(
                    line_number, position + 1, body.strip(), line[:position].strip() == "")
                break
            position = line.find("#", position + 1)
    return comments


# Line breaks other than LF that str.splitlines (and so the line numbers of every finding) counts.
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _other_breaks(text: str) -> bool:
    """Whether ``text`` holds one of ``_OTHER_BREAKS``: nine searches of the text in C take a fiftieth of
    the time of one character-class regex over it (asked of every file read)."""
    for brk in _OTHER_BREAKS:
        if brk in text:
            return True
    return False


def _all_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(number, start offset, text) of every line."""
    start = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        yield number, start, line
        start += len(line)


def _lines_with_a_hash(text: str) -> Iterator[tuple[int, int, str]]:
    """(number, start offset, text) of the lines holding a '#', for text whose only line break is LF:
    a file of a million lines and few comments is not walked line by line."""
    number, start = 1, 0
    hash_at = text.find("#")
    while hash_at != -1:
        number += text.count("\n", start, hash_at)
        line_start = text.rfind("\n", start, hash_at) + 1 or start
        end = text.find("\n", hash_at)
        end = len(text) if end == -1 else end + 1
        yield number, line_start, text[line_start:end]
        number, start = number + 1, end
        hash_at = text.find("#", end)
