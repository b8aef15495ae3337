"""The loader's passes over a whole save (distinct ticks, variant positions, the
snapshot's differences, reading progress and cancellation): each gives the result of
the plain Python it replaces."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.snapshot_diff import _in_path_order, differences, saved_differences
from narrative_debugger.models.timeline.event_kinds import distinct_ticks, tick_array, variant_positions

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"
NAMES = ["evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json"]


@pytest.mark.parametrize("name", NAMES)
def test_distinct_ticks_equal_sorted_set(name):
    """qa-faults.json has a tick that decreases (J001): the index keeps the running maximum."""
    ticks = Playthrough.open(SAMPLES / name).index.ticks
    assert distinct_ticks(ticks) == sorted(set(ticks))


def test_distinct_ticks_across_slices():
    ticks = [0] * 40_000 + [1] * 70_000 + list(range(2, 100_000)) + [2**64 - 1] * 3
    assert distinct_ticks(ticks) == sorted(set(ticks))
    assert distinct_ticks(ticks, tick_array(ticks)) == sorted(set(ticks))  # the numpy form, exact at 2^64 - 1
    assert distinct_ticks([]) == [] and distinct_ticks([], tick_array([])) == []


def test_variant_positions_equal_one_python_pass():
    """The loader's grouping of journal entries by variant (numpy, in slices) gives each
    variant's indices in order, as the Python loop it replaced did (None: unreadable)."""
    rng = random.Random(3)
    kinds = [rng.choice(["DialogueLine"] * 6 + ["InteractionStarted", "FactUpdated", None]) for _ in range(100_003)]
    expected: dict = {}
    for i, kind in enumerate(kinds):
        expected.setdefault(kind, []).append(i)
    got = variant_positions(kinds)
    assert {kind: positions.tolist() for kind, positions in got.items()} == expected
    assert variant_positions([]) == {}


@pytest.mark.parametrize("name", NAMES)
def test_session_stepping_data_equal_the_python_loops(name):
    """``session.prepare`` picks ticks and distinct ticks in numpy: the same as lists."""
    from narrative_debugger.models.timeline.event_kinds import DERIVED_KINDS, EVENT_KINDS
    from narrative_debugger.widgets.session import prepare

    play = Playthrough.open(SAMPLES / name)
    stepping = prepare(play)
    indices, ticks, distinct = stepping.indices, stepping.ticks, stepping.distinct
    kinds, versions = play.index.kinds, play.index.npcs
    for name_, variants in EVENT_KINDS.items():
        assert indices[name_] == [i for i, kind in enumerate(kinds) if kind in variants]
    assert {name_: ticks[name_] for name_ in indices} == {name_: [play.index.ticks[i] for i in found] for name_, found in indices.items()}
    assert distinct == sorted(set(play.index.ticks))
    level = lambda n: sum(n.relationship.score > bound for bound in (20.0, 40.0, 60.0, 80.0))  # noqa: E731 (bounds inclusive)
    over = lambda n: n.tolerance.current_stress > n.tolerance.threshold  # noqa: E731
    for kind, value in (("level", level), ("threshold", over)):
        want = sorted(v.positions[k] - 1 for v in versions.values() for k in range(1, len(v.values)) if value(v.values[k]) != value(v.values[k - 1]))
        assert indices[kind] == want, kind
    assert set(indices) == {*EVENT_KINDS, *DERIVED_KINDS}


@pytest.mark.parametrize("name", NAMES)
def test_snapshot_differences_are_computed_once(name):
    play = Playthrough.open(SAMPLES / name)
    first = saved_differences(play.save, play.index)
    assert saved_differences(play.save, play.index) is first  # J003 and the Snapshot dock share it
    again = differences(play.save, play.state_at(play.save.saved_at_tick))
    assert [(d.path, d.saved, d.replayed, d.group) for d in first] == [(d.path, d.saved, d.replayed, d.group) for d in again]
    assert bool(first) == (name == "qa-faults.json")


