"""Benchmark of the tick bar and the timelines on a large generated save.

Run from the repository root (offscreen is fine)::

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_timelines.py --events 1000000

The save is generated once (``tests.support.savegen``, scenario ``large``) and cached
under the system temp folder. Times are wall-clock; "tick change" includes the
paint of what it invalidated (pending events processed), so it is what a user
waits for; "full repaint" paints every pixel of both widgets for reference.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from narrative_debugger.models.playthrough import BUNDLED_CONTENT, Playthrough  # noqa: E402
from narrative_debugger.widgets.session import Session  # noqa: E402
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget  # noqa: E402


def _save_path(events: int, seed: int) -> Path:
    path = Path(tempfile.gettempdir()) / f"bench_timelines_{events}_{seed}.json.gz"
    if not path.exists():
        from tests.support.savegen.generator import generate_save, write_save

        started = time.perf_counter()
        write_save(generate_save(seed=seed, events=events, scenario="large"), path)
        print(f"generated {path.name} in {time.perf_counter() - started:.1f} s")
    return path


def synthetic_playthrough(events: int, npcs: int = 6, seed: int = 1) -> Playthrough:
    """A playthrough of ``events`` journal entries built straight into a TimelineIndex.

    Each entry changes one NPC (score random walk, stress); about 2 % are walk-aways
    (each with a penalty), 1 % confrontations. No replay, so it is quick to make.
    """
    from narrative_debugger.models.domain.types import InteractionTolerance, NpcState, Relationship, ToleranceThreshold
    from narrative_debugger.models.save.savefile import Journal, Save
    from narrative_debugger.models.timeline.index import TimelineIndex, Versions
    from sortedcontainers import SortedDict

    class Names:
        findings: list = []

        def npc_name(self, slug: str) -> str:
            return slug.replace("-", " ").title()

    rng = random.Random(seed)
    index = TimelineIndex()
    data = []
    ids = [9, 17, 42, 130, 1_000_003, 9_007_199_254_740_993][:npcs] + list(range(2000, 2000 + max(0, npcs - 6)))
    tolerance = InteractionTolerance(2, 0.3, 6, True)
    state = {sid: NpcState(sid, f"npc-{sid}", ToleranceThreshold(0, 40), tolerance) for sid in ids}
    for sid, npc in state.items():
        index.npcs[sid] = Versions(0, npc)
    score = {sid: rng.uniform(5, 60) for sid in ids}
    stress = {sid: 0 for sid in ids}
    tick = 0
    for position in range(1, events + 1):
        tick += rng.randint(0, 20)
        sid = rng.choice(ids)
        roll = rng.random()
        kind = "InteractionWalkedAway" if roll < 0.02 else "InteractionConfrontation" if roll < 0.03 else "RelationshipInteraction"
        score[sid] = min(100.0, max(0.0, score[sid] + rng.uniform(-1.5, 1.6) - (3 if roll < 0.02 else 0)))
        stress[sid] = max(0, stress[sid] + (6 if roll < 0.03 else -1))
        index.ticks.append(tick)
        index.kinds.append(kind)
        data.append({"target": sid})
        if kind == "InteractionWalkedAway":
            index.ticks.append(tick)
            index.kinds.append("WalkAwayPenalty")
            data.append({"target": sid})
        npc = NpcState(sid, f"npc-{sid}", ToleranceThreshold(stress[sid], 40), tolerance, Relationship(score=score[sid]))
        index.npcs[sid].set(len(index.ticks), npc)
        state[sid] = npc
    journal = Journal(list(index.ticks), list(index.kinds), data)
    save = Save(label=f"synthetic-{events}", saved_at_tick=tick, npcs=SortedDict(state), journal=journal)
    return Playthrough(save, Names(), index, [])


def _stats(name: str, samples: list[float]) -> None:
    ms = sorted(s * 1000 for s in samples)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"{name:<34} median {statistics.median(ms):8.2f} ms   p99 {p99:8.2f} ms   max {ms[-1]:8.2f} ms   (n={len(ms)})")


def _paint(*widgets) -> None:
    """Runs pending events, which paints what the change invalidated (as the event loop would)."""
    QApplication.processEvents()


def _full_repaint(*widgets) -> None:
    """Paints the whole of each widget synchronously (graphics views by their viewport)."""
    QApplication.processEvents()
    for widget in widgets:
        target = widget.viewport() if hasattr(widget, "viewport") else widget
        target.repaint()


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--save", type=Path, help="use this save instead of a generated one")
    parser.add_argument("--synthetic", action="store_true",
                        help="build the timeline directly (no generator, no replay) to time the widgets alone")
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args(argv)

    app = QApplication.instance() or QApplication([])
    from narrative_debugger.widgets.tickbar.bar import TickBar
    from narrative_debugger.widgets.timelines.tracks import build_tracks
    from narrative_debugger.widgets.timelines.view import TimelinesView

    started = time.perf_counter()
    if args.synthetic:
        playthrough = synthetic_playthrough(args.events)
        what = "synthetic timeline built"
    else:
        playthrough = Playthrough.open(args.save or _save_path(args.events, args.seed), BUNDLED_CONTENT)
        what = "open (read + replay + checks)"
    print(f"{what:<40} {time.perf_counter() - started:8.2f} s   "
          f"{len(playthrough.index.ticks):,} entries, last tick {playthrough.last_tick:,}")
    print(f"build_tracks alone (numpy arrays)        {_timed(lambda: build_tracks(playthrough, playthrough.last_tick)):8.2f} s")

    session = Session()
    window = QWidget()
    layout = QVBoxLayout(window)
    view, bar = TimelinesView(session), TickBar(session)
    layout.addWidget(view, 1)
    layout.addWidget(bar)
    window.resize(1400, 800)
    window.show()
    app.processEvents()

    load = _timed(lambda: session.load(playthrough))
    first_paint = _timed(lambda: _full_repaint(view.graphics, bar))
    print(f"session.load with both widgets           {load:8.2f} s")
    print(f"first paint                              {first_paint:8.2f} s")
    points = sum(len(t.score.x) + len(t.stress.x) for t in view.tracks.values())
    markers = sum(len(m) for t in view.tracks.values() for m in t.markers.values())
    print(f"{len(view.tracks)} NPC curves, {points:,} step points (score + stress), {markers:,} marker events")

    rng = random.Random(1)
    last = session.last_tick

    def tick_change():
        session.set_tick(rng.randrange(last + 1))
        _paint(view.graphics, bar)

    def tick_preview():
        session.set_tick(rng.randrange(last + 1), live=True)
        _paint(view.graphics, bar)

    npcs = list(view.tracks)

    def npc_change():
        session.set_npc(rng.choice(npcs))
        _paint(view.graphics)

    def pan():
        width = last / 20
        start = rng.uniform(0, last - width)
        view.score_plot.setXRange(start, start + width, padding=0)
        _paint(view.graphics)

    def full_repaint():
        _full_repaint(view.graphics, bar)

    def full_range():
        view.score_plot.setXRange(0, last * rng.uniform(0.9, 1.0), padding=0)
        _paint(view.graphics)

    def hover():
        plot = view.score_plot
        rect = plot.vb.sceneBoundingRect()
        from PySide6.QtCore import QPointF

        view._on_mouse_moved((QPointF(rng.uniform(rect.left(), rect.right()), rng.uniform(rect.top(), rect.bottom())),))

    for name, fn, n in (("tick change (committed + repaint)", tick_change, args.repeats),
                        ("tick preview (live + repaint)", tick_preview, args.repeats),
                        ("hover readout", hover, args.repeats),
                        ("NPC change (+ repaint)", npc_change, max(20, args.repeats // 5)),
                        ("pan 1/20 of the range (+ repaint)", pan, max(20, args.repeats // 5)),
                        ("full range (+ repaint)", full_range, max(10, args.repeats // 10)),
                        ("full repaint of both widgets", full_repaint, max(10, args.repeats // 10))):
        fn()  # warm up
        _stats(name, [_timed(fn) for _ in range(n)])
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
