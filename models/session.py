"""The session: the open playthrough, the current tick and the selection, as plain events.

One object holds what is open and what is selected, and the rules for them: a tick
is clamped to the playthrough's range, the tick defaults to ``saved_at_tick``, the
NPC defaults to the save's first and is found by slug, leaving a comparison brings a
tick past side A's end back into A. The window shows it through a thin Qt adapter
(``widgets.session``) that re-emits its events as Qt signals; the command line uses
it directly for the tick and NPC it is asked for (``app.cli.commands.common``).

Units: ticks are game ticks, u64 Python ``int`` s (0 .. 2**64 - 1, save-format §5);
NPCs are StableIds (``int``), facts FactIds (``str``), journal entries indices into
the journal (``int``).

Events: ``subscribe(callback)`` registers a callable that gets every change as one
of the frozen dataclasses below, in the order the changes happen, on the thread that
made the change. Nothing here imports Qt.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from narrative_debugger.models.compare.comparison import Comparison
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.event_kinds import DERIVED_KINDS, EVENT_KINDS, EVENT_POSITIONS, distinct_ticks, event_indices, picked, tick_array
from narrative_debugger.models.timeline.state_view import StateAtTick

# ----- events -----


@dataclass(frozen=True)
class Loaded:
    """A new playthrough replaced the old one."""


@dataclass(frozen=True)
class FindingsChanged:
    """The open playthrough's findings are whole now (its checks ended after it was shown)."""


@dataclass(frozen=True)
class TickPreviewed:
    """The tick while it is dragged (cheap updates only); the session's tick is unchanged."""

    tick: int


@dataclass(frozen=True)
class TickChanged:
    """The committed tick (full refresh)."""

    tick: int


@dataclass(frozen=True)
class NpcChanged:
    """The selected NPC's StableId, or None."""

    npc: int | None


@dataclass(frozen=True)
class FactChanged:
    """The selected FactId, or None."""

    fact: str | None


@dataclass(frozen=True)
class ViewChanged:
    """The view asked for (knowledge, interactions, timelines, prompt)."""

    view: str


@dataclass(frozen=True)
class JournalIndexChanged:
    """The journal entry selected (its index), or None."""

    index: int | None


@dataclass(frozen=True)
class ExplainRequested:
    """"Why?" was asked of a target (``models.explain`` form, e.g. ``npc:kael-davan.score``)."""

    target: str


@dataclass(frozen=True)
class ComparisonChanged:
    """A comparison was set or left (``Session.comparison`` says which)."""


@dataclass(frozen=True)
class DockRequested:
    """A dock to bring to the front (a registry dock name)."""

    dock: str


@dataclass(frozen=True)
class CulpritChanged:
    """The Finding whose culprit the views select, or None."""

    finding: Any


@dataclass(frozen=True)
class LineRequested:
    """A monologue line id to select and highlight."""

    line_id: str


@dataclass(frozen=True)
class Notice:
    """A message for the status bar."""

    text: str


Event = (
    Loaded | FindingsChanged | TickPreviewed | TickChanged | NpcChanged | FactChanged | ViewChanged | JournalIndexChanged
    | ExplainRequested | ComparisonChanged | DockRequested | CulpritChanged | LineRequested | Notice
)


# ----- errors -----


class TickOutOfRange(ValueError):
    """A tick asked for exactly (``load(..., exact=True)``) lies past the playthrough's last tick.

    Attributes: ``tick`` (the tick asked for) and ``last`` (the last tick, u64)."""

    def __init__(self, tick: int, last: int) -> None:
        super().__init__(f"tick {tick} is beyond the save (its ticks run from 0 to {last})")
        self.tick, self.last = tick, last


class UnknownNpc(LookupError):
    """No NPC of the open save has the slug asked for (``require_npc``).

    Attributes: ``slug`` (the slug asked for) and ``known`` (the save's slugs, sorted)."""

    def __init__(self, slug: str, known: tuple[str, ...]) -> None:
        super().__init__(f"no NPC {slug!r} (NPCs: {', '.join(known) or 'none'})")
        self.slug, self.known = slug, known


