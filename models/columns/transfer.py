"""Hand a value from the process that made it to another one, through one file, with
its large lists and dicts left in the file as columns (issue 37).

``write(path, value)`` pickles ``value``; every list, dict, ``SortedList``, ``SortedDict``
numeric numpy array or ``array.array`` of at least ``MIN_ITEMS`` items it reaches, at any
depth, is written as a column instead (a list of ints as an int64 array, any other
list as pickled chunks, a dict as a column of keys and one of values, an array as its
bytes, mapped back as a read-only numpy array) and the pickle holds only a reference
to it: reading the file copies nothing that grows with the save. ``read(path)`` maps the file and
unpickles the rest: what it gives reads like the value written, its large parts
decoded a chunk at a time as they are read (``models/columns/mapped.py``).

A list or dict reached twice is written once and read back as one column. Only what
this package's child process wrote is read: the file is its scratch file in a private
folder, never input from outside.

Shared objects: a value made from one the reader holds already (the what-if's result,
whose side A is the window's playthrough) names those parts instead of holding them:
``write(..., shared={id(obj): key})`` writes ``obj`` as the reference ``key`` and
``read(..., shared={key: obj})`` puts the reader's own object there. A list that is
one the reader holds but for a few items is written as ``Patched(key, {index: item})``
and read as a ``PatchedColumn`` over the reader's list (a what-if's journal).

File layout: the columns, then the pickle of the rest, then that pickle's offset as
8 little-endian bytes.
"""

from __future__ import annotations

import io
import pickle
import struct
import weakref
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from narrative_debugger.models.columns.mapped import CHUNK, VALUE_CHUNK, IntColumn, KeyIndex, LabelColumn, MappedDict, MappedFile, MappedSortedDict, PatchedColumn, RecordColumn, SortedColumn
from sortedcontainers import SortedDict, SortedList

#: Lists and dicts with fewer items stay in the pickle.
MIN_ITEMS = 2048
#: The containers written as columns (``SortedList`` and ``SortedDict`` keep their order).
_COLUMN_KINDS = (list, dict, SortedList, SortedDict)
_INT64 = np.dtype("<i8")
_JUST_INT = {int}
#: A list of these with at most ``MAX_LABELS`` distinct values (a journal's event kinds)
#: is written as one byte an item and the distinct values (``LabelColumn``).
_LABEL_TYPES = {str, type(None)}
MAX_LABELS = 256


@dataclass(frozen=True)
class Patched:
    """A value of ``write``'s ``shared``: the list is the reader's ``shared[key]`` with
    the items of ``overrides`` (index -> item) replaced; read as a ``PatchedColumn``."""

    key: object
    overrides: dict


