"""Bounds on hostile YAML: everything a pull request writes is read within known time and memory.

A file that breaks a limit is reported as ``CFG000`` naming the limit (``(limit NAME)``), never
expanded: size (checked before reading), nesting depth and alias-expanded size (checked on the events
before composing when a cheap count of the text says they could be broken, then on the composed
tree, by ``inspect``, the one pass over a composed document that also reports duplicate keys),
documents per file, and the length of a comment cfgcheck reads for directives.
"""

from __future__ import annotations

import math
import re

from . import lazy

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

DEFAULT_LIMITS = {
    "max-file-bytes": 5 * 1024 * 1024,
    "max-depth": 100,
    "max-expanded-nodes": 200_000,
    # 5 MB of "---" is 1.3 million empty documents: 18 s and 1 GB to compose. The largest file of the
    # public configurations cfgcheck is tested on has 10; a rendered chart a few hundred.
    "max-documents": 1000,
    # Engine starts in one file (a script's ``vllm serve`` lines, a pod's containers): each is checked
    # with the file's comments, so thousands of them in one file multiply the work. The public
    # configurations cfgcheck is tested on have at most 15 in a file.
    "max-served-models": 256,
}

# Directives, suppressions, ceilings and measured pools are read from comments of a line or two; the
# longest comment in the public corpus is 410 characters. A longer one is not read for any of them.
MAX_COMMENT_CHARS = 4096


