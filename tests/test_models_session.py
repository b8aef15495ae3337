"""models.session.Session: the plain-Python session (no Qt), its rules and its events.

The numbers are the bundled evening sample's (sample_saves/README.md): saved at tick
302 029, its last tick; its first journal entry at tick 253; NPC StableIds 9 (first,
``lera-sessik``), 17 (``kael-davan``) and 9007199254740993 (``sera-venn``, above 2^53).
"""

from __future__ import annotations

import pytest

from narrative_debugger.models import session as ev
from narrative_debugger.models.compare.comparison import compare
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.session import Session, TickOutOfRange, UnknownNpc
from tests.conftest import CONTENT, SAMPLES

U64_MAX = 2**64 - 1
LAST = 302_029


@pytest.fixture()
def recorded(evening_playthrough):
    """A session with the evening sample loaded, and the list its events go to from then on."""
    s = Session()
    s.load(evening_playthrough)
    seen: list = []
    s.subscribe(seen.append)
    return s, seen


def test_load_sends_its_events_in_order_with_the_defaults(evening_playthrough):
    s = Session()
    seen: list = []
    s.subscribe(seen.append)
    s.load(evening_playthrough)
    assert seen == [ev.Loaded(), ev.CulpritChanged(None), ev.NpcChanged(9), ev.TickChanged(LAST)]
    assert (s.tick, s.previous_tick, s.npc, s.last_tick) == (LAST, LAST, 9, LAST)


def test_load_takes_the_npc_given_and_passes_over_one_the_save_has_not(evening_playthrough):
    s = Session()
    s.load(evening_playthrough, npc=9007199254740993)
    assert s.npc == 9007199254740993
    s.load(evening_playthrough, npc=12345)
    assert s.npc == 9


@pytest.mark.parametrize(("asked", "shown"), [(0, 0), (253, 253), (LAST, LAST), (LAST + 1, LAST), (U64_MAX, LAST), (-1, 0)])
def test_ticks_are_clamped_to_the_playthrough(evening_playthrough, asked, shown):
    s = Session()
    s.load(evening_playthrough, tick=asked)
    assert s.tick == shown
    s.set_tick(asked)
    assert s.tick == shown


def test_an_exact_load_refuses_a_tick_past_the_end_and_changes_nothing(evening_playthrough):
    s = Session()
    s.load(evening_playthrough, tick=LAST, exact=True)
    assert s.tick == LAST
    fresh = Session()
    with pytest.raises(TickOutOfRange) as caught:
        fresh.load(evening_playthrough, tick=U64_MAX, exact=True)
    assert (caught.value.tick, caught.value.last) == (U64_MAX, LAST)
    assert str(caught.value) == f"tick {U64_MAX} is beyond the save (its ticks run from 0 to {LAST})"
    assert fresh.playthrough is None and fresh.tick == 0


def test_set_tick_moves_previous_tick_and_sends_one_event(recorded):
    s, seen = recorded
    s.set_tick(253)
    s.set_tick(253)  # no move, no event
    assert seen == [ev.TickChanged(253)]
    assert (s.previous_tick, s.tick) == (LAST, 253)


def test_a_live_tick_is_only_previewed(recorded):
    s, seen = recorded
    s.set_tick(U64_MAX, live=True)
    assert seen == [ev.TickPreviewed(LAST)]
    assert s.tick == LAST


def test_npc_by_slug_and_require_npc(recorded):
    s, seen = recorded
    assert s.npc_by_slug("kael-davan") == 17 and s.npc_by_slug("nobody") is None
    assert s.require_npc("sera-venn") == 9007199254740993
    with pytest.raises(UnknownNpc) as caught:
        s.require_npc("nobody")
    assert caught.value.slug == "nobody"
    assert caught.value.known == ("kael-davan", "lera-sessik", "mira-holt", "orrin-vask", "sera-venn", "tobin-quill")
    s.go_to(npc="nobody", tick=0)  # an unknown slug is passed over; the tick still moves
    assert seen == [ev.TickChanged(0)] and s.npc == 9


def test_selection_events(recorded):
    s, seen = recorded
    s.set_npc(17)
    s.set_npc(17)
    s.set_fact("f1")
    s.explain("")
    s.explain("npc:kael-davan.score")
    s.set_view("prompt")
    s.select_line("l1")
    s.notify("hi")
    assert seen == [
        ev.NpcChanged(17), ev.FactChanged("f1"), ev.ExplainRequested("npc:kael-davan.score"), ev.ViewChanged("prompt"),
        ev.LineRequested("l1"), ev.DockRequested("monologues"), ev.Notice("hi"),
    ]


def test_select_entry_sets_the_tick_before_the_npc_event(recorded, evening_playthrough):
    s, seen = recorded
    npc = evening_playthrough.save.npc_of_entry(0)
    s.select_entry(0)
    order = [type(e) for e in seen]
    assert s.tick == 253 and s.journal_index == 0
    assert order[-1] is ev.JournalIndexChanged and ev.TickChanged(253) in seen
    if npc is not None and npc != 9:
        assert order.index(ev.NpcChanged) < order.index(ev.TickChanged)
    s.select_entry(10**9)  # outside the journal: nothing
    assert seen[-1] == ev.JournalIndexChanged(0)


