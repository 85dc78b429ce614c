"""The content cache of `cfgcheck lint`: one file's stage (parsed, indexed, its served models built) kept
for the next run over the same text, in the user's cache folder (docs/CACHE.md).

What is kept is only what follows from the file's own text: ``stages.py`` stores a file that shares no
index with other files (``registry.shares_index``: no ConfigMap, no reference to one, no kustomization,
chart or script), whose adapting read nothing beyond it (``paths.reads_beyond``: no ``.env``, no
``Chart.yaml`` beside it, no ``model_configs``), in a run over the working tree. Rules always run: the
cache holds no finding, so a cached file's findings are the rules' answer on the same served models.

An entry's name is the digest (BLAKE2b) of the file's path and text; it lives in a folder named by the digest of
everything else its content depends on: cfgcheck's version and the size and time of every file of the
installed package (an edited checkout is another cache), the run's configuration and the parser. An
entry is written to a temporary file beside it and renamed into place (``os.replace`` is atomic), so
runs at the same time never read half an entry; one that cannot be read or written is no entry.

A whole run's key needs every file's bytes: ``StatIndex`` keeps, per repository, each file's digest with what
``os.stat`` said of it, so that an unchanged file is not read again (Git's index does the same, ``racy-git.txt``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import stat
import time
from pathlib import Path

from . import __version__, pool
from .notes import note, run as notes_run
from .paths import noting
from .yamlio import digests_of_reads, read_already, unmarked

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable

PACKAGE = Path(__file__).resolve().parent
# The whole-run key's reads handed to the run, so that it reads no file twice: the GitOps tree's 5.3 MB and
# the dense corpus's 4 MB fit (kept or not, the dense corpus's peak RSS is the same within 0.5 MiB: each
# file's bytes go at its turn, before the served models peak); a larger repository reads the rest again.
READ_BYTES = 8 * 2**20
# Pickling a whole run costs memory and time in proportion to its served models (2,123 models: a 21 MB
# entry, +100 MiB peak and +1.5 s on the first run, more than the run itself needs); such runs keep none.
RUN_MODELS = 500
ABSENT = "absent"  # the fingerprint of a path with nothing at it
# A file changed within one tick of its file system's clock after it was looked at keeps its times (Git's
# "racy" entries, Documentation/technical/racy-git.txt): a file whose times are less than this before the run
# began is read again next time (FAT's clock ticks every 2 s; ext4's and APFS's in nanoseconds).
RACY_NS = 2 * 10**9
_STAMP: list[str] = []  # the package's stamp, taken once a process
_WRITES = itertools.count()  # this process's temporary entry names (tempfile would cost 6 ms of start-up)


def folder() -> Path:
    """``$XDG_CACHE_HOME/cfgcheck``, else ``~/.cache/cfgcheck`` (``%LOCALAPPDATA%`` on Windows)."""
    base = os.environ.get("XDG_CACHE_HOME") or (os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    return Path(base) / "cfgcheck" if base else Path.home() / ".cache" / "cfgcheck"


def _code_stamp() -> str:
    """cfgcheck's version and the size and modification time of each file of the package, and of its rules
    (a checkout keeps them in ``rules/``, outside ``src/cfgcheck``: pyproject.toml's package-dir): a changed
    adapter, rule, table or catalog starts a new cache (about 330 stat calls, 2-3 ms; once a process: ``_STAMP``).
    An installed distribution's files change only with its ``RECORD`` (pip writes it at every install, and
    the hash of each file in it): its stamp is that file's (one stat)."""
    if _STAMP:
        return _STAMP[0]
    record = _installed_record()
    if record is not None:
        _STAMP.append(f"{__version__}\n{record}")
        return _STAMP[0]
    from . import rules  # its package only (rules/__init__.py holds a docstring): where the rules are

    stamps = [__version__]
    folders = [str(PACKAGE), *(folder for folder in rules.__path__ if not folder.startswith(str(PACKAGE) + os.sep))]
    for place in folders:
        for top, dirs, files in os.walk(place):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                status = os.stat(os.path.join(top, name))
                stamps.append(f"{os.path.relpath(os.path.join(top, name), place)}:{status.st_size}:{status.st_mtime_ns}")
    _STAMP.append("\n".join(stamps))
    return _STAMP[0]


