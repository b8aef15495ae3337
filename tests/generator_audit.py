"""An independent audit of generated saves, used only by the generator tests.

It replays a save's journal from the initial state and checks the rules of
``docs/save-format.md`` §5 and a subset of ``docs/checks.md``, written apart from
both the generator and the application's own replay, so the generator's output
is checked by a second reading of the contract. Findings are ``(code, where)``.
Content is read with PyYAML.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

RANK = {"Suspects": 0, "KnowsOf": 1, "KnowsDetails": 2, "Direct": 3}
STATE = {"active": "Active", "completed": "Completed", "walked_away": "WalkedAway",
         "confrontation": "Confrontation", "conflict_abandoned": "ConflictAbandoned"}
FACT_ID = re.compile(r"[a-z][a-z0-9_-]*\.[a-z0-9][a-z0-9_-]*")
INTERACTION_ID = re.compile(r"interaction\.([a-z0-9]+(?:-[a-z0-9]+)*)_(\d{3}|[1-9]\d{3,})")
IN_PROGRESS = ("Active", "Confrontation")
TOL = 1e-4


def read_content(root: Path) -> dict:
    """Topics, NPC slugs and monologue prerequisites of a content folder."""
    lines = {}
    for path in sorted((root / "monologues").glob("*.yaml")):
        for line in yaml.safe_load(path.read_text(encoding="utf-8")):
            lines[line["id"]] = line.get("prerequisites") or {}
    return {
        "topics": set(yaml.safe_load((root / "global/enums/topics.yaml").read_text())),
        "npcs": {p.stem for p in (root / "npcs").glob("*.yaml")},
        "lines": lines,
    }


def _kind(entry):
    return next(iter(entry["event"]))


def _body(entry):
    return next(iter(entry["event"].values()))


class _Replay:
    def __init__(self, doc: dict, content: dict) -> None:
        self.doc, self.content, self.found = doc, content, []
        self.npcs = {int(k): v for k, v in doc["npcs"].items()}
        self.facts: dict = {}
        self.entities: dict = {}
        self.live = {i: {"stress": 0, "score": 0.0, "total": 0, "pos": 0, "neg": 0,
                         "avg_len": 0.0, "avg_depth": 0.0, "first": None, "last": None,
                         "refs": {"jokes": [], "nicknames": [], "memories": []},
                         "walk_aways": 0} for i in self.npcs}
        self.seq: Counter = Counter()
        self.active = None
        self.expected_penalties: set[int] = set()

    def add(self, code: str, where: str) -> None:
        self.found.append((code, where))

    def holds(self, line_id: str) -> bool:
        pre = self.content["lines"][line_id]
        for item in pre.get("facts") or ():
            fact = self.facts.get(item["fact_id"])
            need = {"suspects": 0, "knows_of": 1, "knows_details": 2, "direct": 3}[item["min_confidence"]]
            if fact is None or fact["state"] != "Active" or RANK[fact["confidence"]] < need:
                return False
        inter = pre.get("interaction")
        if inter:
            slug = inter["target"].split(":", 1)[1]
            want = STATE.get(inter.get("state"))
            count = sum(1 for fid, f in self.facts.items()
                        if fid.startswith(f"interaction.{slug}_") and f["metadata"]
                        and (want is None or f["metadata"]["Interaction"]["interaction_state"] == want))
            if count < inter.get("min_count", 1):
                return False
        return True

    def run(self) -> None:
        journal, saved = self.doc["journal"], self.doc["saved_at_tick"]
        previous, pending = 0, []
        for i, entry in enumerate(journal):
            tick = entry["tick"]
            if tick < previous:
                self.add("J001", f"journal[{i}].tick")
            if tick > previous:
                self._settle(pending)
            if tick > saved:
                self.add("J002", f"journal[{i}].tick")
            previous = max(previous, tick)
            self._apply(i, entry, pending)
        self._settle(pending)

    def _settle(self, pending: list) -> None:
        for i, line_id in pending:
            if not self.holds(line_id):
                self.add("M001", f"journal[{i}].event.MonologueFired")
        pending.clear()

    def _end(self, i: int, target: int, state: str, allowed: tuple) -> dict | None:
        if self.active is None or self.active[0] != target:
            self.add("I011", f"journal[{i}]")
            return None
        fact = self.facts[self.active[1]]
        meta = fact["metadata"]["Interaction"]
        if meta["interaction_state"] not in allowed:
            self.add("I001", f"journal[{i}]")
        meta["interaction_state"] = state
        if state not in IN_PROGRESS:
            meta["ended_tick"] = self.doc["journal"][i]["tick"]
            fact["confidence"] = "KnowsDetails"
            self.active = None
        return meta

    def _walk_away(self, i: int, target: int) -> None:
        journal, tick = self.doc["journal"], self.doc["journal"][i]["tick"]
        live, tol = self.live[target], self.npcs[target]["interaction_tolerance"]
        live["walk_aways"] += 1
        nxt = journal[i + 1] if i + 1 < len(journal) else None
        if not (nxt and _kind(nxt) == "StressChanged" and nxt["tick"] == tick
                and _body(nxt)["target"] == target and _body(nxt)["cause"] == "walk_away"
                and _body(nxt)["delta"] == tol["walk_away_stress_delta"]):
            self.add("T003", f"journal[{i}]")
            return
        after = journal[i + 2] if i + 2 < len(journal) else None
        has = bool(after and _kind(after) == "WalkAwayPenalty" and after["tick"] == tick
                   and _body(after)["target"] == target)
        if live["walk_aways"] > tol["walk_away_threshold"]:
            if not has or abs(_body(after)["penalty"] - tol["walk_away_penalty"]) > TOL:
                self.add("T004", f"journal[{i}]")
            if has:
                self.expected_penalties.add(i + 2)
        elif has:
            self.add("T004", f"journal[{i + 2}]")
            self.expected_penalties.add(i + 2)

    def _apply(self, i: int, entry: dict, pending: list) -> None:
        kind, body, tick = _kind(entry), _body(entry), entry["tick"]
        target = body.get("target")
        if target is not None and target not in self.npcs:
            self.add("I010", f"journal[{i}]")
            return
        live = self.live.get(target)
        if kind == "InteractionStarted":
            if self.active is not None:
                self.add("I005", f"journal[{i}]")
            slug = self.npcs[target]["slug"]
            self.seq[slug] += 1
            fid = f"interaction.{slug}_{self.seq[slug]:03d}"
            self.facts[fid] = {"confidence": "Direct", "source": "DirectObservation",
                               "state": "Active", "acquired_tick": tick, "metadata": {"Interaction": {
                                   "target_entity": target, "interaction_state": "Active",
                                   "started_tick": tick, "ended_tick": None, "topics": [],
                                   "confrontation": False, "player_initiated": body["player_initiated"],
                                   "location": body["location"]}}}
            self.active = (target, fid)
        elif kind == "InteractionConfrontation":
            meta = self._end(i, target, "Confrontation", ("Active",))
            if meta:
                meta["confrontation"] = True
        elif kind == "InteractionCompleted":
            meta = self._end(i, target, "Completed", IN_PROGRESS)
            if meta:
                meta["topics"] = list(body["topics"])
                for topic in body["topics"]:
                    if topic not in self.content["topics"]:
                        self.add("I009", f"journal[{i}].event.InteractionCompleted.topics")
        elif kind in ("InteractionWalkedAway", "InteractionConflictAbandoned"):
            state = "WalkedAway" if kind == "InteractionWalkedAway" else "ConflictAbandoned"
            allowed = ("Active",) if state == "WalkedAway" else ("Confrontation",)
            if self._end(i, target, state, allowed) is not None:
                self._walk_away(i, target)
        elif kind == "FactLearned":
            if not FACT_ID.fullmatch(body["fact_id"]):
                self.add("K001", f"journal[{i}].event.FactLearned.fact_id")
            self.facts[body["fact_id"]] = {"confidence": body["confidence"], "source": body["source"],
                                           "state": "Active", "acquired_tick": tick, "metadata": None}
        elif kind == "FactUpdated":
            fact = self.facts.get(body["fact_id"])
            if fact is None:
                self.add("J004", f"journal[{i}]")
                return
            for field in ("confidence", "state"):
                if body[field] is not None:
                    fact[field] = body[field]
        elif kind == "EntityObserved":
            self.entities[str(body["entity"])] = {
                "confidence": body["confidence"], "source": body["source"], "state": "Active",
                "relationship": body["relationship"], "last_seen_tick": tick}
        elif kind == "RelationshipInteraction":
            formula = max(-1.0, min(1.0, body["sentiment"] * 0.5 + min(0.3, body["message_length"] / 500)
                                    + min(0.2, body["conversation_turns"] * 0.05) + 0.1))
            if abs(formula - body["delta"]) > TOL:
                self.add("R002", f"journal[{i}].event.RelationshipInteraction.delta")
            if abs(max(0.0, min(100.0, live["score"] + body["delta"])) - body["score_after"]) > TOL:
                self.add("R003", f"journal[{i}]")
            live["score"] = body["score_after"]
            live["total"] += 1
            n = live["total"]
            live["pos"] += body["sentiment"] > 0.2
            live["neg"] += body["sentiment"] < -0.2
            live["avg_len"] = (live["avg_len"] * (n - 1) + body["message_length"]) / n
            live["avg_depth"] = (live["avg_depth"] * (n - 1) + body["conversation_turns"]) / n
            live["first"] = tick if live["first"] is None else live["first"]
            live["last"] = tick
        elif kind == "WalkAwayPenalty":
            if i not in self.expected_penalties:
                self.add("T004", f"journal[{i}]")
            if abs(max(0.0, live["score"] - body["penalty"]) - body["score_after"]) > TOL:
                self.add("R003", f"journal[{i}]")
            live["score"] = body["score_after"]
        elif kind == "StressChanged":
            if body["current_stress"] != live["stress"] + body["delta"]:
                self.add("T001", f"journal[{i}]")
            live["stress"] = body["current_stress"]
        elif kind == "SharedReferenceAdded":
            kept = live["refs"][body["kind"]]
            if body["content"] not in kept:
                kept.append(body["content"])
                del kept[:-10]
        elif kind == "DialogueLine":
            speaker = body["speaker"]
            if speaker != self.doc["player"]["stable_id"] and speaker not in self.npcs:
                self.add("J004", f"journal[{i}]")
            elif self.active is None or speaker not in (self.active[0], self.doc["player"]["stable_id"]):
                self.add("DIALOGUE", f"journal[{i}]")
        elif kind == "MonologueFired":
            if body["line_id"] not in self.content["lines"]:
                self.add("M002", f"journal[{i}].event.MonologueFired.line_id")
            elif not self.holds(body["line_id"]):
                self.add("M001", f"journal[{i}].event.MonologueFired")
            else:
                pending.append((i, body["line_id"]))
        else:
            self.add("F002", f"journal[{i}]")


def _differs(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or abs(a - b) > TOL
    return a != b


def _compare(replay: _Replay) -> None:
    doc = replay.doc
    knowledge = doc["player"]["knowledge"]
    for label, mine, theirs in (("facts", replay.facts, knowledge["facts"]),
                                ("entities", replay.entities, knowledge["entities"])):
        for key in sorted(set(mine) | set(theirs)):
            if key not in mine or key not in theirs:
                replay.add("J003", f"player.knowledge.{label}.{key}")
            elif mine[key] != theirs[key]:
                replay.add("J003", f"player.knowledge.{label}.{key}")
    for npc_id, live in replay.live.items():
        npc = replay.npcs[npc_id]
        rel = npc["relationship"]
        pairs = {"tolerance.current_stress": (live["stress"], npc["tolerance"]["current_stress"]),
                 "relationship.score": (live["score"], rel["score"]),
                 "relationship.total_interactions": (live["total"], rel["total_interactions"]),
                 "relationship.positive_interactions": (live["pos"], rel["positive_interactions"]),
                 "relationship.negative_interactions": (live["neg"], rel["negative_interactions"]),
                 "relationship.avg_message_length": (live["avg_len"], rel["avg_message_length"]),
                 "relationship.conversation_depth_avg": (live["avg_depth"], rel["conversation_depth_avg"]),
                 "relationship.first_interaction_tick": (live["first"], rel["first_interaction_tick"]),
                 "relationship.last_interaction_tick": (live["last"], rel["last_interaction_tick"]),
                 "relationship.shared_references": (live["refs"], rel["shared_references"]),
                 "walk_aways": (live["walk_aways"], npc["walk_aways"])}
        for path, (a, b) in pairs.items():
            if _differs(a, b):
                replay.add("J003", f"npcs.{npc_id}.{path}")


def _static(replay: _Replay) -> None:
    doc, content = replay.doc, replay.content
    knowledge, saved = doc["player"]["knowledge"], doc["saved_at_tick"]
    facts = knowledge["facts"]
    if list(facts) != sorted(facts, key=lambda k: k.encode("utf-8")):
        replay.add("K005", "player.knowledge.facts")
    for label, keyed in (("npcs", doc["npcs"]), ("player.knowledge.entities", knowledge["entities"])):
        if list(keyed) != sorted(keyed, key=int):
            replay.add("K005", label)
    numbers: dict[str, list[int]] = {}
    for fid, fact in facts.items():
        where = f"player.knowledge.facts.{fid}"
        if not FACT_ID.fullmatch(fid):
            replay.add("K001", where)
            continue
        if fact["acquired_tick"] > saved:
            replay.add("K004", where + ".acquired_tick")
        meta = (fact["metadata"] or {}).get("Interaction")
        if (meta is None) != (not fid.startswith("interaction.")):
            replay.add("K002", where)
            continue
        if meta is None:
            continue
        match = INTERACTION_ID.fullmatch(fid)
        if not match:
            replay.add("K003", where)
        else:
            numbers.setdefault(match.group(1), []).append(int(match.group(2)))
            if replay.npcs.get(meta["target_entity"], {}).get("slug") != match.group(1):
                replay.add("I007", where)
        state, ended = meta["interaction_state"], meta["ended_tick"]
        if (ended is None) != (state in IN_PROGRESS):
            replay.add("I002", where)
        if ended is not None and ended < meta["started_tick"]:
            replay.add("I003", where)
        if state in ("Confrontation", "ConflictAbandoned") and not meta["confrontation"] or \
                state in ("Active", "WalkedAway") and meta["confrontation"]:
            replay.add("I004", where)
        if fact["confidence"] != ("Direct" if state in IN_PROGRESS else "KnowsDetails"):
            replay.add("I008", where + ".confidence")
        if any(t not in content["topics"] for t in meta["topics"]):
            replay.add("I009", where)
        if any(t is not None and t > saved for t in (meta["started_tick"], ended)):
            replay.add("K004", where)
    for slug, found in numbers.items():
        if sorted(found) != list(range(1, len(found) + 1)):
            replay.add("I006", f"interactions of {slug}")
    if sum(1 for f in facts.values() if f["metadata"]
           and f["metadata"]["Interaction"]["interaction_state"] in IN_PROGRESS) > 1:
        replay.add("I005", "player.knowledge.facts")
    for key, entity in knowledge["entities"].items():
        if entity["last_seen_tick"] > saved:
            replay.add("K004", f"player.knowledge.entities.{key}.last_seen_tick")
    for key, npc in doc["npcs"].items():
        rel, tol = npc["relationship"], npc["interaction_tolerance"]
        if npc["slug"] not in content["npcs"]:
            replay.add("CONTENT", f"npcs.{key}.slug")
        if not 0.0 <= rel["score"] <= 100.0:
            replay.add("R001", f"npcs.{key}.relationship.score")
        for kind, refs in rel["shared_references"].items():
            if len(refs) > 10 or len(set(refs)) != len(refs):
                replay.add("R004", f"npcs.{key}.relationship.shared_references.{kind}")
        if rel["positive_interactions"] + rel["negative_interactions"] > rel["total_interactions"] \
                or rel["avg_message_length"] < 0 or rel["conversation_depth_avg"] < 0:
            replay.add("R005", f"npcs.{key}.relationship")
        if not -32768 <= npc["tolerance"]["current_stress"] <= 32767:
            replay.add("T001", f"npcs.{key}.tolerance.current_stress")
        if not 1 <= tol["walk_away_threshold"] <= 5 or not 0.1 <= tol["walk_away_penalty"] <= 0.5:
            replay.add("T002", f"npcs.{key}.interaction_tolerance")


def audit(doc: dict, content: dict) -> list[tuple[str, str]]:
    """Every finding of the audit, as ``(code, where)``, in discovery order."""
    replay = _Replay(doc, content)
    replay.run()
    _compare(replay)
    _static(replay)
    return replay.found
