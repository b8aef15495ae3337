"""Tools › What if… and the Journal's "What if… edit this entry" end to end (pytest-qt,
offscreen; issue 38): the what-if runs off the GUI thread and shows as a comparison
(A = as recorded, B = what if) that agrees with the ``whatif`` command's engine."""

from __future__ import annotations

import json
import multiprocessing

import pytest
from narrative_debugger.app.workers import engine
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.whatif.patch import split_edits
from narrative_debugger.models.whatif.run import what_if
from narrative_debugger.widgets.docks.whatif import OUTCOME_TAB, show_value
from narrative_debugger.widgets.kit.entry_edit import EntryEditDialog
from PySide6.QtCore import Qt

from tests.conftest import SAMPLES

pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown

EVENING = SAMPLES / "evening.json"


def _applied(qtbot, window, action) -> None:
    """Do ``action`` and wait for the what-if it starts to show as the session's comparison."""
    c = window.whatif
    with qtbot.waitSignal(window.session.comparisonChanged, timeout=120_000):
        action()
    assert c.result is not None and window.session.comparison is c.result.comparison


def test_panel_shows_the_what_ifs_progress_in_percent(qtbot, window):
    panel = window.panels["whatif"][0]
    window.whatif.open_action.trigger()
    values = []
    panel.progress.valueChanged.connect(values.append)
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.apply_button, Qt.LeftButton))
    assert len(values) > 5 and values == sorted(values) and max(values) >= 95
    assert not panel.progress.isVisible()  # the result replaced it
    panel.show_progress(0.424, "replaying with the edits")
    assert panel.message.text() == "Replaying with the edits… 42 %" and panel.progress.value() == 42


def test_panel_sentiment_weight_matches_the_command(qtbot, window):
    panel = window.panels["whatif"][0]
    dock = window.docks["whatif"]
    assert dock.isHidden()  # hidden until asked
    window.whatif.open_action.trigger()
    assert dock.isVisible()
    row = panel.row_of("relationship.sentiment_weight")
    assert row >= 0 and panel.model.index(row, 1).data() == "0.5"
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.apply_button, Qt.LeftButton))
    c = window.session.comparison
    cli = what_if(EVENING, None, [], DEFAULT_TUNING.with_value("relationship.sentiment_weight", 0.25),
                  [("relationship.sentiment_weight", 0.25)])
    # One engine: the same B end states and end levels as the command's.
    assert {slug: (d.b.score, d.b.level) for slug, d in c.npcs.items()} == {slug: (d.b.score, d.b.level) for slug, d in cli.comparison.npcs.items()}
    assert window.whatif.result.end_levels == cli.end_levels == {"mira-holt": {"a": "Acquaintance", "b": "Stranger"}}
    assert [e for e in window.whatif.edits] == [("relationship.sentiment_weight", 0.25)]
    # The Differences dock lists them; the panel says what changed.
    diffs = window.panels["differences"][0]
    assert diffs.model.rowCount() == len(c.differences()) > 0 and window.docks["differences"].isVisible()
    assert "differs from the recorded run" in panel.message.text()
    assert "mira-holt Acquaintance → Stranger" in panel.outcome.toPlainText()
    assert panel.edits.item(0).text() == "relationship.sentiment_weight = 0.25"
    # Revert: the recorded run alone.
    with qtbot.waitSignal(window.session.comparisonChanged):
        qtbot.mouseClick(panel.revert_button, Qt.LeftButton)
    assert window.session.comparison is None and window.whatif.edits == []
    assert not panel.undo_button.isEnabled()


def test_undo_removes_the_last_edit(qtbot, window):
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, panel.apply)
    panel.set_value("relationship.base", "0.3")
    _applied(qtbot, window, panel.apply)
    assert window.whatif.edits == [("relationship.sentiment_weight", 0.25), ("relationship.base", 0.3)]
    both = window.session.comparison
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.undo_button, Qt.LeftButton))
    assert window.whatif.edits == [("relationship.sentiment_weight", 0.25)]
    one = window.session.comparison
    assert one is not both
    assert one.npcs["mira-holt"].b.score != both.npcs["mira-holt"].b.score
    with qtbot.waitSignal(window.session.comparisonChanged):
        panel.undo_button.click()  # the last edit: back to the recorded run
    assert window.session.comparison is None and window.whatif.edits == []


@pytest.mark.parametrize("name, text, words", [
    ("relationship.length_divisor", "0", "out of range"),
    ("relationship.base", "x", "expected a number"),
])
def test_bad_value_is_a_message_in_the_panel(qtbot, window, name, text, words):
    panel = window.panels["whatif"][0]
    panel.set_value(name, text)
    panel.apply()
    assert words in panel.message.text() and name in panel.message.text()
    assert window.session.comparison is None and window.whatif.edits == [] and not window.whatif.busy


def test_journal_entry_edit_first_differs_at_its_tick(qtbot, window):
    journal = window.panels["journal"][0]
    entry = 62  # lera-sessik's RelationshipInteraction at tick 4520 (tests/test_whatif.py)
    journal.select_entry(entry)
    assert journal.whatif_action in journal.view.actions()
    journal.view.setCurrentIndex(journal.model.index(journal.model.row_of(entry), 0))
    journal.whatif_action.trigger()
    dialogs = journal.findChildren(EntryEditDialog)
    assert len(dialogs) == 1 and dialogs[0].isVisible()
    dialog = dialogs[0]
    assert dialog.index == entry
    assert dialog.field.currentText() == "sentiment" and dialog.edit.text() == "0.69"
    dialog.edit.setText("-0.5")
    _applied(qtbot, window, dialog.accept)
    pointer = f"/journal/{entry}/event/RelationshipInteraction/sentiment"
    assert window.whatif.edits == [(pointer, -0.5)]
    c = window.session.comparison
    assert c.npcs["lera-sessik"].score_first_differs_tick == 4520
    assert [slug for slug, d in c.npcs.items() if d.differs] == ["lera-sessik"]
    cli = what_if(EVENING, None, [{"op": "replace", "path": pointer, "value": -0.5}])
    assert c.npcs["lera-sessik"].b.score == cli.comparison.npcs["lera-sessik"].b.score
    assert "lera-sessik" in window.panels["whatif"][0].outcome.toPlainText()  # its prompts need regenerating
    assert json.loads(EVENING.read_text(encoding="utf-8"))["journal"][entry]["event"]["RelationshipInteraction"]["sentiment"] == 0.69


