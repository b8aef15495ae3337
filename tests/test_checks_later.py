"""The window shows a save once it is replayed and checks it after (issue 10): the
findings it ends with are those of checking first, in the same order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import FindingSink
from tests.support.savegen.generator import generate_save, inject_faults, write_save

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"


def _saves(tmp_path) -> list[Path]:
    """Every sample, a generated save with planted faults, and a save whose faults
    repeat past the per-code cap (the cap must fall on the same findings)."""
    faulty = generate_save(seed=8, events=3000)
    inject_faults(faulty)
    write_save(faulty, tmp_path / "faulty.json")
    doc = json.loads((SAMPLES / "evening.json").read_text())
    for entry in doc["journal"]:
        entry["tick"] = doc["saved_at_tick"] + 1  # J002 on every entry, J003 after
    (tmp_path / "late.json").write_text(json.dumps(doc))
    # K001 past the cap from the snapshot and from the journal both: which ones are
    # listed depends on the order the checks fed the sink.
    doc = json.loads((SAMPLES / "evening.json").read_text())
    facts = doc["player"]["knowledge"]["facts"]
    template = next(v for k, v in facts.items() if not k.startswith("interaction."))
    facts.update({f"Bad{k:02d}": dict(template) for k in range(60)})
    doc["player"]["knowledge"]["facts"] = dict(sorted(facts.items()))
    tick = doc["journal"][0]["tick"]
    learned = [{"tick": tick, "event": {"FactLearned": {"fact_id": f"Worse{k:02d}", "confidence": "KnowsOf", "source": "Heard"}}} for k in range(60)]
    doc["journal"] = learned + doc["journal"]
    (tmp_path / "k001.json").write_text(json.dumps(doc))
    return sorted(SAMPLES.glob("*.json")) + [tmp_path / "faulty.json", tmp_path / "late.json", tmp_path / "k001.json"]


def _checked_first(path: Path) -> list:
    """The findings of the order the checks ran in before issue 10: one sink, fed by
    reading, the snapshot check, the replay, the replay against the snapshot, content."""
    from narrative_debugger.models.content.loader import load_content
    from narrative_debugger.models.playthrough import _ordered
    from narrative_debugger.models.rules.checks import check_against_replay, check_content, check_snapshot
    from narrative_debugger.models.save.savefile import load_save
    from narrative_debugger.models.timeline.replay import replay

    save, content = load_save(path), load_content(CONTENT)
    sink = FindingSink()
    sink.extend(save.findings)
    check_snapshot(save, content, sink)
    result = replay(save, content, sink)
    check_against_replay(save, result.index, result.confrontation_seen, sink)
    check_content(content, [save], sink)
    return _ordered(content.findings + sink.close())


def test_checking_after_the_replay_gives_the_findings_of_checking_first(tmp_path, monkeypatch):
    import narrative_debugger.models.rules.findings as findings_module

    original = findings_module.FindingSink.__init__
    monkeypatch.setattr(findings_module.FindingSink, "__init__", lambda self, per_code_limit=40: original(self, per_code_limit))
    checked_late = 0
    for path in _saves(tmp_path):
        first = Playthrough.open(path, CONTENT)
        later = Playthrough.open(path, CONTENT, defer_checks=True)
        assert later.checks_pending and not first.checks_pending
        shown = list(later.findings)
        assert {f.code for f in shown} <= {f.code for f in first.findings}
        later.finish_checks()
        assert not later.checks_pending
        assert later.findings == first.findings == _checked_first(path), path.name
        assert later.save.document is None
        checked_late += len(first.findings) - len(shown)
        later.finish_checks()  # nothing left: the list stays
        assert later.findings == first.findings
    assert checked_late > 0  # some findings did come from the checks left for later


def test_merged_sinks_equal_one_sink_fed_in_turn():
    """Caps, counts and the note of each capped code (its count and last location)."""
    parts = [[("J002", f"a{k}") for k in range(7)] + [("K001", "a")], [("J002", f"b{k}") for k in range(5)], [], [("K001", f"c{k}") for k in range(9)]]
    one = FindingSink(per_code_limit=4)
    sinks = []
    for part in parts:
        sink = FindingSink(per_code_limit=4)
        for code, where in part:
            one.add(code, "m", where)
            sink.add(code, "m", where)
        sinks.append(sink)
    merged = FindingSink.merged(*sinks)
    assert merged.close() == one.close()
    assert merged.count("J002") == 12 and merged.count("K001") == 10
    notes = [f for f in merged.close() if "more" in f.message]
    assert [(f.code, f.location) for f in notes] == [("J002", "b4"), ("K001", "c8")]


@pytest.mark.parametrize("unreadable", [b"{", b"[]"])
def test_an_unreadable_save_has_nothing_left_to_check(tmp_path, unreadable):
    path = tmp_path / "bad.json"
    path.write_bytes(unreadable)
    play = Playthrough.open(path, CONTENT, defer_checks=True)
    assert not play.readable and not play.checks_pending and play.findings


def test_the_window_shows_the_replayed_save_then_its_whole_findings(qtbot, open_window, monkeypatch):
    """The loader hands the save over replayed, with its snapshot and content checks still
    running; once they end, every panel that shows findings has all of them, and the
    tick, the NPC and the journal's filter stay where the user put them."""
    from narrative_debugger.widgets.docks.journal import WITH_FINDINGS

    path = SAMPLES / "qa-faults.json"
    go = _held(monkeypatch, path.name)
    window = open_window(persist=False)
    window.open_save(path)
    qtbot.waitUntil(lambda: window.session.playthrough is not None, timeout=20000)
    play = window.session.playthrough
    assert play.checks_pending and window.loader.busy
    shown = len(play.findings)
    findings = window.docks["findings"].widget()
    journal = window.docks["journal"].widget()
    assert findings.model.rowCount() == shown
    assert "checking" in window.status_findings.text()
    # The user moves on while the checks run: a tick, an NPC, the journal's filter.
    npc = list(play.save.npcs)[-1]
    window.session.set_npc(npc)
    window.session.set_tick(play.first_tick)
    journal.kind_filter.setCurrentIndex(journal.kind_filter.findData(WITH_FINDINGS))
    before = journal.model.rowCount()
    window.loader.cancel()  # as Escape would: a save already shown is not cancelled
    go.set()
    whole = Playthrough.open(path, CONTENT).findings
    qtbot.waitUntil(lambda: not window.loader.busy and findings.model.rowCount() == len(whole), timeout=20000)
    assert window.session.playthrough is play and not play.checks_pending
    assert play.findings == whole and len(whole) > shown
    assert findings.model.rowCount() == len(whole)
    assert window.session.tick == play.first_tick and window.session.npc == npc
    assert journal.kind_filter.currentData() == WITH_FINDINGS
    assert journal.model.rowCount() == journal.model.finding_count() >= before
    lane = dict((label, ticks) for label, _, ticks in window.tickbar.track.lanes)
    assert sorted(lane["Finding"].tolist()) == window.session.event_ticks("finding")
    assert "checking" not in window.status_findings.text()
    errors = sum(f.severity.name == "ERROR" for f in whole)
    assert window.status_findings.text().startswith(f"{errors:,} error")
    window.close()


