"""A loader's worker gives way to a busy GUI thread (``gil_slices.give_way``, issue 10):
it pauses while the thread it watches uses CPU, never while that thread sleeps, and
never outside ``giving_way``; the decoded JSON it frees goes in steps."""

from __future__ import annotations

import threading
import time

from narrative_debugger.models import gil_slices
from narrative_debugger.models.gil_slices import give_way, giving_way, release_in_steps, thread_clock, with_give_way


def _pauses(monkeypatch) -> list[float]:
    """The pauses ``give_way`` takes (each a real, short sleep), recorded."""
    taken: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        taken.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(gil_slices.time, "sleep", sleep)
    return taken


def _in_worker(body) -> None:
    """Run ``body`` in a thread of its own, raising what it raised."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failure.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(30)
    assert not worker.is_alive()
    if failure:
        raise failure[0]


def _watched(spin: bool):
    """A thread that spins (busy) or waits (idle) until told to stop, with its CPU clock."""
    ready, stop = threading.Event(), threading.Event()
    clock: list[int] = []

    def run() -> None:
        clock.append(thread_clock())
        ready.set()
        if spin:
            while not stop.is_set():
                sum(range(1000))
        else:
            stop.wait()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    return clock[0], stop, thread


def test_outside_giving_way_it_never_pauses(monkeypatch):
    taken = _pauses(monkeypatch)
    for _ in range(100):
        give_way()
    _in_worker(lambda: [give_way() for _ in range(100)])
    assert taken == []


def test_a_worker_never_pauses_for_an_idle_thread(monkeypatch):
    clock, stop, thread = _watched(spin=False)
    taken = _pauses(monkeypatch)

    def body() -> None:
        with giving_way(clock):
            for _ in range(50):
                give_way()
                sum(range(20_000))  # a slice of work between two calls

    try:
        _in_worker(body)
    finally:
        stop.set()
        thread.join(10)
    assert taken == []


def test_a_worker_pauses_for_a_busy_thread_and_goes_on(monkeypatch):
    """The watched thread spins the whole time: each pause ends at GIVE_WAY_MAX_S, so the
    worker still ends its work (a drag that never stops does not starve a load)."""
    clock, stop, thread = _watched(spin=True)
    taken = _pauses(monkeypatch)
    done: list[int] = []

    def body() -> None:
        with giving_way(clock):
            time.sleep(0.03)  # the spinner runs meanwhile (this sleep is not give_way's)
            give_way()
            done.append(1)

    try:
        _in_worker(body)
    finally:
        stop.set()
        thread.join(10)
    assert done == [1]
    paused = sum(taken) - 0.03
    assert paused >= gil_slices.LOOK_AGAIN_S  # it paused at least once ...
    assert len(taken) - 1 <= gil_slices.GIVE_WAY_MAX_S / gil_slices.LOOK_AGAIN_S + 1  # ... and no longer than allowed


def test_giving_way_nests_and_ends_with_its_block(monkeypatch):
    clock, stop, thread = _watched(spin=False)
    try:
        with giving_way(clock):
            assert gil_slices._THREAD.way is not None
            with giving_way(None):
                assert gil_slices._THREAD.way is None
            assert gil_slices._THREAD.way.clock == clock
        assert getattr(gil_slices._THREAD, "way", None) is None
    finally:
        stop.set()
        thread.join(10)


def test_with_give_way_yields_every_item_and_gives_way_between(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(gil_slices, "give_way", lambda: calls.append(1))
    assert list(with_give_way(range(2500), 1000)) == list(range(2500))
    assert len(calls) == 3  # before items 0, 1000 and 2000


def test_release_in_steps_empties_what_is_its_own_only():
    """The decoded document is emptied in place, but a list or dict that a parsed value
    still holds (kept as decoded) is only let go of: it keeps its items."""
    kept_list, kept_map = list(range(100)), {f"k{i}": i for i in range(100)}
    document = {
        "journal": [{"tick": i, "event": {"DialogueLine": {"text": "x"}}} for i in range(3 * gil_slices.RELEASE_ITEMS + 7)],
        "npcs": {str(i): {"slug": f"n{i}", "memories": list(range(200))} for i in range(300)},
        "kept": kept_list,
        "nested": [kept_map, [list(range(100)) for _ in range(3)]],
        "n": 5,
    }
    release_in_steps(document)
    assert document == {}
    assert kept_list == list(range(100)) and kept_map == {f"k{i}": i for i in range(100)}
    release_in_steps("not a container")  # left alone


def test_release_in_steps_gives_way_between_steps(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(gil_slices, "give_way", lambda: calls.append(1))
    release_in_steps([{"tick": i} for i in range(4 * gil_slices.RELEASE_ITEMS)])
    assert len(calls) == 4


def test_the_loader_worker_gives_way_to_the_gui_thread(qtbot, monkeypatch):
    """The worker watches the thread that started the load (the GUI thread) and still
    opens and checks the save."""
    from pathlib import Path

    from narrative_debugger.app.workers import loader as loader_module
    from narrative_debugger.app.workers.loader import SaveLoader

    watched = []  # the clocks the worker gives way to
    real = loader_module.giving_way
    monkeypatch.setattr(loader_module, "giving_way", lambda clock: watched.append(clock) or real(clock))
    loader = SaveLoader()
    loader.start(Path(__file__).resolve().parent.parent / "sample_saves" / "evening.json", None)
    with qtbot.waitSignal(loader.loaded, timeout=60_000) as opened:
        pass
    assert watched and set(watched) == {thread_clock()}
    with qtbot.waitSignal(loader.checked, timeout=60_000):
        loader.release_checks()
    assert not opened.args[0].checks_pending
    loader.shutdown()


def test_overlapping_loads_keep_the_collector_off_until_the_last_ends():
    """Load A pauses the collector, load B starts, A is cancelled: B must still run
    with it off (A switching it back on let full passes stall the window)."""
    import gc

    from narrative_debugger.models.playthrough import collector_paused

    was = gc.isenabled()
    gc.enable()
    try:
        a, b = collector_paused(), collector_paused()
        a.__enter__()
        b.__enter__()
        a.__exit__(None, None, None)  # the cancelled load winds down first
        assert not gc.isenabled()
        b.__exit__(None, None, None)
        assert gc.isenabled()
        with collector_paused():  # nested in one thread, as the loader's blocks are
            with collector_paused():
                pass
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_a_load_cancelled_in_its_replay_frees_what_it_made_in_steps(tmp_path, monkeypatch):
    """Escape during the replay: the save and the partial index are emptied a step at
    a time in the worker, not freed at once when the cancel unwinds."""
    import pytest

    from narrative_debugger.models import playthrough as pt
    from narrative_debugger.models.gil_slices import Cancelled
    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "long.json"
    write_save(generate_save(seed=5, events=20_000, scenario="large"), path)
    seen = []
    original = pt.release_parts_steps

    def spy(save, index, graph):
        seen.append(("before", len(save.journal.data), len(index.ticks), len(graph.facts)))
        steps = sum(1 for _ in original(save, index, graph))
        seen.append(("after", len(save.journal.data), len(index.ticks), len(graph.facts), steps))
        yield

    monkeypatch.setattr(pt, "release_parts_steps", spy)
    stop = [False]

    def progress(fraction, message):
        if message == "replaying the journal" and fraction > 0.6:
            stop[0] = True

    with pytest.raises(Cancelled):
        pt.Playthrough.open(path, progress=progress, cancelled=lambda: stop[0])
    (_, data, ticks, facts), (_, *emptied, steps) = seen
    assert data == 20_000 and ticks > 0 and facts > 0
    assert emptied == [0, 0, 0] and steps > 1


def test_a_load_cancelled_while_reading_empties_the_entries_read_so_far(tmp_path, monkeypatch):
    import pytest

    from narrative_debugger.models import gil_slices as gs
    from narrative_debugger.models.gil_slices import Cancelled
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.save import savefile
    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "long.json"
    write_save(generate_save(seed=5, events=200_000, scenario="large"), path)
    emptied = []
    original = savefile.release_in_slices

    def spy(part):
        before = len(part) if type(part) is list else None
        original(part)
        if before is not None:
            emptied.append((before, len(part)))

    monkeypatch.setattr(savefile, "release_in_slices", spy)
    seen = {"journal": 0}

    def part(stage, fraction):
        if stage == "journal":
            seen["journal"] = fraction

    with pytest.raises(Cancelled):
        with gs.cancellable(lambda: 0.3 < seen["journal"] < 1.0, part):
            savefile.load_save(path)
    assert emptied and emptied[0][0] > 0 and all(after == 0 for _, after in emptied)
    assert Playthrough.open(path).readable  # the file itself reads whole afterwards
