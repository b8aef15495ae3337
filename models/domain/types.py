"""Domain values of the narrative state, named as in the design seeds.

Every type here is a plain, immutable value: enums for the closed vocabularies of
the schema seed (§2 and §3.2) and frozen ``msgspec.Struct`` records. Ticks are game
ticks (u64, read exactly as Python ``int``); scores are relationship score points
(0..100); stress is in the game's i16 stress units.
"""

from __future__ import annotations

import enum

import msgspec

StableId = int
"""A game entity id (u64). Written as a decimal string when used as a map key."""

FactId = str
"""A fact key of the form ``category.topic`` (schema §3.1)."""


class KnowledgeConfidence(enum.IntEnum):
    """How sure the player is of a fact; ordered Suspects < KnowsOf < KnowsDetails < Direct.

    Schema §2 (D-041). Interaction facts are Direct while in progress and settle to
    KnowsDetails, never lower (schema §4, ``DECAY_FLOOR``).
    """

    Suspects = 0
    KnowsOf = 1
    KnowsDetails = 2
    Direct = 3

    @property
    def snake(self) -> str:
        """The snake_case spelling used by monologue prerequisites (``knows_of``)."""
        return _SNAKE[self.name]


_SNAKE = {"Suspects": "suspects", "KnowsOf": "knows_of", "KnowsDetails": "knows_details", "Direct": "direct"}


class KnowledgeState(enum.Enum):
    """Whether a fact still holds for the player (schema §2)."""

    Active = "Active"
    Contradicted = "Contradicted"
    Stale = "Stale"


class KnowledgeSource(enum.Enum):
    """How the player came to know something (schema §2)."""

    DirectObservation = "DirectObservation"
    Heard = "Heard"
    ToldBy = "ToldBy"
    Inferred = "Inferred"
    Background = "Background"


class RelationshipState(enum.Enum):
    """What the player thinks of an entity (schema §2)."""

    Unknown = "Unknown"
    Known = "Known"
    Friendly = "Friendly"
    PersonOfInterest = "PersonOfInterest"
    Hostile = "Hostile"


class InteractionState(enum.Enum):
    """Outcome of one tracked conversation (schema §3.2).

    Active and Confrontation are "in progress"; Completed, WalkedAway and
    ConflictAbandoned are terminal. Legal moves are in ``TRANSITIONS``.
    """

    Active = "Active"
    Completed = "Completed"
    WalkedAway = "WalkedAway"
    Confrontation = "Confrontation"
    ConflictAbandoned = "ConflictAbandoned"

    #: True for Active and Confrontation (set on each member below the class).
    in_progress: bool
    #: True for the two outcomes that count as walking away (WalkedAway, ConflictAbandoned).
    is_walk_away: bool
    #: The member's place in declaration order (0..4), for per-state counts kept in
    #: tuples and lists: hashing a member runs Python code, indexing by ``slot`` does not.
    slot: int

    @property
    def snake(self) -> str:
        """The snake_case spelling used by monologue prerequisites (schema §6)."""
        return _INTERACTION_SNAKE[self]

    @classmethod
    def from_snake(cls, text: str) -> "InteractionState | None":
        """Parse ``walked_away`` and friends; None for anything else."""
        for state, snake in _INTERACTION_SNAKE.items():
            if snake == text:
                return state
        return None


# Plain attributes, not properties: the replay reads them for every interaction event
# (a property comparing members ran ~400 000 times on a 1M-event save).
for _slot, _state in enumerate(InteractionState):
    _state.in_progress = _state in (InteractionState.Active, InteractionState.Confrontation)
    _state.is_walk_away = _state in (InteractionState.WalkedAway, InteractionState.ConflictAbandoned)
    _state.slot = _slot
del _state, _slot

_INTERACTION_SNAKE = {
    InteractionState.Active: "active",
    InteractionState.Completed: "completed",
    InteractionState.WalkedAway: "walked_away",
    InteractionState.Confrontation: "confrontation",
    InteractionState.ConflictAbandoned: "conflict_abandoned",
}

