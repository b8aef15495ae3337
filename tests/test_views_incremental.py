"""Tick steps cost what changed, not the size of the save (issue 10): the views keep
incremental state, and it must equal what a full recomputation shows."""

from __future__ import annotations

import random
from itertools import islice

import pytest
from tests.conftest import CONTENT

pytest.importorskip("PySide6")

from narrative_debugger.models.playthrough import Playthrough  # noqa: E402
from narrative_debugger.widgets.knowledge.fact_keys import FactKeysAt, creation_order  # noqa: E402
from narrative_debugger.widgets.docks.monologues import monologue_rows  # noqa: E402
from narrative_debugger.widgets.kit.prepared import Prepared  # noqa: E402


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated 4 000-event save of the sample content (facts and monologues fired)."""
    from tests.support.savegen.generator import generate_save, write_save

    folder = tmp_path_factory.mktemp("incremental")
    write_save(generate_save(seed=7, events=4000, scenario="large", content_dir=CONTENT), folder / "save.json")
    return Playthrough.open(folder / "save.json", CONTENT)


def _walk(play, steps=60, seed=3):
    """Journal positions visited by small and large moves, forwards and back."""
    rng = random.Random(seed)
    last = len(play.index.ticks)
    positions, p = [], last // 2
    for _ in range(steps):
        p = max(0, min(last, p + rng.choice((1, 2, -1, -3, 40, -40, last // 3, -last // 3))))
        positions.append(p)
    return positions + [0, last, 1, last - 1]


def test_fact_keys_follow_every_move(generated):
    index = generated.index
    keys = FactKeysAt(creation_order(generated, index))
    for position in _walk(generated):
        count = len(index.at(index.tick_at_position(position)).knowledge.facts) if position else 0
        expected = sorted(islice(index.facts, count))
        assert list(keys.move(count)) == expected


def test_prepared_fact_keys_hand_out_their_list_once_and_then_copies(generated):
    """The loader's sorted keys at saved_at_tick go to the fact table as they are (a
    copy on the GUI thread cost 8 ms at an open); a second take, or one after a move,
    is a copy, and what the table does to its list never reaches the tracker."""
    from narrative_debugger.widgets.knowledge import fact_keys

    tracker = fact_keys.take_prepared(Prepared(*fact_keys.prepare(generated)))
    count = len(generated.state_at(generated.save.saved_at_tick).knowledge.facts)
    expected = sorted(islice(generated.index.facts, count))
    assert count > 100 and list(tracker.move(count)) == expected
    first = tracker.take_list()
    assert first == expected
    first.clear()  # the table's own list: its steps insert and remove rows in it
    assert list(tracker.keys) == expected
    second = tracker.take_list()
    assert second == expected and second is not first
    tracker.move(count // 2)
    assert tracker.take_list() == sorted(islice(generated.index.facts, count // 2))


def test_both_sides_rows_follow_every_move_as_made_anew(generated, evening_playthrough):
    """A comparison's rows moved step by step (``BothKeysAt``) are, at every pair of
    positions, A's keys and B's own as ``only_in_b`` makes them from scratch."""
    from types import SimpleNamespace

    from narrative_debugger.widgets.knowledge.fact_keys import BothKeysAt, only_in_b, prepare_comparison

    a, b = generated.index, evening_playthrough.index
    order_a, order_b = list(a.facts), list(b.facts)

    def tracking() -> BothKeysAt:
        return BothKeysAt(FactKeysAt(creation_order(generated, a)), FactKeysAt(creation_order(evening_playthrough, b)))

    both = tracking()
    # One started where a what-if's child made the rows (at B's saved tick) steps from there.
    made = prepare_comparison(SimpleNamespace(a=generated, b=evening_playthrough), evening_playthrough.save.saved_at_tick)
    started = tracking()
    started.start_at(made)
    assert made.only_b and list(made.rows) == list(only_in_b(sorted(order_a[:made.count_a]), sorted(order_b[:made.count_b]))[0])
    rng = random.Random(5)
    ca, cb = made.count_a, made.count_b
    seen_only_b = 0
    for _ in range(120):
        ca = max(0, min(len(order_a), ca + rng.choice((1, 2, -1, -3, 0, 25, -25, len(order_a) // 3, -len(order_a) // 3))))
        cb = max(0, min(len(order_b), cb + rng.choice((1, 2, -1, -3, 0, 5, -5, len(order_b) // 3))))
        expected, extra = only_in_b(sorted(order_a[:ca]), sorted(order_b[:cb]))
        for moved in (both, started):
            rows, only_b = moved.move(ca, cb)
            assert list(rows) == list(expected) and only_b == len(extra)
        seen_only_b += len(extra) > 0
    assert seen_only_b > 10  # B knew facts A did not, often


def test_keys_handed_over_as_columns_move_and_their_rows_step(qtbot, generated, tmp_path, monkeypatch):
    """A child process hands its sorted keys over as read-only mapped columns (the open's
    ``prepare``, a what-if's side B): the tracker and the fact table make lists of their
    own once rows come or go. A step back from the saved tick raised AttributeError
    ('SortedColumn' object has no attribute 'remove') on a save of 2 048 facts or more."""
    from narrative_debugger.models.columns import transfer
    from narrative_debugger.widgets.kit.fact_model import FactTableModel
    from narrative_debugger.widgets.knowledge import fact_keys

    monkeypatch.setattr(transfer, "MIN_ITEMS", 16)  # this save's keys are columns too
    transfer.write(tmp_path / "prepared", Prepared(*fact_keys.prepare(generated)))
    tracker = fact_keys.take_prepared(transfer.read(tmp_path / "prepared"))
    facts = generated.state_at(generated.save.saved_at_tick).knowledge.facts
    count, order = len(facts), list(generated.index.facts)
    assert count > 100 and not isinstance(tracker.keys, list) and list(tracker.move(count)) == sorted(order[:count])
    model = FactTableModel()
    model.set_facts(facts, tracker.take_list(), owned=True)
    for fewer in (count - 1, count - 3, count - 2, count):
        assert list(tracker.move(fewer)) == sorted(order[:fewer])
    assert model.step_facts(facts, frozenset(), (), [order[count - 1]], ())
    assert [model.fact_id(row) for row in range(model.rowCount())] == sorted(order[: count - 1])
    assert model.step_facts(facts, frozenset(), [order[count - 1]], (), ())
    assert [model.fact_id(row) for row in range(model.rowCount())] == sorted(order[:count])


def test_monologue_counts_are_the_firings_up_to_the_tick(generated):
    index = generated.index
    assert len(index.monologues_fired) > 20, "the generated save fires monologue lines"
    npc = next(iter(generated.save.npcs))
    for position in _walk(generated, steps=25):
        state = generated.state_at(index.ticks[position - 1] if position else 0)
        fired = [r for r in index.monologues_fired if r[0] < state.position]
        rows = monologue_rows(generated, state, npc)
        for row in (r for r in rows if r.kind == "line"):
            mine = [tick for _, tick, line_id in fired if line_id == row.line_id]
            assert (row.fired, row.tick) == (len(mine), mine[-1] if mine else None)
        heading = [r.title for r in rows if r.kind == "heading"][-1]
        assert heading.startswith(f"Fired up to the tick: {len(fired):,}")
        assert [(r.line_id, r.tick) for r in rows if r.kind == "fired"] == [(i, t) for _, t, i in fired[::-1][:200]]


@pytest.fixture
def evening_window(qtbot, open_window, isolated_settings):
    """The main window, shown at 1400x900, with evening.json open."""
    from tests.conftest import SAMPLES

    window = open_window(None, (1400, 900))
    window.open_save(SAMPLES / "evening.json", wait=True)
    return window


def test_knowledge_behind_another_tab_catches_up_when_shown(qtbot, evening_window):
    window = evening_window
    s, knowledge = window.session, window.views["knowledge"]
    s.set_view("interactions")
    s.set_tick(0)
    assert not knowledge.isVisible()
    for _ in range(30):
        window.tickbar.next_action.trigger()
    s.set_view("knowledge")
    qtbot.waitUntil(knowledge.isVisible)
    facts = s.state.knowledge.facts
    assert knowledge.model.rowCount() == len(facts) > 0
    assert [knowledge.model.fact_id(k) for k in range(len(facts))] == list(facts)
    assert f"tick {s.tick:,}" in knowledge.heading.text()


def test_prompt_behind_another_tab_holds_its_preview_and_shows_it_when_shown(qtbot, evening_window):
    """A preview that arrives while the prompt view is behind another is held at once
    (``current_preview``, what bug reports and the benchmark read) and its labels and
    tables are filled when the view is shown, for the NPC and tick of that preview."""
    window = evening_window
    s, prompt = window.session, window.views["prompt"]
    s.set_view("knowledge")
    npc = next(iter(s.playthrough.save.npcs))
    s.set_npc(npc)
    s.set_tick(s.last_tick // 2)
    qtbot.waitUntil(lambda: prompt.current_preview is not None and prompt.current_preview.tick == s.tick, timeout=30_000)
    assert not prompt.isVisible()
    held = prompt.current_preview
    assert f"{held.tick:,}" not in prompt.title_label.full_text()  # not filled while hidden
    s.set_view("prompt")
    qtbot.waitUntil(prompt.isVisible)
    title = f"Prompt for {s.playthrough.npc_name(npc)} at tick {held.tick:,}"
    assert prompt.title_label.full_text() == title
    qtbot.waitUntil(lambda: prompt.title_label.text() == title)  # whole once laid out
    assert prompt.section_model.rowCount() == len(held.sections) + 2  # and the two totals
