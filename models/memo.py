"""Values made from a timeline index on first use and kept with it: typed, named caches.

Each kind of kept value is one module-level ``Memo``, declared by the module that
makes the value, with its name, its key and value types and a docstring. The index
holds every memo's table (``TimelineIndex.memos``, a ``Memos``), so what is kept lives
and goes with the index.

Threads. Once replayed, an index is read at the same time by the GUI thread (steps,
views), the loader's worker (the views' ``prepare``), the window's jobs (prompt
builds, explanations) and the checks. Memos are filled by compute-then-publish, with
no lock: a thread that finds no value computes one, then publishes it with one
``dict.setdefault``, which is atomic (also on a free-threaded build, where a dict
locks itself). Every value is a pure function of the finished index and its key, so a
thread that raced another computed an equal value; it returns the one published
first, and every reader of a key gets the same object. A lock held while computing
would make the GUI thread wait behind a worker's long fill; a lost race costs only
the duplicated work.

The one exception is a value made while the replay still records (``replace``): the
replay remakes its NPC tables when they are stale, on its one thread, before anything
else sees the index.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


#: (declaring module, name) -> the Memo of that name.
_NAMED: dict[tuple[str, str], "Memo"] = {}


def memo_named(module: str, name: str) -> "Memo":
    """The ``Memo`` called ``name`` that ``module`` declares (imported if need be).

    Raises:
        KeyError: when it declares none."""
    importlib.import_module(module)
    return _NAMED[(module, name)]


class Memos:
    """One index's memo tables: ``tables[memo]`` is that memo's ``{key: value}``.

    Made empty with the index; only ``Memo`` methods fill it."""

    __slots__ = ("tables",)

    def __init__(self) -> None:
        self.tables: dict[Memo, dict] = {}

    def __len__(self) -> int:
        return sum(len(table) for table in self.tables.values())

    def merge(self, tables: dict) -> None:
        """Keep the values of ``tables`` (``{Memo: {key: value}}``, made for an equal
        index elsewhere: the open's child process) where none is kept yet."""
        for memo, table in tables.items():
            kept = self.tables.setdefault(memo, {})
            for key, value in table.items():
                kept.setdefault(key, value)


class Memo(Generic[K, V]):
    """One kind of value kept on an index, by key (see the module doc for threads).

    Args:
        name: what the value is, for messages and ``repr``.
        doc: what it holds, its units and who reads it.

    A value of None is never kept (``get`` returns None for "not made yet")."""

    __slots__ = ("name", "doc", "_module")

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.doc = doc
        self._module = sys._getframe(1).f_globals.get("__name__", "")
        _NAMED.setdefault((self._module, name), self)

    def __reduce__(self):
        # By name: a memo table handed to another process (models/columns) keeps its
        # key, the one module-level Memo of that name.
        return (memo_named, (self._module, self.name))

    def __repr__(self) -> str:
        return f"Memo({self.name!r})"

    def _table(self, index) -> dict[K, V]:
        tables = index.memos.tables
        table = tables.get(self)
        return table if table is not None else tables.setdefault(self, {})

    def get(self, index, key: K) -> V | None:
        """The value kept for ``key`` on ``index``, or None when none is made yet."""
        table = index.memos.tables.get(self)
        return table.get(key) if table is not None else None

    def publish(self, index, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` unless another thread kept one first; returns the
        value kept (the first published)."""
        return self._table(index).setdefault(key, value)

    def replace(self, index, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` in place of a stale one (only while the replay
        records, on its thread: see the module doc); returns it."""
        self._table(index)[key] = value
        return value

    def get_or_make(self, index, key: K, make: Callable[[], V]) -> V:
        """The value kept for ``key``, made by ``make()`` and published when there is none."""
        found = self.get(index, key)
        return found if found is not None else self.publish(index, key, make())
