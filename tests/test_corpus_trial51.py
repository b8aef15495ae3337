"""Trial 51's findings on ``corpus``, ``coverage`` and ``query`` (issue 39): a nearest
miss is ranked by its failing clauses, then by how far they are from holding (1)."""

from __future__ import annotations

import json
from pathlib import Path

from narrative_debugger.models.content.monologue import FactPrerequisite, InteractionPrerequisite, MonologueLine, evaluate
from narrative_debugger.models.domain.types import KnowledgeConfidence
from tests.support.cli import run
from tests.support.savegen.generator import generate_save, write_save
from tests.support.content_lines import sample_content_plus
from tests.conftest import CONTENT


#: A line no playtest reaches: four hundred interactions with Kael.
FAR_LINE = """
- id: t51_far_010
  text: "Four hundred evenings with Kael."
  trigger: on_arrival
  prerequisites:
    interaction:
      target: "npc:kael-davan"
      min_count: 400
  tags: [test]
"""


class _Known:
    """A knowledge view with the given facts (id -> confidence) and interaction count."""

    def __init__(self, facts: dict, count: int) -> None:
        self._facts, self._count = facts, count

    def fact(self, fact_id):
        confidence = self._facts.get(fact_id)
        return None if confidence is None else type("Fact", (), {"confidence": confidence})()

    def count_interactions(self, slug, state=None) -> int:
        return self._count


def test_a_failing_clause_says_how_far_it_is_from_holding_in_its_own_units():
    line = MonologueLine("l", "", facts=(FactPrerequisite("a.b", KnowledgeConfidence.KnowsDetails),
                                         FactPrerequisite("c.d", KnowledgeConfidence.KnowsOf)),
                         interaction=InteractionPrerequisite("kael-davan", None, 400))
    # a.b not known: suspects, knows_of, knows_details (3 steps); c.d holds; 9 of 400 interactions.
    far = evaluate(line, _Known({"c.d": KnowledgeConfidence.Direct}, 9))
    assert (len(far.failing), far.shortfalls, far.distance) == (2, (3, 391), 394)
    near = evaluate(line, _Known({"a.b": KnowledgeConfidence.Suspects, "c.d": KnowledgeConfidence.KnowsOf}, 96))
    assert (near.shortfalls, near.distance) == ((2, 304), 306)
    held = evaluate(line, _Known({"a.b": KnowledgeConfidence.Direct, "c.d": KnowledgeConfidence.KnowsOf}, 400))
    assert (held.eligible, held.failing, held.shortfalls, held.distance) == (True, (), (), 0)


def _interactions(capsys, corpus: Path) -> dict[str, int]:
    code, out, err = run(capsys, "query", str(corpus), "SELECT save, conversations FROM npcs WHERE slug = 'kael-davan'", "--format", "json")
    assert code == 0, err
    return {row["save"]: row["conversations"] for row in json.loads(out)}


def test_the_nearest_miss_is_the_one_least_short_not_the_first_by_path(tmp_path, capsys):
    # Trial 51: with one failing clause each, "9 of 400" (a.json, first by path) won over
    # "96 of 400": the misses were ranked by the number of failing clauses alone.
    content = tmp_path / "content"
    sample_content_plus(content, FAR_LINE)
    plays = tmp_path / "plays"
    plays.mkdir()
    write_save(generate_save(seed=21, events=60, content_dir=CONTENT), plays / "a.json")
    write_save(generate_save(seed=22, events=900, content_dir=CONTENT), plays / "b.json")
    corpus = tmp_path / "c"
    assert run(capsys, "corpus", str(plays), "--content", str(content), "--out", str(corpus), "--no-prompts")[0] == 0
    had = _interactions(capsys, corpus)
    a, b = str(plays / "a.json"), str(plays / "b.json")
    assert had[a] < had[b] < 400, had
    code, out, err = run(capsys, "query", str(corpus), "SELECT save, failing_count, failing, distance FROM near_misses "
                         "WHERE line_id = 't51_far_010' ORDER BY save", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == [
        {"save": a, "failing_count": 1, "failing": [f"{had[a]} interaction(s) with kael-davan, needs 400"], "distance": 400 - had[a]},
        {"save": b, "failing_count": 1, "failing": [f"{had[b]} interaction(s) with kael-davan, needs 400"], "distance": 400 - had[b]}]
    code, out, err = run(capsys, "coverage", str(corpus), "--format", "json")
    assert code == 0, err
    miss = json.loads(out)["lines"]["t51_far_010"]["nearest_miss"]
    assert (miss["save"], miss["distance"]) == (b, 400 - had[b])
    assert miss["failing"] == [f"{had[b]} interaction(s) with kael-davan, needs 400"]
