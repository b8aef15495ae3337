"""The knowledge graph tab: a zoomable drawing of what the player knows at one tick.

The drawing itself is ``knowledge_scene.GraphScene`` (read its docstring for what
the shapes mean). This widget adds what makes it readable at any size:

* zoom with the wheel (anchored under the mouse), pan by dragging, a Fit button
  and zoom buttons;
* a search box: a FactId, an NPC's name or slug, or part of one; Enter selects the
  match in the session and centres it, expanding its group when it is not drawn;
* expand and collapse: click a card's title (or its "+ N older"), or an NPC's
  "N conversations", to show all of its facts; collapsed groups show counts.

Expanded groups are remembered across ticks until another save is opened. The
colours follow the application palette (light or dark) and redraw when it changes.
Clicking an NPC selects it in the session; clicking a fact selects the fact.
"""

from __future__ import annotations

from collections.abc import Sequence

from narrative_debugger.widgets.kit.plain_text import name_text
from narrative_debugger.models.domain.types import FactId
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.widgets.kit.fact_model import category_of
from narrative_debugger.widgets.knowledge.graph_view import ZoomView
from narrative_debugger.widgets.knowledge.groups import fact_faults, fact_groups, pick_npcs
from narrative_debugger.widgets.knowledge.items import KIND, PAYLOAD
from narrative_debugger.widgets.knowledge.legend import GraphLegend
from narrative_debugger.widgets.knowledge.scene import NPC_RING, GraphScene
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.state_colors import palette_colors
from narrative_debugger.widgets.kit.why import add_why_action
from PySide6.QtCore import QEvent, QStringListModel, Qt
from PySide6.QtWidgets import (
    QCompleter,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

#: Zoom factor of the + and − buttons.
BUTTON_ZOOM = 1.5
#: A found fact is zoomed to at least this many pixels high (a grid cell then shows its number).
READABLE_PX = 24.0
#: Completions offered at most (the first matches in key order).
MAX_COMPLETIONS = 200


class KnowledgeGraph(QWidget):
    """The graph tab of ``KnowledgeView``: draws one tick, highlights the selection.

    The owner calls ``show_state`` on a committed tick and ``set_selection`` when the
    selected NPC or fact changes; clicks and searches go back to the session as intents.

    Args:
        session: the app session (``set_npc`` / ``set_fact`` receive the clicks).
        parent: optional parent widget.

    Attributes:
        scene: the ``GraphScene``; view: the ``ZoomView``; search: the find box.
        expanded: keys of the expanded groups (``("category", name)``, ``("npc", sid)``,
            ``("malformed",)``).
    """

    def __init__(self, session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("knowledgeGraph")
        self.session = session
        self.scene = GraphScene(self)
        self.view = ZoomView(self.scene, self._item_clicked, KIND)
        self.view.setAccessibleName("Knowledge graph drawing")
        self.legend = GraphLegend()
        self.legend.setFixedWidth(190)
        self.legend.setMinimumHeight(self.legend.sizeHint().height())
        legend_box = QScrollArea()
        legend_box.setWidget(self.legend)
        legend_box.setFrameShape(QFrame.NoFrame)
        legend_box.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        legend_box.setFixedWidth(190 + legend_box.verticalScrollBar().sizeHint().width())
        self.per_category = QSpinBox()
        self.per_category.setRange(1, 20)
        self.per_category.setValue(6)
        self.per_category.setToolTip("How many of the most recent facts each collapsed card (and each NPC) shows")
        self.per_category.setAccessibleName("Most recent facts per group")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a fact or NPC…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Find a fact or NPC in the graph")
        self.search.setToolTip("A FactId, an NPC's name or slug, or part of one; Enter selects and centres it")
        self._completions = QStringListModel(self)
        completer = QCompleter(self._completions, self)
        completer.setCaseSensitivity(Qt.CaseInsensitive)
        completer.setFilterMode(Qt.MatchContains)
        self.search.setCompleter(completer)
        self.fit_button = self._button("Fit", "Show the whole graph (and follow the window's size again)", self.view.fit)
        self.zoom_in = self._button("+", "Zoom in (or turn the wheel over the graph)",
                                    lambda: self.view.zoom_by(BUTTON_ZOOM, self.view.center()))
        self.zoom_out = self._button("−", "Zoom out", lambda: self.view.zoom_by(1 / BUTTON_ZOOM, self.view.center()))
        # One line each, free to be cut short: a word-wrapping label would make the view's
        # scroll area size the whole tab by height-for-width, taller than the window.
        self.summary = QLabel()
        self.message = QLabel()
        for label in (self.summary, self.message):
            label.setTextFormat(Qt.PlainText)  # names and ids from the save
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Recent per group:"))
        bar.addWidget(self.per_category)
        bar.addWidget(self.search, 1)
        bar.addWidget(self.zoom_out)
        bar.addWidget(self.zoom_in)
        bar.addWidget(self.fit_button)
        body = QHBoxLayout()
        body.setSpacing(0)
        body.addWidget(self.view, 1)
        body.addWidget(legend_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addLayout(body, 1)
        layout.addWidget(self.message)
        self.expanded: set[tuple] = set()
        self._last: tuple | None = None
        self._left_out = 0
        self._faults: tuple[int, dict] = (0, {})
        self._completion_key: tuple | None = None
        self._playthrough = None
        self.per_category.valueChanged.connect(self._redraw)
        self._why: tuple[str, object] | None = None
        self.why_action = add_why_action(self.view, session, self.why_target)
        self.search.returnPressed.connect(lambda: self.find(self.search.text()))
        self.search.installEventFilter(self)
        self._style_labels()
        self._redraw()

    def _button(self, text: str, tip: str, slot) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        button.clicked.connect(slot)
        return button

    def _style_labels(self) -> None:
        muted = palette_colors(self.palette()).muted.name()
        self.summary.setStyleSheet(f"color: {muted};")
        self.message.setStyleSheet(f"color: {muted};")

    # ----- owner API -----
    def show_state(self, state: StateAtTick | None, keys: Sequence[FactId], changed: frozenset[FactId]) -> None:
        """Draw the knowledge at ``state`` (keys: its FactIds in BTreeMap order)."""
        playthrough = self.session.playthrough
        if playthrough is not self._playthrough:  # another save: forget what was expanded
            self._playthrough = playthrough
            self.expanded.clear()
            self.view.auto_fit = True
        self._last = (state, keys, changed)
        self._redraw()

    def set_selection(self, npc: int | None, fact: FactId | None) -> None:
        """Show which NPC and fact are selected (cheap: toggles existing rings).

        Redraws only when the selected NPC is one of those left out of a crowded graph.
        """
        state = self._last[0] if self._last else None
        if (self._left_out and npc is not None and self.scene.npc_rect(npc) is None
                and state is not None and npc in state.index.npcs):
            self._redraw()
            return
        self.scene.set_selection(npc, fact)

    def node_ids(self, kind: str) -> list:
        """StableIds (``"npc"``) or FactIds (``"fact"``) drawn now, for tests and tools."""
        if kind == "fact":
            return list(self.scene.group_of)
        return [payload for (k, payload) in self.scene.halos if k == kind]

    def group_of(self, fact_id: FactId) -> str | None:
        """The title of the card or NPC a drawn fact is shown under (None when not drawn)."""
        return self.scene.group_of.get(fact_id)

    def toggle(self, key: tuple) -> None:
        """Expand a collapsed group or collapse an expanded one, and redraw."""
        self.expanded.symmetric_difference_update({key})
        self._redraw()

    # ----- drawing -----
    def _faults_of(self, state: StateAtTick) -> dict[FactId, str]:
        """Malformed FactIds of the whole timeline (computed once per save)."""
        index = state.index
        if self._faults[0] != id(index):
            self._faults = (id(index), fact_faults(index.facts))
        return self._faults[1]

    def _redraw(self) -> None:
        colors = palette_colors(self.palette())
        self.view.setBackgroundBrush(colors.canvas)
        if self._last is None or self._last[0] is None or self.session.playthrough is None:
            self.scene.empty("Open a save to see what the player knows.", colors)
            self.summary.setText("")
            self.message.setText("")
            self._place()
            return
        state, keys, changed = self._last
        keep = None if self.view.auto_fit else (self.view.center(), self.view.transform())
        faults = self._faults_of(state)
        npcs, self._left_out = pick_npcs(state, keys, self.session.npc, malformed=faults)
        groups, conversations = fact_groups(keys, faults)
        self.scene.build(self.session.playthrough, state, keys, changed, npcs=npcs, groups=groups, faults=faults,
                         limit=self.per_category.value(), expanded=self.expanded, colors=colors)
        if self._left_out:
            bottom = self.scene.overview.bottom()
            self.scene._text(f"{counted(self._left_out, 'more NPC')} not drawn: the selected NPC and the most recently met "
                             "are shown; pick another NPC in the NPC list (or find it above) to draw it",
                             -NPC_RING - 200, bottom + 8, size=9, italic=True, color=colors.muted)
            self.scene.overview = self.scene.overview.adjusted(0, 0, 0, 24)
        self.scene.set_selection(self.session.npc, self.session.fact)
        shown = (f"{len(npcs)} of {counted(len(npcs) + self._left_out, 'NPC')}" if self._left_out
                 else counted(len(npcs), "NPC"))
        bad = sum(len(g.ids) for g in groups if g.malformed)
        self.summary.setText(f"tick {state.tick:,} · {counted(len(keys), 'fact')} ({counted(conversations, 'conversation')}"
                             + (f", {bad:,} malformed" if bad else "") + f") · {shown} · "
                             f"{len(changed):,} changed since last step")
        self.summary.setToolTip(self.summary.text())
        self._place(keep)

    def _place(self, keep=None) -> None:
        """Fit the new drawing, or keep the user's zoom and centre."""
        self.view.set_content(self.scene.overview, self.scene.itemsBoundingRect())
        if keep is not None:
            center, transform = keep
            self.view.setTransform(transform)
            self.view.centerOn(center)

    # ----- search -----
    def eventFilter(self, watched, event) -> bool:
        if watched is self.search and event.type() == QEvent.FocusIn:
            self._fill_completions()
        return super().eventFilter(watched, event)

    def _fill_completions(self) -> None:
        """NPC names and the first FactIds, filled when the search box gets the focus."""
        if self._last is None or self._last[0] is None:
            return
        state, keys, _ = self._last
        key = (id(state.index), len(keys))
        if key == self._completion_key:
            return
        self._completion_key = key
        play = self.session.playthrough
        names = [name_text(play, sid) for sid in state.npcs]
        categories = [k for k in dict.fromkeys(category_of(fid) for fid in keys[:MAX_COMPLETIONS])]
        self._completions.setStringList(names + categories + list(keys[:MAX_COMPLETIONS]))

    def find(self, text: str) -> bool:
        """Select and centre the fact or NPC ``text`` names (see the module doc).

        Order: a FactId exactly, an NPC's name or slug exactly, an NPC whose name
        contains the text, the first FactId (in key order) that contains it; case is
        ignored except for an exact FactId. Returns False (and says so) when nothing matches.
        """
        text = text.strip()
        if not text or self._last is None or self._last[0] is None:
            return False
        state, keys, _ = self._last
        play = self.session.playthrough
        low = text.lower()
        npcs = {sid: (play.npc_name(sid).lower(), npc.slug) for sid, npc in state.npcs.items()}
        sid = next((s for s, (name, slug) in npcs.items() if low in (name, slug)), None)
        fact = text if state.knowledge.fact(text) is not None else None
        if fact is None and sid is None:
            sid = next((s for s, (name, slug) in npcs.items() if low in name or low in slug), None)
            if sid is None:
                fact = next((fid for fid in keys if low in fid.lower()), None)
        if fact is not None:
            return self._show_fact(fact)
        if sid is not None:
            self.session.set_npc(sid)
            self.set_selection(sid, self.session.fact)
            rect = self.scene.npc_rect(sid)
            if rect is not None:
                self.view.show_rect(rect)
            self.message.setText(f"{name_text(play, sid)}")
            return True
        self.message.setText(f"Nothing in the graph matches “{text}”.")
        return False

    def _show_fact(self, fact_id: FactId) -> bool:
        state = self._last[0]
        fact = state.knowledge.fact(fact_id)
        faults = self._faults_of(state)
        if fact_id in faults:
            key = ("malformed",)
        elif fact.interaction is not None and fact_id.startswith("interaction."):
            key = ("npc", fact.interaction.target_entity)
            self.session.set_npc(fact.interaction.target_entity)  # draws it if it was left out
        else:
            key = ("category", category_of(fact_id))
        if self.scene.fact_rect(fact_id) is None:
            self.expanded.add(key)
            self._redraw()
        self.session.set_fact(fact_id)
        self.scene.set_selection(self.session.npc, fact_id)
        rect = self.scene.fact_rect(fact_id)
        if rect is None:
            self.message.setText(f"{fact_id} is known but not drawn.")
            return False
        self.view.show_rect(rect, min_scale=max(1.0, READABLE_PX / rect.height()))
        self.message.setText(f"{fact_id} — in {self.group_of(fact_id)}")
        return True

    # ----- intents -----
    def why_target(self) -> str | None:
        """The node clicked last: ``fact:FACT_ID``, or for an NPC what the player knows of it
        (``entity:STABLE_ID``; its score when never observed)."""
        if self._why is None or not self.session.ready:
            return None
        kind, payload = self._why
        if kind == "fact":
            return f"fact:{payload}"
        play = self.session.playthrough
        if payload in play.index.entities:
            return f"entity:{payload}"
        npc = play.save.npcs.get(payload)
        return f"npc:{npc.slug}.score" if npc is not None else None

    def _item_clicked(self, item, scene_pos) -> None:
        kind, payload = item.data(KIND), item.data(PAYLOAD)
        if kind == "group":
            self.toggle(payload)
            return
        if kind == "facts":  # a fact inside an expanded group
            kind, payload = "fact", item.fact_at(scene_pos)
            if payload is None:
                return
        self._clicked(kind, payload)

    def _clicked(self, kind: str, payload) -> None:
        """A click on an NPC (StableId) or a fact (FactId): select it in the session."""
        self._why = (kind, payload)
        if kind == "npc":
            self.session.set_npc(payload)
            return
        self.session.set_fact(payload)
        state = self._last[0] if self._last else None
        fact = state.knowledge.fact(payload) if state is not None else None
        if fact is not None and fact.interaction is not None:
            self.session.set_npc(fact.interaction.target_entity)

    # ----- palette -----
    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange):
            self._style_labels()
            self._redraw()
