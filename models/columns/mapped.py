"""Columns read from a memory-mapped file: the window's side of a playthrough that a
child process opened (issue 37).

A ``MappedFile`` is one file the child wrote, mapped read-only. Its columns look like
the lists and dicts they replace, so the models read them unchanged:

- ``IntColumn``: a list of Python ints held as one int64 array of the file (journal
  positions, ticks, creation positions).
- ``RecordColumn``: a list of any values (journal entries, versions, dialogue records,
  FactIds) held as pickled chunks of ``CHUNK`` items; an item is decoded when read,
  with a chunk read once kept while the next reads fall in it (a few chunks kept).
- ``SortedColumn`` and ``MappedSortedDict``: a ``SortedList`` and a ``SortedDict``,
  read in key order with their ``irange`` and bisections; the first key of each
  chunk (written by the child) makes a bisection one chunk's.
- ``MappedDict``: a dict held as a column of keys and a column of values, in the
  dict's own order, with a ``KeyIndex`` (the keys' hashes, sorted, and their rows:
  int64 arrays the child wrote) for lookups. Writes go to an overlay (what a reader
  keeps beside it, e.g. a memo), never to the file.

Reading a file costs the window no work that grows with the save: no key is read
until a lookup or a walk asks for it (issue 37: at 10 000 000 events, making the
key tables took the loading thread 2.6 s of the window's interpreter, and the GUI
thread stalled for ~300 ms while it did).

Pickled (a value handed on to another process), a column is the list or dict it
replaces, its items read out: the mapping stays behind.

Nothing here holds a lock: a chunk decoded by two threads at once is decoded twice
and each gets an equal value. The file is unmapped and deleted when the last column
of it goes (on Windows, where a mapped file cannot be deleted, when it is unmapped).
"""

from __future__ import annotations

import io
import mmap
from bisect import bisect_left, bisect_right
import os
import pickle
import weakref
import zlib
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path

import numpy as np
from sortedcontainers import SortedDict, SortedList

#: Items pickled together in a ``RecordColumn`` chunk: decoding one takes ~20-60 µs.
CHUNK = 128
#: Items pickled together in the values of a dict column: they are read one at a time,
#: by key, in no order (a table's rows), so a smaller chunk decodes less for each.
VALUE_CHUNK = 16
#: Chunks of ``CHUNK`` items a ``RecordColumn`` keeps decoded (the latest ones read;
#: as many items in smaller chunks): a step reads a few items of many chunks (an
#: NPC's interactions, the facts a view lists).
KEPT_CHUNKS = 32

_U64 = 1 << 64
_I64 = 1 << 63


def key_hash(key) -> int | None:
    """A hash of a dict key that is the same in every process (``hash`` of a str is
    not: it is seeded per interpreter), as an int64: an int key itself (wrapped into
    int64), a str key the CRC-32 of its UTF-8 bytes. None for any other kind of key.
    Equal keys give equal hashes; unequal keys may too (``KeyIndex`` compares keys)."""
    kind = type(key)
    if kind is str:
        return zlib.crc32(key.encode("utf-8", "surrogatepass"))
    if kind is int or kind is bool:
        return (key + _I64) % _U64 - _I64
    return None


class KeyIndex:
    """Where each key of a mapped dict is, without reading the keys: ``hashes`` is the
    ``key_hash`` of every key, ascending, and ``rows[k]`` the row of the key whose hash
    is ``hashes[k]`` (int64 arrays of the file, made by the child that wrote it). A
    lookup is a binary search in C and one key compared (a chunk decoded, or kept)."""

    __slots__ = ("hashes", "rows")

    def __init__(self, hashes: np.ndarray, rows: np.ndarray) -> None:
        self.hashes = hashes
        self.rows = rows

    @staticmethod
    def arrays_of(keys: list) -> tuple[np.ndarray, np.ndarray] | None:
        """(hashes ascending, rows) of ``keys`` for a ``KeyIndex``; None when a key has no
        ``key_hash`` (the reader then indexes the keys itself)."""
        hashes = list(map(key_hash, keys))
        if None in hashes:
            return None
        array = np.array(hashes, dtype=np.int64)
        rows = np.argsort(array, kind="stable")
        return array[rows], rows

    def row_of(self, key, h: int, keys: Sequence) -> int | None:
        """The row of ``key``, whose ``key_hash`` is ``h``, in ``keys`` (the dict's key
        column), or None."""
        hashes = self.hashes
        at = int(np.searchsorted(hashes, h))
        while at < len(hashes) and hashes[at] == h:
            row = int(self.rows[at])
            if keys[row] == key:
                return row
            at += 1
        return None


