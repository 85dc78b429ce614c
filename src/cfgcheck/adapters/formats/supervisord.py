"""supervisord programs that start an engine (``[program:x]`` with ``command=vllm serve ...``).

A supervisord configuration is an INI file read by Python's ``configparser`` (supervisor's
``options.UnhosedConfigParser``: ``=`` or ``:`` between key and value, ``;`` and ``#`` comments on
their own line or after whitespace, a value continued on more-indented lines). For each
``[program:NAME]`` section:

- ``command=`` is split into words as supervisord does (``shlex.split``: quotes, no shell, no ``$VAR``
  expansion); a ``bash -c "..."`` command is read as the script it runs (``launch/scripts.py``), its
  variables taken from ``environment=``. Each word is located where it is written, on whichever
  continuation line.
- supervisord's own expansions (``%(program_name)s``, ``%(process_num)02d``, ``%(group_name)s``,
  ``%(numprocs)d``, ``%(here)s``) are resolved; ``%(ENV_X)s`` is supervisord's environment variable
  ``X``, read as ``${X}``: a value not known here (supervisor docs, "Environment Variables").
- ``environment=KEY="v",KEY2="v2"`` is the engine's env (``CUDA_VISIBLE_DEVICES`` gives its GPUs);
  ``numprocs=N`` starts N copies: the model's replicas.

Only a file holding ``[program:`` and an engine name is read. A script that writes such a configuration
in a heredoc has its programs read here too (the protocol's ``heredoc_models``).
"""

from __future__ import annotations

import bisect
import itertools
import posixpath
import re
from dataclasses import dataclass, field

from ...model import ArgToken, Setting
from ...yamlio import Comment, LoadedFile
from ..core.recognition import ENGINE_MARKERS, to_int
from ..launch.expansion import substitute
from ..launch.scripts import launches, locator, script_model
from ..launch.shell import SHELL_C, SHELLS, expand, lex

MARKERS = ("[program:",)
SUFFIXES = (".conf",)

_SECTION = re.compile(r"\[(?P<header>.+)\]")  # configparser.RawConfigParser._SECT_TMPL
_OPTION = re.compile(r"(?P<option>.*?)\s*(?P<vi>[=:])\s*(?P<value>.*)$")  # configparser._OPT_TMPL
_COMMENT_PREFIXES = ("#", ";")
# Python %-format of supervisord's expansions; the width is bounded (a hostile file gains nothing)
_EXPANSION = re.compile(r"%%|%\((?P<name>[A-Za-z_][\w.-]*)\)(?P<spec>[-#0 +]?\d{0,2}(?:\.\d{1,2})?)(?P<kind>[sdirf])")