# ----- stepping data -----


@dataclass(frozen=True)
class Stepping:
    """What the session steps between, for one playthrough (``prepare``).

    Attributes:
        indices: EVENT_KINDS and DERIVED_KINDS name -> journal indices of its entries, ascending.
        ticks: the same names -> the ticks of those entries (u64), in the same order.
        distinct: every distinct journal tick (u64), ascending.
    """

    indices: dict[str, list[int]]
    ticks: dict[str, list[int]]
    distinct: list[int]


def prepare(playthrough: Playthrough) -> Stepping:
    """The session's stepping data of a playthrough (``Stepping``). O(N) in journal
    entries, so the window's loader runs it off the GUI thread and hands it to
    ``Session.load``; a session given none makes it on first use."""
    index = playthrough.index
    if index is None:
        return Stepping({}, {}, [])
    indices = {name: event_indices(index, name) for name in (*EVENT_KINDS, *DERIVED_KINDS)}
    # Picked and made distinct in numpy: a Python loop over a million entries is slow.
    ticks = tick_array(index.ticks)
    positions = {name: EVENT_POSITIONS.get(index, name) for name in indices}
    # The index's own int objects, not new ones (``picked``).
    chosen = {name: picked(index.ticks, at if at is not None else np.asarray(indices[name], dtype=np.int64)) for name, at in positions.items()}
    return Stepping(indices, chosen, distinct_ticks(index.ticks, ticks))


