"""Checks of the snapshot and of the snapshot against the replay (checks.md).

``check_snapshot`` looks at the saved state alone: fact ids (K001-K003), future ticks
(K004), BTreeMap key order (K005), NPC slugs (K006), interaction metadata (I002-I010), relationship
values (R001, R004, R005), stress and tolerance (T001, T002). ``check_against_replay``
compares the snapshot with the state the journal replays to at ``saved_at_tick``
(J003, and the journal side of I004). ``check_content`` looks at content against the
save (C004).
"""

from __future__ import annotations

import math
from dataclasses import replace
from itertools import compress, repeat
from operator import eq

from narrative_debugger.models.content.loader import Content, fact_category
from narrative_debugger.models.boundary import U64, ConversionError, parse_int
from narrative_debugger.models.domain.knowledge import FACT_ID_RE, SLUG_RE, parse_interaction_id
from narrative_debugger.models.domain.relationship import FLOAT_TOLERANCE, MAX_REFERENCES_PER_KIND
from narrative_debugger.models.domain.types import SHARED_REFERENCE_KINDS, InteractionState, KnowledgeConfidence, NpcState
from narrative_debugger.models.rules.findings import FindingSink, Target
from narrative_debugger.models.rules.snapshot_diff import ENTITIES, FACTS, entity_target, fact_target, npc_target, saved_differences
from narrative_debugger.models.save.savefile import Save
from narrative_debugger.models.timeline.index import TimelineIndex

I16_MIN, I16_MAX = -(2**15), 2**15 - 1
_META = "metadata.Interaction."
#: I004 (schema §3.2): the states reached only through a confrontation, whose flag must be
#: true, and the states a confrontation never leads to, whose flag must be false. Tuples
#: made once: a member read from its enum class costs a Python call, for each of 67 000
#: interaction facts.
_CONFRONTED_STATES = (InteractionState.Confrontation, InteractionState.ConflictAbandoned)
_UNCONFRONTED_STATES = (InteractionState.Active, InteractionState.WalkedAway)


def _fact_path(fact_id: str) -> str:
    return f"player.knowledge.facts.{fact_id}"


def _meta_path(fact_id: str) -> str:
    """Built only for a finding: most of 70 000 facts have none."""
    return _fact_path(fact_id) + ".metadata.Interaction"


