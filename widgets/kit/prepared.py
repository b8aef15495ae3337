"""What the views' and docks' ``prepare`` functions made for one playthrough, by type.

The loader (app/workers/loader.py) runs each ``prepare`` of the registry off the GUI
thread; each returns a frozen dataclass of its own module (``NpcNames``,
``FirstTracks``, ``SnapshotRows``…) or None, and the loader adds it to one ``Prepared``.
That container goes with the playthrough to the GUI thread (``SaveLoader.loaded``),
where the session adapter holds it (``widgets.session.Session.prepared``) and each
view reads its own entry by its type. A model object never holds it: the playthrough
knows nothing of views, and no Qt object (a track's ``QColor``) lives in ``models``.
A what-if's child process fills a second one for the comparison it hands over (side
B and the comparison at the tick shown: ``widgets/registry.py`` ``comparison_preparers``),
which the session adapter holds as ``prepared_b`` while that comparison is shown.

Threads: entries are only added, each once, by the loader's worker; the GUI thread
reads an entry after the signal that follows its adding (``loaded`` for the entries
made before the first paint, ``checked`` for those that read the findings). One dict
assignment or lookup each, so a reader sees an entry whole or not at all.
"""

from __future__ import annotations

from typing import TypeVar


T = TypeVar("T")


class Prepared:
    """Entries made ahead for one playthrough: at most one of each type.

    ``get(NpcNames)`` is that entry or None (not made: the view computes its own)."""

    __slots__ = ("_entries",)

    def __init__(self, *entries: object) -> None:
        self._entries: dict[type, object] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: object) -> None:
        """Keep ``entry`` (None is ignored), in place of one of the same type."""
        if entry is not None:
            self._entries[type(entry)] = entry

    def get(self, kind: type[T]) -> T | None:
        """The entry of type ``kind``, or None."""
        return self._entries.get(kind)

    def take(self, kind: type[T]) -> T | None:
        """The entry of type ``kind``, removed (a value only its first reader may own)."""
        return self._entries.pop(kind, None)

    def entries(self) -> list:
        """Every entry, in the order they were added."""
        return list(self._entries.values())

    def __contains__(self, kind: type) -> bool:
        return kind in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Prepared({', '.join(kind.__name__ for kind in self._entries)})"