def test_steps_go_to_the_next_event(recorded):
    s, seen = recorded
    s.set_tick(0)
    s.step_event()
    assert s.tick == 253 and s.event_ticks()[0] == 253
    assert s.next_event_tick(None, forward=False) is None


def test_unsubscribe_stops_events(evening_playthrough):
    s = Session()
    seen: list = []
    stop = s.subscribe(seen.append)
    stop()
    s.load(evening_playthrough)
    assert seen == []


def test_comparison_must_have_the_open_side_a(recorded, evening_playthrough):
    s, _ = recorded

    class Other:
        a = object()

    with pytest.raises(ValueError):
        s.set_comparison(Other())


def test_leaving_a_comparison_brings_the_tick_back_into_side_a(evening_playthrough):
    a = Playthrough.open(SAMPLES / "walkaway-spiral.json", CONTENT)  # last tick 37 113
    s = Session()
    s.load(a)
    s.set_comparison(compare(a, evening_playthrough))
    assert s.last_tick == LAST  # either side's range while comparing
    s.set_tick(U64_MAX)
    assert s.tick == LAST
    seen: list = []
    s.subscribe(seen.append)
    s.set_comparison(None)
    assert seen == [ev.ComparisonChanged(), ev.TickChanged(37_113)]
    assert (s.tick, s.previous_tick, s.last_tick) == (37_113, 37_113, 37_113)


def test_a_load_while_comparing_clamps_to_the_new_save(evening_playthrough):
    a = Playthrough.open(SAMPLES / "walkaway-spiral.json", CONTENT)
    s = Session()
    s.load(a)
    s.set_comparison(compare(a, evening_playthrough))
    seen: list = []
    s.subscribe(seen.append)
    s.load(a, tick=U64_MAX)  # B's longer range no longer counts
    assert s.tick == 37_113 and s.comparison is None
    assert seen == [ev.Loaded(), ev.CulpritChanged(None), ev.ComparisonChanged(), ev.NpcChanged(9), ev.TickChanged(37_113)]


def test_while_comparing_the_axis_starts_at_the_first_event_of_either_side(tmp_path):
    """Trial 49: A's events start at tick 1 000 201 and B's at 900 201. The time axes
    started at A's first event, so B's events before it fell in the lead-in left of it
    (which stands for tick 0) and off the timelines. While comparing, the axis starts at
    the earlier first event, by the same rule over both sides' range; leaving the
    comparison starts it at A's again."""
    from tests.test_widgets_u64_ticks import shifted_save

    a = Playthrough.open(shifted_save(tmp_path, "walkaway-spiral.json", 1_000_000)[0], CONTENT)
    b = Playthrough.open(shifted_save(tmp_path, "walkaway-spiral.json", 900_000)[0], CONTENT)
    assert (a.first_tick, b.first_tick, a.last_tick, b.last_tick) == (1_000_201, 900_201, 1_037_113, 937_113)
    s = Session()
    s.load(a)
    assert s.view_start == 1_000_201
    s.set_comparison(compare(a, b))
    assert s.view_start == 900_201
    s.set_comparison(None)
    assert s.view_start == 1_000_201
    # B ending far past A (at 1 902 029): over both sides' range, 900 201 is not far from 0.
    late = Playthrough.open(shifted_save(tmp_path, "evening.json", 1_600_000)[0], CONTENT)  # to 1 902 029
    s.load(b)
    s.set_comparison(compare(b, late))
    assert s.view_start == 0


def test_stepping_ticks_are_the_index_tick_objects(evening_playthrough):
    """The stepping data's tick lists point at the index's own int objects (no second
    int per entry: about 60 MB of a 1 000 000-entry save), with the same values."""
    play = evening_playthrough
    stepping = ev.prepare(play)
    own = {id(tick) for tick in play.index.ticks}
    large = [tick for tick in stepping.distinct if tick > 256]  # small ints are shared by CPython anyway
    assert large and stepping.distinct == sorted(set(play.index.ticks))
    assert all(id(tick) in own for tick in stepping.distinct)
    for name, ticks in stepping.ticks.items():
        assert ticks == [play.index.ticks[i] for i in stepping.indices[name]], name
        assert all(id(tick) in own for tick in ticks), name


def test_dialogue_stepping_indices_are_the_line_records_own(evening_playthrough):
    """The journal indices of the dialogue kind are the entries of that kind, and the
    indices of the replay's line records (held as columns, issue 37), in order."""
    play = evening_playthrough
    lines = ev.prepare(play).indices["dialogue"]
    records = play.index.dialogue
    assert lines == [i for i, kind in enumerate(play.index.kinds) if kind == "DialogueLine"] and max(lines) > 256
    assert lines == [record.index for record in records] and all(type(i) is int for i in lines)
    journal = play.save.journal
    assert all((r.tick, r.speaker, r.text) == (journal.ticks[r.index], journal.data[r.index].speaker, journal.data[r.index].text) for r in records)
    assert records[-1] == list(records)[-1] and records[1:3] == list(records)[1:3]
