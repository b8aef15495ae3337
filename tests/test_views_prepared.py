"""Work that grows with the save is prepared off the GUI thread, and a crowd of NPCs
draws only the curves it shows (issue 10)."""

from __future__ import annotations

import gc
import json
import threading
from collections import Counter
from html import escape

import pytest
from tests.conftest import CONTENT, SAMPLES

pytest.importorskip("pyqtgraph")

from narrative_debugger.models.playthrough import Playthrough  # noqa: E402
from narrative_debugger.models.session import Stepping  # noqa: E402
from narrative_debugger.models.timeline.event_kinds import EVENT_KINDS  # noqa: E402
from narrative_debugger.models.timeline.index import INTERACTION_SERIES, NPC_MOVES  # noqa: E402
from narrative_debugger.widgets import session as session_module  # noqa: E402
from narrative_debugger.widgets.docks.journal import JournalKinds, JournalNpcRows  # noqa: E402
from narrative_debugger.widgets.docks.monologues import FiredByLine  # noqa: E402
from narrative_debugger.widgets.docks.npc_list import NpcChanges  # noqa: E402
from narrative_debugger.widgets.docks.snapshot import SnapshotRows  # noqa: E402
from narrative_debugger.widgets.kit.prepared import Prepared  # noqa: E402
from narrative_debugger.widgets.knowledge.fact_keys import FactOrder, SavedFactKeys  # noqa: E402
from narrative_debugger.widgets.registry import preparers  # noqa: E402
from narrative_debugger.widgets.session import NpcNames, Session  # noqa: E402
from narrative_debugger.widgets.tickbar.bar import TickLanes  # noqa: E402
from narrative_debugger.widgets.timelines.tracks import MAX_CURVES, FirstTracks, build_tracks  # noqa: E402
from narrative_debugger.widgets.timelines.view import TimelinesView  # noqa: E402


@pytest.fixture(scope="module")
def crowd(tmp_path_factory):
    """A generated save with 40 NPCs and its content folder."""
    from tests.support.savegen.crowd import crowd_content
    from tests.support.savegen.generator import generate_save, write_save

    folder = tmp_path_factory.mktemp("crowd")
    content = crowd_content(40, folder / "content")
    write_save(generate_save(seed=4, events=6000, scenario="large", content_dir=content), folder / "crowd.json")
    return Playthrough.open(folder / "crowd.json", content)


def test_event_ticks_are_the_entries_of_those_kinds(evening_playthrough):
    index = evening_playthrough.index
    for kinds in EVENT_KINDS.values():
        assert index.event_ticks(kinds) == [index.ticks[i] for i, k in enumerate(index.kinds) if k in kinds]


def test_the_loader_prepares_session_and_timelines(qtbot, open_window, isolated_settings, monkeypatch):
    window = open_window(size=None)
    computed_on_gui_thread = []
    real = session_module.prepare
    monkeypatch.setattr(session_module, "prepare", lambda play, *rest: computed_on_gui_thread.append(threading.current_thread() is threading.main_thread()) or real(play, *rest))
    from narrative_debugger.widgets.docks import npc_list

    changes_on_gui_thread = []  # the NPC dock's own fallback, when the loader's is missing
    real_changes = npc_list.prepare
    monkeypatch.setattr(npc_list, "prepare", lambda p, *rest: (threading.current_thread() is threading.main_thread()
                                                               and changes_on_gui_thread.append(p)) or real_changes(p, *rest))
    window.open_save(SAMPLES / "evening.json", wait=True)
    play, prepared = window.session.playthrough, window.session.prepared
    assert all(kind in prepared for kind in (Stepping, NpcNames, TickLanes, FirstTracks, SnapshotRows, FactOrder, FiredByLine, JournalKinds, JournalNpcRows, NpcChanges))
    assert computed_on_gui_thread == []  # the open's child process made it: the window computes none of it
    fresh = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    stepping = real(fresh)
    ticks, distinct = stepping.ticks, stepping.distinct
    assert window.session.event_ticks() == distinct == sorted(set(fresh.index.ticks))
    for name in EVENT_KINDS:
        assert window.session.event_ticks(name) == ticks[name]
    assert len(preparers()) == 12 and len(preparers(checked=False)) + len(preparers(checked=True)) == 12
    # Each NPC's interaction aggregates and move tables were made by the loader too.
    assert all(INTERACTION_SERIES.get(play.index, sid) is not None and NPC_MOVES.get(play.index, sid) is not None for sid in play.save.npcs)
    assert changes_on_gui_thread == []  # the NPC dock reads the loader's npc_changes
    # The tick bar's lanes are the loader's arrays (not converted and sorted on the GUI thread).
    lanes = {label: ticks for label, _, ticks in window.tickbar.track.lanes}
    assert lanes["Walk-away"] is prepared.get(TickLanes).lanes["walk-away"]
    assert lanes["Walk-away"].tolist() == ticks["walk-away"]
    # The Journal's event filter reads the loader's count (not one made on the GUI thread).
    assert prepared.get(JournalKinds).counts == Counter(fresh.save.journal.kinds)
    assert window.docks["journal"].widget().model.kind_counts() is prepared.get(JournalKinds).counts
    # Its NPC filter reads the loader's rows, made after the first paint with the checks.
    npc_rows = prepared.get(JournalNpcRows)
    journal = window.docks["journal"].widget()
    journal.npc_filter.setChecked(True)
    assert journal.model.rowCount() == len(npc_rows.rows_of_npc[window.session.npc]) > 0
    assert prepared.get(JournalNpcRows) is npc_rows


