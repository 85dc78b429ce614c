"""Read YAML into located trees: every node keeps its line, column and source text; comments are kept.

Two composers build the same tree: ruamel.yaml's round-trip composer and, where PyYAML's libyaml
binding is installed, its C composer (about 30x faster; both keep positions). Values are resolved by
our own YAML 1.2 core rules so both give identical trees. Comments are read from the text itself,
outside every scalar's span, so they do not depend on the composer either. Edits never re-dump a
document: they replace exact spans of the original text (see ``apply_edits``), so every byte that is
not edited survives, comments and quoting included.

Hostile input is bounded: file size, nesting depth and alias-expanded size have limits; a file that
breaks one is reported, never expanded.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .model import Edit, Location

DEFAULT_LIMITS = {
    "max-file-bytes": 5 * 1024 * 1024,
    "max-depth": 100,
    "max-expanded-nodes": 200_000,
}

_INT = re.compile(r"[-+]?(0|[1-9][0-9_]*)$")
_HEX = re.compile(r"0x[0-9a-fA-F_]+$")
_OCT = re.compile(r"0o[0-7_]+$")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


class YamlError(Exception):
    """An input that cannot be read; ``line``/``column`` are 1-based, 0 when unknown."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@dataclass(slots=True, eq=False)
class YNode:
    """A located YAML node. ``value`` is a list of (key, value) pairs for maps, a list for sequences,
    and the resolved Python value for scalars. Lines and columns are 1-based; ``end_*`` exclusive."""

    kind: str  # map | seq | scalar
    value: Any
    line: int
    column: int
    end_line: int
    end_column: int
    start_index: int
    end_index: int
    style: str | None = None  # None (plain), "'", '"', "|", ">"
    tag: str | None = None

    def get(self, key: str) -> "YNode | None":
        """The value for ``key`` in a mapping (the last one wins, as in Kubernetes)."""
        if self.kind != "map":
            return None
        found = None
        for k, v in self.value:
            if k.kind == "scalar" and k.value == key:
                found = v
        return found

    def key_node(self, key: str) -> "YNode | None":
        if self.kind != "map":
            return None
        found = None
        for k, _ in self.value:
            if k.kind == "scalar" and k.value == key:
                found = k
        return found

    def path(self, *keys: str | int) -> "YNode | None":
        node: YNode | None = self
        for key in keys:
            if node is None:
                return None
            if isinstance(key, int):
                node = node.value[key] if node.kind == "seq" and -len(node.value) <= key < len(node.value) else None
            else:
                node = node.get(key)
        return node

    def scalar(self, *keys: str | int, default: Any = None) -> Any:
        node = self.path(*keys) if keys else self
        if node is None or node.kind != "scalar":
            return default
        return node.value

    def items(self) -> Iterator[tuple["YNode", "YNode"]]:
        if self.kind == "map":
            yield from self.value

    def children(self) -> list["YNode"]:
        return list(self.value) if self.kind == "seq" else []

    def is_str_map(self) -> bool:
        return self.kind == "map"

    def to_python(self) -> Any:
        if self.kind == "scalar":
            return self.value
        if self.kind == "seq":
            return [child.to_python() for child in self.value]
        return {k.to_python() if k.kind == "scalar" else str(k.line): v.to_python() for k, v in self.value}

    def location(self, path: str) -> Location:
        return Location(path, self.line, self.column, self.end_line, self.end_column)


@dataclass(slots=True)
class Comment:
    line: int
    column: int
    text: str  # without the leading "#" and surrounding space
    full_line: bool  # the comment is alone on its line


@dataclass(slots=True)
class Document:
    index: int
    root: YNode | None
    line: int  # first line of the document
    problems: list[tuple[str, int, int]] = field(default_factory=list)  # (message, line, column)


@dataclass(slots=True)
class LoadedFile:
    path: str  # repo-relative POSIX
    text: str
    documents: list[Document]
    comments: dict[int, Comment]  # by line
    error: YamlError | None = None

    def comments_for(self, line: int) -> tuple[str, ...]:
        """Comment lines directly above ``line`` (contiguous, no blank line between) and on it."""
        above: list[str] = []
        probe = line - 1
        while probe >= 1:
            comment = self.comments.get(probe)
            if comment is None or not comment.full_line:
                break
            above.append(comment.text)
            probe -= 1
        above.reverse()
        own = self.comments.get(line)
        if own is not None and not own.full_line:
            above.append(own.text)
        return tuple(above)

    def source(self, node: YNode) -> str:
        return self.text[node.start_index:node.end_index]


