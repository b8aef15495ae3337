"""What a what-if refuses before and after B's replay (issue 38: "a patch that makes
the save invalid (with the finding)"), each as a ``PatchError`` naming the operation.

A field the replay derives (``DERIVED_FIELDS``: ``check_derived``, ``check_derived_inside``,
``check_derived_added``, with ``replayed_values`` the one reading of what B's replay
derives), an edit that leaves the save unreadable or adds a reading error
(``check_still_valid``) or an invalidating replay finding (``check_replay_valid``), a
sentiment outside -1..1, a moved ``saved_at_tick``, a recorded size, a snapshot value, a
slug given twice, a tuned NPC threshold set twice or for no NPC. ``patched_entries``
builds B's save without reading the file again when the patch only edits fields of
journal entries; ``check_entry_edit`` refuses one entry edit of the window's dialog.
"""

from __future__ import annotations

import re
from dataclasses import replace

from narrative_debugger.models.boundary import cut
from narrative_debugger.models.compare.journal import entry_json
from narrative_debugger.models.domain.relationship import apply_penalty, close_enough, score_delta, sentiment_in_range
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.plain_text import close_matches
from narrative_debugger.models.rules.checks import check_identities
from narrative_debugger.models.rules.findings import FindingSink, Severity
from narrative_debugger.models.rules.snapshot_diff import differences as snapshot_differences, saved_differences
from narrative_debugger.models.save.savefile import Save
from narrative_debugger.models.save.saveshape import Journal, Shape, parse_journal
from narrative_debugger.models.whatif.patch import PatchError, apply_patch, as_json_number, describe, operation_at, pointer_tokens, quote
from narrative_debugger.models.whatif.span import Added


#: Entry fields the replay derives from an edited entry (issue 38: delta and score_after
#: by the seed formula, the score after a penalty, the stress after its delta) -> the
#: fields they follow from. An edit of one would be replaced by the derived value and
#: leave only float noise behind (the trial's delta 50 "differed in 1 way"): refused.
DERIVED_FIELDS: dict[str, dict[str, tuple[str, str]]] = {
    "RelationshipInteraction": {
        "delta": ("its sentiment, message_length and conversation_turns (relationship seed, delta formula)",
                  "sentiment, message_length or conversation_turns"),
        "score_after": ("the score before it and its delta, clamped to 0..100", "sentiment, message_length or conversation_turns"),
    },
    "WalkAwayPenalty": {"score_after": ("the score before it and its penalty, clamped at 0", "penalty")},
    "StressChanged": {"current_stress": ("the stress before it and its delta", "delta")},
}


def replayed_values(b: Playthrough, i: int, tuning: Tuning = DEFAULT_TUNING) -> dict[str, float | int] | None:
    """The values of B's journal entry ``i`` that B's replay derives (``DERIVED_FIELDS``)
    where it derives them anew (``Recompute``): field name -> value, read from B's index.

    A RelationshipInteraction's ``delta`` by the seed formula with its clamp
    (``score_delta`` with ``tuning``) and its ``score_after``, the NPC's score once the
    entry applied (0..100); a WalkAwayPenalty's ``score_after``, the score before it less
    its penalty, clamped at 0 (``apply_penalty``; whether the walk-away rule calls for
    the penalty at all is ``would_happen``'s and ``would_not_happen``'s); a
    StressChanged's ``current_stress``, the stress before it plus its delta (i16), as the
    replay applied it. None for another kind, or an entry about no NPC of B.
    """
    kind, data = b.save.journal.kinds[i], b.save.journal.data[i]
    versions = b.index.npcs.get(getattr(data, "target", None)) if kind in DERIVED_FIELDS else None
    before, after = (versions.at(i), versions.at(i + 1)) if versions is not None else (None, None)  # position = entries applied
    if before is None or after is None:
        return None
    if kind == "RelationshipInteraction":
        return {"delta": score_delta(data.sentiment, data.message_length, data.conversation_turns, tuning),
                "score_after": after.relationship.score}
    if kind == "WalkAwayPenalty":
        return {"score_after": apply_penalty(before.relationship, data.penalty).score}
    return {"current_stress": after.tolerance.current_stress}


_ENTRY_FIELD = re.compile(r"/journal/(0|[1-9][0-9]{0,18})/.+")  # at most 19 digits: past 4 300 int() raised (trial 49)


