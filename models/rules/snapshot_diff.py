"""The saved snapshot beside the replayed state: every difference, and any value a finding names.

Save-format §5: replaying the journal from the initial state must give exactly the
snapshot at ``saved_at_tick``. ``differences`` lists every path where it does not
(all of them, in map order: facts by FactId, entities and NPCs by StableId), each with
both values as text; J003 reports only the first of each map. ``value_pair`` gives the
saved and replayed value at any snapshot ``Target`` (a finding's culprit), equal or not,
so K003's malformed fact, I008's confidence, K004's future tick, R004's references and
the values behind T001/T002 can be shown as saved next to what the replay gives.
Floats compare at 1e-4 (save-format §1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from narrative_debugger.models.boundary import U64, is_int_text, parse_int
from narrative_debugger.models.domain.knowledge import parse_interaction_id
from narrative_debugger.models.domain.relationship import FLOAT_TOLERANCE
from narrative_debugger.models.domain.types import SHARED_REFERENCE_KINDS, NpcState
from narrative_debugger.models.rules.findings import Target
from narrative_debugger.models.memo import Memo

FACTS = "player.knowledge.facts"
ENTITIES = "player.knowledge.entities"
ABSENT = "(no such entry)"


@dataclass(frozen=True, slots=True)
class Difference:
    """One path where the snapshot and the replay at ``saved_at_tick`` differ.

    Attributes:
        path: the JSON path in the save (``npcs.9.relationship.shared_references.jokes``).
        target: the same place, structured (``snapshot`` True).
        saved: the snapshot's value as text; ``ABSENT`` when it has no such entry.
        replayed: the replay's value as text; ``ABSENT`` when it has no such entry.
        group: the map the path is in (``facts``, ``entities`` or ``npcs.<sid>``): J003 names the first of each.
    """

    path: str
    target: Target
    saved: str
    replayed: str
    group: str


def same(a, b) -> bool:
    """Equal, floats within 1e-4 (save-format §1)."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return abs(float(a) - float(b)) <= FLOAT_TOLERANCE
        except (TypeError, ValueError):
            return False
    return a == b


def show(v) -> str:
    """A value as a tester reads it: enums by name, floats short, lists in brackets, null."""
    if v is None:
        return "null"
    if hasattr(v, "name"):
        return v.name
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, tuple | list):
        return "[" + ", ".join(show(x) for x in v) + "]"
    return repr(v) if isinstance(v, str) else str(v)


_INTERACTION_FIELDS = ("target_entity", "interaction_state", "started_tick", "ended_tick", "topics", "confrontation", "player_initiated", "location")
_RELATIONSHIP_FIELDS = (
    "score",
    "total_interactions",
    "positive_interactions",
    "negative_interactions",
    "avg_message_length",
    "conversation_depth_avg",
    "first_interaction_tick",
    "last_interaction_tick",
)


def summary(obj) -> str:
    """A whole entry in one line: a fact's confidence, source, state, acquired tick and
    interaction; an entity's confidence, relationship and last-seen tick; an NPC's slug."""
    if obj is None:
        return ABSENT
    if hasattr(obj, "acquired_tick"):
        text = f"{obj.confidence.name}, {obj.source.name}, {obj.state.name}, acquired {obj.acquired_tick}"
        meta = obj.interaction
        if meta is not None:
            ended = "in progress" if meta.ended_tick is None else f"ended {meta.ended_tick}"
            text += f"; {meta.interaction_state.name} with {meta.target_entity}, started {meta.started_tick}, {ended}"
        return text
    if hasattr(obj, "last_seen_tick"):
        return f"{obj.confidence.name}, {obj.relationship.name}, last seen {obj.last_seen_tick}"
    return getattr(obj, "slug", None) or show(obj)


def fact_fields(a, b):
    """``(field, saved, replayed)`` for each field of two FactKnowledge values."""
    for name in ("confidence", "source", "state", "acquired_tick"):
        yield name, getattr(a, name), getattr(b, name)
    ma, mb = a.interaction, b.interaction
    if (ma is None) != (mb is None):
        yield "metadata", "Interaction" if ma else None, "Interaction" if mb else None
        return
    if ma is None:
        return
    for name in _INTERACTION_FIELDS:
        yield f"metadata.Interaction.{name}", getattr(ma, name), getattr(mb, name)


def entity_fields(a, b):
    """``(field, saved, replayed)`` for each field of two EntityKnowledge values."""
    for name in ("confidence", "source", "state", "relationship", "last_seen_tick"):
        yield name, getattr(a, name), getattr(b, name)


def npc_fields(a: NpcState, b: NpcState):
    """``(field, saved, replayed)`` for what the journal changes in an NPC (save-format §5)."""
    yield "tolerance.current_stress", a.tolerance.current_stress, b.tolerance.current_stress
    yield "walk_aways", a.walk_aways, b.walk_aways
    ra, rb = a.relationship, b.relationship
    for name in _RELATIONSHIP_FIELDS:
        yield f"relationship.{name}", getattr(ra, name), getattr(rb, name)
    for kind in SHARED_REFERENCE_KINDS:
        yield f"relationship.shared_references.{kind}", ra.references(kind), rb.references(kind)