def _resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema for plain scalars."""
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text.replace("_", ""))
    if _HEX.match(text):
        return int(text[2:].replace("_", ""), 16)
    if _OCT.match(text):
        return int(text[2:].replace("_", ""), 8)
    if _FLOAT.match(text) and any(ch.isdigit() for ch in text):
        return float(text.replace("_", ""))
    lowered = text.lower()
    if lowered in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[lowered]
    return text


def _style_of(node: Any) -> str | None:
    style = getattr(node, "style", None)
    return style if style in ("'", '"', "|", ">") else None


class _TreeBuilder:
    """Turns composer nodes (PyYAML or ruamel) into YNodes, sharing aliased subtrees."""

    def __init__(self, limits: dict[str, int]):
        self.max_depth = limits["max-depth"]
        self.max_expanded = limits["max-expanded-nodes"]
        self.built: dict[int, YNode] = {}
        self.sizes: dict[int, int] = {}
        self.problems: list[tuple[str, int, int]] = []

    def build(self, node: Any, depth: int = 0) -> YNode:
        memo = self.built.get(id(node))
        if memo is not None:
            return memo
        if depth > self.max_depth:
            raise YamlError(
                f"nesting deeper than {self.max_depth} levels (limit max-depth)",
                node.start_mark.line + 1, node.start_mark.column + 1)
        start, end = node.start_mark, node.end_mark
        cls = type(node).__name__
        tag = node.tag if isinstance(node.tag, str) else getattr(node.tag, "value", None)
        if cls == "ScalarNode":
            style = _style_of(node)
            explicit = tag if tag and not tag.startswith("tag:yaml.org,2002:") else None
            # Plain scalars are resolved by our rules so both composers agree; quoted ones are text.
            value = _resolve_plain(node.value) if style is None and explicit is None else node.value
            result = YNode("scalar", value, start.line + 1, start.column + 1, end.line + 1, end.column + 1,
                           start.index, end.index, style, explicit)
            size = 1
        elif cls == "SequenceNode":
            result = YNode("seq", [], start.line + 1, start.column + 1, end.line + 1, end.column + 1,
                           start.index, end.index)
            self.built[id(node)] = result
            result.value = [self.build(child, depth + 1) for child in node.value]
            size = 1 + sum(self.sizes.get(id(child), 1) for child in node.value)
        else:
            result = YNode("map", [], start.line + 1, start.column + 1, end.line + 1, end.column + 1,
                           start.index, end.index)
            self.built[id(node)] = result
            pairs = []
            seen: dict[Any, YNode] = {}
            for key, value in node.value:
                key_node = self.build(key, depth + 1)
                value_node = self.build(value, depth + 1)
                if key_node.kind == "scalar" and key_node.value == "<<" and value_node.kind in ("map", "seq"):
                    pairs.extend(_merge_pairs(value_node))
                    continue
                hashable = key_node.value if key_node.kind == "scalar" else id(key_node)
                if hashable in seen:
                    self.problems.append((
                        f"duplicate key '{key_node.value}' (first at line {seen[hashable].line}); "
                        "the last one is what Kubernetes uses", key_node.line, key_node.column))
                seen[hashable] = key_node
                pairs.append((key_node, value_node))
            result.value = pairs
            size = 1 + sum(self.sizes.get(id(k), 1) + self.sizes.get(id(v), 1) for k, v in node.value)
        self.sizes[id(node)] = size
        if size > self.max_expanded:
            raise YamlError(
                f"aliases expand to more than {self.max_expanded:,} nodes (limit max-expanded-nodes)",
                start.line + 1, start.column + 1)
        self.built[id(node)] = result
        return result


def _merge_pairs(node: YNode) -> list[tuple[YNode, YNode]]:
    if node.kind == "map":
        return list(node.value)
    pairs: list[tuple[YNode, YNode]] = []
    for child in node.value:
        if child.kind == "map":
            pairs.extend(child.value)
    return pairs


def _composer(prefer_fast: bool):
    if prefer_fast:
        try:
            import yaml  # PyYAML with libyaml: C composer keeping marks

            if getattr(yaml, "__with_libyaml__", False):
                return lambda text: yaml.compose_all(text, Loader=yaml.CSafeLoader), yaml.YAMLError
        except ImportError:
            pass
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    def compose_all(text: str):
        yaml_rt = YAML(typ="rt", pure=True)
        return yaml_rt.compose_all(text)

    return compose_all, YAMLError


_COMPOSERS: dict[bool, Any] = {}


def composer(prefer_fast: bool = True):
    if prefer_fast not in _COMPOSERS:
        _COMPOSERS[prefer_fast] = _composer(prefer_fast)
    return _COMPOSERS[prefer_fast]


def _mark_of(error: Exception) -> tuple[int, int]:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is None:
        return 1, 1
    return mark.line + 1, mark.column + 1


def _one_line(error: Exception) -> str:
    problem = getattr(error, "problem", None)
    context = getattr(error, "context", None)
    text = problem or str(error)
    if context and problem:
        text = f"{problem} ({context})"
    return " ".join(str(text).split())


def _template_error(text: str, error_line: int) -> YamlError | None:
    """A Helm/Go template that breaks the YAML is reported as such, at its first ``{{``."""
    for number, line in enumerate(text.splitlines()[:error_line], start=1):
        column = line.find("{{")
        if column != -1 and line.lstrip().startswith(("{{", "- {{")) or (column != -1 and number == error_line):
            return YamlError("Helm template syntax: lint the rendered output (helm template) or exclude this file",
                             number, column + 1)
    return None


def decode(data: bytes) -> str:
    """Decode as YAML allows (UTF-8, or UTF-16/32 with a BOM); raise YamlError otherwise."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise YamlError(f"invalid UTF-16: {exc.reason}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", line, 1) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise YamlError("NUL byte in a text file", line, 1)
    return text


def parse_text(path: str, text: str, limits: dict[str, int] | None = None, fast: bool = True) -> LoadedFile:
    """Parse ``text`` into located documents. Never raises: problems land in ``error``/``problems``."""
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    loaded = LoadedFile(path, text, [], {})
    compose_all, yaml_error = composer(fast)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, limits["max-depth"] * 8 + 1000))
    try:
        index = 0
        for node in compose_all(text):
            builder = _TreeBuilder(limits)  # per document: aliases do not cross documents
            root = builder.build(node) if node is not None else None
            line = node.start_mark.line + 1 if node is not None else 1
            loaded.documents.append(Document(index, root, line, builder.problems if node is not None else []))
            index += 1
    except YamlError as exc:
        loaded.error = exc
    except yaml_error as exc:
        line, column = _mark_of(exc)
        loaded.error = _template_error(text, line) or YamlError(f"invalid YAML: {_one_line(exc)}", line, column)
    except RecursionError:
        loaded.error = YamlError(f"nesting deeper than the parser can follow (limit max-depth {limits['max-depth']})")
    except Exception as exc:  # a composer bug must not end the run
        loaded.error = YamlError(f"cannot read YAML: {type(exc).__name__}: {_one_line(exc)}")
    finally:
        sys.setrecursionlimit(old_limit)
    loaded.comments = scan_comments(text, loaded.documents)
    return loaded