def check_snapshot(save: Save, content: Content | None, sink: FindingSink) -> None:
    """Rules that hold on the saved state by itself (see module doc)."""
    saved_at = save.saved_at_tick
    _check_key_order(save, sink)
    sequences: dict[str, list[tuple[int, str]]] = {}
    in_progress = []
    for fact_id, fact in save.knowledge.facts.items():
        meta = fact.interaction
        is_interaction = fact_id.startswith("interaction.")
        # A FactId that parses as an interaction's (schema §3.1) is a well-formed FactId:
        # most facts of a long playthrough are matched against one pattern, not two.
        parsed = parse_interaction_id(fact_id) if is_interaction else None
        if parsed is None and not FACT_ID_RE.fullmatch(fact_id):
            sink.add("K001", f"FactId {fact_id!r} is not category.topic (lowercase, one dot)", _fact_path(fact_id), target=fact_target(save, fact_id))
        if is_interaction and meta is None:
            sink.add("K002", f"{fact_id} is an interaction fact without Interaction metadata", _fact_path(fact_id) + ".metadata", target=fact_target(save, fact_id, "metadata"))
        elif not is_interaction and meta is not None:
            sink.add("K002", f"{fact_id} carries Interaction metadata but is not in the interaction category", _fact_path(fact_id) + ".metadata", target=fact_target(save, fact_id, "metadata"))
        if fact.acquired_tick > saved_at:
            sink.add("K004", f"{fact_id}: acquired_tick {fact.acquired_tick} is after saved_at_tick {saved_at}", _fact_path(fact_id) + ".acquired_tick", fact.acquired_tick, target=fact_target(save, fact_id, "acquired_tick"))
        if not is_interaction:
            continue
        if parsed is None or f"{parsed[1]:03d}" != fact_id.rsplit("_", 1)[-1]:
            sink.add("K003", f"{fact_id!r} is not interaction.{{slug}}_{{NNN}} (kebab-case slug, sequence 001, 002, ...)", _fact_path(fact_id), target=fact_target(save, fact_id))
        else:
            sequences.setdefault(parsed[0], []).append((parsed[1], fact_id))
        if meta is None:
            continue
        _check_interaction(fact_id, fact, meta, parsed, save, content, sink)
        if meta.interaction_state.in_progress:
            in_progress.append(fact_id)
    if len(in_progress) > 1:
        # About the conversation that started while another was in progress: the last started.
        later = max(in_progress, key=lambda f: (save.knowledge.facts[f].interaction.started_tick, f))
        sink.add("I005", f"{len(in_progress)} interactions are in progress at once: {', '.join(in_progress)}", _fact_path(later), saved_at, target=fact_target(save, later))
    for slug, items in sequences.items():
        numbers = sorted(n for n, _ in items)
        expected = list(range(1, len(numbers) + 1))
        if numbers != expected:
            repeats = sorted({n for n in numbers if numbers.count(n) > 1})
            missing = sorted(set(expected) - set(numbers))
            parts = []
            if missing:
                parts.append("missing " + ", ".join(f"{n:03d}" for n in missing[:10]))
            if repeats:
                parts.append("repeated " + ", ".join(f"{n:03d}" for n in repeats[:10]))
            if not parts:
                parts.append("numbers " + ", ".join(f"{n:03d}" for n in numbers[:10]))
            sink.add("I006", f"interactions with {slug} are not numbered 001, 002, ... without gap or repeat: {'; '.join(parts)}", _fact_path(items[-1][1]), target=fact_target(save, items[-1][1]))
    for key, ent in save.knowledge.entities.items():
        if ent.last_seen_tick > saved_at:
            sink.add("K004", f"entity {key}: last_seen_tick {ent.last_seen_tick} is after saved_at_tick {saved_at}", f"player.knowledge.entities.{key}.last_seen_tick", ent.last_seen_tick, target=entity_target(save, key, "last_seen_tick"))
    for sid, npc in save.npcs.items():
        _check_npc(npc, f"npcs.{sid}", sink)
    check_identities(save, sink)


def check_identities(save: Save, sink: FindingSink) -> None:
    """I012: two NPCs with one slug (their interaction FactIds ``interaction.{slug}_NNN``
    and every lookup by slug collide: ``state`` showed one of them, ``why`` the other),
    or a player whose StableId is an NPC's (the NPC's lines read as the player's). Each
    is found on the later NPC, naming the first (schema §3.1; save-format §2, §4)."""
    first: dict[str, int] = {}
    for sid, npc in save.npcs.items():
        other = first.setdefault(npc.slug, sid)
        if other != sid:
            sink.add("I012", f"NPCs {other} and {sid} both have the slug {npc.slug!r}: their interactions and every lookup by "
                     "slug cannot tell them apart", f"npcs.{sid}.slug", target=npc_target(npc, "slug"))
    player = save.player.stable_id
    if player in save.npcs:
        npc = save.npcs[player]
        sink.add("I012", f"the player's stable_id {player} is also NPC {npc.slug}'s: their lines cannot be told apart",
                 "player.stable_id", target=npc_target(npc, "stable_id"))


