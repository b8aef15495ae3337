"""Item models of the knowledge table: the facts at one tick, and their filters.

``FactTableModel`` adapts a read-only ``FactId -> FactKnowledge`` mapping (the
``KnowledgeAtTick.facts`` view of the timeline) to a Qt table. It holds only the
sorted key list of the tick; a row's ``FactKnowledge`` is read on demand in
``data()`` (one O(log N) seek per fact, cached until the next reset), so a save with
100 000 facts shows at once and only the rows on screen are resolved.

``FactFilterProxy`` filters by text, category, minimum confidence, state and
"changed only". Sorting is delegated to the source model, which sorts its key list
with Python's sort, instead of letting the proxy compare rows one Qt call at a time.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from narrative_debugger.widgets.kit.state_colors import brush_of
from narrative_debugger.models.domain.types import FactId, FactKnowledge, InteractionState, KnowledgeConfidence, KnowledgeState
from narrative_debugger.widgets.kit.plain_text import esc
from narrative_debugger.widgets.kit.tables import signal_all, signal_rows
from narrative_debugger.widgets.kit.state_colors import (
    CHANGED_BACKGROUND,
    row_tint,
    INTERACTION_COLORS,
    confidence_label,
    source_label,
    state_label,
)
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, FONT as _FONT
from narrative_debugger.widgets.kit.roles import FOREGROUND as _FOREGROUND, HORIZONTAL as _HORIZONTAL, TOOLTIP as _TOOLTIP, USER as _USER
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont

#: Column titles, in order ("Acquired": its tooltip says "Acquired tick"; the longer
#: title needed 115 px of a 1040 px window's ~450 px table for values of ~50 px).
COLUMNS = ("FactId", "Category", "Confidence", "Source", "State", "Acquired", "Interaction", "B")
#: Header tooltips: what each column holds.
COLUMN_TIPS = ("The fact's id: category.name", "The fact's category (the FactId's first part)",
               "How much the player knows", "How the player learned it", "Active, or how it ended",
               "Acquired tick: when the player learned it", "The conversation's state (interaction facts)",
               "Side B of the comparison: confidence · state (· interaction state)")
COL_FACT, COL_CATEGORY, COL_CONFIDENCE, COL_SOURCE, COL_STATE, COL_ACQUIRED, COL_INTERACTION, COL_B = range(len(COLUMNS))

#: The B column of a fact that B does not know.
NOT_KNOWN_IN_B = "not known in B"


def b_text(confidence: KnowledgeConfidence, state: KnowledgeState, interaction_state: InteractionState | None = None) -> str:
    """The B column's text of a fact B knows: confidence · state (· interaction state)."""
    text = f"{confidence_label(confidence)} · {state_label(state)}"
    return text + (f" · {state_label(interaction_state)}" if interaction_state is not None else "")


@cache
def b_samples() -> tuple[str, ...]:
    """Every text the B column can show (``widgets.kit.tables.show_column`` fits the widest)."""
    interaction = [None, *InteractionState]
    return (NOT_KNOWN_IN_B, *(b_text(c, s, i) for c in KnowledgeConfidence for s in KnowledgeState for i in interaction))


#: Background of a B cell that differs from A (issue 13: comparing two playthroughs).
DIFFERS_BACKGROUND = "#ffd7a8"
_DIFFERS = QColor(DIFFERS_BACKGROUND)  # drawn as row_tint(_DIFFERS): a dark shade on a dark palette

#: The FactId of a row (str).
FactIdRole = _USER + 1
#: True when the fact changed since the previous step.
ChangedRole = _USER + 2
#: The roles FactTableModel sets.
_ROLES = frozenset({_DISPLAY, _FONT, _BACKGROUND, _FOREGROUND, _TOOLTIP, FactIdRole, ChangedRole})


def category_of(fact_id: FactId) -> str:
    """The category part of ``category.topic`` (schema §3.1)."""
    return fact_id.split(".", 1)[0]


