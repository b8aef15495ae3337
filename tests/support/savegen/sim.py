"""The game rules the save generator plays by (save-format §5).

``Simulation`` keeps the live state the game would keep (knowledge graph, NPC
tolerance and relationship) and writes a journal entry for every change, in the
order the game applies them. Units: ticks for time, score points (0..100) for
regard, stress points for tolerance.
"""

from __future__ import annotations

import random
from itertools import accumulate
from dataclasses import dataclass

from tests.support.savegen import text
from tests.support.savegen.content import CONFIDENCE_RANK, Content, Prerequisites
from tests.support.savegen.text import DISPOSITION, FACTS, LAPSES, OBSERVATIONS


@dataclass(frozen=True)
class Scenario:
    """How a simulated session plays.

    Attributes:
        weights: how often the player seeks out each NPC (slug -> weight, default 1).
        talk_share: share of free moments spent starting a conversation.
        walk_p: chance that a conversation ends with the player walking away.
        walk_within_threshold: walk away only while the NPC's count is under its
            ``walk_away_threshold`` (no penalties then).
        confront_p: chance that a conversation escalates to a confrontation.
        abandon_share: share of confrontations the player walks out of.
        repeat_after: ticks before a monologue line may fire again (None: once).
        spiral: slug of an NPC the player keeps walking away from.
        turns: the least and the most exchanges of a conversation (both included).
        scripted: ``(share of the journal, slug, outcome)`` conversations forced
            once the journal is that full.
    """

    weights: dict
    talk_share: float = 0.8
    walk_p: float = 0.07
    walk_within_threshold: bool = True
    confront_p: float = 0.03
    abandon_share: float = 0.0
    repeat_after: int | None = None
    spiral: str | None = None
    scripted: tuple = ()
    turns: tuple[int, int] = (2, 6)


_EVENING = {"lera-sessik": 5.0, "sera-venn": 1.6, "kael-davan": 1.4, "mira-holt": 1.4,
            "orrin-vask": 1.0, "tobin-quill": 1.0}
SCENARIOS = {
    "evening": Scenario(_EVENING),
    "large": Scenario(_EVENING, walk_p=0.05, walk_within_threshold=False, confront_p=0.02,
                      abandon_share=0.3, repeat_after=36_000),
    # "large" with two exchanges a conversation: ~97 000 conversations in 1 000 000
    # entries with 3 NPCs, the shape of a long-running playtest (issue 37's 95 000).
    "many-conversations": Scenario(_EVENING, walk_p=0.05, walk_within_threshold=False, confront_p=0.02,
                                   abandon_share=0.3, repeat_after=36_000, turns=(2, 2)),
    "walkaway-spiral": Scenario({**_EVENING, "kael-davan": 12.0}, walk_p=0.04,
                                walk_within_threshold=True, spiral="kael-davan"),
    "abandoned-confrontation": Scenario(_EVENING, scripted=(
        (0.3, "kael-davan", "confront-abandon"), (0.55, "orrin-vask", "confront-complete"))),
}

KINDS = ("jokes", "nicknames", "memories")
GOOD_FRIEND = 60.0
"""Score above which shared references start (relationship seed: Good Friend, 61+)."""


class _Npc:
    """Live state of one NPC (tolerance, regard, walk-aways, interaction counts)."""

    __slots__ = ("slug", "id", "threshold", "tol", "stress", "score", "total", "positive",
                 "negative", "avg_len", "avg_depth", "refs", "first", "last", "walk_aways",
                 "confronted", "seq", "states", "lines", "topics", "places", "greetings",
                 "tense", "bank")

    def __init__(self, slug: str, stable_id: int, threshold: int, tol: dict) -> None:
        self.slug, self.id, self.threshold, self.tol = slug, stable_id, threshold, tol
        self.stress = self.total = self.positive = self.negative = self.walk_aways = self.seq = 0
        self.score = self.avg_len = self.avg_depth = 0.0
        self.refs = {kind: [] for kind in KINDS}
        self.first = self.last = None
        self.confronted = False
        self.states = {"*": 0}
        fallback = {"rumors": ("Hm. People talk.", "You hear all sorts on the harbor.")}
        self.lines = text.NPC_LINES.get(slug, fallback)
        self.topics = tuple(t for t in text.NPC_TOPICS.get(slug, ("rumors",)) if t in self.lines)
        self.places = text.NPC_PLACES.get(slug, ("dock-ward",))
        self.greetings = text.GREETINGS.get(slug, ("Evening.",))
        self.tense = text.TENSE_LINES.get(slug, ("Leave it.",))
        self.bank = text.shared_references_for(slug)