class Session:
    """Holds what is open and what is selected, and tells subscribers what changed.

    Attributes (read them; change them through the ``set_*`` methods, which keep the
    rules and send the events): ``playthrough`` (or None), ``tick`` (u64),
    ``previous_tick`` (the tick before the last step: what views say changed
    "since"), ``npc`` (StableId or None), ``fact`` (FactId or None), ``view``,
    ``journal_index``, ``explain_target``, ``culprit`` (a Finding or None),
    ``comparison`` (a ``Comparison`` whose side A is the playthrough, or None).
    """

    def __init__(self) -> None:
        self.playthrough: Playthrough | None = None
        self.tick = 0
        self.previous_tick = 0
        self.npc: int | None = None
        self.fact: str | None = None
        self.view = "knowledge"
        self.journal_index: int | None = None
        self.explain_target: str | None = None
        self.culprit = None
        self.comparison: Comparison | None = None
        self._state: StateAtTick | None = None
        self._state_b: StateAtTick | None = None
        # Made on first use (``_stepping``, ``_finding_ticks``): the command line never steps.
        self._stepping: Stepping | None = None
        self._findings: list[int] | None = None
        self._subscribers: list[Callable[[Event], object]] = []

    # ----- events -----
    def subscribe(self, callback: Callable[[Event], object]) -> Callable[[], None]:
        """Call ``callback(event)`` on every change from now on; returns a function that
        unsubscribes it. Callbacks run in the order they subscribed; an exception in
        one propagates to the caller of the change."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, event: Event) -> None:
        for callback in list(self._subscribers):
            callback(event)

    # ----- loading -----
    def load(self, playthrough: Playthrough, tick: int | None = None, npc: int | None = None, *, exact: bool = False,
             stepping: Stepping | None = None) -> None:
        """Show a new playthrough (must be readable) at ``tick`` (u64; default its
        ``saved_at_tick``), clamped to 0..its last tick, with ``npc`` (a StableId)
        selected, or the save's first NPC when ``npc`` is not one of its NPCs.

        ``exact`` True (the command line) refuses a tick past the last one instead of
        clamping it: raises TickOutOfRange before anything changes. ``stepping``: the
        playthrough's ``prepare``, made ahead (else made on the first step). A comparison in
        force is left (it compared the save open before).

        Events, in order: Loaded, CulpritChanged(None), ComparisonChanged (when one
        was left), NpcChanged, TickChanged.
        """
        if tick is None:
            tick = playthrough.save.saved_at_tick
        if exact and tick > playthrough.last_tick:
            raise TickOutOfRange(tick, playthrough.last_tick)
        self.playthrough = playthrough
        self._stepping = stepping
        self._findings = None
        left = self.comparison is not None
        self.comparison = None  # it compared the save that was open before
        self._state_b = None
        self.tick = self.clamp(tick)
        self.previous_tick = self.tick
        self._state = None
        npcs = playthrough.save.npcs
        self.npc = npc if npc in npcs else next(iter(npcs), None)
        self.fact = None
        self.journal_index = None
        self.culprit = None
        self._emit(Loaded())
        self._emit(CulpritChanged(None))
        if left:
            self._emit(ComparisonChanged())
        self._emit(NpcChanged(self.npc))
        self._emit(TickChanged(self.tick))

    def _steps(self) -> Stepping:
        if self._stepping is None:
            self._stepping = prepare(self.playthrough) if self.playthrough is not None else Stepping({}, {}, [])
        return self._stepping

    def _finding_ticks(self) -> list[int]:
        # A finding can name a tick past the last one shown (K004): step to the end for it.
        if self._findings is None:
            if self.playthrough is None:
                return []
            last = self.playthrough.last_tick
            self._findings = sorted({min(f.tick, last) for f in self.playthrough.findings if f.tick is not None})
        return self._findings

    def refresh_findings(self) -> None:
        """The open playthrough's findings changed (its checks ended after it was shown,
        ``Playthrough.finish_checks``): step targets follow and FindingsChanged tells
        the views; the tick, the NPC and every selection stay."""
        if self.playthrough is None:
            return
        self._findings = None
        self._emit(FindingsChanged())

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
        """The first tick of the range: always 0."""
        return 0

    @property
    def last_tick(self) -> int:
        """The last tick of the save, or of either side while comparing (ticks aligned
        by value); 0 when nothing readable is open."""
        if not self.ready:
            return 0
        if self.comparison is not None:
            return max(self.playthrough.last_tick, self.comparison.b.last_tick)
        return self.playthrough.last_tick

    @property
    def view_start(self) -> int:
        """The first tick a time axis shows: 0, or the first event's tick when more than
        half of 0..last tick lies before it (a save whose ticks start near 1e15 would
        otherwise draw all of its events in the last pixel). While comparing, the first
        event of either side, against ``last_tick`` (both sides'): B's events before A's
        first are on the axis, not in the lead-in left of it that stands for tick 0."""
        if not self.ready:
            return 0
        ticks = self._steps().distinct
        firsts = [ticks[0]] if ticks else []
        b = self.comparison.b if self.comparison is not None else None
        if b is not None and b.index is not None and b.index.ticks:
            firsts.append(b.first_tick)
        first = min(firsts, default=0)
        return first if first > self.last_tick - first else 0

    def clamp(self, tick: int) -> int:
        """``tick`` brought into 0..``last_tick`` (any int; the result is a u64)."""
        return max(0, min(int(tick), self.last_tick))

    def set_tick(self, tick: int, live: bool = False) -> None:
        """Move the tick (clamped). ``live`` True while dragging: only TickPreviewed is
        sent and the tick stays. Otherwise TickChanged, when the tick moved."""
        tick = self.clamp(tick)
        if live:
            self._emit(TickPreviewed(tick))
            return
        if tick == self.tick:
            return
        self.previous_tick = self.tick
        self.tick = tick
        self._state = None
        self._emit(TickChanged(tick))

    def event_ticks(self, kind: str | None = None) -> list[int]:
        """Ticks with an event of ``kind`` (a key of EVENT_KINDS or DERIVED_KINDS, or "finding"); all events for None."""
        if kind is None:
            return self._steps().distinct
        if kind == "finding":
            return self._finding_ticks()
        return self._steps().ticks.get(kind, [])

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
        if kind is None:
            ticks = self.playthrough.index.ticks
            return tick, (bisect_left(ticks, tick) if forward else bisect_right(ticks, tick) - 1)
        found = self._steps().indices.get(kind)
        if found:
            ticks = self._steps().ticks[kind]
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

        Raises ValueError when the comparison's side A is not the open playthrough.
        Leaving it with the tick past A's last tick moves the tick there: TickChanged
        after ComparisonChanged, and ``previous_tick`` becomes that tick too.
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
        self._emit(ComparisonChanged())
        if moved:
            self._emit(TickChanged(clamped))

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
        """Jump to a place: the NPC (by slug; an unknown one is passed over), the fact,
        the tick (clamped), then the view."""
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
        """Select an NPC by StableId (None clears); NpcChanged when it changed."""
        if npc == self.npc:
            return
        self.npc = npc
        self._emit(NpcChanged(npc))

    def npc_by_slug(self, slug: str) -> int | None:
        """StableId of the NPC with this slug in the open save, or None."""
        if not self.playthrough:
            return None
        npc = self.playthrough.save.npc_by_slug(slug)
        return npc.stable_id if npc else None

    def require_npc(self, slug: str) -> int:
        """StableId of the NPC with this slug in the open save. Raises UnknownNpc (with
        the save's slugs) when there is none, or nothing is open."""
        sid = self.npc_by_slug(slug)
        if sid is None:
            npcs = self.playthrough.save.npcs.values() if self.playthrough else ()
            raise UnknownNpc(slug, tuple(sorted(n.slug for n in npcs)))
        return sid

    def set_fact(self, fact_id: str | None) -> None:
        """Select a fact by FactId; FactChanged when it changed."""
        if fact_id == self.fact:
            return
        self.fact = fact_id
        self._emit(FactChanged(fact_id))

    def set_journal_index(self, index: int | None) -> None:
        """Select one journal entry by its index (JournalIndexChanged, always)."""
        self.journal_index = index
        self._emit(JournalIndexChanged(index))

    def select_entry(self, index: int) -> None:
        """Go to one journal entry: its tick, the NPC it concerns, and its own journal
        row. An index outside the journal does nothing."""
        if not self.ready or not 0 <= index < len(self.playthrough.index.ticks):
            return
        npc = self.playthrough.save.npc_of_entry(index)
        tick = self.clamp(self.playthrough.index.ticks[index])
        moves = tick != self.tick
        # The tick is set before NpcChanged is sent, so that a view refreshing on both
        # events already reads the new state and can skip the second refresh.
        if moves:
            self.previous_tick, self.tick, self._state = self.tick, tick, None
        if npc is not None:
            self.set_npc(npc)
        if moves:
            self._emit(TickChanged(tick))
        self.set_journal_index(index)

    def explain(self, target: str | None) -> None:
        """Ask "Why?" of ``target`` (see ``models.explain``); None or "" does nothing."""
        if not target:
            return
        self.explain_target = target
        self._emit(ExplainRequested(target))

    def set_view(self, view: str) -> None:
        """Bring a view to the front (knowledge, interactions, timelines, prompt)."""
        self.view = view
        self._emit(ViewChanged(view))

    def request_dock(self, dock: str) -> None:
        """Bring a dock to the front (a registry dock name); the session's view is unchanged."""
        self._emit(DockRequested(dock))

    def set_culprit(self, finding) -> None:
        """Select a finding's culprit in every view that shows it (None clears)."""
        self.culprit = finding
        self._emit(CulpritChanged(finding))

    def select_line(self, line_id: str) -> None:
        """Select and highlight a monologue line in the Monologues dock (a Differences jump)."""
        self._emit(LineRequested(line_id))
        self.request_dock("monologues")

    def notify(self, text: str) -> None:
        """Say something in the status bar (e.g. that a filter was cleared)."""
        self._emit(Notice(text))
