"""What if (issue 38): change the past, replay, and see what follows.

``what_if(path, content_dir, operations, tuning)`` opens the save as recorded (side A),
applies an RFC 6902 JSON Patch to its document with the ``jsonpatch`` library (side B;
the file itself is never written), replays B with the tuning values and a
``replay.Recompute`` (the values the seeds derive are derived anew from the first
changed entry on, per NPC) and compares A with B through ``compare.comparison``: the
``diff`` contract, plus what the edit makes of the game's recorded decisions.

Recorded decisions (a walk-away, a line fired, a penalty) are kept in B's journal.
Where one no longer follows from B's state it is listed in ``would_not_happen`` with
its clause; where the state now calls for one the journal lacks, in ``would_happen``.
Each NPC whose assembled prompt text differs at one of its lines is listed in
``prompts_regenerate`` with the first such tick and how many of its turns differ.

The edits are read and applied in ``patch``, refused in ``refusals``, located in B's
journal in ``span``; what follows is worked out in ``consequences`` and ``prompts``,
and returned as a ``result.WhatIf``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from narrative_debugger.models.compare.comparison import Comparison, compare
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.save.jsonio import decode_file
from narrative_debugger.models.save.savefile import Save, save_from_document
from narrative_debugger.models.timeline.replay import Recompute, Resume
from narrative_debugger.models.whatif.consequences import crossings, decisions, recorded_faults, relevel, up_to
from narrative_debugger.models.whatif.patch import PatchError, apply_patch
from narrative_debugger.models.whatif.prompts import prompt_as_recorded, prompt_inputs_as_recorded, prompts, same_slugs
from narrative_debugger.models.whatif.refusals import (
    check_derived, check_derived_added, check_derived_inside, check_edited_sentiments, check_identities_kept, check_npc_names,
    check_one_threshold, check_recorded_sizes, check_replay_valid, check_saved_at, check_snapshot_edits, check_still_valid,
    patched_entries, replayed_values)
from narrative_debugger.models.whatif.result import WhatIf
from narrative_debugger.models.whatif.span import Shift, changed_span, journal_origins


def what_if(path: Path, content_dir: Path | None, operations: list, tuning: Tuning = DEFAULT_TUNING, sets: list | None = None,
            tick: int | None = None, recorded: Playthrough | None = None, progress=None) -> WhatIf:
    """Apply ``operations`` to the save at ``path`` and ``tuning`` to the rules, replay, compare.

    Args:
        path: the save (read, never written).
        content_dir: its content folder (None: as ``Playthrough.open`` chooses).
        operations: JSON Patch operations (RFC 6902) on the save document.
        tuning: the rules' constants for B (``models/domain/tuning.py``).
        sets: the ``(name, value)`` tuning values set, for ``edits``.
        tick: compare the states at this tick (default: each side's last tick).
        recorded: side A when already open (``Playthrough.open(path, content_dir)``).
        progress: optional ``callable(fraction, stage)``: 0.0 .. 1.0 and what is being
            done (the edits applied, B replayed, compared, the prompts rebuilt), called
            about 100 times while B is replayed.

    Raises:
        PatchError: the save cannot be read, the patch cannot be applied, it leaves
            the save unreadable or with a reading error A does not have (the finding is
            named), or ``tuning`` sets ``npc.SLUG.…`` for a SLUG the save has no NPC of,
            or it gives a field the replay derives (``refusals.DERIVED_FIELDS``): another value
            than the recorded one, or in an entry it adds, another than B's replay derives.
    """
    path = Path(path)
    report = _rising(progress) if progress is not None else (lambda fraction, stage: None)
    opened = 0.0 if recorded is not None else 0.3  # what opening A takes of the whole, when it is not open
    if recorded is None:
        report(0.0, "opening the recorded save")
    a = recorded if recorded is not None else Playthrough.open(path, content_dir, defer_checks=True)
    report(opened, "applying the edits")
    if not a.readable:
        raise PatchError(f"{path.name} cannot be read: " + "; ".join(f"{f.code} {f.location}: {f.message}" for f in a.findings[:3]))
    check_npc_names(a.save, path.name, tuning)
    check_one_threshold(a.save, operations, tuning)
    check_derived(a.save, operations)
    save_b = patched_entries(a.save, operations)
    whole = save_b is None
    if whole:  # the patch reaches beyond journal entries' fields: the whole document
        document, sha256 = decode_file(path, path.name)
        if not document.parsed:
            raise PatchError(f"{path.name} cannot be read")
        document.value = apply_patch(document.value, operations)  # "" replaces the whole
        save_b = save_from_document(document, f"{path.name} (what if)", path)
    check_still_valid(a.save, save_b, operations)
    if whole:
        check_saved_at(a.save, save_b, operations)
        check_recorded_sizes(a.save, save_b, operations)
        check_snapshot_edits(a, save_b, operations)
        check_identities_kept(a.save, save_b, operations)
    save_b.sha256 = ""  # not the file's bytes
    changed_from, changed_to = changed_span(a.save, save_b)
    check_edited_sentiments(a.save, save_b, changed_from, changed_to, operations)
    added = check_derived_inside(a.save, save_b, changed_from, changed_to, operations,
                                  journal_origins(len(a.save.journal), len(save_b.journal), changed_from, changed_to, operations))
    shift = Shift(len(a.save.journal), len(save_b.journal), changed_from, changed_to)
    rc = Recompute(changed_from, changed_to, formula=not tuning.formula_is_default,
                   recorded_walk_thresholds={sid: n.interaction_tolerance.walk_away_threshold for sid, n in a.save.npcs.items()},
                   pending=_npcs_edited_away(a.save, save_b, changed_from, changed_to),
                   recorded_faults=recorded_faults(a, shift))
    notes = [f for f in a.findings if f.code == "C010"]  # how the save was opened: the same for B
    span = 1.0 - opened
    replaying = lambda fraction, stage: report(opened + span * (0.05 + 0.55 * fraction), "replaying with the edits")  # noqa: E731
    lines_as_recorded = _dialogue_as_recorded(a, save_b, changed_from, changed_to)
    slugs_as_recorded = same_slugs(a.save, save_b)
    b = Playthrough.build(save_b, a.content, replaying, defer_checks=True, notes=notes, tuning=tuning, recompute=rc,
                          resume=resume_point(a, save_b, changed_from, tuning), dialogue_of=a.index if lines_as_recorded else None,
                          knowledge_of=a.index if lines_as_recorded and slugs_as_recorded else None)
    check_replay_valid(a, b, changed_from, changed_to, operations, anywhere=whole)
    check_derived_added(b, added, operations, tuning)
    report(opened + span * 0.6, "comparing with the recorded run")
    same_lines = lines_as_recorded and save_b.player == a.save.player and slugs_as_recorded  # the speakers' names: the content's and the player's
    only_state = prompt_inputs_as_recorded(a, b, changed_from, changed_to, tuning)
    comparison = compare(a, b, tick, parted_from=0 if tuning != DEFAULT_TUNING else None, same_lines=same_lines,
                         same_prompt=prompt_as_recorded(a, b, tick) if same_lines and only_state else None)
    _derived_divergence(comparison, b, rc, tuning)
    result = WhatIf(comparison, edits=list(operations) + [{"op": "set", "name": n, "value": v} for n, v in (sets or [])])
    relevel(result, tuning)
    decisions(result, a, b, rc, shift)
    crossings(result, a.index, b.index, a.save, b.save, until=tick)
    up_to(result, tick)
    report(opened + span * 0.85, "rebuilding the prompts")
    prompts(result, a, b, changed_from, tuning, only_state, until=tick)
    report(1.0, "done")
    return result


def resume_point(a: Playthrough, save_b: Save, changed_from: int, tuning: Tuning) -> Resume | None:
    """Where B's replay can start instead of at the first entry (issue 38: "replays only
    from the nearest checkpoint before t"): A's last checkpoint at or before the first
    changed entry, when B is A's save with journal entries changed (the snapshot, the
    NPCs and every entry before it are A's) and the replay's rules are A's (a tuned
    constant of the formula or a threshold acts from tick 0; the prompt's do not act on
    the replay). None: B is replayed from the start."""
    prompt_only = replace(tuning, prompt_budget=DEFAULT_TUNING.prompt_budget, min_available=DEFAULT_TUNING.min_available,
                          card_share=DEFAULT_TUNING.card_share)  # the prompt's values: the replay never reads them
    if prompt_only != DEFAULT_TUNING or a.tuning != DEFAULT_TUNING or a.recompute is not None or not a.checkpoints:
        return None
    if save_b.npcs is not a.save.npcs or save_b.player is not a.save.player or save_b.saved_at_tick != a.save.saved_at_tick:
        return None
    before = [c for c in a.checkpoints if c.position <= changed_from]
    return Resume(before[-1], a.index, a.replay_findings) if before else None


#: Journal kinds whose edited fields never start, end or move a conversation, nor a line.
_OUTSIDE_DIALOGUE = frozenset({"RelationshipInteraction", "StressChanged", "WalkAwayPenalty"})
#: The recorded run's findings that say a tick or a speaker could not be taken as written.
_TICK_OR_SPEAKER_FAULTS = frozenset({"J001", "J002", "J004"})


def _dialogue_as_recorded(a: Playthrough, save_b: Save, changed_from: int, changed_to: int) -> bool:
    """Whether B's replay may take A's dialogue lines and ticks (``replay``'s ``dialogue_of``):
    the same ticks, kinds, player and NPCs (the speakers), only RelationshipInteraction,
    StressChanged or WalkAwayPenalty entries changed (a tuned value changes none), and no
    J001, J002 or J004 in A's replay."""
    ja, jb = a.save.journal, save_b.journal
    if a.index is None or save_b.player.stable_id != a.save.player.stable_id or save_b.npcs.keys() != a.save.npcs.keys():
        return False
    if any(f.code in _TICK_OR_SPEAKER_FAULTS for f in a.replay_findings):
        return False
    if any(jb.kinds[i] not in _OUTSIDE_DIALOGUE for i in range(changed_from, min(changed_to, len(jb)))):
        return False
    return len(ja) == len(jb) and (ja.kinds is jb.kinds or ja.kinds == jb.kinds) and (ja.ticks is jb.ticks or ja.ticks == jb.ticks)


def _derived_divergence(comparison: Comparison, b: Playthrough, rc: Recompute, tuning: Tuning) -> None:
    """B's side of the first differing entry with the values B's replay derived: an edited
    RelationshipInteraction kept its recorded ``delta`` and ``score_after`` (0.165 and
    21.781 beside a B score of 22.616), which B's replay computes anew by the formula
    (``score_delta`` with ``tuning``) and the clamped score after the entry."""
    d = comparison.divergence
    event = d.b_event.get("event") if d is not None and isinstance(d.b_event, dict) else None
    if not isinstance(event, dict) or not isinstance(event.get("RelationshipInteraction"), dict):
        return
    fields = event["RelationshipInteraction"]
    if not rc.derived(fields.get("target"), d.b_index):
        return
    values = replayed_values(b, d.b_index, tuning)
    if values is None:
        return
    derived = dict(fields, **{name: round(value, 6) for name, value in values.items()})  # f32 values: 1.0, not 0.9999999999999999 (trial 47)
    comparison.divergence = replace(d, b_event={**d.b_event, "event": {"RelationshipInteraction": derived}})


def _rising(progress):
    """``progress`` called with fractions that never go back (rounding of the stages' spans)."""
    last = [0.0]

    def report(fraction: float, stage: str) -> None:
        last[0] = max(last[0], min(1.0, round(fraction, 6)))
        progress(last[0], stage)
    return report


def _npcs_edited_away(a: Save, b: Save, changed_from: int, changed_to: int) -> dict:
    """NPC -> ``changed_from`` for each NPC that A's changed entries name (removed, or
    now about another NPC): its recorded scores and stresses after the edit no longer
    follow, so B derives them anew from there (``Recompute.pending``). An entry about it
    that B changes in place is derived anew anyway."""
    ja = a.journal
    a_to = max(changed_from, len(ja) - (len(b.journal) - changed_to))
    out = {}
    for i in range(changed_from, a_to):
        target = getattr(ja.data[i], "target", None) if ja.kinds[i] is not None else None
        if isinstance(target, int) and target in a.npcs:
            out.setdefault(target, changed_from)
    return out