#: The transition table of schema §3.2: every legal (from, to) pair. ``None`` as the
#: source is the start of an interaction (dialogue opens). Terminal states have no exit.
TRANSITIONS: frozenset[tuple[InteractionState | None, InteractionState]] = frozenset(
    {
        (None, InteractionState.Active),
        (InteractionState.Active, InteractionState.Completed),
        (InteractionState.Active, InteractionState.WalkedAway),
        (InteractionState.Active, InteractionState.Confrontation),
        (InteractionState.Confrontation, InteractionState.Completed),
        (InteractionState.Confrontation, InteractionState.ConflictAbandoned),
    }
)


def move_key(source: InteractionState | None, target: InteractionState) -> tuple[str | None, str]:
    """A move (schema §3.2) as the members' values: a key that hashes in C (a string's
    hash is kept, an enum member's is Python code; the replay judges 140 000 moves of a
    1 000 000-event save)."""
    return (source._value_ if source is not None else None, target._value_)


#: ``TRANSITIONS`` as ``move_key`` s.
_LEGAL_KEYS = frozenset(move_key(source, target) for source, target in TRANSITIONS)


def is_legal_transition(source: InteractionState | None, target: InteractionState) -> bool:
    """Whether schema §3.2 allows moving an interaction from ``source`` to ``target``."""
    return move_key(source, target) in _LEGAL_KEYS


class InteractionMetadata(msgspec.Struct, frozen=True, gc=False):
    """One conversation between the player and an NPC (schema §3.3).

    Attributes:
        target_entity: StableId of the NPC.
        interaction_state: the outcome so far.
        started_tick: tick the dialogue opened.
        ended_tick: tick it ended; None while in progress.
        topics: topic ids from ``global/enums/topics.yaml``.
        confrontation: True once the talk escalated (Confrontation or ConflictAbandoned).
        player_initiated: True when the player approached the NPC.
        location: location slug.
    """

    target_entity: StableId
    interaction_state: InteractionState
    started_tick: int
    ended_tick: int | None
    topics: tuple[str, ...]
    confrontation: bool
    player_initiated: bool
    location: str

    #: Interaction facts never decay below this confidence (schema §4).
    DECAY_FLOOR = KnowledgeConfidence.KnowsDetails


class FactMetadata(msgspec.Struct, frozen=True, gc=False):
    """Typed metadata on a fact (schema §3.4, option A). The only variant today is Interaction."""

    interaction: InteractionMetadata


class FactKnowledge(msgspec.Struct, frozen=True, gc=False):
    """What the player knows about one fact (schema §3.4).

    Attributes:
        confidence: ordered confidence level.
        source: how it was learned.
        state: Active, Contradicted or Stale.
        acquired_tick: tick it was first learned.
        metadata: present exactly on ``interaction.*`` facts.
    """

    confidence: KnowledgeConfidence
    source: KnowledgeSource
    state: KnowledgeState
    acquired_tick: int
    metadata: FactMetadata | None = None

    @property
    def interaction(self) -> InteractionMetadata | None:
        """The interaction metadata, or None for ordinary facts."""
        return self.metadata.interaction if self.metadata is not None else None


class EntityKnowledge(msgspec.Struct, frozen=True, gc=False):
    """What the player knows about an entity (save-format §3): confidence, source, state,
    what they think of it and the tick they last saw it."""

    confidence: KnowledgeConfidence
    source: KnowledgeSource
    state: KnowledgeState
    relationship: RelationshipState
    last_seen_tick: int


class ToleranceThreshold(msgspec.Struct, frozen=True, gc=False):
    """General NPC stress (schema §8.1): ``current_stress`` against ``threshold``, i16 units."""

    current_stress: int
    threshold: int

    @property
    def over_threshold(self) -> bool:
        """True when the NPC is stressed past its threshold."""
        return self.current_stress > self.threshold


