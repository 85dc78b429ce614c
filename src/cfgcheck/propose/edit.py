"""Textual edits that make a proposal: replace the value span the adapter located, or insert the
setting where the format puts it. Every byte outside the edited spans is kept (``yamlio.apply_edits``).

* Present settings: every place the setting is written is replaced in its own quoting (a typed field,
  a values path, an ``extraArgs``/``args`` token, a word of a shell string), so nothing is left
  overriding the new value.
* Absent settings: a typed field goes into its mapping with the siblings' indentation (LLMKube
  ``spec``/``vllmConfig``, production-stack ``vllmConfig``, a mapped values path); a raw flag is
  appended after the last argv token in the same list style (block or flow, quoted or plain,
  ``--flag value`` or ``--flag=value``), or inside the shell string that holds the argv.

Insertions are ``Edit``s with an empty ``old`` at the end of a line, whose ``new`` text starts with that
line's own line ending, so CRLF files stay CRLF.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from ..adapters.core.protocol import REGISTRY
from ..adapters.core.node_at_location import at_location, walk
from ..model import Edit, Location, ServedModel, Setting
from ..yamlio import LoadedFile, YNode, apply_edits
from ..yamltree import resolve_plain
from .plan import PlanError, Resolved
from .comments import review
from ..settings import DESTS as CANONICAL_DESTS

_WORD = re.compile(r"[A-Za-z0-9_./:@%+=,~^-]+")


# ---------------------------------------------------------------- value text


def plain_ok(text: str) -> bool:
    """``text`` reads back as the same string when written as a plain YAML scalar."""
    if not text or text != text.strip() or text[0] in "!&*?|>'\"%@`#,[]{}" or re.search(r":(\s|$)|\s#", text):
        return False
    if text[0] in "-:" and (len(text) == 1 or text[1] == " "):
        return False
    return resolve_plain(text) == text and not any(c in text for c in "\n\r\t")


def double_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def yaml_value(value: Any) -> str:
    """A YAML scalar of the value's own type (typed fields)."""
    if isinstance(value, (bool, int, float)):
        return as_text(value)
    text = str(value)
    return text if plain_ok(text) else double_quoted(text)


def yaml_string(value: Any) -> str:
    """A YAML scalar that is a string (argv list items must be strings)."""
    text = as_text(value)
    return text if plain_ok(text) and isinstance(resolve_plain(text), str) else double_quoted(text)


# ---------------------------------------------------------------- tree helpers


def seq_item_at(root: YNode, location: Location, path: str) -> tuple[YNode, YNode] | None:
    """(sequence, item) for the scalar list item at ``location``."""
    for node, parent, _ in walk(root):
        if parent is not None and parent.kind == "seq" and node.kind == "scalar" and at_location(node, location, path):
            return parent, node
    return None


def scalar_containing(root: YNode, location: Location) -> YNode | None:
    best = None
    for node, _, _ in walk(root):
        if node.kind != "scalar":
            continue
        if (node.line, node.column) <= (location.line, location.column) < (node.end_line, node.end_column):
            if best is None or (node.line, node.column) >= (best.line, best.column):
                best = node
    return best


def navigate(node: YNode | None, parts: list[str | int]) -> YNode | None:
    for part in parts:
        if node is None:
            return None
        if isinstance(part, int):
            node = node.value[part] if node.kind == "seq" and 0 <= part < len(node.value) else None
        else:
            node = node.get(part) if node.kind == "map" else None
    return node


# ---------------------------------------------------------------- text helpers


