"""Reloads against opens (issue 35, "Races"): a change on disk of the shown save never
cancels the user's File › Open of another one; a change of the save shown before never
reloads the save opened after it; a reload shows its progress and can be cancelled.

Each race is made deterministic by holding the worker's read of a chosen save at a gate
until the test lets it go (the read gives up when cancelled, as a real one does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from narrative_debugger.app.workers import engine, progress
from narrative_debugger.app.workers import save_watch
from narrative_debugger.app.workers.loader import OPEN, RELOAD
from narrative_debugger.widgets.kit.progress_panel import ProgressPanel
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from tests.conftest import SAMPLES

pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown


class Gate:
    """Holds the open's child process of the ``held`` saves before it reads them, until
    ``release`` (a cancel ends the process, as it does a real read)."""

    def __init__(self, monkeypatch, *held: Path) -> None:
        self.held = {Path(p) for p in held}
        self.entered = engine.context().Event()
        self.release = engine.context().Event()
        hold = engine.Hold(self.entered, self.release)
        monkeypatch.setitem(engine.HOLDS, "open", lambda path: hold if Path(path) in self.held else None)


@pytest.fixture()
def saves(tmp_path):
    """Two saves side by side: ``a`` (walkaway-spiral) is shown first, ``b`` (evening) is opened after it."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes((SAMPLES / "walkaway-spiral.json").read_bytes())
    b.write_bytes((SAMPLES / "evening.json").read_bytes())
    return a, b


def change(path: Path) -> None:
    """Write ``path`` again with another game version (what a new save of the game does)."""
    path.write_bytes(path.read_bytes().replace(b'"game_version":"', b'"game_version":"y', 1))


def test_a_change_on_disk_of_the_shown_save_never_cancels_the_users_open(qtbot, open_window, saves, monkeypatch):
    a, b = saves
    window = open_window(a)
    gate = Gate(monkeypatch, b)
    window.open_save(b)
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    with qtbot.waitSignal(window.save_watch.changed, timeout=10_000) as seen:
        change(a)  # the watcher sees it; the window's slot runs before this signal's wait ends
    assert seen.args == [a]
    assert (window.loader.pending.kind, window.loader.pending.path) == (OPEN, b)  # still the user's open
    gate.release.set()
    window.wait_for_load()
    assert window.save_path == b and window.session.playthrough.save.label == "b.json"
    assert not window.statusBar().currentMessage().startswith("Reloaded")
    assert not window.loader.busy  # the held-back reload of a was dropped: b is shown now


def test_a_change_held_back_by_an_open_is_read_when_the_open_is_cancelled(qtbot, open_window, saves, monkeypatch):
    a, b = saves
    window = open_window(a)
    shown = window.session.playthrough
    gate = Gate(monkeypatch, b)
    window.open_save(b)
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    with qtbot.waitSignal(window.save_watch.changed, timeout=10_000):
        change(a)
    qtbot.mouseClick(window.findChild(ProgressPanel).cancel_button, Qt.LeftButton)
    assert window.loader.pending.kind == RELOAD and window.loader.pending.path == a
    window.wait_for_load()
    assert window.save_path == a and window.session.playthrough is not shown
    assert window.session.playthrough.save.game_version.startswith("y")
    assert window.statusBar().currentMessage() == "Reloaded a.json: it changed on disk."


def test_a_late_notification_for_the_save_shown_before_reloads_nothing(qtbot, open_window, saves):
    a, b = saves
    window = open_window(a)
    window.open_save(b, wait=True)
    opened = window.session.playthrough
    window.save_watch.notify(a)  # arrives after the switch
    assert not window.save_watch.pending and not window.loader.busy
    change(a)  # no longer watched
    assert window.save_watch.watched_files == [str(b)]
    assert window.session.playthrough is opened


def test_a_change_still_debounced_at_the_switch_does_not_reload_the_new_save(qtbot, open_window, saves, monkeypatch):
    a, b = saves
    monkeypatch.setattr(save_watch, "DEBOUNCE_MS", 600_000)  # the change's timer outlives the open
    window = open_window(a)
    gate = Gate(monkeypatch, b)
    window.open_save(b)
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    window.save_watch.notify(a)  # a change of a, seen while b opens
    assert window.save_watch.pending
    gate.release.set()
    window.wait_for_load()
    assert window.save_path == b
    assert not window.save_watch.pending and not window.loader.busy  # forgotten at the switch
    assert "changed on disk" not in window.statusBar().currentMessage()
    # b's own changes still reload b, and say so.
    monkeypatch.setattr(save_watch, "DEBOUNCE_MS", 50)
    opened = window.session.playthrough
    with qtbot.waitSignal(window.save_watch.changed, timeout=10_000) as seen:
        change(b)
    assert seen.args == [b]
    window.wait_for_load()
    assert window.session.playthrough is not opened
    assert window.statusBar().currentMessage() == "Reloaded b.json: it changed on disk."