@dataclass
class Value:
    """One option's value: its text as configparser joins it, and each line's (offset, text) in the file."""

    parts: list[tuple[int, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.parts).strip()

    def words(self) -> list[tuple[str, int, int]]:
        """The value split as ``shlex.split`` splits it, each word at its offsets in the file."""
        joined = "\n".join(text for _, text in self.parts)
        starts = list(itertools.accumulate((len(text) + 1 for _, text in self.parts[:-1]), initial=0))

        def in_file(index: int) -> int:
            part = bisect.bisect_right(starts, index) - 1
            return self.parts[part][0] + index - starts[part]

        return [(word, in_file(start), in_file(max(start, end - 1)) + (end > start)) for word, start, end in
                lex(joined, shell=False)]


@dataclass
class Section:
    name: str
    line: int
    last_line: int
    options: dict[str, Value] = field(default_factory=dict)


def scan_comments(text: str) -> dict[int, Comment]:
    """``;`` and ``#`` comments: alone on a line, or after whitespace (configparser's inline prefixes)."""
    found: dict[int, Comment] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        start = _comment_start(line)
        if start is not None:
            found[number] = Comment(number, start + 1, line[start + 1:].strip(), not line[:start].strip())
    return found


def _comment_start(line: str) -> int | None:
    if line.strip().startswith(_COMMENT_PREFIXES):
        return len(line) - len(line.lstrip())
    starts = [m.start() + 1 for m in re.finditer(r"\s[;#]", line)]
    return starts[0] if starts else None


def sections(text: str, base: int = 0, first_line: int = 1) -> list[Section]:
    """The sections of an INI file as configparser reads them, each value with its place in the file
    (``text`` starts at offset ``base``, on line ``first_line``, of the file)."""
    found: list[Section] = []
    current: Value | None = None
    indent = 0
    offset = base
    for number, line in enumerate(text.split("\n"), start=first_line):
        start = _comment_start(line)
        content = line[:start] if start is not None else line
        stripped = content.strip()
        line_offset, offset = offset, offset + len(line) + 1
        if not stripped:
            continue  # blank or comment-only lines neither end nor join a value
        first = len(content) - len(content.lstrip())
        if found and current is not None and first > indent:
            current.parts.append((line_offset + first, stripped))
            found[-1].last_line = number
            continue
        indent, current = first, None
        header = _SECTION.fullmatch(stripped)
        if header:
            found.append(Section(header.group("header"), number, number))
            continue
        option = _OPTION.match(stripped) if found else None
        if option and option.group("option"):
            value = option.group("value").strip()
            current = Value([(line_offset + first + option.start("value"), value)] if value else [])
            found[-1].options[option.group("option").strip().lower()] = current
            found[-1].last_line = number
    return found


def file_models(workspace, loaded: LoadedFile) -> list:
    if "[program:" not in loaded.text or not any(marker in loaded.text for marker in ENGINE_MARKERS):
        return []
    return heredoc_models(workspace, loaded, loaded.text)


def heredoc_models(workspace, loaded: LoadedFile, text: str, base: int = 0) -> list:
    """The served models of the programs in ``text``: the file's text, or a configuration a script
    writes (``cat > /etc/supervisor/conf.d/vllm.conf <<EOF``), at offset ``base`` of the file."""
    found = []
    locate = locator(loaded)
    for section in sections(text, base, loaded.text.count("\n", 0, base) + 1):
        kind, _, name = section.name.partition(":")
        if kind.strip() in ("program", "fcgi-program") and name and "command" in section.options:
            model = _program_model(workspace, loaded, section, name.strip(), locate)
            found.extend([model] if model is not None else [])
    return found


def _program_model(workspace, loaded: LoadedFile, section: Section, name: str, locate):
    """The served model one program starts, or None when its command starts no engine; ``locate`` gives
    a word's location from its offsets in the file (``scripts.locator``)."""
    numprocs = section.options.get("numprocs")
    count = to_int(numprocs.text) if numprocs is not None else 1
    start = to_int(section.options["numprocs_start"].text) if "numprocs_start" in section.options else 0
    known = {"program_name": name, "group_name": name, "process_num": start if isinstance(start, int) else 0,
             "numprocs": count if isinstance(count, int) else 1, "here": posixpath.dirname(loaded.path) or "."}
    environment = _environment(section.options.get("environment"), known, locate)
    words = _command_words(section.options["command"], environment)
    launched = next(iter(launches([(_expanded(word, known), s, e) for word, s, e in words], locate)), None)
    if launched is None:
        return None
    launched.env = {**environment, **launched.env}
    model = script_model(workspace, loaded, launched, "supervisord program", f"program:{name}", 0,
                         (section.line - 1, section.last_line), name)
    if model is None:
        return None
    for key in environment:
        model.env[key].source = f"environment {key}"
    if numprocs is not None and isinstance(count, int):
        offset, text = numprocs.parts[0]
        location, comments = locate(offset, offset + len(text), text)
        model.replicas = Setting("replicas", count, location, "numprocs", comments, location, text, "supervisord")
    return model


def _command_words(command: Value, environment: dict) -> list[tuple[str, int, int]]:
    """``command=`` split as ``shlex.split`` does, at the file's offsets; ``sh -c SCRIPT`` is the script's
    engine command, its variables expanded from ``environment=``."""
    words = command.words()
    texts = [word for word, _, _ in words]
    if len(texts) >= 3 and texts[0].rsplit("/", 1)[-1] in SHELLS and SHELL_C.match(texts[1]):
        script, start, _ = words[2]  # offsets hold while the quoted script has no escapes
        env = {key: token.text for key, token in environment.items()}
        return expand(lex(script, shell=True, base=start), env)
    return words


def _environment(value: Value | None, known: dict, locate) -> dict:
    """``environment=KEY="v",KEY2=v2`` (supervisor ``datatypes.dict_of_key_value_pairs``: quotes allow a
    comma in a value) as located tokens."""
    if value is None:
        return {}
    found: dict[str, ArgToken] = {}
    for offset, text in value.parts:
        for match in re.finditer(r"\s*([A-Za-z_][\w.]*)\s*=\s*(\"[^\"]*\"|'[^']*'|[^,]*)\s*,?", text):
            raw = match.group(2)
            quoted = raw[:1] in "\"'" and len(raw) >= 2
            body = raw[1:-1] if quoted else raw.strip()
            at = offset + match.start(2) + (1 if quoted else 0)
            location, comments = locate(at, at + len(body), body)
            found[match.group(1)] = ArgToken(_expanded(body, known), location, comments, "env")
    return found


def _expanded(text: str, known: dict) -> str:
    """supervisord's ``%(name)s`` expansions in ``text``: the known ones resolved, ``%(ENV_X)s`` as
    ``${X}`` (its value is supervisord's environment, unknown here), ``%%`` a ``%``."""
    if "%" not in text:
        return text

    def replace(match: re.Match) -> str:
        name = match.group("name")
        if name is None:
            return "%"
        if name.startswith("ENV_"):
            return "${" + name[4:] + "}"
        if name not in known:
            return "${" + name + "}"  # host_node_name: the host's, unknown here
        try:
            return f"%{match.group('spec')}{match.group('kind')}" % (known[name],)
        except (TypeError, ValueError):
            return str(known[name])

    expanded = substitute(_EXPANSION, text, replace)
    return text if expanded is None else expanded