def check_derived(a: Save, operations: list) -> None:
    """Refuse an operation that sets a field the replay derives (``DERIVED_FIELDS``) of
    an existing journal entry: the message names the operation and what to change."""
    journal = a.journal
    for k, op in enumerate(operations):
        if not isinstance(op, dict) or op.get("op") == "test" or not isinstance(op.get("path"), str):
            continue
        m = _DERIVED_PATH.fullmatch(op["path"])
        if m is None or int(m.group(1)) >= len(journal):
            continue
        kind, name = m.group(2), m.group(3)
        derived = DERIVED_FIELDS.get(kind, {}).get(name)
        if derived is not None and journal.kinds[int(m.group(1))] == kind:
            source, change = derived
            raise PatchError(f"{describe(k, op)}: {name} is derived by the replay from {source}: change {change} instead")


_DERIVED_PATH = re.compile(r"/journal/(0|[1-9][0-9]{0,18})/event/([A-Za-z]+)/([a-z_]+)")


def _reread(a: Save, operations: list) -> tuple[dict[int, tuple], list] | None:
    """The journal entries ``operations`` change, patched and read again by the one
    journal reader (``saveshape.parse_journal``): ``({index: (tick, kind, data)},
    reading findings)``, when every operation replaces or tests a field inside an
    existing entry; None when the patch does more."""
    journal = a.journal
    wanted = set()
    for op in operations:
        if not isinstance(op, dict) or op.get("op") not in ("replace", "test") or not isinstance(op.get("path"), str):
            return None
        m = _ENTRY_FIELD.fullmatch(op["path"])
        if m is None or int(m.group(1)) >= len(journal) or journal.kinds[int(m.group(1))] is None:
            return None
        wanted.add(int(m.group(1)))
    document = {"journal": {str(i): entry_json(a, i) for i in wanted}}
    document = apply_patch(document, operations, kinds=journal.kinds)
    sink = FindingSink()
    shape = Shape(sink, f"{a.label} (what if)")
    rows = {}
    for i in sorted(wanted):
        one = parse_journal([document["journal"][str(i)]], shape, first=i)
        rows[i] = (one.ticks[0], one.kinds[0], one.data[0])
    return rows, sink.close() if sink.items else []


def patched_entries(a: Save, operations: list) -> Save | None:
    """B's save without reading the file again, when every operation replaces or tests
    a field inside existing journal entries (or there are none): A's save with those
    entries rebuilt as JSON (``compare.journal.entry_json``), patched, and read again
    (``_reread``). None when the patch does more."""
    reread = _reread(a, operations)
    if reread is None:
        return None
    rows, findings = reread
    journal = a.journal
    new = Journal(list(journal.ticks), list(journal.kinds), list(journal.data)) if rows else journal
    for i, (tick, kind, data) in rows.items():
        new.ticks[i], new.kinds[i], new.data[i] = tick, kind, data
    if not findings:  # the same reading findings as A's, counted the same
        return replace(a, label=f"{a.label} (what if)", journal=new)
    return replace(a, label=f"{a.label} (what if)", journal=new, findings=list(a.findings) + findings, finding_sink=None)


class _OneChanged:
    """A journal column with one slot changed, read through (``check_entry_edit``: no
    copy of a long journal on the GUI thread)."""

    def __init__(self, base, i: int, value) -> None:
        self.base, self.i, self.value = base, i, value

    def __len__(self) -> int:
        return len(self.base)

    def __getitem__(self, k: int):
        return self.value if k == self.i else self.base[k]


def check_entry_edit(save: Save, pointer: str, value: object) -> None:
    """Refuse one journal-entry edit before any replay, as ``what_if`` would: the window's
    "What if… edit this entry" asks it so that a bad value keeps its dialog open with the
    message (the trial's dialog closed, and the message went to a panel scrolled away).
    Reads the one entry (no copy of the journal).

    Args:
        save: the save as recorded (side A).
        pointer: ``/journal/N/event/<Kind>/<field>``.
        value: the new value.

    Raises:
        PatchError: the pointer is not a field of an entry of ``save``, the value makes
            the entry unreadable or adds a reading error (the finding is named), or it
            sets a sentiment outside -1..1 (save-format §5), or sets a field the replay
            derives (``DERIVED_FIELDS``). What only the replay finds
            (I010, J001, …) is left to ``what_if``.
    """
    operations = [{"op": "replace", "path": pointer, "value": value}]
    check_derived(save, operations)
    reread = _reread(save, operations)
    if reread is None or len(reread[0]) != 1:
        raise PatchError(f"{describe(0, operations[0])}: not a field of a journal entry of {save.label}")
    rows, findings = reread
    (i, (tick, kind, data)), = rows.items()
    j = save.journal
    journal = Journal(_OneChanged(j.ticks, i, tick), _OneChanged(j.kinds, i, kind), _OneChanged(j.data, i, data))
    save_b = replace(save, label=f"{save.label} (what if)", journal=journal, findings=list(save.findings) + findings, finding_sink=None)
    check_still_valid(save, save_b, operations)
    check_edited_sentiments(save, save_b, i, i + 1, operations)


