"""The NPC list: every NPC of the save and how they stand with the player at the tick.

One row per NPC of the save: name, relationship level and score, stress against its
threshold (a small bar, red past the threshold), walk-aways so far and the state of
the conversation in progress with them, if any. Selecting a row selects the NPC in
the session; the session's selection selects the row.

Units: scores are relationship score points (0..100), stress is in the game's i16
stress units, ticks are game ticks.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
from narrative_debugger.models.domain.types import InteractionState, NpcState, StableId
from narrative_debugger.models.explain.chain import fmt_num
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.session import Session, npc_names
from narrative_debugger.widgets.kit.state_colors import FAULT_COLOR, INTERACTION_COLORS, brush_of
from narrative_debugger.widgets.kit.cell_text import StaticTextDelegate
from narrative_debugger.widgets.kit.tables import HeaderedTableModel, ShareColumns, fit_columns, hot_table, signal_all, signal_rows
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.plain_text import esc
from narrative_debugger.widgets.kit.visibility import after_pause, held
from narrative_debugger.widgets.kit.why import add_why_action
from narrative_debugger.widgets.kit.roles import ALIGN as _ALIGN, DISPLAY as _DISPLAY, FOREGROUND as _FOREGROUND
from narrative_debugger.widgets.kit.roles import RIGHT as _RIGHT, TOOLTIP as _TOOLTIP, USER as _USER
from PySide6.QtCore import QItemSelectionModel, QModelIndex, QRect, QSize, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

#: Role carrying a value to sort by (numbers sort as numbers).
SORT_ROLE = _USER + 1
#: Role carrying the NPC's StableId on every cell.
SID_ROLE = _USER + 2
#: Role carrying (stress, threshold) on the stress cell, for the bar delegate.
STRESS_ROLE = _USER + 3
#: The roles the NPC table sets; Qt asks for a dozen a cell on every repaint.
_ROLES = frozenset({_DISPLAY, _FOREGROUND, _ALIGN, _TOOLTIP, SORT_ROLE, SID_ROLE, STRESS_ROLE})
_MID = QPalette.Mid

OVER_THRESHOLD = FAULT_COLOR
#: A row whose NPC state was not read yet (``NpcTableModel._npc_at`` reads it when shown).
_UNREAD = object()
STRESS_OK = QColor("#7a9cc6")
STRESS_NEAR = QColor("#e0a030")


@dataclass(frozen=True)
class NpcChanges:
    """Where each NPC's state changes, by journal position, to find the NPCs a tick step
    changed without reading every NPC's state (a crowd's would cost most of a frame).

    Attributes:
        npcs: the StableIds of the timeline's NPCs, in order.
        positions: the position of every state version of every NPC, ascending.
        which: for each of ``positions``, its NPC's place in ``npcs``.
    """

    npcs: list[StableId]
    positions: np.ndarray
    which: np.ndarray

    def between(self, a: int, b: int) -> set[StableId]:
        """The NPCs whose state at position ``a`` and at ``b`` may differ."""
        lo, hi = sorted((a, b))
        start, end = np.searchsorted(self.positions, [lo, hi], side="right")
        return {self.npcs[k] for k in np.unique(self.which[start:end]).tolist()}


def prepare(playthrough: Playthrough, prepared: Prepared | None = None) -> NpcChanges | None:
    """The NPC dock's ``NpcChanges`` of a playthrough: O(V log V) in NPC state versions,
    made by the loader off the GUI thread (None for an unreadable save)."""
    index = playthrough.index
    if index is None:
        return None
    npcs = list(index.npcs)
    counts = [len(index.npcs[sid].positions) for sid in npcs]
    positions = np.fromiter(chain.from_iterable(index.npcs[sid].positions for sid in npcs), dtype=np.int64, count=sum(counts))
    which = np.repeat(np.arange(len(npcs), dtype=np.int32), counts)
    order = np.argsort(positions, kind="stable")
    return NpcChanges(npcs, positions[order], which[order])


class NpcTableModel(HeaderedTableModel):
    """The NPCs of a playthrough at one tick, one row each, in StableId order.

    Columns: name, level, score (points), stress / threshold, walk-aways, and the
    interaction in progress with the NPC at the tick (its state name, or blank).
    """

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    NAME, LEVEL, SCORE, STRESS, WALK_AWAYS, INTERACTION = range(6)
    # Long titles wrap to two lines so that every column fits a dock a third of the window wide.
    HEADERS = ("Name", "Level", "Score", "Stress /\nthreshold", "Walk-aways /\ntolerated", "In progress")
    #: The widest value each column usually shows (sizes the columns before a save is open).
    SAMPLES = ("Kael Davan", "Close Friend", "100.0", "100 / 100", "10 / 10", "Confrontation")
    TIPS = (
        "The NPC's name from its content profile",
        "Relationship level: Stranger ≤20, Acquaintance ≤40, Friend ≤60, Good Friend ≤80, Close Friend",
        "Relationship score, 0..100 points",
        "Current stress against the NPC's threshold (i16 stress units); red when over",
        "Walk-aways so far / how many the NPC tolerates before penalties (its walk-away threshold)",
        "State of the conversation with this NPC in progress at the tick",
    )

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._playthrough: Playthrough | None = None
        self._sids: list[StableId] = []
        self._names: list[str] = []
        # A row's NPC state at ``tick``; _UNREAD until the row is first shown.
        self._states: list[NpcState | None] = []
        self._state: StateAtTick | None = None
        # Each NPC's own interaction in progress at ``tick`` (FactId, metadata), read when asked.
        self._progress: dict[StableId, tuple | None] = {}
        self._row: dict[StableId, int] = {}
        self._changes: NpcChanges | None = None
        self._shown: tuple[int, int] | None = None  # (id of the timeline, position) of the states shown
        self.tick = 0

    # ----- feeding -----
    def set_playthrough(self, playthrough: Playthrough | None, state: StateAtTick | None = None, prepared: Prepared | None = None) -> None:
        """Show the NPCs of another playthrough (rows are rebuilt), as they are in
        ``state`` when given (one of ``playthrough``'s), with what the loader
        ``prepared`` for it (its names and ``NpcChanges``; made now when missing).

        With ``state``, a ``set_state(state)`` that follows changes nothing: the table
        is measured once an open, not once empty and again with the states."""
        self.beginResetModel()
        self._playthrough = playthrough
        self._sids = list(playthrough.save.npcs) if playthrough is not None else []
        names = npc_names(playthrough, prepared) if playthrough is not None else {}
        self._names = [names[sid] for sid in self._sids]
        self._states = [None] * len(self._sids)
        self._state = None
        self._progress = {}
        self._row = {sid: row for row, sid in enumerate(self._sids)}
        self._changes = None
        self._shown = None
        if playthrough is not None and playthrough.index is not None:
            self._changes = prepared.get(NpcChanges) if prepared is not None else None
            if self._changes is None or len(self._changes.npcs) != len(playthrough.index.npcs):
                self._changes = prepare(playthrough)
            if state is not None:
                self._take(state)
                self._states = [_UNREAD] * len(self._sids)
        self.endResetModel()

    def set_state(self, state: StateAtTick | None) -> None:
        """Show the NPCs as they are in ``state`` (cells change, rows stay).

        Only the rows whose NPC state or interaction in progress changed are signalled
        (one ``dataChanged`` per run of changed rows): a tick step usually changes one
        NPC, and a signal over every row repainted and re-measured the whole table.
        A row's state is read when the row is first shown (or sorted on), so a crowd's
        first state costs the rows in view, not every NPC.
        """
        shown = self._shown
        self._take(state)
        if not (state is not None and self._changes is not None and shown is not None
                and shown[0] == id(state.index) and len(self._states) == len(self._sids)):
            # Every row may differ: each is read from ``state`` when it is first shown
            # (a crowd's states read at once would be a stall at an open).
            self._states = [_UNREAD if state is not None else None] * len(self._sids)
            signal_all(self)
            return
        # Only the NPCs with a version between the two positions can differ.
        moved = state.npcs_with_interaction_moves(shown[1])  # their "In progress" may differ
        maybe = self._changes.between(shown[1], state.position) | moved
        changed = []
        for row in sorted(self._row[sid] for sid in maybe if sid in self._row):
            sid = self._sids[row]
            old = self._states[row]
            if old is _UNREAD:
                continue  # never shown: read from the new state when it is
            new = self._states[row] = state.npc(sid)
            if not (new is old or new == old) or sid in moved:
                changed.append(row)
        signal_rows(self, changed)

    def _take(self, state: StateAtTick | None) -> None:
        """Note ``state`` as the one shown (tick, interaction in progress), rows untouched."""
        self.tick = state.tick if state is not None else 0
        self._progress = {}
        self._shown = (id(state.index), state.position) if state is not None else None
        self._state = state

    def _npc_at(self, row: int) -> NpcState | None:
        npc = self._states[row]
        if npc is _UNREAD:
            npc = self._states[row] = self._state.npc(self._sids[row])
        return npc

    # ----- lookups -----
    def in_progress(self, sid: StableId) -> tuple | None:
        """(FactId, InteractionMetadata) of the NPC's own interaction in progress at
        ``tick`` (``StateAtTick.in_progress``: each NPC its own, two at once under I005)."""
        if sid not in self._progress:
            self._progress[sid] = self._state.in_progress(sid) if self._state is not None else None
        return self._progress[sid]

    def interaction_state(self, sid: StableId) -> InteractionState | None:
        """The state of the NPC's interaction in progress (Active, Confrontation), or None."""
        found = self.in_progress(sid)
        return found[1].interaction_state if found is not None else None

    def sid_at(self, row: int) -> StableId | None:
        """StableId of a row, or None outside the table."""
        return self._sids[row] if 0 <= row < len(self._sids) else None

    def row_of(self, sid: StableId | None) -> int:
        """Row of an NPC, or -1 when it is not in the table."""
        try:
            return self._sids.index(sid)
        except ValueError:
            return -1

    def npc_state(self, row: int) -> NpcState | None:
        """The NPC's state at the tick shown."""
        return self._npc_at(row) if 0 <= row < len(self._states) else None

    # ----- the item model -----
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._sids)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        role = int(role)
        if role not in _ROLES or not index.isValid():
            return None
        row, col = index.row(), index.column()
        sid = self._sids[row]
        if role == SID_ROLE:
            return sid
        npc = self._npc_at(row)
        if npc is None:
            return self._name_or_blank(row, col, role)
        if role == _DISPLAY:
            return self._display(row, col, npc)
        if role == SORT_ROLE:
            return self._sort_key(row, col, npc)
        if role == STRESS_ROLE and col == self.STRESS:
            return (npc.tolerance.current_stress, npc.tolerance.threshold)
        if role == _FOREGROUND:
            return self._ink(col, npc)
        if role == _ALIGN and col in (self.SCORE, self.WALK_AWAYS):
            return _RIGHT
        if role == _TOOLTIP:
            return self._walk_away_tip(npc) if col == self.WALK_AWAYS else self._tooltip(row, npc)
        return None

    def cell(self, index: QModelIndex) -> tuple:
        """``(display, font, alignment, background, foreground)`` of one cell: what
        ``data`` gives for each role, in one call (``cell_text.StaticTextDelegate``)."""
        row, col = index.row(), index.column()
        npc = self._npc_at(row)
        if npc is None:
            return self._name_or_blank(row, col, _DISPLAY), None, None, None, None
        return self._display(row, col, npc), None, _RIGHT if col in (self.SCORE, self.WALK_AWAYS) else None, None, \
            self._ink(col, npc)

    def _ink(self, col: int, npc: NpcState):
        """The foreground brush of a cell, or None."""
        if col == self.STRESS and npc.tolerance.over_threshold:
            return brush_of(OVER_THRESHOLD)
        if col == self.INTERACTION and (state := self.interaction_state(npc.stable_id)) is not None:
            return brush_of(INTERACTION_COLORS[state])
        if col == self.WALK_AWAYS and npc.walk_aways > npc.interaction_tolerance.walk_away_threshold:
            return brush_of(OVER_THRESHOLD)
        return None

    # ----- cell helpers -----
    def _name_or_blank(self, row: int, col: int, role: int):
        if col == self.NAME and role in (_DISPLAY, SORT_ROLE):
            return self._names[row]
        return None

    def _display(self, row: int, col: int, npc: NpcState):
        if col == self.NAME:
            return self._names[row]
        if col == self.LEVEL:
            return npc.level.display_name
        if col == self.SCORE:
            return fmt_num(npc.relationship.score)  # as everywhere: 2 decimals
        if col == self.STRESS:
            return f"{npc.tolerance.current_stress} / {npc.tolerance.threshold}"
        if col == self.WALK_AWAYS:
            return f"{npc.walk_aways} / {npc.interaction_tolerance.walk_away_threshold}"
        if col == self.INTERACTION:
            state = self.interaction_state(npc.stable_id)
            return state.name if state is not None else ""
        return None

    def _sort_key(self, row: int, col: int, npc: NpcState):
        if col == self.NAME:
            return self._names[row]
        if col in (self.LEVEL, self.SCORE):
            return npc.relationship.score
        if col == self.STRESS:
            t = npc.tolerance
            return t.current_stress / t.threshold if t.threshold > 0 else float(t.current_stress)
        if col == self.WALK_AWAYS:
            return npc.walk_aways
        state = self.interaction_state(npc.stable_id)
        return state.name if state is not None else ""

    def _tooltip(self, row: int, npc: NpcState) -> str:
        rel, tol, it = npc.relationship, npc.tolerance, npc.interaction_tolerance
        over = " (over threshold)" if tol.over_threshold else ""
        return (
            f"<b>{esc(self._names[row])}</b> · {esc(npc.slug)} · StableId {npc.stable_id}<br>"
            f"score {fmt_num(rel.score)} ({npc.level.display_name}), {counted(rel.total_interactions, 'interaction')} "
            f"({rel.positive_interactions} positive, {rel.negative_interactions} negative)<br>"
            f"stress {tol.current_stress} / {tol.threshold}{over}<br>"
            f"walk-aways {npc.walk_aways}; penalty {it.walk_away_penalty:g} points past "
            f"{it.walk_away_threshold}, +{it.walk_away_stress_delta} stress each"
        )


    @staticmethod
    def _walk_away_tip(npc: NpcState) -> str:
        """``13 walk-aways; tolerates 1 before penalties`` and what each one past it costs."""
        it = npc.interaction_tolerance
        return (
            f"{counted(npc.walk_aways, 'walk-away')}; tolerates {it.walk_away_threshold} before penalties "
            f"(each one past it: -{it.walk_away_penalty:g} score points, +{it.walk_away_stress_delta} stress)"
        )