class _ColumnPickler(pickle.Pickler):
    """Pickles into ``body``; large lists and dicts go to ``out`` as columns."""

    def __init__(self, body, out, shared: dict | None = None, parent: "_ColumnPickler | None" = None) -> None:
        super().__init__(body, protocol=5)
        self._out = out
        if parent is None:
            self._refs: dict[int, tuple] = {}
            self._held: list = []  # what was referred to by id stays alive while writing
            self._referred = [0]  # references written, by this pickler and those of its chunks
            self._shared = shared or {}
        else:  # a chunk's: the file's columns are the same ones; nothing is shared there
            self._refs, self._held, self._referred, self._shared = parent._refs, parent._held, parent._referred, {}

    def persistent_id(self, obj):
        if self._shared:
            key = self._shared.get(id(obj))
            if type(key) is Patched:
                return ("patched", key.key, key.overrides)
            if key is not None:
                return ("shared", key)
        kind = type(obj)
        if (kind is np.ndarray and obj.size >= MIN_ITEMS and obj.dtype.kind in "biuf") or (
                kind is array and len(obj) >= MIN_ITEMS and obj.typecode not in "uw"):
            write = self._array
        elif kind in _COLUMN_KINDS and len(obj) >= MIN_ITEMS:
            write = self._reference
        else:
            return None
        ref = self._refs.get(id(obj))
        if ref is None:
            ref = self._refs[id(obj)] = write(obj)
            self._held.append(obj)
        self._referred[0] += 1
        return ref

    def _reference(self, obj) -> tuple:
        kind = type(obj)
        if kind is list:
            return self._column(obj)
        if kind is SortedList:
            return ("sorted", self._sorted(list(obj)))
        keys = list(obj)
        values = self._records(list(obj.values()), VALUE_CHUNK, nested=True)
        if kind is SortedDict:
            return ("sorteddict", self._sorted(keys), values, self._key_index(keys))
        return ("dict", self._records(keys), values, self._key_index(keys))

    def _array(self, values) -> tuple:
        """A numeric numpy array, or an ``array.array``, as its bytes: read back as a
        numpy array mapped from the file (read-only, no copy)."""
        offset = self._align()
        if type(values) is array:
            self._out.write(values.tobytes())
            return ("ndarray", offset, np.dtype(values.typecode).str, (len(values),))
        self._out.write(np.ascontiguousarray(values).tobytes())
        return ("ndarray", offset, values.dtype.str, values.shape)

    def _sorted(self, keys: list) -> tuple:
        """Records of sorted keys, with the first key of each chunk (the fences)."""
        return (*self._records(keys), tuple(keys[::CHUNK]))

    def _key_index(self, keys: list) -> tuple | None:
        """Where the hashes and rows of a ``KeyIndex`` of ``keys`` are; None without one."""
        arrays = KeyIndex.arrays_of(keys)
        if arrays is None:
            return None
        hashes, rows = arrays
        at = self._align()
        self._out.write(hashes.tobytes())
        self._out.write(rows.astype(_INT64).tobytes())
        return ("keyindex", at, len(keys))

    def _align(self) -> int:
        out = self._out
        pad = -out.tell() % 8
        if pad:
            out.write(b"\0" * pad)
        return out.tell()

    def _column(self, values: list) -> tuple:
        types = set(map(type, values))  # in C
        if types == _JUST_INT:  # bool and float are not ints here
            try:
                array = np.array(values, dtype=_INT64)
            except OverflowError:  # a u64 past the int64 range: kept as records
                pass
            else:
                offset = self._align()
                self._out.write(array.tobytes())
                return ("ints", offset, len(values))
        if types <= _LABEL_TYPES:
            names = dict.fromkeys(values)  # in order of first use
            if len(names) <= MAX_LABELS:
                code_of = {name: k for k, name in enumerate(names)}
                codes = np.fromiter(map(code_of.__getitem__, values), dtype=np.uint8, count=len(values))
                offset = self._align()
                self._out.write(codes.tobytes())
                return ("labels", offset, len(values), tuple(names))
        return self._records(values)

    def _records(self, values: list, size: int = CHUNK, nested: bool = False) -> tuple:
        """Chunks of ``size`` items. ``nested``: a large list, dict or array held by an
        item's attribute becomes a column of its own too (a fact's long version history:
        read when that fact is, not with every fact of its chunk). A chunk with such an
        item costs a Python call per object pickled, so only a dict's values (read one
        by one) ask for it, and only the chunks that need it pay."""
        out = self._out
        starts = []
        referred = self._referred[0]
        for at in range(0, len(values), size):
            if nested and any(map(_holds_large, values[at: at + size])):
                body = io.BytesIO()
                _ColumnPickler(body, out, parent=self).dump(values[at: at + size])  # its columns first
                starts.append(out.tell())
                out.write(body.getbuffer())
            else:
                starts.append(out.tell())
                pickle.dump(values[at: at + size], out, protocol=5)
        starts.append(out.tell())
        offset = self._align()
        out.write(np.array(starts, dtype=_INT64).tobytes())
        return ("records", offset, len(starts), len(values), size, self._referred[0] != referred)


_SIZED = (list, dict, SortedList, SortedDict, array, np.ndarray)


def _holds_large(item) -> bool:
    """Whether an attribute of ``item`` (its slots or ``__dict__``) is a list, dict or
    array of at least ``MIN_ITEMS`` items."""
    names = getattr(type(item), "__slots__", ())
    held = [getattr(item, name, None) for name in names] if names else list(getattr(item, "__dict__", {}).values())
    return any(isinstance(value, _SIZED) and len(value) >= MIN_ITEMS for value in held)


def write(path: Path, value, shared: dict | None = None) -> None:
    """Write ``value`` to ``path`` as described in the module doc.

    Args:
        shared: ``id(obj) -> key`` of objects the reader has already: each is written as
            its key (any picklable value but None), for ``read``'s ``shared``; or ``->
            Patched(key, overrides)`` for a list that is the reader's but for a few items.
            The objects must live until ``write`` returns (their ids are theirs alone).

    Raises:
        OSError: when the file cannot be written.
        pickle.PicklingError: when a part of ``value`` cannot be pickled (a bug).
    """
    with open(path, "wb") as out:
        body = io.BytesIO()
        _ColumnPickler(body, out, shared).dump(value)
        offset = out.tell()
        out.write(body.getbuffer())
        out.write(struct.pack("<q", offset))


