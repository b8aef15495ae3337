"""Findings that landed in the wrong place (issue 35): F002 in a save that opens landed
nowhere, I003 at a tick before its interaction existed, I005 on the conversation already in
progress instead of the one that started while it was. Each lands on its culprit now: the
pure ``landing`` says where, and a double-click in the window shows it there.
"""

from __future__ import annotations

import copy
import json

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.catalogue import RULES
from narrative_debugger.widgets.landing import landing
from narrative_debugger.widgets.docks.snapshot import snapshot_rows
from tests.test_check_codes import BASE, CONTENT_FILES, ev, fact, meta
from tests.test_culprits import double_click_each


def _kael_and_sera(d):
    """Two NPCs; kael-davan's second conversation starts at 165 and is still in progress
    when sera-venn's first starts at 166 (I005 on the entry at 166)."""
    d["npcs"]["9"] = copy.deepcopy(d["npcs"]["17"]) | {"slug": "sera-venn"}
    d["npcs"] = {"9": d["npcs"]["9"], "17": d["npcs"]["17"]}
    d["journal"].append(ev(165, "InteractionStarted", target=17, player_initiated=True, location="dock-ward"))
    d["journal"].append(ev(166, "InteractionStarted", target=9, player_initiated=True, location="dock-ward"))


def _content(tmp_path):
    root = tmp_path / "content"
    for rel, text in CONTENT_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _open(tmp_path, mutate) -> tuple[Playthrough, object]:
    doc = copy.deepcopy(BASE)
    mutate(doc)
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc))
    return Playthrough.open(path, _content(tmp_path)), path


def _only(play, code):
    found = [f for f in play.findings if f.code == code]
    assert len(found) == 1, play.findings
    return found[0]


def test_i003_lands_at_the_started_tick_where_the_interaction_exists(tmp_path):
    play, _ = _open(tmp_path, lambda d: meta(d).update(ended_tick=100))  # started 120
    f = _only(play, "I003")
    land = landing(play, f)
    assert (f.tick, land.tick) == (120, 120)
    assert land.fact == "interaction.kael-davan_001" and land.docks == ("snapshot",) and land.view == "interactions"
    assert "interaction.kael-davan_001" in play.state_at(land.tick).knowledge.facts
    assert "interaction.kael-davan_001" not in play.state_at(100).knowledge.facts  # the tick it landed at before
    assert "at the interaction's started_tick" in RULES["I003"].lands


def test_i005_in_the_journal_lands_on_the_conversation_that_started_second(tmp_path):
    play, _ = _open(tmp_path, _kael_and_sera)
    f = _only(play, "I005")
    land = landing(play, f)
    assert f.target.fact_id == land.fact == "interaction.sera-venn_001"
    assert (land.tick, land.npc, land.selection) == (166, 9, ("journal", 5))
    shown = play.state_at(land.tick).knowledge.facts[land.fact].interaction
    assert shown.interaction_state.in_progress and shown.started_tick == 166
    assert "interaction.sera-venn_001 starts while interaction.kael-davan_002" in f.message


def test_i005_in_the_snapshot_lands_on_the_later_started_conversation(tmp_path):
    def two_in_progress(d):
        facts = d["player"]["knowledge"]["facts"]
        for fid, started in (("interaction.kael-davan_002", 168), ("interaction.kael-davan_003", 166)):
            f = copy.deepcopy(fact(d))
            f["metadata"]["Interaction"].update(interaction_state="Active", ended_tick=None, started_tick=started)
            f.update(confidence="Direct", acquired_tick=started)
            facts[fid] = f

    play, _ = _open(tmp_path, two_in_progress)
    f = next(f for f in play.findings if f.code == "I005")
    assert landing(play, f).fact == f.target.fact_id == "interaction.kael-davan_002"  # started 168, after _003's 166


@pytest.mark.parametrize("mutate, path, kind", [
    (lambda d: d["npcs"]["17"]["tolerance"].update(threshold="x"), "npcs.17.tolerance.threshold", "npc"),
    (lambda d: fact(d).update(confidence="Sure"), "player.knowledge.facts.interaction.kael-davan_001.confidence", "interaction"),
    (lambda d: d.pop("world_seed"), "world_seed", "file"),
    (lambda d: d["story"].update(authors_note=7), "story.authors_note", "file"),
])
def test_f002_in_a_save_that_opens_lands_on_its_json_path(tmp_path, mutate, path, kind):
    play, _ = _open(tmp_path, mutate)
    assert play.readable
    f = _only(play, "F002")
    assert f.location == path and f.target.kind == kind and f.target.snapshot
    land = landing(play, f)
    assert land.docks == ("snapshot",) and land.tick == play.save.saved_at_tick
    row = next(r for r in snapshot_rows(play) if r.path == path)
    assert row.codes == ["F002"] and row.saved.startswith("unreadable: ") and not row.differs


def test_f002_in_the_journal_still_lands_on_its_entry(tmp_path):
    play, _ = _open(tmp_path, lambda d: d["journal"][2]["event"]["InteractionWalkedAway"].update(target=True))
    f = next(f for f in play.findings if f.code == "F002")
    assert landing(play, f).selection == ("journal", 2)


def test_f002_rule_text_says_where_it_lands_when_the_save_opens():
    lands = RULES["F002"].lands
    assert "Snapshot dock" in lands and "JSON path" in lands and "Journal dock" in lands


pytestmark = pytest.mark.window(save=None, size=(1440, 900), persist=False)


@pytest.mark.parametrize("mutate, code", [
    (lambda d: meta(d).update(ended_tick=100), "I003"),
    (_kael_and_sera, "I005"),
    (lambda d: d["npcs"]["17"]["tolerance"].update(threshold="x"), "F002"),
    (lambda d: d.pop("world_seed"), "F002"),
])
def test_double_click_shows_the_culprit_in_the_window(qtbot, window, tmp_path, mutate, code):
    _, path = _open(tmp_path, mutate)
    window.open_save(path, tmp_path / "content", wait=True)
    results = double_click_each(qtbot, window, {code})
    assert results and not {k: v for k, v in results.items() if v}
    land = landing(window.session.playthrough, next(f for f in window.session.playthrough.findings if f.code == code))
    assert land.docks  # never "lands nowhere"
    if land.fact is not None and land.view == "interactions":
        view = window.views["interactions"]
        row = view.table.currentIndex().row()
        assert view.model.fact_id(row) == land.fact
        assert code != "I005" or view.model.meta(row).interaction_state.in_progress
