"""The prompts a what-if's edit changes (issue 38): ``prompts`` lists each NPC whose
assembled prompt text differs at one of its lines (``prompts_regenerate``), with the
first such tick and how many of its turns differ.

Where the edit moved only NPC numbers (``prompt_inputs_as_recorded``), a turn is
compared through the NPC's state (``sections.memory_inputs``), and
``prompt_as_recorded`` gives ``compare`` B's prompt at the compared tick as A's where
the NPC's state is A's (its ``same_prompt``).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress
from operator import attrgetter, eq

import numpy as np

from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.prompt.sections import BY_LABEL, SectionContext, memory_inputs
from narrative_debugger.models.save.savefile import Save
from narrative_debugger.models.timeline.event_kinds import tick_array
from narrative_debugger.models.whatif.result import WhatIf


#: Entries whose change moves only an NPC's numbers (score, stress, walk-away
#: penalties), never the knowledge or the dialogue a prompt is built from.
_STATE_KINDS = frozenset({"RelationshipInteraction", "WalkAwayPenalty", "StressChanged"})


def prompt_inputs_as_recorded(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, tuning: Tuning) -> bool:
    """``_only_state``, and B's player, story and NPCs' slugs are A's: a prompt of B can
    differ from A's only through the NPC's state."""
    return (_only_state(a, b, changed_from, changed_to, tuning) and b.save.player == a.save.player and b.save.story == a.save.story
            and same_slugs(a.save, b.save))


def same_slugs(a: Save, b: Save) -> bool:
    """Whether B's NPCs are A's with A's slugs: the speakers' names and the interactions'
    FactIds (``interaction.SLUG_NNN``) are made from them."""
    return a.npcs.keys() == b.npcs.keys() and all(b.npcs[sid].slug == npc.slug for sid, npc in a.npcs.items())


def _only_state(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, tuning: Tuning) -> bool:
    """True when the edit can change a prompt only through the NPC's state: the prompt
    tuning is the recorded one and every changed entry (on both sides) moves numbers only."""
    if (tuning.prompt_budget, tuning.min_available, tuning.card_share) != (DEFAULT_TUNING.prompt_budget, DEFAULT_TUNING.min_available, DEFAULT_TUNING.card_share):
        return False
    ka, kb = a.save.journal.kinds, b.save.journal.kinds
    if len(ka) != len(kb):
        return False
    return all(ka[i] in _STATE_KINDS and kb[i] in _STATE_KINDS for i in range(changed_from, changed_to))


def prompt_as_recorded(a: Playthrough, b: Playthrough, tick: int | None):
    """``compare``'s ``same_prompt`` for a what-if whose B took A's dialogue lines and
    whose edit moved only numbers (``prompt_inputs_as_recorded``: the content, the
    snapshot, the knowledge and the prompt's budget are A's), or None: an NPC's prompt
    at the compared tick is A's when its state there is A's, its level too under each
    side's bounds (a comparison at 300 NPCs then builds A's prompts, not B's again)."""
    tick_a, tick_b = (a.last_tick, b.last_tick) if tick is None else (tick, tick)
    if tick_a != tick_b:
        return None
    pos_a, pos_b = a.index.position_for_tick(tick_a), b.index.position_for_tick(tick_b)

    def same(slug: str) -> bool:
        na, nb = a.save.npc_by_slug(slug), b.save.npc_by_slug(slug)
        if na is None or nb is None or na.stable_id != nb.stable_id:
            return False
        versions_a, versions_b = a.index.npcs.get(na.stable_id), b.index.npcs.get(nb.stable_id)
        if versions_a is None or versions_b is None:
            return False
        state_a, state_b = versions_a.at(pos_a), versions_b.at(pos_b)
        return (state_a is not None and state_a == state_b
                and a.tuning.level_for(state_a.relationship.score) is b.tuning.level_for(state_b.relationship.score))
    return same