def categories_in(keys: Sequence[FactId]) -> list[tuple[str, int]]:
    """(category, count) of a sorted FactId list, in key order, in O(C log N).

    Keys of one category are contiguous in BTreeMap order, and ``/`` is the code
    point after ``.``, so each category is one bisection wide.
    """
    out = []
    k = 0
    while k < len(keys):
        category = category_of(keys[k])
        end = bisect_left(keys, category + "/", k)
        if end <= k:  # a key without a dot sorts oddly; step over it
            end = k + 1
        out.append((category, end - k))
        k = end
    return out


_STATE_INK = {state: color.darker(130) for state, color in INTERACTION_COLORS.items()}


class FactTableModel(QAbstractTableModel):
    """Facts of one tick as rows, resolved lazily from the timeline.

    Call ``set_facts`` on every committed tick. Rows keep the order of ``keys``
    (BTreeMap order) until ``sort`` is asked for another column.
    """

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._facts: Mapping[FactId, FactKnowledge] = {}
        self._natural: list[FactId] = []
        self._keys: list[FactId] = []
        self._cache: dict[FactId, FactKnowledge] = {}
        self._changed: frozenset[FactId] = frozenset()
        self._rows: dict[FactId, int] | None = None
        self._names: Mapping[int, str] = {}
        self._sort: tuple[int, Qt.SortOrder] = (COL_FACT, Qt.AscendingOrder)
        self._bold = QFont()
        self._bold.setBold(True)
        self._italic = QFont()
        self._italic.setItalic(True)
        self._facts_b: Mapping[FactId, FactKnowledge] | None = None
        # B's values read so far (None: B lacks the fact), as ``_cache`` is A's: a paint
        # asks each cell's roles again, and B's facts of a what-if are read from a mapped
        # file, a chunk decoded a read (535 of them, 80 ms, for one paint at 1M events).
        self._cache_b: dict[FactId, FactKnowledge | None] = {}

    # ----- feeding -----
    def set_facts(
        self,
        facts: Mapping[FactId, FactKnowledge],
        keys: list[FactId],
        changed: frozenset[FactId] = frozenset(),
        names: Mapping[int, str] | None = None,
        facts_b: Mapping[FactId, FactKnowledge] | None = None,
        owned: bool = False,
    ) -> None:
        """Show the facts of a tick.

        Args:
            facts: FactId -> FactKnowledge at the tick (read on demand).
            keys: its keys in BTreeMap order (copied, unless ``owned``).
            changed: FactIds changed since the previous step (flagged bold, tinted).
            names: StableId -> display name, for interaction tooltips.
            facts_b: while comparing, side B's facts at the same tick (the B column).
            owned: ``keys`` is a list the model may keep and change (steps insert and
                remove rows in it); the caller never uses it again.
        """
        self.beginResetModel()
        self._facts = facts
        self._natural = keys if owned else list(keys)
        self._keys = self._natural
        self._cache = {}
        self._rows = None
        self._changed = frozenset(changed)
        self._names = names or {}
        self._facts_b = facts_b
        self._cache_b = {}
        if self._sort != (COL_FACT, Qt.AscendingOrder):
            self._keys = self._sorted_keys(*self._sort)
        self.endResetModel()

    #: More facts created or gone than this in one step, and ``step_facts`` resets instead.
    STEP_LIMIT = 64
    #: More facts to signal than this, and ``step_facts`` signals every cell at once: the
    #: step after a far jump unflags every fact that jump changed (33 000 on a 1M-event
    #: save), and finding their rows one by one costs more than a frame.
    SIGNAL_ALL_ABOVE = 256

    def step_facts(
        self,
        facts: Mapping[FactId, FactKnowledge],
        changed: frozenset[FactId],
        created: Sequence[FactId],
        gone: Sequence[FactId],
        differs: Iterable[FactId],
    ) -> bool:
        """Move the rows to another tick of the same timeline in place, as ``set_facts``
        would show it: rows are inserted and removed one by one, and only the rows whose
        value or "changed" flag differ are signalled. A tick step changes a handful of
        facts; a reset made the table fetch every cell in view again (~1 600 data()
        calls a step).

        Args:
            facts: FactId -> FactKnowledge at the new tick.
            changed: FactIds changed since the previous step (flagged bold, tinted).
            created: facts that exist at the new tick and not at the one shown.
            gone: facts that exist at the tick shown and not at the new one.
            differs: facts whose value may differ between the two ticks.

        Returns:
            False, with nothing changed, when it cannot: the rows are sorted by another
            column, side B is shown, or too many rows come or go. Call ``set_facts`` then.
        """
        if (self._facts_b is not None or self._keys is not self._natural
                or len(created) + len(gone) > self.STEP_LIMIT):
            return False
        changed = frozenset(changed)
        signal = set(self._changed)
        signal.update(changed)
        cache = self._cache
        for fact_id in differs:
            cache.pop(fact_id, None)
            signal.add(fact_id)
        # Everything data() and the filter proxy read is the new tick's before rows move:
        # a proxy filters each inserted row as it comes.
        self._facts = facts
        self._changed = changed
        self._rows = None
        keys = self._natural
        if (created or gone) and not isinstance(keys, list):
            # The loader's rows, a read-only mapped column (``FactKeysAt.take_list``):
            # a list of ours once a row comes or goes.
            keys = self._natural = self._keys = list(keys[:])  # one slice, chunk by chunk
        for fact_id in gone:
            row = bisect_left(keys, fact_id)
            if row < len(keys) and keys[row] == fact_id:
                self.beginRemoveRows(QModelIndex(), row, row)
                del keys[row]
                cache.pop(fact_id, None)
                self.endRemoveRows()
        for fact_id in created:
            row = bisect_left(keys, fact_id)
            if row < len(keys) and keys[row] == fact_id:
                continue
            self.beginInsertRows(QModelIndex(), row, row)
            keys.insert(row, fact_id)
            self.endInsertRows()
        if len(signal) > self.SIGNAL_ALL_ABOVE:
            signal_all(self)
        else:
            signal_rows(self, sorted(r for r in map(self.row_of, signal) if r is not None))
        return True

    # ----- reading -----
    def fact_id(self, row: int) -> FactId:
        """The FactId shown in ``row``."""
        return self._keys[row]

    def fact(self, row: int) -> FactKnowledge | None:
        """The FactKnowledge of ``row`` (resolved and cached on first use); None only for a
        fact B knows and A does not, while comparing."""
        return self._fact_by_id(self._keys[row])

    def _fact_by_id(self, fact_id: FactId) -> FactKnowledge | None:
        value = self._cache.get(fact_id)
        if value is None:
            value = self._facts.get(fact_id) if self._facts_b is not None else self._facts[fact_id]
            if value is not None:
                self._cache[fact_id] = value
        return value

    def shown_fact(self, fact_id: FactId) -> FactKnowledge | None:
        """A's value of the fact, else B's (a fact only B knows): what sorting and filters read."""
        return self._fact_by_id(fact_id) or self.fact_b(fact_id)

    def fact_b(self, fact_id: FactId) -> FactKnowledge | None:
        """Side B's value of ``fact_id`` while comparing (None when B lacks it or not comparing)."""
        if self._facts_b is None:
            return None
        try:
            return self._cache_b[fact_id]
        except KeyError:
            value = self._cache_b[fact_id] = self._facts_b.get(fact_id)
            return value

    def differs_b(self, fact_id: FactId) -> bool:
        """True while comparing when B lacks the fact or knows it with another confidence,
        state or interaction state."""
        if self._facts_b is None:
            return False
        b = self.fact_b(fact_id)
        if b is None:
            return True
        a = self._fact_by_id(fact_id)
        if a is None:
            return True
        ia, ib = a.interaction, b.interaction
        return (a.confidence != b.confidence or a.state != b.state
                or (ia.interaction_state if ia else None) != (ib.interaction_state if ib else None))

    def is_changed(self, row: int) -> bool:
        """True when the fact in ``row`` changed since the previous step."""
        return self._keys[row] in self._changed

    @property
    def changed(self) -> frozenset[FactId]:
        """Every FactId flagged as changed."""
        return self._changed

    def row_of(self, fact_id: FactId) -> int | None:
        """The row showing ``fact_id``, or None (bisection in key order, else a lazy index)."""
        if self._keys is self._natural:
            k = bisect_left(self._keys, fact_id)
            return k if k < len(self._keys) and self._keys[k] == fact_id else None
        if self._rows is None:
            self._rows = {fid: k for k, fid in enumerate(self._keys)}
        return self._rows.get(fact_id)

    # ----- Qt model -----
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):
        if orientation == _HORIZONTAL and int(role) == _DISPLAY:
            return COLUMNS[section]
        if orientation == _HORIZONTAL and int(role) == _TOOLTIP:
            return COLUMN_TIPS[section]
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        role = int(role)
        if role not in _ROLES or not index.isValid():  # Qt asks a dozen roles a cell per repaint
            return None
        row, col = index.row(), index.column()
        fact_id = self._keys[row]
        if role == _DISPLAY:
            return self._display(fact_id, col)
        if role == FactIdRole:
            return fact_id
        if role == ChangedRole:
            return fact_id in self._changed
        if role == _FONT:
            if self._facts_b is not None and self._fact_by_id(fact_id) is None:
                return self._italic  # only B knows it
            return self._bold if fact_id in self._changed else None
        if role == _BACKGROUND:
            if col == COL_B:
                return brush_of(row_tint(_DIFFERS)) if self.differs_b(fact_id) else None
            return brush_of(row_tint(CHANGED_BACKGROUND)) if fact_id in self._changed else None  # light or dark
        if role == _FOREGROUND and col == COL_INTERACTION:
            fact = self._fact_by_id(fact_id)
            meta = fact.interaction if fact is not None else None
            return _STATE_INK[meta.interaction_state] if meta else None
        if role == _TOOLTIP:
            return self._tooltip(fact_id)
        return None

    def _display(self, fact_id: FactId, col: int):
        if col == COL_FACT:
            return fact_id
        if col == COL_CATEGORY:
            return category_of(fact_id)
        if col == COL_B:
            return self._b_text(fact_id)
        fact = self._fact_by_id(fact_id)
        if fact is None:
            return "—"  # only B knows it
        if col == COL_CONFIDENCE:
            return confidence_label(fact.confidence)
        if col == COL_SOURCE:
            return source_label(fact.source)
        if col == COL_STATE:
            return state_label(fact.state)
        if col == COL_ACQUIRED:
            return f"{fact.acquired_tick:,}"
        meta = fact.interaction
        return state_label(meta.interaction_state) if meta is not None else ""

    def _b_text(self, fact_id: FactId) -> str:
        if self._facts_b is None:
            return ""
        b = self.fact_b(fact_id)
        if b is None:
            return NOT_KNOWN_IN_B
        meta = b.interaction
        return b_text(b.confidence, b.state, meta.interaction_state if meta is not None else None)

    def _tooltip(self, fact_id: FactId) -> str:
        fact = self._fact_by_id(fact_id)
        if fact is None:
            return f"<b>{esc(fact_id)}</b><br>not known in A; B: {esc(self._b_text(fact_id))}"  # text from a save is text (trial 47)
        lines = [f"<b>{esc(fact_id)}</b>",
                 f"{confidence_label(fact.confidence)} · {source_label(fact.source)} · {state_label(fact.state)}",
                 f"learned at tick {fact.acquired_tick:,}"]
        meta = fact.interaction
        if meta is not None:
            who = self._names.get(meta.target_entity, str(meta.target_entity))
            ended = "still in progress" if meta.ended_tick is None else f"ended at tick {meta.ended_tick}"
            lines.append(f"with {esc(who)} at {esc(meta.location)}: {state_label(meta.interaction_state)}, "
                         f"started at tick {meta.started_tick:,}, {ended}")
            if meta.topics:
                lines.append("topics: " + esc(", ".join(meta.topics)))
        if fact_id in self._changed:
            lines.append("<i>changed since the previous step</i>")
        if self._facts_b is not None:
            lines.append(f"B: {self._b_text(fact_id)}" + (" <b>(differs)</b>" if self.differs_b(fact_id) else ""))
        return "<br>".join(lines)

    # ----- sorting (delegated here by FactFilterProxy.sort) -----
    def _sort_key(self, column: int):
        get = self.shown_fact
        if column == COL_CATEGORY:
            return lambda fid: (category_of(fid), fid)
        if column == COL_CONFIDENCE:
            return lambda fid: (get(fid).confidence, fid)
        if column == COL_SOURCE:
            return lambda fid: (get(fid).source.value, fid)
        if column == COL_STATE:
            return lambda fid: (get(fid).state.value, fid)
        if column == COL_ACQUIRED:
            return lambda fid: (get(fid).acquired_tick, fid)
        if column == COL_B:
            return lambda fid: (not self.differs_b(fid), fid)
        if column == COL_INTERACTION:
            def key(fid):
                meta = get(fid).interaction
                return (meta is None, meta.interaction_state.value if meta else "", fid)
            return key
        return None

    def _sorted_keys(self, column: int, order: Qt.SortOrder) -> list[FactId]:
        key = self._sort_key(column)
        descending = order == Qt.DescendingOrder
        if key is None:
            return list(reversed(self._natural)) if descending else self._natural
        return sorted(self._natural, key=key, reverse=descending)

    def sort(self, column: int, order: Qt.SortOrder = Qt.AscendingOrder) -> None:
        """Reorder rows by ``column`` (column < 0 restores BTreeMap order)."""
        if column < 0:
            column, order = COL_FACT, Qt.AscendingOrder
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        held = [(p, self._keys[p.row()]) for p in persistent if p.isValid() and p.row() < len(self._keys)]
        self._sort = (column, order)
        self._keys = self._sorted_keys(column, order)
        self._rows = None
        for old, fact_id in held:
            row = self.row_of(fact_id)
            self.changePersistentIndex(old, self.index(row, old.column()) if row is not None else QModelIndex())
        self.layoutChanged.emit()