def test_stop_comparing_ends_the_what_if(qtbot, window):
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, panel.apply)
    window.compare.stop()
    assert window.session.comparison is None and window.whatif.edits == [] and window.whatif.result is None


def test_keyboard_answers_the_sentiment_weight_question(qtbot, window):
    """Ctrl+Shift+W, type 0.25, Ctrl+Return: the panel opens with the keyboard in the
    sentiment weight's What if cell (issue 38: at most 4 actions)."""
    from PySide6.QtWidgets import QApplication

    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    qtbot.keyClick(window, Qt.Key_W, Qt.ControlModifier | Qt.ShiftModifier)
    panel = window.panels["whatif"][0]
    # The cell's editor is open, the keyboard in it (trial 49: not when the panel was in front already).
    qtbot.waitUntil(lambda: window.docks["whatif"].isVisible() and panel.table.isAncestorOf(QApplication.focusWidget()))
    assert panel.model.index(panel.table.currentIndex().row(), 0).data() == "relationship.sentiment_weight"
    qtbot.keyClicks(QApplication.focusWidget(), "0.25")

    def apply() -> None:
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Return, Qt.ControlModifier)
    _applied(qtbot, window, apply)
    assert window.whatif.edits == [("relationship.sentiment_weight", 0.25)]


def test_enter_in_the_entry_dialog_replays(qtbot, window):
    journal = window.panels["journal"][0]
    dialog = journal.edit_entry(62)
    assert dialog.edit.hasSelectedText() and dialog.edit.selectedText() == "0.69"  # typing replaces it
    qtbot.keyClicks(dialog.edit, "0.9")
    _applied(qtbot, window, lambda: qtbot.keyClick(dialog.edit, Qt.Key_Return))
    assert window.whatif.edits == [("/journal/62/event/RelationshipInteraction/sentiment", 0.9)]


def test_panel_lists_what_would_not_happen(qtbot, window):
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    panel = window.panels["whatif"][0]
    panel.set_value("npc.kael-davan.walk_away_threshold", "3")  # the save's NPCs are listed too
    _applied(qtbot, window, panel.apply)
    text = panel.outcome.toPlainText()
    # As the command finds (tests/test_whatif.py): the penalties of walk-aways 2 and 3.
    assert "Would not have happened (2; lines and walk-aways kept in B as recorded, with what follows; penalties not applied in B):" in text
    assert "tick 7,652 #133 WalkAwayPenalty" in text and "tick 8,969 #152 WalkAwayPenalty" in text


@pytest.mark.parametrize("value, words", [
    ('"kind"', "operation 0 (replace /journal/62/event/RelationshipInteraction/sentiment) makes the save invalid: F002"),
    # New-user trial, stop 44: the Journal's edit took sentiment 7 and replayed it.
    ("7", "operation 0 (replace /journal/62/event/RelationshipInteraction/sentiment): sentiment 7 at journal[62] is outside -1..1"),
])
def test_bad_entry_value_is_a_message_naming_the_operation(qtbot, window, value, words):
    # New-user trial, stop 45: the dialog closed, and the message went to the What if
    # panel, scrolled away. The dialog stays open with it, to correct the value.
    journal = window.panels["journal"][0]
    dialog = journal.edit_entry(62)
    dialog.edit.setText(value)
    with qtbot.assertNotEmitted(journal.whatIfRequested):
        dialog.accept()
    assert dialog.isVisible() and words in dialog.error.text()
    dialog.edit.setText("0.5")
    with qtbot.waitSignal(journal.whatIfRequested) as sent:
        dialog.accept()
    assert sent.args == ["/journal/62/event/RelationshipInteraction/sentiment", 0.5] and not dialog.isVisible()
    window.whatif.wait(120)
    qtbot.waitUntil(lambda: window.session.comparison is not None)


def _retarget_entry_62(qtbot, window, target: str) -> None:
    """The Journal's "What if… edit this entry" on journal[62]: its target set to ``target``."""
    journal = window.panels["journal"][0]
    dialog = journal.edit_entry(62)
    dialog.field.setCurrentText("target")
    dialog.edit.setText(target)
    with qtbot.waitSignal(journal.whatIfRequested):
        dialog.accept()


def test_an_edit_the_replay_refuses_is_in_sight(qtbot, window):
    """What only the replay finds (an entry about no NPC: I010) is refused in the What if
    panel's message, brought to the front, and in the status bar."""
    _retarget_entry_62(qtbot, window, "99")
    panel = window.panels["whatif"][0]
    words = "operation 0 (replace /journal/62/event/RelationshipInteraction/target) makes the save invalid: I010"
    qtbot.waitUntil(lambda: not window.whatif.busy and words in panel.message.text(), timeout=60000)
    assert window.session.comparison is None and window.whatif.edits == []
    assert panel.message.isVisibleTo(window) and not window.docks["whatif"].visibleRegion().isEmpty()
    assert window.statusBar().currentMessage().startswith("What if: " + words)


def test_a_refused_first_edit_leaves_nothing_to_undo(qtbot, window):
    """New-user trial (N3): a Journal edit the replay refuses (target 12345: I010) with no
    what-if in force left Undo and Revert enabled, and Undo did nothing. They are enabled
    only while there is something to undo or revert: a run, or an edit in force."""
    panel = window.panels["whatif"][0]
    assert not panel.undo_button.isEnabled() and not panel.revert_button.isEnabled()
    _retarget_entry_62(qtbot, window, "12345")
    assert panel.undo_button.isEnabled() and panel.revert_button.isEnabled()  # the run can be stopped
    qtbot.waitUntil(lambda: not window.whatif.busy and "I010" in panel.message.text(), timeout=60000)
    assert window.whatif.edits == [] and window.session.comparison is None
    assert not panel.undo_button.isEnabled() and not panel.revert_button.isEnabled()
    # With an edit in force, a refused one leaves them enabled: the edit in force can go.
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.25)]))
    window.whatif.add_edits([("/journal/62/event/RelationshipInteraction/target", 12345)])
    qtbot.waitUntil(lambda: not window.whatif.busy and "I010" in panel.message.text(), timeout=60000)
    assert window.whatif.edits == [("relationship.sentiment_weight", 0.25)]
    assert panel.undo_button.isEnabled() and panel.revert_button.isEnabled()


