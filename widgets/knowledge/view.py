"""What the player knows at the session tick: a filterable fact table and a graph.

``KnowledgeView`` follows the session (style.md): it redraws on ``loaded`` and
``tickChanged``, only updates a label on ``tickPreview``, marks the selection on
``npcChanged``/``factChanged``, and sends the user's choices back through
``session.set_fact`` and ``session.set_npc``. The table is an item model over the
timeline's read-only fact mapping (``widgets.kit.fact_model``); the graph is drawn only
while its tab is visible (``widgets.knowledge.graph``).
"""

from __future__ import annotations

from collections.abc import Sequence


from narrative_debugger.models.domain.types import FactId, KnowledgeConfidence, KnowledgeState
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.plain_text import ElidedLabel, ElidingComboBox
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.knowledge.fact_keys import BothKeysAt, ComparedFacts, FactKeysAt, compared_at, creation_order, take_prepared
from narrative_debugger.widgets.session import npc_names
from narrative_debugger.widgets.kit.fact_model import (
    COL_B, COL_CATEGORY, COL_FACT, COL_INTERACTION, COL_SOURCE, COL_STATE, FactFilterProxy, FactTableModel, b_samples, categories_in,
)
from narrative_debugger.widgets.knowledge.graph import KnowledgeGraph
from narrative_debugger.widgets.kit.tables import ElideDelegate, RowsInViewWatch, ShareColumns, hot_table, show_column
from narrative_debugger.widgets.kit.state_colors import confidence_label, state_label
from narrative_debugger.widgets.kit.visibility import obscured
from narrative_debugger.widgets.kit.why import add_why_action
from narrative_debugger.widgets.kit.entry_edit import ConversationWhatIf
from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)



