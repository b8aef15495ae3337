"""The NPCs dock's "In progress" column when two conversations are in progress at once
(issue 35, finding I005): the timeline tracks a single active interaction, so when
lera-sessik's conversation started while kael-davan's was still going, the dock showed
Lera "Active" and nothing for Kael, although ``state`` and the Interactions view showed
interaction.kael-davan_001 Active. Each NPC now shows its own, read from the
interaction facts the Interactions view lists."""

from __future__ import annotations

import json
from pathlib import Path

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.docks.npc_list import NpcList, NpcTableModel
from narrative_debugger.widgets.session import Session

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
LERA, KAEL = 9, 17


def _two_at_once(tmp_path) -> Playthrough:
    """walkaway-spiral.json with lera-sessik's conversation starting at tick 230, while
    kael-davan's (started 217) lasts until 734."""
    doc = json.loads((SAMPLES / "walkaway-spiral.json").read_text(encoding="utf-8"))
    started = {"tick": 230, "event": {"InteractionStarted": {"target": LERA, "player_initiated": True, "location": "tidewater-inn"}}}
    doc["journal"].insert(2, started)
    path = tmp_path / "i005.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return Playthrough.open(path, SAMPLES / "content")


def _facts_in_progress(state, slug: str) -> list[str]:
    """What the Interactions view lists in progress for ``slug``: its interaction facts."""
    facts = state.knowledge.facts
    return [fid for fid in facts if fid.startswith(f"interaction.{slug}_")
            and facts[fid].interaction is not None and facts[fid].interaction.interaction_state.in_progress]


def test_each_npc_shows_its_own_conversation_in_progress(qtbot, tmp_path):
    play = _two_at_once(tmp_path)
    assert any(f.code == "I005" and f.tick == 230 for f in play.findings)
    session = Session()
    session.load(play, tick=217)
    widget = NpcList(session)
    qtbot.addWidget(widget)
    widget.resize(900, 400)
    widget.show()
    qtbot.waitExposed(widget)
    model = widget.model

    def shown(sid: int) -> str:
        return model.index(model.row_of(sid), NpcTableModel.INTERACTION).data()

    expected = {217: ("", "Active"), 230: ("Active", "Active"), 734: ("Active", ""), 1046: ("Active", "")}
    for tick in (217, 230, 734, 230, 1046, 217):  # steps both ways: the changed rows are signalled
        session.set_tick(tick)
        state = session.state
        assert (shown(LERA), shown(KAEL)) == expected[tick], tick
        for sid, slug in ((LERA, "lera-sessik"), (KAEL, "kael-davan")):
            listed = _facts_in_progress(state, slug)
            assert (shown(sid) != "") == bool(listed), (tick, slug)
            found = state.in_progress(sid)
            assert (found[0] if found else None) == (listed[-1] if listed else None)
    session.set_tick(230)
    assert session.state.in_progress(KAEL)[0] == "interaction.kael-davan_001"
    assert session.state.in_progress(LERA)[0] == "interaction.lera-sessik_001"
    # the single interaction the replay tracks is Lera's: the dock used to show only it
    assert session.state.knowledge.active_fact_id() == "interaction.lera-sessik_001"