def _check_interaction(fact_id, fact, meta, parsed, save: Save, content, sink: FindingSink) -> None:
    state = meta.interaction_state
    saved_at = save.saved_at_tick
    npc = save.npcs.get(meta.target_entity)
    if npc is None:
        sink.add("I010", f"{fact_id}: target_entity {meta.target_entity} is not an NPC of the save", _meta_path(fact_id) + ".target_entity", target=fact_target(save, fact_id, _META + "target_entity"))
    elif parsed is not None and parsed[0] != npc.slug:
        sink.add("I007", f"{fact_id}: the FactId names {parsed[0]!r} but target_entity {meta.target_entity} is {npc.slug!r}", _meta_path(fact_id) + ".target_entity", target=fact_target(save, fact_id, _META + "target_entity"))
    if state.in_progress and meta.ended_tick is not None:
        sink.add("I002", f"{fact_id} is {state.name} (in progress) but has ended_tick {meta.ended_tick}", _meta_path(fact_id) + ".ended_tick", target=fact_target(save, fact_id, _META + "ended_tick"))
    if not state.in_progress and meta.ended_tick is None:
        sink.add("I002", f"{fact_id} is {state.name} but ended_tick is null", _meta_path(fact_id) + ".ended_tick", target=fact_target(save, fact_id, _META + "ended_tick"))
    if meta.ended_tick is not None and meta.ended_tick < meta.started_tick:
        sink.add("I003", f"{fact_id}: ended_tick {meta.ended_tick} is before started_tick {meta.started_tick}", _meta_path(fact_id) + ".ended_tick", meta.started_tick, target=fact_target(save, fact_id, _META + "ended_tick"))
    for name in ("started_tick", "ended_tick"):
        value = getattr(meta, name)
        if value is not None and value > saved_at:
            sink.add("K004", f"{fact_id}: {name} {value} is after saved_at_tick {saved_at}", f"{_meta_path(fact_id)}.{name}", value, target=fact_target(save, fact_id, _META + name))
    if state in _CONFRONTED_STATES and not meta.confrontation:
        sink.add("I004", f"{fact_id} is {state.name} but its confrontation flag is false", _meta_path(fact_id) + ".confrontation", target=fact_target(save, fact_id, _META + "confrontation"))
    if state in _UNCONFRONTED_STATES and meta.confrontation:
        sink.add("I004", f"{fact_id} is {state.name}, which never follows a confrontation, but its confrontation flag is true", _meta_path(fact_id) + ".confrontation", target=fact_target(save, fact_id, _META + "confrontation"))
    wanted = KnowledgeConfidence.Direct if state.in_progress else KnowledgeConfidence.KnowsDetails
    if fact.confidence != wanted:
        sink.add(
            "I008",
            f"{fact_id} is {state.name} with confidence {fact.confidence.name}; "
            f"{'in progress must be Direct' if state.in_progress else 'ended must be KnowsDetails (schema §4 decay floor)'}",
            _fact_path(fact_id) + ".confidence",
            target=fact_target(save, fact_id, "confidence"),
            values=(("saved confidence", fact.confidence.name), ("required", wanted.name)),
        )
    if content is not None and content.topics:
        for k, topic in enumerate(meta.topics):
            if topic not in content.topics:
                sink.add("I009", f"{fact_id}: topic {topic!r} is not in global/enums/topics.yaml", f"{_meta_path(fact_id)}.topics[{k}]", target=replace(fact_target(save, fact_id, f"{_META}topics[{k}]"), topic=topic))


