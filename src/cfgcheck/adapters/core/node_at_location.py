"""Finding the YAML node at a location a served model reports: how ``propose`` gets back from a
setting's location to the mapping it edits."""

from __future__ import annotations

from ...model import Location
from ...yamlio import YNode, scalar_text_location

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator


def walk(node: YNode) -> Iterator[tuple[YNode, YNode | None, YNode | None]]:
    """(node, parent, key node) for every node below ``node``."""
    stack: list[tuple[YNode, YNode | None, YNode | None]] = [(node, None, None)]
    seen: set[int] = set()
    while stack:
        current, parent, key = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current, parent, key
        if current.kind == "map":
            for k, v in current.value:
                stack.append((v, current, k))
        elif current.kind == "seq":
            stack.extend((child, current, None) for child in current.value)


def at_location(node: YNode, location: Location, path: str) -> bool:
    loc = scalar_text_location(path, node) if node.kind == "scalar" else node.location(path)
    return (loc.line, loc.column) == (location.line, location.column) or (node.line, node.column) == (
        location.line, location.column)


def value_of_key_at(root: YNode, location: Location, path: str) -> YNode | None:
    """The value whose key (or which itself) is at ``location``."""
    for node, _, key in walk(root):
        if key is not None and at_location(key, location, path):
            return node
    for node, _, _ in walk(root):
        if node.kind == "map" and (node.line, node.column) == (location.line, location.column):
            return node
    return None


def map_holding(root: YNode, location: Location, path: str) -> YNode | None:
    """The mapping that holds the key or value at ``location`` (or is itself there)."""
    for node, _, _ in walk(root):
        if node.kind != "map":
            continue
        if (node.line, node.column) == (location.line, location.column):
            return node
        for key, value in node.value:
            if at_location(key, location, path) or (value.kind == "scalar" and at_location(value, location, path)):
                return node
    return None