class _ColumnUnpickler(pickle.Unpickler):
    def __init__(self, body, file: MappedFile, shared: dict | None = None, plain: bool = False) -> None:
        super().__init__(body)
        self._file = file
        self._made: dict[tuple, object] = {}
        self._shared = shared or {}
        self._plain = plain

    def made(self) -> list:
        """The columns made so far."""
        return list(self._made.values())

    def persistent_load(self, ref):
        if ref[0] in ("shared", "patched"):
            try:
                base = self._shared[ref[1]]
            except KeyError:
                raise pickle.UnpicklingError(f"the shared object {ref[1]!r} was not given") from None
            return base if ref[0] == "shared" else PatchedColumn(base, ref[2])
        made = self._made.get(ref)
        if made is None:
            made = self._made[ref] = _plain(self._make(ref)) if self._plain else self._make(ref)
        return made

    def _make(self, ref):
        kind = ref[0]
        if kind == "ints":
            _, offset, count = ref
            return IntColumn(self._file.array(offset, count, _INT64), self._file)
        if kind == "labels":
            _, offset, count, names = ref
            return LabelColumn(self._file.array(offset, count, np.uint8), names)
        if kind == "ndarray":
            _, offset, dtype, shape = ref
            dtype = np.dtype(dtype)
            return self._file.array(offset, int(np.prod(shape)), dtype).reshape(shape)
        if kind == "records":
            _, offset, starts, length, size, nested = ref
            return RecordColumn(self._file, self._file.array(offset, starts, _INT64), length, size, nested)
        if kind == "dict":
            return MappedDict(self._make(ref[1]), self._make(ref[2]), self._key_index(ref[3]))
        if kind == "sorteddict":
            return MappedSortedDict(self._sorted(ref[1]), self._make(ref[2]), self._key_index(ref[3]))
        if kind == "sorted":
            return self._sorted(ref[1])
        raise pickle.UnpicklingError(f"unknown column reference {kind!r}")

    def _sorted(self, ref) -> SortedColumn:
        _, offset, starts, length, size, _nested, fences = ref
        return SortedColumn(self._file, self._file.array(offset, starts, _INT64), length, fences, size)

    def _key_index(self, ref) -> KeyIndex | None:
        if ref is None:
            return None
        _, offset, count = ref
        return KeyIndex(self._file.array(offset, count, _INT64), self._file.array(offset + 8 * count, count, _INT64))


def _resolver(file: MappedFile, plain: bool):
    """What a chunk that holds columns of its own reads them with (``MappedFile.loads``):
    a column is made anew each time its chunk is decoded (a view of the mapping, no
    copy), and the file is held weakly, so no cycle keeps the mapping alive."""
    ref_to_file = weakref.ref(file)

    def resolve(ref):
        return _ColumnUnpickler(io.BytesIO(b""), ref_to_file(), None, plain).persistent_load(ref)

    return resolve


def _plain(column):
    """The list or dict a column stands for, every item decoded (``read``'s ``plain``)."""
    if isinstance(column, np.ndarray):
        return column.copy()
    if isinstance(column, LabelColumn):
        return list(column)
    if isinstance(column, IntColumn):
        return column.array.tolist()
    if isinstance(column, SortedColumn):
        return SortedList(RecordColumn.__iter__(column))
    if isinstance(column, MappedSortedDict):
        return SortedDict(zip(column.keys_column, column.values_column))
    if isinstance(column, MappedDict):
        return dict(zip(column.keys_column, column.values_column))
    return list(column)


def read(path: Path, shared: dict | None = None, plain: bool = False):
    """The value ``write`` wrote to ``path``, its columns mapped from the file (which is
    deleted once nothing reads it: see ``MappedFile``). Nothing that grows with the
    file is read: lookups read the ``KeyIndex`` and fences the writer made. Only a
    dict or sorted list whose keys are not all str or int is indexed here
    (``index_keys``, O(N)).

    Args:
        shared: ``key -> object`` for the keys ``write`` was given in its ``shared``.
        plain: give plain lists and dicts (and ``SortedList``, ``SortedDict``), every item
            decoded now, instead of columns: for a reader that reads most of them, many
            times over (a what-if's child reads side A so), not for the window.

    Raises:
        OSError: when the file cannot be read; pickle.UnpicklingError when it is not
        one ``write`` made, or names a shared key ``shared`` lacks.
    """
    return load(path, shared, plain=plain)[0]


def load(source: Path | int, shared: dict | None = None, keep_open: bool = False, plain: bool = False) -> tuple[object, MappedFile]:
    """``read``, with the ``MappedFile`` the value's columns read from.

    Args:
        source: the file's path, or a descriptor open on it (``MappedFile``).
        shared, plain: as ``read``'s.
        keep_open: keep the file open while it is mapped, so that another process can
            read it too (``MappedFile.handle``).

    Raises:
        As ``read``.
    """
    file = MappedFile(source, keep_open=keep_open)
    file.resolve = _resolver(file, plain)
    size = len(file.buffer)
    if size < 8:
        raise pickle.UnpicklingError(f"{file.path or 'the file'}: not a columns file")
    (offset,) = struct.unpack("<q", file.view(size - 8, 8))
    body = file.view(offset, size - 8 - offset)
    unpickler = _ColumnUnpickler(io.BytesIO(body), file, shared, plain)
    value = unpickler.load()
    for made in unpickler.made():
        if isinstance(made, (MappedDict, SortedColumn)) and not made.indexed:
            made.index_keys()  # here, off the GUI thread: its first lookup would be O(N)
    return value, file
