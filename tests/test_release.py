"""A playthrough the window lets go of is freed off the GUI thread (app/workers/release.py),
and only once nothing else holds it."""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.workers.release import Graveyard
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.widgets.knowledge.fact_keys import FactOrder

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_saves"


def test_a_held_playthrough_waits_and_is_emptied_once_let_go(qtbot):
    graveyard = Graveyard()
    play = Playthrough.open(SAMPLES / "qa-faults.json", SAMPLES / "content")
    data, dialogue = play.save.journal.data, play.index.dialogue
    graveyard.bury(play)
    graveyard._look()
    assert graveyard.waiting == 1 and data  # ``play`` still names it here
    index = play.index
    del play
    graveyard._look()
    assert graveyard.waiting == 1 and data  # its index is still held
    del index
    qtbot.waitUntil(lambda: graveyard.waiting == 0 and not graveyard.busy, timeout=5000)
    assert data == [] and dialogue == []


def test_reopening_frees_the_previous_playthrough_in_the_background(qtbot, open_window):
    window = open_window(size=None, persist=False, shown=False)
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    data = window.session.playthrough.save.journal.data
    # What the views prepared for it is freed with it (issue 37: the window holds it, not the playthrough).
    prepared = window.session.prepared
    order = prepared.get(FactOrder).order
    assert data and order and len(prepared) > 5
    window.open_save(SAMPLES / "evening.json", wait=True)
    assert window.session.playthrough.save.label == "evening.json"
    qtbot.waitUntil(lambda: window.graveyard.waiting == 0 and not window.graveyard.busy, timeout=10000)
    assert data == [] and order == [] and len(prepared) == 0
    assert window.session.prepared.get(FactOrder).order
    assert window.session.playthrough.save.journal.data  # the open save is untouched
    window.close()


def test_the_app_hands_the_gil_to_the_gui_thread_quickly():
    """A worker keeps the GIL for at most the switch interval while the GUI thread waits
    for it, once a call from Qt into Python (make_app sets it well below Python's 5 ms)."""
    import sys

    from narrative_debugger.app.window.main_window import SWITCH_INTERVAL_S, make_app

    make_app()
    assert abs(sys.getswitchinterval() - SWITCH_INTERVAL_S) < 1e-6 and SWITCH_INTERVAL_S <= 0.0005


def test_closing_neither_waits_for_a_worker_nor_leaves_its_playthrough_half_freed(qtbot, monkeypatch):
    import threading

    from narrative_debugger.app.workers import release

    started, go, steps_done = threading.Event(), threading.Event(), []

    def steps(play, also=()):
        started.set()
        go.wait(10)
        for k in range(3):
            yield
            steps_done.append(k)

    monkeypatch.setattr(release, "release_steps", steps)
    graveyard = Graveyard()
    graveyard.bury(Playthrough.open(SAMPLES / "evening.json", SAMPLES / "content"))
    qtbot.waitUntil(started.is_set, timeout=5000)
    graveyard.shutdown()  # the window closes while the worker frees it
    assert graveyard.busy  # not waited for
    go.set()
    qtbot.waitUntil(lambda: not graveyard.busy, timeout=5000)
    assert steps_done == [0, 1, 2]