def _npc_sections_differ(a: Playthrough, b: Playthrough, na, nb, tick: int, memory: bool) -> bool:
    """Whether an NPC's counted sections (``sections.SECTIONS``) at ``tick`` differ when
    A's NPC state there is ``na`` and B's is ``nb``, and nothing else they read does (the
    content, the snapshot and the knowledge are A's: ``_only_state``). Only the
    relationship and the NPC's state read the state as a whole; the interaction memory
    reads its ``memory_inputs`` and the knowledge, so it is compared only when ``memory``
    (a tuned weight changes ~250 000 turns at 300 NPCs, 1M events: building every
    counted section of each on both sides took 7 s)."""
    state_a = a.state_at(tick)
    ca = SectionContext(a, state_a, na, a.content.npc_name(na.slug), a.save.player.name or "Player", a.content.prompt)
    cb = SectionContext(b, state_a, nb, b.content.npc_name(nb.slug), b.save.player.name or "Player", b.content.prompt)  # B's knowledge is A's
    if memory:
        return _MEMORY.text(ca) != _MEMORY.text(cb)
    return any(spec.text(ca) != spec.text(cb) for spec in _STATE_SECTIONS)


_STATE_SECTIONS = (BY_LABEL["relationship"], BY_LABEL["npc_state"])
_MEMORY = BY_LABEL["interaction_memory"]


def _differing_states(a: Playthrough, b: Playthrough, versions_a, versions_b, ticks: list[int]) -> list:
    """For each tick of ``ticks`` (ascending), None where the NPC's state is the same on
    both sides there (its level under each side's bounds too), else ``(k_a, k_b, state_a,
    state_b)``: the numbers of the versions in force on each side (-1: none yet) and
    those versions (None: none yet). The versions are found
    as columns (a numpy bisection into the versions' ticks), and compared pair by pair
    in C (``map``): an early edit at 1M events has ~300 000 turns, most of them a pair
    of versions of their own."""
    at = tick_array(ticks)  # u64: a tick of 2^63 or past overflowed int64 (trial 47)
    ticks_a, ticks_b = a.index.version_ticks(versions_a), b.index.version_ticks(versions_b)
    ka = (np.searchsorted(ticks_a, at, "right") - 1).tolist()
    values_a, values_b = [*versions_a.values, None], [*versions_b.values, None]  # index -1: no version yet
    if np.array_equal(ticks_a, ticks_b):
        # Versions at the same ticks on both sides (an edited value, not an edited
        # event): the k-th of each are the pair at every turn they are in force, so
        # each pair is compared once (~100 000), not once a turn (~300 000).
        kb = ka
        pairs = list(map(eq, values_a, values_b))
        same = list(map(pairs.__getitem__, ka))
    else:
        kb = (np.searchsorted(ticks_b, at, "right") - 1).tolist()
        same = list(map(eq, map(values_a.__getitem__, ka), map(values_b.__getitem__, kb)))
    if a.tuning.level_bounds != b.tuning.level_bounds:  # equal states, and so scores, may still sit at two levels
        level_a, level_b = a.tuning.level_for, b.tuning.level_for
        for n in compress(range(len(same)), same):
            na = values_a[ka[n]]
            if na is not None:
                same[n] = level_a(na.relationship.score) is level_b(na.relationship.score)
    return [None if equal else (x, y, values_a[x], values_b[y]) for equal, x, y in zip(same, ka, kb)]