def test_a_reload_shows_its_progress_and_cancels_by_button_and_escape(qtbot, open_window, saves, monkeypatch):
    a, _ = saves
    monkeypatch.setattr(progress, "SHOW_AFTER_MS", 0)
    window = open_window(a)
    shown = window.session.playthrough
    panel = window.findChild(ProgressPanel)
    gate = Gate(monkeypatch, a)
    window.findChild(QAction, "action-reload").trigger()  # F5
    qtbot.waitUntil(panel.isVisible, timeout=10_000)
    assert panel.message.full_text() == "Reloading a.json…"
    qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    assert not panel.isVisible() and not window.loader.busy
    assert window.statusBar().currentMessage() == "Reload cancelled; still showing the save as it was read before."
    assert window.session.playthrough is shown
    window.reload(changed=True)  # as a change on disk does
    qtbot.waitUntil(panel.isVisible, timeout=10_000)
    window.activateWindow()
    qtbot.keyClick(window.tickbar, Qt.Key_Escape)
    assert not panel.isVisible() and not window.loader.busy
    assert window.statusBar().currentMessage().startswith("Reload cancelled")
    # Let through, a reload ends its progress and says so.
    gate.release.set()
    window.reload()
    window.wait_for_load()
    assert not panel.isVisible() and window.session.playthrough is not shown
    assert window.statusBar().currentMessage() == "Reloaded a.json."


def test_an_open_replaces_a_running_reload_and_the_reload_follows_if_the_open_is_cancelled(qtbot, open_window, saves, monkeypatch):
    a, b = saves
    window = open_window(a)
    shown = window.session.playthrough
    gate = Gate(monkeypatch, a, b)
    window.reload(changed=True)
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    window.open_save(b)  # the user's open wins over the reload ...
    assert (window.loader.pending.kind, window.loader.pending.path) == (OPEN, b)
    window.loader.cancel()  # ... and when it is cancelled, the change is read after all
    assert (window.loader.pending.kind, window.loader.pending.path) == (RELOAD, a)
    gate.release.set()
    window.wait_for_load()
    assert window.session.playthrough is not shown and window.save_path == a
    assert window.statusBar().currentMessage() == "Reloaded a.json: it changed on disk."


def test_a_message_that_comes_while_the_progress_shows_is_seen_in_its_place(qtbot, open_window, saves, monkeypatch):
    """The progress panel takes the room where the status bar draws its messages: one that
    came during a job (here: the shown save deleted while another opens) was not seen."""
    a, b = saves
    monkeypatch.setattr(progress, "SHOW_AFTER_MS", 0)
    window = open_window(a)
    window.statusBar().showMessage("a word from before the open", 60_000)
    panel = window.findChild(ProgressPanel)
    gate = Gate(monkeypatch, b)
    window.open_save(b)
    qtbot.waitUntil(lambda: gate.entered.is_set() and panel.isVisible(), timeout=10_000)
    assert panel.message.full_text() == "Opening b.json…"  # the earlier word is about the earlier state
    with qtbot.waitSignal(window.save_watch.gone, timeout=10_000):
        a.unlink()
    gone = "a.json is gone from disk; waiting for it to come back."
    assert window.statusBar().currentMessage() == gone and panel.message.full_text() == gone
    window.statusBar().clearMessage()  # the word's time is up: the job's own message again
    assert panel.message.full_text() == "Opening b.json…"
    gate.release.set()
    window.wait_for_load()
    assert not panel.isVisible() and window.save_path == b


def test_f5_while_another_save_opens_says_it_waits_and_cancels_nothing(qtbot, open_window, saves, monkeypatch):
    a, b = saves
    window = open_window(a)
    gate = Gate(monkeypatch, b)
    window.open_save(b)
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    window.findChild(QAction, "action-reload").trigger()
    assert window.statusBar().currentMessage() == "Not reloading a.json: b.json is being opened."
    assert (window.loader.pending.kind, window.loader.pending.path) == (OPEN, b)
    gate.release.set()
    window.wait_for_load()
    assert window.save_path == b and not window.loader.busy


def test_a_change_during_a_reload_reads_the_save_again_as_a_new_request(qtbot, open_window, saves, monkeypatch):
    a, _ = saves
    monkeypatch.setattr(save_watch, "DEBOUNCE_MS", 50)
    window = open_window(a)
    shown = window.session.playthrough
    gate = Gate(monkeypatch, a)
    window.reload()  # F5
    first = window.loader.pending
    qtbot.waitUntil(gate.entered.is_set, timeout=10_000)
    with qtbot.waitSignal(window.save_watch.changed, timeout=10_000):
        change(a)  # written again while it is being read
    second = window.loader.pending
    assert (first.kind, second.kind, second.path) == (RELOAD, RELOAD, a) and second.id > first.id
    gate.release.set()
    window.wait_for_load()
    assert window.session.playthrough is not shown and window.session.playthrough.save.game_version.startswith("y")
    assert window.statusBar().currentMessage() == "Reloaded a.json: it changed on disk."
    assert not window.loader.busy  # the first reload never reported


def test_a_reload_of_a_truncated_save_names_where_it_breaks(qtbot, open_window, saves):
    """Issue 35: a reload that cannot read the changed save says where, as an open does
    (README, "Opening saves"), and the window keeps the save as it was read before."""
    a, _ = saves
    window = open_window(a)
    shown = window.session.playthrough
    text = a.read_bytes()
    a.write_bytes(text[:200])  # cut inside the document: F001 at its line:col
    window.reload(changed=True)
    window.wait_for_load()
    message = window.statusBar().currentMessage()
    assert message.startswith("a.json changed on disk and cannot be read now: F001 at ")
    line_col, rest = message.split("F001 at ", 1)[1].split("; ", 1)
    assert [part.isdigit() for part in line_col.split(":")] == [True, True], message  # line:col of the cut
    assert rest.startswith("keeping the last good state (not valid JSON"), message
    assert window.session.playthrough is shown