def test_explain_dock_explains_either_side(qtbot, window):
    """Issue 38: in a what-if the Explain dock's A | B buttons explain the recorded run
    or the what-if; B's steps are the tuned formula's (0.25), A's the seed's (0.5)."""
    view = window.panels["explain"][0]
    assert not view.side_b.isVisibleTo(view)  # no comparison: no sides
    panel = window.panels["whatif"][0]
    window.whatif.open_action.trigger()
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.apply_button, Qt.LeftButton))
    assert view.side_b.isVisibleTo(view) and view.side == "a"
    s = window.session
    s.explain("npc:kael-davan.score")
    qtbot.waitUntil(lambda: view.explanation is not None and view.explanation.target == "npc:kael-davan.score", timeout=20000)
    assert "×0.5 + " in view.explanation.steps[-1].detail and view.title.text().startswith("A: ")
    first = view.explanation
    qtbot.mouseClick(view.side_b, Qt.LeftButton)
    qtbot.waitUntil(lambda: view.explanation is not first, timeout=20000)
    b = s.comparison.b
    kael = b.save.npc_by_slug("kael-davan").stable_id
    exp = view.explanation
    assert view.side == "b" and view.title.text().startswith("B: ")
    assert "×0.25 + " in exp.steps[-1].detail and "tuned" in exp.steps[-1].detail
    assert exp.value == pytest.approx(b.state_at(exp.tick).npc(kael).relationship.score)
    # Leaving the what-if explains A again and hides the sides.
    with qtbot.waitSignal(s.comparisonChanged):
        qtbot.mouseClick(panel.revert_button, Qt.LeftButton)
    assert view.side == "a" and not view.side_b.isVisibleTo(view)


def test_panel_lists_every_npc_of_a_crowd_and_applies_the_last(tmp_path, open_window):
    """A save of 300 NPCs: the panel lists each NPC's values (a model, no item per cell:
    3 000 NPCs took ~0.5 s of the GUI thread per open as items; bench_core --ci --npcs 3000),
    and a value typed in the last row is what Apply sends."""
    from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, tuning_values
    from narrative_debugger.models.save.savefile import load_save
    from tests.support.savegen.crowd import crowd_content
    from tests.support.savegen.generator import generate_save, write_save

    content = crowd_content(300, tmp_path / "content")
    save = tmp_path / "crowd.json"
    write_save(generate_save(seed=5, events=600, content_dir=content), save)
    window = open_window(save, content=content)
    panel = window.panels["whatif"][0]
    npcs = list(load_save(save).npcs.values())
    rows = tuning_values(DEFAULT_TUNING, npcs, window.session.playthrough.content.prompt.context_token_budget)
    assert len(npcs) == 300 and panel.model.rowCount() == len(rows)
    assert all(panel.row_of(name) >= 0 for name, _ in rows)
    assert {name.split(".")[1] for name, _ in rows if name.startswith("npc.")} == {n.slug for n in npcs}
    last_name, last_value = rows[-1]
    assert panel.row_of(last_name) == len(rows) - 1
    assert panel.model.index(len(rows) - 1, 1).data() == show_value(last_value)
    panel.set_value(last_name, "3")
    sent = []
    panel.applyRequested.connect(sent.append)
    panel.apply()
    assert sent == [[(last_name, 3)]]
    assert panel.pending() == []  # the cells are emptied once applied


def test_revert_and_stop_comparing_clear_the_last_outcome(qtbot, window):
    """The levels reached and the prompts to regenerate belong to the what-if shown:
    after Revert (or File › Stop comparing) the panel listed them still, under
    "Reverted: the recorded run."."""
    panel = window.panels["whatif"][0]
    window.whatif.open_action.trigger()
    for leave in (lambda: qtbot.mouseClick(panel.revert_button, Qt.LeftButton), window.compare.stop):
        panel.set_value("relationship.sentiment_weight", "0.25")
        _applied(qtbot, window, panel.apply)
        assert "mira-holt Acquaintance → Stranger" in panel.outcome.toPlainText()
        with qtbot.waitSignal(window.session.comparisonChanged):
            leave()
        assert window.session.comparison is None
        assert panel.outcome.toPlainText() == "" and panel.message.text() in (
            "Reverted: the recorded run.", "Not comparing any more: the edits were dropped.")


def test_one_difference_is_said_in_the_singular(qtbot, window):
    # Lera's score is clamped at 100 either way: a kinder last conversation differs in
    # its journal entry alone ("in 1 ways", "1 differences" before).
    _applied(qtbot, window, lambda: window.whatif.add_edits([("/journal/3794/event/RelationshipInteraction/sentiment", 0.9)]))
    panel = window.panels["whatif"][0]
    assert len(window.session.comparison.differences()) == 1
    assert panel.message.text().startswith("B differs from the recorded run in 1 way, the first at tick 301,528")
    assert ": 1 difference. Double-click" in window.panels["differences"][0].heading.text()
    # The Outcome says so, never its placeholder (new-user trial, N2).
    assert panel.outcome.toPlainText().splitlines() == [
        "No level, score, prompt or decision changes; B differs in (see Differences):",
        "  journals part at entry 3794: A tick 301528 RelationshipInteraction / B tick 301528 RelationshipInteraction: "
        "sentiment 0.46 → 0.9, delta 0.826 → 1.0"]


