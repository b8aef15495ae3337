"""The session: the open playthrough, the current tick and the selection, as Qt signals.

Data flows one way (style.md): a ``models.Playthrough`` is loaded into the session,
widgets read it and redraw when the session says something changed, and user intents
(a tick chosen, an NPC chosen, a fact selected) come back as calls to ``set_*``. No
widget talks to another widget.

Ticks are game ticks. ``tickPreview`` fires while a tick is being dragged (cheap
updates only); ``tickChanged`` fires when the tick is committed (full refresh).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from narrative_debugger.models.compare.comparison import Comparison
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.event_kinds import DERIVED_KINDS, EVENT_KINDS, distinct_ticks, event_indices, int_list, tick_array
from narrative_debugger.models.timeline.state_view import StateAtTick
from PySide6.QtCore import QObject, Signal


def prepare(playthrough: Playthrough) -> tuple[dict[str, list[int]], dict[str, list[int]], list[int]]:
    """The session's stepping data of a playthrough: EVENT_KINDS and DERIVED_KINDS name
    -> journal indices and ticks of its entries, and every distinct journal tick in
    order. O(N) in journal entries, so the loader runs it off the GUI thread; kept in
    ``playthrough.derived["session"]``."""
    index = playthrough.index
    if index is None:
        result = ({}, {}, [])
    else:
        indices = {name: event_indices(index, name) for name in (*EVENT_KINDS, *DERIVED_KINDS)}
        # Picked and made distinct in numpy: a Python loop over a million entries is slow.
        ticks = tick_array(index.ticks)
        positions = {name: index.derived.get(("event-positions", name)) for name in indices}
        picked = {name: int_list(ticks[at if at is not None else np.asarray(indices[name], dtype=np.int64)]) for name, at in positions.items()}
        result = (indices, picked, distinct_ticks(index.ticks, ticks))
    if hasattr(playthrough, "derived"):
        playthrough.derived["session"] = result
    return result


#: Interaction changes from which an NPC's tables are made before the first paint: made
#: on a step instead, such an NPC's would take a third of a frame or more.
LONG_HISTORY = 5_000


def prepare_long_npc_tables(playthrough: Playthrough) -> None:
    """The interaction aggregates and move tables (``TimelineIndex.prepare_npc_tables``)
    of the NPCs with long histories, made off the GUI thread before the window shows
    the save: a step to one of them would otherwise make them, several frames' work."""
    if playthrough.index is not None:
        playthrough.index.prepare_npc_tables(min_changes=LONG_HISTORY)


def prepare_npc_tables(playthrough: Playthrough) -> None:
    """Every NPC's interaction aggregates and move tables, made off the GUI thread
    after the window shows the save: the views and the prompt read them at every step,
    and each made on a step would add to it."""
    if playthrough.index is not None:
        playthrough.index.prepare_npc_tables()


def prepare_names(playthrough: Playthrough) -> dict[int, str]:
    """StableId -> display name of every NPC of the save, in save order: O(NPCs), so
    the loader runs it off the GUI thread; kept in ``playthrough.derived["npc_names"]``."""
    names = {sid: playthrough.npc_name(sid) for sid in playthrough.save.npcs}
    if hasattr(playthrough, "derived"):
        playthrough.derived["npc_names"] = names
    return names


def npc_names(playthrough: Playthrough) -> dict[int, str]:
    """The prepared ``prepare_names`` of a playthrough (computed now when it was not)."""
    names = getattr(playthrough, "derived", {}).get("npc_names")
    return names if names is not None else prepare_names(playthrough)