def check_npc_names(save: Save, name: str, tuning: Tuning) -> None:
    """Refuse ``npc.SLUG.…`` tuning values for a SLUG the save has no NPC of: set, they
    would change nothing and the what-if would say "nothing changes"."""
    slugs = {npc.slug for npc in save.npcs.values()}
    for what, pairs in (("threshold", tuning.thresholds), ("walk_away_threshold", tuning.walk_away_thresholds)):
        for slug, _ in pairs:
            if slug not in slugs:
                close = close_matches(slug, sorted(slugs))
                meant = f"; did you mean npc.{close[0]}.{what}?" if close else ""
                raise PatchError(f"--set npc.{cut(slug, 60)}.{what}: {name} has no NPC '{cut(slug, 60)}'{meant} (see whatif --list {name})")


def check_saved_at(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that moves ``saved_at_tick``: it is when the game saved, the tick the
    snapshot describes (save-format §2), not a value of the past a what-if replays. Moved
    to 2^64 - 1 it stretched the window's axis over the whole u64 range while the what-if
    said "Nothing changes" (trial 47)."""
    if b.saved_at_tick != a.saved_at_tick:
        where, op = operation_at("saved_at_tick", operations)
        raise PatchError(f"{where}: saved_at_tick is when the game saved (the tick the snapshot describes), not a value "
                         "of the past a what-if replays: change journal entries or tuning values instead")


#: An NPC's values that the journal's entries carry as recorded: each WalkAwayPenalty's
#: ``penalty`` and each walk-away's StressChanged ``delta`` -> the entries to edit instead.
_RECORDED_SIZES = {"walk_away_penalty": "each WalkAwayPenalty's penalty", "walk_away_stress_delta": "each walk-away's StressChanged delta"}


def check_recorded_sizes(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that changes an NPC's ``walk_away_penalty`` or ``walk_away_stress_delta``
    (``interaction_tolerance``): the journal's penalties and stress changes keep their
    recorded sizes, so B's scores and stress did not move and each recorded entry only
    became a T004 or T003 finding of B's, a dozen alike (trial 47)."""
    for sid, nb in b.npcs.items():
        na = a.npcs.get(sid)
        if na is None:
            continue
        for name, entries in _RECORDED_SIZES.items():
            if getattr(na.interaction_tolerance, name) != getattr(nb.interaction_tolerance, name):
                where, op = operation_at(f"npcs.{sid}.interaction_tolerance.{name}", operations)
                raise PatchError(f"{where}: {nb.slug}'s {name} is the size of what the journal records ({entries}), which a "
                                 f"what-if keeps as recorded: change those entries instead")


def check_snapshot_edits(a: Playthrough, save_b: Save, operations: list) -> None:
    """Refuse a patch that sets a value of the snapshot the replay derives (a score, a
    stress, a fact's state at ``saved_at_tick``): the what-if replays the journal, so B's
    state would not take it, and B's snapshot is not checked against B's replay (it is
    the recorded run's record): the what-if said "Nothing changes" (trial 47). Found as a
    snapshot-versus-replay difference (J003's, ``snapshot_diff``) of B's snapshot against
    A's replay that A's own snapshot does not have."""
    recorded = {d.path for d in saved_differences(a.save, a.index)}
    for d in snapshot_differences(save_b, a.index.at(save_b.saved_at_tick)):
        if d.path not in recorded:
            where, op = operation_at(d.path, operations)
            raise PatchError(f"{where}: {d.path} of the snapshot is what the replay derives at saved_at_tick (the patch "
                             f"gives {d.saved}, the replay {d.replayed}): change a journal entry or a tuning value instead")


def check_one_threshold(save: Save, operations: list, tuning: Tuning) -> None:
    """Refuse a tuned NPC threshold (``npc.SLUG.threshold``, ``…walk_away_threshold``)
    beside a patch operation that sets the same value in the save (or a whole part that
    holds it): the tuned value acts either way, so the operation listed among the edits
    would have changed nothing (trial 47)."""
    by_slug = {npc.slug: sid for sid, npc in save.npcs.items()}
    for what, place, pairs in (("threshold", ("tolerance", "threshold"), tuning.thresholds),
                               ("walk_away_threshold", ("interaction_tolerance", "walk_away_threshold"), tuning.walk_away_thresholds)):
        for slug, _ in pairs:
            target = ["npcs", str(by_slug.get(slug)), *place]
            for k, op in enumerate(operations):
                if not isinstance(op, dict) or op.get("op") == "test":
                    continue
                for pointer in (op.get("path"), op.get("from") if op.get("op") == "move" else None):
                    if not isinstance(pointer, str):
                        continue
                    tokens = pointer_tokens(pointer)
                    n = min(len(tokens), len(target))
                    if tokens[:n] == target[:n]:
                        raise PatchError(f"{describe(k, op)}: sets {slug}'s {what} in the save, which the tuning value npc.{slug}.{what} "
                                         "sets too: give one of them")


def check_still_valid(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that leaves the save unreadable, or that adds a reading error."""
    seen = {(f.code, f.location) for f in a.findings}
    if not b.readable:
        new = b.findings[:1]
    else:
        new = [f for f in b.findings if f.severity is Severity.ERROR and (f.code, f.location) not in seen][:1]
    if not new:
        return
    raise _invalid(new[0], operations)


def _invalid(f, operations: list) -> PatchError:
    """``operation K (OP POINTER) makes the save invalid: CODE at LOCATION: message`` for
    the finding ``f`` an edit brought, the operation the one whose pointer reaches its
    location (an F002's value typed as text gets a hint: '.8', trial 47)."""
    where, op = operation_at(f.location, operations)
    hint = as_json_number(op.get("value")) if isinstance(op, dict) and f.code == "F002" else ""
    return PatchError(f"{where} makes the save invalid: {f.code} at {f.location}: {f.message}{hint}")


def check_identities_kept(a: Save, b: Save, operations: list) -> None:
    """Refuse a patch that gives two NPCs one slug, or the player an NPC's StableId,
    where A has no such pair (``check``'s I012): their interactions and every lookup by
    slug would collide, and the what-if listed an NPC "absent" and its conversations
    moved to the other (trial 49: '/npcs/17/slug=lera-sessik')."""
    recorded, edited = FindingSink(), FindingSink()
    check_identities(a, recorded)
    check_identities(b, edited)
    seen = {f.message for f in recorded.items}
    for f in edited.items:
        if f.message not in seen:
            raise _invalid(f, operations)


#: Rules whose finding on an edited entry means the edit made the journal invalid (an
#: event about no NPC of the save, a tick out of order or after the save, a speaker or
#: fact id that cannot be), not a consequence to report.
_INVALIDATING = frozenset({"I010", "J001", "J002", "J004", "K001"})


def check_replay_valid(a: Playthrough, b: Playthrough, changed_from: int, changed_to: int, operations: list,
                        anywhere: bool = False) -> None:
    """Refuse a patch whose edited entries break a rule of ``_INVALIDATING`` in B's replay
    where A's did not (issue 38: "a patch that makes the save invalid (with the finding)").
    ``anywhere``: the patch changed more than journal entries (the NPCs, the player), so a
    new finding at any entry counts (trial 47: ``/npcs={}`` left every entry about no NPC
    and was taken, where one entry retargeted at no NPC was refused)."""
    seen = {(f.code, f.message) for f in a.findings}
    for f in b.findings:
        if f.code not in _INVALIDATING or (f.code, f.message) in seen:
            continue
        # A J001 lands on the first entry behind the high tick; an edited entry may be either (trial 49:
        # '/journal/62/tick=6000' put 16 entries after it behind and was taken as a what-if).
        at = (f.target.journal_index, f.target.previous_journal_index) if f.target is not None else ()
        if anywhere or any(i is not None and changed_from <= i < changed_to for i in at):
            raise _invalid(f, operations)


def check_edited_sentiments(a: Save, b: Save, changed_from: int, changed_to: int, operations: list) -> None:
    """Refuse an edit that sets a RelationshipInteraction's sentiment outside -1..1
    (save-format §5; ``check`` reports such a recorded value as R006): a value out of
    range is a bad patch, not a what-if. A recorded value left as it was is not refused."""
    ka, kb = a.journal.kinds, b.journal.kinds
    for i in range(changed_from, changed_to):
        if kb[i] != "RelationshipInteraction":
            continue
        sentiment = b.journal.data[i].sentiment
        if sentiment_in_range(sentiment) or (i < len(ka) and ka[i] == kb[i] and a.journal.data[i].sentiment == sentiment):
            continue
        where, op = operation_at(f"journal[{i}].event.RelationshipInteraction.sentiment", operations)
        typed = op.get("value") if isinstance(op, dict) and isinstance(op.get("value"), (int, float)) else sentiment
        shown = f"{sentiment:g}" if f"{sentiment:g}" == repr(typed) else repr(typed)  # 1.0000001 read "1" with :g
        raise PatchError(f"{where}: sentiment {shown} at journal[{i}] is outside -1..1 (save-format §5; check reports it as R006)")


def check_derived_inside(a: Save, b: Save, changed_from: int, changed_to: int, operations: list, origins) -> list:
    """Refuse a whole entry or event given with a derived field (``DERIVED_FIELDS``) that
    differs from the recorded one, as ``check_derived`` refuses the field's own pointer:
    the replay would put its own value there without a word (trial 47: a whole event with
    delta 50 and score_after 50 showed only float noise).

    ``origins`` (``journal_origins``) says which recorded entry each of B's entries is:
    one replaced in place (or moved, or copied) is held to the recorded values. One with
    no recorded counterpart of its kind (an ``add``, an entry of another kind put in its
    place) has no recorded value to keep: it is returned, ``[(journal index, operation
    number or None)]``, for ``check_derived_added`` to hold to what B's replay derives."""
    ka, kb, da, db = a.journal.kinds, b.journal.kinds, a.journal.data, b.journal.data
    added = []
    for i in range(changed_from, min(changed_to, len(kb))):
        fields = DERIVED_FIELDS.get(kb[i])
        origin = origins[i]
        if not fields or origin is None:
            continue
        if isinstance(origin, Added) or ka[origin] != kb[i]:
            added.append((i, origin.operation if isinstance(origin, Added) else None))
            continue
        for name, (source, change) in fields.items():
            if getattr(da[origin], name) != getattr(db[i], name):
                _refuse_derived(i, kb[i], name, f"keep the recorded {quote(getattr(da[origin], name))} and", operations)
    return added


def check_derived_added(b: Playthrough, added: list, operations: list, tuning: Tuning) -> None:
    """Refuse an entry the patch added (``check_derived_inside``'s ``added``) whose derived
    fields are not what B's replay derives there (``replayed_values``, within the f32
    tolerance of save-format §1): the replay would put its own value in place of the one
    given, which ``edits`` still showed (a new-user trial: an added RelationshipInteraction's
    delta 50 became 1.0, a StressChanged's current_stress 99 became 3, without a word).
    The message gives the value to write."""
    kinds, data = b.save.journal.kinds, b.save.journal.data
    for i, k in added:
        values = replayed_values(b, i, tuning)
        for name, value in (values or {}).items():
            given = getattr(data[i], name)
            if not close_enough(float(given), float(value)):
                shown = quote(round(value, 6) if isinstance(value, float) else value)
                _refuse_derived(i, kinds[i], name, f"the replay derives {shown} there, not the {quote(given)} given: write {shown}, or",
                                operations, k)


def _refuse_derived(i: int, kind: str, name: str, keep: str, operations: list, k: int | None = None) -> None:
    """Raise the ``PatchError`` of a derived field (``DERIVED_FIELDS``) given inside entry
    ``i``, for every edit of one: ``keep`` says what value to write, with the word that
    leads on to what to change instead ("and", "or"). ``k``: the operation that gave the
    entry (else the one whose pointer reaches the field)."""
    source, change = DERIVED_FIELDS[kind][name]
    where = describe(k, operations[k]) if k is not None else operation_at(f"journal[{i}].event.{kind}.{name}", operations)[0]
    raise PatchError(f"{where}: {name} of journal[{i}] is derived by the replay from {source}: {keep} change {change} instead")
