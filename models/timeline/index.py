"""The timeline index: the narrative state at any tick without replaying from zero.

The replay (``replay.py``) records every change as a version stamped with its
journal position (the number of entries applied, 0 = the initial state). The state
at tick T is then a seek: ``position_for_tick(T)`` by bisection, and each fact, entity
or NPC resolves its version at that position by one more bisection. Nothing is
replayed on a query, so the cost is O(log N) per value read, whatever the tick.

"The state at tick T" is the state after every entry with tick <= T (save-format
§5). Where a faulty journal's ticks decrease (J001), positions follow the running
maximum tick so that the timeline stays ordered.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import chain, compress
from dataclasses import dataclass, field

import msgspec
import numpy as np

from narrative_debugger.models.domain.types import EntityKnowledge, FactId, FactKnowledge, InteractionState, NpcState, StableId, move_key
from narrative_debugger.models.memo import Memo, Memos
from narrative_debugger.models.timeline.event_kinds import picked
from narrative_debugger.models.timeline.state_view import StateAtTick
from sortedcontainers import SortedList


class Versions:
    """Values of one thing over journal positions: ``positions[k]`` is where ``values[k]`` begins."""

    __slots__ = ("positions", "values")

    def __init__(self, position: int, value) -> None:
        self.positions = [position]
        self.values = [value]

    def set(self, position: int, value) -> None:
        """Record a new value from ``position`` on (positions only grow)."""
        if self.positions[-1] == position:
            self.values[-1] = value
        else:
            self.positions.append(position)
            self.values.append(value)

    def upto(self, position: int) -> "Versions | None":
        """A new ``Versions`` of the values that began at or before ``position`` (None
        when the first began after it)."""
        k = bisect_right(self.positions, position)
        if k == 0:
            return None
        out = Versions.__new__(Versions)
        out.positions = list(self.positions[:k])
        out.values = list(self.values[:k])
        return out

    def at(self, position: int):
        """The value at ``position``; None before the first version."""
        k = bisect_right(self.positions, position) - 1
        return self.values[k] if k >= 0 else None

    @property
    def first(self) -> int:
        """The position of the first version."""
        return self.positions[0]


class DialogueRecord(msgspec.Struct, frozen=True, gc=False):
    """One ``DialogueLine`` with where it stands: journal index, tick, speaker, text and
    the NPC whose conversation was in progress (None when none was)."""

    index: int
    tick: int
    speaker: StableId
    text: str
    conversation: StableId | None


class DialogueLines(Sequence):
    """Every ``DialogueLine`` of the journal, in order, read as a list of
    ``DialogueRecord`` but held as columns (issue 37): the journal index of each line
    (``lines``, int64), and the conversation each run of lines belongs to
    (``run_starts[k]``: the line where run k starts; ``run_values[k]``: its NPC's
    StableId, or None). The tick, speaker and text are the journal's own: a record is
    made when it is read. A line costs 8 bytes here, not a 72-byte record and its
    index's int object (~55 MB of a 1 000 000-entry journal), and nothing to pickle.

    Args:
        journal: the ``Journal`` the lines are entries of.
        ticks: the index's running-maximum tick of each entry (the tick of a line
            whose own tick could not be read, as the replay has it).
    """

    __slots__ = ("journal", "ticks", "lines", "run_starts", "run_values")

    def __init__(self, journal=None, ticks=None) -> None:
        self.journal = journal
        self.ticks = ticks
        self.lines = array("q")
        self.run_starts = array("q")
        self.run_values: list = []

    def add(self, i: int, conversation: StableId | None) -> None:
        """Record the line at journal index ``i``, said in ``conversation`` (replay only)."""
        values = self.run_values
        if not values or values[-1] != conversation:
            self.run_starts.append(len(self.lines))
            values.append(conversation)
        self.lines.append(i)

    def __len__(self) -> int:
        return len(self.lines)

    def truncated(self, position: int, journal, ticks) -> "DialogueLines":
        """The lines of the entries before ``position``, read from ``journal`` and
        ``ticks`` (a what-if's, which agree with this one's before ``position``): where a
        replay resumed at ``position`` continues them (issue 38). O(log N) plus a copy
        of the kept columns."""
        out = DialogueLines(journal, ticks)
        k = bisect_left(self.lines, position)
        runs = bisect_left(self.run_starts, k)
        out.lines = array("q", self.lines[:k])
        out.run_starts = array("q", self.run_starts[:runs])
        out.run_values = list(self.run_values[:runs])
        return out

    def tick_of(self, k: int) -> int:
        """The tick of line ``k`` (its record's ``tick``), without making the record: a
        bisection over an NPC's lines by tick reads ~20 of them a step."""
        i = int(self.lines[k])
        tick = self.journal.ticks[i]
        return tick if tick is not None else self.ticks[i]

    def _record(self, k: int, run: int) -> DialogueRecord:
        i = int(self.lines[k])
        tick = self.journal.ticks[i]
        data = self.journal.data[i]
        return DialogueRecord(i, tick if tick is not None else self.ticks[i], data.speaker, data.text, self.run_values[run])

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        n = len(self.lines)
        k = k.__index__()
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("dialogue line out of range")
        return self._record(k, bisect_right(self.run_starts, k) - 1)

    def __iter__(self):
        starts, run, following = self.run_starts, -1, 0
        for k in range(len(self.lines)):
            if k == following:  # the next run starts here (runs are never empty)
                run += 1
                following = starts[run + 1] if run + 1 < len(starts) else -1
            yield self._record(k, run)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"DialogueLines({len(self)} lines)"


class TransitionRecord(msgspec.Struct, frozen=True, gc=False):
    """One move of an interaction's state (schema §3.2): ``source`` None is the start.

    ``legal`` is False for a move the schema forbids (shown in red with its I001 finding).
    """

    index: int
    tick: int
    npc: StableId
    fact_id: FactId
    source: InteractionState | None
    target: InteractionState
    legal: bool


class InteractionSummary(msgspec.Struct, frozen=True, gc=False):
    """Aggregates of one NPC's interactions at a journal position, kept so the schema
    §5.1 queries cost O(log N) at any tick instead of a scan of every interaction.

    Attributes:
        count: interactions started.
        walked_away: interactions that ended WalkedAway or ConflictAbandoned.
        confronted: interactions with the confrontation flag.
        last: FactId of the most recently started interaction.
        last_ended: FactId of the most recently ended interaction.
    """

    count: int = 0
    walked_away: int = 0
    confronted: int = 0
    last: FactId | None = None
    last_ended: FactId | None = None
    by_state: tuple[int, ...] = (0, 0, 0, 0, 0)

    def in_state(self, state: InteractionState | None) -> int:
        """How many interactions are in ``state`` (all of them for None)."""
        return self.count if state is None else self.by_state[state.slot]


_EMPTY_SUMMARY = InteractionSummary()
_NO_STATE = len(InteractionState)  # the slot of "no value before": a new interaction
_WALKS = np.array([state.is_walk_away for state in InteractionState] + [False])
_IN_PROGRESS = np.array([state.in_progress for state in InteractionState] + [True])


def change_code(before, after) -> int:
    """One change of an interaction's metadata (``before`` None: it starts) as one int,
    what ``InteractionSeries`` sums: the new state's slot, the old one's (``_NO_STATE``
    for none) times 16, and the change in ``confrontation`` plus one, times 256."""
    if before is None:
        return after.interaction_state.slot | _NO_STATE << 4 | (after.confrontation + 1) << 8
    return after.interaction_state.slot | before.interaction_state.slot << 4 | (after.confrontation - before.confrontation + 1) << 8


class InteractionSeries:
    """One NPC's ``InteractionSummary`` after each change to its interactions, as
    columns: made at once from the replay's log of changes (numpy running sums), read
    at a position by one bisection.

    A change's aggregates are those of the one before it, plus the change: a new
    interaction counts one more; an interaction's old state counts one less and its
    new state one more (walk-aways, confrontations, per state). Several changes at one
    journal position leave the last one's aggregates, as ``Versions`` does.

    Attributes:
        positions: journal positions where the aggregates changed, ascending.
        changes: how many changes of the log it was made from.
    """

    def __init__(self, positions: list[int], ids: list[FactId], codes) -> None:
        n = self.changes = len(ids)
        # The replay's code of each change (``change_code``), a copy: the replay may
        # still be appending to its column.
        c = np.array(codes[:n], dtype=np.int64)
        after, before, confronted = c & 15, (c >> 4) & 15, (c >> 8) - 1
        started = before == _NO_STATE
        ended = ~_IN_PROGRESS[after] & _IN_PROGRESS[before]
        delta = np.zeros((n, _NO_STATE + 1), np.int64)
        rows = np.arange(n)
        delta[rows, after] += 1
        delta[rows, before] -= 1
        keep = np.ones(n, bool)
        at = np.asarray(positions, np.int64)
        keep[:-1] = at[:-1] != at[1:]
        # The positions are the log's own int objects; the running sums stay int64
        # columns (``at`` reads one row): a Python int for each of five columns of each
        # change was ~28 MB of a 1 000 000-entry save.
        self.positions: list[int] = picked(positions, np.flatnonzero(keep))
        self._count = np.cumsum(started, dtype=np.int64)[keep]
        self._walked = np.cumsum(_WALKS[after].astype(np.int64) - _WALKS[before])[keep]
        self._confronted = np.cumsum(confronted)[keep]
        self._by_state = np.cumsum(delta[:, :_NO_STATE], axis=0)[keep]
        self._last = np.maximum.accumulate(np.where(started, rows, -1))[keep]
        self._last_ended = np.maximum.accumulate(np.where(ended, rows, -1))[keep]
        self._ids = ids[:n]
        self._made: dict[int, InteractionSummary] = {}

    def at(self, position: int) -> InteractionSummary:
        """The aggregates at ``position`` (none before the first change): O(log N)."""
        k = bisect_right(self.positions, position) - 1
        if k < 0:
            return _EMPTY_SUMMARY
        made = self._made.get(k)
        if made is None:
            last, ended = int(self._last[k]), int(self._last_ended[k])
            made = self._made[k] = InteractionSummary(
                count=int(self._count[k]),
                walked_away=int(self._walked[k]),
                confronted=int(self._confronted[k]),
                last=self._ids[last] if last >= 0 else None,
                last_ended=self._ids[ended] if ended >= 0 else None,
                by_state=tuple(self._by_state[k].tolist()),
            )
        return made

    def in_state(self, state: InteractionState | None) -> list[int]:
        """How many interactions are in ``state`` (all of them for None) at each of
        ``positions``."""
        return (self._count if state is None else self._by_state[:, state.slot]).tolist()


class NpcMoves:
    """One NPC's interaction moves (schema §3.2) by kind and by fact, made at once from
    its moves in journal order.

    Attributes:
        legal: {``move_key``: journal indices of its legal moves of that kind,
            ascending}.
        illegal: its forbidden moves in journal order.
        by_fact: FactId -> its moves in journal order.
        moves: how many moves it was made from.
    """

    def __init__(self, moves: list[TransitionRecord]) -> None:
        self.moves = len(moves)
        self.legal: dict[tuple, list[int]] = {}
        self.illegal: list[TransitionRecord] = []
        self.by_fact: dict[FactId, list[TransitionRecord]] = {}
        legal, by_fact = self.legal, self.by_fact
        for record in moves:
            by_fact.setdefault(record.fact_id, []).append(record)
            if record.legal:
                legal.setdefault(move_key(record.source, record.target), []).append(record.index)
            else:
                self.illegal.append(record)


#: The slug -> NPC map of ``TimelineIndex.npc_for_slug`` (key None): (how many slugs it
#: was made from, {slug: the first NPC with it}).
NPC_FOR_SLUG: Memo[None, tuple[int, dict[str, StableId]]] = Memo("npc for slug", "(slug count, slug -> first StableId)")
#: StableId -> the NPC's ``InteractionSeries`` (``TimelineIndex.series_of``).
INTERACTION_SERIES: Memo[StableId, "InteractionSeries"] = Memo("interaction series", "StableId -> InteractionSeries")
#: StableId -> the NPC's ``NpcMoves`` (``TimelineIndex.moves_of``).
NPC_MOVES: Memo[StableId, "NpcMoves"] = Memo("npc moves", "StableId -> NpcMoves")


@dataclass(frozen=True)
class Recording:
    """What a replay records in its ``TimelineIndex`` beside the state at a tick (issue 37):
    chosen by the caller, from what it will read. The replay and its rules are the same
    whatever is chosen, and so are its findings and every value recorded.

    Every choice records the facts, the entities and the NPCs at each journal position
    (their versions), the interaction in progress, the ticks and the kinds, the
    walk-away pairings and every FactId the journal made: ``TimelineIndex.at`` answers
    for their values at any tick, which is what the checks read (the state at
    ``saved_at_tick``, the facts the journal made).

    Attributes:
        interactions: also each NPC's interactions: the changes ``series_of`` sums (the
            schema §5.1 queries of a state, monologue eligibility), the interaction ids
            in creation order and where they are exact (``interaction_ids``,
            ``interactions_exact``). Without them a state's §5.1 answers are empty.
        timeline: also what only a timeline is read for: the dialogue lines and each
            NPC's (``dialogue``, ``dialogue_by_npc``), the interaction moves
            (``transitions``, ``transitions_by_npc``), the fact changes by position
            (``change_positions``, ``change_facts``), the score column (``npc_scores``),
            the monologue lines fired (``monologues_fired``) and a what-if's checkpoints.
            Without it those are empty.
    """

    interactions: bool = True
    timeline: bool = True


#: Everything: what the window, a what-if, a comparison, ``why``, ``prompt`` and ``diff`` read.
EVERYTHING = Recording()
#: The state at any tick with its §5.1 answers, and what the checks read: the ``state`` command.
STATES = Recording(interactions=True, timeline=False)
#: What the checks read (``Playthrough.finish_checks``): the ``check`` command. At 1M
#: events, the replay's recording of the tables it leaves was ~a quarter of the replay.
CHECKS = Recording(interactions=False, timeline=False)


def _started_key(fact_id: FactId, meta) -> tuple:
    """Started-tick order of interactions; ties by FactId sequence (``_1000`` after ``_999``)."""
    return meta.started_tick, len(fact_id), fact_id


@dataclass
class TimelineIndex:
    """Every change of a replayed journal, indexed by journal position.

    Attributes:
        ticks: the (running maximum) tick of each journal entry.
        facts: FactId -> Versions of FactKnowledge.
        fact_keys: every FactId ever created, in BTreeMap order.
        fact_created: creation position of each fact, in creation order (sorted).
        entities: StableId -> Versions of EntityKnowledge; ``entity_keys`` sorted.
        active: Versions of the FactId of the interaction in progress (or None).
        npcs: StableId -> Versions of NpcState (position 0 = the initial state).
        dialogue: every DialogueLine in order, as ``DialogueRecord`` s held in columns
            (``DialogueLines``; the replay adds them itself: three entries in four of
            a long journal are lines).
        dialogue_by_npc: NPC -> positions in ``dialogue`` of the lines spoken while a
            conversation with it was in progress (the prompt history), ascending, as an
            ``array("q")`` (8 bytes a line, not a list of Python ints: ~18 MB of a
            1 000 000-entry save); indexing it gives Python ints.
        transitions: every interaction state move in order.
        monologues_fired: (journal index, tick, line_id) in order.
        penalty_pairs: journal index of a WalkAwayPenalty -> (journal index, ordinal for
            its NPC) of the walk-away the replay paired it with (save-format §5;
            ``replay._penalised_walk_away``); a penalty paired with none is not in it.
        stress_pairs: journal index of a StressChanged with cause ``walk_away`` ->
            (journal index, ordinal for its NPC) of the walk-away the replay paired it
            with (save-format §5: its NPC's earliest one at the tick without one yet);
            one paired with none is not in it.
        kinds: variant name of each entry (None for invalid entries).
        interactions_by_npc: NPC -> FactIds of its interactions in creation order (the
            order the replay started them), each listed once, when it first holds
            interaction metadata; ``interactions_created`` holds the matching
            journal positions (strictly increasing per NPC).
        transitions_by_npc: NPC -> its TransitionRecords in journal order; the tables
            of its moves by kind and by fact are made from them on first use
            (``NpcMoves``, ``moves_of``).
        interaction_changes: NPC -> journal positions where one of its interactions'
            metadata changed; the aggregates at any position are made from them on
            first use (``InteractionSeries``, ``series_of``).

    The per-NPC aggregates and move tables are not kept for each change during the
    replay: that would be a large share of the replay, for tables that ``check``
    never reads and a view reads for one NPC at a time.
    """

    ticks: list[int] = field(default_factory=list)
    facts: dict[FactId, Versions] = field(default_factory=dict)
    fact_keys: SortedList = field(default_factory=SortedList)
    fact_created: list[int] = field(default_factory=list)
    entities: dict[StableId, Versions] = field(default_factory=dict)
    entity_keys: SortedList = field(default_factory=SortedList)
    active: Versions = field(default_factory=lambda: Versions(0, None))
    npcs: dict[StableId, Versions] = field(default_factory=dict)
    #: StableId -> each of ``npcs``'s versions' score points (float64), in step with them:
    #: the score curves a comparison walks, read as a column (``score_column``).
    npc_scores: dict[StableId, array] = field(default_factory=dict, repr=False)
    dialogue: DialogueLines = field(default_factory=DialogueLines)
    transitions: list[TransitionRecord] = field(default_factory=list)
    transitions_by_npc: dict[StableId, list[TransitionRecord]] = field(default_factory=dict)
    monologues_fired: list[tuple[int, int, str]] = field(default_factory=list)
    penalty_pairs: dict[int, tuple[int, int]] = field(default_factory=dict)
    stress_pairs: dict[int, tuple[int, int]] = field(default_factory=dict)
    kinds: list = field(default_factory=list)
    slugs: dict[StableId, str] = field(default_factory=dict)
    interaction_changes: dict[StableId, list[int]] = field(default_factory=dict)
    change_positions: list[int] = field(default_factory=list)
    change_facts: list[FactId] = field(default_factory=list)
    interactions_by_npc: dict[StableId, list[FactId]] = field(default_factory=dict)
    interactions_created: dict[StableId, list[int]] = field(default_factory=dict)
    # NPC -> the FactId of each change to its interactions' metadata, parallel to
    # ``interaction_changes``: with the codes below, what ``series_of`` is made from.
    _interaction_log: dict[StableId, list[FactId]] = field(default_factory=dict, repr=False)
    # NPC -> ``change_code`` of each of those changes (int64), what ``series_of`` sums.
    _interaction_codes: dict[StableId, array] = field(default_factory=dict, repr=False)
    # NPC -> first position where one of its interaction facts lost its metadata.
    _interaction_lost: dict[StableId, int] = field(default_factory=dict)
    # NPC -> ordinal of the first interaction started before the one created ahead of it.
    _interaction_disorder: dict[StableId, int] = field(default_factory=dict)
    _shared_slugs: set | None = None
    dialogue_by_npc: dict[StableId, array] = field(default_factory=dict)
    # FactIds created since ``fact_keys`` was last brought up to date (``finish``): one
    # sort at the end of the replay instead of a SortedList insertion a fact.
    _new_fact_keys: list[FactId] = field(default_factory=list, compare=False, repr=False)
    #: The tables of the values made from the index on first use and kept with it
    #: (each a ``Memo`` of the module that makes it: ``models/memo.py``); never part of equality.
    memos: Memos = field(default_factory=Memos, compare=False, repr=False)
    #: What the replay recorded besides the state at a tick (``Recording``): the tables
    #: it left out are empty. Never part of equality.
    recording: Recording = field(default=EVERYTHING, compare=False, repr=False)

    # ----- recording (used by the replay) -----
    #: The tables ``record_fact``, ``record_entity`` and ``record_transition`` keep:
    #: what the player knows and the interactions' moves (``take_knowledge``).
    KNOWLEDGE_TABLES = ("facts", "fact_keys", "fact_created", "entities", "entity_keys", "transitions", "transitions_by_npc",
                        "interaction_changes", "change_positions", "change_facts", "interactions_by_npc", "interactions_created",
                        "_interaction_log", "_interaction_codes", "_interaction_lost", "_interaction_disorder")

    def take_knowledge(self, recorded: "TimelineIndex") -> None:
        """Hold ``recorded``'s knowledge tables (``KNOWLEDGE_TABLES``, shared, never
        copied) in place of this index's: a what-if's replay whose edits move only NPC
        numbers knows what the recorded run knew (``replay``'s ``knowledge_of``). Both
        indexes are read-only once replayed."""
        recorded.finish()
        for name in self.KNOWLEDGE_TABLES:
            setattr(self, name, getattr(recorded, name))
        self._new_fact_keys = []

    def record_fact(self, position: int, fact_id: FactId, fact: FactKnowledge) -> None:
        """Record a fact's value from ``position`` on (with the tables ``recording`` asks for)."""
        recording = self.recording
        if recording.timeline:
            self.change_positions.append(position)
            self.change_facts.append(fact_id)
        versions = self.facts.get(fact_id)
        if recording.interactions:
            self._record_interaction_change(position, fact_id, fact, versions)
        if versions is None:
            self.facts[fact_id] = Versions(position, fact)
            self._new_fact_keys.append(fact_id)
            self.fact_created.append(position)
        else:
            versions.set(position, fact)

    def _record_interaction_change(self, position: int, fact_id: FactId, fact: FactKnowledge, versions: Versions | None) -> None:
        """``record_fact``'s part for the NPC's interaction tables: the change of an
        interaction's metadata (``versions``: the fact's before this one, if any)."""
        meta = fact.interaction
        before = versions.values[-1].interaction if versions is not None else None
        if meta is not None:
            npc = meta.target_entity
            self.interaction_changes.setdefault(npc, []).append(position)
            self._interaction_log.setdefault(npc, []).append(fact_id)
            codes = self._interaction_codes.get(npc)
            if codes is None:
                codes = self._interaction_codes[npc] = array("q")
            codes.append(change_code(before, meta))
            if before is None and (versions is None or not any(v.interaction for v in versions.values)):
                self._list_interaction(position, fact_id, meta)
        elif before is not None:
            self._interaction_lost.setdefault(before.target_entity, position)

    def _list_interaction(self, position: int, fact_id: FactId, meta) -> None:
        """Append a newly started interaction to its NPC's creation-ordered list."""
        npc = meta.target_entity
        ids = self.interactions_by_npc.setdefault(npc, [])
        if ids and npc not in self._interaction_disorder:
            prev = self.facts[ids[-1]].values[-1].interaction
            if prev is not None and _started_key(fact_id, meta) < _started_key(ids[-1], prev):
                self._interaction_disorder[npc] = len(ids)
        ids.append(fact_id)
        self.interactions_created.setdefault(npc, []).append(position)

    def npc_for_slug(self, slug: str) -> StableId | None:
        """The StableId of the NPC with this content slug (the first one, when two
        share it), if the save has one: O(1) with a map built on first use. Monologue
        prerequisites ask it for every line at every tick (3 000 NPCs were a scan each)."""
        by_slug = NPC_FOR_SLUG.get(self, None)
        if by_slug is None or by_slug[0] != len(self.slugs):
            ids: dict[str, StableId] = {}
            for sid, name in self.slugs.items():
                ids.setdefault(name, sid)
            by_slug = NPC_FOR_SLUG.replace(self, None, (len(self.slugs), ids))
        return by_slug[1].get(slug)

    def series_of(self, npc: StableId) -> "InteractionSeries":
        """The NPC's interaction aggregates at each change, made on first use and kept
        (remade when the replay has recorded more since). O(changes) once, in numpy."""
        log = self._interaction_log.get(npc, ())
        kept = INTERACTION_SERIES.get(self, npc)
        if kept is None or kept.changes != len(log):  # none yet, or made while the replay was recording
            made = InteractionSeries(self.interaction_changes.get(npc, []), log, self._interaction_codes.get(npc, ()))
            kept = INTERACTION_SERIES.publish(self, npc, made) if kept is None else INTERACTION_SERIES.replace(self, npc, made)
        return kept

    def summary(self, npc: StableId, position: int) -> InteractionSummary:
        """The NPC's interaction aggregates at ``position``: O(log N) after the first call
        for the NPC (``series_of``)."""
        if npc not in self._interaction_log:
            return _EMPTY_SUMMARY
        return self.series_of(npc).at(position)

    def record_transition(self, record: TransitionRecord) -> None:
        """Append an interaction state move (also kept per NPC)."""
        self.transitions.append(record)
        self.transitions_by_npc.setdefault(record.npc, []).append(record)

    def moves_of(self, npc: StableId) -> "NpcMoves":
        """The NPC's moves by kind and by fact, made on first use and kept (remade when
        the replay has recorded more since): O(moves) once."""
        moves = self.transitions_by_npc.get(npc, [])
        kept = NPC_MOVES.get(self, npc)
        if kept is None:
            kept = NPC_MOVES.publish(self, npc, NpcMoves(moves))
        if kept.moves != len(moves):  # made while the replay was recording
            kept = NPC_MOVES.replace(self, npc, NpcMoves(moves))
        return kept

    def prepare_npc_tables(self, min_changes: int = 0) -> None:
        """Make ``series_of`` and ``moves_of`` now, of every NPC with at least
        ``min_changes`` interaction changes: O(changes + moves).

        The open's child process calls it, so no step pays for them: an NPC with a long
        history would cost a step more than a frame."""
        for npc in self.npcs:
            if len(self._interaction_log.get(npc, ())) >= min_changes:
                self.series_of(npc)
                self.moves_of(npc)

    def moves_of_fact(self, fact_id: FactId | None) -> list[TransitionRecord]:
        """Every move of one interaction, in journal order (empty for a fact that never
        held interaction metadata). Its moves are in the tables of the NPCs its
        metadata named, which is one NPC unless a faulty journal made the same FactId
        twice (a FactLearned ahead of the sequence)."""
        versions = self.facts.get(fact_id) if fact_id is not None else None
        if versions is None:
            return []
        npcs = {value.interaction.target_entity for value in versions.values if value.interaction is not None}
        found = [record for npc in npcs for record in self.moves_of(npc).by_fact.get(fact_id, ())]
        if len(npcs) > 1:
            found.sort(key=lambda r: r.index)
        return found

    # ----- one NPC's interactions at a position (O(log N) each) -----
    def interaction_count(self, npc: StableId, position: int) -> int:
        """How many interactions with ``npc`` exist at ``position``: O(log N)."""
        return bisect_right(self.interactions_created.get(npc, ()), position)

    def interaction_ids(self, npc: StableId, position: int) -> list[FactId]:
        """FactIds of the NPC's interactions at ``position`` in creation order.

        Creation order is the order the replay started them, which is started-tick
        order (ties by FactId sequence) unless ``interactions_exact`` says otherwise.
        Costs O(log N) plus a copy of the prefix (decoded chunk by chunk from a mapped
        column: see ``interaction_ids_newest_first`` for the latest few).
        """
        return self.interactions_by_npc.get(npc, [])[: self.interaction_count(npc, position)]

    def interaction_ids_newest_first(self, npc: StableId, position: int):
        """``interaction_ids`` newest first, lazily: O(log N) to start, then one id a
        step (a chunk read at most from a mapped column), however many the NPC has."""
        ids = self.interactions_by_npc.get(npc, ())
        for k in range(self.interaction_count(npc, position) - 1, -1, -1):
            yield ids[k]

    def interactions_exact(self, npc: StableId, position: int) -> bool:
        """Whether ``interaction_ids`` (and the NPC's summary) equal the slow forms at ``position``.

        They do unless the save is faulty in one of three ways: another NPC shares
        this NPC's slug (the FactId prefix range then holds both), one of the NPC's
        interaction facts lost its metadata by ``position`` (a FactLearned over it),
        or ticks decreased (J001) so creation order differs from started-tick order
        within the prefix. Callers fall back to ``interaction_facts_for`` then.
        """
        if self._shared_slugs is None:
            seen: dict[str, int] = {}
            for slug in self.slugs.values():
                seen[slug] = seen.get(slug, 0) + 1
            self._shared_slugs = {sid for sid, slug in self.slugs.items() if seen[slug] > 1}
        if npc in self._shared_slugs:
            return False
        lost = self._interaction_lost.get(npc)
        if lost is not None and lost <= position:
            return False
        disorder = self._interaction_disorder.get(npc)
        return disorder is None or self.interaction_count(npc, position) <= disorder

    def interaction_ordinal(self, npc: StableId, fact_id: FactId | None) -> int | None:
        """Where ``fact_id`` stands in the NPC's creation-ordered list (None when absent): O(log N)."""
        versions = self.facts.get(fact_id) if fact_id is not None else None
        if versions is None:
            return None
        for pos, value in zip(versions.positions, versions.values):
            if value.interaction is not None:
                created = self.interactions_created.get(npc, ())
                k = bisect_left(created, pos)
                ok = k < len(created) and created[k] == pos and self.interactions_by_npc[npc][k] == fact_id
                return k if ok else None
        return None

    def transition_counts(self, npc: StableId, position: int) -> dict[tuple, int]:
        """(source, target) -> how many legal moves of that kind the NPC's interactions
        took by ``position`` (kinds never taken are left out): O(log N) per kind.

        A move recorded at journal index i has applied at positions >= i + 1.
        """
        out = {}
        for (source, target), indices in self.moves_of(npc).legal.items():
            n = bisect_left(indices, position)
            if n:
                out[(InteractionState(source) if source is not None else None, InteractionState(target))] = n
        return out

    def transition_total(self, npc: StableId, position: int) -> int:
        """How many moves (legal or not) the NPC's interactions took by ``position``: O(log N)."""
        moves = self.transitions_by_npc.get(npc, [])
        return bisect_left(moves, position, key=lambda r: r.index)

    def illegal_transitions(self, npc: StableId, position: int) -> list[TransitionRecord]:
        """The NPC's forbidden moves by ``position`` in journal order: O(log N + illegal)."""
        moves = self.moves_of(npc).illegal
        return moves[: bisect_left(moves, position, key=lambda r: r.index)]

    def fact_transitions(self, fact_id: FactId | None, position: int) -> list[TransitionRecord]:
        """The moves of one interaction by ``position`` in journal order: O(log N + moves)."""
        moves = self.moves_of_fact(fact_id)
        return moves[: bisect_left(moves, position, key=lambda r: r.index)]

    def record_entity(self, position: int, entity: StableId, value: EntityKnowledge) -> None:
        """Record what the player knows of an entity from ``position`` on."""
        versions = self.entities.get(entity)
        if versions is None:
            self.entities[entity] = Versions(position, value)
            self.entity_keys.add(entity)
        else:
            versions.set(position, value)

    def record_npc(self, position: int, npc: NpcState) -> None:
        """Record an NPC's state from ``position`` on."""
        versions = self.npcs.get(npc.stable_id)
        score = npc.relationship.score
        if versions is None:
            self.npcs[npc.stable_id] = Versions(position, npc)
            if self.recording.timeline:
                self.npc_scores[npc.stable_id] = array("d", (score,))
        else:
            versions.set(position, npc)
            if not self.recording.timeline:
                return
            scores = self.npc_scores[npc.stable_id]
            if len(scores) == len(versions.values):  # the version at this position was replaced
                scores[-1] = score
            else:
                scores.append(score)

    def version_ticks(self, versions: Versions, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """The tick each of ``versions``' values ``lo``..``hi`` begins at (uint64): its entry's,
        the one before its position (0 for the snapshot's, at position 0). ``ticks`` never
        decrease, so the value in force at tick T is the last whose tick is at most T, as it
        is the last at or before ``position_for_tick(T)``. Gathered in C (``map``): only the
        versions' ticks, not the journal's."""
        positions = versions.positions[lo:hi]
        first = [0] if positions and positions[0] == 0 else []  # only a first version starts at position 0
        before = map((-1).__add__, positions[len(first):])
        return np.fromiter(chain(first, map(self.ticks.__getitem__, before)), dtype=np.uint64, count=len(positions))

    def score_column(self, npc: StableId):
        """The NPC's versions' score points as a float64 column (one a version of
        ``npcs[npc]``), or None where none was kept in step (an index read in another way)."""
        scores, versions = self.npc_scores.get(npc), self.npcs.get(npc)
        if scores is None or versions is None or len(scores) != len(versions.values):
            return None
        return scores

    def truncated(self, position: int, journal) -> "TimelineIndex":
        """A new index of what this one recorded up to ``position`` (entries before it
        applied, and what the end of the tick before it settled): the index a replay
        stopped there had, which a what-if's replay resumed at a checkpoint continues
        (issue 38; ``replay.ReplayCheckpoint``). ``journal``: the what-if's, which
        agrees with this one's before ``position``.

        Plain lists throughout, also when this index is read from mapped columns;
        O(what is kept), about a tenth of replaying it. Memos are not carried over."""
        p = position
        out = TimelineIndex(slugs=self.slugs)
        out.ticks = list(self.ticks[:p])
        created = bisect_right(self.fact_created, p)
        out.fact_created = list(self.fact_created[:created])
        facts = self.facts
        for fact_id in list(itertools.islice(iter(facts), created)):  # creation order
            out.facts[fact_id] = facts[fact_id].upto(p)
        out.fact_keys = SortedList(out.facts)
        for entity, versions in self.entities.items():
            kept = versions.upto(p)
            if kept is not None:
                out.entities[entity] = kept
        out.entity_keys = SortedList(out.entities)
        out.active = self.active.upto(p)
        out.npcs = {sid: versions.upto(p) for sid, versions in self.npcs.items()}
        out.npc_scores = {sid: array("d", self.npc_scores[sid][:len(versions.values)]) for sid, versions in out.npcs.items()
                          if versions is not None and sid in self.npc_scores}
        out.dialogue = self.dialogue.truncated(p, journal, out.ticks)
        lines = len(out.dialogue)
        for npc, at in self.dialogue_by_npc.items():
            k = bisect_left(at, lines)
            if k:
                out.dialogue_by_npc[npc] = array("q", at[:k])
        by_index = lambda record: record.index  # noqa: E731 - moves of entries before p
        out.transitions = list(self.transitions[:bisect_left(self.transitions, p, key=by_index)])
        for npc, moves in self.transitions_by_npc.items():
            k = bisect_left(moves, p, key=by_index)
            if k:
                out.transitions_by_npc[npc] = list(moves[:k])
        fired = self.monologues_fired
        out.monologues_fired = list(fired[:bisect_left(fired, p, key=lambda item: item[0])])
        out.penalty_pairs = {i: paid for i, paid in self.penalty_pairs.items() if i < p}
        out.stress_pairs = {i: paired for i, paired in self.stress_pairs.items() if i < p}
        for npc, changes in self.interaction_changes.items():
            k = bisect_right(changes, p)
            if k:
                out.interaction_changes[npc] = list(changes[:k])
                out._interaction_log[npc] = list(self._interaction_log[npc][:k])
                out._interaction_codes[npc] = array("q", self._interaction_codes[npc][:k])
        k = bisect_right(self.change_positions, p)
        out.change_positions = list(self.change_positions[:k])
        out.change_facts = list(self.change_facts[:k])
        for npc, created_at in self.interactions_created.items():
            k = bisect_right(created_at, p)
            if k:
                out.interactions_created[npc] = list(created_at[:k])
                out.interactions_by_npc[npc] = list(self.interactions_by_npc[npc][:k])
        out._interaction_lost = {npc: at for npc, at in self._interaction_lost.items() if at <= p}
        out._interaction_disorder = {npc: k for npc, k in self._interaction_disorder.items() if k < len(out.interactions_by_npc.get(npc, ()))}
        return out

    # ----- queries -----
    @property
    def first_tick(self) -> int:
        """Tick of the first journal entry (0 for an empty journal)."""
        return self.ticks[0] if self.ticks else 0

    @property
    def last_tick(self) -> int:
        """Tick of the last journal entry (0 for an empty journal)."""
        return self.ticks[-1] if self.ticks else 0

    def position_for_tick(self, tick: int) -> int:
        """How many journal entries have applied at ``tick`` (entries with tick <= T)."""
        return bisect_right(self.ticks, tick)

    def tick_at_position(self, position: int) -> int:
        """The tick of the state at ``position`` (0 before any entry)."""
        return self.ticks[position - 1] if position > 0 else 0

    def finish(self) -> None:
        """Bring ``fact_keys`` up to date with the facts recorded (the replay calls it
        when done; ``at`` does too, so no query sees it behind).

        The new keys are kept in a list until then: one sort at the end of the replay
        instead of a sorted insertion a fact."""
        if self._new_fact_keys:
            self.fact_keys.update(self._new_fact_keys)
            self._new_fact_keys.clear()

    def at(self, tick: int) -> StateAtTick:
        """The whole narrative state at ``tick`` (a cheap read-only view)."""
        if self._new_fact_keys:
            self.finish()
        return StateAtTick(self, tick, self.position_for_tick(tick))

    def dialogue_with(self, npc: StableId, tick: int) -> list[DialogueRecord]:
        """Dialogue lines spoken while a conversation with ``npc`` was in progress, up to ``tick``."""
        idx = self.dialogue_by_npc.get(npc, [])
        records = self.dialogue
        hi = bisect_right(idx, tick, key=records.tick_of)
        return [records[i] for i in idx[:hi]]

    def dialogue_newest_first(self, npc: StableId, tick: int):
        """Dialogue lines of conversations with ``npc`` up to ``tick``, newest first, lazily."""
        idx = self.dialogue_by_npc.get(npc, [])
        records = self.dialogue
        for k in range(self.dialogue_count_with(npc, tick) - 1, -1, -1):
            yield records[idx[k]]

    def dialogue_count_with(self, npc: StableId, tick: int) -> int:
        """How many lines ``dialogue_with`` would return, in O(log N)."""
        return bisect_right(self.dialogue_by_npc.get(npc, []), tick, key=self.dialogue.tick_of)

    def npc_signature(self, npc: StableId, tick: int) -> tuple[int, int, int]:
        """A value that changes whenever anything the NPC's prompt depends on changed by
        ``tick``: its state version, its dialogue line count and its interaction changes."""
        position = self.position_for_tick(tick)
        versions = self.npcs.get(npc)
        version = bisect_right(versions.positions, position) if versions is not None else 0
        changes = bisect_right(self.interaction_changes.get(npc, []), position)
        return version, self.dialogue_count_with(npc, tick), changes

    def npc_series(self, npc: StableId) -> tuple[list[int], list[float], list[int]]:
        """(ticks, score points, stress) of one NPC at every change, for plotting.

        Starts with the initial state at the first journal tick.
        """
        versions = self.npcs.get(npc)
        if versions is None:
            return [], [], []
        ticks, scores, stress = [], [], []
        for pos, state in zip(versions.positions, versions.values):
            t = self.tick_at_position(pos) if pos > 0 else self.first_tick
            ticks.append(t)
            scores.append(state.relationship.score)
            stress.append(state.tolerance.current_stress)
        return ticks, scores, stress

    def event_ticks(self, kinds: set[str]) -> list[int]:
        """Ticks of the entries of the given variants, in order (for markers and stepping)."""
        return list(compress(self.ticks, map(set(kinds).__contains__, self.kinds)))
