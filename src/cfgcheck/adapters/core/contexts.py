"""The contexts adapters work in: the run's ``Workspace`` (the user's configuration, and the index spaces
of the modules that index documents of every file) and one document's ``DocContext`` (locating its
nodes, reading its comments and directives, making a served model located in it)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from ...model import ArgToken, Directive, Location, ServedModel, Setting
from ...yamlio import Document, LoadedFile, YNode, scalar_text_location

_DIRECTIVE = re.compile(r"cfgcheck:\s*([a-z][a-z0-9-]*)\s*=\s*(\S+)\s*(.*)$")


Space = TypeVar("Space")


@dataclass(eq=False)  # one per run, never compared: no value __eq__ to create at import
class Workspace:
    """What the adapters of one run share across files: the user's configuration, the files whose launch
    another served model holds, and an index space per module that records documents of every file
    (LLMKube Models by name, Services, ConfigMaps, DRA claims, files read for context ...). A space
    belongs to its module, which alone reads and writes it (others ask that module), so a new format
    adds no field here."""

    config: dict[str, Any] = field(default_factory=dict)
    # repository files whose served model is another's launch (a Dockerfile whose image a workload runs)
    held: set[str] = field(default_factory=set)
    spaces: dict[str, Any] = field(default_factory=dict)

    def space(self, owner: str, make: Callable[[], Space]) -> Space:
        """The index space of module ``owner`` (its ``__name__``), made by ``make()`` on first use."""
        found = self.spaces.get(owner)
        if found is None:
            found = self.spaces[owner] = make()
        return found


@dataclass(eq=False)
class DocContext:
    loaded: LoadedFile
    document: Document
    workspace: Workspace
    first_line: int = 1  # the first line that belongs to this document (comments above its root count)

    @property
    def path(self) -> str:
        return self.loaded.path

    def location(self, node: YNode) -> Location:
        if node.kind == "scalar":
            return scalar_text_location(self.path, node)
        return node.location(self.path)

    def comments(self, line: int) -> tuple[str, ...]:
        return self.loaded.comments_for(line)

    def comment_lines(self, line: int) -> list[tuple[int, str]]:
        return comment_lines(self.loaded, line)

    def definition_comments(self, at: YNode) -> list[tuple[int, str]]:
        """The comments on and above the keys (and list items) that lead from the document's root to
        ``at``, with the document's header (the comments above its first key) and the file's: where a person
        describes the served model, the pool or list that holds it, or its entry."""
        root = self.document.root
        if root is None or root.kind not in ("map", "seq"):
            return []
        lines = dict(self.comment_lines(root.line))
        probe = 1  # the file's header: the comment block it opens with
        while (comment := self.loaded.comments.get(probe)) is not None and comment.full_line:
            lines[probe] = comment.text
            probe += 1
        path = _path_to(root, at, 0) or []
        for node in path:
            lines.update(self.comment_lines(node.line))
        entry = next((node for node in reversed(path[:-1]) if node.kind == "map"), None)
        for key, _ in entry.items() if entry is not None else ():  # the keys of the model's own entry
            lines.update(self.comment_lines(key.line))
        return sorted(lines.items())

    def source(self, node: YNode) -> str:
        return self.loaded.source(node)

    def setting(self, name: str, key: YNode | None, value: YNode, source: str, convert=None,
                origin: str = "field") -> Setting:
        raw = value.value if value.kind == "scalar" else value.to_python()
        converted = convert(raw) if convert else raw
        line = key.line if key is not None else value.line
        comments = self.comments(line)
        if value.line != line:
            comments = comments + self.comments(value.line)
        text = self.source(value) if value.kind == "scalar" and value.line == value.end_line else None
        if text is not None and value.style in ("'", '"'):
            text = text[1:-1]
        return Setting(name, converted, self.location(value), source, comments,
                       self.location(key) if key is not None else None, text, origin)

    def field_setting(self, parent: YNode, key: str, name: str, source: str, convert=None) -> Setting | None:
        value = parent.get(key) if parent is not None else None
        if value is None or (value.kind == "scalar" and value.value is None):
            return None
        return self.setting(name, parent.key_node(key), value, source, convert)

    def token(self, node: YNode, origin: str) -> ArgToken:
        text = node.value if node.kind == "scalar" else self.source(node)
        return ArgToken(str(text) if text is not None else "", self.location(node), self.comments(node.line), origin)

    @functools.cached_property
    def _comments(self) -> list:
        """This document's comments, in line order: computed once, shared by its served models."""
        end = self.document.root.end_line if self.document.root is not None else self.first_line
        return [c for line, c in sorted(self.loaded.comments.items()) if self.first_line <= line <= end]

    def directives(self) -> list[Directive]:
        return directives_of(self.path, self._comments)

    def document_comments(self) -> list[tuple[int, str]]:
        return [(c.line, c.text) for c in self._comments]

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
    children = node.value if node.kind == "seq" else list(node.items()) if node.kind == "map" else []
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
