"""The player's knowledge graph with BTreeMap semantics and the schema's queries.

``KnowledgeGraph`` is the mutable graph the replay builds (facts keyed by FactId in
UTF-8 byte order, entities keyed by StableId in numeric order, both in
``sortedcontainers.SortedDict``). The seven interaction queries of schema §5.1 and the
prefix range of §5.2 live in ``InteractionQueries`` so the same code answers them on
the live graph and on the read-only view of any past tick (``timeline.KnowledgeAtTick``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

from narrative_debugger.models.domain.types import (
    EntityKnowledge,
    FactId,
    FactKnowledge,
    InteractionMetadata,
    InteractionState,
    StableId,
)
from narrative_debugger.models.boundary import U64, ConversionError, parse_int
from sortedcontainers import SortedDict

#: FactId grammar (save-format §3): lowercase ``category.topic``, one dot.
FACT_ID_RE = re.compile(r"[a-z][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*")
#: Interaction FactId grammar (schema §3.1): ``interaction.{kebab-slug}_{NNN}``.
INTERACTION_ID_RE = re.compile(r"interaction\.([a-z0-9]+(?:-[a-z0-9]+)*)_([0-9]{3,})")
#: A kebab-case content slug (schema §3.1, ContentSlug).
SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


#: Fewer ASCII digits than this always spell a u64 (10**19 - 1 < 2**64 - 1).
_U64_SAFE_DIGITS = 20


def interaction_prefix(slug: str) -> str:
    """The FactId prefix every interaction with ``slug`` shares (schema §5.2)."""
    return f"interaction.{slug}_"


def interaction_fact_id(slug: str, sequence: int) -> FactId:
    """``interaction.{slug}_{NNN}``: zero-padded to three digits, more past 999 (schema §3.1)."""
    return f"interaction.{slug}_{sequence:03d}"


def parse_interaction_id(fact_id: str) -> tuple[str, int] | None:
    """Split an interaction FactId into (slug, sequence); None when it is not one.

    The sequence is ASCII digits and a u64 (``boundary.parse_int``): a FactId whose
    sequence is longer or larger than that is not an interaction FactId (K003)."""
    m = INTERACTION_ID_RE.fullmatch(fact_id)
    if m is None:
        return None
    digits = m.group(2)
    if len(digits) < _U64_SAFE_DIGITS:  # ASCII digits (the pattern), below 10**19 <= u64 max: int() is exact and safe
        return m.group(1), int(digits)
    try:
        return m.group(1), parse_int(m.group(2), U64)
    except ConversionError:
        return None


def fact_id_fault(fact_id: str) -> str | None:
    """The rule a FactId breaks, if any (checks catalogue, save-format §3, schema §3.1).

    Returns:
        ``"K001"`` when it is not lowercase ``category.topic`` with one dot;
        ``"K003"`` when it is in the ``interaction`` category but not
        ``interaction.{slug}_{NNN}`` (sequence zero-padded to three digits);
        None for a well-formed FactId.
    """
    if not FACT_ID_RE.fullmatch(fact_id):
        return "K001"
    if fact_id.startswith("interaction."):
        parsed = parse_interaction_id(fact_id)
        if parsed is None or f"{parsed[1]:03d}" != fact_id.rsplit("_", 1)[-1]:
            return "K003"
    return None


#: A line of well-formed FactIds (``fact_id_fault`` is None), for ``malformed_fact_ids``'s one pass in C.
# A sequence of up to 19 digits is always a u64; longer ones are tested one by one.
_GOOD_LINE = (r"(?:interaction\.[a-z0-9]+(?:-[a-z0-9]+)*_(?:[0-9]{3}|[1-9][0-9]{3,18})"
              r"|(?!interaction\.)[a-z][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*)")
_BAD_LINES = re.compile(rf"^(?!{_GOOD_LINE}$).*$", re.MULTILINE)


def malformed_fact_ids(fact_ids: Iterable[str]) -> dict[str, str]:
    """FactId -> ``fact_id_fault`` code, for the malformed ones only.

    Equal to testing each id with ``fact_id_fault``, but one regex pass over the
    joined ids (66 000 ids in a few ms); only the ids it flags are tested one by one.
    """
    ids = list(fact_ids)
    text = "\n".join(ids)
    if text.count("\n") != max(0, len(ids) - 1):  # an id with a newline in it: test each
        candidates = ids
    else:
        candidates = [m.group(0) for m in _BAD_LINES.finditer(text)] if ids else []
    return {fid: code for fid in candidates if (code := fact_id_fault(fid)) is not None}


class InteractionQueries:
    """Schema §5.1 queries, written once over two primitives.

    Subclasses provide ``slug_for(target)`` (StableId -> content slug),
    ``interaction_items(slug)`` (the §5.2 prefix range, in key order) and
    ``active_fact_id()`` (the fact of the interaction in progress, if any).
    """

    def slug_for(self, target: StableId) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def interaction_items(self, slug: str) -> Iterator[tuple[FactId, FactKnowledge]]:  # pragma: no cover
        raise NotImplementedError

    def active_fact_id(self) -> FactId | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def fact(self, fact_id: FactId) -> FactKnowledge | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def interaction_facts_for(self, slug: str) -> Iterator[tuple[FactId, InteractionMetadata]]:
        """Interaction facts with ``slug`` in FactId order: O(log N + K) (schema §5.2)."""
        for fact_id, fact in self.interaction_items(slug):
            meta = fact.interaction
            if meta is not None:
                yield fact_id, meta

    def _metas(self, target: StableId) -> list[InteractionMetadata]:
        slug = self.slug_for(target)
        if slug is None:
            return []
        return [meta for _, meta in self.interaction_facts_for(slug)]

    def has_interacted_with(self, target: StableId) -> bool:
        """Has the player ever interacted with this NPC? (schema §5.1)"""
        return bool(self._metas(target))

    def interactions_with(self, target: StableId) -> list[InteractionMetadata]:
        """All interactions with the NPC, ordered by ``started_tick`` (schema §5.1).

        Ties keep FactId sequence order, so ``_1000`` after ``_999``.
        """
        slug = self.slug_for(target)
        if slug is None:
            return []
        items = []
        for fact_id, meta in self.interaction_facts_for(slug):
            parsed = parse_interaction_id(fact_id)
            items.append((meta.started_tick, parsed[1] if parsed else 0, meta))
        items.sort(key=lambda t: (t[0], t[1]))
        return [meta for _, _, meta in items]

    def last_interaction_with(self, target: StableId) -> InteractionMetadata | None:
        """The most recent interaction with the NPC, or None (schema §5.1)."""
        metas = self.interactions_with(target)
        return metas[-1] if metas else None

    def has_walked_away_from(self, target: StableId) -> bool:
        """Did the player ever walk away (WalkedAway or ConflictAbandoned)? (schema §5.1)"""
        return any(m.interaction_state.is_walk_away for m in self._metas(target))

    def interaction_count_with(self, target: StableId) -> int:
        """How many interactions with the NPC were tracked (schema §5.1)."""
        return len(self._metas(target))

    def has_confronted(self, target: StableId) -> bool:
        """Was any interaction with the NPC a confrontation? (schema §5.1)"""
        return any(m.confrontation for m in self._metas(target))

    def active_interaction(self) -> InteractionMetadata | None:
        """The interaction in progress (Active or Confrontation), or None (schema §5.1)."""
        fact_id = self.active_fact_id()
        if fact_id is None:
            return None
        fact = self.fact(fact_id)
        return fact.interaction if fact is not None else None

    def next_interaction_sequence(self, slug: str) -> int:
        """Sequence number for a new interaction with ``slug``: existing count + 1 (schema §7.3)."""
        return sum(1 for _ in self.interaction_items(slug)) + 1

    def count_interactions(self, slug: str, state: InteractionState | None = None) -> int:
        """Interactions with ``slug`` (in ``state`` when given): the monologue
        ``interaction`` prerequisite's count (schema §6)."""
        return sum(1 for _, meta in self.interaction_facts_for(slug) if state is None or meta.interaction_state is state)


