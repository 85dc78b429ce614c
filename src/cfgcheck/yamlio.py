"""Read YAML into located trees: every node keeps its line, column and source text; comments are kept.

Two composers build the same tree (``yamltree``): ruamel.yaml's round-trip composer and, where PyYAML's libyaml
binding is installed, its C composer (about 30x faster; both keep positions). Values are resolved by
our own YAML 1.2 core rules so both give identical trees. Comments are read from the text itself,
outside every scalar's span, so they do not depend on the composer either. Edits never re-dump a
document: they replace exact spans of the original text (see ``apply_edits``), so every byte that is
not edited survives, comments and quoting included.

Hostile input is bounded: file size, nesting depth and alias-expanded size have limits; a file that
breaks one is reported, never expanded.
"""

from __future__ import annotations

import os
import stat
import sys
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from . import lazy
from .model import Edit, Location
from .records import ValueRecord
from .yamlcomments import Comment, scan_comments
from .yamlbounds import DEFAULT_LIMITS, YamlError, check_events, failure, may_exceed, unread_long_comments
from .yamlbounds import TemplateSyntax as TemplateSyntax  # where the run imports it from
from .yamltree import YNode as YNode  # where the adapters import it from
from .yamltree import document_tree

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Protocol

    class FileReader(Protocol):
        """A format that is not YAML (a shell script, a Makefile): what reading its text needs of it."""

        def scan_comments(self, text: str) -> dict[int, Comment]: ...

    # The reader of a file name (repo-relative) when its format is not YAML, else None: the adapter
    # registry's ``file_format``, which the callers that read such files pass in.
    Readers = Callable[[str], "FileReader | None"]


class Document(ValueRecord):
    """One YAML document of a file: its position, its tree (None: empty or unreadable) and what was wrong in it."""

    __slots__ = ("index", "root", "line", "problems")

    def __init__(self, index: int, root: YNode | None, line: int,
                 problems: list[tuple[str, int, int]] | None = None) -> None:
        self.index = index
        self.root = root
        self.line = line  # first line of the document
        self.problems = [] if problems is None else problems  # (message, line, column)


class LoadedFile(ValueRecord):
    """One file read for the run: its text, its documents and comments, and whether it can hold a served model."""

    __slots__ = ("path", "text", "documents", "comments", "error", "serving", "shared")

    def __init__(self, path: str, text: str, documents: list[Document], comments: dict[int, Comment],
                 error: YamlError | None = None, serving: bool = True, shared: dict | None = None) -> None:
        self.path = path  # repo-relative POSIX
        self.text = text
        self.documents = documents
        self.comments = comments  # by line
        self.error = error
        self.serving = serving  # False: no serving marker in it; parsed only so that unreadable YAML is reported
        # what adapters derive from the file once and share among its served models (adapters/core/contexts.file_comments)
        self.shared = {} if shared is None else shared

    def unmarked(self) -> bool:
        """Whether it equals ``unmarked(self.path)``: read for a serving marker it does not hold, nothing
        kept (tested for thousands of files a run, without making that file to compare)."""
        return not (self.serving or self.text or self.documents or self.comments or self.shared) \
            and self.error is None and self.__class__ is LoadedFile

    def comments_for(self, line: int) -> tuple[str, ...]:
        """Comment lines directly above ``line`` (contiguous, no blank line between) and on it."""
        previous = self.comments.get(line - 1) if line > 1 else None
        if previous is None and line not in self.comments:
            return ()  # most lines: nothing on them or above them (adapters ask for every setting)
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


def _fast_loader(yaml: Any):
    """libyaml's C composer with a resolver that does nothing: scalars are resolved by
    ``yamltree.resolve_plain`` when read, so PyYAML's per-scalar regex resolution would be wasted work."""

    class Loader(yaml.cyaml.CParser):
        # The composer calls these three for every node. No path resolver is registered, and the tree reads
        # an untagged node's tag "" as none, so a builtin that ignores its arguments stands in for each
        # (``format`` of an empty text returns it, and builds no string): three Python calls a node fewer.
        descend_resolver = ascend_resolver = resolve = "".format

    return Loader