@pytest.mark.parametrize("size", [(1440, 900), (1040, 700)])
def test_the_panel_opens_without_pushing_the_views_under_the_docks(qtbot, open_window, size):
    """New-user trial at 1040x700: the What if dock opened on the right, where the NPC
    dock's and the views' minimum widths already filled the window, so the centre slid
    under the NPC dock and was cut at the panel (Timelines' cursor, "Prompt preview").
    It is tabbed with the Monologues now; its rows scroll when the tab is short, Apply in sight."""
    window = open_window(EVENING, size=size)
    before = window.centralWidget().geometry()
    window.whatif.open_action.trigger()
    dock, panel = window.docks["whatif"], window.panels["whatif"][0]
    qtbot.waitUntil(lambda: dock.isVisible() and not dock.visibleRegion().isEmpty())
    assert dock in window.tabifiedDockWidgets(window.docks["monologues"])
    centre = window.centralWidget().geometry()
    assert centre == before
    for other in window.docks.values():
        if other.isVisible() and not other.visibleRegion().isEmpty():
            assert not centre.intersects(other.geometry()), other.objectName()
    for name, view in window.views.items():
        assert view.parentWidget().width() >= view.minimumWidth(), name
    # Apply is in the tab's sight; a value typed there is applied as before.
    top = panel.apply_button.mapTo(dock, panel.apply_button.rect().bottomLeft()).y()
    assert 0 < top < dock.height()
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.apply_button, Qt.LeftButton))
    # With an edit in force (its list under the values), at 1040x700 too: three values in
    # sight at least (the trial's showed one), nothing laid over another, nothing cut.
    panel.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: panel.edits.isVisible() and panel.height() >= panel.minimumHeight()
                    and panel.table.viewport().height() >= 3 * panel.table.verticalHeader().defaultSectionSize())
    shown = [panel.message, panel.tabs.tabBar(), panel.table, panel.edits]
    places = [w.mapTo(panel, w.rect().topLeft()).y() for w in shown]
    bottoms = [w.mapTo(panel, w.rect().bottomLeft()).y() for w in shown]
    assert all(bottoms[k] < places[k + 1] for k in range(len(shown) - 1)), (places, bottoms)
    assert bottoms[-1] < panel.height()
    assert panel.message.height() >= panel.message.heightForWidth(panel.message.width())


def test_an_entry_edit_brings_the_panel_in_front_of_the_monologues(qtbot, window):
    window.docks["monologues"].raise_()
    _applied(qtbot, window, lambda: window.panels["journal"][0].whatIfRequested.emit(
        "/journal/3768/event/RelationshipInteraction/sentiment", 0.8))
    dock = window.docks["whatif"]
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    assert window.docks["monologues"].visibleRegion().isEmpty()


def test_a_refused_value_stays_in_its_cell_to_be_corrected(qtbot, window):
    # Apply emptied the column before the value was checked: "abc" was refused with a
    # message and gone from its cell.
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "abc")
    panel.apply()
    # The panel's message names the value as the panel does, not by a command-line flag (trial, stop 44).
    assert panel.message.text() == "relationship.sentiment_weight: expected a number, found \"abc\""
    assert panel.pending() == [("relationship.sentiment_weight", "abc")] and window.whatif.edits == []
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, panel.apply)
    assert panel.pending() == [] and window.whatif.edits == [("relationship.sentiment_weight", 0.25)]


def test_a_refusal_goes_once_its_cell_no_longer_holds_the_value(qtbot, window):
    """New-user trial (N4): `abc` typed in a What if cell was refused, the cell emptied,
    and the message stayed until the next Apply. It goes once the cell holds another
    value (or none), and the line says again what it said before; a change of another
    cell leaves it."""
    from narrative_debugger.widgets.docks.whatif import HINT

    panel = window.panels["whatif"][0]
    refused = 'relationship.length_cap: expected a number, found "abc"'
    panel.set_value("relationship.length_cap", "abc")
    panel.apply()
    assert panel.message.text() == refused
    panel.set_value("relationship.base", "0.2")  # another cell: still refused
    assert panel.message.text() == refused
    panel.set_value("relationship.length_cap", "")
    assert panel.message.text() == HINT
    # Refused before it is sent (a number out of range for any value), over a what-if shown.
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.25)]))
    shown = panel.message.text()
    assert shown.startswith("B differs from the recorded run")
    panel.set_value("relationship.length_divisor", "1e999")
    panel.apply()
    assert panel.message.text() == "relationship.length_divisor: 1e999 is out of range: not a finite number"
    panel.set_value("relationship.length_divisor", "1e99")  # another value, not applied yet
    assert panel.message.text() == shown
    # A refusal about no cell (a journal entry the replay refuses) stays until what follows.
    window.whatif.add_edits([("/journal/62/event/RelationshipInteraction/target", 12345)])
    qtbot.waitUntil(lambda: not window.whatif.busy and "I010" in panel.message.text(), timeout=60000)
    panel.set_value("relationship.length_divisor", "")
    assert "I010" in panel.message.text()
    # A cell refused after that run goes back to where things stand (the what-if still
    # shown), not to the refused run's last progress ("Replaying with the edits… 57 %").
    panel.set_value("relationship.length_cap", "abc")
    panel.apply()
    assert panel.message.text() == refused
    panel.set_value("relationship.length_cap", "")
    assert panel.message.text() == shown


def _held(monkeypatch):
    """The what-if's child process waits before it reads side A, until released."""
    hold = engine.Hold(engine.context().Event(), engine.context().Event())
    monkeypatch.setitem(engine.HOLDS, "whatif", lambda path: hold if path.name == EVENING.name else None)
    return hold


def _what_if_children() -> list:
    return [p for p in multiprocessing.active_children() if p.name == "narrative-debugger what-if"]


