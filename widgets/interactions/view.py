"""One NPC's conversations at the session tick: the §3.2 state machine and a table.

``InteractionView`` follows ``session.npcChanged``, ``tickChanged``, ``factChanged``
and ``loaded``. The header names the NPC with their relationship level, stress
against threshold and walk-aways against tolerance; the diagram
(``widgets.interactions.diagram``) counts the transitions the NPC's interactions
took and shows forbidden ones in red with their I001 finding; the table lists the
interactions. Choosing an NPC in the header or a row in the table goes back to the
session as ``set_npc`` / ``set_fact``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import islice

from narrative_debugger.models.domain.types import FactId, InteractionMetadata, InteractionState
from narrative_debugger.models.explain.chain import fmt_num
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.kit.fact_model import DIFFERS_BACKGROUND
from narrative_debugger.widgets.interactions.diagram import StateMachineDiagram, diagram_data
from narrative_debugger.widgets.kit.state_colors import INTERACTION_COLORS, brush_of, ink_on_canvas, ink_tint, palette_colors, row_tint, state_label
from narrative_debugger.widgets.kit.tables import ElideDelegate, fit_columns, hot_table, show_column, signal_all, signal_rows
from narrative_debugger.widgets.kit.plain_text import WrappedLabel, esc, name_text, plain_tip
from narrative_debugger.widgets.session import npc_names
from narrative_debugger.widgets.kit.visibility import obscured
from narrative_debugger.widgets.kit.why import add_why_action
from narrative_debugger.widgets.kit.entry_edit import ConversationWhatIf
from narrative_debugger.widgets.kit.roles import BACKGROUND as _BACKGROUND, DISPLAY as _DISPLAY, FONT as _FONT
from narrative_debugger.widgets.kit.roles import FOREGROUND as _FOREGROUND, HORIZONTAL as _HORIZONTAL, TOOLTIP as _TOOLTIP, USER as _USER
from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
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

_ROLES = frozenset((_DISPLAY, _FONT, _FOREGROUND, _TOOLTIP, _USER, _BACKGROUND))
#: A tick step re-reads the cached rows up to this many (the rows shown, usually);
#: past it the cache is dropped and every row is signalled.
STEP_REREAD_MAX = 2_000
#: Light-palette inks (``ink_tint`` lightens them on a dark one): the heading's
#: over-threshold stress, its walk-aways past tolerance, and secondary text. A state's
#: text is its colour made to read on the table (``ink_on_canvas``).
_ALARM, _WARN, _MUTED = QColor("#c92a2a"), QColor("#b35c00"), QColor("#5f6b78")
#: The B column's background where B's state differs (``row_tint``: a dark shade on a dark palette).
_DIFFERS = QColor(DIFFERS_BACKGROUND)

#: Column titles of the interaction table, in order.
INTERACTION_COLUMNS = ("FactId", "Started", "Ended", "State", "Topics", "Location", "Initiated by", "Confrontation", "B")
#: The B column: side B's state of the same interaction (NPC slug and sequence) while comparing.
COL_B = len(INTERACTION_COLUMNS) - 1
#: The B column of an interaction that B does not have.
NOT_IN_B = "not in B"
NON_BREAKING_HYPHEN = "\u2011"  # as "-" to the eye; no line ends after it


def _unbroken(rich: str) -> str:
    """``rich`` (rich text) kept on one line when its label wraps at its spaces (not at a
    hyphen: ``white-space:nowrap`` still breaks "walk-|aways"; write ``NON_BREAKING_HYPHEN``)."""
    return f"<span style='white-space:nowrap'>{rich}</span>"


class InteractionTableModel(QAbstractTableModel):
    """The interactions of one NPC at one tick, resolved lazily row by row.

    The model holds the FactIds in started-tick order and the journal position;
    ``data()`` looks up ``facts[fact_id].at(position)`` only for the rows Qt asks
    for, so showing 30 000 interactions costs what showing the visible ones does.
    Started-tick order (no sort, FactId or Started column) and its reverse stay
    lazy; sorting by another column materialises every row once per refresh, and
    only while the user keeps that sort.
    """

    #: The roles ``data`` answers (``StaticTextDelegate`` asks no others).
    CELL_ROLES = _ROLES

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._ids: Sequence[FactId] = ()
        self._n = 0
        self._facts: Mapping = {}
        self._position = 0
        self._ordinal: Callable[[FactId], int | None] | None = None
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.AscendingOrder)
        self._reversed = False
        self._rows: list[tuple[FactId, InteractionMetadata]] | None = None  # materialised sort only
        self._row_index: dict[FactId, int] | None = None
        self._metas: dict[int, InteractionMetadata] = {}
        self._natural_rows: list[tuple[FactId, InteractionMetadata]] | None = None
        self._game_time = str
        self._bold = QFont()
        self._bold.setBold(True)
        self._fact_b: Callable[[FactId], object] | None = None

    def set_b(self, fact_b: Callable[[FactId], object] | None) -> None:
        """While comparing: FactId -> side B's FactKnowledge at the tick (None leaves comparison).

        Interaction FactIds name the NPC slug and sequence number, so one FactId is the
        same interaction in A and B.
        """
        self._fact_b = fact_b

    def b_state(self, fact_id: FactId) -> InteractionState | None:
        """Side B's state of the interaction, or None when B lacks it (or not comparing)."""
        fact = self._fact_b(fact_id) if self._fact_b is not None else None
        meta = fact.interaction if fact is not None else None
        return meta.interaction_state if meta is not None else None

    def set_interactions(self, ids: Sequence[FactId] = (), facts: Mapping | None = None, position: int = 0,
                         game_time=str, ordinal: Callable[[FactId], int | None] | None = None,
                         count: int | None = None) -> None:
        """Show the interactions ``ids[:count]`` (in started-tick order) as of journal ``position``.

        Args:
            ids: FactIds in started-tick order (ties by FactId sequence); only read,
                never copied, so the timeline's own list can be passed with ``count``.
            facts: FactId -> ``timeline.Versions`` of FactKnowledge (``TimelineIndex.facts``).
            position: journal entries applied (``StateAtTick.position``).
            game_time: formats ticks for tooltips.
            ordinal: optional O(log N) FactId -> index in ``ids`` (None when absent);
                without it ``row_of`` searches the list.
            count: how many of ``ids`` to show (all of them when None).
        """
        n = len(ids) if count is None else count
        if (ids is self._ids and facts is self._facts and self._rows is None and self._fact_b is None
                and self._n and n):
            # The same NPC's list at another tick, in started-tick order: rows are added
            # or removed at its end and the cached rows that changed are signalled (a
            # reset would re-measure and repaint the whole table at every conversation's
            # start and end, more than a frame on a long history).
            self._game_time, self._ordinal = game_time, ordinal
            self._step_to(position, n)
            return
        self.beginResetModel()
        self._ids = ids
        self._n = n
        self._facts = facts if facts is not None else {}
        self._position = position
        self._ordinal = ordinal
        self._game_time = game_time
        self._metas = {}
        self._natural_rows = None
        self._apply_sort(*self._sort)
        self.endResetModel()

    def _step_to(self, position: int, n: int) -> None:
        """Move the rows in place to journal ``position`` with ``n`` interactions shown."""
        old_n = self._n
        self._natural_rows = None
        changed: list[int] = []
        everything = len(self._metas) > STEP_REREAD_MAX
        if everything:
            self._metas = {}  # read again when shown; every row is signalled
        else:
            for k, meta in list(self._metas.items()):
                if k >= n:
                    del self._metas[k]
                    continue
                new = self._facts[self._ids[k]].at(position).interaction
                if new is not meta:
                    self._metas[k] = new
                    if new != meta:
                        changed.append(k)
        self._position = position
        if n != old_n:
            # Natural rows old_n.. (or n..) come or go at the end, which is the top
            # when the order is reversed.
            first, last = (old_n, n - 1) if n > old_n else (n, old_n - 1)
            if self._reversed:
                first, last = 0, last - first
            if n > old_n:
                self.beginInsertRows(QModelIndex(), first, last)
                self._n = n
                self.endInsertRows()
            else:
                self.beginRemoveRows(QModelIndex(), first, last)
                self._n = n
                self.endRemoveRows()
        if everything:
            signal_all(self)
        else:
            signal_rows(self, sorted(self._natural_row(k) for k in changed))

    def _natural_meta(self, k: int) -> InteractionMetadata:
        meta = self._metas.get(k)
        if meta is None:
            meta = self._metas[k] = self._facts[self._ids[k]].at(self._position).interaction
        return meta

    def _materialise(self) -> list[tuple[FactId, InteractionMetadata]]:
        """Every shown (FactId, metadata) pair in started-tick order: O(K), for a column sort.

        Kept until the next ``set_interactions``, so sorting by another column at the
        same tick does not resolve the rows again.
        """
        if self._natural_rows is None:
            facts, position = self._facts, self._position
            rows = []
            for fact_id in islice(self._ids, self._n):
                versions = facts[fact_id]
                # Most interactions ended before ``position``: their last version needs no bisection.
                fact = versions.values[-1] if versions.positions[-1] <= position else versions.at(position)
                rows.append((fact_id, fact.interaction))
            self._natural_rows = rows
        return list(self._natural_rows)

    def _natural_row(self, row: int) -> int:
        return self._n - 1 - row if self._reversed else row

    def fact_id(self, row: int) -> FactId:
        """The FactId of ``row``."""
        if self._rows is not None:
            return self._rows[row][0]
        return self._ids[self._natural_row(row)]

    def meta(self, row: int) -> InteractionMetadata:
        """The interaction metadata of ``row``."""
        if self._rows is not None:
            return self._rows[row][1]
        return self._natural_meta(self._natural_row(row))

    def row_of(self, fact_id: FactId | None) -> int | None:
        """The row showing ``fact_id`` or None (O(log N) in started-tick order)."""
        if fact_id is None:
            return None
        if self._rows is not None:
            if self._row_index is None:
                self._row_index = {fid: k for k, (fid, _) in enumerate(self._rows)}
            return self._row_index.get(fact_id)
        if self._ordinal is not None:
            k = self._ordinal(fact_id)
            if k is None or k >= self._n or self._ids[k] != fact_id:
                return None
        else:
            try:
                k = self._ids.index(fact_id, 0, self._n)
            except ValueError:
                return None
        return self._natural_row(k)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else self._n

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(INTERACTION_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY):
        if orientation == _HORIZONTAL and int(role) == _DISPLAY:
            return INTERACTION_COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = _DISPLAY):
        role = int(role)
        if role not in _ROLES or not index.isValid():  # Qt asks for many roles this model never sets
            return None
        row = index.row()
        fact_id, meta = self.fact_id(row), self.meta(row)
        col = index.column()
        if col == COL_B:
            if self._fact_b is None:
                return None
            b = self.b_state(fact_id)
            if role == _DISPLAY:
                return state_label(b) if b is not None else NOT_IN_B
            if role == _BACKGROUND:
                return brush_of(row_tint(_DIFFERS)) if b is not meta.interaction_state else None
            if role == _FOREGROUND and b is not None:
                return ink_on_canvas(INTERACTION_COLORS[b])
            return fact_id if role == _USER else None
        if role == _DISPLAY:
            return self._display(fact_id, meta, col)
        if role == _FOREGROUND and col == 3:
            return ink_on_canvas(INTERACTION_COLORS[meta.interaction_state])
        if role == _FONT and meta.interaction_state.in_progress:
            return self._bold
        if role == _TOOLTIP and col == 0:
            return plain_tip(fact_id)
        if role == _TOOLTIP and col == 4:
            return plain_tip(", ".join(meta.topics) or "no topic")
        if role == _TOOLTIP and col in (1, 2):
            tick = meta.started_tick if col == 1 else meta.ended_tick
            return f"game time {self._game_time(tick)}" if tick is not None else "still in progress"
        if role == _USER:
            return fact_id
        return None

    def cell(self, index: QModelIndex) -> tuple:
        """``(display, font, alignment, background, foreground)`` of one cell: what
        ``data`` gives for each role, in one call (``cell_text.StaticTextDelegate``)."""
        row, col = index.row(), index.column()
        fact_id, meta = self.fact_id(row), self.meta(row)
        if col == COL_B:
            if self._fact_b is None:
                return None, None, None, None, None
            b = self.b_state(fact_id)
            return (state_label(b) if b is not None else NOT_IN_B, None, None,
                    brush_of(row_tint(_DIFFERS)) if b is not meta.interaction_state else None,
                    ink_on_canvas(INTERACTION_COLORS[b]) if b is not None else None)
        font = self._bold if meta.interaction_state.in_progress else None
        ink = ink_on_canvas(INTERACTION_COLORS[meta.interaction_state]) if col == 3 else None
        return self._display(fact_id, meta, col), font, None, None, ink

    @staticmethod
    def _display(fact_id: FactId, meta: InteractionMetadata, col: int):
        if col == 0:
            return fact_id
        if col == 1:
            return f"{meta.started_tick:,}"
        if col == 2:
            return f"{meta.ended_tick:,}" if meta.ended_tick is not None else "—"
        if col == 3:
            return state_label(meta.interaction_state)
        if col == 4:
            return ", ".join(meta.topics)
        if col == 5:
            return meta.location
        if col == 6:
            return "player" if meta.player_initiated else "NPC"
        return "yes" if meta.confrontation else ""

    def _apply_sort(self, column: int, order: Qt.SortOrder) -> None:
        """Set the row order for ``column``: lazy for started-tick order, else materialised.

        A stable sort of started-tick order by started tick keeps it, so column 1
        (and 0 or < 0, which never sorted) is the natural order, reversed when
        descending (column >= 0), exactly as a sort of the materialised rows was.
        """
        keys = {
            2: lambda r: (r[1].ended_tick is None, r[1].ended_tick or 0),
            3: lambda r: r[1].interaction_state.value,
            4: lambda r: r[1].topics,
            5: lambda r: r[1].location,
            6: lambda r: r[1].player_initiated,
            7: lambda r: r[1].confrontation,
        }
        descending = order == Qt.DescendingOrder and column >= 0
        self._row_index = None
        key = keys.get(column)
        if key is None:
            self._rows = None
            self._reversed = descending
            return
        rows = self._materialise()
        rows.sort(key=key)
        if descending:
            rows.reverse()
        self._rows = rows
        self._reversed = False

    def sort(self, column: int, order: Qt.SortOrder = Qt.AscendingOrder) -> None:
        """Reorder rows by ``column`` (column 0 or < 0: started-tick order)."""
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order)
        self._apply_sort(column, order)
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
        whatif_action: "What if… this conversation's sentiment" (the table's context
            menu, issue 38): enabled on a conversation the game scored.

    Signals:
        whatIfRequested(str, object): a JSON pointer into the save and the value the user
            typed in the dialog the action opened (as the Journal's).
    """

    whatIfRequested = Signal(str, object)

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("interactionView")
        self.session = session
        self._findings_by_tick: dict[int, list] = {}
        self._counts: dict = {}
        self._illegal: list = []
        self._states_now: Counter = Counter()
        self._syncing = False
        self._shown: tuple | None = None
        self._load_stale = False  # a save loaded while the view was behind another tab
        self._behind = False  # a tick or NPC came while another tab was in front
        self._count = 0

        # Wraps between its parts when narrow (the NPC box beside it cut the second line off);
        # as high as its lines, without asking the tab for height-for-width.
        self.heading = WrappedLabel()
        self.heading.setTextFormat(Qt.RichText)
        self.npc_choice = QComboBox()
        self.npc_choice.setMinimumContentsLength(16)
        self.diagram = StateMachineDiagram()
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.faults = QLabel()
        self.faults.setTextFormat(Qt.RichText)
        self.faults.setWordWrap(True)

        self.model = InteractionTableModel(self)
        self.table = QTableView()
        hot_table(self.table)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.AscendingOrder)
        self.table.setSortingEnabled(True)
        # The FactId keeps its distinct end ("…lera-sessik_012"); its tooltip has it whole.
        self.table.setItemDelegateForColumn(0, ElideDelegate(Qt.ElideLeft, self.table))
        for col in (INTERACTION_COLUMNS.index("Started"), INTERACTION_COLUMNS.index("Ended")):  # a tick keeps its last digits
            self.table.setItemDelegateForColumn(col, ElideDelegate(Qt.ElideLeft, self.table))
        fit_columns(self.table, dict(enumerate(("…lera-sessik_012", "302,029", "302,029", "Walked away", "fishing, weather",
                                                "harbor_office", "player", "yes"))))
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnHidden(COL_B, True)  # until a comparison (``show_column`` then fits it)
        # B's state sits right after A's (a visual move: the model keeps its columns), in view
        # at 1440 px; as the last column it was reached only by scrolling past Location.
        header = self.table.horizontalHeader()
        header.moveSection(header.visualIndex(COL_B), header.visualIndex(INTERACTION_COLUMNS.index("State")) + 1)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.diagram, 1)
        left_layout.addWidget(SteadyLabel(self.caption))
        left_layout.addWidget(self.faults)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([440, 660])
        self.splitter = splitter

        top = QHBoxLayout()
        top.addWidget(SteadyLabel(self.heading), 1)
        top.addWidget(QLabel("NPC:"))
        top.addWidget(self.npc_choice)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        self.npc_choice.currentIndexChanged.connect(self._npc_chosen)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        self.why_action = add_why_action(self.table, session, self.why_target)
        # "What if the player had been kinder here": the sentiment of the RelationshipInteraction
        # that scored the conversation (the trial took 9 actions through the Journal's filters).
        self.conversation_whatif = ConversationWhatIf(self.table, session, self._current_fact, self.whatIfRequested)
        self.whatif_action = self.conversation_whatif.action
        # The diagram's nodes and edges are the moves of the selected interaction.
        self.diagram_why_action = add_why_action(self.diagram, session, lambda: f"fact:{session.fact}" if session.fact and session.fact.startswith("interaction.") else None)
        session.loaded.connect(self._on_loaded)
        session.findingsChanged.connect(self._on_findings)
        session.comparisonChanged.connect(self.refresh)  # the B column comes or goes
        session.tickChanged.connect(self._maybe_refresh)
        session.npcChanged.connect(self._maybe_refresh)
        session.factChanged.connect(self._on_fact)
        self._apply_palette()
        self._on_loaded()

    def _apply_palette(self) -> None:
        """The caption's and the faults' colours for the palette, light or dark."""
        pal = self.palette()
        self.caption.setStyleSheet(f"color: {ink_tint(_MUTED, pal).name()};")
        self.faults.setStyleSheet(f"color: {ink_tint(_ALARM, pal).name()};")

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange) and hasattr(self, "table"):
            self._apply_palette()
            if not self._load_stale:
                self._show_texts()  # the heading's inks
            self.table.viewport().update()  # the State column's ink

    # ----- session events -----
    @staticmethod
    def _illegal_moves_by_tick(playthrough) -> dict[int, list]:
        """The I001 findings (moves schema §3.2 forbids) by tick."""
        out: dict[int, list] = {}
        for f in playthrough.findings if playthrough is not None else ():
            if f.code == "I001" and f.tick is not None:
                out.setdefault(f.tick, []).append(f)
        return out

    def _on_findings(self) -> None:
        if self._load_stale:
            return  # rebuilt when shown
        self._findings_by_tick = self._illegal_moves_by_tick(self.session.playthrough)
        self._shown = None
        self.refresh()

    def _on_loaded(self) -> None:
        """A new save: the NPC list and the view are rebuilt now, or once the view is
        shown when it is behind another tab (a list of thousands of NPCs)."""
        self._load_stale = obscured(self)
        if self._load_stale:
            self._shown = None
            return
        playthrough = self.session.playthrough
        self._findings_by_tick = self._illegal_moves_by_tick(playthrough)
        self.npc_choice.blockSignals(True)
        self.npc_choice.clear()
        if playthrough is not None:
            for sid, name in npc_names(playthrough, self.session.prepared).items():
                self.npc_choice.addItem(name, sid)
        self.npc_choice.blockSignals(False)
        self.refresh()

    def _on_fact(self, fact_id: FactId | None) -> None:
        if self._load_stale:
            return
        self._draw_diagram()
        self._select(fact_id)

    def _shown_key(self) -> tuple | None:
        """What the view depends on: the NPC's state version, its interaction changes
        and its transition count (a forbidden move can leave the fact unchanged).

        Stepping to a tick where none changed leaves diagram and table as they are.
        """
        state = self.session.state
        npc = self.session.npc
        if state is None:
            return None
        if npc is None:
            return (id(state.index), npc, 0, 0, 0, self.session.fact)
        version, _lines, changes = state.index.npc_signature(npc, state.tick)
        moves = state.index.transition_total(npc, state.position)
        compared = (id(self.session.comparison), state.tick) if self.session.comparison is not None else None
        return (id(state.index), npc, version, changes, moves, self.session.fact, compared)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._load_stale:
            self._behind = False
            self._on_loaded()
        elif self._behind:
            self._behind = False
            self._maybe_refresh()

    def _maybe_refresh(self, *_args) -> None:
        # Session.load emits loaded, npcChanged and tickChanged: draw once; and a
        # tick that changed nothing for this NPC costs nothing.
        if self._load_stale:
            return  # behind another tab since the load: showEvent rebuilds it
        if obscured(self):
            self._behind = True  # behind another tab: showEvent catches up
            return
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
        self._show_heading(npc, self._count, state.tick)
        self.caption.setTextFormat(Qt.PlainText)  # names an NPC
        self.caption.setText(
            f"Badges count the transitions {name_text(self.session.playthrough, npc_id)}'s conversations took up to tick "
            f"{state.tick:,}. Filled node: a conversation in progress now. Blue: the selected conversation's path. "
            "Red dashed: a move schema §3.2 forbids.")

    def refresh(self, *_args) -> None:
        """Redraw header, diagram and table for the session's NPC and tick.

        Costs O(log N) plus the visible rows: the table resolves rows lazily, the
        header and node counts come from the NPC's interaction summary and the edge
        counts from the timeline's per-kind transition indices. Faulty saves where
        those differ from the prefix-range form (``StateAtTick.interactions_exact``
        False) list the rows the slow way.
        """
        session = self.session
        state = session.state
        npc_id = session.npc
        self._shown = self._shown_key()
        self._sync_combo(npc_id)
        npc = state.npc(npc_id) if state is not None and npc_id is not None else None
        if npc is None:
            self.heading.setText("<b>Interactions</b> — " + ("no save open" if state is None else "no NPC selected"))
            self._counts, self._illegal, self._states_now, self._count = {}, [], Counter(), 0
            self.caption.setText("")
            self.model.set_interactions()
            self._draw_diagram()
            return
        game_time = session.playthrough.save.game_time
        state_b = session.state_b
        self.model.set_b(state_b.knowledge.fact if state_b is not None else None)
        show_column(self.table, COL_B, state_b is not None, [NOT_IN_B, *(state_label(st) for st in InteractionState)])
        if state.interactions_exact(npc_id):
            index = state.index
            count = index.interaction_count(npc_id, state.position)
            summary = state.knowledge.summary(npc_id)
            self._states_now = Counter({st: summary.in_state(st) for st in InteractionState if summary.in_state(st)})
            # The timeline's creation-ordered list itself, read up to ``count``: no copy.
            self.model.set_interactions(index.interactions_by_npc.get(npc_id, []), index.facts, state.position,
                                        game_time, partial(index.interaction_ordinal, npc_id), count)
        else:  # a faulty save (shared slug, lost metadata, decreasing ticks): the prefix range
            rows = list(state.knowledge.interaction_facts_for(npc.slug))
            rows.sort(key=lambda r: (r[1].started_tick, len(r[0]), r[0]))
            count = len(rows)
            self._states_now = Counter(meta.interaction_state for _, meta in rows)
            self.model.set_interactions([fid for fid, _ in rows], state.index.facts, state.position, game_time)
        self._count = count
        self._counts = state.transition_counts(npc_id)
        self._illegal = state.illegal_transitions(npc_id)
        self._draw_diagram()
        self._show_texts()
        self._select(session.fact)

    def _draw_diagram(self) -> None:
        state, npc_id, fact = self.session.state, self.session.npc, self.session.fact
        path = []
        if state is not None and npc_id is not None and fact is not None:
            path = [rec for rec in state.fact_transitions(fact) if rec.npc == npc_id]
        in_progress = {st for st in self._states_now if st.in_progress}
        data = diagram_data(self._counts, self._illegal, path, self._findings_by_tick, self._states_now, in_progress)
        self.diagram.show_data(data)
        self._show_faults(data)

    def _show_heading(self, npc, count: int, tick: int) -> None:
        name = esc(name_text(self.session.playthrough, npc.stable_id))
        rel = npc.relationship
        tol, itol = npc.tolerance, npc.interaction_tolerance
        pal = self.palette()  # light or dark: the numbers were #1d232a, unseen on a dark palette
        text = palette_colors(pal).ink.name()
        stress_color = ink_tint(_ALARM, pal).name() if tol.over_threshold else text
        walk_color = ink_tint(_WARN, pal).name() if npc.walk_aways > itol.walk_away_threshold else text
        muted = f"color:{ink_tint(_MUTED, pal).name()}"
        # A narrow heading wraps between these parts only: each keeps its words together, "·" ends a line.
        parts = (
            f"{npc.level.display_name} <span style='{muted}'>(score {fmt_num(rel.score)})</span>",
            f"stress <b style='color:{stress_color}'>{tol.current_stress}/{tol.threshold}</b>",
            f"walk{NON_BREAKING_HYPHEN}aways <b style='color:{walk_color}'>{npc.walk_aways}</b>"
            f"<span style='{muted}'> (tolerates {itol.walk_away_threshold})</span>",
            counted(count, "conversation"),
        )
        self.heading.setText(
            f"<span style='font-size:13pt'><b>{name}</b></span> <span style='{muted}'>{_unbroken(f'at tick {tick:,}')}</span><br>"
            + "&nbsp;· ".join(_unbroken(part) for part in parts))

    def _show_faults(self, data) -> None:
        lines = []
        for (source, target), items in data.illegal.items():
            for rec, finding in items[:3]:
                src = state_label(source) if source else "nothing"
                what = f"{finding.code}: {finding.message}" if finding else "illegal transition"
                lines.append(esc(f"⚠ tick {rec.tick:,}: {src} → {state_label(target)} — {what}"))
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

    def why_target(self) -> str | None:
        """``fact:FACT_ID`` of the current row: its path through the state machine (schema §3.2)."""
        current = self.table.currentIndex()
        return f"fact:{self.model.fact_id(current.row())}" if current.isValid() else None

    def _row_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.conversation_whatif.update()
        if not self._syncing and current.isValid():
            self.session.set_fact(self.model.fact_id(current.row()))

    def _current_fact(self) -> FactId | None:
        current = self.table.currentIndex()
        return self.model.fact_id(current.row()) if current.isValid() else None

    def conversation_entry(self, fact_id: FactId | None = None) -> int | None:
        """The journal index of the RelationshipInteraction that scored conversation
        ``fact_id`` (default: the current row's), or None (``whatif.entries``)."""
        return self.conversation_whatif.entry(fact_id)

    def edit_conversation(self, fact_id: FactId | None = None):
        """Open "What if… edit this entry" on the sentiment of conversation ``fact_id``
        (default: the current row's); on Replay, ``whatIfRequested`` carries the pointer
        and value. Returns the dialog, or None when the conversation was not scored."""
        return self.conversation_whatif.edit(fact_id)
