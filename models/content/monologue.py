"""Monologue pools and their prerequisites (schema §5.4 and §6).

A line is eligible at a tick when every prerequisite holds in the knowledge graph
of that tick: each ``facts`` item is known at least at ``min_confidence``, and the
``interaction`` item (at most one) counts at least ``min_count`` interactions with
the target NPC, in the given state when one is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from narrative_debugger.models.boundary import U32, ConversionError, check_int
from narrative_debugger.models.content.yaml_io import MarkedDict, each_mapping, load_yaml, location_of, rel_path, str_list, text_of
from narrative_debugger.models.domain.knowledge import FACT_ID_RE, InteractionQueries
from narrative_debugger.models.domain.types import InteractionState, KnowledgeConfidence
from narrative_debugger.models.rules.findings import FindingSink

@dataclass(frozen=True, slots=True)
class FactPrerequisite:
    """``facts`` item of a monologue prerequisite (schema §5.4): the fact at least this sure."""

    fact_id: str
    min_confidence: KnowledgeConfidence


@dataclass(frozen=True, slots=True)
class InteractionPrerequisite:
    """The ``interaction`` prerequisite of schema §6: at least ``min_count`` interactions
    with ``target_slug`` (in ``state`` when given)."""

    target_slug: str
    state: InteractionState | None = None
    min_count: int = 1


@dataclass(frozen=True, slots=True)
class MonologueLine:
    """One monologue line of a pool (schema §5.4): id, text, trigger, prerequisites, tags."""

    id: str
    text: str
    trigger: str = ""
    facts: tuple[FactPrerequisite, ...] = ()
    interaction: InteractionPrerequisite | None = None
    tags: tuple[str, ...] = ()
    pool: str = ""
    location: str = ""


#: Keys a prerequisites object may have (save-format §7: facts, at most one interaction).
PREREQUISITE_KEYS = frozenset({"facts", "interaction"})
INTERACTION_KEYS = frozenset({"target", "state", "min_count"})
FACT_KEYS = frozenset({"fact_id", "min_confidence"})
CONFIDENCE_BY_SNAKE = {c.snake: c for c in KnowledgeConfidence}


def load_pool(root: Path, path: Path, sink: FindingSink) -> list[MonologueLine]:
    """Read one monologue pool file; C001 for YAML problems, C003 for prerequisites.

    Lines whose prerequisites break the schema are kept without the broken part so
    the rest of the pool still shows; the finding says what was ignored.
    """
    rel = rel_path(root, path)
    data = load_yaml(path, root, sink)
    if data is None:
        return []
    if isinstance(data, dict) and isinstance(data.get("lines"), list):
        data = data["lines"]
    if not isinstance(data, list):
        sink.add("C001", f"{rel}: a monologue pool must be a list of lines", location_of(rel, data))
        return []
    lines = []
    for index, item in each_mapping(data, rel, sink, "line {n} of the pool"):
        line_id = text_of(item.get("id")).strip()
        where = location_of(rel, item, "id" if "id" in item else None)
        if not line_id:
            sink.add("C001", f"{rel}: line {index + 1} of the pool has no id", where)
            continue
        facts, interaction = _parse_prerequisites(item.get("prerequisites"), rel, line_id, item, sink)
        lines.append(
            MonologueLine(
                id=line_id,
                text=text_of(item.get("text")).strip(),
                trigger=text_of(item.get("trigger")),
                facts=facts,
                interaction=interaction,
                tags=tuple(str_list(item.get("tags"))),
                pool=path.stem,
                location=where,
            )
        )
    return lines


def _parse_prerequisites(value, rel: str, line_id: str, item: dict, sink: FindingSink):
    facts: list[FactPrerequisite] = []
    interaction = None
    if value is None:
        return (), None
    where = location_of(rel, item, "prerequisites")
    if not isinstance(value, dict):
        sink.add("C003", f"{rel}: {line_id}: prerequisites must be a mapping", where)
        return (), None
    for key in value:
        if key not in PREREQUISITE_KEYS:
            sink.add(
                "C003",
                f"{rel}: {line_id}: unknown prerequisite key {key!r} (allowed: facts, interaction); ignored",
                location_of(rel, value, key),
            )
    raw_facts = value.get("facts")
    if raw_facts is not None:
        if not isinstance(raw_facts, list):
            sink.add("C003", f"{rel}: {line_id}: 'facts' must be a list", location_of(rel, value, "facts"))
        else:
            for fact in raw_facts:
                parsed = _parse_fact_prerequisite(fact, rel, line_id, raw_facts, sink)
                if parsed is not None:
                    facts.append(parsed)
    if "interaction" in value:
        interaction = _parse_interaction_prerequisite(value["interaction"], rel, line_id, value, sink)
    return tuple(facts), interaction


def _parse_fact_prerequisite(fact, rel, line_id, parent, sink) -> FactPrerequisite | None:
    where = location_of(rel, fact if isinstance(fact, MarkedDict) else parent)
    if not isinstance(fact, dict):
        sink.add("C003", f"{rel}: {line_id}: each 'facts' item must be a mapping with fact_id and min_confidence", where)
        return None
    for key in fact:
        if key not in FACT_KEYS:
            sink.add("C003", f"{rel}: {line_id}: unknown key {key!r} in a facts item", location_of(rel, fact, key))
    fact_id = text_of(fact.get("fact_id"))
    if not FACT_ID_RE.fullmatch(fact_id):
        sink.add("C003", f"{rel}: {line_id}: fact_id {fact_id!r} is not category.topic", location_of(rel, fact, "fact_id"))
        return None
    raw = text_of(fact.get("min_confidence") or "knows_of")
    confidence = CONFIDENCE_BY_SNAKE.get(raw)
    if confidence is None:
        sink.add(
            "C003",
            f"{rel}: {line_id}: min_confidence {raw!r} is not one of {', '.join(CONFIDENCE_BY_SNAKE)}",
            location_of(rel, fact, "min_confidence"),
        )
        return None
    return FactPrerequisite(fact_id, confidence)


def _parse_interaction_prerequisite(raw, rel, line_id, parent, sink) -> InteractionPrerequisite | None:
    where = location_of(rel, parent, "interaction")
    if isinstance(raw, list):
        sink.add("C003", f"{rel}: {line_id}: 'interaction' is one object, not a list (schema §9.1: one interaction prerequisite per line)", where)
        return None
    if not isinstance(raw, dict):
        sink.add("C003", f"{rel}: {line_id}: 'interaction' must be a mapping with a target", where)
        return None
    ok = True
    for key in raw:
        if key not in INTERACTION_KEYS:
            sink.add("C003", f"{rel}: {line_id}: unknown key {key!r} in the interaction prerequisite", location_of(rel, raw, key))
            ok = False
    target = text_of(raw.get("target"))
    if not target.startswith("npc:") or not target[4:]:
        sink.add("C003", f"{rel}: {line_id}: interaction target {target!r} must be 'npc:<slug>'", location_of(rel, raw, "target" if "target" in raw else None))
        return None
    state = None
    if raw.get("state") is not None:
        state = InteractionState.from_snake(text_of(raw["state"]))
        if state is None:
            names = ", ".join(s.snake for s in InteractionState)
            sink.add("C003", f"{rel}: {line_id}: unknown interaction state {raw['state']!r} (one of {names})", location_of(rel, raw, "state"))
            ok = False
    min_count = raw.get("min_count", 1)
    try:
        if check_int(min_count, U32) < 1:  # decimal ASCII digits, like every content number
            raise ConversionError(min_count, U32.name, "it is below 1")
    except ConversionError as exc:
        sink.add("C003", f"{rel}: {line_id}: min_count must be a whole number of at least 1 in digits 0-9: {exc}", location_of(rel, raw, "min_count"))
        ok = False
    if not ok:
        return None
    return InteractionPrerequisite(target[4:], state, min_count)


@dataclass(frozen=True, slots=True)
class Eligibility:
    """Whether a line may fire at a tick, and the prerequisites that fail.

    Attributes:
        eligible: every prerequisite holds.
        failing: the failing prerequisites in words, in prerequisite order.
        shortfalls: how far each of ``failing`` is from holding, in its own units: a
            ``facts`` item the confidence steps it lacks (``suspects`` < ``knows_of`` <
            ``knows_details`` < ``direct``; a fact not known lacks one step more than
            ``suspects``), the ``interaction`` item the interactions it lacks
            (``min_count`` - count). Each at least 1.
    """

    eligible: bool
    failing: tuple[str, ...]
    shortfalls: tuple[int, ...] = ()

    @property
    def distance(self) -> int:
        """The sum of ``shortfalls``: 0 when eligible. It orders misses with as many
        failing clauses: the nearest lacks the least."""
        return sum(self.shortfalls)


def evaluate(line: MonologueLine, knowledge: InteractionQueries) -> Eligibility:
    """Check a line's prerequisites against the knowledge graph of one tick (schema §6).

    Args:
        line: the monologue line.
        knowledge: a KnowledgeGraph or a KnowledgeAtTick view.
    """
    failing, shortfalls = [], []
    for pre in line.facts:
        fact = knowledge.fact(pre.fact_id)
        if fact is None:
            failing.append(f"{pre.fact_id} is not known (needs {pre.min_confidence.snake})")
            shortfalls.append(pre.min_confidence - KnowledgeConfidence.Suspects + 1)
        elif fact.confidence < pre.min_confidence:
            failing.append(f"{pre.fact_id} is {fact.confidence.snake}, needs {pre.min_confidence.snake}")
            shortfalls.append(pre.min_confidence - fact.confidence)
    inter = line.interaction
    if inter is not None:
        count = knowledge.count_interactions(inter.target_slug, inter.state)
        if count < inter.min_count:
            what = f"{inter.state.snake} " if inter.state else ""
            failing.append(f"{count} {what}interaction(s) with {inter.target_slug}, needs {inter.min_count}")
            shortfalls.append(inter.min_count - count)
    return Eligibility(not failing, tuple(failing), tuple(int(s) for s in shortfalls))