class KnowledgeGraph(InteractionQueries):
    """A mutable knowledge graph (save-format §3) with BTreeMap ordering.

    Attributes:
        facts: FactId -> FactKnowledge, sorted by UTF-8 bytes (= code points).
        entities: StableId -> EntityKnowledge, sorted numerically.
    """

    def __init__(self, slugs: Mapping[StableId, str] | None = None, *, ordered: bool = True) -> None:
        """An empty graph. ``ordered`` False keeps ``facts`` and ``entities`` as plain
        dicts in insertion order: the replay's live graph, which is asked for facts by
        id and for counts only, and pays no sorted insertion a new fact (interaction
        listings then sort on each call)."""
        self.facts: SortedDict | dict = SortedDict() if ordered else {}
        self.entities: SortedDict | dict = SortedDict() if ordered else {}
        self._slugs: dict[StableId, str] = dict(slugs or {})
        self._active: FactId | None = None
        # slug -> [interactions, then how many are in each state by ``InteractionState.slot``].
        self._state_counts: dict[str, list[int]] = {}
        # interaction_prefix(slug) -> how many FactIds start with it, for the slugs
        # ``next_interaction_sequence`` was asked about (kept current by ``set_fact``);
        # the graph is empty, so every known slug's count starts at 0.
        self._prefix_counts: dict[str, int] = {interaction_prefix(slug): 0 for slug in self._slugs.values()}
        # FactId -> its slug ("" when it is not an interaction FactId), parsed once.
        self._slug_of: dict[FactId, str] = {}

    def slug_for(self, target: StableId) -> str | None:
        return self._slugs.get(target)

    def set_fact(self, fact_id: FactId, fact: FactKnowledge, slug: str | None = None) -> None:
        """Insert or replace a fact, keeping the in-progress index and the counts current.

        ``slug``: the NPC slug ``fact_id`` was made from by ``interaction_fact_id``, when
        the caller did so with a well-formed slug (``SLUG_RE``); it is what parsing the
        id back would give, and saves that parse (the replay starts 73 000 interactions
        in a long journal).
        """
        facts = self.facts
        before = facts.get(fact_id)
        if before is None:
            facts[fact_id] = fact  # a new key: SortedDict keeps its order
            if self._prefix_counts and fact_id.startswith("interaction."):
                self._count_prefixes(fact_id)
        else:
            dict.__setitem__(facts, fact_id, fact)  # same key, same order
        meta = fact.metadata.interaction if fact.metadata is not None else None
        old = before.interaction if before is not None else None
        if meta is not None or old is not None:
            if slug is not None:
                self._slug_of[fact_id] = slug
            else:
                slug = self._slug_of.get(fact_id)
                if slug is None:
                    parsed = parse_interaction_id(fact_id)
                    slug = self._slug_of[fact_id] = parsed[0] if parsed else ""
            counts = self._state_counts.get(slug)
            if counts is None:
                counts = self._state_counts[slug] = [0] * (1 + len(InteractionState))
            if old is not None:
                counts[1 + old.interaction_state.slot] -= 1
                counts[0] -= 1
            if meta is not None:
                counts[1 + meta.interaction_state.slot] += 1
                counts[0] += 1
        if meta is not None and meta.interaction_state.in_progress:
            self._active = fact_id
        elif self._active == fact_id:
            self._active = None  # ended, or replaced by an ordinary fact (K002)

    def set_facts(self, items: Iterable[tuple[FactId, FactKnowledge]]) -> None:
        """``set_fact`` for each (FactId, FactKnowledge) pair, in order, with an ordered
        graph's sorted map built once at the end instead of a sorted insertion a fact
        (a long playthrough's snapshot holds tens of thousands of facts). ``items``
        may be a generator that reports bad entries as it goes."""
        ordered = type(self.facts) is not dict
        if ordered:
            self.facts = dict(self.facts)
        try:
            set_fact = self.set_fact
            for fact_id, fact in items:
                set_fact(fact_id, fact)
        finally:
            if ordered:
                # Sorted first: the sorted map's own sort then meets sorted keys and
                # passes over them once.
                plain = self.facts
                self.facts = SortedDict((key, plain[key]) for key in sorted(plain))

    def fact(self, fact_id: FactId) -> FactKnowledge | None:
        return self.facts.get(fact_id)

    def interaction_items(self, slug: str) -> Iterator[tuple[FactId, FactKnowledge]]:
        prefix = interaction_prefix(slug)
        if type(self.facts) is dict:  # an unordered graph: O(N)
            for fact_id in sorted(k for k in self.facts if k.startswith(prefix)):
                yield fact_id, self.facts[fact_id]
            return
        for fact_id in self.facts.irange(minimum=prefix):
            if not fact_id.startswith(prefix):
                break
            yield fact_id, self.facts[fact_id]

    def active_fact_id(self) -> FactId | None:
        return self._active

    def set_active_fact(self, fact_id: FactId | None) -> None:
        """Say which interaction is in progress: a graph rebuilt from a replay's index at
        a checkpoint (issue 38) takes the replay's own, which its order of changes set."""
        self._active = fact_id

    def next_interaction_sequence(self, slug: str) -> int:
        """Existing interaction facts with ``slug`` + 1 (schema §7.3): O(1) from the
        counts ``set_fact`` keeps per prefix (every NPC's from the start); a slug of no
        NPC is counted once, by bisection (or a scan in an unordered graph)."""
        prefix = interaction_prefix(slug)
        count = self._prefix_counts.get(prefix)
        if count is None:
            if type(self.facts) is dict:
                count = sum(1 for key in self.facts if key.startswith(prefix))
            else:
                count = self.facts.bisect_left(prefix + "\U0010ffff") - self.facts.bisect_left(prefix)
            self._prefix_counts[prefix] = count
        return count + 1

    def _count_prefixes(self, fact_id: FactId) -> None:
        """A new ``interaction.`` FactId: one more key for each counted prefix it starts
        with (a prefix ends at an ``_``, so only those cuts are looked up)."""
        counts = self._prefix_counts
        cut = fact_id.find("_")
        while cut >= 0:
            prefix = fact_id[: cut + 1]
            if prefix in counts:
                counts[prefix] += 1
            cut = fact_id.find("_", cut + 1)

    def count_interactions(self, slug: str, state: InteractionState | None = None) -> int:
        """O(1): counts kept by ``set_fact`` (schema §6 ``min_count``)."""
        counts = self._state_counts.get(slug)
        if counts is None:
            return 0
        return counts[0 if state is None else 1 + state.slot]

    def set_entity(self, entity: StableId, knowledge: EntityKnowledge) -> None:
        """Insert or replace what the player knows of an entity."""
        self.entities[entity] = knowledge