class MappedFile:
    """One file written by a child process of the window (``app/workers/engine.py``),
    mapped read-only.

    Args:
        source: the file's path, which is deleted once unmapped (it is the child's
            scratch file, never a save or content file); or a file descriptor open on
            it (a file another process mapped and passed on, see ``handle``), which
            this object closes.
        keep_open: keep a descriptor of the file open while it is mapped, for
            ``handle`` (POSIX; elsewhere the file keeps its name while mapped).

    Raises:
        OSError: when the file cannot be opened or mapped.
    """

    def __init__(self, source: Path | int, keep_open: bool = False) -> None:
        named = not isinstance(source, int)
        self.path = Path(source) if named else None
        handle = open(self.path, "rb") if named else os.fdopen(source, "rb")
        with handle:
            size = os.fstat(handle.fileno()).st_size
            self.buffer = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ) if size else b""
            self.fd = os.dup(handle.fileno()) if keep_open and os.name == "posix" else None
        if named and os.name == "posix":  # the mapping outlives the name; nothing is left behind on a crash
            _remove(self.path)
        self.resolve = None  # what ``loads`` makes a chunk's own columns with (the reader sets it)
        self._finalizer = weakref.finalize(self, _close, self.buffer, self.path, self.fd)

    def handle(self) -> int | Path:
        """What another process opens this file by, while it is mapped here: the kept
        descriptor on POSIX (the file has no name any more), else the path (Windows
        deletes no mapped file). Raises ValueError when neither is there (a POSIX file
        mapped without ``keep_open``)."""
        if self.fd is not None:
            return self.fd
        if os.name == "posix" or self.path is None:
            raise ValueError("the mapped file was not kept open for another process")
        return self.path

    def loads(self, data) -> object:
        """Unpickle ``data`` (a chunk of this file) whose columns ``resolve`` makes (set
        by the reader of the file: ``transfer.load``)."""
        return _ChunkUnpickler(io.BytesIO(data), self.resolve).load()

    def view(self, offset: int, length: int) -> memoryview:
        """The bytes at ``offset`` (bytes) of the file, without a copy."""
        return memoryview(self.buffer)[offset: offset + length]

    def array(self, offset: int, count: int, dtype) -> np.ndarray:
        """``count`` items of ``dtype`` at ``offset`` (bytes), read-only, without a copy."""
        return np.frombuffer(self.buffer, dtype=dtype, count=count, offset=offset) if count else np.zeros(0, dtype)


class _ChunkUnpickler(pickle.Unpickler):
    def __init__(self, data, resolve) -> None:
        super().__init__(data)
        self.persistent_load = resolve


def _remove(path: Path) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _close(buffer, path: Path | None, fd: int | None) -> None:
    if fd is not None:
        os.close(fd)
    if isinstance(buffer, mmap.mmap):
        try:
            buffer.close()
        except BufferError:  # a view still exported: the mapping goes with the process
            return
    if path is not None:
        _remove(path)


