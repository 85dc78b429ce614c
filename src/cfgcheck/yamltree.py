"""Located YAML trees: the YNode of every node of a composed document, built at once.

A composer node (PyYAML's C composer or ruamel's) keeps its positions; a YNode adds its kind, style,
explicit tag and value, the value of a plain scalar resolved by the YAML 1.2 core schema so that both
composers give identical trees. Building a tree also notes what ``yamlbounds.inspect`` looks for
(scalars holding a ``#``, mappings that may repeat a key), so that a document with no alias and too
shallow for any limit is walked once.
"""

from __future__ import annotations

from . import lazy
from .model import Location
from .yamlbounds import _KIND_BY_CLASS, inspect, node_kind, repeated_keys

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterator

# Compiled on first use: a run whose files hold no served model resolves no scalar. Hexadecimal and octal
# scalars are rare: tried only after their prefix.
_INT = lazy.Pattern(r"[-+]?(0|[1-9][0-9_]*)$")
_HEX = lazy.Pattern(r"0x[0-9a-fA-F_]+$")
_OCT = lazy.Pattern(r"0o[0-7_]+$")
_FLOAT = lazy.Pattern(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
# the plain scalars that are a null or a boolean; any other that starts with none of _NUMBER_STARTS is text
_WORDS = {"~": None, "null": None, "Null": None, "NULL": None, "true": True, "True": True, "TRUE": True,
          "false": False, "False": False, "FALSE": False}
_NUMBER_STARTS = frozenset("-+.0123456789")  # the first characters of _INT, _HEX, _OCT, _FLOAT and _SPECIAL_FLOATS
_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


class YNode:
    """A located YAML node over a composer node (which keeps the positions).

    ``value`` is a list of (key, value) pairs for maps, a list for sequences, and the resolved Python
    value for scalars. Lines and columns are 1-based; ``end_*`` exclusive. A document's nodes are built
    at once (``_tree``): adapters read nearly every node of a file, and plain attributes cost less to
    read than values resolved on first use. Aliased nodes share one YNode, so an alias is never expanded.
    """

    # No ``__init__``: ``_tree`` sets every slot. A class without one is made in C; an ``__init__`` is one
    # more Python frame for each of a file's nodes.
    __slots__ = ("_raw", "kind", "style", "tag", "value", "_keys")
    _raw: Any
    kind: str
    style: str | None
    tag: str | None
    value: Any
    _keys: dict[str, tuple[YNode, YNode]] | None  # a mapping's pairs by key text (the last one wins); None for others

    # Positions are read from the composer's marks when asked: most nodes are never located.
    @property
    def line(self) -> int:
        return self._raw.start_mark.line + 1

    @property
    def column(self) -> int:
        return self._raw.start_mark.column + 1

    @property
    def end_line(self) -> int:
        return self._raw.end_mark.line + 1

    @property
    def end_column(self) -> int:
        return self._raw.end_mark.column + 1

    @property
    def start_index(self) -> int:
        return self._raw.start_mark.index

    @property
    def end_index(self) -> int:
        return self._raw.end_mark.index

    def __repr__(self) -> str:
        return f"YNode({self.kind}, line {self.line}, column {self.column})"

    def get(self, key: str) -> "YNode | None":
        """The value for ``key`` in a mapping (the last one wins, as in Kubernetes)."""
        keys = self._keys
        pair = keys.get(key) if keys is not None else None
        return pair[1] if pair is not None else None

    def key_node(self, key: str) -> "YNode | None":
        keys = self._keys
        pair = keys.get(key) if keys is not None else None
        return pair[0] if pair is not None else None

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

    def to_python(self) -> Any:
        if self.kind == "scalar":
            return self.value
        if self.kind == "seq":
            return [child.to_python() for child in self.value]
        return {k.to_python() if k.kind == "scalar" else str(k.line): v.to_python() for k, v in self.value}

    def location(self, path: str, inside_quotes: bool = False) -> Location:
        """Where the node is written in ``path``; ``inside_quotes``: a quoted one-line scalar's content."""
        start, end = self._raw.start_mark, self._raw.end_mark  # read once: locating is the adapters' commonest call
        if inside_quotes and start.line == end.line and self.style in ("'", '"'):
            return Location(path, start.line + 1, start.column + 2, end.line + 1, end.column)
        return Location(path, start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema for plain scalars."""
    if text in _WORDS:
        return _WORDS[text]
    first = text[:1]
    if first not in _NUMBER_STARTS or first == "-" and (text[1:2] == "-" or text[1:2].isalpha()):
        return text  # cannot be a number: most scalars take this path
    # ASCII digits without a leading zero, which _INT matches, are most numbers (14,658 of the 20,970 scalars
    # _INT was tried on in bench/out/dense, and every one it matched): no search for them
    if text.isascii() and text.isdigit() and (first != "0" or len(text) == 1) or _INT.match(text):
        try:
            return int(text.replace("_", ""))
        except ValueError:  # over Python's int-string conversion limit (4,300 digits): kept as written
            return text
    prefix = text[:2]
    if prefix == "0x" and _HEX.match(text):
        return int(text[2:].replace("_", ""), 16)
    if prefix == "0o" and _OCT.match(text):
        return int(text[2:].replace("_", ""), 8)
    if _FLOAT.match(text) and any(ch.isdigit() for ch in text):
        return float(text.replace("_", ""))
    lowered = text.lower()
    if lowered in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[lowered]
    return text


_STYLES = frozenset(("'", '"', "|", ">"))  # the scalar styles a YNode names; plain is None
CORE_TAG = "tag:yaml.org,2002:"  # the core schema's tags, written out: a YNode's tag is None for them, as for none


class _Seen:
    """What building a document's tree noticed that ``inspect`` would look for: the spans of scalars
    holding a ``#`` (for the comment scan) and whether a mapping may repeat a key."""

    __slots__ = ("hash_spans", "repeated")

    def __init__(self) -> None:
        self.hash_spans: list[tuple[int, int]] = []
        self.repeated = False


def _tree(raw: Any, views: dict[int, YNode] | None, seen: _Seen) -> YNode:
    """The YNode of the composed node ``raw``, built with all its descendants. ``views``: the YNodes
    built so far by composer node, for a document with aliases (so an aliased node has one YNode);
    None for a document without, where every node has one parent."""
    if views is not None:
        built = views.get(id(raw))
        if built is not None:
            return built
    node = YNode()
    node._raw = raw
    node._keys = node.style = None
    node.kind = kind = _KIND_BY_CLASS[raw.__class__]
    tag = raw.tag
    # the fast composer tags every untagged node "" (yamlio._fast_loader); a core tag written out reads as none too
    node.tag = _tag_of(tag) if tag else None
    if kind == "scalar":
        style, value = raw.style, raw.value
        if "#" in value:
            seen.hash_spans.append((raw.start_mark.index, raw.end_mark.index))
        if style not in _STYLES:
            # Plain scalars are resolved by our rules so both composers agree; quoted ones are text.
            # most scalars are names, neither a number nor a word of _WORDS: text, no call
            if node.tag is None and (value[:1] in _NUMBER_STARTS or value in _WORDS):
                value = resolve_plain(value)
        else:
            node.style = style
            if style == ">" and "\a" in value:
                value = value.replace("\a", "")  # ruamel marks fold points with BEL in folded scalars
        node.value = value
    elif kind == "seq":
        node.value = [_tree(child, views, seen) for child in raw.value]
    else:
        pairs: list[tuple[YNode, YNode]] = []
        keys: dict[str, tuple[YNode, YNode]] = {}
        merged = False
        for raw_key, item in raw.value:
            # a merge key: a plain ``<<`` (a non-scalar key's value is a list, never equal to it)
            if raw_key.value == "<<" and getattr(raw_key, "style", None) not in _STYLES \
                    and node_kind(item) in ("map", "seq"):
                for source in _merged(_tree(item, views, seen)):
                    pairs.extend(source.value)
                    keys.update(source._keys)  # in the pairs' order, as the mapping's own: the last one wins
                merged = True
                continue
            key = _tree(raw_key, views, seen)
            pair = (key, _tree(item, views, seen))
            pairs.append(pair)
            if key.kind == "scalar" and isinstance(key.value, str):
                keys[key.value] = pair
        node.value, node._keys = pairs, keys
        # as many text keys as pairs: no two written alike (two alike resolve alike, or not to text)
        if merged or len(keys) != len(pairs):
            seen.repeated = seen.repeated or repeated_keys(raw.value)
    if views is not None:
        views[id(raw)] = node
    return node


def _tag_of(tag: Any) -> str | None:
    """A tag as text (ruamel's is a ``Tag``), None for the core schema's."""
    if tag.__class__ is not str:
        tag = getattr(tag, "value", None)
    return tag if tag and not tag.startswith(CORE_TAG) else None


def _merged(node: YNode) -> list[YNode]:
    """The mappings a merge key's value merges: itself, or the mappings of its sequence."""
    return [node] if node.kind == "map" else [child for child in node.value if child.kind == "map"]


def document_tree(raw: Any, limits: dict[str, int], hash_spans: list[tuple[int, int]],
              plain: bool) -> tuple[YNode, list[tuple[str, int, int]]]:
    """A composed document's tree and problems. ``plain``: it has no alias and no limit can be broken,
    so ``inspect``'s walk is needed only when building it finds a mapping that may repeat a key."""
    if not plain:
        problems, aliased = inspect(raw, limits, hash_spans)
        return _tree(raw, {} if aliased else None, _Seen()), problems
    seen = _Seen()
    root = _tree(raw, None, seen)
    if seen.repeated:
        problems, _ = inspect(raw, limits, hash_spans)  # where, in document order
        return root, problems
    hash_spans.extend(seen.hash_spans)
    return root, []