def _held(monkeypatch, label: str):
    """Hold the checks of the save named ``label`` (in the open's child process) until
    the returned event is set."""
    from narrative_debugger.app.workers import engine

    go = engine.context().Event()
    hold = engine.Hold(engine.context().Event(), go)
    monkeypatch.setitem(engine.HOLDS, "checks", lambda path: hold if path.name == label else None)
    return go


def _window(open_window, monkeypatch):
    from narrative_debugger.app.window import main_window

    boxes = []
    monkeypatch.setattr(main_window, "show_message", lambda *args, **kwargs: boxes.append(args))
    return open_window(persist=False), boxes


def _shown(qtbot, window, label: str):
    qtbot.waitUntil(lambda: window.session.playthrough is not None and window.session.playthrough.save.label == label, timeout=20000)
    return window.session.playthrough


def _assert_whole(qtbot, window, play, path):
    qtbot.waitUntil(lambda: not window.loader.busy and not play.checks_pending, timeout=20000)
    qtbot.waitUntil(lambda: window.docks["findings"].widget().model.rowCount() == len(play.findings), timeout=20000)
    assert window.session.playthrough is play
    assert play.findings == Playthrough.open(path, CONTENT).findings
    assert window.docks["findings"].widget().model.rowCount() == len(play.findings)
    assert "checking" not in window.status_findings.text()


def test_a_save_opened_while_another_is_checked_replaces_it_quietly(qtbot, open_window, monkeypatch, capfd):
    """The first save's checks end after the second save was asked for: the second
    save shows with its whole findings, and nothing is printed."""
    go = _held(monkeypatch, "qa-faults.json")
    window, _ = _window(open_window, monkeypatch)
    window.open_save(SAMPLES / "qa-faults.json")
    _shown(qtbot, window, "qa-faults.json")
    window.open_save(SAMPLES / "walkaway-spiral.json")
    second = _shown(qtbot, window, "walkaway-spiral.json")
    go.set()
    _assert_whole(qtbot, window, second, SAMPLES / "walkaway-spiral.json")
    assert "Traceback" not in capfd.readouterr().err
    window.close()