def load_file(root: Path, file: Path, limits: dict[str, int] | None = None, fast: bool = True) -> LoadedFile:
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    rel = relpath(root, file)
    try:
        size = file.stat().st_size
        if size > limits["max-file-bytes"]:
            return LoadedFile(rel, "", [], {}, YamlError(
                f"file is {size:,} bytes, over the {limits['max-file-bytes']:,}-byte limit (limit max-file-bytes)"))
        text = decode(file.read_bytes())
    except YamlError as exc:
        return LoadedFile(rel, "", [], {}, exc)
    except OSError as exc:
        return LoadedFile(rel, "", [], {}, YamlError(f"cannot read file: {exc.strerror or exc}"))
    return parse_text(rel, text, limits, fast)


def relpath(root: Path, file: Path) -> str:
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return file.as_posix()


def _scalar_spans(documents: list[Document]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    stack = [doc.root for doc in documents if doc.root is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.kind == "scalar":
            if node.end_index > node.start_index:
                spans.append((node.start_index, node.end_index))
        elif node.kind == "seq":
            stack.extend(node.value)
        else:
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
    spans.sort()
    return spans


def scan_comments(text: str, documents: list[Document]) -> dict[int, Comment]:
    """Find ``#`` comments outside every scalar span (so a ``#`` in a string or block is not one)."""
    spans = _scalar_spans(documents)
    comments: dict[int, Comment] = {}
    span_index = 0
    line_start = 0
    for line_number, line in enumerate(text.splitlines(keepends=True), start=1):
        position = line.find("#")
        while position != -1:
            absolute = line_start + position
            while span_index < len(spans) and spans[span_index][1] <= absolute:
                span_index += 1
            inside = span_index < len(spans) and spans[span_index][0] <= absolute < spans[span_index][1]
            if not inside and (position == 0 or line[position - 1] in " \t"):
                body = line[position + 1:].rstrip("\r\n")
                comments[line_number] = Comment(
                    line_number, position + 1, body.strip(), line[:position].strip() == "")
                break
            position = line.find("#", position + 1)
        line_start += len(line)
    return comments


def scalar_text_location(loaded_path: str, node: YNode) -> Location:
    """The location of a scalar's content: inside the quotes for a quoted single-line scalar."""
    if node.style in ("'", '"') and node.line == node.end_line:
        return Location(loaded_path, node.line, node.column + 1, node.end_line, node.end_column - 1)
    return Location(loaded_path, node.line, node.column, node.end_line, node.end_column)


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply single-line span edits to ``text``; every other byte (line endings too) is kept.

    Raises ValueError if an edit's ``old`` text is not at its location (the file changed).
    """
    lines = text.splitlines(keepends=True)
    by_line: dict[int, list[Edit]] = {}
    for edit in edits:
        by_line.setdefault(edit.location.line, []).append(edit)
    for line_number, line_edits in by_line.items():
        if not 1 <= line_number <= len(lines):
            raise ValueError(f"line {line_number} is outside the file")
        line = lines[line_number - 1]
        for edit in sorted(line_edits, key=lambda e: e.location.column, reverse=True):
            start = edit.location.column - 1
            if line[start:start + len(edit.old)] != edit.old:
                raise ValueError(
                    f"expected {edit.old!r} at line {line_number} column {edit.location.column}")
            line = line[:start] + edit.new + line[start + len(edit.old):]
        lines[line_number - 1] = line
    return "".join(lines)