def test_the_result_comes_from_a_child_process_and_revert_ends_it(qtbot, window, monkeypatch):
    """Issue 37/38: the what-if runs in a child process, not in the window's interpreter:
    held there, the panel says it runs and nothing is compared; released, its result is
    the command's, with side A the open playthrough itself. Revert while it runs ends
    the process and leaves the panel idle with no result."""
    hold = _held(monkeypatch)
    panel = window.panels["whatif"][0]
    window.whatif.open_action.trigger()
    panel.set_value("relationship.sentiment_weight", "0.25")
    panel.apply()
    qtbot.waitUntil(hold.entered.is_set, timeout=20000)
    assert window.whatif.busy and panel.progress.isVisible() and window.session.comparison is None
    assert len(_what_if_children()) == 1
    _applied(qtbot, window, hold.release.set)
    c = window.session.comparison
    assert c.a is window.session.playthrough
    expected = what_if(EVENING, None, *split_edits([("relationship.sentiment_weight", 0.25)]), recorded=window.session.playthrough)
    assert json.dumps(window.whatif.result.to_json(), sort_keys=True, default=str) == json.dumps(expected.to_json(), sort_keys=True, default=str)
    qtbot.waitUntil(lambda: not _what_if_children(), timeout=10000)

    hold.entered.clear()
    hold.release.clear()
    panel.set_value("relationship.sentiment_weight", "0.3")
    panel.apply()
    qtbot.waitUntil(hold.entered.is_set, timeout=20000)
    with qtbot.waitSignal(window.session.comparisonChanged):
        qtbot.mouseClick(panel.revert_button, Qt.LeftButton)
    assert not window.whatif.busy and window.whatif.result is None and window.session.comparison is None
    assert panel.message.text() == "Reverted: the recorded run." and not panel.progress.isVisible()
    qtbot.waitUntil(lambda: not _what_if_children(), timeout=10000)  # killed while it waited
    assert window.whatif.wait(10)
    assert window.whatif.result is None and window.session.comparison is None


def test_a_patch_error_in_the_child_is_the_panels_message(qtbot, window, monkeypatch):
    """A bad edit that only the what-if itself finds (a tuning value for an NPC the save
    has not) is refused by the child process: the panel shows the PatchError's
    message, and nothing is compared."""
    hold = _held(monkeypatch)
    panel = window.panels["whatif"][0]
    assert window.whatif.add_edits([("npc.nosuch.threshold", 10)])
    qtbot.waitUntil(hold.entered.is_set, timeout=20000)
    assert window.whatif.busy  # taken by the window: the child refuses it
    hold.release.set()
    qtbot.waitUntil(lambda: not window.whatif.busy, timeout=60000)
    assert panel.message.text() == "--set npc.nosuch.threshold: evening.json has no NPC 'nosuch' (see whatif --list evening.json)"
    assert window.session.comparison is None and window.whatif.edits == [] and window.whatif.result is None


def test_a_playthrough_no_child_opened_is_opened_again_by_the_what_if(qtbot, window):
    """Side A that the open's child did not hand over (loaded into the session here) has
    no file for the what-if's child to read: the child opens the save itself, and the
    comparison's side A is still the session's playthrough."""
    play = Playthrough.open(EVENING)
    window.session.load(play)
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.25)]))
    assert window.session.comparison.a is play
    expected = what_if(EVENING, None, [], DEFAULT_TUNING.with_value("relationship.sentiment_weight", 0.25), recorded=play)
    assert window.whatif.result.comparison.differences() == expected.comparison.differences()


def test_an_entry_edits_journal_comes_back_as_the_commands(qtbot, window):
    """B's journal is handed over as A's with the edited entry replaced (not written
    again): it reads as the command's B journal, entry by entry, and A's is untouched."""
    pointer = "/journal/62/event/RelationshipInteraction/sentiment"
    play = window.session.playthrough
    recorded = list(play.save.journal.data)
    _applied(qtbot, window, lambda: window.whatif.add_edits([(pointer, -0.5)]))
    b = window.session.comparison.b.save.journal
    expected = what_if(EVENING, None, *split_edits([(pointer, -0.5)]), recorded=Playthrough.open(EVENING)).comparison.b.save.journal
    assert len(b) == len(expected) == len(recorded)
    assert list(b.data) == list(expected.data) and list(b.ticks) == list(expected.ticks) and list(b.kinds) == list(expected.kinds)
    assert b.data[62].sentiment == -0.5 and b.data[60:64] == expected.data[60:64] and list(reversed(b.data))[-63] == b.data[62]
    assert list(play.save.journal.data) == recorded and play.save.journal.data[62].sentiment != -0.5


def test_the_comparison_paints_in_the_passes_after_it_is_handed_over(qtbot, window):
    """The pass that hands the what-if's comparison to the views refreshes them; the
    central area and the docks shown paint in the passes after it (one stall each, not
    all in one), and all paint again in the end."""
    shown = [d for d in window.docks.values() if d.isVisible()]
    seen = []
    window.session.comparisonChanged.connect(
        lambda: seen.append((window.centralWidget().updatesEnabled(), [d.objectName() for d in shown if d.updatesEnabled()])))
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.25)]))
    assert len(shown) >= 3 and seen == [(False, [])]
    qtbot.waitUntil(lambda: window.centralWidget().updatesEnabled() and all(d.updatesEnabled() for d in window.docks.values()), timeout=10000)


def test_the_knowledge_views_b_rows_and_facts_come_from_the_child(qtbot, window, monkeypatch):
    """The what-if's child prepares what the knowledge view reads of B at the hand-over
    (B's rows merged with A's and B's facts at the tick shown, B's creation order): the
    window computes none of it; a step to another tick, which the child did not
    prepare, is computed here and agrees."""
    import threading

    from narrative_debugger.widgets.knowledge import fact_keys, view as knowledge_view

    gui = []
    for module, name in ((fact_keys, "only_in_b"), (knowledge_view, "creation_order"), (fact_keys, "prepare"),
                         (fact_keys, "prepare_comparison")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *args, _real=real, _name=name: (
            threading.current_thread() is threading.main_thread() and gui.append(_name)) or _real(*args))
    session = window.session
    session.set_view("knowledge")
    view = window.views["knowledge"]
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.25)]))
    assert gui == []  # B's rows, facts and order were the child's
    prepared = session.prepared_b
    compared = prepared.get(fact_keys.ComparedFacts)
    assert compared is not None and compared.tick == session.tick and fact_keys.FactOrder in prepared

    def shown_matches_a_fresh_reading() -> None:
        state, state_b = session.state, session.state_b
        rows = [view.model.fact_id(row) for row in range(view.model.rowCount())]
        assert rows == sorted(set(state.knowledge.facts) | set(state_b.knowledge.facts))
        assert [view.model.fact_b(fact_id) for fact_id in rows] == [state_b.knowledge.facts.get(fact_id) for fact_id in rows]

    shown_matches_a_fresh_reading()
    assert [view.model.fact_id(row) for row in range(view.model.rowCount())] == list(compared.rows)
    session.step_event(None, forward=False)  # a step from the child's rows
    shown_matches_a_fresh_reading()
    session.set_tick(session.first_tick)
    assert "only_in_b" in gui  # far from the tick prepared: made here
    shown_matches_a_fresh_reading()
    session.set_comparison(None)
    assert session.prepared_b.get(fact_keys.ComparedFacts) is None