def _fact_target(save, fact_id: str, field: str | None) -> Target:
    fact = save.knowledge.facts.get(fact_id)
    meta = fact.interaction if fact is not None else None
    slug, sid = None, None
    if meta is not None and meta.target_entity in save.npcs:
        sid, slug = meta.target_entity, save.npcs[meta.target_entity].slug
    else:
        parsed = parse_interaction_id(fact_id)
        npc = save.npc_by_slug(parsed[0]) if parsed else None
        if npc is not None:
            sid, slug = npc.stable_id, npc.slug
    kind = "interaction" if fact_id.startswith("interaction.") else "fact"
    return Target(kind, fact_id=fact_id, npc=slug, stable_id=sid, field=field or None, snapshot=True)


def fact_target(save, fact_id: str, field: str | None = None) -> Target:
    """The snapshot target of a fact (``interaction`` for interaction facts), with its NPC when known."""
    return _fact_target(save, fact_id, field)


def entity_target(save, key, field: str | None = None) -> Target:
    """The snapshot target of an entity entry (its NPC slug when the entity is an NPC)."""
    npc = save.npcs.get(key) if isinstance(key, int) else None
    return Target("entity", stable_id=key if isinstance(key, int) else None, npc=npc.slug if npc else None, field=field or None, snapshot=True)


def npc_target(npc: NpcState, field: str | None = None) -> Target:
    """The snapshot target of an NPC entry."""
    return Target("npc", npc=npc.slug, stable_id=npc.stable_id, field=field or None, snapshot=True)


_NPC_PATH = re.compile(r"npcs\.([0-9]{1,20})(?:\.(.+))?")
_ENTITY_PATH = re.compile(re.escape(ENTITIES) + r"\.([0-9]{1,20})(?:\.(.+))?")
_FACT_PATH = re.compile(re.escape(FACTS) + r"\.(.+?)(?:\.((?:confidence|source|state|acquired_tick|metadata)(?:\..*)?))?")
_U64_MAX = 2**64 - 1


def path_target(save, path: str) -> Target | None:
    """The snapshot target at a JSON path into a save that opens, for a value read there
    (F002 tolerated, save-format §2-§5); None for the journal and for ``$``.

    ``npcs.<sid>...`` gives an ``npc`` target, ``player.knowledge.entities.<sid>...`` an
    ``entity``, ``player.knowledge.facts.<FactId>...`` a ``fact`` (``interaction`` for
    interaction facts; the FactId is the path up to a fact field: ``confidence``,
    ``source``, ``state``, ``acquired_tick`` or ``metadata``, unless the whole rest is a
    FactId of the save). Any other path (``world_seed``, ``story.authors_note``) gives a
    ``file`` target with ``snapshot`` True and the path as its ``field``.
    """
    if not path or path == "$" or path.startswith("journal"):
        return None
    m = _NPC_PATH.fullmatch(path)
    if m and int(m.group(1)) <= _U64_MAX:
        sid = int(m.group(1))
        npc = save.npcs.get(sid)
        return npc_target(npc, m.group(2)) if npc is not None else Target("npc", stable_id=sid, field=m.group(2), snapshot=True)
    m = _ENTITY_PATH.fullmatch(path)
    if m and int(m.group(1)) <= _U64_MAX:
        return entity_target(save, int(m.group(1)), m.group(2))
    m = _FACT_PATH.fullmatch(path)
    if m:
        rest = path[len(FACTS) + 1 :]
        if rest in save.knowledge.facts:
            return _fact_target(save, rest, None)
        return _fact_target(save, m.group(1), m.group(2))
    return Target("file", field=path, snapshot=True)


def _in_path_order(keys) -> list:
    """Map keys in path order: numbers first, then strings, each sorted.

    Two plain sorts instead of one on ``(type(k) is str, k)`` tuples, which cost
    several times what plain strings do."""
    strs = [k for k in keys if type(k) is str]
    others = [k for k in keys if type(k) is not str]
    return sorted(others) + sorted(strs)


def _map_differences(save, snap, replayed, fields, prefix, group, make_target):
    for key in _in_path_order(set(snap) | set(replayed)):
        a, b = snap.get(key), replayed.get(key)
        if a is None or b is None:
            yield Difference(f"{prefix}.{key}", make_target(save, key, None), summary(a), summary(b), group)
            continue
        if a == b:
            # Facts and entities hold no floats, so equal values have no field that
            # ``same`` tells apart: one comparison in C instead of a dozen generated ones.
            continue
        for field, x, y in fields(a, b):
            if not same(x, y):
                yield Difference(f"{prefix}.{key}.{field}", make_target(save, key, field), show(x), show(y), group)