class Session(QObject):
    """Holds what is open and what is selected; every view follows it.

    Signals:
        loaded(): a new playthrough replaced the old one.
        findingsChanged(): the open playthrough's findings are whole now (its checks
            ended after it was shown; ``refresh_findings``).
        tickPreview(object): the tick while dragging (cheap updates).
        tickChanged(object): the committed tick (full refresh).

    Ticks are u64 Python ``int`` s: the tick signals are ``Signal(object)``, since
    ``Signal(int)`` is a 32-bit int in PySide6.
        npcChanged(object): the selected NPC's StableId, or None.
        factChanged(object): the selected FactId, or None.
        viewChanged(str): the view asked for (knowledge, interactions, timelines, prompt).
        journalIndexChanged(object): the journal entry selected (its index), or None.
        explainRequested(object): "Why?" was asked of a target (``models.explain`` form,
            e.g. ``npc:kael-davan.score``); the Explain dock answers it.
        comparisonChanged(): a comparison was set or left (``comparison`` says which).
        dockRequested(str): a dock to bring to the front (a registry dock name).
        culpritChanged(object): the Finding whose culprit the views select, or None.
        lineRequested(str): a monologue line id to select and highlight (Differences).
        notice(str): a message for the status bar (a filter cleared to show a culprit).
    """

    loaded = Signal()
    findingsChanged = Signal()
    tickPreview = Signal(object)
    tickChanged = Signal(object)
    npcChanged = Signal(object)
    factChanged = Signal(object)
    viewChanged = Signal(str)
    journalIndexChanged = Signal(object)
    explainRequested = Signal(object)
    comparisonChanged = Signal()
    dockRequested = Signal(str)
    culpritChanged = Signal(object)
    lineRequested = Signal(str)
    notice = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.playthrough: Playthrough | None = None
        self.tick = 0
        self.previous_tick = 0
        self.npc: int | None = None
        self.fact: str | None = None
        self.view = "knowledge"
        self.journal_index: int | None = None
        self.explain_target: str | None = None
        self.culprit = None
        self._state: StateAtTick | None = None
        self._event_ticks: dict[str, list[int]] = {}
        self._event_indices: dict[str, list[int]] = {}
        self._all_event_ticks: list[int] = []
        self._finding_ticks: list[int] = []
        self._view_start = 0
        self.comparison: Comparison | None = None
        self._state_b: StateAtTick | None = None

    # ----- loading -----
    def load(self, playthrough: Playthrough, tick: int | None = None, npc: int | None = None) -> None:
        """Show a new playthrough (must be readable) at ``tick`` (default saved_at_tick)."""
        self.playthrough = playthrough
        cached = getattr(playthrough, "derived", {}).get("session")
        self._event_indices, self._event_ticks, self._all_event_ticks = cached or prepare(playthrough)
        last = playthrough.last_tick
        self._finding_ticks = self._ticks_of_findings(playthrough)
        first = self._all_event_ticks[0] if self._all_event_ticks else 0
        self._view_start = first if first > last - first else 0
        self.tick = self.clamp(tick if tick is not None else playthrough.save.saved_at_tick)
        self.previous_tick = self.tick
        self._state = None
        npcs = list(playthrough.save.npcs)
        self.npc = npc if npc in playthrough.save.npcs else (npcs[0] if npcs else None)
        self.fact = None
        self.journal_index = None
        self.culprit = None
        left = self.comparison is not None
        self.comparison = None  # it compared the save that was open before
        self._state_b = None
        self.loaded.emit()
        self.culpritChanged.emit(None)
        if left:
            self.comparisonChanged.emit()
        self.npcChanged.emit(self.npc)
        self.tickChanged.emit(self.tick)

    @staticmethod
    def _ticks_of_findings(playthrough: Playthrough) -> list[int]:
        # A finding can name a tick past the last one shown (K004): step to the end for it.
        last = playthrough.last_tick
        return sorted({min(f.tick, last) for f in playthrough.findings if f.tick is not None})

    def refresh_findings(self) -> None:
        """The open playthrough's findings changed (its checks ended after it was shown,
        ``Playthrough.finish_checks``): step targets follow and ``findingsChanged`` tells
        the views; the tick, the NPC and every selection stay."""
        if self.playthrough is None:
            return
        self._finding_ticks = self._ticks_of_findings(self.playthrough)
        self.findingsChanged.emit()

    @property
    def ready(self) -> bool:
        """True when a readable playthrough is open."""
        return self.playthrough is not None and self.playthrough.index is not None

    @property
    def state(self) -> StateAtTick | None:
        """The state at the current tick (cached until the tick changes)."""
        if not self.ready:
            return None
        if self._state is None or self._state.tick != self.tick:
            self._state = self.playthrough.state_at(self.tick)
        return self._state

    def state_at(self, tick: int) -> StateAtTick | None:
        """The state at any tick (None when nothing is open)."""
        return self.playthrough.state_at(tick) if self.ready else None

    # ----- ticks -----
    @property
    def first_tick(self) -> int:
        return 0

    @property
    def last_tick(self) -> int:
        """The last tick of the save, or of either side while comparing (ticks aligned by value)."""
        if not self.ready:
            return 0
        if self.comparison is not None:
            return max(self.playthrough.last_tick, self.comparison.b.last_tick)
        return self.playthrough.last_tick

    @property
    def view_start(self) -> int:
        """The first tick a time axis shows: 0, or the first event's tick when more than
        half of 0..last tick lies before it (a save whose ticks start near 1e15 would
        otherwise draw all of its events in the last pixel)."""
        return self._view_start if self.ready else 0

    def clamp(self, tick: int) -> int:
        """Clamp to 0..last tick."""
        return max(0, min(int(tick), self.last_tick))

    def set_tick(self, tick: int, live: bool = False) -> None:
        """Move the tick. ``live`` True while dragging: only ``tickPreview`` fires."""
        tick = self.clamp(tick)
        if live:
            self.tickPreview.emit(tick)
            return
        if tick == self.tick:
            return
        self.previous_tick = self.tick
        self.tick = tick
        self._state = None
        self.tickChanged.emit(tick)

    def event_ticks(self, kind: str | None = None) -> list[int]:
        """Ticks with an event of ``kind`` (a key of EVENT_KINDS or DERIVED_KINDS, or "finding"); all events for None."""
        if kind is None:
            return self._all_event_ticks
        if kind == "finding":
            return self._finding_ticks
        return self._event_ticks.get(kind, [])

    def next_event_tick(self, kind: str | None = None, forward: bool = True) -> int | None:
        """The next (or previous) tick after the current one with an event of ``kind``."""
        ticks = self.event_ticks(kind)
        if forward:
            k = bisect_right(ticks, self.tick)
            return ticks[k] if k < len(ticks) else None
        k = bisect_left(ticks, self.tick) - 1
        return ticks[k] if k >= 0 else None

    def step_event(self, kind: str | None = None, forward: bool = True) -> None:
        """Move to the next/previous event of ``kind`` if there is one: its tick, the NPC it
        concerns and its own journal row (the first entry of the kind at that tick going
        forward, the last going back). Findings move the tick only."""
        target = self.step_target(kind, forward)
        if target is None:
            return
        tick, entry = target
        if entry is None:
            self.set_tick(tick)
        else:
            self.select_entry(entry)

    def step_target(self, kind: str | None = None, forward: bool = True) -> tuple[int, int | None] | None:
        """Where ``step_event`` goes: (tick (u64), journal index or None when only the tick
        moves), or None when there is no such event."""
        tick = self.next_event_tick(kind, forward)
        if tick is None:
            return None
        found = self._event_indices.get(kind) if kind is not None else None
        if kind is None:
            ticks = self.playthrough.index.ticks
            return tick, (bisect_left(ticks, tick) if forward else bisect_right(ticks, tick) - 1)
        if found:
            ticks = self._event_ticks[kind]
            return tick, (found[bisect_left(ticks, tick)] if forward else found[bisect_right(ticks, tick) - 1])
        return tick, None

    def neighbour_npcs(self) -> list[int]:
        """The StableIds of the NPCs that a step to the next and to the previous event
        would select (the next first), without repeats: the NPCs a view may make ready."""
        out = []
        if not self.ready:
            return out
        for forward in (True, False):
            target = self.step_target(None, forward)
            npc = self.playthrough.save.npc_of_entry(target[1]) if target is not None else None
            if npc is not None and npc not in out:
                out.append(npc)
        return out

    # ----- comparison (issue 13) -----
    def set_comparison(self, comparison: Comparison | None) -> None:
        """Compare the open playthrough (side A) with ``comparison.b``; None leaves comparison.

        The comparison must have the open playthrough as its side A. Leaving it with the
        tick past A's last tick moves the tick there (``tickChanged`` after
        ``comparisonChanged``).
        """
        if comparison is not None and comparison.a is not self.playthrough:
            raise ValueError("the comparison's side A is not the open playthrough")
        self.comparison = comparison
        self._state_b = None
        # Leaving a comparison shrinks the tick range to A's: a tick past A's end (on B's
        # part of the range) is brought to A's last tick before any view redraws.
        # It is not a step: no view says "changed since" a tick A does not have.
        clamped = self.clamp(self.tick) if self.ready else self.tick
        moved = clamped != self.tick
        if moved:
            self.previous_tick = self.tick = clamped
            self._state = None
        self.comparisonChanged.emit()
        if moved:
            self.tickChanged.emit(clamped)

    @property
    def state_b(self) -> StateAtTick | None:
        """Side B's state at the current tick (None when not comparing)."""
        if self.comparison is None:
            return None
        if self._state_b is None or self._state_b.tick != self.tick:
            self._state_b = self.comparison.b.state_at(self.tick)
        return self._state_b

    def npc_b(self, npc: int | None) -> int | None:
        """Side B's StableId of the NPC ``npc`` of side A (matched by slug), or None."""
        if self.comparison is None or npc is None or npc not in self.playthrough.save.npcs:
            return None
        other = self.comparison.b.save.npc_by_slug(self.playthrough.save.npcs[npc].slug)
        return other.stable_id if other is not None else None

    def go_to(self, tick: int | None = None, npc: str | None = None, view: str | None = None, fact: str | None = None) -> None:
        """Jump to a place: the NPC (by slug), the fact, the tick, then the view."""
        if npc is not None:
            sid = self.npc_by_slug(npc)
            if sid is not None:
                self.set_npc(sid)
        if fact is not None:
            self.set_fact(fact)
        if tick is not None:
            self.set_tick(tick)
        if view is not None:
            self.set_view(view)

    # ----- selection -----
    def set_npc(self, npc: int | None) -> None:
        """Select an NPC by StableId (None clears)."""
        if npc == self.npc:
            return
        self.npc = npc
        self.npcChanged.emit(npc)

    def npc_by_slug(self, slug: str) -> int | None:
        """StableId of the NPC with this slug in the open save."""
        if not self.playthrough:
            return None
        npc = self.playthrough.save.npc_by_slug(slug)
        return npc.stable_id if npc else None

    def set_fact(self, fact_id: str | None) -> None:
        """Select a fact by FactId."""
        if fact_id == self.fact:
            return
        self.fact = fact_id
        self.factChanged.emit(fact_id)

    def set_journal_index(self, index: int | None) -> None:
        """Select one journal entry by its index (the Journal marks its row)."""
        self.journal_index = index
        self.journalIndexChanged.emit(index)

    def select_entry(self, index: int) -> None:
        """Go to one journal entry: its tick, the NPC it concerns, and its own journal row."""
        if not self.ready or not 0 <= index < len(self.playthrough.index.ticks):
            return
        npc = self.playthrough.save.npc_of_entry(index)
        tick = self.clamp(self.playthrough.index.ticks[index])
        moves = tick != self.tick
        # The tick is set before npcChanged fires, so that a view refreshing on both
        # signals already reads the new state and can skip the second refresh.
        if moves:
            self.previous_tick, self.tick, self._state = self.tick, tick, None
        if npc is not None:
            self.set_npc(npc)
        if moves:
            self.tickChanged.emit(tick)
        self.set_journal_index(index)

    def explain(self, target: str | None) -> None:
        """Ask "Why?" of ``target`` (see ``models.explain``); None does nothing."""
        if not target:
            return
        self.explain_target = target
        self.explainRequested.emit(target)

    def set_view(self, view: str) -> None:
        """Bring a view to the front (knowledge, interactions, timelines, prompt)."""
        self.view = view
        self.viewChanged.emit(view)

    def request_dock(self, dock: str) -> None:
        """Bring a dock to the front (a registry dock name); the session's view is unchanged."""
        self.dockRequested.emit(dock)

    def set_culprit(self, finding) -> None:
        """Select a finding's culprit in every view that shows it (None clears)."""
        self.culprit = finding
        self.culpritChanged.emit(finding)

    def select_line(self, line_id: str) -> None:
        """Select and highlight a monologue line in the Monologues dock (a Differences jump)."""
        self.lineRequested.emit(line_id)
        self.request_dock("monologues")

    def notify(self, text: str) -> None:
        """Say something in the status bar (e.g. that a filter was cleared)."""
        self.notice.emit(text)