def _composer(prefer_fast: bool):
    if prefer_fast:
        try:
            yaml = lazy.pyyaml()  # PyYAML with libyaml: C composer keeping marks

            if getattr(yaml, "__with_libyaml__", False):
                loader = _fast_loader(yaml)
                return lambda text: yaml.compose_all(text, Loader=loader), yaml.YAMLError
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


def parse_text(path: str, text: str, limits: dict[str, int] | None = None, fast: bool = True,
               comments: bool = True, reader: FileReader | None = None) -> LoadedFile:
    """Parse ``text`` into located documents. Never raises: problems land in ``error``/``problems``.
    ``reader``: the file is of a format that is not YAML, whose comments ``reader.scan_comments`` finds
    (the adapter registry's ``file_format(path)``, looked up by the caller)."""
    if reader is not None:  # a format that is not YAML (a shell script): its comments, no documents
        return LoadedFile(path, text, [], reader.scan_comments(text) if comments else {})
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    loaded = LoadedFile(path, text, [], {})
    if fast and ("\x85" in text or "\u2028" in text or "\u2029" in text):
        fast = False  # libyaml reads these as line breaks (YAML 1.1): lines would not match the file
    compose_all, yaml_error = composer(fast)
    hash_spans: list[tuple[int, int]] = []
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, limits["max-depth"] * 8 + 1000))
    try:
        bounded = not may_exceed(text, limits)
        if not bounded:
            check_events(text, limits, fast)
        # no alias (no ``*``) and too shallow for any limit: the tree is checked while it is built
        plain = bounded and fast and "*" not in text
        index = 0
        for node in compose_all(text):
            root, problems = document_tree(node, limits, hash_spans, plain) if node is not None else (None, [])
            line = node.start_mark.line + 1 if node is not None else 1
            loaded.documents.append(Document(index, root, line, problems))
            index += 1
    except Exception as exc:
        loaded.error = failure(path, text, exc, yaml_error, limits)
    finally:
        sys.setrecursionlimit(old_limit)
    if comments:
        loaded.comments = scan_comments(text, sorted(hash_spans))
        for message, line, column in unread_long_comments(loaded.comments):
            _report(loaded, message, line, column)
    return loaded


def unmarked(path: str) -> LoadedFile:
    """A file read only in case it holds a served model, which holds none: no text kept, no document, no
    error (most files of a repository)."""
    return LoadedFile(path, "", [], {}, serving=False)


def check_text(path: str, text: str, limits: dict[str, int] | None = None, fast: bool = True) -> LoadedFile:
    """A file that cannot hold a served model, checked without building it: libyaml's parser runs over
    the text in C without making a Python object per event (PyYAML's ``CParser.raw_parse``), so a syntax
    error, and a size, depth or document-count limit, is still the file's error; duplicate keys, undefined
    aliases and alias expansion, which only a composed tree shows, are checked where a tree is built.
    Without libyaml (or for text libyaml would break into other lines) the file is composed as before."""
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    raw_parse = _raw_parser() if fast and not ("\x85" in text or "\u2028" in text or "\u2029" in text) else None
    if raw_parse is None:
        loaded = parse_text(path, text, limits, fast, comments=False)
        loaded.text, loaded.serving = "", False
        for document in loaded.documents:
            document.root = None
        return loaded
    loaded = unmarked(path)
    try:
        if may_exceed(text, limits):
            check_events(text, limits, fast)
        raw_parse(text)
    except Exception as exc:
        loaded.error = failure(path, text, exc, lazy.pyyaml().YAMLError, limits)
    return loaded


