"""Turning a parsed save document into typed values (save-format §2-§6).

``parse_save`` checks the shape of every field it reads (F002, with a JSON path) and
the format marker (F003), converts serde enum shapes to the enums of ``types`` and
keeps going with whatever it could read: a bad fact is skipped, a bad journal event
is kept as an ``invalid`` entry so journal positions stay aligned with the file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from narrative_debugger.models.boundary import I16, U8, U64, ConversionError, parse_int
from narrative_debugger.models.domain.knowledge import KnowledgeGraph, parse_interaction_id
from narrative_debugger.models.domain.types import (
    SHARED_REFERENCE_KINDS,
    EntityKnowledge,
    FactKnowledge,
    FactMetadata,
    InteractionMetadata,
    InteractionState,
    InteractionTolerance,
    KnowledgeConfidence,
    KnowledgeSource,
    KnowledgeState,
    NpcState,
    Relationship,
    RelationshipState,
    ToleranceThreshold,
)
from narrative_debugger.models.rules.findings import Finding, FindingSink
from narrative_debugger.models.rules.snapshot_diff import path_target
from narrative_debugger.models.save.jsonio import JsonDocument, decode_bytes, decode_file
from narrative_debugger.models.save.saveshape import (
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    Journal,
    JournalReader,
    Shape,
    is_bool,
    is_str,
    is_str_list,
    is_u32,
    is_u64,
    parse_journal,
)
from narrative_debugger.models.save.saveshape import (
    bounded as _bounded,
)
from narrative_debugger.models.save.saveshape import (
    kind_name as _kind,
)
from sortedcontainers import SortedDict

SAVE_FORMAT = "settled-reach.save"
SUPPORTED_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Player:
    """The player character (save-format §2): StableId, name, pronouns, description."""

    stable_id: int = 0
    name: str = ""
    pronouns: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class Story:
    """Prompt inputs kept in the save (save-format §6); each may be empty."""

    plot_essentials: str = ""
    story_summary: str = ""
    authors_note: str = ""


@dataclass
class Save:
    """One save file, as far as it could be read.

    Attributes:
        label: file name shown to users.
        path: where it was read from (never written).
        sha256: hex digest of the file's bytes as stored (gzip included).
        saved_at_tick, ticks_per_second: ticks and ticks per game second.
        player, story: see ``Player`` and ``Story``.
        knowledge: the snapshot's knowledge graph (the state at ``saved_at_tick``).
        npcs: StableId -> NpcState of the snapshot, in numeric order.
        journal: the journal (see ``Journal``).
        document: what the key-order checks read of the parsed JSON value (its maps'
            keys: ``key_order_skeleton``) once the journal was read; the whole value
            while it is read. None once the checks ran (``Playthrough.finish_checks``).
        findings: F001/F002/F003 findings of reading it (repeats of a code capped).
        finding_sink: the sink ``findings`` was closed from, with the counts of the
            repeats it did not list (a later sink merges it, not ``findings``).
        readable: False when nothing usable could be read (F001, F003 or no object).
    """

    label: str
    path: Path | None = None
    sha256: str = ""
    format_version: int = 0
    game_version: str = ""
    world_seed: int = 0
    saved_at_tick: int = 0
    ticks_per_second: int = 10
    player: Player = field(default_factory=Player)
    knowledge: KnowledgeGraph = field(default_factory=KnowledgeGraph)
    npcs: SortedDict = field(default_factory=SortedDict)
    journal: Journal = field(default_factory=Journal)
    story: Story = field(default_factory=Story)
    document: object | None = None
    findings: list[Finding] = field(default_factory=list)
    finding_sink: FindingSink | None = field(default=None, repr=False, compare=False)
    readable: bool = True

    def close_findings(self, sink: FindingSink) -> None:
        """Set ``findings`` from ``sink`` (closed) and keep the sink for its counts."""
        self.findings = sink.close()
        self.finding_sink = sink

    def npc_by_slug(self, slug: str) -> NpcState | None:
        """The snapshot NPC with this content slug, if any."""
        for npc in self.npcs.values():
            if npc.slug == slug:
                return npc
        return None

    def npc_of_entry(self, position: int) -> int | None:
        """The NPC journal entry ``position`` is about: its target, speaker or entity, or
        the NPC of an interaction FactId it names. None for the player or no NPC."""
        data = self.journal.data[position] if 0 <= position < len(self.journal) else None
        if not data:
            return None
        for key in ("target", "speaker", "entity"):
            sid = data.get(key)
            if sid is not None and sid in self.npcs:
                return sid
        parsed = parse_interaction_id(data.get("fact_id") or "")
        npc = self.npc_by_slug(parsed[0]) if parsed is not None else None
        return npc.stable_id if npc is not None else None

    @property
    def slugs(self) -> dict[int, str]:
        """StableId -> content slug for every NPC of the save."""
        return {sid: npc.slug for sid, npc in self.npcs.items()}

    def game_time(self, tick: int) -> str:
        """A tick as game time ``h:mm:ss.t`` using ``ticks_per_second``."""
        tps = self.ticks_per_second or 1
        seconds, rest = divmod(tick, tps)
        h, rem = divmod(seconds, 3600)
        m, s = divmod(rem, 60)
        frac = f".{rest * 10 // tps}" if tps > 1 else ""
        return f"{h}:{m:02d}:{s:02d}{frac}"


def _parse_interaction_meta(value, path: str, shape: Shape) -> InteractionMetadata | None:
    obj = shape.obj(value, path)
    if obj is None:
        return None
    f = shape.field
    target = f(obj, "target_entity", path, is_u64, "a u64 StableId")
    state = shape.enum(obj, "interaction_state", path, InteractionState)
    started = f(obj, "started_tick", path, is_u64, "a u64 tick")
    ended = f(obj, "ended_tick", path, is_u64, "a u64 tick or null", optional=True)
    if "ended_tick" not in obj:
        shape.bad(f"{path}.ended_tick", "missing field 'ended_tick'")
    topics = f(obj, "topics", path, is_str_list, "a list of topic ids")
    confrontation = f(obj, "confrontation", path, is_bool, "a boolean")
    initiated = f(obj, "player_initiated", path, is_bool, "a boolean")
    location = f(obj, "location", path, is_str, "a location slug")
    if None in (target, state, started, topics, confrontation, initiated, location):
        return None
    return InteractionMetadata(target, state, started, ended, tuple(topics), confrontation, initiated, location)


def _member(members: dict, value):
    """The enum member named by ``value``, or None (also for a value that is not a string)."""
    return members.get(value) if type(value) is str else None


_CONFIDENCES = dict(KnowledgeConfidence.__members__)
_SOURCES = dict(KnowledgeSource.__members__)
_KNOWLEDGE_STATES = dict(KnowledgeState.__members__)
_INTERACTION_STATES = dict(InteractionState.__members__)


def _clean_interaction_meta(obj) -> InteractionMetadata | None:
    """The InteractionMetadata of an object with every field present and well typed,
    else None (``_parse_interaction_meta`` then reports what is wrong)."""
    if type(obj) is not dict:
        return None
    get = obj.get
    target, started, ended, topics = get("target_entity"), get("started_tick"), get("ended_tick", _ABSENT), get("topics")
    confrontation, initiated, location = get("confrontation"), get("player_initiated"), get("location")
    state = _member(_INTERACTION_STATES, get("interaction_state"))
    if (
        state is None
        or not is_u64(target)
        or not is_u64(started)
        or not (ended is None or is_u64(ended))
        or not is_str_list(topics)
        or type(confrontation) is not bool
        or type(initiated) is not bool
        or type(location) is not str
    ):
        return None
    return InteractionMetadata(target, state, started, ended, tuple(topics), confrontation, initiated, location)


def _clean_fact(obj) -> FactKnowledge | None:
    """The FactKnowledge of a snapshot fact whose fields are all present and well typed,
    else None (``_parse_fact`` then reports what is wrong, at its JSON path). One pass
    of plain tests instead of a checked call a field: the snapshot of a long playthrough
    holds tens of thousands of facts (save-format §3)."""
    if type(obj) is not dict:
        return None
    get = obj.get
    confidence = _member(_CONFIDENCES, get("confidence"))
    source = _member(_SOURCES, get("source"))
    state = _member(_KNOWLEDGE_STATES, get("state"))
    acquired = get("acquired_tick")
    raw = get("metadata", _ABSENT)
    if confidence is None or source is None or state is None or not is_u64(acquired) or raw is _ABSENT:
        return None
    if raw is None:
        return FactKnowledge(confidence, source, state, acquired, None)
    if type(raw) is not dict or len(raw) != 1:
        return None
    meta = _clean_interaction_meta(raw.get("Interaction"))
    return None if meta is None else FactKnowledge(confidence, source, state, acquired, FactMetadata(meta))


_ABSENT = object()


def _read_facts(facts: dict, shape: Shape):
    """(FactId, FactKnowledge) of each readable snapshot fact in file order; the others
    are reported at their JSON path as they are met."""
    for fact_id, value in facts.items():
        fact = _clean_fact(value) or _parse_fact(value, f"player.knowledge.facts.{fact_id}", shape)
        if fact is not None:
            yield fact_id, fact


def _parse_fact(value, path: str, shape: Shape) -> FactKnowledge | None:
    obj = shape.obj(value, path)
    if obj is None:
        return None
    confidence = shape.enum(obj, "confidence", path, KnowledgeConfidence)
    source = shape.enum(obj, "source", path, KnowledgeSource)
    state = shape.enum(obj, "state", path, KnowledgeState)
    acquired = shape.field(obj, "acquired_tick", path, is_u64, "a u64 tick")
    metadata = None
    if "metadata" not in obj:
        shape.bad(f"{path}.metadata", "missing field 'metadata' (null for ordinary facts)")
    elif obj["metadata"] is not None:
        raw = obj["metadata"]
        mpath = f"{path}.metadata"
        if type(raw) is dict and len(raw) == 1 and "Interaction" in raw:
            meta = _parse_interaction_meta(raw["Interaction"], f"{mpath}.Interaction", shape)
            if meta is None:
                return None
            metadata = FactMetadata(meta)
        elif type(raw) is dict and len(raw) == 1:
            shape.bad(mpath, f"unknown FactMetadata variant {next(iter(raw))!r} (expected Interaction)")
            return None
        else:
            shape.bad(mpath, "expected null or an enum object with exactly one variant key")
            return None
    if None in (confidence, source, state, acquired):
        return None
    return FactKnowledge(confidence, source, state, acquired, metadata)


def _parse_entity(value, path: str, shape: Shape) -> EntityKnowledge | None:
    obj = shape.obj(value, path)
    if obj is None:
        return None
    parts = (
        shape.enum(obj, "confidence", path, KnowledgeConfidence),
        shape.enum(obj, "source", path, KnowledgeSource),
        shape.enum(obj, "state", path, KnowledgeState),
        shape.enum(obj, "relationship", path, RelationshipState),
        shape.field(obj, "last_seen_tick", path, is_u64, "a u64 tick"),
    )
    if None in parts:
        return None
    return EntityKnowledge(*parts)


def _parse_relationship(value, path: str, shape: Shape) -> Relationship:
    obj = shape.obj(value, path)
    if obj is None:
        return Relationship()
    f = shape.field
    refs_raw = shape.obj(obj.get("shared_references"), f"{path}.shared_references") if "shared_references" in obj else None
    if "shared_references" not in obj:
        shape.bad(f"{path}.shared_references", "missing field 'shared_references'")
    refs = []
    for kind in SHARED_REFERENCE_KINDS:
        items = f(refs_raw, kind, f"{path}.shared_references", is_str_list, "a list of strings") if refs_raw is not None else None
        refs.append((kind, tuple(items or ())))

    def num(key, check, what):
        v = f(obj, key, path, check, what)
        return 0 if v is None else v

    def f32(key):
        v = shape.f32(obj, key, path)
        return 0.0 if v is None else float(v)

    return Relationship(
        score=f32("score"),
        total_interactions=num("total_interactions", is_u32, "a u32 count"),
        positive_interactions=num("positive_interactions", is_u32, "a u32 count"),
        negative_interactions=num("negative_interactions", is_u32, "a u32 count"),
        avg_message_length=f32("avg_message_length"),
        conversation_depth_avg=f32("conversation_depth_avg"),
        shared_references=tuple(refs),
        first_interaction_tick=_opt_tick(obj, "first_interaction_tick", path, shape),
        last_interaction_tick=_opt_tick(obj, "last_interaction_tick", path, shape),
    )


def _opt_tick(obj: dict, key: str, path: str, shape: Shape) -> int | None:
    if key not in obj:
        shape.bad(f"{path}.{key}", f"missing field '{key}'")
        return None
    return shape.field(obj, key, path, is_u64, "a u64 tick or null", optional=True)


def _parse_npc(sid: int, value, path: str, shape: Shape) -> NpcState | None:
    obj = shape.obj(value, path)
    if obj is None:
        return None
    f = shape.field
    slug = f(obj, "slug", path, is_str, "a content slug")
    if slug is not None:
        slug = _bounded(shape, slug, f"{path}.slug", MAX_NAME_CHARS)
    tol = shape.obj(obj.get("tolerance"), f"{path}.tolerance") if "tolerance" in obj else None
    if "tolerance" not in obj:
        shape.bad(f"{path}.tolerance", "missing field 'tolerance'")
    stress = shape.int_of(tol, "current_stress", f"{path}.tolerance", I16) if tol else None
    threshold = shape.int_of(tol, "threshold", f"{path}.tolerance", I16) if tol else None
    itp = f"{path}.interaction_tolerance"
    it = shape.obj(obj.get("interaction_tolerance"), itp) if "interaction_tolerance" in obj else None
    if "interaction_tolerance" not in obj:
        shape.bad(itp, "missing field 'interaction_tolerance'")
    if it is not None:
        wat = shape.int_of(it, "walk_away_threshold", itp, U8)
        wap = shape.f32(it, "walk_away_penalty", itp)
        wsd = shape.int_of(it, "walk_away_stress_delta", itp, I16)
        pcm = f(it, "permanent_confrontation_memory", itp, is_bool, "a boolean")
    else:
        wat = wap = wsd = pcm = None
    walk_aways = f(obj, "walk_aways", path, is_u32, "a count")
    relationship = _parse_relationship(obj.get("relationship"), f"{path}.relationship", shape) if "relationship" in obj else None
    if relationship is None:
        shape.bad(f"{path}.relationship", "missing field 'relationship'")
        relationship = Relationship()
    if slug is None:
        return None
    return NpcState(
        stable_id=sid,
        slug=slug,
        tolerance=ToleranceThreshold(stress if stress is not None else 0, threshold if threshold is not None else 0),
        interaction_tolerance=InteractionTolerance(
            wat if wat is not None else 1,
            float(wap) if wap is not None else 0.0,
            wsd if wsd is not None else 0,
            bool(pcm),
        ),
        relationship=relationship,
        walk_aways=walk_aways or 0,
    )


def _stable_id_key(key: str, path: str, what: str, shape: Shape) -> int | None:
    """A StableId map key as its u64 (save-format §1: decimal, ASCII digits, no sign or
    leading zero; ``boundary.parse_int``); None after an F002 at ``path.key`` (a key of
    more than 60 characters is shortened there, so the location stays readable)."""
    try:
        return parse_int(key, U64, leading_zeros=False)
    except ConversionError as exc:
        shown = key if len(key) <= 60 else key[:40] + "…"
        shape.bad(f"{path}.{shown}", f"{what} is not a StableId (a decimal u64): {exc}")
        return None


def parse_save(doc, label: str, findings: list[Finding] | None = None) -> Save:
    """Build a ``Save`` from a parsed JSON document.

    Args:
        doc: the parsed JSON value (see ``jsonio``).
        label: the file name used in messages.
        findings: findings of reading the bytes, carried into the result.

    Returns:
        A Save; ``readable`` is False for a document that is not a save at all
        (F003 or a top level that is not an object). Never raises on bad input.
    """
    sink = FindingSink()
    sink.extend(findings or [])
    save = Save(label=label, document=doc)
    shape = Shape(sink, label)
    if type(doc) is not dict:
        shape.bad("$", f"the top level must be an object, found {_kind(doc)}")
        save.readable = False
        save.close_findings(sink)
        return save
    fmt = doc.get("format")
    if fmt != SAVE_FORMAT:
        if "format" not in doc:
            said = "has no 'format' field"
        elif isinstance(fmt, str):
            said = f"has 'format' {fmt[:60]!r}, not {SAVE_FORMAT!r}"
        else:  # a number, list, object or null: named as what it is, not quoted as if text
            shown = "" if fmt is None or isinstance(fmt, (list, dict)) else f" {str(fmt).lower() if isinstance(fmt, bool) else fmt}"[:61]
            said = f"has 'format' {_kind(fmt)}{shown}, not the string {SAVE_FORMAT!r}"
        sink.add("F003", f"{label} {said}: this is not a Settled Reach save", "format")
        save.readable = False
        save.close_findings(sink)
        return save
    version = shape.field(doc, "format_version", "", is_u32, "a u32 version")
    if version is not None and version > SUPPORTED_FORMAT_VERSION:
        sink.add(
            "F003",
            f"{label}: format_version {version} is newer than this tool reads ({SUPPORTED_FORMAT_VERSION}); update the narrative debugger",
            "format_version",
        )
        save.readable = False
        save.close_findings(sink)
        return save
    save.format_version = version or SUPPORTED_FORMAT_VERSION
    save.game_version = shape.field(doc, "game_version", "", is_str, "a string") or ""
    save.world_seed = shape.field(doc, "world_seed", "", is_u64, "a u64") or 0
    saved_at = shape.field(doc, "saved_at_tick", "", is_u64, "a u64 tick")
    save.saved_at_tick = saved_at or 0
    tps = shape.field(doc, "ticks_per_second", "", is_u32, "a u32")
    if tps == 0:
        shape.bad("ticks_per_second", "ticks_per_second is 0; game time is shown at 10 ticks per second")
    save.ticks_per_second = tps if tps else 10

    player = shape.obj(doc.get("player"), "player") if "player" in doc else None
    if "player" not in doc:
        shape.bad("player", "missing field 'player'")
    if player is not None:
        save.player = Player(
            stable_id=shape.field(player, "stable_id", "player", is_u64, "a u64 StableId") or 0,
            name=_bounded(shape, shape.field(player, "name", "player", is_str, "a string") or "", "player.name", MAX_NAME_CHARS),
            pronouns=_bounded(shape, shape.field(player, "pronouns", "player", is_str, "a string") or "", "player.pronouns", MAX_NAME_CHARS),
            description=_bounded(shape, shape.field(player, "description", "player", is_str, "a string") or "", "player.description", MAX_TEXT_CHARS),
        )

    npcs_raw = shape.obj(doc.get("npcs"), "npcs") if "npcs" in doc else None
    if "npcs" not in doc:
        shape.bad("npcs", "missing field 'npcs'")
    for key, value in (npcs_raw or {}).items():
        sid = _stable_id_key(key, "npcs", "NPC key", shape)
        if sid is None:
            continue
        npc = _parse_npc(sid, value, f"npcs.{key}", shape)
        if npc is not None:
            save.npcs[sid] = npc

    graph = KnowledgeGraph(save.slugs)
    knowledge = None
    if player is not None:
        if "knowledge" in player:
            knowledge = shape.obj(player["knowledge"], "player.knowledge")
        else:
            shape.bad("player.knowledge", "missing field 'knowledge'")
    if knowledge is not None:
        facts = shape.field(knowledge, "facts", "player.knowledge", lambda v: type(v) is dict, "an object")
        graph.set_facts(_read_facts(facts or {}, shape))
        entities = shape.field(knowledge, "entities", "player.knowledge", lambda v: type(v) is dict, "an object")
        for key, value in (entities or {}).items():
            sid = _stable_id_key(key, "player.knowledge.entities", "entity key", shape)
            if sid is None:
                continue
            ent = _parse_entity(value, f"player.knowledge.entities.{key}", shape)
            if ent is not None:
                graph.set_entity(sid, ent)
    save.knowledge = graph

    if "journal" in doc:
        raw = doc["journal"]
        # A JournalReader has read the journal while it was decoded (load_save).
        save.journal = raw.findings_into(sink) if type(raw) is JournalReader else parse_journal(raw, shape)
        # The key-order checks read the maps' keys only: drop the raw journal entries now
        # (``journal.data`` keeps their fields), about 380 bytes an entry before the
        # replay starts (~380 MB of a 1 000 000-entry save's peak), and the decoded
        # values of the rest (the typed save holds them), kept until the checks ran.
        save.document = key_order_skeleton(doc)
        if type(doc["journal"]) is list:
            doc["journal"].clear()
    else:
        shape.bad("journal", "missing field 'journal'")

    if saved_at is None:
        # Unreadable (F002 above): the journal's last tick stands in for it, so the
        # snapshot is compared with the end of the journal, not with tick 0, where
        # every later entry and fact would be reported after the save (J002, J003, K004).
        save.saved_at_tick = max((tick for tick in save.journal.ticks if tick is not None), default=0)
    story = shape.obj(doc.get("story"), "story") if "story" in doc else None
    if "story" not in doc:
        shape.bad("story", "missing field 'story'")
    if story is not None:
        save.story = Story(
            *(
                _bounded(shape, shape.field(story, k, "story", is_str, "a string") or "", f"story.{k}", MAX_TEXT_CHARS)
                for k in ("plot_essentials", "story_summary", "authors_note")
            )
        )
    _target_read_values(save, sink)
    save.close_findings(sink)
    return save


def _target_read_values(save: Save, sink: FindingSink) -> None:
    """Give each F002 of a value the save opens despite (not the journal's: those name
    their entry) the snapshot target of its JSON path (``snapshot_diff.path_target``), so
    it lands on that path's row of the Snapshot dock (README "Where a finding lands")."""
    items = sink.items
    for k, f in enumerate(items):
        if f.code == "F002" and f.target is not None and f.target.kind == "file" and f.target.line is None:
            target = path_target(save, f.location)
            if target is not None:
                items[k] = replace(f, target=target)