class FactFilterProxy(QSortFilterProxyModel):
    """Filters a ``FactTableModel`` by text, category, minimum confidence, state and change.

    Filters that need the fact itself (confidence, state) resolve it through the
    source model's cache; text and category look at the FactId only.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self._category: str | None = None
        self._min_confidence: KnowledgeConfidence | None = None
        self._state: KnowledgeState | None = None
        self._changed_only = False

    def set_text(self, text: str) -> None:
        """Keep facts whose FactId contains ``text`` (case-insensitive)."""
        self._apply("_text", text.strip().lower())

    def set_category(self, category: str | None) -> None:
        """Keep one category (None keeps all)."""
        self._apply("_category", category or None)

    def set_min_confidence(self, confidence: KnowledgeConfidence | None) -> None:
        """Keep facts at or above ``confidence`` (None keeps all)."""
        self._apply("_min_confidence", confidence)

    def set_state(self, state: KnowledgeState | None) -> None:
        """Keep facts in ``state`` (None keeps all)."""
        self._apply("_state", state)

    def set_changed_only(self, on: bool) -> None:
        """Keep only facts changed since the previous step."""
        self._apply("_changed_only", bool(on))

    def _apply(self, name: str, value) -> None:
        if getattr(self, name) == value:
            return
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9
            self.beginFilterChange()
            setattr(self, name, value)
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            setattr(self, name, value)
            self.invalidateRowsFilter()

    @property
    def filtering(self) -> bool:
        """True when any filter is set."""
        return bool(self._text or self._category or self._min_confidence is not None
                    or self._state is not None or self._changed_only)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        model: FactTableModel = self.sourceModel()
        fact_id = model.fact_id(source_row)
        if self._category is not None and not fact_id.startswith(self._category + "."):
            return False
        if self._text and self._text not in fact_id.lower():
            return False
        if self._changed_only and fact_id not in model.changed:
            return False
        if self._min_confidence is not None or self._state is not None:
            fact = model.shown_fact(fact_id)
            if self._min_confidence is not None and fact.confidence < self._min_confidence:
                return False
            if self._state is not None and fact.state != self._state:
                return False
        return True

    def sort(self, column: int, order: Qt.SortOrder = Qt.AscendingOrder) -> None:
        """Sort in the source model (one Python sort) and keep the proxy unsorted."""
        source = self.sourceModel()
        if source is not None:
            source.sort(column, order)
