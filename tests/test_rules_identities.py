"""I012: two NPCs with one slug, or the player with an NPC's StableId (trial 47: no
finding; ``state`` showed one of the two NPCs and ``why`` the other)."""

from __future__ import annotations

import copy
import json

from narrative_debugger.app.cli.main import main
from tests.conftest import CONTENT, SAMPLES

SPIRAL = SAMPLES / "walkaway-spiral.json"


def _check(tmp_path, capsys, change) -> tuple[int, list[dict]]:
    doc = json.loads(SPIRAL.read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / "save.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = main(["check", str(path), "--content", str(CONTENT), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["files"][0]["findings"]
    return code, [f for f in findings if f["code"] == "I012"]


def test_two_npcs_with_one_slug_is_an_error_on_the_later(tmp_path, capsys):
    def twin(doc):
        doc["npcs"]["99"] = copy.deepcopy(doc["npcs"]["17"])
    code, found = _check(tmp_path, capsys, twin)
    assert code == 1 and len(found) == 1
    assert found[0]["location"] == "npcs.99.slug" and found[0]["severity"] == "error"
    assert found[0]["message"] == ("NPCs 17 and 99 both have the slug 'kael-davan': their interactions and every lookup by "
                                   "slug cannot tell them apart")


def test_a_player_with_an_npcs_stable_id_is_an_error(tmp_path, capsys):
    def collide(doc):
        doc["player"]["stable_id"] = 17
    code, found = _check(tmp_path, capsys, collide)
    assert code == 1 and [f["location"] for f in found] == ["player.stable_id"]
    assert "the player's stable_id 17 is also NPC kael-davan's" in found[0]["message"]


def test_the_sample_saves_have_none(capsys):
    for save in sorted(SAMPLES.glob("*.json")):
        main(["check", str(save), "--format", "json"])
        findings = json.loads(capsys.readouterr().out)["files"][0]["findings"]
        assert not [f for f in findings if f["code"] == "I012"], save.name