@pytest.mark.parametrize("then", ["unreadable save", "another save, cancelled"])
def test_a_shown_save_gets_its_whole_findings_when_the_next_open_fails(qtbot, open_window, monkeypatch, tmp_path, then):
    """New-user trial: opening an unreadable save (or one cancelled with Escape) while
    the shown save was being checked left it with its partial findings for good."""
    go = _held(monkeypatch, "qa-faults.json")
    window, boxes = _window(open_window, monkeypatch)
    path = SAMPLES / "qa-faults.json"
    window.open_save(path)
    first = _shown(qtbot, window, "qa-faults.json")
    if then == "unreadable save":
        bad = tmp_path / "cut.json"
        bad.write_bytes((SAMPLES / "evening.json").read_bytes()[:5000])
        window.open_save(bad)
        qtbot.waitUntil(lambda: bool(boxes), timeout=20000)
    else:
        window.open_save(SAMPLES / "walkaway-spiral.json")
        window.loader.cancel()  # Escape: the newer open stops, the shown save's checks go on
    assert window.session.playthrough is first and first.checks_pending
    go.set()
    _assert_whole(qtbot, window, first, path)
    window.close()


def test_the_selected_finding_stays_selected_when_the_findings_arrive(qtbot, open_window, monkeypatch):
    """New-user trial: the selection was lost, and F8 started over from the first row."""
    go = _held(monkeypatch, "qa-faults.json")
    window, _ = _window(open_window, monkeypatch)
    path = SAMPLES / "qa-faults.json"
    window.open_save(path)
    play = _shown(qtbot, window, "qa-faults.json")
    panel = window.docks["findings"].widget()
    assert panel.model.rowCount() >= 2
    panel.activate_row(1)
    kept = panel.view.currentIndex().data(panel.model.FINDING_ROLE)
    go.set()
    _assert_whole(qtbot, window, play, path)
    assert panel.view.currentIndex().data(panel.model.FINDING_ROLE) == kept
    after = panel.row_of(kept) + 1
    panel.step(True)
    assert panel.view.currentIndex().row() == after
    window.close()


def test_a_report_made_while_the_save_is_checked_shows_the_whole_findings(qtbot, open_window, monkeypatch, tmp_path):
    """New-user trial: the picture showed the partial findings, the summary the whole."""
    import threading

    from narrative_debugger.app.window.report import write_report

    go = _held(monkeypatch, "qa-faults.json")
    window, _ = _window(open_window, monkeypatch)
    path = SAMPLES / "qa-faults.json"
    window.open_save(path)
    play = _shown(qtbot, window, "qa-faults.json")
    assert play.checks_pending
    threading.Timer(0.3, go.set).start()
    _, md, summary = write_report(window, tmp_path)
    assert not play.checks_pending
    errors = sum(f.severity.name == "ERROR" for f in play.findings)
    assert window.status_findings.text().startswith(f"{errors:,} error") and "checking" not in window.status_findings.text()
    assert summary == md.read_text()
    window.close()


def test_a_clean_open_clears_the_word_on_the_save_before(qtbot, open_window, monkeypatch):
    """New-user trial: 'Opened X with 1 error finding' stayed up over a clean save."""
    window, _ = _window(open_window, monkeypatch)
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    assert window.statusBar().currentMessage().startswith("Opened qa-faults.json with")
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    assert not window.statusBar().currentMessage().startswith("Opened qa-faults.json")
    window.close()


@pytest.mark.parametrize("defer_checks", [False, True])
def test_a_capped_code_counts_every_finding_of_reading(tmp_path, defer_checks):
    """Reading's findings are merged with their counts: adding the save's closed list
    again counted its "more ... not listed" note as one finding, and a journal of
    30 000 bad entries (two F002 each) said "10001 in all"."""
    doc = json.loads((SAMPLES / "evening.json").read_text())
    doc["journal"] = [{"tick": "bad", "event": 7}] * 30_000
    path = tmp_path / "bad-journal.json"
    path.write_text(json.dumps(doc))
    play = Playthrough.open(path, CONTENT, defer_checks=defer_checks)
    play.finish_checks()
    f002 = [f for f in play.findings if f.code == "F002"]
    notes = [f for f in f002 if "not listed" in f.message]
    assert len(f002) == 10_001 and len(notes) == 1
    assert notes[0].message == "50000 more F002 findings not listed (60000 in all)"
