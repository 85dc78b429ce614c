"""The contexts adapters work in: the run's ``Workspace`` (the user's configuration, and the index spaces
of the modules that index documents of every file), the reading of one file (``one_file``: what its
variable expansions may still produce) and one document's ``DocContext`` (locating its nodes, reading its
comments and directives, making a served model located in it)."""

from __future__ import annotations

import bisect
import functools
from contextlib import contextmanager
from contextvars import ContextVar

from ... import lazy
from ...model import ArgToken, Comments, Directive, Location, ServedModel, Setting
from ...yamlio import DEFAULT_LIMITS, Comment, Document, LoadedFile, YNode
from .workspace import Workspace as Workspace  # where the adapters import it from

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

_DIRECTIVE = lazy.Pattern(r"cfgcheck:\s*([a-z][a-z0-9-]*)\s*=\s*(\S+)\s*(.*)$")


def served_limit(workspace: Workspace) -> int:
    """The served models one file may hold (``limits.max-served-models``, yamlbounds.DEFAULT_LIMITS)."""
    return int((workspace.config.get("limits") or {}).get("max-served-models", DEFAULT_LIMITS["max-served-models"]))


# The text one file's variable expansions may produce together (``launch/expansion.py`` charges it): past
# it every further expansion of the file is unknown, so the work per file is bounded whatever its lines
# repeat (24 doubling lines ``V1=$V0$V0`` ask for 128 MiB).
MAX_FILE_CHARS = 16 * 1024 * 1024
# What the file being read may still produce; None outside a file's reading (only the value bound holds).
_LEFT: ContextVar[list[int] | None] = ContextVar("cfgcheck_expansion_left", default=None)


@contextmanager
def one_file() -> Iterator[None]:
    """The expansions made inside share one file's budget (``registry.served_models`` opens one per file)."""
    token = _LEFT.set([MAX_FILE_CHARS])
    try:
        yield
    finally:
        _LEFT.reset(token)


def spend(size: int) -> bool:
    """Charge ``size`` characters of expanded text to the file being read; False when it has no more."""
    left = _LEFT.get()
    if left is None:
        return True
    if size > left[0]:
        left[0] = 0
        return False
    left[0] -= size
    return True


class DocContext:
    """One document of a file as an adapter reads it: the file, the document, and the run's workspace."""

    def __init__(self, loaded: LoadedFile, document: Document, workspace: Workspace, first_line: int = 1,
                 shared: dict | None = None) -> None:
        self.loaded = loaded
        self.document = document
        self.workspace = workspace
        self.first_line = first_line  # the first line that belongs to this document (comments above its root count)
        self.shared = {} if shared is None else shared  # what adapters read once for every model of the document

    @property
    def path(self) -> str:
        return self.loaded.path

    def location(self, node: YNode) -> Location:
        """Where ``node`` is written; a scalar's content (``scalar_text_location``): inside its quotes."""
        return node.location(self.loaded.path, node.kind == "scalar")

    def comments(self, line: int) -> tuple[str, ...]:
        return self.loaded.comments_for(line)

    def comment_lines(self, line: int) -> list[tuple[int, str]]:
        return comment_lines(self.loaded, line)

    def definition_comments(self, at: YNode) -> list[tuple[int, str]]:
        """The comments on and above the keys (and list items) that lead from the document's root to
        ``at``, with the document's header (the comments above its first key) and the file's: where a person
        describes the served model, the pool or list that holds it, or its entry."""
        root, loaded = self.document.root, self.loaded
        if root is None or root.kind not in ("map", "seq"):
            return []
        lines = dict(comment_lines(loaded, root.line))  # the module's function: made for every served model
        probe = 1  # the file's header: the comment block it opens with
        while (comment := loaded.comments.get(probe)) is not None and comment.full_line:
            lines[probe] = comment.text
            probe += 1
        path = _path_to(root, at, 0) or []
        for node in path:
            lines.update(comment_lines(loaded, node.line))
        entry = next((node for node in reversed(path[:-1]) if node.kind == "map"), None)
        for key, _ in entry.value if entry is not None else ():  # the keys of the model's own entry
            lines.update(comment_lines(loaded, key.line))
        return sorted(lines.items())

    def heading_comments(self, entry: YNode, keys: tuple[str, ...], at: YNode | None = None) -> tuple[str, ...]:
        """The comment blocks heading the mapping ``entry`` (and ``at``, the key that names it), its
        ``keys`` and, for a key holding a list, the list's first item: what a person writes above a list of
        flags to explain them together."""
        comments = self.loaded.comments
        if not comments:
            return ()
        lines: dict[int, str] = {}
        for node in (at, entry):
            if node is not None:
                lines.update(self.comment_lines(node.line))
        for name in keys:
            key = entry.key_node(name)
            if key is None:
                continue
            lines.update(self.comment_lines(key.line))
            value = entry.get(name)
            if value is not None and value.kind == "seq" and value.value and value.value[0].line > key.line:
                lines.update(self.comment_lines(value.value[0].line))
        return tuple(text for _, text in sorted(lines.items()))

    def source(self, node: YNode) -> str:
        return self.loaded.source(node)

    def setting(self, name: str, key: YNode | None, value: YNode, source: str, convert=None,
                origin: str = "field") -> Setting:
        # the commonest call of the adapters (every field they read): each position is read once
        scalar, loaded = value.kind == "scalar", self.loaded
        raw = value.value if scalar else value.to_python()
        converted = convert(raw) if convert else raw
        value_line = value.line
        line = key.line if key is not None else value_line
        comments = loaded.comments_for(line)
        if value_line != line:
            comments = comments + loaded.comments_for(value_line)
        text = loaded.source(value) if scalar and value_line == value.end_line else None
        if text is not None and value.style in ("'", '"'):
            text = text[1:-1]
        path = loaded.path  # ``location`` written out, as in ``token``
        return Setting(name, converted, value.location(path, scalar), source, comments,
                       key.location(path, key.kind == "scalar") if key is not None else None, text, origin)

    def field_setting(self, parent: YNode, key: str, name: str, source: str, convert=None) -> Setting | None:
        value = parent.get(key) if parent is not None else None
        if value is None or (value.kind == "scalar" and value.value is None):
            return None
        return self.setting(name, parent.key_node(key), value, source, convert)

    def token(self, node: YNode, origin: str) -> ArgToken:
        # ``source``, ``location`` and ``comments`` written out: a token of every list item of every argv
        loaded, scalar = self.loaded, node.kind == "scalar"
        text = node.value if scalar else loaded.source(node)
        return ArgToken(str(text) if text is not None else "", node.location(loaded.path, scalar),
                        loaded.comments_for(node.line), origin)

    @functools.cached_property
    def _comments(self) -> list:
        """This document's comments, in line order: computed once, shared by its served models."""
        end = self.document.root.end_line if self.document.root is not None else self.first_line
        return comments_between(self.loaded, self.first_line - 1, end)

    def directives(self) -> list[Directive]:
        return directives_of(self.path, self._comments)

    @functools.cached_property
    def _shared_comments(self) -> Comments:
        return Comments((c.line, c.text) for c in self._comments)

    def document_comments(self) -> Comments:
        """(line, text) of the document's comments: one object for all its served models."""
        return self._shared_comments

    def resource_model(self, root: YNode, kind: str, default_name: str) -> ServedModel:
        """A served model of the resource ``root``, named by its ``metadata.name`` (else ``default_name``)
        and located there, its identity ``kind/name``."""
        name = str(root.scalar("metadata", "name", default=default_name))
        return self.new_model(name, kind, root.path("metadata", "name") or root, f"{kind}/{name}")

    def new_model(self, name: str, kind: str, at: YNode, identity: str) -> ServedModel:
        model = ServedModel(name=name, kind=kind, path=self.path, document=self.document.index,
                            location=self.location(at), identity=f"{self.path}#{identity}")
        model.directives = self.directives()
        model.comments = self.document_comments()
        model.definition_comments = self.definition_comments(at)
        return model