class Text:
    """The file's lines with their endings, for computing insertion points."""

    def __init__(self, loaded: LoadedFile):
        self.path = loaded.path
        self.text = loaded.text
        self.lines = loaded.text.splitlines(keepends=True)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def content(self, number: int) -> str:
        return self.line(number).rstrip("\r\n")

    def eol(self, number: int) -> str:
        line = self.line(number)
        ending = line[len(line.rstrip("\r\n")):]
        if ending:
            return ending
        for other in self.lines:
            if other.endswith("\r\n"):
                return "\r\n"
        return "\n"

    def line_of(self, index: int) -> int:
        return self.text.count("\n", 0, index) + 1

    def last_content_line(self, node: YNode) -> int:
        """The last line holding ``node``'s content (not the blank lines or next key after it)."""
        end = len(self.text[:node.end_index].rstrip(" \t\r\n"))
        return self.line_of(max(end - 1, node.start_index))

    def append_after(self, number: int, new_lines: list[str]) -> Edit:
        """Insert whole lines after line ``number``: an empty-``old`` edit at the end of its content."""
        content = self.content(number)
        eol = self.eol(number)
        return Edit(Location(self.path, number, len(content) + 1, number, len(content) + 1), "",
                    "".join(eol + line for line in new_lines))


def _indent_of(text: Text, node: YNode) -> str:
    """The whitespace before ``node`` on its line."""
    prefix = text.content(node.line)[:node.column - 1]
    return prefix if prefix.strip() == "" else " " * (node.column - 1)


# ---------------------------------------------------------------- replacing


def _span(text: Text, setting: Setting) -> tuple[Location, str] | None:
    loc = setting.location
    if loc.end_line not in (None, loc.line) or loc.end_column is None:
        return None
    source = text.content(loc.line)[loc.column - 1:loc.end_column - 1]
    if setting.text is None or source == setting.text:
        return loc, source
    if setting.text and source.count(setting.text) == 1:  # hf://org/repo@REV: the revision inside
        offset = source.index(setting.text)
        column = loc.column + offset
        return Location(loc.path, loc.line, column, loc.line, column + len(setting.text)), setting.text
    return None


def _quote_around(text: Text, loc: Location) -> str | None:
    line = text.content(loc.line)
    before = line[loc.column - 2] if loc.column >= 2 else ""
    after = line[loc.end_column - 1] if loc.end_column - 1 < len(line) else ""
    return before if before in ("'", '"') and before == after else None