def test_a_crowd_draws_the_first_curves_and_the_selected_npc(qtbot, crowd):
    session = Session()
    view = TimelinesView(session)
    qtbot.addWidget(view)
    session.load(crowd)
    npcs = sorted(crowd.index.npcs)
    assert len(npcs) == 40
    assert list(view.curves) == npcs[:MAX_CURVES]
    assert "30 more NPCs" in view.legend.text()
    far = npcs[33]
    session.set_npc(far)
    # Drawn (and named in the legend) while it is selected, by its layer alone.
    assert list(view.curves) == npcs[:MAX_CURVES] and view.layer.npc == far
    assert view.layer.shown and len(view.layer.score.getOriginalDataset()[0])
    assert f"<b>{escape(view.tracks[far].name)}</b>" in view.legend.text() and "29 more NPCs" in view.legend.text()
    session.set_npc(npcs[0])
    assert "30 more NPCs" in view.legend.text() and not view.layers[far].shown
    (full,) = [t for t in build_tracks(crowd, crowd.last_tick, view.origin) if t.stable_id == far]
    track = view.tracks[far]
    assert track.colour == full.colour
    assert json.dumps(track.score.y.tolist()) == json.dumps(full.score.y.tolist())
    assert track.stress.x.tolist() == full.stress.x.tolist()
    assert all((track.markers[k] == full.markers[k]).all() for k in full.markers)


def test_the_snapshot_dock_uses_the_prepared_rows_even_when_empty(qtbot, evening_playthrough, monkeypatch):
    from narrative_debugger.widgets.docks import snapshot as snapshot_view

    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    rows = snapshot_view.prepare(play)
    assert rows.rows == []  # a clean sample: nothing differs
    monkeypatch.setattr(snapshot_view, "snapshot_rows", lambda p: pytest.fail("computed on the GUI thread"))
    session = Session()
    dock = snapshot_view.SnapshotView(session)
    qtbot.addWidget(dock)
    dock.show()
    session.load(play, prepared=Prepared(rows))
    assert "equals the journal" in dock.caption.text()


def test_the_knowledge_keys_at_the_saved_tick_are_prepared_sorted(qtbot, monkeypatch):
    from narrative_debugger.widgets.knowledge import fact_keys
    from narrative_debugger.widgets.knowledge.view import KnowledgeView

    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    order, saved = fact_keys.prepare(play)
    tracker = saved.tracker
    facts = play.state_at(play.save.saved_at_tick).knowledge.facts
    assert tracker.order is order.order == list(play.index.facts) and list(tracker.keys) == sorted(facts) and tracker.count == len(facts)
    from narrative_debugger.widgets.knowledge import view as knowledge_view

    sorted_here = []  # the keys a view sorts itself (FactKeysAt) instead of taking the prepared ones
    real_keys = knowledge_view.FactKeysAt
    monkeypatch.setattr(knowledge_view, "FactKeysAt", lambda *a, **k: sorted_here.append(1) or real_keys(*a, **k))
    session = Session()
    view = KnowledgeView(session)
    qtbot.addWidget(view)
    prepared = Prepared(order, saved)
    session.load(play, prepared=prepared)
    assert sorted_here == []  # taken, not sorted again on the GUI thread
    assert SavedFactKeys not in prepared and prepared.get(FactOrder) is order
    assert [view.model.fact_id(r) for r in range(view.model.rowCount())] == sorted(facts)
    other = KnowledgeView(session)  # a second view sorts its own
    qtbot.addWidget(other)
    assert sorted_here == [1]
    assert [other.model.fact_id(r) for r in range(other.model.rowCount())] == sorted(facts)