def _type(qtbot, text: str) -> None:
    """Type ``text`` as a user does: each key to the widget with the keyboard focus."""
    from PySide6.QtWidgets import QApplication

    for ch in text:
        qtbot.keyClick(QApplication.focusWidget(), ch)


def test_three_keys_answer_what_if_the_formula_weighed_sentiment_less(qtbot, window):
    """Issue 38, in a real window: "what if the delta formula weighed sentiment less" in
    at most 4 actions (the trial's took 8: open, double-click, type, Enter, Apply, two
    scrolls). Ctrl+Shift+W, type 0.25, Enter: the levels reached and the prompts to
    regenerate are in sight, and the cell shows the value in force."""
    from PySide6.QtWidgets import QApplication
    from narrative_debugger.widgets.docks.whatif import OUTCOME_TAB

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    panel = window.panels["whatif"][0]
    qtbot.keyClick(window, Qt.Key_W, Qt.ControlModifier | Qt.ShiftModifier)  # 1
    assert window.docks["whatif"].isVisible() and panel.table.isAncestorOf(QApplication.focusWidget())  # in the cell's editor
    _type(qtbot, "0.25")  # 2: the first What if cell is the sentiment weight's
    with qtbot.waitSignal(window.session.comparisonChanged, timeout=120_000):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Return)  # 3
    assert window.whatif.edits == [("relationship.sentiment_weight", 0.25)]
    assert panel.tabs.currentIndex() == OUTCOME_TAB and panel.outcome.isVisibleTo(window)
    text = panel.outcome.toPlainText()
    first, second, third = text.splitlines()[:3]
    assert first == "Levels reached (A → B): mira-holt Acquaintance → Stranger"
    assert second.startswith("Scores at tick 302,029 (A → B): kael-davan 21.78 → 21.00; ")
    assert third.startswith("Prompts that need a new LLM response: kael-davan from tick ")
    assert panel.message.text().startswith("B differs from the recorded run in ")
    row = panel.row_of("relationship.sentiment_weight")
    cell = panel.model.index(row, 2)
    assert cell.data() == "0.25" and cell.data(Qt.FontRole).bold() and "in the what-if shown" in cell.data(Qt.ToolTipRole)
    # Committing the value shown unchanged adds no second edit.
    panel.set_value("relationship.sentiment_weight", "0.25")
    panel.apply()
    assert panel.message.text() == "Nothing to apply: the values typed are in force already (bold in the What if column)." and len(window.whatif.edits) == 1


def test_four_actions_answer_what_if_the_player_had_been_kinder(qtbot, window):
    """Issue 38: "what if the player had been kinder in this conversation" from the
    Interactions view (the trial's took 9 actions through the Journal's filters): right-click
    the conversation, What if… this conversation's sentiment, type 0.5, Enter. B's
    score follows the seed formula from that entry (delta -0.63 → 0.5: 0.285 → 0.85)."""
    from PySide6.QtWidgets import QApplication

    s = window.session
    mira = s.playthrough.save.npc_by_slug("mira-holt").stable_id
    s.set_npc(mira)
    s.set_tick(s.playthrough.save.saved_at_tick)
    s.set_view("interactions")
    view = window.views["interactions"]
    qtbot.waitUntil(lambda: view.model.rowCount() > 0)
    row = view.model.row_of("interaction.mira-holt_001")
    view.table.setCurrentIndex(view.model.index(row, 0))  # 1: the right-click selects the row
    assert view.whatif_action in view.table.actions() and view.whatif_action.isEnabled()
    dialog = view.edit_conversation()  # 2: the context menu's entry
    assert dialog.pointer() == "/journal/43/event/RelationshipInteraction/sentiment" and dialog.edit.text() == "-0.63"
    qtbot.waitUntil(lambda: QApplication.focusWidget() is dialog.edit)
    _type(qtbot, "0.5")  # 3: the recorded value is selected, typing replaces it
    assert dialog.edit.text() == "0.5"
    with qtbot.waitSignal(s.comparisonChanged, timeout=120_000):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Return)  # 4
    assert window.whatif.edits == [("/journal/43/event/RelationshipInteraction/sentiment", 0.5)]
    c = s.comparison
    assert c.divergence.tick == 3438 and round(c.npcs["mira-holt"].b.score, 3) == 21.639
    assert [slug for slug, d in c.npcs.items() if d.a != d.b] == ["mira-holt"]
    assert window.panels["whatif"][0].outcome.toPlainText().startswith("Scores at tick 302,029 (A → B): mira-holt 21.07 → 21.64\n")
    # A conversation walked away from was not scored: nothing to make kinder.
    walked = next(f for f in s.playthrough.index.interactions_by_npc[mira] if view.conversation_entry(f) is None)
    view.table.setCurrentIndex(view.model.index(view.model.row_of(walked), 0))
    assert not view.whatif_action.isEnabled() and view.edit_conversation() is None