@lru_cache(maxsize=1)
def _raw_parser() -> Callable[[str], object] | None:
    """libyaml's parser over a text, events made in C only; found once a process (it is asked for every file
    without a serving marker: 3,837 of a GitOps tree's 5,000)."""
    try:
        lazy.pyyaml()
        from yaml._yaml import CParser  # PyYAML's libyaml binding
    except ImportError:
        return None
    return lambda text: CParser(text).raw_parse()


def _report(loaded: LoadedFile, message: str, line: int, column: int) -> None:
    """A problem at ``line``, filed with the document that holds it (the file's, if none does)."""
    holders = [d for d in loaded.documents if d.line <= line] or loaded.documents[:1]
    if holders:
        holders[-1].problems.append((message, line, column))
    elif loaded.error is None:
        loaded.error = YamlError(message, line, column)


class _ParseCache:
    """Files parsed during one lint run, by absolute path and parse settings, so that a file an
    adapter reads again (a kustomization reads itself and its bases) is parsed once. Only files with
    their trees are kept, at most ``MAX_FILES``, the oldest dropped first; a file whose trees the run
    releases is dropped with them (``forget``)."""

    MAX_FILES = 256
    # The bytes of files read before their turn (``read_ahead``), kept for it: a kustomization's resources
    # that follow it in the run's order. A file outside the run is never taken: the budget bounds them.
    AHEAD_BYTES = 8 * 2**20

    def __init__(self) -> None:
        self.files: dict[tuple, LoadedFile] = {}
        self.ahead: dict[str, bytes] = {}  # absolute path -> its bytes
        self.ahead_bytes = 0
        self.read: set[str] = set()  # the files whose turn came (read by ``read_text``): none kept for them

    def key(self, file: Path | str, rel: str, limits: dict[str, int], fast: bool) -> tuple:
        return _absolute(file), rel, tuple(sorted(limits.items())), fast

    def keep(self, key: tuple, loaded: LoadedFile) -> None:
        if len(self.files) >= self.MAX_FILES:
            del self.files[next(iter(self.files))]
        self.files[key] = loaded

    def forget(self, loaded: LoadedFile) -> None:
        for key in [key for key, kept in self.files.items() if kept is loaded]:
            del self.files[key]


_parse_cache: _ParseCache | None = None


@contextmanager
def parse_cache() -> Iterator[None]:
    """Within this block ``load_file`` returns a file already parsed with the same settings (one run)."""
    global _parse_cache
    outer, _parse_cache = _parse_cache, _ParseCache()
    try:
        yield
    finally:
        _parse_cache = outer


# The bytes of the run's files read already (the whole-run cache's key reads them first), by path: a look
# before a file's turn takes them from here (``read_already``).
_read_already: list[dict[str, bytes]] = []


@contextmanager
def read_already(read: dict[str, bytes]) -> Iterator[None]:
    """Within this block ``read_ahead`` finds the bytes of the files in ``read`` there (left for the run)."""
    _read_already.append(read)
    try:
        yield
    finally:
        _read_already.remove(read)


# Where the digests of the bytes ``read_text`` reads go, each with the hash that makes them (``digests_of_reads``).
_digests: list[tuple[dict[Path | str, bytes], Callable[[bytes], bytes]]] = []


@contextmanager
def digests_of_reads(found: dict[Path | str, bytes], hashed: Callable[[bytes], bytes]) -> Iterator[None]:
    """Within this block ``read_text`` puts ``hashed(data)`` of the bytes of each file it reads (not of bytes
    its caller read) in ``found``, by the path it was given: a first run works out its whole-run key from the
    bytes a worker forked within the block read (``cache.RunCache``; ``taken_digest``, ``digest_read``)."""
    entry = (found, hashed)
    _digests.append(entry)
    try:
        yield
    finally:
        _digests.remove(entry)


def taken_digest(file: Path | str) -> bytes | None:
    """The digest of ``file``'s bytes read within the innermost ``digests_of_reads`` block, taken from it (a
    worker sends it with the file's stage); None outside one, or when ``file`` was not read."""
    return _digests[-1][0].pop(file, None) if _digests else None