def _ordered(loaded: LoadedFile) -> tuple[list[int], list[Comment]]:
    """The file's comment lines and comments in line order, sorted once per file."""
    found = loaded.shared.get("ordered-comments")
    if found is None:
        pairs = sorted(loaded.comments.items())
        found = loaded.shared["ordered-comments"] = ([line for line, _ in pairs], [c for _, c in pairs])
    return found


def comments_between(loaded: LoadedFile, after: int, last: int) -> list[Comment]:
    """The comments on lines ``after`` < line <= ``last``, in line order (a binary search: a file of
    thousands of models is not sorted and walked again for each)."""
    lines, ordered = _ordered(loaded)
    return ordered[bisect.bisect_right(lines, after):bisect.bisect_right(lines, last)]


def file_comments(loaded: LoadedFile) -> Comments:
    """(line, text) of every comment of ``loaded``, in line order: made once per file and shared by its
    served models (a script's or a Python spec file's models carry the whole file's comments)."""
    found = loaded.shared.get("comments")
    if found is None:
        found = loaded.shared["comments"] = Comments((c.line, c.text) for c in _ordered(loaded)[1])
    return found


def comment_lines(loaded: LoadedFile, line: int) -> list[tuple[int, str]]:
    """(line, text) of the comment lines directly above ``line`` (no blank line between) and on it."""
    found: list[tuple[int, str]] = []
    probe = line - 1
    while probe >= 1 and (comment := loaded.comments.get(probe)) is not None and comment.full_line:
        found.append((probe, comment.text))
        probe -= 1
    found.reverse()
    own = loaded.comments.get(line)
    if own is not None and not own.full_line:
        found.append((line, own.text))
    return found


_MAX_DEPTH = 12  # a served model's definition sits a few levels down its document; deeper is data


def _path_to(node: YNode, target: YNode, depth: int) -> list[YNode] | None:
    """The key nodes and list items from ``node`` down to ``target`` (itself last), or None."""
    if node is target:
        return [node]
    if depth > _MAX_DEPTH:
        return None
    children = node.value if node.kind != "scalar" else ()  # a list's items, or a mapping's (key, value) pairs
    for child in children:
        key, value = child if isinstance(child, tuple) else (child, child)
        if key is target:
            return [key]
        below = _path_to(value, target, depth + 1)
        if below is not None:
            return [key, *below]
    return None


def directives_of(path: str, comments) -> list[Directive]:
    """``# cfgcheck: key=value reason`` directives among ``comments`` (in line order)."""
    found = []
    for comment in comments:
        match = _DIRECTIVE.search(comment.text) if "cfgcheck" in comment.text else None
        if match and match.group(1) != "ignore":
            found.append(Directive(match.group(1), match.group(2), match.group(3).strip(),
                                   Location(path, comment.line, comment.column)))
    return found