def test_undo_while_a_what_if_runs_stops_it_and_keeps_the_edits_in_force(qtbot, window):
    """New-user trial, stop 46: Undo during the second run dropped the first edit too, and
    nothing could stop the first run (Undo and Revert were greyed)."""
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "0.4")
    panel.apply()
    assert window.whatif.busy and panel.undo_button.isEnabled() and panel.revert_button.isEnabled()
    qtbot.mouseClick(panel.undo_button, Qt.LeftButton)  # the first run: stopped
    assert not window.whatif.busy and window.whatif.edits == [] and window.session.comparison is None
    assert panel.message.text() == "Stopped before it ended: the recorded run."
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, panel.apply)
    shown = window.session.comparison
    panel.set_value("relationship.sentiment_weight", "0.3")
    panel.apply()
    assert window.whatif.busy
    qtbot.mouseClick(panel.undo_button, Qt.LeftButton)  # the second: stopped, the first stays
    assert not window.whatif.busy and window.whatif.edits == [("relationship.sentiment_weight", 0.25)]
    assert window.session.comparison is shown and panel.message.text() == "Stopped before it ended: the what-if of 1 edit(s) stays."
    assert panel.model.index(panel.row_of("relationship.sentiment_weight"), 2).data() == "0.25"


def test_the_entry_dialog_offers_no_derived_field_and_forgets_a_refusal_on_another_field(window):
    dialog = window.panels["journal"][0].edit_entry(43)
    fields = [dialog.field.itemText(k) for k in range(dialog.field.count())]
    assert "sentiment" in fields and "delta" not in fields and "score_after" not in fields
    dialog.edit.setText("5")
    dialog.accept()
    assert "outside -1..1" in dialog.error.text()
    dialog.field.setCurrentText("message_length")
    assert dialog.error.text() == ""


def test_a_huge_number_in_a_what_if_cell_is_out_of_range(window):
    """New-user trial, stop 46: 1 200 nines said "Nothing to apply" (an OverflowError on stderr)."""
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "9" * 1200)
    panel.apply()
    assert panel.message.text().startswith("relationship.sentiment_weight: 999999999999999999999999999999… (1,200 characters) is out of range")


@pytest.mark.parametrize("typed, words", [
    ("NaN", "/journal/43/event/RelationshipInteraction/sentiment: NaN is out of range: not a finite number"),
    ("1.0000001", "sentiment 1.0000001 at journal[43] is outside -1..1"),
])
def test_the_entry_dialog_says_a_value_as_typed(window, typed, words):
    """New-user trial, stop 46: NaN read "a number that overflows to nan", and 1.0000001
    "sentiment 1 … is outside -1..1"."""
    dialog = window.panels["journal"][0].edit_entry(43)
    dialog.edit.setText(typed)
    dialog.accept()
    assert dialog.isVisible() and words in dialog.error.text() and "--set" not in dialog.error.text()


def test_the_knowledge_table_asks_what_if_of_an_interaction_fact(qtbot, window):
    """The Knowledge graph (in front when a save opens) lists the conversations as
    interaction facts: filter, right-click the row, What if…, type, Enter."""
    s = window.session
    view = window.views["knowledge"]
    view.search.setText("mira-holt_001")
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 1)
    view.table.setCurrentIndex(view.proxy.index(0, 0))
    assert view.conversation_whatif.action in view.table.actions() and view.conversation_whatif.action.isEnabled()
    dialog = view.conversation_whatif.edit()
    assert dialog.pointer() == "/journal/43/event/RelationshipInteraction/sentiment"
    dialog.edit.setText("0.5")
    with qtbot.waitSignal(s.comparisonChanged, timeout=120_000):
        dialog.accept()
    assert round(s.comparison.npcs["mira-holt"].b.score, 3) == 21.639
    view.search.setText("harbor.dues_raised")  # not a conversation: nothing to make kinder
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 1)
    view.table.setCurrentIndex(view.proxy.index(0, 0))
    assert not view.conversation_whatif.action.isEnabled()


def test_a_tuning_value_set_again_marks_the_earlier_edit_replaced(qtbot, window):
    # New-user trial, stop 46: both edits were listed alike; the later one is in force,
    # and Undo comes back to the earlier one.
    panel = window.panels["whatif"][0]
    for typed in ("0.3", "0.25"):
        panel.set_value("relationship.sentiment_weight", typed)
        _applied(qtbot, window, panel.apply)
    shown = [panel.edits.item(k).text() for k in range(panel.edits.count())]
    assert shown == ["relationship.sentiment_weight = 0.3 (replaced below)", "relationship.sentiment_weight = 0.25"]
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.undo_button, Qt.LeftButton))
    assert [panel.edits.item(k).text() for k in range(panel.edits.count())] == ["relationship.sentiment_weight = 0.3"]


def test_file_stop_comparing_stops_a_first_what_if_run(qtbot, window, monkeypatch):
    # New-user trial, stop 46: File > Stop comparing was greyed while the first what-if
    # ran (nothing was compared yet), so only the panel could stop it.
    hold = _held(monkeypatch)
    panel = window.panels["whatif"][0]
    stop = window.compare.stop_action
    assert not stop.isEnabled()
    panel.set_value("relationship.sentiment_weight", "0.25")
    panel.apply()
    qtbot.waitUntil(hold.entered.is_set, timeout=20000)
    assert window.whatif.busy and stop.isEnabled()
    stop.trigger()
    assert not window.whatif.busy and window.whatif.edits == [] and window.session.comparison is None
    assert panel.message.text() == "Stopped comparing: the edits were dropped."
    assert not stop.isEnabled()
    qtbot.waitUntil(lambda: not _what_if_children(), timeout=10000)


def test_stop_comparing_is_greyed_again_after_a_refused_run(qtbot, window):
    panel = window.panels["whatif"][0]
    window.whatif.add_edits([("/journal/5/event/RelationshipInteraction/sentiment", 0.5)])
    qtbot.waitUntil(lambda: not window.whatif.busy, timeout=20000)
    qtbot.waitUntil(lambda: not window.compare.stop_action.isEnabled(), timeout=5000)
    assert window.session.comparison is None and panel.message.text()