def digest_read(file: Path | str, value: bytes) -> None:
    """``value``, the digest of ``file``'s bytes a worker read (``taken_digest``), put as if read here."""
    for found, _ in _digests:
        found[file] = value


def read_ahead(path: str) -> bytes | None:
    """The bytes of the file at ``path`` (absolute, normalised), read before its turn in the run (the
    kustomize renderer asks whether the files a kustomization draws from may serve): kept for its turn
    (``read_text``), so that it is read once; None when it cannot be read."""
    for read in _read_already:
        data = read.get(path)
        if data is not None:
            return data
    cache = _parse_cache
    if cache is not None and path in cache.ahead:
        return cache.ahead[path]
    try:
        data = _read_bytes(path, 2**62)
    except OSError:
        return None
    assert isinstance(data, bytes)
    if cache is not None and path not in cache.read and cache.ahead_bytes + len(data) <= cache.AHEAD_BYTES:
        cache.ahead[path] = data
        cache.ahead_bytes += len(data)
    return data


def _taken(file: Path | str) -> bytes | None:
    """The bytes ``read_ahead`` kept for ``file``, handed over once (its turn has come)."""
    cache = _parse_cache
    if cache is None:
        return None
    path = _absolute(file)
    cache.read.add(path)
    data = cache.ahead.pop(path, None) if cache.ahead else None
    if data is not None:
        cache.ahead_bytes -= len(data)
    return data


def forget_parsed(loaded: LoadedFile) -> None:
    """``loaded`` is about to lose its trees: ``load_file`` must parse it again."""
    if _parse_cache is not None:
        _parse_cache.forget(loaded)


def load_file(root: Path | str, file: Path | str, limits: dict[str, int] | None = None, fast: bool = True,
              wanted: Callable[[str, str], bool] | None = None, readers: Readers | None = None,
              text: str | None = None, rel: str | None = None) -> LoadedFile:
    """Read and parse one file. ``wanted(rel, text)`` may decide from the text, before it is parsed,
    that the file cannot hold a served model: it is then parsed only for errors (``serving`` False,
    no comments). ``readers(rel)``: the reader of a format that is not YAML (see ``parse_text``), None
    for YAML; without it every file is YAML. Inside ``parse_cache()`` a file already parsed with its
    tree is not parsed again. ``text``: the file's text, already read (``read_text``); ``rel``: ``file``
    relative to ``root``, when the caller has it (``relpath`` costs two normalisations a file)."""
    limits = {**DEFAULT_LIMITS, **(limits or {})}
    rel = rel if rel is not None else relpath(root, file)
    reader = readers(rel) if readers is not None else None
    cache = _parse_cache
    # files are dropped from the cache as soon as their turn is done: most runs look it up empty, and a key
    # (the path normalised, the limits sorted) is made only when there is something to find
    key = None
    if cache is not None and cache.files:
        key = cache.key(file, rel, limits, fast)
        kept = cache.files.get(key)
        if kept is not None and (wanted is None or wanted(rel, kept.text)):
            return kept
    if text is None:
        read = read_text(rel, file, limits, reader)
        if isinstance(read, LoadedFile):
            return read
        text = read
    serving = wanted is None or wanted(rel, text)
    if not serving:  # checked for errors only: one read, the marker test, libyaml's parser in C
        return check_text(rel, text, limits, fast) if reader is None else unmarked(rel)
    loaded = parse_text(rel, text, limits, fast, reader=reader)
    if cache is not None:
        cache.keep(key if key is not None else cache.key(file, rel, limits, fast), loaded)
    return loaded