#: ``saved_at_tick`` -> ``differences`` of the snapshot and the replay at that tick.
SNAPSHOT_DIFFERENCES: Memo[int, list] = Memo("snapshot differences", "saved_at_tick -> [Difference]")


def saved_differences(save, index) -> list[Difference]:
    """``differences`` between the snapshot and the replay at ``saved_at_tick``, computed
    once per timeline (kept on the index, ``SNAPSHOT_DIFFERENCES``): J003
    (``check_against_replay``) and the Snapshot vs replay dock read the same list.
    Never raises."""
    return SNAPSHOT_DIFFERENCES.get_or_make(index, save.saved_at_tick, lambda: differences(save, index.at(save.saved_at_tick)))


def differences(save, state) -> list[Difference]:
    """Every difference between the snapshot and the replayed ``state`` (at saved_at_tick).

    Args:
        save: the readable save.
        state: ``StateAtTick`` at ``save.saved_at_tick``.

    Returns:
        Differences in path order: facts, entities, then NPCs by StableId. Never raises.
    """
    saved, replayed = save.knowledge.facts, state.knowledge.facts
    if hasattr(replayed, "as_dict"):
        replayed = replayed.as_dict()
    # A save whose journal replays to its snapshot (the usual case): the two dicts
    # compared in C, instead of a lookup pair per fact in Python.
    same_facts = isinstance(saved, dict) and saved == replayed
    out = [] if same_facts else list(_map_differences(save, saved, replayed, fact_fields, FACTS, "facts", _fact_target))
    out.extend(_map_differences(save, save.knowledge.entities, state.knowledge.entities, entity_fields, ENTITIES, "entities", entity_target))
    for sid, npc in save.npcs.items():
        got = state.npc(sid)
        if got is None:
            continue
        for field, a, b in npc_fields(npc, got):
            if not same(a, b):
                out.append(Difference(f"npcs.{sid}.{field}", npc_target(npc, field), show(a), show(b), f"npcs.{sid}"))
    return out


def _walk(obj, field: str | None):
    """The value at ``field`` below a domain object (``metadata.Interaction.topics[2]``,
    ``relationship.shared_references.jokes``, ``interaction_tolerance.walk_away_penalty``)."""
    if obj is None:
        return ABSENT
    if not field:
        return summary(obj)
    parts = field.replace("metadata.Interaction", "interaction").split(".")
    for k, part in enumerate(parts):
        index = None
        if part.endswith("]") and "[" in part:
            part, _, rest = part.partition("[")
            index = parse_int(rest[:-1], U64) if is_int_text(rest[:-1], U64) else None
        if part == "shared_references" and k + 1 < len(parts):
            return obj.references(parts[k + 1]) if hasattr(obj, "references") else ABSENT
        if part == "metadata" and hasattr(obj, "interaction"):
            return "Interaction" if obj.interaction is not None else None
        obj = getattr(obj, part, ABSENT)
        if obj is ABSENT or obj is None:
            return obj
        if index is not None:
            obj = obj[index] if index < len(obj) else ABSENT
    return obj


def value_pair(save, state, target: Target) -> tuple[str, str] | None:
    """``(saved, replayed)`` at a snapshot target, as text (equal or not); None for other targets."""
    if not target.snapshot:
        return None
    if target.kind in ("fact", "interaction") and target.fact_id is not None:
        saved = save.knowledge.facts.get(target.fact_id)
        replayed = state.knowledge.facts.get(target.fact_id)
    elif target.kind == "entity" and target.stable_id is not None:
        saved = save.knowledge.entities.get(target.stable_id)
        replayed = state.knowledge.entities.get(target.stable_id)
    elif target.kind == "npc" and target.stable_id is not None:
        saved = save.npcs.get(target.stable_id)
        replayed = state.npc(target.stable_id)
    elif target.kind == "file" and target.field:  # a top-level value: the replay does not change it
        value = _walk(save, target.field)
        text = show(value) if value is None or isinstance(value, (str, int, float, bool)) and value is not ABSENT else ABSENT
        return text, text
    else:
        return None
    a, b = _walk(saved, target.field), _walk(replayed, target.field)
    return _as_text(a, target.field), _as_text(b, target.field)


def _as_text(value, field: str | None) -> str:
    """``_walk``'s result as text: a whole entry is already its summary; ABSENT stays."""
    if value is ABSENT or not field:
        return value
    return show(value)


def target_path(target: Target) -> str | None:
    """The JSON path of a snapshot target (``player.knowledge.facts.<id>.<field>``, ``npcs.<sid>.<field>``)."""
    if target.kind in ("fact", "interaction") and target.fact_id is not None:
        base = f"{FACTS}.{target.fact_id}"
    elif target.kind == "entity" and target.stable_id is not None:
        base = f"{ENTITIES}.{target.stable_id}"
    elif target.kind == "npc" and target.stable_id is not None:
        base = f"npcs.{target.stable_id}"
    elif target.kind == "file" and target.snapshot and target.field:
        return target.field
    else:
        return None
    return f"{base}.{target.field}" if target.field else base