@pytest.mark.parametrize("saved_at", ["last", "middle"])
def test_the_prepared_keys_are_those_at_the_saved_tick_with_all_facts_or_some(monkeypatch, saved_at):
    """Every fact exists at the saved tick (the usual save): the keys are the replay's,
    already sorted. A save whose journal runs past its saved tick (J002) has fewer:
    they are sorted here, in runs."""
    from narrative_debugger.widgets.knowledge import fact_keys

    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    if saved_at == "middle":
        ticks = play.index.ticks
        monkeypatch.setattr(play.save, "saved_at_tick", ticks[len(ticks) // 2])
    facts = play.state_at(play.save.saved_at_tick).knowledge.facts
    assert (len(facts) == len(play.index.facts)) == (saved_at == "last")
    _, saved = fact_keys.prepare(play)
    tracker = saved.tracker
    assert list(tracker.keys) == sorted(facts) and tracker.count == len(facts)
    assert tracker.take_list() == sorted(facts)


def _reachable(root) -> list:
    """Every object reachable from ``root`` through its data (``gc.get_referents``),
    not through classes, modules or functions (they lead to everything)."""
    import types

    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType)
    seen, out, stack = {id(root)}, [], [root]
    while stack:
        obj = stack.pop()
        out.append(obj)
        for ref in gc.get_referents(obj):
            if id(ref) not in seen and not isinstance(ref, skip):
                seen.add(id(ref))
                stack.append(ref)
    return out


def test_no_model_object_holds_a_qt_object_after_a_load(qtbot, open_window, isolated_settings):
    """What the views prepare (a timeline track's QColor, say) is the widgets' own: the
    playthrough, its save and its index hold no Qt object once the window shows it (issue 37)."""
    from shiboken6 import Shiboken

    window = open_window(size=None)
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    play, prepared = window.session.playthrough, window.session.prepared
    window.session.set_npc(next(iter(play.save.npcs)))  # the views read their NPC tables and caches
    assert FirstTracks in prepared and len(play.index.memos) > 0
    qt_held = [o for o in _reachable(play) if isinstance(o, Shiboken.Object)]
    assert qt_held == []
    assert not hasattr(play, "derived")
    # The check can fail: the views' prepared data does hold Qt objects.
    assert any(isinstance(o, Shiboken.Object) for o in _reachable(prepared.get(FirstTracks)))


def test_the_prepared_container_keeps_one_entry_of_each_type_and_frees_in_steps():
    play = Playthrough.open(SAMPLES / "qa-faults.json", CONTENT)
    prepared = Prepared()
    for prepare in preparers():
        made = prepare(play, prepared)
        for entry in made if isinstance(made, tuple) else (made,):
            prepared.add(entry)
    kinds = (Stepping, NpcNames, TickLanes, FirstTracks, SnapshotRows, FactOrder, SavedFactKeys, FiredByLine, JournalKinds, JournalNpcRows, NpcChanges)
    assert len(prepared) == len(kinds) and all(kind in prepared for kind in kinds)
    assert isinstance(prepared.get(NpcNames), NpcNames) and prepared.get(int) is None
    names = prepared.get(NpcNames).names
    assert names == {sid: play.npc_name(sid) for sid in play.save.npcs}
    prepared.add(NpcNames({}))  # one of each type: a new one replaces it
    assert prepared.get(NpcNames).names == {} and len(prepared) == len(kinds)
    prepared.add(None)
    assert len(prepared) == len(kinds)
    with pytest.raises(AttributeError):
        prepared.get(FactOrder).order = []  # frozen
    saved = prepared.take(SavedFactKeys)
    assert saved is not None and prepared.take(SavedFactKeys) is None
    # The tick bar made its lanes from the session's stepping data, not anew.
    stepping = prepared.get(Stepping)
    assert prepared.get(TickLanes).lanes["interaction"].tolist() == stepping.ticks["interaction"] != []
    order, distinct = prepared.get(FactOrder).order, stepping.distinct
    assert order and distinct