def _in_quotes(value: str, quote: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"') if quote == '"' else value.replace("'", "''")


def replacement(r: Resolved, setting: Setting, text: Text) -> Edit | None:
    """The edit that writes ``r.value`` where ``setting`` is written (None: already so)."""
    span = _span(text, setting)
    where = f"{setting.location.path}:{setting.location.line}"
    if span is None:
        raise PlanError(f"cannot edit {setting.source} at {where}: its value spans lines; edit it by hand")
    loc, old = span
    value = r.value
    if r.name == "image" and setting.source.endswith(".tag") and isinstance(value, str):
        repository = str(setting.value).rsplit(":", 1)[0]
        if not value.startswith(repository + ":"):
            raise PlanError(f"cannot change {setting.source} at {where} to {value}: only the tag is written there "
                            f"(repository {repository}); edit it by hand")
        value = value[len(repository) + 1:]
    if setting.is_flag and setting.text is None:
        if value is True:
            return None
        raise PlanError(f"{setting.source} at {where} is a switch without a value; remove or change it by hand")
    quote = _quote_around(text, loc)
    token = setting.origin not in ("field", "values")
    new = as_text(value) if token else yaml_value(value)
    if quote is not None:
        new = _in_quotes(as_text(value), quote)
    elif setting.origin in ("args", "command", "extraArgs") and old == setting.text and _whole_item(loc, text):
        new = yaml_string(value)
    elif token:
        if not _WORD.fullmatch(new):
            if setting.origin == "shell" or setting.origin.startswith("env:"):
                new = shlex.quote(new)
            else:
                raise PlanError(f"cannot write '{new}' into {setting.source} at {where} safely; edit it by hand")
    if new == old:
        return None
    return Edit(loc, old, new)


def _whole_item(loc: Location, text: Text) -> bool:
    """The span is a whole plain list item (``- 4``, ``[..., 4]``) rather than part of a string."""
    line = text.content(loc.line)
    before = line[:loc.column - 1].rstrip()
    after = line[loc.end_column - 1:].lstrip()
    return (before.endswith(("-", "[", ",")) and (after == "" or after[0] in ",]#"))


# ---------------------------------------------------------------- inserting typed fields


def setting_home(model: ServedModel, root: YNode, name: str, config: dict) -> tuple[YNode, list[str | int]] | None:
    """(mapping to start from, key path below it) where the model's format keeps setting ``name``
    (``extra_args``: its argument list): the first registered adapter that knows says."""
    for adapter in REGISTRY:
        hook = getattr(adapter, "setting_home", None)
        home = hook(model, root, name, config) if hook is not None else None
        if home is not None:
            return home
    return None


def insert_field(text: Text, root: YNode, start: YNode, parts: list[str | int], value: str | list[str],
                 where: str) -> Edit:
    """Insert the key path ``parts`` below ``start``, creating missing mappings. ``value`` is a scalar's
    text, or the lines of a block value (``- item``) to put below the last key."""
    node = start
    depth = 0
    for part in parts[:-1]:
        child = navigate(node, [part])
        if child is None:
            break
        if isinstance(part, int) or child.kind != "map":
            raise PlanError(f"cannot add {'.'.join(map(str, parts))} in {where}: "
                            f"{part} is not a mapping; edit it by hand")
        node = child
        depth += 1
    if any(isinstance(p, int) for p in parts[depth:]):
        raise PlanError(f"cannot add {'.'.join(map(str, parts))} in {where}: a list entry is missing")
    missing = [str(p) for p in parts[depth:]]
    if node.kind != "map" or not node.value:
        raise PlanError(f"cannot add {'.'.join(missing)} in {where}: no mapping to add it to; edit it by hand")
    if text.text[node.start_index:node.start_index + 1] == "{":  # flow mapping
        if len(missing) != 1 or not isinstance(value, str):
            raise PlanError(f"cannot add {'.'.join(missing)} to a flow mapping in {where}; edit it by hand")
        close = node.end_index - 1
        line = text.line_of(close)
        column = close - text.text.rfind("\n", 0, close)
        return Edit(Location(text.path, line, column, line, column), "", f", {missing[0]}: {value}")
    indent = _indent_of(text, node.value[0][0])
    step = _step(root)
    lines = []
    for level, key in enumerate(missing):
        pad = indent + " " * (step * level)
        if level < len(missing) - 1 or not isinstance(value, str):
            lines.append(f"{pad}{key}:")
        else:
            lines.append(f"{pad}{key}: {value}")
    if not isinstance(value, str):
        pad = indent + " " * (step * len(missing))
        lines.extend(pad + item for item in value)
    return text.append_after(text.last_content_line(node), lines)


def _step(root: YNode) -> int:
    """The file's indentation step: how far a nested block mapping is indented past its key (2 when
    the document does not tell)."""
    for node, _, _ in walk(root):
        if node.kind != "map":
            continue
        for key, value in node.value:
            if value.kind == "map" and value.value and value.line > key.line:
                step = value.value[0][0].column - key.column
                if step > 0:
                    return step
    return 2


# ---------------------------------------------------------------- inserting flags


def flag_for(model: ServedModel, name: str) -> str | None:
    for dest, canonical in CANONICAL_DESTS.get(model.engine, {}).items():
        if canonical == name and len(dest) > 2:
            return "--" + dest.replace("_", "-")
    return None


def _list_style(seq: YNode, text: Text) -> tuple[str | None, bool]:
    """(quote used by the items or None, whether flags are written ``--flag=value``)."""
    quotes = [child.style for child in seq.value if child.kind == "scalar"]
    quote = '"' if quotes and quotes.count('"') * 2 >= len(quotes) else "'" if quotes and quotes.count("'") * 2 >= len(quotes) else None
    flags = [str(c.value) for c in seq.value if c.kind == "scalar" and str(c.value).startswith("--")]
    joined = bool(flags) and sum("=" in f for f in flags) * 2 > len(flags)
    return quote, joined


def _item(value: str, quote: str | None) -> str:
    if quote == '"':
        return double_quoted(value)
    if quote == "'":
        return "'" + value.replace("'", "''") + "'"
    return yaml_string(value)


def _argv_items(flag: str, value: Any, joined: bool) -> list[str]:
    if value is True:
        return [flag]
    if value is False:
        raise PlanError(f"{flag}=false: cfgcheck can add a switch but not write its negation; edit it by hand")
    return [f"{flag}={as_text(value)}"] if joined else [flag, as_text(value)]


def append_to_seq(text: Text, seq: YNode, items: list[str], quote: str | None, where: str) -> Edit:
    rendered = [_item(item, quote) for item in items]
    if text.text[seq.start_index:seq.start_index + 1] == "[":  # flow sequence
        close = seq.end_index - 1
        body = text.text[seq.start_index + 1:close].rstrip()
        line = text.line_of(close)
        column = close - text.text.rfind("\n", 0, close)
        if body.endswith(","):
            sep = " "
        else:
            sep = ", " if body else ""
        if text.text[close - 1:close] in ("\n", " ") and text.content(line)[:column - 1].strip() == "":
            # "]" alone on its line: insert after the last item instead
            last = seq.value[-1]
            end_line = text.last_content_line(last)
            content = text.content(end_line)
            return Edit(Location(text.path, end_line, len(content) + 1, end_line, len(content) + 1), "",
                        ("" if content.rstrip().endswith(",") else ",") + " " + ", ".join(rendered))
        return Edit(Location(text.path, line, column, line, column), "", sep + ", ".join(rendered))
    if not seq.value:
        raise PlanError(f"cannot append to the empty list in {where}; edit it by hand")
    last = seq.value[-1]
    prefix = text.content(last.line)[:last.column - 1]
    if not re.fullmatch(r"\s*-\s+", prefix):
        prefix = " " * (last.column - 3) + "- " if last.column >= 3 else "- "
    return text.append_after(text.last_content_line(last), [prefix + item for item in rendered])


def append_to_string(text: Text, token_end: Location, node: YNode, items: list[str], where: str) -> Edit:
    words = " ".join(shlex.quote(item) for item in items)
    if node.style == '"':
        words = words.replace("\\", "\\\\").replace('"', '\\"')
    elif node.style == "'":
        words = words.replace("'", "''")
    elif node.style is None and not plain_ok("x " + words):
        raise PlanError(f"cannot append '{words}' to the plain string in {where} safely; edit it by hand")
    line = token_end.line
    column = token_end.end_column if token_end.end_line in (None, line) and token_end.end_column else None
    if column is None:
        raise PlanError(f"cannot find where the command ends in {where}; edit it by hand")
    # after a closing quote of the last word, if the word was quoted in the shell string
    content = text.content(line)
    while column - 1 < len(content) and content[column - 1] in "'\"" and node.style is None:
        column += 1
    return Edit(Location(text.path, line, column, line, column), "", " " + words)


def insert_flag(r: Resolved, text: Text, root: YNode, config: dict, flag: str) -> Edit:
    model = r.model
    where = f"{model.path} ({model.name})"
    tokens = [t for t in model.argv if not t.synthetic and t.location.path == model.path]
    if tokens:
        last = tokens[-1]
        found = seq_item_at(root, last.location, model.path)
        if found is not None and last.origin in ("args", "command", "extraArgs") and str(found[1].value) == last.text:
            seq = found[0]
            quote, joined = _list_style(seq, text)
            return append_to_seq(text, seq, _argv_items(flag, r.value, joined), quote, where)
        node = scalar_containing(root, last.location)
        if node is None:
            raise PlanError(f"cannot find where the engine arguments of {where} are written; edit it by hand")
        return append_to_string(text, last.location, node, _argv_items(flag, r.value, False), where)
    home = setting_home(model, root, "extra_args", config)
    if home is None:
        raise PlanError(f"{where} has no argument list to add {flag} to; edit it by hand")
    start, parts = home
    items = [yaml_string(item) for item in _argv_items(flag, r.value, False)]
    return insert_field(text, root, start, parts, [f"- {item}" for item in items], where)


# ---------------------------------------------------------------- the plan


def edits_for(r: Resolved, loaded: LoadedFile, config: dict) -> list[Edit]:
    """The edits that make ``r`` true in ``loaded`` (empty: it already is)."""
    text = Text(loaded)
    if r.current:
        edits = []
        for setting in r.current:
            if setting.location.path != loaded.path:
                raise PlanError(f"{r.change.spec()}: {setting.source} is written in {setting.location.path}; "
                                "propose the change there")
            edit = replacement(r, setting, text)
            if edit is not None:
                edits.append(edit)
        return edits
    document = loaded.documents[r.model.document] if r.model.document < len(loaded.documents) else None
    root = document.root if document is not None else None
    if root is None:
        raise PlanError(f"cannot read {loaded.path} to add {r.label}")
    where = f"{r.model.path} ({r.model.name})"
    if r.flag is None:
        home = setting_home(r.model, root, r.name, config)
        if home is not None:
            start, parts = home
            return [insert_field(text, root, start, parts, yaml_value(r.value), where)]
        if r.name in ("image", "model", "model_revision"):
            raise PlanError(f"{where} does not write {r.name} where cfgcheck can add it; edit it by hand")
    flag = r.flag or flag_for(r.model, r.name)
    if flag is None:
        raise PlanError(f"no {r.model.engine} flag for {r.name}; use arg:--flag")
    return [insert_flag(r, text, root, config, flag)]


def comment_edits(r: Resolved, loaded: LoadedFile, date: str) -> tuple[list[Edit], list]:
    """The edits and notes for the explanation comments at each value ``r`` changes in ``loaded``
    (``comments.review``): a plain restatement of the old value follows it, anything else is kept
    and flagged."""
    text = Text(loaded)
    edits: list[Edit] = []
    notes: list = []
    for setting in r.current:
        if setting.location.path == loaded.path and replacement(r, setting, text) is not None:
            found, said = review(loaded, setting, r.value, date, text)
            edits += found
            notes += said
    return edits, notes


def shifted(line: int, edits: list[Edit]) -> int:
    """Where ``line`` is once ``edits`` are applied: lines inserted (or removed) above it move it."""
    return line + sum(e.new.count("\n") - e.old.count("\n") for e in edits if e.location.line < line)


def merge(edits: list[Edit]) -> list[Edit]:
    """Insertions at the same point become one edit, in the order given; overlapping edits are refused."""
    merged: dict[tuple[int, int, str], Edit] = {}
    order: list[tuple[int, int, str]] = []
    for edit in edits:
        key = (edit.location.line, edit.location.column, edit.old)
        if key in merged:
            previous = merged[key]
            if edit.old:
                if previous.new != edit.new:
                    raise PlanError(f"two changes edit {edit.location.path}:{edit.location.line} differently")
                continue
            merged[key] = Edit(previous.location, "", previous.new + edit.new)
            continue
        merged[key] = edit
        order.append(key)
    result = [merged[k] for k in order]
    spans = sorted((e.location.line, e.location.column, e.location.column + len(e.old)) for e in result if e.old)
    for (line_a, _, end_a), (line_b, start_b, _) in zip(spans, spans[1:]):
        if line_a == line_b and start_b < end_a:
            raise PlanError(f"two changes overlap on line {line_a}; propose them separately")
    return result


@dataclass
class FileResult:
    path: str
    before: str
    after: str


def apply(files: dict[str, LoadedFile], edits: dict[str, list[Edit]]) -> list[FileResult]:
    results = []
    for path in sorted(edits):
        if not edits[path]:
            continue
        before = files[path].text
        try:
            after = apply_edits(before, merge(edits[path]))
        except ValueError as exc:
            raise PlanError(f"{path}: {exc}") from None
        if after != before:
            results.append(FileResult(path, before, after))
    return results