def key_order_skeleton(doc: dict) -> dict:
    """What the key-order checks (K005, ``rules.checks``) read of a save document: the
    same nesting down to ``player.knowledge.facts``, ``player.knowledge.entities`` and
    ``npcs``, each of those maps with its keys in file order and every value None, the
    rest of the document left out. A value on that path that is not an object stays
    as it was (the check skips it). Holding this instead of the decoded document until
    the checks run keeps only the keys (shared str objects) and a few small dicts."""
    out = {}
    player = doc.get("player")
    if isinstance(player, dict) and "knowledge" in player:
        knowledge = player["knowledge"]
        if isinstance(knowledge, dict):
            knowledge = {name: dict.fromkeys(knowledge[name]) if isinstance(knowledge[name], dict) else knowledge[name]
                         for name in ("facts", "entities") if name in knowledge}
        out["player"] = {"knowledge": knowledge}
    elif "player" in doc:
        out["player"] = player if not isinstance(player, dict) else {}
    if "npcs" in doc:
        npcs = doc["npcs"]
        out["npcs"] = dict.fromkeys(npcs) if isinstance(npcs, dict) else npcs
    return out


def load_save_bytes(data: bytes, label: str, path: Path | None = None) -> Save:
    """Parse a save from bytes (gzip or plain JSON). Never raises on bad input."""
    save = save_from_document(decode_bytes(data, label), label, path)
    save.sha256 = hashlib.sha256(data).hexdigest()
    return save


def save_from_document(document: JsonDocument, label: str, path: Path | None = None) -> Save:
    """The Save of a decoded document; unreadable (``readable`` False) when the bytes
    were not JSON. A document that is JSON but not an object (``null``, a list, a
    number) gets F002 at ``$`` from ``parse_save``."""
    if not document.parsed:
        return Save(label=label, path=path, findings=document.findings, readable=False)
    save = parse_save(document.value, label, document.findings)
    save.path = path
    return save


def load_save(path: Path) -> Save:
    """Read a save file from disk, read-only, as a stream (``jsonio.decode_file``).

    Never raises on bad input: a file that cannot be read (missing, a FIFO, a device,
    a folder, over the size cap) gives a Save with ``readable`` False and an F001
    finding at ``1:1`` whose message names the file once.
    """
    path = Path(path)
    reader = JournalReader(path.name)
    document, sha256 = decode_file(path, path.name, journal_reader=reader)
    save = save_from_document(document, path.name, path)
    save.sha256 = sha256
    return save