def _installed_record() -> str | None:
    """The path, size, modification time and inode of the ``RECORD`` of the distribution installed beside
    the package (site-packages' ``cfgcheck-<version>.dist-info``); None for a checkout or an editable
    install, whose files change without a new install."""
    info = PACKAGE.parent / f"{PACKAGE.name}-{__version__}.dist-info"
    try:
        status = os.stat(info / "RECORD")
    except OSError:
        return None
    if _editable(info / "direct_url.json"):
        return None
    return f"RECORD {info}:{status.st_size}:{status.st_mtime_ns}:{status.st_ino}"


def _editable(direct_url: Path) -> bool:
    """Whether ``direct_url.json`` says the install is editable (PEP 610 ``dir_info.editable``; PEP 660)."""
    try:
        data = json.loads(direct_url.read_bytes())
    except FileNotFoundError:
        return False  # installed from an index: no direct URL
    except (OSError, ValueError):
        return True  # unreadable: stamped file by file
    info = data.get("dir_info") if isinstance(data, dict) else None
    return isinstance(info, dict) and bool(info.get("editable"))  # a VCS or archive install is not


def blake2b(data: bytes = b"") -> Any:
    """A BLAKE2b hash object (32-byte digests) of CPython's own ``_blake2`` module, not hashlib's, whose import
    loads OpenSSL's library (12 M instructions, 2% of a one-file lint of a served model, and 3 MB of the dense
    corpus's peak RSS). BLAKE2b (RFC 7693) is as collision resistant as SHA-256 and faster in software: the
    GitOps tree's 5,000 files (5.3 MB) hashed in 6.5 ms, against 17.9 ms with CPython's ``_sha256`` (72
    instructions a byte) and 5.1 ms with OpenSSL's SHA-256. The constructor is found once a process (an
    import statement in each call cost 1 us a file)."""
    if not _BLAKE2B:
        try:
            from _blake2 import blake2b as made  # built into CPython (Modules/_blake2), without OpenSSL
        except ImportError:
            from hashlib import blake2b as made
        _BLAKE2B.append(made)
    return _BLAKE2B[0](data, digest_size=32)


_BLAKE2B: list = []  # the constructor ``blake2b`` found


def _raw_digest(data: bytes) -> bytes:
    return blake2b(data).digest()


