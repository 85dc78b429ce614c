"""The file stages' entries of the content cache, packed: each process of a run keeps the entries it makes
and writes them as one file, a pack, when its stage of the files ends (docs/CACHE.md, "Packs").

One file per entry cost a file created for each served file a run kept: on the bench machine's ext4, a
created file costs 0.25-1.2 ms of kernel time, and a two-process run of the dense corpus (721 entries) spent
0.6-0.9 s of its 2.5-3.1 s in them, more than its worker staged; one pack of the same 6 MB is written in
10 ms. A pack is written to a temporary file and renamed into place, and never changed after: runs at the
same time never read half of one. A run reads the index of every pack of its scope at its first lookup
and an entry where the index says it is; more than ``MAX_PACKS`` packs are merged into the run's own when
it writes it, the newest entries first, up to ``MAX_PACK_BYTES``, and the packs it merged are removed.

A pack is bytes someone else may have written (a CI cache restored from another job): an index that does
not fit its file is no pack, and an entry is still read with the restricted unpickler (``pool.loads``).

Layout: ``MAGIC``; the count of entries (4 bytes, little-endian); per entry its key's 32 bytes, its offset
in the file (8 bytes) and its length (4 bytes); then the entries.
"""

from __future__ import annotations

import os
import struct
import time

from .cache import ContentCache, write_whole

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Iterator

MAGIC = b"cfgcheck pack 1\n"
_COUNT = struct.Struct("<I")
_RECORD = struct.Struct("<32sQI")  # a key's digest, the entry's offset in the pack and its length
SUFFIX = ".pack"
# Packs a scope may hold before a run merges them into the one it writes: a lookup reads every pack's
# index (a pre-commit hook run on one file writes a pack of one entry each time)
MAX_PACKS = 16
# The most a merged pack keeps, the newest entries first: a merge reads and writes it whole (the bench's
# dense corpus keeps ~16 MB when every served file it may keep is kept)
MAX_PACK_BYTES = 32 * 2**20


def read_index(handle: int) -> dict[str, tuple[int, int]] | None:
    """The entries of the pack open as ``handle``: key (hex) -> (offset, length); None for bytes that are
    not a pack, or whose index does not fit the file."""
    size = os.fstat(handle).st_size
    head = _read_at(handle, 0, len(MAGIC) + _COUNT.size)
    if len(head) < len(MAGIC) + _COUNT.size or not head.startswith(MAGIC):
        return None
    (count,) = _COUNT.unpack_from(head, len(MAGIC))
    start = len(head)
    if start + count * _RECORD.size > size:
        return None
    records = _read_at(handle, start, count * _RECORD.size)
    if len(records) != count * _RECORD.size:
        return None
    index: dict[str, tuple[int, int]] = {}
    for key, offset, length in _RECORD.iter_unpack(records):
        if offset < start or offset + length > size:
            return None
        index[key.hex()] = (offset, length)
    return index


def packed(entries: dict[str, bytes]) -> bytes:
    """``entries`` (key in hex -> entry) as a pack's bytes."""
    offset = len(MAGIC) + _COUNT.size + len(entries) * _RECORD.size
    records = []
    for key, data in entries.items():
        records.append(_RECORD.pack(bytes.fromhex(key), offset, len(data)))
        offset += len(data)
    return b"".join([MAGIC, _COUNT.pack(len(entries)), *records, *entries.values()])


def _read_at(handle: int, offset: int, length: int) -> bytes:
    if hasattr(os, "pread"):  # a forked worker may share the handle: no seek of a shared file position
        return os.pread(handle, length, offset)
    os.lseek(handle, offset, os.SEEK_SET)  # Windows: no fork, the handle is this process's own
    return os.read(handle, length)


class PackedCache(ContentCache):
    """The file stages' entries of one scope (``ContentCache``'s ``stage`` folder), in packs under its
    ``packs`` folder: ``get`` reads them, ``put`` keeps an entry in memory, ``close`` writes what this
    process kept as one pack."""

    def __init__(self, settings: dict, fast: bool, where=None) -> None:
        super().__init__(settings, fast, where, "stage")
        self.kept: dict[str, bytes] = {}  # this process's entries, not written yet
        self._index: dict[str, tuple[int, int, int]] | None = None  # key -> (handle, offset, length)
        self._packs: list[tuple[str, int]] = []  # the packs read (name, handle), oldest first

    def get(self, key: str) -> bytes | None:
        index = self._index if self._index is not None else self._read_packs()
        found = index.get(key)
        if found is None:
            return None
        handle, offset, length = found
        try:
            data = _read_at(handle, offset, length)
        except OSError:
            return None
        return data if len(data) == length else None

    def put(self, key: str, data: bytes) -> None:
        self.kept[key] = data

    def _read_packs(self) -> dict[str, tuple[int, int, int]]:
        """The index of every pack of the scope (a later pack's entry for a key wins: the same bytes)."""
        self._index = {}
        folder = self.root / "packs"
        try:
            names = sorted(name for name in os.listdir(folder) if name.endswith(SUFFIX))
        except OSError:
            return self._index
        for name in names:
            try:
                handle = os.open(folder / name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            except OSError:
                continue  # merged away by another run since it was listed
            try:
                index = read_index(handle)
            except OSError:
                index = None
            if index is None:
                os.close(handle)
                continue
            self._packs.append((name, handle))
            self._index.update((key, (handle, offset, length)) for key, (offset, length) in index.items())
        return self._index

    def close(self, merge: bool = True) -> None:
        """Write the entries this process kept as one pack (``merge``: with those of the packs read when they
        are more than ``MAX_PACKS``, which are then removed), and close the packs read. A folder that cannot be
        written is left alone."""
        entries = self.kept
        merged = merge and len(self._packs) > MAX_PACKS
        if merged:
            entries = dict(self._merged())
        try:
            if entries:
                self._write(packed(entries))
            if merged:
                for name, _ in self._packs:
                    _remove(self.root / "packs" / name)
        except OSError:
            pass
        finally:
            for _, handle in self._packs:
                os.close(handle)
            self.kept, self._packs, self._index = {}, [], None

    def _merged(self) -> Iterator[tuple[str, bytes]]:
        """This process's entries, then those of the packs read, the newest first, up to ``MAX_PACK_BYTES``."""
        seen, size = set(self.kept), sum(map(len, self.kept.values()))
        yield from self.kept.items()
        by_pack: dict[int, list[tuple[str, int, int]]] = {}
        for key, (handle, offset, length) in (self._index or {}).items():
            by_pack.setdefault(handle, []).append((key, offset, length))
        for _, handle in reversed(self._packs):
            for key, offset, length in by_pack.get(handle, ()):
                if key in seen or size + length > MAX_PACK_BYTES:
                    continue
                try:
                    data = _read_at(handle, offset, length)
                except OSError:
                    continue
                if len(data) == length:
                    seen.add(key)
                    size += length
                    yield key, data

    def _write(self, data: bytes) -> None:
        folder = self.root / "packs"
        # named by time first: ``_read_packs`` reads them oldest first; the process and a count keep two
        # runs' names apart
        name = f"{time.time_ns():020d}-{os.getpid()}-{len(data)}{SUFFIX}"
        write_whole(folder / name, data)


def _remove(path) -> None:
    try:
        os.unlink(path)
    except OSError:  # merged by another run at the same time, or open elsewhere (Windows)
        pass