def _turns(b: Playthrough, start_tick: int, last_tick: int, npcs) -> dict[int, list[int]]:
    """The ticks each NPC of ``npcs`` (StableIds) spoke a line at, from ``start_tick``
    up to the first line past ``last_tick``: each tick once, in journal order. Read as
    columns (the lines' journal indices, their ticks and speakers gathered in C): a
    record or a Python step a line was 0.8 s, then 0.2 s, of an early edit's what-if
    at 1M events (~600 000 lines)."""
    dialogue = b.index.dialogue
    journal_ticks, data, index_ticks = b.save.journal.ticks, b.save.journal.data, b.index.ticks
    lo = bisect_left(range(len(dialogue)), start_tick, key=dialogue.tick_of)  # a line's tick never decreases
    lines = dialogue.lines[lo:].tolist()
    own = list(map(journal_ticks.__getitem__, lines))
    if None in own:  # a line whose tick could not be read is at the replay's tick
        own = [index_ticks[i] if t is None else t for i, t in zip(lines, own)]
    ticks = tick_array(own)
    past = np.flatnonzero(ticks > np.uint64(last_tick))
    end = int(past[0]) if past.size else len(lines)
    speakers = np.fromiter(map(_SPEAKER, map(data.__getitem__, lines[:end])), dtype=np.uint64, count=end)
    ticks = ticks[:end]
    turns = {}
    for sid in npcs:
        said = ticks[speakers == np.uint64(sid)]
        if said.size:
            turns[sid] = said[np.append(True, said[1:] != said[:-1])].tolist()
    return turns


_SPEAKER = attrgetter("speaker")


def prompts(result: WhatIf, a: Playthrough, b: Playthrough, changed_from: int, tuning: Tuning, only_state: bool,
             until: int | None = None) -> None:
    """Each NPC's prompt at each of its lines (a turn the game asked the LLM for) from
    the first changed entry on, up to tick ``until`` (the compared tick; None: the end):
    where A's and B's texts differ it needs a new response.

    When only NPC state can differ (``only_state``: ``prompt_inputs_as_recorded``), history and lore differ only where
    the counted sections do (they take what those leave of the budget), so a turn is
    compared by its counted sections, and only where the NPC's state or level differs;
    otherwise each turn's whole prompt is built on both sides."""
    # The NPCs' or the player's values edited in the snapshot (a threshold, a name) act from tick 0, as a tuned value
    # does (trial 47: '/npcs/17/tolerance/threshold=3' listed no prompt, the tuning name 89 turns).
    snapshot_edited = b.save.player != a.save.player or (b.save.npcs is not a.save.npcs and b.save.npcs != a.save.npcs)
    start_tick = 0 if tuning != DEFAULT_TUNING or snapshot_edited else (
        b.index.tick_at_position(changed_from + 1) if changed_from < len(b.save.journal) else None)
    if start_tick is None:
        return
    builder_a, builder_b = (None, None) if only_state else (PromptBuilder(a), PromptBuilder(b))
    slugs = {n.stable_id: n.slug for n in b.save.npcs.values()}
    last_tick = b.last_tick if until is None else until
    turns = _turns(b, start_tick, last_tick, slugs)
    for sid, ticks in sorted(turns.items(), key=lambda item: slugs[item[0]]):
        slug = slugs[sid]
        if a.save.npc_by_slug(slug) is None:
            continue
        first, count = None, 0
        sid_a = a.save.npc_by_slug(slug).stable_id
        versions_a, versions_b = a.index.npcs[sid_a], b.index.npcs[sid]
        pairs = _differing_states(a, b, versions_a, versions_b, ticks) if only_state else None
        seen: dict[tuple[int, int], bool] = {}  # a pair of versions is in force for several turns
        for n, t in enumerate(ticks):
            if only_state:
                if pairs[n] is None:
                    continue
                ka, kb, na, nb = pairs[n]
                if na is None or nb is None:
                    differs = True
                else:
                    differs = seen.get((ka, kb))
                    if differs is None:
                        differs = seen[ka, kb] = _npc_sections_differ(a, b, na, nb, t, memory=False)
                    if not differs and memory_inputs(na) != memory_inputs(nb):  # the memory reads the knowledge at t too
                        differs = _npc_sections_differ(a, b, na, nb, t, memory=True)
            else:
                differs = builder_a.build(slug, t).text != builder_b.build(slug, t).text
            if differs:
                first = t if first is None else first
                count += 1
        if count:
            result.prompts_regenerate[slug] = {"first_tick": first, "turns": count}
