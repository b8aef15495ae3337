"""Where two journals part ways: the first entry that differs (issue 13).

Entries are compared as the save reader typed them (tick, variant, fields), in
file order. The walk compares whole slices in C and only looks entry by entry
inside the first slice that differs, so a million shared entries cost milliseconds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from narrative_debugger.models.save.saveshape import EventFields
from narrative_debugger.models.save.savefile import Save

#: Entries compared in one slice before looking entry by entry.
CHUNK = 4096


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first journal entry where A and B differ.

    Attributes:
        a_index, b_index: the entry's index in each journal (equal: journals are aligned
            entry by entry; an index past the end means that journal ended first).
        a_tick, b_tick: the entry's tick in each (None past the end).
        a_event, b_event: the entry as JSON ``{"tick", "event": {Variant: {fields}}}``
            (None past the end; ``event`` None for an entry that failed its shape check).
    """

    a_index: int
    b_index: int
    a_tick: int | None
    b_tick: int | None
    a_event: dict | None
    b_event: dict | None

    @property
    def tick(self) -> int:
        """The earlier of the two ticks (ticks are aligned by value): where curves may part."""
        ticks = [t for t in (self.a_tick, self.b_tick) if t is not None]
        return min(ticks) if ticks else 0

    def to_json(self) -> dict:
        """The ``diff`` contract: a_index, b_index, a_tick, b_tick, a_event, b_event."""
        return {
            "a_index": self.a_index,
            "b_index": self.b_index,
            "a_tick": self.a_tick,
            "b_tick": self.b_tick,
            "a_event": self.a_event,
            "b_event": self.b_event,
        }


def first_divergence(a: Save, b: Save, limit_a: int | None = None, limit_b: int | None = None) -> Divergence | None:
    """The first entry where the journals of ``a`` and ``b`` differ, or None when equal.

    Args:
        a, b: readable saves.
        limit_a, limit_b: compare only the first entries of each (the entries with
            tick <= T for ``diff --tick T``); default the whole journal.

    Returns:
        None when both (limited) journals hold the same entries; else the first index
        where they differ, or where the shorter one ends.
    """
    ja, jb = a.journal, b.journal
    na = len(ja) if limit_a is None else min(limit_a, len(ja))
    nb = len(jb) if limit_b is None else min(limit_b, len(jb))
    n = min(na, nb)
    start = 0
    while start < n:
        end = min(n, start + CHUNK)
        if ja.ticks[start:end] == jb.ticks[start:end] and ja.kinds[start:end] == jb.kinds[start:end] and ja.data[start:end] == jb.data[start:end]:
            start = end
            continue
        for i in range(start, end):
            if ja.ticks[i] != jb.ticks[i] or ja.kinds[i] != jb.kinds[i] or ja.data[i] != jb.data[i]:
                return _at(a, b, i)
        start = end  # pragma: no cover - a slice that differs has an entry that differs
    if na == nb:
        return None
    return _at(a, b, n)


def _at(a: Save, b: Save, i: int) -> Divergence:
    ea, eb = entry_json(a, i), entry_json(b, i)
    return Divergence(i, i, ea["tick"] if ea else None, eb["tick"] if eb else None, ea, eb)


def entry_json(save: Save, i: int) -> dict | None:
    """Journal entry ``i`` as plain JSON data (enums by name), or None past the end."""
    journal = save.journal
    if not 0 <= i < len(journal):
        return None
    kind = journal.kinds[i]
    event = {kind: to_plain(journal.data[i])} if kind is not None else None
    return {"tick": journal.ticks[i], "event": event}


def to_plain(value):
    """A typed value as JSON data: enums by name, tuples as lists, maps recursively."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (dict, EventFields)):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value