class InteractionTolerance(msgspec.Struct, frozen=True, gc=False):
    """Walk-away consequence parameters, seeded per playthrough (schema §8.1).

    Attributes:
        walk_away_threshold: walk-aways tolerated before penalties (1..5).
        walk_away_penalty: score points lost per walk-away beyond the threshold (0.1..0.5).
        walk_away_stress_delta: stress added per walk-away (i16).
        permanent_confrontation_memory: whether an abandoned confrontation is never forgiven.
    """

    walk_away_threshold: int
    walk_away_penalty: float
    walk_away_stress_delta: int
    permanent_confrontation_memory: bool


class RelationshipLevel(enum.Enum):
    """The five bands of the relationship score (relationship seed, "Relationship Levels").

    Upper bounds are inclusive: <= 20 Stranger, <= 40 Acquaintance, <= 60 Friend,
    <= 80 Good Friend, above that Close Friend.
    """

    STRANGER = "stranger"
    ACQUAINTANCE = "acquaintance"
    FRIEND = "friend"
    GOOD_FRIEND = "good_friend"
    CLOSE_FRIEND = "close_friend"

    @property
    def display_name(self) -> str:
        """Title-case name shown to people, e.g. "Good Friend"."""
        return self.value.replace("_", " ").title()

    @classmethod
    def for_score(cls, score: float) -> "RelationshipLevel":
        """The level of a score in points (bounds 20 / 40 / 60 / 80 inclusive)."""
        for bound, level in LEVEL_BOUNDS:
            if score <= bound:
                return level
        return cls.CLOSE_FRIEND


#: Inclusive upper bound of each level except the last (relationship seed).
LEVEL_BOUNDS: tuple[tuple[float, RelationshipLevel], ...] = (
    (20.0, RelationshipLevel.STRANGER),
    (40.0, RelationshipLevel.ACQUAINTANCE),
    (60.0, RelationshipLevel.FRIEND),
    (80.0, RelationshipLevel.GOOD_FRIEND),
)

SHARED_REFERENCE_KINDS = ("jokes", "nicknames", "memories")


class Relationship(msgspec.Struct, frozen=True, gc=False):
    """The NPC's regard for the player (relationship seed, "Interaction Tracking").

    Attributes:
        score: 0..100 score points.
        total_interactions, positive_interactions, negative_interactions: counters.
        avg_message_length: running average, characters.
        conversation_depth_avg: running average, turns.
        shared_references: kind -> tuple of strings (at most 10 a kind).
        first_interaction_tick, last_interaction_tick: ticks or None before the first.
    """

    score: float = 0.0
    total_interactions: int = 0
    positive_interactions: int = 0
    negative_interactions: int = 0
    avg_message_length: float = 0.0
    conversation_depth_avg: float = 0.0
    shared_references: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("jokes", ()),
        ("nicknames", ()),
        ("memories", ()),
    )
    first_interaction_tick: int | None = None
    last_interaction_tick: int | None = None

    @property
    def level(self) -> RelationshipLevel:
        """The level of ``score``."""
        return RelationshipLevel.for_score(self.score)

    def references(self, kind: str) -> tuple[str, ...]:
        """Shared references of one kind (``jokes``, ``nicknames``, ``memories``)."""
        for name, items in self.shared_references:
            if name == kind:
                return items
        return ()


class NpcState(msgspec.Struct, frozen=True, gc=False):
    """Everything about one NPC at one tick.

    Attributes:
        stable_id: the NPC's StableId.
        slug: content slug (= profile file name).
        tolerance: stress against threshold.
        interaction_tolerance: walk-away parameters.
        relationship: the NPC's regard for the player.
        walk_aways: walk-aways so far (WalkedAway + ConflictAbandoned).
    """

    stable_id: StableId
    slug: str
    tolerance: ToleranceThreshold
    interaction_tolerance: InteractionTolerance
    relationship: Relationship = msgspec.field(default_factory=Relationship)
    walk_aways: int = 0

    @property
    def level(self) -> RelationshipLevel:
        """The relationship level at this tick."""
        return self.relationship.level