def test_revert_clears_a_refused_value_too(qtbot, window):
    # Trial 47: 'nan' refused stayed in its cell after Revert, and every later Apply
    # failed with its message again.
    panel = window.panels["whatif"][0]
    panel.set_value("relationship.sentiment_weight", "0.25")
    _applied(qtbot, window, panel.apply)
    panel.set_value("relationship.base", "nan")
    panel.apply()
    assert "relationship.base" in panel.message.text()
    with qtbot.waitSignal(window.session.comparisonChanged):
        qtbot.mouseClick(panel.revert_button, Qt.LeftButton)
    assert panel.model.index(panel.row_of("relationship.base"), 2).data() in ("", None)
    assert window.statusBar().currentMessage() == "What if: reverted: the recorded run."  # not the outcome's any more
    panel.set_value("relationship.length_cap", "0.2")
    _applied(qtbot, window, panel.apply)
    assert window.whatif.edits == [("relationship.length_cap", 0.2)]


def test_a_pointer_edited_again_marks_the_earlier_edit_replaced(qtbot, window):
    """The same entry field edited twice (the Journal's "What if… edit this entry"): the
    panel lists both, the earlier "(replaced below)", Undo comes back to it; the run
    takes the later value only, as ``whatif --set P=V --set P=W`` does."""
    pointer = "/journal/62/event/RelationshipInteraction/sentiment"
    panel = window.panels["whatif"][0]
    _applied(qtbot, window, lambda: window.whatif.add_edits([(pointer, -0.5)]))
    _applied(qtbot, window, lambda: window.whatif.add_edits([(pointer, 0.9)]))
    shown = [panel.edits.item(k).text() for k in range(panel.edits.count())]
    assert shown == [f"{pointer} = -0.5 (replaced below)", f"{pointer} = 0.9"]
    assert window.whatif.result.edits == [{"op": "replace", "path": pointer, "value": 0.9}]
    assert window.session.comparison.b.save.journal.data[62].sentiment == 0.9
    _applied(qtbot, window, lambda: qtbot.mouseClick(panel.undo_button, Qt.LeftButton))
    assert [panel.edits.item(k).text() for k in range(panel.edits.count())] == [f"{pointer} = -0.5"]
    assert window.whatif.result.edits == [{"op": "replace", "path": pointer, "value": -0.5}]


def test_the_outcome_says_where_a_score_parts_that_ends_the_same(qtbot, window):
    """New-user trial (N2): Lera's conversation 002 made kinder (0.9) from the Knowledge
    table differs "in 2 ways, the first at tick 4,520", her score clamped to 100 at the
    end either way; the Outcome showed its placeholder. It says where her score curve
    parts, where it meets again, and that the end is the same."""
    s = window.session
    view = window.views["knowledge"]
    view.search.setText("lera-sessik_002")
    qtbot.waitUntil(lambda: view.proxy.rowCount() == 1)
    view.table.setCurrentIndex(view.proxy.index(0, 0))
    dialog = view.conversation_whatif.edit()
    assert dialog.pointer() == "/journal/62/event/RelationshipInteraction/sentiment"
    dialog.edit.setText("0.9")
    with qtbot.waitSignal(s.comparisonChanged, timeout=120_000):
        dialog.accept()
    panel = window.panels["whatif"][0]
    assert panel.message.text().startswith("B differs from the recorded run in 2 ways, the first at tick 4,520")
    assert panel.tabs.currentIndex() == OUTCOME_TAB and panel.outcome.isVisibleTo(window)
    assert panel.outcome.toPlainText() == (
        "Scores that part mid-run (A → B): lera-sessik parts at tick 4,520 (0.94 → 1.00), "
        "meets again at tick 301,528 and ends the same (100.00 at tick 302,029)")


@pytest.mark.window(save=SAMPLES / "qa-faults.json")
def test_a_what_if_of_a_checked_save_with_faults_compares_as_the_command_does(qtbot, window):
    # Trial 49: with the window's checks taken for A, every finding of the snapshot and
    # of the replay against it was "only in A" (8 differences) where the command said
    # that nothing changes.
    qtbot.waitUntil(lambda: not window.session.playthrough.checks_pending, timeout=120_000)
    assert any(f.code == "J003" for f in window.session.playthrough.findings)  # the window's A is checked
    _applied(qtbot, window, lambda: window.whatif.add_edits([("relationship.sentiment_weight", 0.5)]))
    c = window.session.comparison
    cli = what_if(SAMPLES / "qa-faults.json", None, [], DEFAULT_TUNING, [("relationship.sentiment_weight", 0.5)])
    assert cli.comparison.equal and not cli.changed
    assert c.findings_only_a == () and c.findings_only_b == () and c.equal


def test_tab_moves_to_the_next_what_if_cell_and_ctrl_shift_w_back_to_the_first(qtbot, window):
    """Trial 49: Tab went to the next row's Name and the value typed next was lost; a
    second Ctrl+Shift+W left the keyboard in the row last used."""
    from PySide6.QtWidgets import QApplication

    window.activateWindow()
    qtbot.waitUntil(lambda: window.isActiveWindow())
    panel = window.panels["whatif"][0]
    in_cell = lambda: panel.table.isAncestorOf(QApplication.focusWidget())  # noqa: E731
    qtbot.keyClick(window, Qt.Key_W, Qt.ControlModifier | Qt.ShiftModifier)
    qtbot.waitUntil(in_cell)
    qtbot.keyClicks(QApplication.focusWidget(), "0.25")
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Tab)
    qtbot.waitUntil(lambda: in_cell() and panel.table.currentIndex().row() == 1)
    qtbot.keyClicks(QApplication.focusWidget(), "0.2")
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Tab)
    second = panel.model.index(1, 0).data()
    assert dict(panel.pending()) == {"relationship.sentiment_weight": 0.25, second: 0.2}
    qtbot.keyClick(window, Qt.Key_W, Qt.ControlModifier | Qt.ShiftModifier)
    qtbot.waitUntil(lambda: in_cell() and panel.table.currentIndex().row() == 0)
    # Shift+Tab: the previous What if cell, around from the first to the last.
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Backtab, Qt.ShiftModifier)
    qtbot.waitUntil(lambda: in_cell() and panel.table.currentIndex().row() == panel.model.rowCount() - 1)