def digest(text: str | bytes) -> str:
    """The digest (BLAKE2b, 32 bytes) of a key (a file's path and text, a scope) or of a file's bytes, in hex."""
    return blake2b(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(path: str) -> str:
    """What is at ``path`` now: nothing, a folder (the digest of its names) or a file (of its bytes)."""
    kind, data, _ = _contents(path)
    return _said(kind, digest(data))


def _said(kind: str, hexdigest: str) -> str:
    """A fingerprint: what is at a path, with the digest of a file's bytes or a folder's names."""
    return f"{kind} {hexdigest}" if kind in ("folder", "file") else kind


def _contents(path: str) -> tuple[str, bytes, os.stat_result | None]:
    """What is at ``path``: ("file", its bytes), ("folder", its sorted names), or (what is there, b""), and
    what ``fstat`` said of it before it was read."""
    try:  # one open and one fstat tell a file from a folder (no pathlib, no buffered reader: 5,000 files a run)
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        # a link to nothing is there (named_files.absent)
        return ("link" if os.path.islink(path) else ABSENT), b"", None
    except OSError:
        return "unreadable", b"", None
    try:
        status = os.fstat(handle)
        if stat.S_ISDIR(status.st_mode):
            return "folder", "\0".join(sorted(os.listdir(path))).encode("utf-8", "surrogateescape"), status
        chunks = []
        asked = status.st_size + 1 if status.st_size else 65536
        # reads of the file's size (not of a fixed large buffer, which the allocator keeps: +1 MiB peak), to
        # its end: a regular file's short read is its end (no read more for it), another's an empty one
        while chunk := os.read(handle, asked):
            chunks.append(chunk)
            if len(chunk) < asked and stat.S_ISREG(status.st_mode):
                break
    except OSError:
        return "unreadable", b"", None
    finally:
        os.close(handle)
    return "file", chunks[0] if len(chunks) == 1 else b"".join(chunks), status


class ContentCache:
    """The entries of one configuration and build of cfgcheck: ``get`` and ``put`` by file path and text.
    Its folder is worked out when a file first asks for it."""

    def __init__(self, settings: dict, fast: bool, where: Path | None = None, kind: str = "stage") -> None:
        self.scope = json.dumps({"settings": settings, "fast": fast}, sort_keys=True, default=str)
        self.where, self.kind = where, kind
        self._root: Path | None = None

    @property
    def root(self) -> Path:
        """``stage/<scope>`` (``kind``: ``run`` for whole runs' entries) in the cache folder."""
        if self._root is None:
            self._root = (self.where or folder()) / self.kind / digest(f"{_code_stamp()}\n{self.scope}")[:32]
        return self._root

    def beside(self, kind: str) -> ContentCache:
        """The same scope's entries of another ``kind``."""
        other = ContentCache({}, False, self.where, kind)
        other.scope = self.scope
        return other

    @staticmethod
    def key(rel: str, text: str) -> str:
        return digest(f"{rel}\0{text}")

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key[2:]

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except OSError:
            return None

    def put(self, key: str, data: bytes) -> None:
        """Write the entry atomically; a cache that cannot be written is left alone (the run goes on)."""
        try:
            write_whole(self._path(key), data)
        except OSError:
            return


def write_whole(path: Path, data: bytes) -> None:
    """``data`` as the file ``path``, written to a temporary file beside it and renamed into place
    (``os.replace`` is atomic): a reader never sees half of it. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.parent / f".entry-{os.getpid()}-{next(_WRITES)}"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except OSError:
        os.unlink(temporary)
        raise


def _told(status: os.stat_result) -> str:
    """What ``stat`` says of a file that tells it changed, as an entry of ``StatIndex`` begins."""
    return f"{status.st_size} {status.st_mtime_ns} {status.st_ctime_ns} {status.st_ino} {status.st_dev} "


class StatIndex:
    """What a whole run's key read, for the next run: the digest of each file's bytes beside what ``stat``
    said of it: size, modification and change times, inode, device. A file ``stat`` still describes so is
    not read again, as Git's index spares ``git status`` reading unchanged files; one whose times are within
    ``RACY_NS`` of the run's start is not kept (it may change again within one clock tick and keep its
    times). Kept per repository and paths asked, as JSON (a restored CI cache is bytes someone else wrote:
    JSON builds no object but lists, strings and numbers).

    A folder a run looked at is told by its times instead of its names: adding, removing or renaming a
    name in a folder sets its modification and change times (POSIX ``open`` with O_CREAT, ``rename``,
    ``unlink``: "mark for update the last data modification and last file status change timestamps of
    the parent directory"; Git's untracked cache relies on the same), so equal times mean equal names."""

    def __init__(self, store: ContentCache, scope: str) -> None:
        self.store, self.key = store, digest(f"stat index\0{scope}")
        self.started = time.time_ns()
        data = store.get(self.key)
        try:
            kept = json.loads(data) if data else {}
        except ValueError:
            kept = {}
        self.kept: dict[str, str] = kept if isinstance(kept, dict) else {}
        # this run's entries, the next run's index: "SIZE MTIME CTIME INODE DEVICE DIGEST", one string a file
        # (5,000 of them a GitOps tree: a list of six objects each took three times the memory)
        self.looked: dict[str, str] = {}

    def contents(self, path: str, status: os.stat_result | None = None) -> tuple[str, str, bytes | None]:
        """What is at ``path`` (``_contents``'s kind), the digest of its bytes or names, and its bytes when it
        was read now (None when ``stat`` says it is unchanged); ``status``: what ``stat`` said of it already
        in this run (discovery's ``lstat`` of a file that is no link)."""
        entry = self.kept.get(path)
        if isinstance(entry, str):
            if status is None:
                try:
                    status = os.stat(path)
                except (OSError, ValueError):
                    status = None
            told = _told(status) if status is not None and stat.S_ISREG(status.st_mode) else None
            if told is not None and entry.startswith(told) and len(entry) == len(told) + 64:
                self.looked[path] = entry
                return "file", entry[len(told):], None
        kind, data, status = _contents(path)
        hexdigest = digest(data)
        if kind == "file" and status is not None and not self.racy(status):
            self.looked[path] = _told(status) + hexdigest
        return kind, hexdigest, data

    def fingerprint(self, path: str, status: os.stat_result | None = None) -> str:
        """``fingerprint(path)``, from the index where ``stat`` allows; a folder's by its times. ``status``: what
        ``lstat`` said of ``path`` just now (``paths.Noted.look``), or None."""
        if path not in self.kept:
            try:
                status = status or os.lstat(path)
            except FileNotFoundError:  # not even a link: one system call, not an open and a look for a link
                return ABSENT  # (most paths a run looked for: 6,549 of 7,803 on the GitOps tree)
            except (OSError, ValueError):
                status = None
            if status is not None and stat.S_ISDIR(status.st_mode) and not self.racy(status):
                return f"folder at {status.st_mtime_ns} {status.st_ctime_ns} {status.st_ino} {status.st_dev}"
        kind, hexdigest, _ = self.contents(path, status if status is not None and stat.S_ISREG(status.st_mode) else None)
        return _said(kind, hexdigest)

    def racy(self, status: os.stat_result) -> bool:
        return max(status.st_mtime_ns, status.st_ctime_ns) >= self.started - RACY_NS

    def save(self) -> None:
        """Keep this run's entries for the next run, when they are not those it found."""
        if self.looked != self.kept:
            self.store.put(self.key, json.dumps(self.looked, separators=(",", ":")).encode("ascii"))


class RunCache:
    """One whole run's result, for a run of the same files (docs/CACHE.md, "Whole runs"): its key is the
    digest of ``parts`` (what the run was asked, by whom and with what: the caller's) and of the path and
    bytes of each of ``files``, the files it lints; its entry holds, beside the result, what the run found
    in every other file or folder it read or looked for (``paths.read_beyond``), checked again before the
    entry is used, and the notes it said, said again. A run that read something it cannot name (a
    renderer's tool, ``model_configs``) keeps no entry. Entries live beside the file stages', in ``store``.

    ``ahead``: on a first run (most files not in the stat index), what starts the run's workers before the
    files are read (``lint.lint``), within the block that notes their reads beyond their files and the one
    that keeps the digest of each file's bytes a worker reads (``yamlio.digests_of_reads``); it answers which
    files (by position) the run stages itself: only those are read and hashed here (their bytes kept for the
    run), a worker's files by the worker as it stages them, and the key is worked out after the run. Each
    file is read once, and the key holds the bytes the run linted. ``files``: how many, and the absolute name of
    the file at a position (``discover.Inputs.name``: no Path made; the run's stages read them by these names).
    ``stats``: the absolute, normalised name of files (by position) and what ``stat`` said of them already."""

    def __init__(self, store: ContentCache, root: str, parts: list[str], files: tuple[int, Callable[[int], str]],
                 ahead: Callable[[], Callable[[int], bool]] | None = None,
                 stats: dict[int, tuple[str, os.stat_result]] | None = None) -> None:
        self.store, self.root, self.parts = store, root, parts
        # beside the runs' entries, in a folder of its own: ``stat/<scope>``
        self.stats = StatIndex(store.beside("stat"), "\0".join([root, *parts[:2]]))
        self.read: dict[str, bytes] = {}  # the files' bytes for the run by name, when it runs (at most READ_BYTES)
        here = os.getcwd()  # once: ``os.path.abspath`` asks the system for it for each relative path
        # each file by its name, absolute and normalised as ``paths.Noted`` looks paths up: its position, and
        # what ``stat`` said of it (discovery's name and lstat: no Path made a string, 14 -> 3 ms for 5,000 files
        # before the fork)
        paths: dict[str, tuple[int, os.stat_result | None]] = {}
        stats = stats or {}
        count, file_at = files
        for position in range(count):
            name, status = stats.get(position) or (os.path.normpath(os.path.join(here, file_at(position))), None)
            paths.setdefault(name, (position, status))
        self.known = set(paths)
        self.order = list(paths)  # the files' names, as the key takes them
        self.said: dict[str, str] = {}  # each file's part of the key, by name
        # a first run's files that a worker reads and hashes as it stages them: the file, and what ``stat`` told
        # of it before it was read ("" within the racy window: not indexed; None: nothing told), not the stat
        # result (discovery's, 4 MiB for 5,000 files, freed once this returns)
        self.pending: dict[str, tuple[str, str | None]] = {}
        self.digests: dict[str, bytes] | None = None  # a first run's: those of its workers' reads
        runs = None  # which files the run stages itself, when its workers started ahead
        if ahead is not None and len(self.stats.kept) < len(paths) // 2:  # most files to read: a first run
            self.digests = {}
            with noting(self.root, self.known, self.stats.fingerprint, ABSENT), \
                    digests_of_reads(self.digests, _raw_digest):  # the workers fork within both
                runs = ahead()
        kept = 0
        for path, (position, status) in paths.items():
            if runs is not None and not runs(position):
                self.pending[path] = (file_at(position),
                                      None if status is None else "" if self.stats.racy(status) else _told(status))
                continue
            kind, hexdigest, data = self.stats.contents(path, status)
            self.said[path] = f"{path}\0{kind}\0{hexdigest}\n"
            if data is not None and kind == "file" and kept + len(data) <= READ_BYTES:
                self.read[file_at(position)] = data
                kept += len(data)
        self.key = self._key() if runs is None else None

    def _key(self) -> str:
        """The key: ``parts``, then each file's name, kind and digest, in the order of the files."""
        key = blake2b("\n".join(["run 3", *self.parts, ""]).encode("utf-8", "surrogatepass"))
        key.update("".join(self.said[path] for path in self.order).encode("utf-8", "surrogateescape"))
        return key.hexdigest()

    def _key_after(self, digests: dict[str, bytes]) -> str:
        """A first run's key, once its workers read their files: a file a worker read as a regular file of
        discovery's goes in the stat index with what discovery's ``lstat`` told of it before it was read (a
        change since is a change next time); any other (gone, too large to read, a link) is looked at now."""
        for path, (file, told) in self.pending.items():
            found = digests.get(file)
            if found is None or told is None:
                kind, hexdigest, _ = self.stats.contents(path)
            else:
                kind, hexdigest = "file", found.hex()
                if told:
                    self.stats.looked[path] = told + hexdigest
            self.said[path] = f"{path}\0{kind}\0{hexdigest}\n"
        return self._key()

    def run(self, lint: Callable[[], Any]) -> Any:
        """The kept result, its notes said again; else ``lint()``'s, kept for the next run."""
        kept = self._get() if self.key is not None else None
        if kept is not None:
            self.read.clear()
            self.stats.save()  # a run kept: the next one reads its files' digests from the index
            said, result = kept
            for message in said:
                note(message)
            return result
        digests = self.digests
        with notes_run() as channel, noting(self.root, self.known, self.stats.fingerprint, ABSENT) as noted, \
                read_already(self.read), \
                digests_of_reads(digests, _raw_digest) if digests is not None else contextlib.nullcontext():
            before = len(channel.said)
            result = lint()
        if not noted.unknown and len(getattr(result, "models", ())) <= RUN_MODELS:
            if self.key is None:
                self.key = self._key_after(digests or {})
            self._put(noted.found, channel.said[before:], result)
            self.stats.save()  # no entry kept, no index: the next run reads every file all the same
        return result

    def _get(self) -> tuple[list[str], Any] | None:
        data = self.store.get(self.key)
        if data is None:
            return None
        try:
            found, said, result = pool.loads(data, lambda _name: {}, restricted=True)
            if not self._unchanged(found):
                return None
            if hasattr(result, "files"):
                result.files = [unmarked(loaded) if isinstance(loaded, str) else loaded for loaded in result.files]
        except Exception:  # bytes written by another build or by someone else: no entry
            return None
        return said, result

    def _unchanged(self, found: dict[str, str]) -> bool:
        """Whether every path the run read or looked for beyond its files holds what it held. A name a
        folder lacked is lacking still when the folder's fingerprint is the same (its names, or its times,
        which adding a name sets): the GitOps tree's run looked for 6,549 such names in 1,254 folders."""
        same: set[str] = set()
        for path, was in found.items():
            if was == ABSENT:
                continue
            if self.stats.fingerprint(path) != was:
                return False
            if was.startswith("folder "):
                same.add(path)
        return all(self.stats.fingerprint(path) == ABSENT for path, was in found.items()
                   if was == ABSENT and os.path.dirname(path) not in same)

    def _put(self, found: dict[str, str], said: list[str], result: Any) -> None:
        # what served models derived once per run (their ``cache``) is derived again: it may hold functions
        memos = [(model, model.cache) for model in getattr(result, "models", ())]
        files = getattr(result, "files", None)
        try:
            for model, _ in memos:
                model.cache = {}
            if files is not None:  # a file without a served model kept as its path (3,837 of the tree's 5,000)
                result.files = [loaded.path if loaded.unmarked() else loaded for loaded in files]
            # slotted records as class and values (``pool.dumps``): the second run unpickles a third as long
            data = pool.dumps((found, said, result), names=False)
        except Exception:  # an object of the result that does not pickle: no entry, the run is the same
            return
        finally:
            for model, memo in memos:
                model.cache = memo
            if files is not None:
                result.files = files
        self.store.put(self.key, data)