class IntColumn(Sequence):
    """A read-only list of ints held as an int64 array (``array``); items and
    iteration give Python ints, a slice gives a list. Equal to a list of the same ints."""

    __slots__ = ("array", "_file")

    def __init__(self, array: np.ndarray, file: MappedFile | None = None) -> None:
        self.array = array
        self._file = file  # keeps the mapping alive as long as the column

    def __len__(self) -> int:
        return len(self.array)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.array if dtype is None or dtype == self.array.dtype else self.array.astype(dtype)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self.array[key].tolist()
        return int(self.array[key])

    def __iter__(self) -> Iterator[int]:
        return iter(self.array.tolist())

    def __reversed__(self) -> Iterator[int]:
        return iter(self.array[::-1].tolist())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and list(self) == list(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"IntColumn({len(self)} ints)"

    def __reduce__(self):
        return list, (self.array.tolist(),)


class _ReadOnlyList(Sequence):
    """What the read-only lists of this module share: equal to a list of equal items,
    and pickled (handed on to another process) as that list, its items read out."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, (str, bytes)) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __reduce__(self):
        return list, (list(self),)


class LabelColumn(_ReadOnlyList):
    """A read-only list of a few distinct strings (or None) held as one byte an item:
    ``codes`` (a uint8 array of the file) index ``names``. Reading an item decodes
    nothing; equal to a list of the same values."""

    __slots__ = ("codes", "names")

    def __init__(self, codes: np.ndarray, names: tuple) -> None:
        self.codes = codes
        self.names = names

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return list(map(self.names.__getitem__, self.codes[key].tolist()))
        return self.names[self.codes[key]]

    def __iter__(self) -> Iterator:
        return map(self.names.__getitem__, self.codes.tolist())

    def __reversed__(self) -> Iterator:
        return map(self.names.__getitem__, self.codes[::-1].tolist())

    def __repr__(self) -> str:
        return f"LabelColumn({len(self)} items, {len(self.names)} labels)"


class RecordColumn(_ReadOnlyList):
    """A read-only list of values held as pickled chunks of ``size`` items (``CHUNK``
    unless the writer chose fewer: a dict's values, read one by key, are in chunks of
    ``VALUE_CHUNK``) of a ``MappedFile``: ``starts[k]`` is where chunk k begins (bytes),
    ``starts[-1]`` its end. Equal to a list of equal values."""

    __slots__ = ("_file", "_starts", "_length", "_kept", "_size", "_keep", "_nested", "__weakref__")

    def __init__(self, file: MappedFile, starts: np.ndarray, length: int, size: int = CHUNK, nested: bool = False) -> None:
        self._file = file
        self._starts = starts
        self._length = length
        self._kept: dict[int, list] = {}
        self._size = size
        self._keep = max(KEPT_CHUNKS, KEPT_CHUNKS * CHUNK // size)  # about as many items kept
        self._nested = nested  # its chunks refer to columns of their own (``MappedFile.loads``)

    def _chunk(self, k: int) -> list:
        kept = self._kept
        chunk = kept.get(k)
        if chunk is None:
            start, end = int(self._starts[k]), int(self._starts[k + 1])
            view = self._file.view(start, end - start)
            chunk = self._file.loads(view) if self._nested else pickle.loads(view)
            if len(kept) >= self._keep:
                try:
                    del kept[next(iter(kept))]
                except (KeyError, StopIteration, RuntimeError):  # another thread evicted it
                    pass
            kept[k] = chunk
        return chunk

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            return self._slice(start, stop) if step == 1 else [self[i] for i in range(start, stop, step)]
        i = key.__index__()
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise IndexError("column index out of range")
        size = self._size
        return self._chunk(i // size)[i % size]

    def _slice(self, start: int, stop: int) -> list:
        out: list = []
        while start < stop:
            k, at = divmod(start, self._size)
            piece = self._chunk(k)[at: at + stop - start]
            out += piece
            start += len(piece)
        return out

    def __iter__(self) -> Iterator:
        for k in range(-(-self._length // self._size)):
            yield from self._chunk(k)

    def __reversed__(self) -> Iterator:
        for k in range(-(-self._length // self._size) - 1, -1, -1):
            yield from reversed(self._chunk(k))

    def __repr__(self) -> str:
        return f"RecordColumn({self._length} items)"


class MappedDict(MutableMapping):
    """A dict held as a ``RecordColumn`` of keys and one of values, in the dict's
    order. A lookup by key reads the ``KeyIndex`` the writer made (O(log N) in C, one
    key compared); without one (keys that are not all str or int), it makes the
    key -> row table on first use (O(N) once). A lookup by a key of another kind
    (e.g. a float) also makes that table, so it finds what a dict would.
    ``overlay``: items set since (a reader's own), which win over the file's; a key
    of the file cannot be deleted."""

    __slots__ = ("keys_column", "values_column", "_rows", "_keys", "_index", "overlay")

    def __init__(self, keys: RecordColumn, values: RecordColumn, index: KeyIndex | None = None) -> None:
        self.keys_column = keys
        self.values_column = values
        self._rows: dict | None = None
        self._keys: list | None = None
        self._index = index
        self.overlay: dict = {}

    @property
    def indexed(self) -> bool:
        """True when lookups need no O(N) table: the writer's ``KeyIndex``, or a table made."""
        return self._index is not None or self._rows is not None

    def index_keys(self) -> None:
        """Make the key list and the key -> row table now (O(N)): what lookups and walks
        over the keys read from then on."""
        if self._rows is None:
            keys = list(self.keys_column)
            self._rows = {k: i for i, k in enumerate(keys)}
            self._keys = keys

    def _row_of(self, key):
        if self._rows is None:
            h = key_hash(key) if self._index is not None else None
            if h is not None:
                return self._index.row_of(key, h, self.keys_column)
            self.index_keys()
        return self._rows.get(key)

    def __getitem__(self, key):
        if self.overlay and key in self.overlay:
            return self.overlay[key]
        row = self._row_of(key)
        if row is None:
            raise KeyError(key)
        return self.values_column[row]

    def __contains__(self, key) -> bool:
        return key in self.overlay or self._row_of(key) is not None

    def __setitem__(self, key, value) -> None:
        self.overlay[key] = value

    def __delitem__(self, key) -> None:
        del self.overlay[key]

    def __len__(self) -> int:
        extra = sum(1 for key in self.overlay if self._row_of(key) is None) if self.overlay else 0
        return len(self.keys_column) + extra

    def __iter__(self) -> Iterator:
        yield from self._keys if self._keys is not None else self.keys_column
        if self.overlay:
            yield from (key for key in self.overlay if self._row_of(key) is None)

    def items(self):
        return _Items(self)

    def values(self):
        return _Values(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Mapping) and len(other) == len(self) and all(k in other and other[k] == v for k, v in self.items())

    __hash__ = None

    def __repr__(self) -> str:
        return f"MappedDict({len(self)} items)"

    def __reduce__(self):
        return dict, (list(self.items()),)


class _Items:
    """``MappedDict.items()``: pairs read from both columns in one pass."""

    __slots__ = ("_mapping",)

    def __init__(self, mapping: MappedDict) -> None:
        self._mapping = mapping

    def __len__(self) -> int:
        return len(self._mapping)

    def __iter__(self):
        mapping = self._mapping
        if not mapping.overlay:
            keys = mapping._keys if mapping._keys is not None else mapping.keys_column
            yield from zip(keys, mapping.values_column)
            return
        for key in mapping:
            yield key, mapping[key]

    def __contains__(self, item) -> bool:
        key, value = item
        return key in self._mapping and self._mapping[key] == value


class _Values(_Items):
    """``MappedDict.values()``."""

    def __iter__(self):
        for _, value in _Items.__iter__(self):
            yield value

    def __contains__(self, value) -> bool:
        return any(v == value for v in self)



class PatchedColumn(_ReadOnlyList):
    """A list read as another one the reader holds (``base``: a column or a list) with
    some items replaced (``overrides``: index -> value): a what-if's journal, which is
    the recorded one but for the edited entries (``transfer.Patched``). Read-only;
    equal to a list of the same items."""

    __slots__ = ("base", "overrides")

    def __init__(self, base: Sequence, overrides: dict) -> None:
        self.base = base
        self.overrides = overrides

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self.base))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            items = list(self.base[start:stop])
            for i, value in self.overrides.items():
                if start <= i < stop:
                    items[i - start] = value
            return items
        i = key.__index__()
        if i < 0:
            i += len(self.base)
        value = self.overrides.get(i, _NONE)
        return self.base[i] if value is _NONE else value

    def __iter__(self) -> Iterator:
        overrides = self.overrides
        for i, value in enumerate(self.base):
            yield overrides[i] if i in overrides else value

    def __reversed__(self) -> Iterator:
        for i in range(len(self.base) - 1, -1, -1):
            yield self[i]

    def __repr__(self) -> str:
        return f"PatchedColumn({len(self)} items, {len(self.overrides)} replaced)"