class KnowledgeView(QWidget):
    """The player's knowledge graph at the session tick, as a table and as a drawing.

    Args:
        session: the app session (``app.session.Session``).
        parent: optional parent widget.

    Attributes:
        model: the ``FactTableModel`` of the tick.
        proxy: the ``FactFilterProxy`` the table shows while a filter is set.
        table: the ``QTableView``.
        graph: the ``KnowledgeGraph`` tab.
        tabs: the ``QTabWidget`` holding both.
        conversation_whatif: "What if… this conversation's sentiment" on an interaction
            fact's row (issue 38; ``kit.entry_edit.ConversationWhatIf``).

    Signals:
        whatIfRequested(str, object): a JSON pointer into the save and the value typed
            in the dialog that action opened.
    """

    TABLE_TAB, GRAPH_TAB = 0, 1
    whatIfRequested = Signal(str, object)

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgeView")
        self.session = session
        # (id of the timeline, side) -> its sorted keys, moved step by step (fact_keys)
        self._keys: dict[tuple[int, str], FactKeysAt] = {}
        self._names: tuple[object, dict[int, str]] | None = None
        self._changed: frozenset[FactId] = frozenset()
        self._graph_dirty = True
        self._syncing = False
        self._shown: tuple | None = None
        self._table_shows: tuple[int, int, int] | None = None  # (id of the timeline, position, facts) the table shows
        self._categories: tuple | None = None  # (the (category, count) list, the choice) the filter shows

        self.model = FactTableModel(self)
        self.proxy = FactFilterProxy(self)  # attached to the model only while a filter is set

        self.heading = QLabel()
        self.heading.setTextFormat(Qt.RichText)
        self.preview = QLabel()
        self.preview.setStyleSheet("color: #b35c00;")

        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter FactId…")
        self.search.setClearButtonEnabled(True)
        # Wide enough to type in at 1040 x 700 (squeezed to "Fi…", two letters, by the combos).
        self.search.setMinimumWidth(self.search.fontMetrics().horizontalAdvance("Filter Fa") + 24)
        # The filters shrink, eliding, in a small window (1040 x 700 cut the row off).
        self.category = ElidingComboBox(min_text="All…")
        self.confidence = ElidingComboBox(min_text="Any…")
        self.confidence.addItem("Any confidence", None)
        for conf in KnowledgeConfidence:
            self.confidence.addItem(f"≥ {confidence_label(conf)}", conf)
        self.state_filter = ElidingComboBox(min_text="Any…")
        self.state_filter.addItem("Any state", None)
        for st in KnowledgeState:
            self.state_filter.addItem(state_label(st), st)
        for combo, name in ((self.category, "Filter by category"), (self.confidence, "Minimum confidence"),
                            (self.state_filter, "Knowledge state")):
            combo.setAccessibleName(name)
        self.changed_only = QCheckBox("Changed only")
        self.count = ElidedLabel(mode=Qt.ElideRight)
        self.count.setStyleSheet("color: #5f6b78;")

        self.table = QTableView()
        hot_table(self.table)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSortIndicator(COL_FACT, Qt.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.table.setColumnHidden(COL_B, True)  # until a comparison
        # Every column as wide as its header and values, in the table's width (``fit_columns``).
        self.table.setItemDelegateForColumn(COL_FACT, ElideDelegate(Qt.ElideLeft, self.table))  # keeps the distinct end
        self._elastic = (COL_FACT,)
        self.columns = ShareColumns(self.table, self._elastic, stretch=COL_FACT, arrow_once=True, keep=(COL_B,),
                                    follow_model=False)  # ``refresh`` and the filters measure again
        self.table.viewport().installEventFilter(self)  # after the columns' own: Category then comes or goes
        # B (confidence · state in B) sits right after A's State (a visual move), in view
        # without scrolling past Acquired tick and Interaction.
        header.moveSection(header.visualIndex(COL_B), header.visualIndex(COL_STATE) + 1)

        filters = QHBoxLayout()
        filters.addWidget(self.search, 2)
        filters.addWidget(self.category, 1)
        filters.addWidget(self.confidence)
        filters.addWidget(self.state_filter)
        filters.addWidget(self.changed_only)
        filters.addWidget(self.count)
        table_page = QWidget()
        table_layout = QVBoxLayout(table_page)
        table_layout.setContentsMargins(4, 4, 4, 4)
        table_layout.addLayout(filters)
        table_layout.addWidget(self.table, 1)

        self.graph = KnowledgeGraph(session)
        self.tabs = QTabWidget()
        self.tabs.addTab(table_page, "Table")
        self.tabs.addTab(self.graph, "Graph")

        top = QHBoxLayout()
        top.addWidget(SteadyLabel(self.heading), 1)
        top.addWidget(self.preview)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)

        self.search.textChanged.connect(lambda text: self._filter(self.proxy.set_text, text))
        self.category.currentIndexChanged.connect(
            lambda _: self._filter(self.proxy.set_category, self.category.currentData()))
        self.confidence.currentIndexChanged.connect(
            lambda _: self._filter(self.proxy.set_min_confidence, self.confidence.currentData()))
        self.state_filter.currentIndexChanged.connect(
            lambda _: self._filter(self.proxy.set_state, self.state_filter.currentData()))
        self.changed_only.toggled.connect(lambda on: self._filter(self.proxy.set_changed_only, on))
        for signal in (self.proxy.modelReset, self.proxy.layoutChanged, self.proxy.rowsInserted,
                       self.proxy.rowsRemoved, self.model.modelReset, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._update_count)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        self.tabs.currentChanged.connect(self._tab_shown)
        self.why_action = add_why_action(self.table, session, self.why_target)
        self.conversation_whatif = ConversationWhatIf(self.table, session, self._current_fact, self.whatIfRequested)

        session.loaded.connect(self._on_loaded)
        session.comparisonChanged.connect(self._on_comparison)  # the B column comes or goes
        session.tickChanged.connect(self._on_tick)
        session.tickPreview.connect(self._on_preview)
        session.npcChanged.connect(self._on_selection)
        session.factChanged.connect(self._on_fact)
        self.refresh()

    # ----- session events -----
    def _on_loaded(self) -> None:
        self._keys.clear()
        self._on_comparison()

    def _on_comparison(self) -> None:
        # Side A's trackers still hold: only B's go (its timeline changed or went).
        for key in [key for key in self._keys if key[1] != "a"]:
            del self._keys[key]
        self._table_shows = None
        if obscured(self):
            self._shown = None  # behind another tab: showEvent refreshes
            return
        self.refresh()

    def _on_tick(self, tick: int) -> None:
        self.preview.setText("")
        if obscured(self):
            return  # behind another tab: showEvent refreshes
        if self._shown_key() != self._shown:  # Session.load emits loaded, then tickChanged
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self.session.ready and self._shown_key() != self._shown:
            self.refresh()

    def _on_preview(self, tick: int) -> None:
        self.preview.setText(f"previewing tick {tick:,}…" if tick != self.session.tick else "")

    def _on_selection(self, _npc) -> None:
        self.graph.set_selection(self.session.npc, self.session.fact)

    def _on_fact(self, fact_id: FactId | None) -> None:
        self.select_fact(fact_id)
        self.graph.set_selection(self.session.npc, fact_id)

    # ----- refreshing -----
    def refresh(self) -> None:
        """Rebuild the table (and the graph if visible) for the session tick."""
        session = self.session
        state = session.state
        self._shown = self._shown_key()
        if state is None:
            self._changed = frozenset()
            self._table_shows = None
            self.model.set_facts({}, [], frozenset())
            show_column(self.table, COL_B, False)
            self._fill_categories([])
            self.heading.setText("<b>Knowledge</b> — no save open")
            self.graph.show_state(None, [], frozenset())
            return
        tracker = self._tracker(state)
        keys = tracker.move(len(state.knowledge.facts))
        self._changed = self._changed_since_previous(state)
        names = self._npc_names()
        state_b = session.state_b
        only_b = ""
        facts_b = None
        if state_b is not None:
            # While comparing, facts only B knows are rows too (A's columns empty, in italics).
            # The what-if's child made them for the tick shown when it started.
            compared = compared_at(session.prepared_b, state, state_b)
            if compared is not None:
                keys, extra, facts_b = compared.rows, len(compared.only_b), compared.facts_b
            else:
                both, extra = self._both(state, state_b).move(len(state.knowledge.facts), len(state_b.knowledge.facts))
                keys, facts_b = list(both), state_b.knowledge.facts  # the table's own copy (O(N), in C)
            if extra:
                only_b = f", <span style='color:#8a5a00'>{extra:,} only in B</span>"
        with RowsInViewWatch(self.table) as rows:
            if not self._step_table(state, tracker.order):
                # B's rows are a list of their own, or the child's (read-only: with B shown
                # the model moves no row, ``step_facts``).
                made = tracker.take_list() if keys is tracker.keys else keys
                self.model.set_facts(state.knowledge.facts, made, self._changed, names, facts_b, owned=True)
        # Rows inserted or reset: lay the table out now, so that this pass paints it once
        # (Qt's zero-timer layout would paint it a second time in the next pass).
        self.table.executeDelayedItemsLayout()
        self._table_shows = (id(state.index), state.position, len(keys)) if state_b is None else None
        show_column(self.table, COL_B, state_b is not None, b_samples())
        # The widths measured from the rows in view hold while no row in view changed
        # (a step moves a handful of facts, most of them out of view).
        self.fit_columns(remeasure=rows.touched, refit=True)
        self._fill_categories(keys)
        since = f" since tick {session.previous_tick:,}" if session.previous_tick != session.tick else ""
        clock = session.playthrough.save.game_time(state.tick)
        self.heading.setText(
            f"<b>Knowledge at tick {state.tick:,}</b> <span style='color:#5f6b78'>({clock})</span> — "
            f"{counted(len(keys), 'fact')}, <span style='color:#b35c00'>{len(self._changed):,} changed{since}</span>{only_b}")
        self._graph_dirty = True
        if self.tabs.currentIndex() == self.GRAPH_TAB:
            self._draw_graph()
        self.select_fact(session.fact)

    #: Journal entries between two ticks beyond which the table is rebuilt rather than
    #: moved row by row (their changed facts are read one by one).
    STEP_ENTRIES = 2000

    def _step_table(self, state, order: list[FactId]) -> bool:
        """Move the table from the tick it shows to ``state`` in place (``step_facts``);
        False when it must be rebuilt: another timeline, side B shown, or far away."""
        shown = self._table_shows
        if shown is None or shown[0] != id(state.index) or self.session.state_b is not None:
            return False
        _, old_position, shown_count = shown
        if abs(state.position - old_position) > self.STEP_ENTRIES:
            return False
        count = len(state.knowledge.facts)
        created = order[shown_count:count] if count > shown_count else ()
        gone = order[count:shown_count] if count < shown_count else ()
        differs = state.knowledge.changed_facts(old_position) if old_position != state.position else ()
        return self.model.step_facts(state.knowledge.facts, self._changed, created, gone, differs)

    def _shown_key(self) -> tuple | None:
        state = self.session.state
        if state is None:
            return None
        previous = self.session.state_at(self.session.previous_tick)
        return id(state.index), state.tick, state.position, previous.position

    def keys_at(self, state, side: str = "a") -> Sequence[FactId]:
        """The FactIds at ``state`` in BTreeMap order: O(K log N) for K facts created
        since the last call for this ``side`` (``"a"``, or ``"b"`` while comparing).

        The sorted list returned is reused: the next call for the same side changes it.
        """
        return self._tracker(state, side).move(len(state.knowledge.facts))

    def _tracker(self, state, side: str = "a") -> FactKeysAt:
        key = (id(state.index), side)
        tracker = self._keys.get(key)
        if tracker is None:
            if len(self._keys) >= 4:  # timelines of saves no longer open
                self._keys.clear()
            play, prepared = self.session.playthrough, self.session.prepared
            if side == "b":  # what the what-if's child made for B (none for a comparison of two saves)
                comparison = self.session.comparison
                play, prepared = (comparison.b if comparison is not None else None), self.session.prepared_b
            ours = play is not None and play.index is state.index  # the container is that playthrough's
            tracker = take_prepared(prepared) if ours else None
            tracker = self._keys[key] = tracker or FactKeysAt(creation_order(play, state.index, prepared))
        return tracker

    def _both(self, state, state_b) -> BothKeysAt:
        """The comparison's rows, following A's tick and B's (``BothKeysAt``)."""
        key = (id(state.index), "both", id(state_b.index))
        both = self._keys.get(key)
        if both is None:
            both = BothKeysAt(self._tracker(state), self._tracker(state_b, "b"))
            made = self.session.prepared_b.get(ComparedFacts)
            if made is not None:  # the what-if's child made them at its tick: step from there
                both.start_at(made)
            self._keys[key] = both
        return both

    def _npc_names(self) -> dict[int, str]:
        """StableId -> display name of every NPC of the open save (built once per save)."""
        play = self.session.playthrough
        if self._names is None or self._names[0] is not play:
            self._names = (play, npc_names(play, self.session.prepared))
        return self._names[1]

    def _changed_since_previous(self, state) -> frozenset[FactId]:
        previous = self.session.state_at(self.session.previous_tick)
        if previous is None or previous.position == state.position:
            return frozenset()
        return frozenset(state.knowledge.changed_facts(previous.position))

    #: Columns left out of a table too narrow to show every column whole, in this order:
    #: Category (the FactId's first part), Source, Interaction (set on interaction facts
    #: only). Each row's tooltip still says all of it.
    DROPPED_FIRST = (COL_CATEGORY, COL_SOURCE, COL_INTERACTION)

    def fit_columns(self, remeasure: bool = False, refit: bool = False) -> None:
        """Every column whole in the table's width: as few of ``DROPPED_FIRST`` left out
        as that takes, the FactId stretched over what is left. Where even that does not
        fit (B while comparing, as wide as its longest text), only Category is left out
        and the table scrolls, every column whole.

        At 1040 px the table has ~450 px for ~760 px of columns: fixed widths (the FactId
        215 px) put Source at the edge, cut ("Told b"), and State, Acquired and Interaction
        behind a horizontal scroll. ``remeasure``: the rows changed (a tick, a filter):
        their widths are measured again. ``refit``: the widths are set again from what is
        measured (rows scrolled into view since the last fit are measured now)."""
        table, columns = self.table, self.columns
        if remeasure:
            columns.forget()
        refit = refit or remeasure
        room = table.viewport().width()
        need = sum(columns.wanted(col) for col in range(self.model.columnCount()) if col != COL_B or not table.isColumnHidden(COL_B))
        dropped = 0
        while need > room and dropped < len(self.DROPPED_FIRST):
            need -= columns.wanted(self.DROPPED_FIRST[dropped])
            dropped += 1
        fits = need <= room
        if not fits:
            dropped = 1
        for k, col in enumerate(self.DROPPED_FIRST):
            if (k < dropped) != table.isColumnHidden(col):
                table.setColumnHidden(col, k < dropped)
                refit = True
        elastic = (COL_FACT,) if fits else ()
        if elastic != self._elastic:
            self._elastic = elastic
            columns.set_elastic(elastic)
        elif refit:
            columns.refit()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if watched is self.table.viewport() and event.type() in (QEvent.Resize, QEvent.Show):
            self.fit_columns()
        return False

    def _fill_categories(self, keys: list[FactId]) -> None:
        chosen = self.category.currentData()
        present = categories_in(keys)
        if (present, chosen) == self._categories:
            return  # most steps change no count: the combo is not rebuilt (nor repainted)
        self._categories = (present, chosen)
        self.category.blockSignals(True)
        self.category.clear()
        self.category.addItem("All categories", None)
        for name, n in present:
            self.category.addItem(f"{name} ({n})", name)
        if chosen is not None and chosen not in {name for name, _ in present}:
            self.category.addItem(f"{chosen} (0)", chosen)
        self.category.setCurrentIndex(max(0, self.category.findData(chosen)) if chosen else 0)
        self.category.blockSignals(False)

    def _filter(self, setter, value) -> None:
        """Apply one filter, attaching the proxy while any filter is set.

        An attached proxy calls ``filterAcceptsRow`` for every fact on every tick, even
        with no filter, so the table shows the model directly when nothing is filtered.
        """
        setter(value)
        filtering = self.proxy.filtering
        if filtering != (self.table.model() is self.proxy):
            widths = [self.table.columnWidth(c) for c in range(self.model.columnCount())]
            self.table.selectionModel().deleteLater()  # setModel() makes a new one and keeps the old
            if filtering:
                self.proxy.setSourceModel(self.model)
                self.table.setModel(self.proxy)
            else:
                self.table.setModel(self.model)
                self.proxy.setSourceModel(None)
            for col, width in enumerate(widths):
                self.table.setColumnWidth(col, width)
            self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
            self.select_fact(self.session.fact)
        self.fit_columns(remeasure=True)  # other rows
        self._update_count()

    def shown_count(self) -> int:
        """How many facts the table shows (after filters)."""
        return self.table.model().rowCount()

    def _update_count(self, *_args) -> None:
        total, shown = self.model.rowCount(), self.shown_count()
        self.count.setText(f"{shown:,} of {counted(total, 'fact')}" if self.proxy.filtering else counted(total, "fact"))

    def _view_index(self, source_row: int | None) -> QModelIndex:
        if source_row is None:
            return QModelIndex()
        index = self.model.index(source_row, 0)
        return self.proxy.mapFromSource(index) if self.table.model() is self.proxy else index

    def _source_row(self, view_index: QModelIndex) -> int:
        if self.table.model() is self.proxy:
            return self.proxy.mapToSource(view_index).row()
        return view_index.row()

    def _tab_shown(self, index: int) -> None:
        if index == self.GRAPH_TAB and self._graph_dirty:
            self._draw_graph()

    def _draw_graph(self) -> None:
        state = self.session.state
        self.graph.show_state(state, list(self.keys_at(state)) if state is not None else [], self._changed)
        self._graph_dirty = False

    # ----- selection -----
    def select_fact(self, fact_id: FactId | None) -> None:
        """Select and reveal the row of ``fact_id`` without sending intents (None clears)."""
        self._syncing = True
        try:
            index = self._view_index(self.model.row_of(fact_id) if fact_id is not None else None)
            if index.isValid():
                self.table.selectRow(index.row())
                self.table.scrollTo(index)
            else:
                self.table.clearSelection()
                self.table.selectionModel().setCurrentIndex(QModelIndex(), QItemSelectionModel.NoUpdate)
        finally:
            self._syncing = False

    def why_target(self) -> str | None:
        """``fact:FACT_ID`` of the current row: its confidence, state, source and acquired tick."""
        current = self.table.currentIndex()
        return f"fact:{self.model.fact_id(self._source_row(current))}" if current.isValid() else None

    def _current_fact(self) -> FactId | None:
        current = self.table.currentIndex()
        return self.model.fact_id(self._source_row(current)) if current.isValid() else None

    def _row_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.conversation_whatif.update()
        if self._syncing or not current.isValid():
            return
        row = self._source_row(current)
        self.session.set_fact(self.model.fact_id(row))
        fact = self.model.shown_fact(self.model.fact_id(row))
        meta = fact.interaction if fact is not None else None
        if meta is not None:
            self.session.set_npc(meta.target_entity)
