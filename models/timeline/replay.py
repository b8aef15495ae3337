"""Journal replay: the game's rules applied entry by entry, checked as they go.

``replay(save, content)`` starts from the initial state of save-format §5 (empty
knowledge graph; each NPC at stress 0, score 0, counters 0, tolerance and interaction
tolerance as in the snapshot), applies every journal entry in file order, records
each change in a ``TimelineIndex`` and reports what breaks a rule: I001/I005/I009-I011
(interactions, schema §3.2), R001-R004 and R006 (relationship seed), T001/T003/T004 (tolerance,
schema §8.1), J001/J002/J004 (journal), K001/K002 (fact ids) and M001/M002 (monologues).
Faulty entries are applied where the journal shows the game did so, so views show
what the game did; entries naming unknown things are skipped.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right
from copy import copy
from dataclasses import dataclass
from itertools import compress, repeat
from operator import ne

from narrative_debugger.models.content.loader import Content
from narrative_debugger.models.content.monologue import evaluate
from narrative_debugger.models.domain.knowledge import FACT_ID_RE, SLUG_RE, KnowledgeGraph, interaction_fact_id
from narrative_debugger.models.domain.relationship import add_shared_reference, apply_penalty, clamp_score, close_enough, record_interaction, score_delta, sentiment_in_range
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.domain.types import (
    SHARED_REFERENCE_KINDS,
    EntityKnowledge,
    FactKnowledge,
    FactMetadata,
    InteractionMetadata,
    InteractionState,
    KnowledgeConfidence,
    KnowledgeSource,
    KnowledgeState,
    NpcState,
    Relationship,
    ToleranceThreshold,
    is_legal_transition,
)
from msgspec.structs import replace as replace_struct
from narrative_debugger.models.rules.findings import FindingSink, Target
from narrative_debugger.models.save.savefile import Save
from narrative_debugger.models.timeline.index import EVERYTHING, DialogueLines, Recording, TimelineIndex, TransitionRecord

I16_MIN, I16_MAX = -(2**15), 2**15 - 1
S = InteractionState

@dataclass
class _WalkAwayDue:
    """What a walk-away at ``tick`` obliges the journal to show at the same tick (save-format §5)."""

    npc: int
    tick: int
    index: int
    ordinal: int
    stress_seen: bool = False
    penalty_seen: bool = False
    #: The journal index of its StressChanged when that came before it at the tick (T003).
    stress_before: int | None = None


@dataclass
class Recompute:
    """How a what-if replay (issue 38) derives the values downstream of an edit.

    Entries at positions ``changed_from`` to ``changed_to`` (excluded) differ from the
    recorded journal. An NPC's score is taken as recorded until an entry about them is
    changed (or, with ``formula``, from the start: the delta formula's constants were
    tuned); from there on each RelationshipInteraction's delta and ``score_after`` come
    from the formula with its clamp, each penalty is applied to the new score, and the
    recorded values are no longer checked against it (R002/R003). Stress likewise is
    the previous stress plus the entry's delta once an entry about the NPC changed.
    Penalties follow the walk-away rule (interaction seed §8: "if threshold exceeded,
    apply walk_away_penalty"; save-format §5: a walk-away whose ordinal exceeds
    ``walk_away_threshold`` is followed by a penalty): a walk-away past the threshold
    that the journal does not penalise is penalised at the end of its tick; a penalty
    whose walk-away is within the threshold is not applied, an edited or added one as
    much as a recorded one the tuned threshold no longer calls for (all are also
    reported, T004); one written before its walk-away (T004) is held until the tick
    settles and then judged the same way. Where the recorded run broke that rule
    already (``recorded_faults``), the entry is applied as recorded: the fault is the
    recorded game's, not a consequence of the edit.

    ``recorded_walk_thresholds`` (StableId -> walk_away_threshold of the recorded
    run) says where the penalty rule changed; ``drifted`` and ``stress_drifted``
    (StableIds) are filled by the replay, and ``drift_from`` (StableId -> the journal
    index from which the NPC's score is derived anew), which the Explain dock reads;
    ``unapplied`` and ``imposed`` too (what the replay did with the rule, which the
    what-if reports).
    """

    changed_from: int = 0
    changed_to: int = 0
    formula: bool = False
    recorded_walk_thresholds: dict | None = None
    drifted: set = None
    stress_drifted: set = None
    drift_from: dict = None
    #: StableId -> the journal index from which the NPC's score and stress are derived
    #: anew although no entry of B about it changed there: an entry about it was removed
    #: or now names another NPC (the recorded values after it no longer add up).
    pending: dict | None = None
    #: Journal indices (B's) of unchanged entries where the recorded run broke the walk-away
    #: rule (its T004s): a WalkAwayPenalty of a walk-away within the threshold, a walk-away
    #: past it with no penalty. Applied as recorded, whatever the edit: not its consequence.
    recorded_faults: frozenset = frozenset()
    #: Filled by the replay: the journal indices of the WalkAwayPenalty entries it did not
    #: apply: the walk-away each pays for is within the threshold.
    unapplied: set = None
    #: Filled by the replay: the journal indices of the walk-aways past the threshold it
    #: penalised though the journal has no penalty for them.
    imposed: set = None

    def __post_init__(self) -> None:
        self.drifted = set() if self.drifted is None else self.drifted
        self.stress_drifted = set() if self.stress_drifted is None else self.stress_drifted
        self.drift_from = {} if self.drift_from is None else self.drift_from
        self.unapplied = set() if self.unapplied is None else self.unapplied
        self.imposed = set() if self.imposed is None else self.imposed

    def drift(self, npc: int, i: int) -> None:
        """The score of NPC ``npc`` (StableId) is derived anew from journal index ``i`` on."""
        self.drifted.add(npc)
        self.drift_from.setdefault(npc, i)

    def drifting(self, npc: int, i: int) -> bool:
        """Whether entry ``i``'s score change for ``npc`` is derived anew because an
        earlier one was (or ``pending`` says so from here): then it is, from ``i`` on."""
        if npc in self.drifted:
            return True
        start = self.pending.get(npc) if self.pending else None
        if start is not None and start <= i:
            self.drift(npc, i)
            return True
        return False

    def stress_drifting(self, npc: int, i: int) -> bool:
        """``drifting`` for the stress: True once derived anew, from the deltas."""
        if npc in self.stress_drifted:
            return True
        start = self.pending.get(npc) if self.pending else None
        if start is not None and start <= i:
            self.stress_drifted.add(npc)
            return True
        return False

    def derived(self, npc: int, i: int) -> bool:
        """True when journal entry ``i``'s score change for ``npc`` was derived anew
        (the formula, with the tuning, or a penalty on the new score), not taken as recorded."""
        return self.formula or self.changed(i) or self.drift_from.get(npc, i + 1) <= i

    def walk_rule_changed(self, npc: NpcState) -> bool:
        """True when the NPC's ``walk_away_threshold`` is not the recorded run's."""
        recorded = (self.recorded_walk_thresholds or {}).get(npc.stable_id)
        return recorded is not None and recorded != npc.interaction_tolerance.walk_away_threshold

    def changed(self, i: int) -> bool:
        """True when journal entry ``i`` differs from the recorded one."""
        return self.changed_from <= i < self.changed_to


@dataclass
class ReplayResult:
    """What a replay produced: the index, the findings and the final live graph, and
    the checkpoints a what-if can resume at (``replay(checkpoints=True)``)."""

    index: TimelineIndex
    knowledge: KnowledgeGraph
    npcs: dict[int, NpcState]
    confrontation_seen: set[str]
    checkpoints: tuple = ()


def initial_npc(snapshot: NpcState, tuning: Tuning = DEFAULT_TUNING) -> NpcState:
    """The replay's starting state of an NPC (save-format §5): stress 0, score 0,
    counters 0, no walk-aways; threshold and interaction tolerance from the snapshot,
    or from ``tuning`` where it sets them for this NPC (``npc.SLUG.threshold``,
    ``npc.SLUG.walk_away_threshold``)."""
    interaction_tolerance = snapshot.interaction_tolerance
    if tuning.walk_away_thresholds and isinstance(snapshot.slug, str):
        walk = tuning.walk_away_threshold_of(snapshot.slug, interaction_tolerance.walk_away_threshold)
        if walk != interaction_tolerance.walk_away_threshold:
            interaction_tolerance = replace_struct(interaction_tolerance, walk_away_threshold=walk)
    threshold = snapshot.tolerance.threshold
    if tuning.thresholds and isinstance(snapshot.slug, str):
        threshold = tuning.threshold_of(snapshot.slug, threshold)
    return NpcState(
        stable_id=snapshot.stable_id,
        slug=snapshot.slug,
        tolerance=ToleranceThreshold(0, threshold),
        interaction_tolerance=interaction_tolerance,
        relationship=Relationship(),
        walk_aways=0,
    )


def _npc_with(npc: NpcState, *, tolerance=None, relationship=None, walk_aways=None) -> NpcState:
    """``npc`` with the given parts changed (a constructor call; ``dataclasses.replace``
    costs several times more and ran for most of a million entries)."""
    return NpcState(
        npc.stable_id,
        npc.slug,
        npc.tolerance if tolerance is None else tolerance,
        npc.interaction_tolerance,
        npc.relationship if relationship is None else relationship,
        npc.walk_aways if walk_aways is None else walk_aways,
    )


@dataclass
class _Repeated:
    """The first entry of a cause the journal repeats, and how many entries repeat it: one
    finding for them all (J004 a speaker, I010 a target, J001 a higher tick).

    ``high`` and ``high_index`` are J001's: the higher tick and the entry that set it."""

    index: int
    tick: int
    where: str
    count: int = 1
    high: int | None = None
    high_index: int | None = None


@dataclass(frozen=True)
class ReplayCheckpoint:
    """What a replay held, beside its index, before journal entry ``position`` (the
    first entry of a tick, once the tick before it settled): where a what-if's replay
    of an edit at or after ``position`` resumes instead of replaying from the start
    (issue 38). The rest of the state is read from the recorded run's index
    (``TimelineIndex.truncated``, ``resume``).

    Attributes:
        position: journal entries applied (the entry the replay resumes at).
        current: the running maximum tick of the entries before ``position``.
        current_index: the entry that set ``current``.
        in_progress: (NPC StableId, FactId) of each interaction in progress, in the
            replay's order.
        active_fact: the knowledge graph's interaction in progress (its last set).
        behind, unknown_speakers, unknown_targets: the repeated causes counted so far
            (J001, J004, I010; copies).
        findings: how many findings the replay's sink held.
        counts, last_locations: the sink's count and last location by code.
    """

    position: int
    current: int | None
    current_index: int | None
    in_progress: tuple
    active_fact: str | None
    behind: _Repeated | None
    unknown_speakers: tuple
    unknown_targets: tuple
    findings: int
    counts: tuple
    last_locations: tuple


#: Entries between two checkpoints of a replay (``replay(checkpoints=True)``): at
#: least this many, and at most 32 checkpoints a journal.
CHECKPOINT_SPACING = 20_000
CHECKPOINTS_MAX = 32


@dataclass(frozen=True)
class Resume:
    """Where a what-if's replay starts: ``checkpoint`` of the recorded run, whose
    ``index`` and replay ``findings`` (its sink's, in order) hold the rest."""

    checkpoint: ReplayCheckpoint
    index: TimelineIndex
    findings: tuple


class _Replayer:
    def __init__(self, save: Save, content: Content | None, sink: FindingSink, progress=None,
                 tuning: Tuning = DEFAULT_TUNING, recompute: Recompute | None = None, recording: Recording = EVERYTHING) -> None:
        self.save = save
        self.tuning = tuning
        self.recompute = recompute
        self.position = 0  # the entry being replayed (where ``settle`` records what it applies)
        self.content = content
        self.sink = sink
        self.progress = progress
        self.reuse: TimelineIndex | None = None  # the recorded index whose lines and ticks ``run`` takes (``replay``'s ``dialogue_of``)
        self.record_knowledge = True  # False: the index takes the recorded run's knowledge (``replay``'s ``knowledge_of``)
        self.index = TimelineIndex(slugs=save.slugs, recording=recording)
        self.record_timeline = recording.timeline  # the moves, the lines, the monologues fired (``Recording``)
        self.kg = KnowledgeGraph(save.slugs, ordered=False)
        self.npcs: dict[int, NpcState] = {}
        self.in_progress: dict[int, str] = {}  # NPC -> FactId of its interaction in progress
        self.confronted: set[str] = set()
        self.due: list[_WalkAwayDue] = []
        # (journal index, NPC, tick, penalty held) of each WalkAwayPenalty of this tick that
        # came before any walk-away of its NPC it could pay for: paired when the tick settles.
        # A what-if's replay whose walk-away rule changed holds the penalty (its size) until
        # then, when the walk-away it pays for says whether it applies; else None (applied).
        self.early_penalties: list[tuple[int, int, int, float | None]] = []
        # (journal index, NPC, delta) of each StressChanged with cause walk_away of this tick that
        # came before any walk-away of its NPC without one: paired when the tick settles.
        self.early_stress: list[tuple[int, int, int]] = []
        self.monologue_due: list[tuple[int, int, str]] = []
        # Causes repeated over many entries, reported once each (_Repeated): unknown
        # speakers (J004), unknown event targets (I010), entries behind one higher tick (J001).
        self.unknown_speakers: dict[object, _Repeated] = {}
        self.unknown_targets: dict[int, _Repeated] = {}
        self.behind: _Repeated | None = None
        self.tick = 0
        # NPC -> its slug when interaction FactIds made from it parse back to it, else None.
        self.id_slugs = {sid: npc.slug if isinstance(npc.slug, str) and SLUG_RE.fullmatch(npc.slug) else None for sid, npc in save.npcs.items()}
        for sid, npc in save.npcs.items():
            self.npcs[sid] = initial_npc(npc, tuning)
            self.index.record_npc(0, self.npcs[sid])

    # ----- helpers -----
    def add(self, code, message, location, tick=None, *, i: int, npc: NpcState | None = None, values=(), kind: str = "journal", **extra):
        """Report a finding on journal entry ``i`` (its target names the entry, the field, the NPC)."""
        target = Target(
            kind,
            journal_index=i,
            field=location.partition(".")[2] or None,
            npc=npc.slug if npc is not None else None,
            stable_id=npc.stable_id if npc is not None else extra.pop("stable_id", None),
            **extra,
        )
        self.sink.add(code, message, location, self.tick if tick is None else tick, target=target, values=values)

    def where(self, i: int, field: str = "") -> str:
        """The JSON path of journal entry ``i``'s event, and of ``field`` in it
        (``journal[7].event.StressChanged.delta``): made only for a finding, not for each
        of a long journal's entries."""
        return f"journal[{i}].event.{self.save.journal.kinds[i]}{field}"

    def target_npc(self, i: int, sid) -> NpcState | None:
        """The NPC an event names; an unknown one is counted for its I010
        (``_report_unknown_names``: one finding per target, not per event)."""
        if not isinstance(sid, int):
            self.add("I010", f"the event names target {sid!r}, which is not an NPC of the save", self.where(i, ".target"), i=i)
            return None
        npc = self.npcs.get(sid)
        if npc is None:
            self.repeated(self.unknown_targets, sid, i, ".target")
        return npc

    def repeated(self, table: dict, key, i: int, field: str) -> None:
        """Count entry ``i`` for the cause ``key`` of ``table`` (its first entry is kept,
        with the path of its ``field``)."""
        seen = table.get(key)
        if seen is None:
            table[key] = _Repeated(i, self.tick, self.where(i, field))
        else:
            seen.count += 1

    def set_npc(self, position: int, npc: NpcState) -> None:
        self.npcs[npc.stable_id] = npc
        self.index.record_npc(position, npc)

    def set_fact(self, position: int, fact_id: str, fact: FactKnowledge, slug: str | None = None) -> None:
        self.kg.set_fact(fact_id, fact, slug)
        if self.record_knowledge:
            self.index.record_fact(position, fact_id, fact)

    def move(self, i: int, npc: NpcState, fact_id: str, source, target: InteractionState) -> bool:
        legal = is_legal_transition(source, target)
        if not legal:
            src = source.name if source else "(nothing)"
            self.add("I001", f"{npc.slug}: {fact_id} moves {src} → {target.name}, which schema §3.2 forbids", self.where(i), i=i, npc=npc, fact_id=fact_id)
        if self.record_knowledge and self.record_timeline:
            self.index.record_transition(TransitionRecord(i, self.tick, npc.stable_id, fact_id, source, target, legal))
        return legal

    # ----- checkpoints (issue 38) -----
    def checkpoint(self, position: int, current: int | None, current_index: int | None) -> ReplayCheckpoint:
        """The state beside the index before entry ``position`` (see ``ReplayCheckpoint``)."""
        held, counts, last_locations = self.sink.state()
        return ReplayCheckpoint(
            position, current, current_index, tuple(self.in_progress.items()), self.kg.active_fact_id(),
            copy(self.behind), tuple((k, copy(v)) for k, v in self.unknown_speakers.items()),
            tuple((k, copy(v)) for k, v in self.unknown_targets.items()), held, counts, last_locations)

    def resume(self, resume: Resume) -> None:
        """Take the state of the recorded run at ``resume.checkpoint``: its index up to
        there, the knowledge graph and NPCs that index holds there, the findings its
        replay had made, and the rest from the checkpoint. ``run`` then goes on from
        the checkpoint's entry, as a replay from the start would have."""
        c = resume.checkpoint
        self.index = index = resume.index.truncated(c.position, self.save.journal)
        index.slugs = self.save.slugs
        self.npcs = {sid: index.npcs[sid].values[-1] for sid in self.save.npcs}
        kg = self.kg = KnowledgeGraph(self.save.slugs, ordered=False)
        kg.set_facts((fact_id, versions.values[-1]) for fact_id, versions in index.facts.items())
        for entity, versions in index.entities.items():
            kg.set_entity(entity, versions.values[-1])
        kg.set_active_fact(c.active_fact)
        self.in_progress = dict(c.in_progress)
        self.confronted = {record.fact_id for record in index.transitions if record.target is S.Confrontation}
        self.behind = copy(c.behind)
        self.unknown_speakers = {k: copy(v) for k, v in c.unknown_speakers}
        self.unknown_targets = {k: copy(v) for k, v in c.unknown_targets}
        self.sink.restore(resume.findings[:c.findings], c.counts, c.last_locations)
        self.tick = c.current if c.current is not None else 0

    # ----- the loop -----
    def run(self, resume: ReplayCheckpoint | None = None, checkpoints: list | None = None) -> None:
        """Apply the journal's entries from the first (from ``resume``'s position, the
        state taken by ``resume``); with ``checkpoints``, append a ``ReplayCheckpoint``
        to it at the first tick boundary past every ``CHECKPOINT_SPACING`` entries (at
        most ``CHECKPOINTS_MAX``)."""
        if self.reuse is not None:
            self._run_without_dialogue(resume.position if resume is not None else 0, resume.current if resume is not None else None)
            return
        journal = self.save.journal
        saved_at = self.save.saved_at_tick
        ticks_out = self.index.ticks
        self.index.kinds = journal.kinds
        handlers = {name: getattr(self, "on_" + name) for name in _HANDLED}
        total = len(journal)
        step = max(1, total // 100)
        start = resume.position if resume is not None else 0
        current = resume.current if resume is not None else None
        current_index = resume.current_index if resume is not None else None  # the entry that set ``current``
        spacing = max(CHECKPOINT_SPACING, -(-total // CHECKPOINTS_MAX))
        next_checkpoint = spacing if checkpoints is not None else total + 1
        # DialogueLine is most of a long journal: it is recorded here, without a handler call.
        speakers = set(self.npcs) | {self.save.player.stable_id}
        active = self.index.active.values  # its last value is the interaction in progress
        facts = self.kg.facts
        if resume is None:
            self.index.dialogue = DialogueLines(journal, self.index.ticks)
        lines = self.index.recording.timeline  # record the lines (``Recording.timeline``)
        dialogue = self.index.dialogue
        add_line = dialogue.add
        by_npc = self.index.dialogue_by_npc
        # The conversation lines belong to changes only when a handler runs: it is
        # looked up again on the first line after one, not on each of the 728 000.
        stale = True
        conversation = add_to_conversation = None
        add_tick = ticks_out.append
        progress = self.progress
        entries = zip(journal.ticks, journal.kinds, journal.data) if not start else zip(journal.ticks[start:], journal.kinds[start:], journal.data[start:])
        for i, (tick, kind, data) in enumerate(entries, start):
            if tick is None:
                tick = current if current is not None else 0
            elif current is not None and tick < current:
                run = self.behind
                if run is not None and run.high_index == current_index:
                    run.count += 1  # one more entry behind the same high tick: one J001 for them all
                else:
                    self._report_behind()
                    self.behind = _Repeated(i, tick, f"journal[{i}].tick", high=current, high_index=current_index)
            if current is None or tick > current:
                if self._unsettled():
                    self.position = i
                    self.settle()
                if i >= next_checkpoint:
                    checkpoints.append(self.checkpoint(i, current, current_index))
                    next_checkpoint = i + spacing
                current = tick
                current_index = i
            self.tick = tick
            add_tick(current)
            if tick > saved_at:
                self.add("J002", f"journal entry at tick {tick} is after saved_at_tick {saved_at}", f"journal[{i}].tick", tick, i=i)
            if kind == "DialogueLine":
                if data.speaker not in speakers:
                    self.on_DialogueLine(i, data)
                if lines:
                    if stale:
                        fact_id = active[-1]  # the conversation the line belongs to, if any
                        conversation = facts[fact_id].metadata.interaction.target_entity if fact_id else None
                        add_to_conversation = by_npc.setdefault(conversation, array("q")).append if conversation is not None else None
                        stale = False
                    if add_to_conversation is not None:
                        add_to_conversation(len(dialogue))  # kept per conversation NPC for the prompt history
                    add_line(i, conversation)
            elif kind is not None:
                handlers[kind](i, data)
                stale = True
            if progress is not None and i % step == 0:
                progress(i, total)
        self._finish_journal(total)

    def _run_without_dialogue(self, start: int, current: int | None) -> None:
        """``run`` from entry ``start`` (at tick ``current``: a checkpoint's, or None at the
        first entry) for a journal whose dialogue is the recorded run's (``replay``'s
        ``dialogue_of``): the ticks, the dialogue lines and each NPC's lines are the
        recorded index's, and only the entries that are not lines are applied. The end of
        each tick (``settle``) falls where ``run`` puts it: at the first entry of the next
        tick, found by a bisection into the ticks, which never decrease and hold each
        entry's own tick (no J001, no tick left out). The index and findings are those
        ``run`` gives (the what-if's checkpoint tests hold them equal)."""
        journal, recorded = self.save.journal, self.reuse
        index = self.index
        index.kinds = journal.kinds
        ticks = index.ticks = list(recorded.ticks)
        index.dialogue = recorded.dialogue.truncated(len(journal), journal, ticks)
        index.dialogue_by_npc = {npc: array("q", at) for npc, at in recorded.dialogue_by_npc.items()}
        handlers = {name: getattr(self, "on_" + name) for name in _HANDLED}
        total = len(journal)
        step = max(1, total // 100)
        kinds, data = journal.kinds, journal.data
        last = start - 1  # the last entry visited
        progress, reported = self.progress, start
        # Every entry but the lines (an unreadable one too, kind None).
        for i in compress(range(start, total), map(ne, kinds[start:], repeat("DialogueLine"))):
            tick = ticks[i]
            if current is None or tick > current:
                boundary = bisect_right(ticks, current, last + 1, i + 1) if current is not None else i
                if self._unsettled():
                    self.position = boundary
                    self.settle()
                current = tick
            self.tick = tick
            kind = kinds[i]
            if kind is not None:
                handlers[kind](i, data[i])
            last = i
            if progress is not None and i - reported >= step:
                reported = i
                progress(i, total)
        if total and last + 1 < total and ticks[-1] > current:  # the next tick begins among the lines after the last entry
            if self._unsettled():
                self.position = bisect_right(ticks, current, last + 1, total)
                self.settle()
        if total:
            self.tick = ticks[-1]
        self._finish_journal(total)

    def _unsettled(self) -> bool:
        """Whether the tick has something ``settle`` judges at its end: walk-aways, penalties
        and stress changes not paired yet, monologue lines fired."""
        return bool(self.due or self.early_penalties or self.early_stress or self.monologue_due)

    def _finish_journal(self, total: int) -> None:
        """The journal's end: its last tick settles, and the causes repeated over many
        entries are reported once each."""
        self.position = total
        self.settle()
        self._report_behind()
        self._report_unknown_names()

    def _report_behind(self) -> None:
        """One J001 for the entries whose ticks are below one earlier entry's: on the
        first, with how many there are: one entry at tick 2^64 - 1 would otherwise give
        a J001 for every entry after it, burying the one cause."""
        run, self.behind = self.behind, None
        if run is None:
            return
        more = f" ({run.count:,} entries are behind journal[{run.high_index}]'s tick, the first here)" if run.count > 1 else ""
        self.add("J001", f"journal tick {run.tick} comes after tick {run.high}: ticks never decrease{more}", run.where, run.tick, i=run.index,
                 previous_journal_index=run.high_index, values=(("entries behind", f"{run.count:,}"),))

    def _report_unknown_names(self) -> None:
        """One J004 per unknown speaker, on its first line, with how many lines it spoke,
        and one I010 per unknown event target, on its first event, with how many named it.

        A finding an entry would bury the cause: a save whose player cannot be read would
        give one F002 and a J004 for every line (1 363 on the evening sample), and an NPC
        missing from the save one I010 per event about them."""
        for sid, seen in self.unknown_targets.items():
            more = f" ({seen.count:,} events name it, the first here)" if seen.count > 1 else ""
            self.add("I010", f"the event names target {sid}, which is not an NPC of the save{more}", seen.where, seen.tick, i=seen.index,
                     stable_id=sid, values=(("events", f"{seen.count:,}"),))
        if not self.unknown_speakers:
            return
        cause = next((f.location for f in self.save.findings if f.code == "F002" and f.location.split(".")[0] == "player"), None)
        for speaker, seen in self.unknown_speakers.items():
            more = f" ({seen.count:,} lines, the first here)" if seen.count > 1 else ""
            hint = f"; the save's player could not be read (F002 at {cause})" if cause is not None else ""
            self.add("J004", f"DialogueLine speaker {speaker} is neither the player nor an NPC of the save{more}{hint}",
                     seen.where, seen.tick, i=seen.index, values=(("lines", f"{seen.count:,}"),), stable_id=speaker if isinstance(speaker, int) else None)

    def settle(self) -> None:
        """End of a tick: walk-away obligations and monologue prerequisites are judged."""
        for i, sid, tick, held in self.early_penalties:
            due = self._pay_early(i, self.npcs[sid], tick)
            npc = self.npcs[sid]
            if held is None:
                continue
            if due is None or due.ordinal > npc.interaction_tolerance.walk_away_threshold:
                # What if: the penalty held for its walk-away applies; one the threshold
                # does not call for is dropped, as one written after its walk-away is.
                self.set_npc(self.position, _npc_with(npc, relationship=apply_penalty(npc.relationship, held)))
            else:
                self.recompute.unapplied.add(i)
        self.early_penalties.clear()
        for i, sid, delta in self.early_stress:
            due = self._stress_walk_away(i, self.npcs[sid], delta)
            if due is not None:
                due.stress_before = i
        self.early_stress.clear()
        for due in self.due:
            npc = self.npcs[due.npc]
            tol = npc.interaction_tolerance
            where = f"journal[{due.index}]"
            if due.stress_before is not None:  # save-format §5: the stress change follows its walk-away
                self.add("T003", f"{npc.slug}: walk-away #{due.ordinal} at tick {due.tick}: its StressChanged (cause walk_away) comes "
                         f"before it, at journal[{due.stress_before}]; a StressChanged follows its walk-away at the same tick",
                         where, due.tick, i=due.index, npc=npc)
            elif not due.stress_seen:
                self.add(
                    "T003",
                    f"{npc.slug}: walk-away #{due.ordinal} at tick {due.tick} has no StressChanged (cause walk_away, "
                    f"delta {tol.walk_away_stress_delta}) at the same tick",
                    where,
                    due.tick,
                    i=due.index,
                    npc=npc,
                )
            if due.ordinal > tol.walk_away_threshold and not due.penalty_seen:
                rc = self.recompute
                if rc is not None and due.index not in rc.recorded_faults:
                    # What if: the threshold calls for a penalty the journal lacks (a tuned
                    # threshold, a penalty edited away), where the recorded run had one or none was due.
                    rc.drift(npc.stable_id, due.index)
                    rc.imposed.add(due.index)
                    npc = _npc_with(npc, relationship=apply_penalty(npc.relationship, tol.walk_away_penalty))
                    self.set_npc(self.position, npc)
                self.add(
                    "T004",
                    f"{npc.slug}: walk-away #{due.ordinal} is past the threshold of {tol.walk_away_threshold} "
                    f"but no WalkAwayPenalty of {tol.walk_away_penalty:g} follows at tick {due.tick}",
                    where,
                    due.tick,
                    i=due.index,
                    npc=npc,
                )
        self.due.clear()
        for i, mtick, line_id in self.monologue_due:
            line = self.content.monologues.get(line_id) if self.content else None
            if line is None:
                continue
            result = evaluate(line, self.kg)
            if not result.eligible:
                self.add(
                    "M001",
                    f"monologue {line_id!r} fired at tick {mtick} but its prerequisites did not hold: " + "; ".join(result.failing),
                    f"journal[{i}].event.MonologueFired.line_id",
                    mtick,
                    i=i,
                    kind="line",
                    line_id=line_id,
                    values=tuple(("fails", text) for text in result.failing),
                )
        self.monologue_due.clear()

    # ----- interaction events (schema §7.2) -----
    def on_InteractionStarted(self, i, d):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return
        seq = self.kg.next_interaction_sequence(npc.slug)
        fact_id = interaction_fact_id(npc.slug, seq)
        for other_sid, other_fid in self.in_progress.items():
            # About the conversation this entry starts (it lands on it, in progress).
            self.add("I005", f"{npc.slug}: {fact_id} starts while {other_fid} is still in progress", self.where(i), i=i, npc=npc, fact_id=fact_id)
        meta = InteractionMetadata(
            target_entity=npc.stable_id,
            interaction_state=S.Active,
            started_tick=self.tick,
            ended_tick=None,
            topics=(),
            confrontation=False,
            player_initiated=d.player_initiated,
            location=d.location,
        )
        self.move(i, npc, fact_id, None, S.Active)
        fact = FactKnowledge(KnowledgeConfidence.Direct, KnowledgeSource.DirectObservation, KnowledgeState.Active, self.tick, FactMetadata(meta))
        self.set_fact(i + 1, fact_id, fact, self.id_slugs[npc.stable_id])
        self.in_progress[npc.stable_id] = fact_id
        self.index.active.set(i + 1, fact_id)

    def _current(self, i, d, target_state: InteractionState):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return None
        fact_id = self.in_progress.get(npc.stable_id)
        if fact_id is None:
            # Checks.md I011: nothing in progress, also when earlier interactions have
            # all ended (schema §3.2: a terminal state is never left).
            self.add("I011", f"{npc.slug}: {target_state.name} event but no conversation with them is in progress", self.where(i), i=i, npc=npc)
            return None
        return npc, fact_id, self.kg.facts[fact_id]

    def _end(self, i, npc, fact_id, fact, state: InteractionState, topics=None, confrontation=None):
        old = fact.interaction
        ended = old.ended_tick
        confidence = fact.confidence
        if not state.in_progress:
            ended = self.tick
            confidence = KnowledgeConfidence.KnowsDetails
            self._leave_in_progress(i, npc.stable_id, fact_id)
        meta = InteractionMetadata(
            old.target_entity,
            state,
            old.started_tick,
            ended,
            old.topics if topics is None else topics,
            old.confrontation if confrontation is None else confrontation,
            old.player_initiated,
            old.location,
        )
        self.set_fact(i + 1, fact_id, FactKnowledge(confidence, fact.source, fact.state, fact.acquired_tick, FactMetadata(meta)))
        return meta

    def _leave_in_progress(self, i, sid, fact_id) -> None:
        """NPC ``sid``'s interaction ``fact_id`` is no longer in progress after entry ``i``;
        the one in progress is then another NPC's, if any."""
        del self.in_progress[sid]
        if self.index.active.values[-1] == fact_id:
            self.index.active.set(i + 1, next(iter(self.in_progress.values()), None))

    def on_InteractionConfrontation(self, i, d):
        cur = self._current(i, d, S.Confrontation)
        if cur is None:
            return
        npc, fact_id, fact = cur
        self.move(i, npc, fact_id, fact.interaction.interaction_state, S.Confrontation)
        self.confronted.add(fact_id)
        self._end(i, npc, fact_id, fact, S.Confrontation, confrontation=True)

    def on_InteractionCompleted(self, i, d):
        topics = d.topics
        if self.content is not None and self.content.topics:
            for k, topic in enumerate(topics):
                if topic not in self.content.topics:
                    self.add("I009", f"topic {topic!r} is not in global/enums/topics.yaml", self.where(i, f".topics[{k}]"), i=i, npc=self.npcs.get(d.target), topic=topic)
        cur = self._current(i, d, S.Completed)
        if cur is None:
            return
        npc, fact_id, fact = cur
        self.move(i, npc, fact_id, fact.interaction.interaction_state, S.Completed)
        self._end(i, npc, fact_id, fact, S.Completed, topics=tuple(topics))

    def _walk_away(self, i, d, state: InteractionState):
        cur = self._current(i, d, state)
        if cur is None:
            return
        npc, fact_id, fact = cur
        self.move(i, npc, fact_id, fact.interaction.interaction_state, state)
        self._end(i, npc, fact_id, fact, state)
        npc = _npc_with(npc, walk_aways=npc.walk_aways + 1)
        self.set_npc(i + 1, npc)
        self.due.append(_WalkAwayDue(npc.stable_id, self.tick, i, npc.walk_aways))

    def on_InteractionWalkedAway(self, i, d):
        self._walk_away(i, d, S.WalkedAway)

    def on_InteractionConflictAbandoned(self, i, d):
        self._walk_away(i, d, S.ConflictAbandoned)

    # ----- facts and entities -----
    def on_FactLearned(self, i, d):
        fact_id = d.fact_id
        if not FACT_ID_RE.fullmatch(fact_id):
            self.add("K001", f"FactId {fact_id!r} is not category.topic (lowercase, one dot)", self.where(i, ".fact_id"), i=i, fact_id=fact_id)
        elif fact_id.startswith("interaction."):
            self.add("K002", f"{fact_id} is learned as an ordinary fact but interaction facts need interaction metadata", self.where(i, ".fact_id"), i=i, fact_id=fact_id)
        self.set_fact(i + 1, fact_id, FactKnowledge(d.confidence, d.source, KnowledgeState.Active, self.tick, None))
        if fact_id in self.in_progress.values():
            # The ordinary fact replaced an interaction in progress (K002 or K001): with
            # its metadata gone it is no longer in progress, and what follows for that
            # NPC is judged as if no conversation were (I011), never read as one.
            for sid in [sid for sid, fid in self.in_progress.items() if fid == fact_id]:
                self._leave_in_progress(i, sid, fact_id)

    def on_FactUpdated(self, i, d):
        fact_id = d.fact_id
        if not FACT_ID_RE.fullmatch(fact_id):
            self.add("K001", f"FactId {fact_id!r} is not category.topic (lowercase, one dot)", self.where(i, ".fact_id"), i=i, fact_id=fact_id)
        fact = self.kg.facts.get(fact_id)
        if fact is None:
            self.add("J004", f"FactUpdated names {fact_id!r}, which the player does not know at this point", self.where(i, ".fact_id"), i=i, fact_id=fact_id)
            return
        confidence = d.confidence if d.confidence is not None else fact.confidence
        state = d.state if d.state is not None else fact.state
        meta = fact.interaction
        if meta is not None and d.confidence is not None:
            wanted = KnowledgeConfidence.Direct if meta.interaction_state.in_progress else KnowledgeConfidence.KnowsDetails
            if confidence != wanted:
                self.add("I008", f"{fact_id} ({meta.interaction_state.name}) set to {confidence.name}; it must stay {wanted.name}", self.where(i, ".confidence"), i=i, npc=self.npcs.get(meta.target_entity), fact_id=fact_id, values=(("set to", confidence.name), ("required", wanted.name)))
        self.set_fact(i + 1, fact_id, FactKnowledge(confidence, fact.source, state, fact.acquired_tick, fact.metadata))

    def on_EntityObserved(self, i, d):
        value = EntityKnowledge(d.confidence, d.source, KnowledgeState.Active, d.relationship, self.tick)
        self.kg.set_entity(d.entity, value)
        if self.record_knowledge:
            self.index.record_entity(i + 1, d.entity, value)

    # ----- relationship (relationship seed) -----
    def on_RelationshipInteraction(self, i, d):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return
        if not sentiment_in_range(d.sentiment):
            self.add("R006", f"{npc.slug}: sentiment {d.sentiment:g} is outside -1..1", self.where(i, ".sentiment"), i=i, npc=npc)
        rel = npc.relationship
        rc = self.recompute
        if rc is not None and (rc.formula or rc.changed(i) or rc.drifting(npc.stable_id, i)):
            # What if: the delta and score_after follow from the formula and the new score.
            rc.drift(npc.stable_id, i)
            rel = record_interaction(rel, tick=self.tick, sentiment=d.sentiment, message_length=d.message_length,
                                     conversation_turns=d.conversation_turns, tuning=self.tuning)
            self.set_npc(i + 1, _npc_with(npc, relationship=rel))
            return
        expected = score_delta(d.sentiment, d.message_length, d.conversation_turns)
        if not close_enough(expected, d.delta):
            self.add(
                "R002",
                f"{npc.slug}: delta {d.delta:g} is not the formula's {expected:.4f} for sentiment {d.sentiment:g}, "
                f"length {d.message_length}, turns {d.conversation_turns}",
                self.where(i, ".delta"),
                i=i,
                npc=npc,
                values=(("recorded delta", f"{d.delta:g}"), ("formula", f"{expected:.4f}")),
            )
        self._check_score(i, npc, rel.score + d.delta, d.score_after, rel.score, "+", d.delta)
        rel = record_interaction(
            rel,
            tick=self.tick,
            sentiment=d.sentiment,
            message_length=d.message_length,
            conversation_turns=d.conversation_turns,
            score_after=float(d.score_after),
        )
        self.set_npc(i + 1, _npc_with(npc, relationship=rel))

    def _check_score(self, i, npc, raw, after, score, sign, change):
        """R001/R003 for a ``score_after`` against ``raw`` (``score sign change``, the
        text a finding shows, written only then: 65 000 f-strings of a long journal)."""
        if not math.isfinite(after) or not 0.0 <= after <= 100.0:
            self.add("R001", f"{npc.slug}: score_after {after!r} is outside 0..100", self.where(i, ".score_after"), i=i, npc=npc)
        expected = clamp_score(raw)
        if not close_enough(expected, after):
            how = f"{score:g} {sign} {change:g}"
            self.add(
                "R003",
                f"{npc.slug}: score_after {after:g} should be {expected:.4f} ({how}, clamped to 0..100)",
                self.where(i, ".score_after"),
                i=i,
                npc=npc,
                values=(("recorded score_after", f"{after:g}"), ("computed", f"{expected:.4f}"), ("from", how)),
            )

    def _penalised_walk_away(self, npc: NpcState) -> _WalkAwayDue | None:
        """The walk-away of this tick a WalkAwayPenalty of ``npc`` pays for (save-format §5,
        interaction seed §8: a walk-away whose ordinal exceeds ``walk_away_threshold`` is
        followed at the same tick by a penalty): the NPC's earliest one past the threshold
        not paid for yet. A tick may hold several walk-aways, of one NPC or of several, before
        their penalties: one within the threshold is not owed one, so it is paired only when
        no walk-away past it is left (the penalty is then the one T004 reports as unexpected)."""
        open_ = [x for x in self.due if x.npc == npc.stable_id and not x.penalty_seen]
        threshold = npc.interaction_tolerance.walk_away_threshold
        return next((x for x in open_ if x.ordinal > threshold), open_[0] if open_ else None)

    def _pay(self, i: int, due: _WalkAwayDue) -> None:
        """WalkAwayPenalty ``i`` pays for ``due``: recorded in the index (``penalty_pairs``),
        where the Explain dock and ``why`` read which walk-away a penalty is for."""
        due.penalty_seen = True
        self.index.penalty_pairs[i] = (due.index, due.ordinal)

    def _pay_early(self, i: int, npc: NpcState, tick: int) -> _WalkAwayDue | None:
        """T004 for WalkAwayPenalty ``i``, which no walk-away of ``npc`` came before at its
        tick: the walk-away it pays for is the one ``_penalised_walk_away`` gives once the
        tick's penalties written after their walk-aways have been paired (so a misplaced
        penalty never takes the walk-away of one in its place), if any is left. The save
        format writes a penalty after its walk-away (save-format §5), so that is the fault.
        Returns the walk-away it pays for, if any."""
        due = self._penalised_walk_away(npc)
        threshold = npc.interaction_tolerance.walk_away_threshold
        if due is None:
            paid = [x for x in self.due if x.npc == npc.stable_id]
            if paid:  # trial 48: "no walk-away at this tick" read false where there is one, paid for
                walks = ", ".join(f"#{x.ordinal} at journal[{x.index}]" for x in paid)
                message = f"{npc.slug}: a WalkAwayPenalty too many: the walk-aways at this tick ({walks}) are paid for already"
            else:
                message = f"{npc.slug}: a WalkAwayPenalty with no walk-away at this tick"
        else:
            self._pay(i, due)
            if due.ordinal > threshold:
                message = (f"{npc.slug}: this WalkAwayPenalty comes before the walk-away it pays for "
                           f"(#{due.ordinal}, at journal[{due.index}]); a penalty follows its walk-away at the same tick")
            else:
                message = (f"{npc.slug}: walk-away #{due.ordinal} is within the threshold of {threshold}, yet it is penalised, "
                           f"by a WalkAwayPenalty that comes before it (the walk-away is at journal[{due.index}])")
        self.add("T004", message, self.where(i), tick, i=i, npc=npc)
        return due

    def on_WalkAwayPenalty(self, i, d):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return
        tol = npc.interaction_tolerance
        due = self._penalised_walk_away(npc)
        rc = self.recompute
        as_recorded = rc is not None and i in rc.recorded_faults  # the recorded run's own T004, which the edit left alone
        # A what-if that derives this penalty (an edited entry, a changed walk-away rule, a
        # score derived anew): one before its walk-away is held until the tick settles,
        # where that walk-away says whether the penalty applies.
        held = due is None and rc is not None and not as_recorded and (
            rc.changed(i) or rc.walk_rule_changed(npc) or rc.drifting(npc.stable_id, i))
        if due is None:  # judged when the tick settles: its walk-away may come after it
            self.early_penalties.append((i, npc.stable_id, self.tick, d.penalty if held else None))
        else:
            self._pay(i, due)
            if due.ordinal <= tol.walk_away_threshold:
                self.add(
                    "T004",
                    f"{npc.slug}: walk-away #{due.ordinal} is within the threshold of {tol.walk_away_threshold}, yet it is penalised",
                    self.where(i),
                    i=i,
                    npc=npc,
                )
        if not close_enough(d.penalty, tol.walk_away_penalty):
            self.add("T004", f"{npc.slug}: penalty {d.penalty:g} is not walk_away_penalty {tol.walk_away_penalty:g}", self.where(i, ".penalty"), i=i, npc=npc)
        rel = npc.relationship
        within = due is not None and due.ordinal <= tol.walk_away_threshold
        if held or rc is not None and (rc.changed(i) or rc.drifting(npc.stable_id, i) or (within and not as_recorded)):
            # What if: the penalty applies to the new score, and only where the threshold
            # calls for it (interaction seed §8), or where the recorded run applied it anyway.
            rc.drift(npc.stable_id, i)
            if held:
                pass  # judged when the tick settles
            elif within and not as_recorded:
                rc.unapplied.add(i)
            else:
                rel = apply_penalty(rel, d.penalty)
            self.set_npc(i + 1, _npc_with(npc, relationship=rel))
            return
        self._check_score(i, npc, max(0.0, rel.score - d.penalty), d.score_after, rel.score, "−", d.penalty)
        self.set_npc(i + 1, _npc_with(npc, relationship=apply_penalty(rel, d.penalty, float(d.score_after))))

    def on_StressChanged(self, i, d):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return
        before = npc.tolerance.current_stress
        after = d.current_stress
        rc = self.recompute
        if rc is not None and (rc.changed(i) or rc.stress_drifting(npc.stable_id, i)):
            rc.stress_drifted.add(npc.stable_id)  # what if: the stress follows from the deltas
            after = max(I16_MIN, min(I16_MAX, before + d.delta))
        if not I16_MIN <= after <= I16_MAX:
            self.add("T001", f"{npc.slug}: stress {after} is outside the i16 range", self.where(i, ".current_stress"), i=i, npc=npc)
        elif after != before + d.delta and (rc is None or npc.stable_id not in rc.stress_drifted):
            self.add("T001", f"{npc.slug}: stress {before} + delta {d.delta} is {before + d.delta}, but the entry says {after}", self.where(i, ".current_stress"), i=i, npc=npc,
                     values=(("recorded current_stress", str(after)), ("previous + delta", str(before + d.delta))))
        if d.cause == "walk_away" and self._stress_walk_away(i, npc, d.delta) is None:
            self.early_stress.append((i, npc.stable_id, d.delta))  # its walk-away may come after it at the tick
        self.set_npc(i + 1, _npc_with(npc, tolerance=ToleranceThreshold(after, npc.tolerance.threshold)))

    def _stress_walk_away(self, i: int, npc: NpcState, delta: int) -> _WalkAwayDue | None:
        """Pair StressChanged ``i`` (cause walk_away, ``delta``) with the walk-away of ``npc`` it belongs
        to at this tick, the earliest without one yet (recorded in ``stress_pairs``, where
        ``why`` reads it), and check its delta (T003); None when there is none."""
        due = next((x for x in self.due if x.npc == npc.stable_id and not x.stress_seen), None)
        if due is None:
            return None
        due.stress_seen = True
        self.index.stress_pairs[i] = (due.index, due.ordinal)
        tol = npc.interaction_tolerance
        if delta != tol.walk_away_stress_delta:
            self.add("T003", f"{npc.slug}: walk-away stress delta {delta} is not walk_away_stress_delta {tol.walk_away_stress_delta}", self.where(i, ".delta"), i=i, npc=npc)
        return due

    def on_SharedReferenceAdded(self, i, d):
        npc = self.target_npc(i, d.target)
        if npc is None:
            return
        if d.kind not in SHARED_REFERENCE_KINDS:
            self.add("F002", f"shared reference kind {d.kind!r} is not one of jokes, nicknames, memories", self.where(i, ".kind"), i=i, npc=npc)
            return
        rel = add_shared_reference(npc.relationship, d.kind, d.content)
        self.set_npc(i + 1, _npc_with(npc, relationship=rel))

    # ----- story -----
    def on_DialogueLine(self, i, d):
        """A line by a speaker who is neither the player nor an NPC, counted for its J004
        (``_report_unknown_names``); ``run`` records every line itself (two thirds of
        a long journal, without a handler call)."""
        speaker = d.speaker
        if speaker != self.save.player.stable_id and speaker not in self.npcs:
            self.repeated(self.unknown_speakers, speaker, i, ".speaker")

    def on_MonologueFired(self, i, d):
        line_id = d.line_id
        if self.record_timeline:
            self.index.monologues_fired.append((i, self.tick, line_id))
        if self.content is not None and line_id not in self.content.monologues:
            self.add("M002", f"monologue line {line_id!r} is not defined by any pool in monologues/", self.where(i, ".line_id"), i=i, kind="line", line_id=line_id)
            return
        self.monologue_due.append((i, self.tick, line_id))


_HANDLED = (
    "InteractionStarted",
    "InteractionConfrontation",
    "InteractionCompleted",
    "InteractionWalkedAway",
    "InteractionConflictAbandoned",
    "FactLearned",
    "FactUpdated",
    "EntityObserved",
    "RelationshipInteraction",
    "WalkAwayPenalty",
    "StressChanged",
    "SharedReferenceAdded",
    "DialogueLine",
    "MonologueFired",
)


def replay(save: Save, content: Content | None, sink: FindingSink | None = None, progress=None,
           tuning: Tuning = DEFAULT_TUNING, recompute: Recompute | None = None, *,
           checkpoints: bool = False, resume: Resume | None = None, dialogue_of: TimelineIndex | None = None,
           knowledge_of: TimelineIndex | None = None, recording: Recording = EVERYTHING) -> ReplayResult:
    """Replay a save's journal from the initial state, indexing every change.

    Args:
        save: a readable save.
        content: the content folder (for topics, monologues); None skips those checks.
        sink: where findings go (a fresh one when None).
        progress: optional callable(done, total) called about 100 times.
        tuning: the rules' constants (``models/domain/tuning.py``; the seeds' by default).
        recompute: for a what-if (issue 38), which values are derived anew rather than
            taken as recorded (``Recompute``); None replays the journal as recorded.
        checkpoints: keep a ``ReplayCheckpoint`` every ``CHECKPOINT_SPACING`` entries or
            more (``ReplayResult.checkpoints``; a few hundred bytes each).
        resume: start at a checkpoint of the recorded run rather than from the initial
            state (a what-if whose journal agrees with the recorded one before the
            checkpoint, and whose ``tuning`` is the recorded run's); the result is the
            one a replay from the start gives (issue 38: "replays only from the nearest
            checkpoint before t").
        dialogue_of: the recorded run's index, for a what-if whose journal has its ticks,
            kinds and speakers, whose changed entries never start, end or move a
            conversation, and whose recorded replay found no tick or speaker fault (J001,
            J002, J004): the dialogue lines, their conversations and the ticks are then
            the recorded run's, and only the other entries are applied (a third of a long
            journal); no checkpoints are kept. The result is the same.
        knowledge_of: the recorded run's index (with ``dialogue_of``), for a what-if
            whose changed entries and tuned values move only NPC numbers, with the
            recorded NPCs and slugs (the interactions' FactIds): what the player knows,
            the entities and the interactions' moves are then the recorded run's. The
            replay keeps its own knowledge graph (the rules read it) and findings, but
            records none of those tables: the index takes the recorded ones
            (``TimelineIndex.take_knowledge``; at 300 NPCs, 1M events that was half
            of the replay, with its ~200 000 objects for the collector). The result is
            the same.
        recording: what the index records beside the state at a tick (``Recording``:
            ``EVERYTHING`` by default; the ``check`` and ``state`` commands ask for less).
            The rules applied and the findings are the same whatever it is; a
            ``Recording`` without ``timeline`` keeps no checkpoints.

    Returns:
        ReplayResult with the TimelineIndex. Never raises on bad input.

    Raises:
        ValueError: ``resume``, ``dialogue_of`` or ``knowledge_of`` (a what-if's replay,
            which reads and continues a whole timeline) with a ``recording`` other than
            ``EVERYTHING``.
    """
    if recording != EVERYTHING and (resume is not None or dialogue_of is not None or knowledge_of is not None):
        raise ValueError("a what-if's replay records everything: resume, dialogue_of and knowledge_of need Recording EVERYTHING")
    sink = sink if sink is not None else FindingSink()
    r = _Replayer(save, content, sink, progress, tuning, recompute, recording)
    if resume is not None:
        r.resume(resume)
    r.reuse = dialogue_of
    r.record_knowledge = knowledge_of is None
    kept: list | None = [] if checkpoints and recording.timeline else None
    r.run(resume.checkpoint if resume is not None else None, kept)
    if knowledge_of is not None:
        r.index.take_knowledge(knowledge_of)
    r.index.finish()
    return ReplayResult(r.index, r.kg, r.npcs, r.confronted, tuple(kept or ()))