def read_text(rel: str, file: Path | str, limits: dict[str, int], reader: FileReader | None,
              data: bytes | None = None) -> str | LoadedFile:
    """The text of ``file`` (``rel`` in the repository), or the file that could not be read (too large,
    not text, gone): its error is a CFG000 for YAML, nothing for a format read only in case it starts
    an engine. ``data``: its bytes, read already in this run (the whole-run cache's key holds them)."""
    try:
        kept = _taken(file)  # also when given: its turn has come, nothing more is kept for it
        if data is None:  # read here (or ahead of its turn): its digest, where a first run's key wants it
            data = kept or _read_bytes(file, limits["max-file-bytes"])
            for found, hashed in _digests if not isinstance(data, int) else ():
                found[file] = hashed(data)
        if isinstance(data, int):
            return _unread(rel, YamlError(
                f"file is {data:,} bytes, over the {limits['max-file-bytes']:,}-byte limit (limit max-file-bytes)"),
                reader)
        if len(data) > limits["max-file-bytes"]:
            return _unread(rel, YamlError(
                f"file is {len(data):,} bytes, over the {limits['max-file-bytes']:,}-byte limit (limit max-file-bytes)"),
                reader)
        return decode(data)
    except YamlError as exc:
        return _unread(rel, exc, reader)
    except OSError as exc:
        return _unread(rel, YamlError(f"cannot read file: {exc.strerror or exc}"), reader)


def _read_bytes(file: Path | str, limit: int) -> bytes | int:
    """The bytes of ``file``, or its size when it is larger than ``limit`` (not read): one open, one
    ``fstat`` and the reads, with no ``Path`` object in between (5,000 files of a GitOps tree: half
    the cost of ``stat`` and ``read_bytes``)."""
    handle = os.open(file, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        status = os.fstat(handle)
        size = status.st_size
        if size > limit:
            return size
        chunks = []
        asked = size + 1 if size else 65536
        while True:  # until the end: a file may have grown since fstat
            chunk = os.read(handle, asked)
            if chunk:
                chunks.append(chunk)
            if not chunk or len(chunk) < asked and stat.S_ISREG(status.st_mode):  # a regular file's short read: its end
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(handle)


def _unread(rel: str, error: YamlError, reader: FileReader | None) -> LoadedFile:
    """A file that cannot be read: a CFG000 for YAML; a script or Python file (read only in case it
    starts an engine) is skipped without a finding."""
    if reader is not None:
        return unmarked(rel)
    return LoadedFile(rel, "", [], {}, error)


def load_data(path: Path) -> Any:
    """The first document of a small YAML file the user wrote for cfgcheck (a configuration, a
    proposal), as plain Python; YamlError with ``path:line: message`` when it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise YamlError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return data_of(raw, str(path))


def data_of(raw: bytes, where: str) -> Any:
    """``load_data`` for bytes read elsewhere (a blob of a git commit); ``where`` names it in errors."""
    try:
        text = decode(raw)
    except YamlError as exc:
        raise YamlError(f"{where}:{exc.line}: {exc.message}") from None
    loaded = parse_text(where, text)
    if loaded.error is not None:
        raise YamlError(f"{where}:{loaded.error.line}: {loaded.error.message}")
    if not loaded.documents or loaded.documents[0].root is None:
        return None
    return loaded.documents[0].root.to_python()


def relpath(root: Path | str, file: Path | str) -> str:
    """``file`` relative to ``root`` with ``/``; by string when it is plainly inside (no system call)."""
    absolute, base = _absolute(file), _absolute(root)
    if absolute.startswith(base + os.sep):
        return absolute[len(base) + 1:].replace(os.sep, "/")
    try:
        return Path(file).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(file).as_posix()


def _absolute(path: Path | str) -> str:
    """``os.path.abspath``; an absolute POSIX path only normalised (twice for every file of a run)."""
    text = os.fspath(path)
    return os.path.normpath(text) if os.sep == "/" and text[:1] == "/" else os.path.abspath(text)


def scalar_text_location(loaded_path: str, node: YNode) -> Location:
    """The location of a scalar's content: inside the quotes for a quoted single-line scalar."""
    return node.location(loaded_path, inside_quotes=True)


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