class StressBarDelegate(StaticTextDelegate):
    """Draws ``stress / threshold`` with a thin bar under the text (red past the threshold)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        super().paint(painter, option, index)
        value = index.data(STRESS_ROLE)
        if value is None:
            return
        stress, threshold = value
        fraction = max(0.0, min(1.0, stress / threshold)) if threshold > 0 else (1.0 if stress > 0 else 0.0)
        if stress > threshold:
            colour = OVER_THRESHOLD
        elif fraction >= 0.75:
            colour = STRESS_NEAR
        else:
            colour = STRESS_OK
        r = option.rect
        track = QRect(r.left() + 4, r.bottom() - 4, max(0, r.width() - 8), 3)
        painter.save()
        painter.fillRect(track, option.palette.color(_MID).lighter(130))
        painter.fillRect(QRect(track.left(), track.top(), int(track.width() * fraction), track.height()), colour)
        painter.restore()


class NpcList(QWidget):
    """The table of NPCs; follows the session's tick and NPC selection.

    Selecting a row calls ``session.set_npc``; ``session.npcChanged`` selects the
    row. The cells follow ``tickChanged``, and ``tickPreview`` (while dragging)
    once the drag pauses. Connections end with the
    widget (PySide disconnects slots of a deleted receiver).

    Attributes:
        model: the NpcTableModel.
        proxy: the sorting proxy the view shows.
        view: the QTableView.
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("npcList")
        self.session = session
        self.model = NpcTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.view = QTableView(self)
        hot_table(self.view)
        self.view.setObjectName("npcTable")
        self.view.setModel(self.proxy)
        self.view.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.AscendingOrder)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().hide()
        self.view.setItemDelegateForColumn(NpcTableModel.STRESS, StressBarDelegate(self.view))
        self.view.horizontalHeader().setDefaultAlignment(Qt.AlignCenter)
        self._columns_width = fit_columns(self.view, dict(enumerate(NpcTableModel.SAMPLES)), stretch=NpcTableModel.NAME)
        # Narrower than that, name and level elide (their tooltip names both) and the
        # numbers keep their width: a dock reset at 1040x700 cut "Walk-aways /
        # tolerated" and put "In progress" behind a horizontal scroll bar; names wrapped.
        self.view.setWordWrap(False)
        self.columns = ShareColumns(self.view, (NpcTableModel.NAME, NpcTableModel.LEVEL), stretch=NpcTableModel.NAME)
        self.caption = QLabel(self)
        self.caption.setObjectName("npcListCaption")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(SteadyLabel(self.caption))
        layout.addWidget(self.view)

        self.why_action = add_why_action(self.view, session, self.why_target)
        self.view.selectionModel().selectionChanged.connect(self._on_selection)
        self._stale = False  # a load put the table off (visibility.held) until catch_up
        session.loaded.connect(self._on_loaded)
        session.tickChanged.connect(self._on_tick)
        self._preview = after_pause(self._show_preview, self)
        session.tickPreview.connect(self._on_tick_preview)
        session.npcChanged.connect(self._select_npc)
        if session.ready:
            self._on_loaded()
            self._on_tick(session.tick)

    def sizeHint(self) -> QSize:
        """Wide enough for every column whole (the default dock width asks for this)."""
        hint = super().sizeHint()
        return QSize(max(hint.width(), self._columns_width + 4), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        """Wide enough for every header whole, name and level elided (side docks keep this)."""
        hint = super().minimumSizeHint()
        margins = self.layout().contentsMargins()
        return QSize(max(hint.width(), self.columns.minimum_width() + margins.left() + margins.right()), hint.height())

    # ----- session -> view -----
    def _on_loaded(self) -> None:
        # The rows come with the states at the session's tick; tickChanged, which
        # Session.load emits right after loaded, then only sets the caption and selection.
        # The states are read once per load, not twice.
        if held(self):  # filled in this dock's own pass
            self._stale = True
            return
        self._stale = False
        ready = self.session.ready
        self.model.set_playthrough(self.session.playthrough if ready else None, self.session.state if ready else None, self.session.prepared)

    def _on_tick(self, tick: int) -> None:
        self._preview.cancel()
        self._show_state(self.session.state)

    def catch_up(self) -> None:
        """Fill the table the load put off (``visibility.held``), at the session's tick."""
        if self._stale:
            self._on_loaded()
            self._on_tick(self.session.tick)

    def _on_tick_preview(self, tick: int) -> None:
        # A far drag frame changes most rows of a crowd (more than a frame): the cells
        # follow the dragged tick when the drag pauses, and the committed tick at once.
        self._preview(tick)

    def _show_preview(self, tick: int) -> None:
        self._show_state(self.session.state_at(tick))

    def _show_state(self, state: StateAtTick | None) -> None:
        if self._stale:
            return  # catch_up shows the tick (a drag preview too: the rows are the previous save's)
        self.model.set_state(state)
        self.caption.setText(f"NPCs at tick {state.tick:,}" if state is not None else "No save open")
        self._select_npc(self.session.npc)

    def _select_npc(self, sid) -> None:
        if self._stale:
            return
        row = self.model.row_of(sid)
        selection = self.view.selectionModel()
        if row < 0:
            selection.clearSelection()
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if selection.isRowSelected(index.row(), QModelIndex()):
            return
        selection.select(index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        self.view.scrollTo(index)

    # ----- view -> session -----
    def _on_selection(self, *_args) -> None:
        rows = self.view.selectionModel().selectedRows()
        if not rows:
            return
        sid = self.proxy.mapToSource(rows[0]).data(SID_ROLE)
        if sid is not None:
            self.session.set_npc(sid)

    #: The NPC value each column shows, as a ``models.explain`` target suffix.
    WHY_COLUMNS = {
        NpcTableModel.NAME: "score",
        NpcTableModel.LEVEL: "level",
        NpcTableModel.SCORE: "score",
        NpcTableModel.STRESS: "stress",
        NpcTableModel.WALK_AWAYS: "walk_aways",
    }

    def why_target(self) -> str | None:
        """The target of the current cell: the NPC value of its column, or its interaction in progress."""
        index = self.view.currentIndex()
        if not index.isValid():
            return None
        row = self.proxy.mapToSource(index).row()
        npc = self.model.npc_state(row)
        if npc is None:
            return None
        if index.column() == NpcTableModel.INTERACTION:
            found = self.model.in_progress(npc.stable_id)
            return f"fact:{found[0]}" if found is not None else f"npc:{npc.slug}.walk_aways"
        return f"npc:{npc.slug}.{self.WHY_COLUMNS.get(index.column(), 'score')}"

    def selected_npc(self) -> StableId | None:
        """The StableId of the selected row, or None."""
        rows = self.view.selectionModel().selectedRows()
        return self.proxy.mapToSource(rows[0]).data(SID_ROLE) if rows else None