class YamlError(Exception):
    """An input that cannot be read; ``line``/``column`` are 1-based, 0 when unknown."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


# Composing is recursive (libyaml's C composer overflows the C stack near 30,000 levels) and keeps
# every node in memory (about 800 bytes each). When a cheap count of the text's indicators says a
# document could be deeper or larger than this, or the file could hold more documents than allowed,
# its events are counted first (iteratively, stopping at the first limit broken) so that hostile input
# is refused before it is composed.
_SAFE_COMPOSE_DEPTH = 1000


def may_exceed(text: str, limits: dict[str, int]) -> bool:
    max_depth = min(_SAFE_COMPOSE_DEPTH, limits["max-depth"])
    # A level of nesting takes an indicator or a deeper indentation (n characters indent at most isqrt(2n)
    # levels). A list of many items is not deep: over the limit, the columns nesting can use are counted
    # instead, without counting the indicators when the length alone is over (texts of 5,000 characters).
    length_bound = math.isqrt(2 * len(text))
    if length_bound > max_depth or length_bound + _indicators(text) > max_depth:
        if _depth_by_columns(text) > max_depth:
            return True
    # The counts below take one character each (a "-" once, before a space or a line break), three for a
    # "---" or "...": a text too short to reach a limit through them is not counted for it (most files
    # of a repository; every file of a run is asked).
    if 2 * len(text) + 2 > limits["max-expanded-nodes"]:
        nodes_bound = 2 * (_indicators(text) + text.count(",") + text.count(":") + text.count("\n")) + 2
        if nodes_bound > limits["max-expanded-nodes"]:
            return True
    if len(text) // 3 + 1 > limits["max-documents"]:
        documents_bound = text.count("---") + text.count("...") + 1  # a document starts at one, or after an end
        return documents_bound > limits["max-documents"]
    return False


def _indicators(text: str) -> int:
    """The block and flow indicators of ``text``: "- ", "-\n", "?", "[" and "{". The last three are rare:
    looked for before they are counted (``in`` reads the text three times faster than ``count``)."""
    count = text.count("- ") + text.count("-\n")
    for rare in "?[{":
        if rare in text:
            count += text.count(rare)
    return count


# Where a line's first token, or the token after each indicator, anchor or tag that starts it, begins:
# the only places a block collection can start (the parser opens one at the first key or entry). Found
# after each line feed of the text with one put before it: a literal start lets the regex engine skip to
# each line instead of trying ``^`` at every character. Compiled on first use: a run whose files hold no
# served model never bounds a document's depth.
_LINE_START = lazy.Pattern(r"\n([ \t]*(?:(?:[-?:]|---|[&!][^ \t\r\n]*)[ \t]+)*)")
_STEP = lazy.Pattern(r"(?:[-?:]|---|[&!][^ \t\r\n]*)[ \t]+")


def _depth_by_columns(text: str) -> int:
    """A bound on the nesting of ``text`` from the columns a block collection can start at. The parser
    opens a block collection only at a column deeper than the one it is in (libyaml's and PyYAML's
    ``roll_indent``), except a sequence at its mapping key's column, whose entries open the next one
    deeper: so block nesting is at most twice the number of such columns. Flow collections nest inside
    block ones: a ``[`` opens at most two levels (a single-pair mapping in it), a ``{`` one."""
    if "\r" in text.replace("\r\n", ""):  # a line break the pattern does not see: no bound from lines
        return len(text)
    columns: set[int] = set()
    steps = _STEP.compiled()  # bound once: searched in each distinct line start
    for start in set(_LINE_START.findall("\n" + text)):
        indent = len(start) - len(start.lstrip(" \t"))
        columns.add(indent)
        columns.update(step.end() for step in steps.finditer(start, indent))
    return 2 * len(columns) + 2 * text.count("[") + text.count("{")


def _event_parser(prefer_fast: bool):
    if prefer_fast:
        try:
            yaml = lazy.pyyaml()
            if getattr(yaml, "__with_libyaml__", False):
                return lambda text: yaml.parse(text, Loader=yaml.CSafeLoader)
        except ImportError:
            pass
    from ruamel.yaml import YAML

    return lambda text: YAML(typ="rt", pure=True).parse(text)


def _broken(event: Any, message: str) -> YamlError:
    mark = event.start_mark
    return YamlError(message, mark.line + 1, mark.column + 1)


def check_events(text: str, limits: dict[str, int], prefer_fast: bool) -> None:
    """Raise YamlError at the first event that breaks max-depth, max-documents, or max-expanded-nodes
    for a document (unexpanded nodes: a lower bound of what the tree builder counts)."""
    max_depth, max_nodes, max_documents = limits["max-depth"], limits["max-expanded-nodes"], limits["max-documents"]
    depth = nodes = documents = 0
    for event in _event_parser(prefer_fast)(text):
        name = type(event).__name__
        if name in ("SequenceStartEvent", "MappingStartEvent"):
            depth += 1
            nodes += 1
            if depth > max_depth + 1:
                raise _broken(event, f"nesting deeper than {max_depth} levels (limit max-depth)")
        elif name in ("SequenceEndEvent", "MappingEndEvent"):
            depth -= 1
        elif name in ("ScalarEvent", "AliasEvent"):
            nodes += 1
        elif name == "DocumentStartEvent":
            nodes = 0
            documents += 1
            if documents > max_documents:
                raise _broken(event, f"more than {max_documents:,} YAML documents in one file (limit max-documents)")
        if nodes > max_nodes:
            raise _broken(event, f"document has more than {max_nodes:,} nodes (limit max-expanded-nodes)")


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


class TemplateSyntax(YamlError):
    """A file that is a template (Helm/Go ``{{ }}``, Jinja ``{% %}``): YAML only once rendered."""


# Template markers, and the file names templates go by (x.template.yaml, x.yaml.tpl, x.j2, x.gotmpl, ...).
_TEMPLATE_MARKS = ("{{", "{%")
# a pattern, not compiled at import: only a file that is not YAML is asked
_TEMPLATE_NAME = r"\.(template|tmpl|tpl|j2|jinja2?|gotmpl)(\.|$)"


def _template_error(path: str, text: str, error_line: int) -> YamlError | None:
    """A template that breaks the YAML, at its first template line: a line that starts with a template
    tag, or the line where the parser stopped holding one; or any broken file named as a template."""
    for number, line in enumerate(text.splitlines()[:error_line], start=1):
        column = min((c for c in (line.find(mark) for mark in _TEMPLATE_MARKS) if c != -1), default=-1)
        if column != -1 and (line.lstrip().lstrip("- ").startswith(_TEMPLATE_MARKS) or number == error_line):
            return TemplateSyntax("template syntax: YAML only once rendered", number, column + 1)
    if re.search(_TEMPLATE_NAME, path.rsplit("/", 1)[-1], re.I):
        return TemplateSyntax("named as a template: YAML only once rendered", error_line, 1)
    return None


def failure(path: str, text: str, exc: Exception, yaml_error: type, limits: dict[str, int]) -> YamlError:
    """What stopped reading ``text``, as the file's error (a template's is a ``TemplateSyntax``)."""
    if isinstance(exc, YamlError):
        return exc
    if isinstance(exc, yaml_error):
        line, column = _mark_of(exc)
        if "maximum nesting depth" in _one_line(exc):  # libyaml >= 0.2.6 (PyYAML 6.0.4) has its own bound
            return YamlError(f"nesting deeper than {limits['max-depth']} levels (limit max-depth)", line, column)
        return _template_error(path, text, line) or YamlError(f"invalid YAML: {_one_line(exc)}", line, column)
    if isinstance(exc, RecursionError):
        return YamlError(f"nesting deeper than the parser can follow (limit max-depth {limits['max-depth']})")
    # a composer bug must not end the run
    return YamlError(f"cannot read YAML: {type(exc).__name__}: {_one_line(exc)}")


def unread_long_comments(comments: dict) -> list[tuple[str, int, int]]:
    """Blank the text of comments longer than MAX_COMMENT_CHARS, so that no directive, suppression,
    ceiling or pool is read from them; (message, line, column) for those that mention cfgcheck (a
    directive or suppression the user will expect to work). The others are prose: not reported."""
    problems = []
    for comment in comments.values():
        if len(comment.text) <= MAX_COMMENT_CHARS:
            continue
        if "cfgcheck" in comment.text.lower():
            problems.append((f"comment of {len(comment.text):,} characters is longer than the {MAX_COMMENT_CHARS:,} "
                             "cfgcheck reads: the directive or suppression in it is ignored (limit max-comment-chars)",
                             comment.line, comment.column))
        comment.text = ""
    return problems


# ---------------------------------------------------------------- the composed tree

class _KindByClass(dict):
    """A composed node's kind by its class: scalar, seq or map (by class name, worked out once a class).
    Read by subscript, in C, with no method call: asked for every node of every tree built."""

    def __missing__(self, cls: type) -> str:
        name = cls.__name__
        kind = self[cls] = "scalar" if name == "ScalarNode" else "seq" if name == "SequenceNode" else "map"
        return kind


_KIND_BY_CLASS = _KindByClass()


def node_kind(raw: Any) -> str:
    """A composed PyYAML or ruamel node's kind: scalar, seq or map."""
    return _KIND_BY_CLASS[raw.__class__]


def repeated_keys(raw_pairs: list) -> bool:
    """Whether a composed mapping's pairs hold a scalar key twice (as written)."""
    keys = [key.value for key, _ in raw_pairs if node_kind(key) == "scalar"]
    return len(set(keys)) != len(keys)


def inspect(raw: Any, limits: dict[str, int], hash_spans: list[tuple[int, int]]) -> tuple[list[tuple[str, int, int]], bool]:
    """Validate a composed document: enforce the depth and alias-expansion limits, report duplicate
    keys, and collect the spans of scalars holding a ``#`` (for the comment scan). Returns the problems
    and whether the document has aliases. Raises YamlError when a limit is broken.

    Most documents are trees without duplicate keys: one pass, level by level, checks the depth once
    per level. A document with aliases, a repeated key or too deep is walked again in order
    (``_inspect_in_order``), which says exactly where."""
    start, max_depth = len(hash_spans), limits["max-depth"]
    seen: set[int] = set()
    level: list[Any] = [raw]
    for _ in range(max_depth + 1):
        below: list[Any] = []
        for node in level:
            if id(node) in seen:
                break  # an alias
            seen.add(id(node))
            kind = _KIND_BY_CLASS[node.__class__]
            if kind == "scalar":
                if "#" in node.value:
                    hash_spans.append((node.start_mark.index, node.end_mark.index))
            elif kind == "seq":
                below.extend(node.value)
            else:
                if repeated_keys(node.value):
                    break  # a key twice (or merge keys ``<<``, which may repeat)
                for pair in node.value:
                    below.extend(pair)
        else:
            if not below:
                return [], False
            level = below
            continue
        break
    del hash_spans[start:]
    return _inspect_in_order(raw, limits, hash_spans)


def _inspect_in_order(raw: Any, limits: dict[str, int],
                      hash_spans: list[tuple[int, int]]) -> tuple[list[tuple[str, int, int]], bool]:
    """``inspect``, depth first: the first node too deep and the duplicate keys in document order."""
    max_depth, problems = limits["max-depth"], []
    stack: list[tuple[Any, int]] = [(raw, 0)]
    seen: set[int] = set()
    aliased = False
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            aliased = True
            continue
        seen.add(id(node))
        if depth > max_depth:
            mark = node.start_mark
            raise YamlError(f"nesting deeper than {max_depth} levels (limit max-depth)", mark.line + 1, mark.column + 1)
        kind = _KIND_BY_CLASS[node.__class__]
        if kind == "scalar":
            if "#" in node.value:
                hash_spans.append((node.start_mark.index, node.end_mark.index))
        elif kind == "seq":
            stack.extend((child, depth + 1) for child in node.value)
        else:
            first: dict[Any, Any] = {}
            for key, item in node.value:
                if node_kind(key) == "scalar" and key.value != "<<":
                    earlier = first.get(key.value)
                    if earlier is not None:
                        problems.append((f"duplicate key '{key.value}' (first at line {earlier.start_mark.line + 1}); "
                                         "the last one is what Kubernetes uses", key.start_mark.line + 1,
                                         key.start_mark.column + 1))
                    first[key.value] = key
                stack.append((key, depth + 1))
                stack.append((item, depth + 1))
    if aliased:
        _check_expansion(raw, limits["max-expanded-nodes"])
    return problems, aliased


def _check_expansion(raw: Any, limit: int) -> None:
    """The size a document would have with every alias expanded, computed without expanding."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Any, bool]] = [(raw, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in sizes:
            continue
        kind = node_kind(node)
        children = [] if kind == "scalar" else node.value if kind == "seq" else [n for pair in node.value for n in pair]
        if not ready:
            if id(node) in visiting:  # reached from its own descendants: `&x [*x]` looped here forever
                mark = node.start_mark
                raise YamlError("recursive alias: an anchor that contains itself expands without end "
                                "(limit max-expanded-nodes)", mark.line + 1, mark.column + 1)
            visiting.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        size = 1 + sum(sizes.get(id(child), 1) for child in children)
        sizes[id(node)] = size
        if size > limit:
            mark = node.start_mark
            raise YamlError(f"aliases expand to more than {limit:,} nodes (limit max-expanded-nodes)",
                            mark.line + 1, mark.column + 1)