def _check_npc(npc: NpcState, path: str, sink: FindingSink) -> None:
    if isinstance(npc.slug, str) and not SLUG_RE.fullmatch(npc.slug):  # not text at all: F002
        sink.add("K006", f"{path}: slug {ascii(npc.slug)} is not a kebab-case ASCII slug (a-z, 0-9 and single hyphens, like kael-davan)",
                 path + ".slug", target=npc_target(npc, "slug"))
    rel = npc.relationship
    rpath = path + ".relationship"
    if not math.isfinite(rel.score) or not 0.0 <= rel.score <= 100.0:
        sink.add("R001", f"{npc.slug}: relationship score {rel.score!r} is outside 0..100", rpath + ".score", target=npc_target(npc, "relationship.score"))
    for kind in SHARED_REFERENCE_KINDS:
        items = rel.references(kind)
        if len(items) > MAX_REFERENCES_PER_KIND:
            sink.add("R004", f"{npc.slug}: {len(items)} shared {kind}; at most {MAX_REFERENCES_PER_KIND} are kept", f"{rpath}.shared_references.{kind}", target=npc_target(npc, f"relationship.shared_references.{kind}"))
        dups = sorted({x for x in items if items.count(x) > 1})
        if dups:
            sink.add("R004", f"{npc.slug}: shared {kind} repeat {', '.join(repr(d) for d in dups[:5])}", f"{rpath}.shared_references.{kind}", target=npc_target(npc, f"relationship.shared_references.{kind}"))
    if rel.positive_interactions + rel.negative_interactions > rel.total_interactions:
        sink.add(
            "R005",
            f"{npc.slug}: {rel.positive_interactions} positive + {rel.negative_interactions} negative interactions exceed the total of {rel.total_interactions}",
            rpath + ".total_interactions",
            target=npc_target(npc, "relationship.total_interactions"),
        )
    for name in ("avg_message_length", "conversation_depth_avg"):
        if getattr(rel, name) < 0:
            sink.add("R005", f"{npc.slug}: {name} is negative ({getattr(rel, name):g})", f"{rpath}.{name}", target=npc_target(npc, f"relationship.{name}"))
    for name in ("current_stress", "threshold"):
        value = getattr(npc.tolerance, name)
        if not I16_MIN <= value <= I16_MAX:
            sink.add("T001", f"{npc.slug}: {name} {value} is outside the i16 range", f"{path}.tolerance.{name}", target=npc_target(npc, f"tolerance.{name}"))
    tol = npc.interaction_tolerance
    tpath = path + ".interaction_tolerance"
    if not 1 <= tol.walk_away_threshold <= 5:
        sink.add("T002", f"{npc.slug}: walk_away_threshold {tol.walk_away_threshold} is outside 1..5", tpath + ".walk_away_threshold", target=npc_target(npc, "interaction_tolerance.walk_away_threshold"))
    if not 0.1 - FLOAT_TOLERANCE <= tol.walk_away_penalty <= 0.5 + FLOAT_TOLERANCE:
        sink.add("T002", f"{npc.slug}: walk_away_penalty {tol.walk_away_penalty:g} is outside 0.1..0.5", tpath + ".walk_away_penalty", target=npc_target(npc, "interaction_tolerance.walk_away_penalty"))
    if not I16_MIN <= tol.walk_away_stress_delta <= I16_MAX:
        sink.add("T002", f"{npc.slug}: walk_away_stress_delta {tol.walk_away_stress_delta} is outside the i16 range", tpath + ".walk_away_stress_delta", target=npc_target(npc, "interaction_tolerance.walk_away_stress_delta"))


def _check_key_order(save: Save, sink: FindingSink) -> None:
    doc = save.document
    if not isinstance(doc, dict):
        return
    knowledge = (doc.get("player") or {}).get("knowledge") if isinstance(doc.get("player"), dict) else None
    maps = []
    if isinstance(knowledge, dict):
        if isinstance(knowledge.get("facts"), dict):
            maps.append(("player.knowledge.facts", knowledge["facts"], lambda k: k.encode("utf-8", "surrogatepass"), "by bytes"))
        if isinstance(knowledge.get("entities"), dict):
            maps.append(("player.knowledge.entities", knowledge["entities"], _numeric_key, "numerically"))
    if isinstance(doc.get("npcs"), dict):
        maps.append(("npcs", doc["npcs"], _numeric_key, "numerically"))
    for path, mapping, key, how in maps:
        keys = list(mapping)
        for a, b in zip(keys, keys[1:]):
            if key(a) > key(b):
                sink.add("K005", f"{path}: key {b!r} comes after {a!r}; a BTreeMap writes keys sorted {how}", f"{path}.{b}", target=_key_target(save, path, b))
                break


def _key_target(save: Save, path: str, key: str) -> Target:
    if path == "npcs":
        sid = _stable_id(key)
        npc = save.npcs.get(sid) if sid is not None else None
        return npc_target(npc) if npc is not None else Target("npc", stable_id=sid, snapshot=True)
    if path.endswith(".entities"):
        sid = _stable_id(key)
        return entity_target(save, key if sid is None else sid)
    return fact_target(save, key)


def _line_target(line) -> Target:
    """A monologue line's target: its id, and its file:line:col in the content folder."""
    return replace(Target.from_location(line.location), kind="line", line_id=line.id)


def _stable_id(key: str) -> int | None:
    """A StableId map key's u64, or None for a key that is not one (``boundary``)."""
    try:
        return parse_int(key, U64, leading_zeros=False)
    except ConversionError:
        return None


def _numeric_key(key: str):
    sid = _stable_id(key)
    return (0, sid) if sid is not None else (1, key)


