"""Where B's journal (what if) differs from A's (as recorded), issue 38.

``changed_span``: B's positions ``[from, to)`` that differ; ``Shift``: the index on
each side of an entry the edit left alone; ``journal_origins``: which recorded entry
each of B's entries is (in place, moved or copied), or ``Added`` for one a patch
operation put there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from narrative_debugger.models.save.savefile import Save


def changed_span(a: Save, b: Save) -> tuple[int, int]:
    """B's journal positions ``[from, to)`` that differ from A's: after the common
    prefix and before the common suffix (an insertion shifts no entry after it)."""
    ja, jb = a.journal, b.journal
    if ja is jb:
        return len(jb), len(jb)
    na, nb = len(ja), len(jb)
    n = min(na, nb)

    def same(i: int, j: int, k: int) -> bool:  # A's entries i.. and B's j.., k of them (slices compare in C)
        return ja.data[i:i + k] == jb.data[j:j + k] and ja.ticks[i:i + k] == jb.ticks[j:j + k] and ja.kinds[i:i + k] == jb.kinds[j:j + k]

    lo = 0
    while lo < n:
        k = min(_SPAN_CHUNK, n - lo)
        if not same(lo, lo, k):
            while same(lo, lo, 1):
                lo += 1
            break
        lo += k
    if lo == na == nb:
        return nb, nb
    hi = 0
    while hi < n - lo:
        k = min(_SPAN_CHUNK, n - lo - hi)
        if not same(na - hi - k, nb - hi - k, k):
            while hi < n - lo and same(na - 1 - hi, nb - 1 - hi, 1):
                hi += 1
            break
        hi += k
    return lo, max(lo, nb - hi)


_SPAN_CHUNK = 4096


@dataclass(frozen=True)
class Shift:
    """Where an entry the edit left alone sits in each journal: A's (``a_len`` entries)
    and B's (``b_len``), which differ only at B's positions ``[changed_from, changed_to)``
    (``changed_span``); an insertion or a removal moves every entry after it."""

    a_len: int
    b_len: int
    changed_from: int
    changed_to: int

    def to_a(self, i: int) -> int | None:
        """A's index of B's entry ``i``; None for an entry the edit changed (or added)."""
        if i < self.changed_from:
            return i
        return i - (self.b_len - self.a_len) if i >= self.changed_to else None

    def to_b(self, i: int) -> int | None:
        """B's index of A's entry ``i``; None for an entry the edit changed (or removed)."""
        if i < self.changed_from:
            return i
        return i + (self.b_len - self.a_len) if i >= self.a_len - (self.b_len - self.changed_to) else None


@dataclass(frozen=True)
class Added:
    """An entry of B's journal that a patch operation put there (an ``add``, a ``move`` or
    ``copy`` from outside the journal's entries), no recorded entry: ``operation`` its
    number (None: the patch replaced the journal, or the save, as a whole)."""

    operation: int | None


#: A JSON pointer to one journal entry (``-``: past the last one, where ``add`` appends).
_ENTRY_AT = re.compile(r"/journal/(-|0|[1-9][0-9]{0,18})")
#: The operations that put, take or move whole values.
_STRUCTURAL = frozenset({"add", "remove", "move", "copy"})


def journal_origins(a_len: int, b_len: int, changed_from: int, changed_to: int, operations: list):
    """Where each of B's journal entries came from, indexed by B's journal index: A's
    index of the recorded entry it is (in place, or moved or copied there), an ``Added``
    for one an operation put there, or None when that cannot be told.

    Worked out from the operations that add, remove, move or copy whole entries (they
    applied, so their pointers hold); an operation inside an entry keeps its origin. When
    one replaced the journal, or the save, as a whole: B's changed entries
    (``changed_from`` to ``changed_to``) are A's in place when as many as A's, added when
    A has none there, else None."""
    structural = False
    for op in operations:
        kind = op.get("op") if isinstance(op, dict) else None
        if kind not in _STRUCTURAL and kind != "replace":
            continue
        pointers = (op.get("path"), op.get("from") if kind == "move" else None)
        if any(pointer in ("", "/journal") for pointer in pointers):  # the journal as a whole
            if a_len == b_len:
                return range(b_len)
            inserted = a_len - (b_len - changed_to) == changed_from  # A has no entry between the common prefix and suffix
            return {i: Added(None) if inserted else None for i in range(changed_from, changed_to)}
        structural = structural or kind in _STRUCTURAL and any(isinstance(p, str) and _ENTRY_AT.fullmatch(p) for p in pointers)
    if not structural:
        return range(b_len)
    origins: list = list(range(a_len))

    def at(pointer: object, size: int) -> int | None:
        m = _ENTRY_AT.fullmatch(pointer) if isinstance(pointer, str) else None
        return None if m is None else size if m.group(1) == "-" else int(m.group(1))

    for k, op in enumerate(operations):
        kind = op.get("op") if isinstance(op, dict) else None
        if kind not in _STRUCTURAL:
            continue  # a replaced entry keeps its place (its kind says whether it is the recorded one)
        source = at(op.get("from"), len(origins)) if kind in ("move", "copy") else None
        taken = Added(k)
        if source is not None:
            taken = origins.pop(source) if kind == "move" else origins[source]
        target = at(op.get("path"), len(origins))
        if target is None:
            continue  # into an entry, or out of the journal (a move's entry is gone)
        if kind == "remove":
            del origins[target]
        else:
            origins.insert(target, taken)
    return origins if len(origins) == b_len else {i: None for i in range(changed_from, changed_to)}