class Simulation:
    """Plays one session and records it (journal plus final state).

    Args:
        content: the content folder played by.
        ids: StableId per NPC slug.
        player_id: the player's StableId.
        tolerance: per-playthrough ``interaction_tolerance`` per slug.
        scenario: how the session plays.
        seed: the random seed.
        events: the exact number of journal entries to write.
        f32: the rounding applied to every recorded non-integer number.
        fork: ``(entries, seed)``: once the journal holds that many entries, play on
            with a fresh RNG seeded ``seed`` (``forked_at`` records where).
        journal: where entries go (``append`` and ``len``); a new list by default.
            An entry is never changed once appended, so a writer may encode it then.
    """

    def __init__(self, content: Content, ids: dict, player_id: int, tolerance: dict,
                 scenario: Scenario, seed: int, events: int, f32,
                 fork: tuple[int, int] | None = None, journal=None) -> None:
        self.rng = random.Random(seed)
        self.fork = fork
        self.forked_at: int | None = None
        self.scenario, self.limit, self.f32, self.player = scenario, events, f32, player_id
        self.journal = [] if journal is None else journal  # list-like: append and len
        self.tick = 0
        self.facts: dict[str, dict] = {}
        self.entities: dict[int, dict] = {}
        self.npcs = [_Npc(slug, ids[slug], p.threshold, tolerance[slug])
                     for slug, p in content.npcs.items()]
        self.by_slug = {npc.slug: npc for npc in self.npcs}
        self.weights = [scenario.weights.get(npc.slug, 1.0) for npc in self.npcs]
        # Cumulative weights once: random.choices draws the same NPC from them as from
        # the weights, without summing every NPC's weight on each draw (3 000-NPC saves).
        self.cum_weights = list(accumulate(self.weights))
        self.topics = set(content.topics)
        self.places = set(content.locations)
        self.triggers: dict[str, list] = {}
        for line in content.monologues:
            self.triggers.setdefault(line.trigger, []).append(line)
        self.fired: dict[str, int] = {}
        self.teach: dict[tuple, list] = {}
        for fact_id, ladder, tellers in FACTS:
            for teller in tellers:
                self.teach.setdefault(teller, []).append((fact_id, ladder))
        self.scripted = list(scenario.scripted)
        self.active: tuple | None = None

    # -- recording -------------------------------------------------------------

    def _emit(self, variant: str, fields: dict) -> None:
        self.journal.append({"tick": self.tick, "event": {variant: fields}})

    def _room(self) -> int:
        return self.limit - len(self.journal)

    def _advance(self, low: int, high: int) -> None:
        self.tick += self.rng.randint(low, high)

    # -- session ---------------------------------------------------------------

    def run(self) -> None:
        """Plays until the journal holds exactly ``events`` entries."""
        rng = self.rng
        self.tick = rng.randint(60, 400)
        while self._room() > 0:
            if self.scripted and self.scripted[0][0] * self.limit <= len(self.journal):
                _, slug, outcome = self.scripted.pop(0)
                self._conversation(self.by_slug[slug], outcome)
            elif rng.random() < self.scenario.talk_share:
                npc = rng.choices(self.npcs, cum_weights=self.cum_weights)[0]
                self._conversation(npc, self._outcome(npc))
            else:
                self._free_time()
            self._maybe_fork()
            self._advance(30, 900)

    def _maybe_fork(self) -> None:
        """Reseed once the journal holds ``fork[0]`` entries, before the next tick is
        drawn: two runs of one seed then share exactly the first ``forked_at`` entries."""
        if self.fork is not None and self.forked_at is None and len(self.journal) >= self.fork[0]:
            self.forked_at = len(self.journal)
            self.rng.seed(self.fork[1])

    def _outcome(self, npc: _Npc) -> str:
        rng, sc = self.rng, self.scenario
        if npc.slug == sc.spiral:
            return "complete" if npc.total < 2 or rng.random() < 0.15 else "walk"
        roll = rng.random()
        if roll < sc.confront_p:
            return "confront-abandon" if rng.random() < sc.abandon_share else "confront-complete"
        within = npc.walk_aways < npc.tol["walk_away_threshold"]
        if roll < sc.confront_p + sc.walk_p and (within or not sc.walk_within_threshold):
            return "walk"
        return "complete"

    def _conversation(self, npc: _Npc, outcome: str) -> None:
        rng = self.rng
        if npc.id not in self.entities or rng.random() < 0.2:
            self._observe(npc, seen=True)
        if self._room() < 1:
            return
        meta = self._start(npc)
        topics = rng.sample(npc.topics, k=min(len(npc.topics), rng.choice((1, 1, 2))))
        turns = rng.randint(*self.scenario.turns)
        spoken: list[int] = []
        self._line(npc.id, rng.choice(npc.greetings))
        confront_at = rng.randint(1, turns - 1) if outcome.startswith("confront") else -1
        for turn in range(turns):
            topic = topics[turn % len(topics)]
            if turn == confront_at:
                self._confront(npc, meta, spoken)
                continue
            said = rng.choice(text.PLAYER_LINES.get(topic, text.PLAYER_LINES["greeting"]))
            if self._line(self.player, said):
                spoken.append(len(said))
            self._line(npc.id, rng.choice(npc.lines[topic]))
            self._learn(npc, topic)
            self._share(npc)
            self._monologue("mid_conversation", 0.25)
        if outcome.startswith("confront") and meta["interaction_state"] != "Confrontation":
            outcome = "complete"
        if outcome.endswith("complete"):
            closing = rng.choice(text.PLAYER_LINES["closing"])
            if self._line(self.player, closing):
                spoken.append(len(closing))
            self._complete(npc, meta, topics, spoken, outcome)
        else:
            self._walk_away(npc, meta, "InteractionConflictAbandoned" if outcome ==
                            "confront-abandon" else "InteractionWalkedAway")
        self._monologue("post_conversation", 0.6)

    def _free_time(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.3 and self._notice():
            return
        if roll < 0.55 and self._rest():
            return
        if roll < 0.8 and self._monologue(rng.choice(("idle", "on_arrival")), 1.0):
            return
        self._observe(rng.choices(self.npcs, cum_weights=self.cum_weights)[0], seen=rng.random() < 0.8)

    # -- interactions (schema seed §3, §7) ---------------------------------------

    def _start(self, npc: _Npc) -> dict:
        """InteractionStarted: a new fact ``interaction.{slug}_{NNN}`` (schema §7.3)."""
        rng = self.rng
        self._advance(1, 20)
        location = rng.choice([p for p in npc.places if p in self.places] or sorted(self.places))
        initiated = rng.random() < 0.85
        npc.seq += 1
        fact_id = f"interaction.{npc.slug}_{npc.seq:03d}"
        meta = {"target_entity": npc.id, "interaction_state": "Active", "started_tick": self.tick,
                "ended_tick": None, "topics": [], "confrontation": False,
                "player_initiated": initiated, "location": location}
        self.facts[fact_id] = {"confidence": "Direct", "source": "DirectObservation",
                               "state": "Active", "acquired_tick": self.tick,
                               "metadata": {"Interaction": meta}}
        npc.states["*"] += 1
        npc.states["Active"] = npc.states.get("Active", 0) + 1
        self.active = (npc, fact_id)
        self._emit("InteractionStarted", {"target": npc.id, "player_initiated": initiated,
                                          "location": location})
        return meta

    def _move(self, npc: _Npc, meta: dict, state: str) -> None:
        npc.states[meta["interaction_state"]] -= 1
        npc.states[state] = npc.states.get(state, 0) + 1
        meta["interaction_state"] = state
        if state not in ("Active", "Confrontation"):
            meta["ended_tick"] = self.tick
            self.facts[self.active[1]]["confidence"] = "KnowsDetails"
            self.active = None

    def _line(self, speaker: int, said: str) -> bool:
        if self._room() < 1:
            return False
        self._advance(15, 80)
        self._emit("DialogueLine", {"speaker": speaker, "text": said})
        return True

    def _fill(self, npc: _Npc) -> None:
        """Uses the last entries on talk: the session is saved mid-conversation."""
        while self._room() > 0:
            self._line(npc.id, self.rng.choice(npc.lines[npc.topics[0]]))

    def _confront(self, npc: _Npc, meta: dict, spoken: list) -> None:
        said = self.rng.choice(text.PLAYER_LINES["confront"])
        if self._line(self.player, said):
            spoken.append(len(said))
        if self._room() < 2:
            return self._fill(npc)
        self._advance(5, 30)
        self._move(npc, meta, "Confrontation")
        meta["confrontation"] = True
        npc.confronted = True
        self._emit("InteractionConfrontation", {"target": npc.id})
        self._stress(npc, self.rng.randint(2, 6), "argument")
        self._line(npc.id, self.rng.choice(npc.tense))
        self._monologue("mid_conversation", 0.8)

    def _complete(self, npc: _Npc, meta: dict, topics: list, spoken: list, outcome: str) -> None:
        if self._room() < 2:
            return self._fill(npc)
        self._advance(10, 60)
        meta["topics"] = [t for t in topics if t in self.topics]
        self._move(npc, meta, "Completed")
        self._emit("InteractionCompleted", {"target": npc.id, "topics": list(meta["topics"])})
        if outcome == "confront-complete":
            sentiment = self.rng.uniform(-0.9, -0.35)
        else:
            sentiment = DISPOSITION.get(npc.slug, 0.3) + self.rng.uniform(-0.45, 0.4)
        self._record(npc, round(max(-1.0, min(1.0, sentiment)), 2), sum(spoken), len(spoken))

    def _walk_away(self, npc: _Npc, meta: dict, variant: str) -> None:
        """A walk-away: its stress change and, past the threshold, the penalty (D-064)."""
        tol = npc.tol
        penalised = npc.walk_aways + 1 > tol["walk_away_threshold"]
        if self._room() < (3 if penalised else 2):
            return self._fill(npc)
        self._advance(5, 40)
        self._move(npc, meta, "ConflictAbandoned" if variant.endswith("Abandoned") else "WalkedAway")
        npc.walk_aways += 1
        self._emit(variant, {"target": npc.id})
        self._stress(npc, tol["walk_away_stress_delta"], "walk_away")
        if penalised:
            npc.score = self.f32(max(0.0, npc.score - tol["walk_away_penalty"]))
            self._emit("WalkAwayPenalty", {"target": npc.id, "penalty": tol["walk_away_penalty"],
                                           "score_after": npc.score})

    # -- NPC state -------------------------------------------------------------

    def _stress(self, npc: _Npc, delta: int, cause: str) -> None:
        npc.stress += delta
        self._emit("StressChanged", {"target": npc.id, "delta": delta,
                                     "current_stress": npc.stress, "cause": cause})

    def _rest(self) -> bool:
        tense = [n for n in self.npcs if n.stress > 0 and n.slug != self.scenario.spiral]
        if not tense:
            return False
        npc = self.rng.choice(tense)
        self._advance(1, 30)
        self._stress(npc, -min(npc.stress, self.rng.randint(2, 8) + npc.stress // 5), "rest")
        return True

    def _record(self, npc: _Npc, sentiment: float, length: int, turns: int) -> None:
        """RelationshipInteraction: the relationship seed's record_interaction."""
        f32 = self.f32
        sentiment = f32(sentiment)
        raw = sentiment * 0.5 + min(0.3, length / 500) + min(0.2, turns * 0.05) + 0.1
        delta = f32(max(-1.0, min(1.0, raw)))
        npc.score = f32(max(0.0, min(100.0, npc.score + delta)))
        npc.total += 1
        count = npc.total
        if sentiment > 0.2:
            npc.positive += 1
        elif sentiment < -0.2:
            npc.negative += 1
        npc.avg_len = (npc.avg_len * (count - 1) + length) / count
        npc.avg_depth = (npc.avg_depth * (count - 1) + turns) / count
        if npc.first is None:
            npc.first = self.tick
        npc.last = self.tick
        self._emit("RelationshipInteraction", {
            "target": npc.id, "sentiment": sentiment, "message_length": length,
            "conversation_turns": turns, "delta": delta, "score_after": npc.score})

    def _share(self, npc: _Npc) -> None:
        """SharedReferenceAdded: at most 10 a kind, oldest dropped, duplicates ignored."""
        rng = self.rng
        if npc.score <= GOOD_FRIEND or self._room() < 1 or rng.random() > 0.3:
            return
        kind = rng.choice(KINDS)
        said = rng.choice(npc.bank[kind])
        self._advance(1, 10)
        self._emit("SharedReferenceAdded", {"target": npc.id, "kind": kind, "content": said})
        kept = npc.refs[kind]
        if said not in kept:
            kept.append(said)
            if len(kept) > 10:
                del kept[0]

    # -- knowledge -------------------------------------------------------------

    def _learn(self, npc: _Npc, topic: str) -> None:
        options = self.teach.get((npc.slug, topic))
        if not options or self._room() < 1 or self.rng.random() > 0.4:
            return
        fact_id, ladder = self.rng.choice(options)
        fact = self.facts.get(fact_id)
        if fact is None:
            self._learn_new(fact_id, ladder[0], "ToldBy")
        elif fact["state"] != "Active":
            self._update(fact_id, None, "Active")
        else:
            rank = CONFIDENCE_RANK[fact["confidence"]]
            higher = [c for c in ladder if CONFIDENCE_RANK[c] > rank]
            if higher:
                self._update(fact_id, higher[0], None)

    def _learn_new(self, fact_id: str, confidence: str, source: str) -> None:
        self._advance(1, 10)
        self.facts[fact_id] = {"confidence": confidence, "source": source, "state": "Active",
                               "acquired_tick": self.tick, "metadata": None}
        self._emit("FactLearned", {"fact_id": fact_id, "confidence": confidence, "source": source})

    def _update(self, fact_id: str, confidence: str | None, state: str | None) -> None:
        self._advance(1, 10)
        fact = self.facts[fact_id]
        if confidence is not None:
            fact["confidence"] = confidence
        if state is not None:
            fact["state"] = state
        self._emit("FactUpdated", {"fact_id": fact_id, "confidence": confidence, "state": state})

    def _notice(self) -> bool:
        """The player learns or loses a fact on their own (observation, a lapse)."""
        rng = self.rng
        fact_id, confidence, source = rng.choice(OBSERVATIONS)
        fact = self.facts.get(fact_id)
        if fact is None:
            self._learn_new(fact_id, confidence, source)
            return True
        lapsing = [f for f, s in LAPSES.items() if f in self.facts and self.facts[f]["state"] == "Active"]
        if lapsing and rng.random() < 0.5:
            lapsed = rng.choice(lapsing)
            self._update(lapsed, None, LAPSES[lapsed])
            return True
        raise_to = confidence if CONFIDENCE_RANK[confidence] > CONFIDENCE_RANK[fact["confidence"]] else None
        revive = "Active" if fact["state"] != "Active" else None
        if raise_to or revive:
            self._update(fact_id, raise_to, revive)
            return True
        return False

    def _regard(self, npc: _Npc) -> str:
        if npc.confronted:
            return "Hostile" if npc.score < 40 else "PersonOfInterest"
        if npc.slug in ("kael-davan", "orrin-vask") and (
                "contraband.ring_exists" in self.facts or "guild.vask_takes_bribes" in self.facts):
            return "PersonOfInterest"
        if npc.score > 40:
            return "Friendly"
        return "Known" if npc.total else "Unknown"

    def _observe(self, npc: _Npc, seen: bool) -> None:
        """EntityObserved: the player sees the NPC, or hears of them."""
        if self._room() < 1:
            return
        self._advance(1, 20)
        confidence, source = ("Direct", "DirectObservation") if seen else ("KnowsOf", "Heard")
        regard = self._regard(npc)
        self.entities[npc.id] = {"confidence": confidence, "source": source, "state": "Active",
                                 "relationship": regard, "last_seen_tick": self.tick}
        self._emit("EntityObserved", {"entity": npc.id, "confidence": confidence,
                                      "source": source, "relationship": regard})

    # -- monologues (schema seed §5.4, §6) ---------------------------------------

    def holds(self, prereq: Prerequisites) -> bool:
        """Whether every prerequisite holds now.

        A fact prerequisite needs the fact present, Active, and at least as
        confident as asked; an interaction prerequisite counts this NPC's
        interactions in the given state (any state when none is given).
        """
        for fact_id, minimum in prereq.facts:
            fact = self.facts.get(fact_id)
            if (fact is None or fact["state"] != "Active"
                    or CONFIDENCE_RANK[fact["confidence"]] < CONFIDENCE_RANK[minimum]):
                return False
        if prereq.interaction:
            slug, state, at_least = prereq.interaction
            npc = self.by_slug.get(slug)
            if npc is None or npc.states.get(state or "*", 0) < at_least:
                return False
        return True

    def _monologue(self, trigger: str, chance: float) -> bool:
        """MonologueFired for one eligible line of ``trigger``; alone at its tick."""
        if self._room() < 1 or self.rng.random() >= chance:
            return False
        again = self.scenario.repeat_after
        ready = [line for line in self.triggers.get(trigger, ())
                 if (line.id not in self.fired if again is None
                     else self.tick - self.fired.get(line.id, -again) >= again)
                 and self.holds(line.prerequisites)]
        if not ready:
            return False
        line = self.rng.choice(ready)
        self._advance(5, 40)
        self.fired[line.id] = self.tick
        self._emit("MonologueFired", {"line_id": line.id})
        return True

    # -- snapshot --------------------------------------------------------------

    def facts_snapshot(self) -> dict:
        """Facts in BTreeMap order (by UTF-8 bytes of the id)."""
        return {k: self.facts[k] for k in sorted(self.facts, key=lambda k: k.encode("utf-8"))}

    def entities_snapshot(self) -> dict:
        """Entities keyed by StableId in numeric order."""
        return {str(k): self.entities[k] for k in sorted(self.entities)}

    def npcs_snapshot(self) -> dict:
        """NPCs keyed by StableId in numeric order, f32 values rounded."""
        f32 = self.f32
        out = {}
        for npc in sorted(self.npcs, key=lambda n: n.id):
            out[str(npc.id)] = {
                "slug": npc.slug,
                "tolerance": {"current_stress": npc.stress, "threshold": npc.threshold},
                "interaction_tolerance": dict(npc.tol),
                "relationship": {
                    "score": npc.score, "total_interactions": npc.total,
                    "positive_interactions": npc.positive, "negative_interactions": npc.negative,
                    "avg_message_length": f32(npc.avg_len),
                    "conversation_depth_avg": f32(npc.avg_depth),
                    "shared_references": {kind: list(npc.refs[kind]) for kind in KINDS},
                    "first_interaction_tick": npc.first, "last_interaction_tick": npc.last,
                },
                "walk_aways": npc.walk_aways,
            }
        return out