def check_against_replay(save: Save, index: TimelineIndex, confronted: set[str], sink: FindingSink) -> None:
    """J003: the state the journal replays to at ``saved_at_tick`` must be the snapshot (save-format §5).

    Reports the first differing path in the facts, in the entities and in each NPC,
    with both values (``snapshot_diff.differences`` lists all of them). Also I004 for
    a confrontation flag the journal contradicts.
    """
    state = index.at(save.saved_at_tick)
    tick = save.saved_at_tick
    named: set[str] = set()
    for diff in saved_differences(save, index):
        if diff.group in named:
            continue
        named.add(diff.group)
        if diff.group.startswith("npcs."):
            who, what = f"{diff.target.npc}: ", diff.target.field
        elif diff.group == "entities":
            who, what = "", "entity " + diff.path.removeprefix(ENTITIES + ".")
        else:
            who, what = "", diff.path.removeprefix(FACTS + ".")
        sink.add(
            "J003",
            f"{who}replay differs from the snapshot at {what}: snapshot {diff.saved}, replay {diff.replayed}",
            diff.path,
            tick,
            target=diff.target,
            values=(("snapshot", diff.saved), ("replay", diff.replayed)),
        )
    replayed = state.knowledge.facts
    for fact_id, fact in save.knowledge.facts.items():
        meta = fact.interaction
        if meta is not None and meta.interaction_state is InteractionState.Completed and meta.confrontation != (fact_id in confronted):
            if fact_id in replayed:
                sink.add(
                    "I004",
                    f"{fact_id}: confrontation flag is {str(meta.confrontation).lower()} but the journal "
                    f"{'shows' if fact_id in confronted else 'shows no'} InteractionConfrontation",
                    _fact_path(fact_id) + ".metadata.Interaction.confrontation",
                    target=fact_target(save, fact_id, "metadata.Interaction.confrontation"),
                )


def _entries_of_kind(save: Save, kind: str):
    """The data of the journal entries of variant ``kind``, in file order.

    The entries are picked in C (a Python test per entry is far slower).
    ``operator.eq``, not ``str.__eq__``: that answers NotImplemented, which is true,
    for an entry of no variant (None).
    """
    return compress(save.journal.data, map(eq, save.journal.kinds, repeat(kind)))


def check_content(content: Content, saves: list[Save], sink: FindingSink, replayed: TimelineIndex | None = None) -> None:
    """C004: prerequisites that name an NPC or a fact category no content or save defines.
    C013: an NPC of a save with no profile in a content folder that has profiles (with
    none at all, C012 says so once).

    A category is defined by content, by a fact of the snapshot or by a FactLearned of the
    journal. ``replayed``, the index of the replay of the one save in ``saves``, holds
    every FactId the journal made (its FactLearned ones and the interactions'): given,
    the categories are read from it, not from a second pass over every journal entry."""
    if content.npcs:
        for save in saves:
            for sid, npc in save.npcs.items():
                if isinstance(npc.slug, str) and npc.slug not in content.npcs:
                    sink.add("C013", f"{npc.slug}: NPC {sid} of the save has no profile in npcs/ ({npc.slug}.yaml): "
                             f"it is named {content.npc_name(npc.slug)!r} from its slug, and the prompt has no description of it",
                             f"npcs.{sid}.slug", save.saved_at_tick, target=npc_target(npc, "slug"))
    npc_slugs = set(content.npcs)
    categories = {"interaction", *content.fact_categories}
    for save in saves:
        npc_slugs.update(npc.slug for npc in save.npcs.values())
        # An interaction FactId's category is "interaction", already in the set: only the
        # other facts are parsed (most of a long playthrough's facts are interactions).
        categories.update(c for c in (fact_category(f) for f in save.knowledge.facts if not f.startswith("interaction.")) if c)
        learned = replayed.facts if replayed is not None else (data["fact_id"] for data in _entries_of_kind(save, "FactLearned"))
        categories.update(c for c in (fact_category(f) for f in learned if not f.startswith("interaction.")) if c)
    for line in content.monologues.values():
        if line.interaction is not None and line.interaction.target_slug not in npc_slugs:
            sink.add("C004", f"{line.id}: interaction target npc:{line.interaction.target_slug} is not an NPC of the content or the save", line.location, target=_line_target(line))
        for pre in line.facts:
            cat = fact_category(pre.fact_id)
            if cat and cat not in categories:
                sink.add("C004", f"{line.id}: fact category {cat!r} (in {pre.fact_id}) is not defined by the content or the save", line.location, target=_line_target(line))
