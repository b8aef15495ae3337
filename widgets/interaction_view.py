"""One NPC's conversations at the session tick: the §3.2 state machine and a table.

``InteractionView`` follows ``session.npcChanged``, ``tickChanged``, ``factChanged``
and ``loaded``. The header names the NPC with their relationship level, stress
against threshold and walk-aways against tolerance; the diagram
(``widgets.interaction_diagram``) counts the transitions the NPC's interactions
took and shows forbidden ones in red with their I001 finding; the table lists the
interactions. Choosing an NPC in the header or a row in the table goes back to the
session as ``set_npc`` / ``set_fact``.
"""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from models.types import FactId, InteractionMetadata, InteractionState

from .interaction_diagram import StateMachineDiagram, diagram_data
from .state_colors import INTERACTION_COLORS, state_label

_DISPLAY, _FONT, _FOREGROUND, _TOOLTIP, _USER = (
    Qt.DisplayRole.value, Qt.FontRole.value, Qt.ForegroundRole.value, Qt.ToolTipRole.value, Qt.UserRole.value)
_STATE_INK = {state: color.darker(130) for state, color in INTERACTION_COLORS.items()}

#: Column titles of the interaction table, in order.
INTERACTION_COLUMNS = ("FactId", "Started", "Ended", "State", "Topics", "Location", "Initiated by", "Confrontation")