_NONE = object()


class SortedColumn(RecordColumn):
    """A ``RecordColumn`` of keys in ascending order, read like the ``SortedList`` it was
    (``irange``, ``bisect_left``, ``bisect_right``, ``in``).

    ``fences`` (the first key of each chunk, written by the child) make a bisection a
    bisection of the fences in C plus one of a single chunk: one chunk decoded, or
    kept, whatever N. Without fences (an older writer), ``index_keys`` keeps the keys
    as one list (O(N)) and bisections read it."""

    __slots__ = ("_keys", "_fences")

    def __init__(self, file: MappedFile, starts: np.ndarray, length: int, fences: tuple | None = None, size: int = CHUNK) -> None:
        super().__init__(file, starts, length, size)
        self._keys: list | None = None
        self._fences = fences

    @property
    def indexed(self) -> bool:
        """True when a bisection reads one chunk at most (fences), or a list of the keys."""
        return self._fences is not None or self._keys is not None

    def index_keys(self) -> None:
        """Keep the keys as one list now (O(N))."""
        if self._keys is None:
            self._keys = list(RecordColumn.__iter__(self))

    def __iter__(self) -> Iterator:
        return iter(self._keys) if self._keys is not None else RecordColumn.__iter__(self)

    def _bisect(self, value, side) -> int:
        if self._keys is not None:
            return side(self._keys, value)
        fences = self._fences
        if fences is None:
            return side(self, value)  # O(log N) items read, each in its chunk
        # Every key of the chunks from ``k`` on is past ``value`` on this side, and
        # the first key of chunk ``k - 1`` is not: the answer is in chunk ``k - 1``.
        k = side(fences, value)
        if k == 0:
            return 0
        return (k - 1) * self._size + side(self._chunk(k - 1), value)

    def bisect_left(self, value) -> int:
        return self._bisect(value, bisect_left)

    def bisect_right(self, value) -> int:
        return self._bisect(value, bisect_right)

    def __contains__(self, value) -> bool:
        k = self.bisect_left(value)
        return k < len(self) and self[k] == value

    def __getitem__(self, key):
        if self._keys is not None and not isinstance(key, slice):
            return self._keys[key]
        return RecordColumn.__getitem__(self, key)

    def irange(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False) -> Iterator:
        start = 0 if minimum is None else (self.bisect_left if inclusive[0] else self.bisect_right)(minimum)
        stop = len(self) if maximum is None else (self.bisect_right if inclusive[1] else self.bisect_left)(maximum)
        indices = range(stop - 1, start - 1, -1) if reverse else range(start, stop)
        return (self[i] for i in indices)

    def __reduce__(self):
        return SortedList, (list(self),)


class MappedSortedDict(MappedDict):
    """A ``MappedDict`` whose keys are in ascending order, read like the ``SortedDict``
    it was (``irange``, ``bisect_left``, ``bisect_right``). Read-only: a write would
    break the order."""

    __slots__ = ()

    def __setitem__(self, key, value) -> None:
        raise TypeError("a mapped sorted dict is read-only")

    def __reduce__(self):
        return SortedDict, (list(self.items()),)

    def index_keys(self) -> None:
        super().index_keys()
        self.keys_column._keys = self._keys  # the same list: its bisections read it in C

    def irange(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False) -> Iterator:
        return self.keys_column.irange(minimum, maximum, inclusive, reverse)

    def bisect_left(self, key) -> int:
        return self.keys_column.bisect_left(key)

    def bisect_right(self, key) -> int:
        return self.keys_column.bisect_right(key)
