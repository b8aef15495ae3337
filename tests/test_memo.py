"""The index's typed caches (models/timeline/memo.py): one value per key whoever fills
it first, kept with the index and freed with it (issue 37)."""

from __future__ import annotations

import threading

from tests.conftest import CONTENT, SAMPLES

from narrative_debugger.models.explain.tracks import TRACKS, track_for
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.event_kinds import EVENT_INDICES, EVENT_KINDS, EVENT_POSITIONS, event_indices
from narrative_debugger.models.timeline.index import TimelineIndex
from narrative_debugger.models.memo import Memo


def test_a_memo_keeps_the_first_value_published_and_tells_unmade_from_made():
    memo: Memo[str, list[int]] = Memo("demo", "name -> numbers")
    index = TimelineIndex()
    assert memo.get(index, "a") is None
    first, second = [1], [1]
    assert memo.publish(index, "a", first) is first
    # A thread that raced the first one made an equal value: it gets the one kept.
    assert memo.publish(index, "a", second) is first
    assert memo.get_or_make(index, "a", lambda: [2]) is first
    assert memo.get_or_make(index, "b", lambda: [3]) == [3]
    assert memo.replace(index, "a", second) is second and memo.get(index, "a") is second
    assert len(index.memos) == 2
    # Memos of one index are not another's.
    assert memo.get(TimelineIndex(), "a") is None


def test_threads_filling_the_same_memo_all_get_one_object():
    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    index, npc = play.index, next(iter(play.save.npcs))
    start = threading.Barrier(4)
    got: list[tuple] = []

    def fill() -> None:
        start.wait()
        got.append((event_indices(play.index, "dialogue"), event_indices(index, "threshold"), track_for(index, play.save.journal.data, npc, "score")))

    threads = [threading.Thread(target=fill) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 4
    for k in range(3):
        assert len({id(values[k]) for values in got}) == 1
    assert got[0][0] is EVENT_INDICES.get(index, "dialogue") and got[0][2] is TRACKS.get(index, (npc, "score"))
    assert got[0][0] == [i for i, kind in enumerate(index.kinds) if kind == "DialogueLine"] != []
    assert EVENT_POSITIONS.get(index, "dialogue").tolist() == got[0][0]
    assert all(EVENT_POSITIONS.get(index, name) is not None for name in EVENT_KINDS)
