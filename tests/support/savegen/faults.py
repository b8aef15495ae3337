"""Known faults planted in a clean generated save, for QA and checker tests.

Each fault is one deliberate break of a rule in ``docs/checks.md``, made as
narrowly as the save format allows: where a change would upset a running chain
(score, stress), the rest of that NPC's chain is recomputed so only the intended
rule breaks. Faults that edit only the snapshot also make replay disagree with
it (J003); each fault lists such side effects under ``also``.
"""

from __future__ import annotations

from tests.support.savegen.content import Content
from tests.support.savegen.generator import canonical_order, f32

UNKNOWN_TOPIC = "sea-serpents"
UNKNOWN_LINE = "harbor-nights_m_s_999"
FUTURE = 250
"""Ticks past ``saved_at_tick`` for the future-tick fault."""


def _kind(entry: dict) -> str:
    return next(iter(entry["event"]))


def _body(entry: dict) -> dict:
    return next(iter(entry["event"].values()))


def _rechain_score(doc: dict, npc_id: int) -> None:
    """Recomputes one NPC's ``score_after`` chain and snapshot score from the events."""
    score = 0.0
    for entry in doc["journal"]:
        kind, body = _kind(entry), _body(entry)
        if body.get("target") != npc_id:
            continue
        if kind == "RelationshipInteraction":
            score = body["score_after"] = f32(max(0.0, min(100.0, score + body["delta"])))
        elif kind == "WalkAwayPenalty":
            score = body["score_after"] = f32(max(0.0, score - body["penalty"]))
    doc["npcs"][str(npc_id)]["relationship"]["score"] = score


def _rechain_stress(doc: dict, npc_id: int) -> None:
    """Recomputes one NPC's ``current_stress`` chain and snapshot stress."""
    stress = 0
    for entry in doc["journal"]:
        body = _body(entry)
        if _kind(entry) == "StressChanged" and body["target"] == npc_id:
            stress = body["current_stress"] = stress + body["delta"]
    doc["npcs"][str(npc_id)]["tolerance"]["current_stress"] = stress


def _walk_aways(journal: list) -> list[tuple[dict, int, bool]]:
    """Every walk-away as (entry, target, whether a penalty follows it)."""
    found = []
    for i, entry in enumerate(journal):
        if _kind(entry) in ("InteractionWalkedAway", "InteractionConflictAbandoned"):
            after = journal[i + 2] if i + 2 < len(journal) else None
            penalised = after is not None and _kind(after) == "WalkAwayPenalty"
            found.append((entry, _body(entry)["target"], penalised))
    return found


def _interaction_fact(facts: dict, target: int, ended: int, state: str) -> str:
    for fact_id, fact in facts.items():
        meta = (fact["metadata"] or {}).get("Interaction")
        if meta and meta["target_entity"] == target and meta["ended_tick"] == ended \
                and meta["interaction_state"] == state:
            return fact_id
    raise LookupError(f"no {state} interaction of {target} ended at {ended}")


def _pick(items: list, at: int, code: str, what: str):
    """``items[at]``, or a ValueError that names the fault and what it needs (a short
    save has too few walk-aways or conversations for every fault)."""
    if not items:
        raise ValueError(f"{code} needs {what}, which this save lacks")
    return items[at]