def test_path_order_is_numbers_then_strings():
    keys = {"b", 10, "a", 2, "a.b", "A", 0}
    assert _in_path_order(keys) == sorted(keys, key=lambda k: (type(k) is str, k)) == [0, 2, 10, "A", "a", "a.b", "b"]


def test_tick_array_equals_one_conversion():
    import numpy as np
    from narrative_debugger.models.timeline.event_kinds import tick_array

    for ticks in ([], [5], list(range(7)), list(range(8)), [0, 3, 3, 2**64 - 1] * 11 + [2**53 + 1]):
        got = tick_array(ticks)
        assert got.dtype == np.uint64 and got.tolist() == np.asarray(ticks, dtype=np.uint64).tolist()
    already = np.arange(20, dtype=np.uint64)
    assert tick_array(already).tolist() == already.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_journal_kinds_counted_equal_one_counter(name):
    from collections import Counter

    from narrative_debugger.widgets.docks import journal as journal_view

    play = Playthrough.open(SAMPLES / name)
    counts = journal_view.prepare(play).counts
    whole = Counter(play.save.journal.kinds)
    assert counts == whole and list(counts) == list(whole)


def test_path_order_of_many_keys_equals_one_sort():
    keys = {f"fact.{n * 7919 % 70_001}" for n in range(70_000)} | {n * 31 % 9_001 for n in range(9_000)}
    assert _in_path_order(keys) == sorted(k for k in keys if isinstance(k, int)) + sorted(k for k in keys if isinstance(k, str))


def test_a_load_cancelled_while_its_file_is_read_stops_there(tmp_path):
    """Reading a save reports no progress for seconds; its slices ask ``cancelled``
    (``progress.checkpoint``), so a cancelled open stops while reading, not at the
    next progress report (a new-user trial had six cancelled opens alive at once)."""
    from narrative_debugger.models.progress import Cancelled

    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "big.json"
    write_save(generate_save(seed=3, events=20_000, scenario="large"), path)
    assert path.stat().st_size > 2 * (1 << 20)  # more than one read and scan slice
    asked, said = [], []

    def cancelled() -> bool:
        asked.append(len(said))
        return len(asked) > 1  # the first ask (the "reading" report) lets it start

    with pytest.raises(Cancelled):
        Playthrough.open(path, SAMPLES / "content", progress=lambda f, m: said.append(m), cancelled=cancelled)
    assert said == ["reading the save"] and len(asked) == 2  # stopped at the first slice after it
    assert Playthrough.open(path, SAMPLES / "content").readable  # uncancelled, the same save reads


def test_checkpoint_asks_only_the_load_of_its_own_thread():
    import threading

    from narrative_debugger.models.progress import Cancelled, checkpoint, reporting

    checkpoint()  # outside any load: nothing to ask
    with reporting(lambda: True):
        with pytest.raises(Cancelled):
            checkpoint()
        with reporting(None):
            checkpoint()  # an inner load that cannot be cancelled
        with pytest.raises(Cancelled):
            checkpoint()
        other = []
        worker = threading.Thread(target=lambda: other.append(checkpoint()))
        worker.start()
        worker.join()
        assert other == [None]  # another thread is not cancelled
    checkpoint()


def test_reading_a_large_save_reports_how_far_it_has_got(tmp_path):
    """The bar sat at 0 % for the first 40 % of an open: reading reported nothing."""
    from tests.support.savegen.generator import generate_save, write_save

    path = tmp_path / "big.json"
    write_save(generate_save(seed=3, events=20_000, scenario="large"), path)
    said = []
    Playthrough.open(path, SAMPLES / "content", progress=lambda f, m: said.append((f, m)))
    reading = [f for f, m in said if m == "reading the save"]
    assert reading[0] == 0.0 and len(reading) >= 5 and reading == sorted(set(reading))
    assert 0.1 < reading[-1] < 0.3  # into the journal's decode, and below "reading content"
    assert said[len(reading)] == (0.3, "reading content")
