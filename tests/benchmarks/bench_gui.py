"""Benchmark of the desktop app on a generated save (prints figures; not a test).

Usage: QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_gui.py [--events 1000000] [--steps 300] [--save PATH]

Prints: time to first paint (open in the worker + first full paint), median and p99
time of one tick-bar step with every visible view refreshed and repainted (goal p99
under 50 ms), the prompt preview's latency after a step (computed off the GUI
thread), the same step with the Explain dock open (its answer is computed off the GUI
thread) and with all four views visible at once, and peak memory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from figures import peak_rss_mb, percentile  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.support.savegen.generator import generate_save, write_save  # noqa: E402


def steps(window, n: int) -> tuple[list[float], list[float]]:
    """Step n events forward; time each synchronous refresh + repaint, and the prompt latency."""
    step_ms, prompt_ms = [], []
    prompt = window.views["prompt"]
    session = window.session
    for _ in range(n):
        t0 = time.perf_counter()
        window.tickbar.next_action.trigger()
        QApplication.processEvents()
        window.repaint()
        step_ms.append((time.perf_counter() - t0) * 1000)
        deadline = time.perf_counter() + 5
        while time.perf_counter() < deadline:
            current = prompt.current_preview
            if current is not None and current.tick == session.tick:
                break
            QApplication.processEvents()
            time.sleep(0.0005)
        prompt_ms.append((time.perf_counter() - t0) * 1000)
    return step_ms, prompt_ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--save", type=Path, help="use this save (generated there when missing)")
    args = parser.parse_args()
    path = args.save or Path(tempfile.mkdtemp()) / f"bench-gui-{args.events}.json"
    if not path.exists():
        write_save(generate_save(seed=11, events=args.events, scenario="large"), path)
    from narrative_debugger.app.window.main_window import MainWindow, make_app

    app = make_app()
    app.setApplicationName("narrative-debugger-bench")
    t0 = time.perf_counter()
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    window.open_save(path, wait=True)
    QApplication.processEvents()
    window.repaint()
    first_paint = time.perf_counter() - t0
    print(f"save: {path.name} ({path.stat().st_size / 1e6:.0f} MB, {len(window.session.playthrough.save.journal)} journal entries)")
    print(f"time to first paint (open in the worker + first full paint): {first_paint:.2f} s")
    # Start in the middle of the playthrough, where the state is large.
    window.session.set_tick(window.session.last_tick // 2)
    QApplication.processEvents()
    for view in ("knowledge", "timelines", "interactions", "prompt"):
        window.session.set_view(view)
        step_ms, prompt_ms = steps(window, args.steps)
        print(
            f"one tick-bar step, {view:12} in front: median {statistics.median(step_ms):6.1f} ms, p99 {percentile(step_ms, 0.99):6.1f} ms (goal p99 < 50 ms); "
            f"prompt preview ready after median {statistics.median(prompt_ms):.1f} ms"
        )
    # The Explain dock open on the selected NPC's score: it re-explains off the GUI thread at each step.
    session = window.session
    slug = session.playthrough.save.npcs[session.npc].slug
    session.set_view("timelines")
    session.explain(f"npc:{slug}.score")
    explain = window.panels["explain"][0]
    step_ms, explain_ms = [], []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        window.tickbar.next_action.trigger()
        QApplication.processEvents()
        window.repaint()
        step_ms.append((time.perf_counter() - t0) * 1000)
        deadline = time.perf_counter() + 5
        while time.perf_counter() < deadline and (explain.explanation is None or explain.explanation.tick != session.tick):
            QApplication.processEvents()
            time.sleep(0.0005)
        explain_ms.append((time.perf_counter() - t0) * 1000)
    print(
        f"one tick-bar step with the Explain dock open on npc:{slug}.score: median {statistics.median(step_ms):.1f} ms, "
        f"p99 {percentile(step_ms, 0.99):.1f} ms (goal p99 < 50 ms); explanation ready after median {statistics.median(explain_ms):.1f} ms, "
        f"p99 {percentile(explain_ms, 0.99):.1f} ms"
    )
    window.set_grid(True)
    step_ms, prompt_ms = steps(window, args.steps)
    print(f"one tick-bar step, all four views visible: median {statistics.median(step_ms):.1f} ms, p99 {percentile(step_ms, 0.99):.1f} ms")
    print(f"peak memory (max RSS): {peak_rss_mb():.0f} MB")
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