class InteractionTableModel(QAbstractTableModel):
    """The interactions of one NPC at one tick, as rows of (FactId, InteractionMetadata).

    Sorting reorders the row list with one Python sort (no proxy needed for the
    few thousand rows one NPC can have).
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[FactId, InteractionMetadata]] = []
        self._natural: list[tuple[FactId, InteractionMetadata]] = []
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.AscendingOrder)
        self._game_time = str
        self._bold = QFont()
        self._bold.setBold(True)

    def set_rows(self, rows: list[tuple[FactId, InteractionMetadata]], game_time=str) -> None:
        """Show ``rows`` (in started-tick order); ``game_time`` formats ticks for tooltips."""
        self.beginResetModel()
        self._natural = rows
        self._game_time = game_time
        self._rows = self._sorted(*self._sort)
        self.endResetModel()

    def fact_id(self, row: int) -> FactId:
        """The FactId of ``row``."""
        return self._rows[row][0]

    def meta(self, row: int) -> InteractionMetadata:
        """The interaction metadata of ``row``."""
        return self._rows[row][1]

    def row_of(self, fact_id: FactId | None) -> int | None:
        """The row showing ``fact_id`` or None."""
        for k, (fid, _) in enumerate(self._rows):
            if fid == fact_id:
                return k
        return None

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(INTERACTION_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):
        if orientation == Qt.Horizontal and int(role) == _DISPLAY:
            return INTERACTION_COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        if not index.isValid():
            return None
        role = int(role)
        fact_id, meta = self._rows[index.row()]
        col = index.column()
        if role == _DISPLAY:
            return self._display(fact_id, meta, col)
        if role == _FOREGROUND and col == 3:
            return _STATE_INK[meta.interaction_state]
        if role == _FONT and meta.interaction_state.in_progress:
            return self._bold
        if role == _TOOLTIP and col in (1, 2):
            tick = meta.started_tick if col == 1 else meta.ended_tick
            return f"game time {self._game_time(tick)}" if tick is not None else "still in progress"
        if role == _USER:
            return fact_id
        return None

    @staticmethod
    def _display(fact_id: FactId, meta: InteractionMetadata, col: int):
        if col == 0:
            return fact_id
        if col == 1:
            return str(meta.started_tick)
        if col == 2:
            return str(meta.ended_tick) if meta.ended_tick is not None else "—"
        if col == 3:
            return state_label(meta.interaction_state)
        if col == 4:
            return ", ".join(meta.topics)
        if col == 5:
            return meta.location
        if col == 6:
            return "player" if meta.player_initiated else "NPC"
        return "yes" if meta.confrontation else ""

    def _sorted(self, column: int, order: Qt.SortOrder):
        keys = {
            1: lambda r: r[1].started_tick,
            2: lambda r: (r[1].ended_tick is None, r[1].ended_tick or 0),
            3: lambda r: r[1].interaction_state.value,
            4: lambda r: r[1].topics,
            5: lambda r: r[1].location,
            6: lambda r: r[1].player_initiated,
            7: lambda r: r[1].confrontation,
        }
        key = keys.get(column)
        rows = list(self._natural)
        if key is not None:
            rows.sort(key=key)
        if order == Qt.DescendingOrder and column >= 0:
            rows.reverse()
        return rows

    def sort(self, column: int, order: Qt.SortOrder = Qt.AscendingOrder) -> None:
        """Reorder rows by ``column`` (column 0 or < 0: started-tick order)."""
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._rows = self._sorted(column, order)
        self.layoutChanged.emit()


class InteractionView(QWidget):
    """The selected NPC's interactions at the session tick.

    Args:
        session: the app session (``app.session.Session``).
        parent: optional parent widget.

    Attributes:
        diagram: the ``StateMachineDiagram``.
        model: the ``InteractionTableModel``.
        table: the ``QTableView`` of the model.
        npc_choice: the NPC combo box of the header.
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("interactionView")
        self.session = session
        self._findings_by_tick: dict[int, list] = {}
        self._transitions: list = []
        self._states_now: Counter = Counter()
        self._syncing = False
        self._shown: tuple | None = None
        self._rows: list = []

        self.heading = QLabel()
        self.heading.setTextFormat(Qt.RichText)
        self.npc_choice = QComboBox()
        self.npc_choice.setMinimumContentsLength(16)
        self.diagram = StateMachineDiagram()
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet("color: #5f6b78;")
        self.faults = QLabel()
        self.faults.setTextFormat(Qt.RichText)
        self.faults.setWordWrap(True)
        self.faults.setStyleSheet("color: #c92a2a;")

        self.model = InteractionTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.AscendingOrder)
        self.table.setSortingEnabled(True)
        for col, width in enumerate((210, 62, 62, 128, 140, 105, 90)):
            self.table.setColumnWidth(col, width)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.diagram, 1)
        left_layout.addWidget(self.caption)
        left_layout.addWidget(self.faults)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 5)
        splitter.setStretchFactor(1, 6)
        splitter.setSizes([540, 560])
        self.splitter = splitter

        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(QLabel("NPC:"))
        top.addWidget(self.npc_choice)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        self.npc_choice.currentIndexChanged.connect(self._npc_chosen)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        session.loaded.connect(self._on_loaded)
        session.tickChanged.connect(self._maybe_refresh)
        session.npcChanged.connect(self._maybe_refresh)
        session.factChanged.connect(self._on_fact)
        self._on_loaded()

    # ----- session events -----
    def _on_loaded(self) -> None:
        playthrough = self.session.playthrough
        self._findings_by_tick = {}
        self.npc_choice.blockSignals(True)
        self.npc_choice.clear()
        if playthrough is not None:
            for f in playthrough.findings:
                if f.code == "I001" and f.tick is not None:
                    self._findings_by_tick.setdefault(f.tick, []).append(f)
            for sid in playthrough.save.npcs:
                self.npc_choice.addItem(playthrough.npc_name(sid), sid)
        self.npc_choice.blockSignals(False)
        self.refresh()

    def _on_fact(self, fact_id: FactId | None) -> None:
        self._draw_diagram()
        self._select(fact_id)

    def _shown_key(self) -> tuple | None:
        """What the view depends on: the NPC's state version and its interaction changes.

        Stepping to a tick where neither changed leaves diagram and table as they are.
        """
        state = self.session.state
        npc = self.session.npc
        if state is None:
            return None
        version, _lines, changes = state.index.npc_signature(npc, state.tick) if npc is not None else (0, 0, 0)
        return (id(state.index), npc, version, changes, self.session.fact)

    def _maybe_refresh(self, *_args) -> None:
        # Session.load emits loaded, npcChanged and tickChanged: draw once; and a
        # tick that changed nothing for this NPC costs nothing.
        if self._shown_key() != self._shown:
            self.refresh()
        else:
            self._show_texts()

    def _show_texts(self) -> None:
        """Heading and caption, which name the tick, for the current tick."""
        state, npc_id = self.session.state, self.session.npc
        npc = state.npc(npc_id) if state is not None and npc_id is not None else None
        if npc is None:
            return
        self._show_heading(npc, self._rows, state.tick)
        self.caption.setText(
            f"Badges count the transitions {self.session.playthrough.npc_name(npc_id)}'s conversations took up to tick "
            f"{state.tick}. Filled node: a conversation in progress now. Blue: the selected conversation's path. "
            "Red dashed: a move schema §3.2 forbids.")

    def refresh(self, *_args) -> None:
        """Redraw header, diagram and table for the session's NPC and tick."""
        session = self.session
        state = session.state
        npc_id = session.npc
        self._shown = self._shown_key()
        self._sync_combo(npc_id)
        npc = state.npc(npc_id) if state is not None and npc_id is not None else None
        if npc is None:
            self.heading.setText("<b>Interactions</b> — " + ("no save open" if state is None else "no NPC selected"))
            self._transitions, self._states_now = [], Counter()
            self.caption.setText("")
            self.model.set_rows([])
            self._draw_diagram()
            return
        rows = list(state.knowledge.interaction_facts_for(npc.slug))
        rows.sort(key=lambda r: (r[1].started_tick, len(r[0]), r[0]))
        self._rows = rows
        self.model.set_rows(rows, session.playthrough.save.game_time)
        self._transitions = state.transitions(npc_id)
        values = Counter(meta.interaction_state._value_ for _, meta in rows)  # see diagram_data
        self._states_now = Counter({InteractionState(v): n for v, n in values.items()})
        self._draw_diagram()
        self._show_texts()
        self._select(session.fact)

    def _draw_diagram(self) -> None:
        in_progress = {st for st in self._states_now if st.in_progress}
        data = diagram_data(self._transitions, self._findings_by_tick, self._states_now, in_progress,
                            self.session.fact)
        self.diagram.show_data(data)
        self._show_faults(data)

    def _show_heading(self, npc, rows, tick: int) -> None:
        name = self.session.playthrough.npc_name(npc.stable_id)
        rel = npc.relationship
        tol, itol = npc.tolerance, npc.interaction_tolerance
        stress_color = "#c92a2a" if tol.over_threshold else "#1d232a"
        walk_color = "#b35c00" if npc.walk_aways > itol.walk_away_threshold else "#1d232a"
        muted = "color:#5f6b78"
        self.heading.setText(
            f"<span style='font-size:13pt'><b>{name}</b></span> <span style='{muted}'>at tick {tick}</span><br>"
            f"{npc.level.display_name} <span style='{muted}'>(score {rel.score:.1f})</span> · "
            f"stress <b style='color:{stress_color}'>{tol.current_stress}/{tol.threshold}</b> · "
            f"walk-aways <b style='color:{walk_color}'>{npc.walk_aways}</b>"
            f"<span style='{muted}'> (tolerates {itol.walk_away_threshold})</span> · "
            f"{len(rows)} conversation{'s' if len(rows) != 1 else ''}")

    def _show_faults(self, data) -> None:
        lines = []
        for (source, target), items in data.illegal.items():
            for rec, finding in items[:3]:
                src = state_label(source) if source else "nothing"
                what = f"{finding.code}: {finding.message}" if finding else "illegal transition"
                lines.append(f"⚠ tick {rec.tick}: {src} → {state_label(target)} — {what}")
        self.faults.setText("<br>".join(lines[:6]))

    # ----- selection -----
    def _sync_combo(self, npc_id) -> None:
        k = self.npc_choice.findData(npc_id) if npc_id is not None else -1
        if k != self.npc_choice.currentIndex():
            self.npc_choice.blockSignals(True)
            self.npc_choice.setCurrentIndex(k)
            self.npc_choice.blockSignals(False)

    def _npc_chosen(self, index: int) -> None:
        if index >= 0:
            self.session.set_npc(self.npc_choice.itemData(index))

    def _select(self, fact_id: FactId | None) -> None:
        self._syncing = True
        try:
            row = self.model.row_of(fact_id)
            if row is None:
                self.table.clearSelection()
            else:
                self.table.selectRow(row)
                self.table.scrollTo(self.model.index(row, 0))
        finally:
            self._syncing = False

    def _row_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._syncing and current.isValid():
            self.session.set_fact(self.model.fact_id(current.row()))