def plant_faults(doc: dict, content: Content) -> list[dict]:
    """Plants thirteen distinct faults in ``doc`` (in place).

    Args:
        doc: a clean evening-like document with walk-aways, completed
            conversations and an NPC holding shared references.
        content: the content the document was generated with.

    Returns:
        ``{code, where, note, also}`` per fault, ``where`` a JSON path into the
        faulty document (dots between keys and list indices).

    Raises:
        ValueError: the save lacks what a fault needs (too short), naming the fault.
    """
    journal = doc["journal"]
    facts = doc["player"]["knowledge"]["facts"]
    npcs = doc["npcs"]
    slug_of = {int(k): v["slug"] for k, v in npcs.items()}
    gated_facts = {f for line in content.monologues for f, _ in line.prerequisites.facts}
    gated_walks = {line.prerequisites.interaction[0] for line in content.monologues
                   if line.prerequisites.interaction
                   and line.prerequisites.interaction[1] in ("WalkedAway", "ConflictAbandoned")}
    plain = [f for f in facts if not f.startswith("interaction.") and f not in gated_facts]
    planted: list[tuple] = []

    # K001: a FactId that is not category.topic, renamed everywhere it occurs.
    old = _pick(plain, -1, "K001", "a fact no monologue gates on")
    new = old.replace(".", "-", 1).capitalize()
    facts[new] = facts.pop(old)
    learned = None
    for entry in journal:
        body = _body(entry)
        if body.get("fact_id") == old:
            body["fact_id"] = new
            learned = learned or entry
    planted.append(("K001", f"player.knowledge.facts.{new}", learned,
                    f"'{old}' renamed '{new}' in the snapshot and in every FactLearned/FactUpdated",
                    []))

    # K004: a fact acquired after the save was written.
    future = _pick([f for f in plain if f != old], 0, "K004", "a second fact no monologue gates on")
    facts[future]["acquired_tick"] = doc["saved_at_tick"] + FUTURE
    planted.append(("K004", f"player.knowledge.facts.{future}.acquired_tick", None,
                    f"acquired_tick set to saved_at_tick + {FUTURE}", ["J003"]))

    # I001: Active -> ConflictAbandoned (no confrontation), on the last walk-away of
    # an NPC no monologue gates on walk-aways.
    walks = _walk_aways(journal)
    free = [w for w in walks if slug_of[w[1]] not in gated_walks]
    i001 = _pick(free, -1, "I001", "a walk-away from an NPC no monologue gates on walk-aways")
    i001[0]["event"] = {"InteractionConflictAbandoned": _body(i001[0])}
    planted.append(("I001", "journal[{}].event.InteractionConflictAbandoned", i001[0],
                    f"an InteractionWalkedAway of {slug_of[i001[1]]} turned into "
                    "InteractionConflictAbandoned without an InteractionConfrontation "
                    "(Active -> ConflictAbandoned); its StressChanged follows as before and "
                    "the snapshot still says WalkedAway. A checker whose replay refuses the "
                    "transition (leaving the interaction in progress) would also report I005 "
                    "at the next InteractionStarted; one that compares the snapshot's "
                    "confrontation flag with the journal may report I004",
                    ["J003"]))

    # T003: a walk-away loses its stress change; the NPC's later stress is rebased.
    others = [w for w in walks if w is not i001]
    t003 = next((w for w in others if not w[2]), None) or _pick(others, 0, "T003", "a second walk-away")
    index = next(i for i, e in enumerate(journal) if e is t003[0])
    del journal[index + 1]
    _rechain_stress(doc, t003[1])
    planted.append(("T003", "journal[{}].event.InteractionWalkedAway", t003[0],
                    f"the StressChanged (walk_away) after this walk-away from "
                    f"{slug_of[t003[1]]} removed; later current_stress values rebased", []))

    # T004: a penalty for a walk-away still within the threshold.
    spare = [w for w in others if w is not t003 and not w[2]]
    t004 = next((w for w in spare if w[1] != t003[1]), None) or _pick(spare, 0, "T004", "a third walk-away with no penalty")
    index = next(i for i, e in enumerate(journal) if e is t004[0])
    tolerance = npcs[str(t004[1])]["interaction_tolerance"]
    penalty = {"tick": t004[0]["tick"], "event": {"WalkAwayPenalty": {
        "target": t004[1], "penalty": tolerance["walk_away_penalty"], "score_after": 0.0}}}
    journal.insert(index + 2, penalty)
    _rechain_score(doc, t004[1])
    planted.append(("T004", "journal[{}].event.WalkAwayPenalty", penalty,
                    f"a WalkAwayPenalty after a walk-away from {slug_of[t004[1]]} that is "
                    "within its walk_away_threshold; later scores rebased", []))

    # I008 and I009 on completed conversations of two NPCs other than Kael.
    completed = [e for e in journal if _kind(e) == "InteractionCompleted"
                 and slug_of[_body(e)["target"]] != "kael-davan"]
    first = _pick(completed, 0, "I008", "a completed conversation with an NPC other than Kael")
    i008 = _interaction_fact(facts, _body(first)["target"], first["tick"], "Completed")
    facts[i008]["confidence"] = "KnowsOf"
    planted.append(("I008", f"player.knowledge.facts.{i008}.confidence", None,
                    "a Completed interaction at KnowsOf (must be KnowsDetails)", ["J003"]))
    i009 = completed[len(completed) // 2]
    _body(i009)["topics"].append(UNKNOWN_TOPIC)
    i009_fact = _interaction_fact(facts, _body(i009)["target"], i009["tick"], "Completed")
    facts[i009_fact]["metadata"]["Interaction"]["topics"].append(UNKNOWN_TOPIC)
    planted.append(("I009", "journal[{}].event.InteractionCompleted.topics", i009,
                    f"topic '{UNKNOWN_TOPIC}' added to this event and to "
                    f"player.knowledge.facts.{i009_fact}.metadata.Interaction.topics", []))

    # K003: an interaction FactId not written NNN (last one of an NPC): without its zero
    # padding below 100 (``_7``), with one zero too many from 100 on (``_0123``), where
    # the unpadded number is the padded one.
    def number(fact_id: str) -> int:
        tail = fact_id.rsplit("_", 1)[-1]
        return int(tail) if tail.isdigit() else -1

    def k003_candidates():
        for below_100 in (True, False):  # the unpadded form first, as before 100 was allowed
            for slug in sorted(set(slug_of.values()) - {"kael-davan"}):
                ids = [f for f in facts if f.startswith(f"interaction.{slug}_")]
                last = max(ids, key=number, default="")
                if len(ids) >= 2 and (len(ids) < 100) == below_100 and last not in (i008, i009_fact) \
                        and facts[last]["metadata"]["Interaction"]["ended_tick"] is not None:
                    yield slug, last

    slug, last = next(k003_candidates(), (None, None))
    if slug is None:
        raise ValueError("K003 needs an NPC with 2 or more interactions, the last one ended")
    n = number(last)
    bad = f"interaction.{slug}_{n}" if n < 100 else f"interaction.{slug}_0{n}"
    facts[bad] = facts.pop(last)
    planted.append(("K003", f"player.knowledge.facts.{bad}", None,
                    f"'{last}' renamed '{bad}' in the snapshot", ["J003"]))

    # R002: a delta 0.2 off its formula; score_after and later scores stay consistent.
    records = [e for e in journal if _kind(e) == "RelationshipInteraction"
               and _body(e)["score_after"] < 95.0 and _body(e)["delta"] <= 0.8]
    r002 = _pick(records, -1, "R002", "a RelationshipInteraction below 95 score points with a delta of 0.8 or less")
    _body(r002)["delta"] = f32(_body(r002)["delta"] + 0.2)
    _rechain_score(doc, _body(r002)["target"])
    planted.append(("R002", "journal[{}].event.RelationshipInteraction.delta", r002,
                    f"delta raised by 0.2 for {slug_of[_body(r002)['target']]}; score_after "
                    "and later scores follow the raised delta", []))

    # R004: a duplicated joke in the snapshot.
    holder = next((k for k, v in npcs.items() if v["relationship"]["shared_references"]["jokes"]),
                  next(iter(npcs)))
    jokes = npcs[holder]["relationship"]["shared_references"]["jokes"]
    jokes.append(jokes[0] if jokes else "the crate that clinked")
    if len(jokes) == 1:
        jokes.append(jokes[0])
    planted.append(("R004", f"npcs.{holder}.relationship.shared_references.jokes", None,
                    f'joke "{jokes[-1]}" listed twice', ["J003"]))

    # J001: a dialogue line written one tick before the line above it.
    for i in range(len(journal) * 2 // 5, len(journal) * 3 // 5):
        prev2, prev, cur = journal[i - 2], journal[i - 1], journal[i]
        if all(_kind(e) == "DialogueLine" for e in (prev2, prev, cur)) \
                and prev["tick"] - 1 > prev2["tick"]:
            cur["tick"] = prev["tick"] - 1
            break
    else:
        raise ValueError("J001 needs three dialogue lines in a row mid-journal")
    planted.append(("J001", "journal[{}].tick", cur,
                    "a DialogueLine's tick set one below the previous entry's, "
                    "still inside the same conversation", []))

    # M002: a line id no pool defines, alone at a free tick mid-journal.
    for i in range(len(journal) * 3 // 4, len(journal) - 1):
        if journal[i + 1]["tick"] - journal[i]["tick"] >= 2:
            m002 = {"tick": journal[i]["tick"] + 1,
                    "event": {"MonologueFired": {"line_id": UNKNOWN_LINE}}}
            journal.insert(i + 1, m002)
            break
    else:
        raise ValueError("M002 needs a free tick in the last quarter of the journal")
    planted.append(("M002", "journal[{}].event.MonologueFired.line_id", m002,
                    f"MonologueFired '{UNKNOWN_LINE}': no pool defines it", []))

    # M001: the walk-away regret line fired before anything happened.
    m001 = {"tick": max(0, journal[0]["tick"] - 1),
            "event": {"MonologueFired": {"line_id": "the-last-shift_m_s_050"}}}
    journal.insert(0, m001)
    planted.append(("M001", "journal[{}].event.MonologueFired", m001,
                    "'the-last-shift_m_s_050' fired at the first tick: no Kael interaction "
                    "exists yet, so neither of its prerequisites holds", []))

    canonical_order(doc)
    where_is = {id(e): i for i, e in enumerate(journal)}
    out = []
    for code, where, entry, note, also in planted:
        if entry is not None and "{}" in where:
            where = where.format(where_is[id(entry)])
        elif entry is not None:
            note += f" (first occurrence in the journal: journal[{where_is[id(entry)]}])"
        out.append({"code": code, "where": where, "note": note, "also": also})
    return out
