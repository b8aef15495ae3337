"""Opening and stepping large saves: the figures of issue 10 (prints figures; not a test).

Usage (from the checkout, offscreen is fine)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_open.py
    ... bench_open.py --saves 6 --scaling ""      # one save, no scaling table
    ... bench_open.py --saves "" --scaling 10000,100000,1000000
    ... bench_open.py --no-gui                    # load figures only

Saves are generated once by ``tests.support.savegen`` (scenario ``large``, seed 11)
with 3, 6, 300 and 3 000 NPCs and cached under the temp folder (``saves.py``).
Each measurement runs in a fresh child process, and each child times a bare
``json.load`` of the same file first: every ratio's denominator comes from the same
process and moment, because the 2-core machine is shared and timings drift.

Figures, per save:
- load: ``state --tick T`` (T = half of saved_at_tick) and ``check --format json``,
  each the wall time of a process of its own, from its start to its exit, started by
  a child right after that child timed ``json.load`` (output discarded), as ratios to
  that ``json.load`` (goal <= 1.5); peak memory (VmHWM)
  of a child that only opens the save and reads one state (goal <= 1 GB).
- window: time to first paint at saved_at_tick with stepping possible (the end of the
  event-loop pass in which the window, with the new save in its session, painted), as a ratio
  to ``json.load`` (goal <= 1.5); the longest GUI event-loop stall from the open to
  the end of background work, seen by a 5 ms QTimer (goal <= 50 ms), in that process
  and in a cold one (a child whose first work is the open: the bare ``json.load``
  before it warmed the memory the load takes, and hid stalls a user's first open
  has); one tick step
  (next event, refreshed and repainted) p50/p99 with each view in front (goal p99 <=
  16 ms) and with all four (goal <= 33 ms), timed until the event loop has run the
  refresh and painted what it invalidated, also apart for the steps that kept the NPC
  and those that selected another one ("next event" selects the event's NPC); a drag preview frame p99 with all four
  views (goal <= 16 ms); the prompt preview ready after a step, p50/p99 (goal <= 50 ms).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from figures import peak_rss_mb, percentile, reset_peak_rss  # noqa: E402
from saves import bench_save  # noqa: E402

VIEWS = ("knowledge", "interactions", "timelines", "prompt")


def _bare_json_load(path: Path) -> float:
    gc.collect()
    started = time.perf_counter()
    with open(path, "rb") as fh:
        doc = json.load(fh)
    elapsed = time.perf_counter() - started
    del doc
    gc.collect()
    return elapsed


def _run_cli(argv: list[str]) -> tuple[float, int]:
    """The wall time and exit status of the command as a user runs it: a process of
    its own from start to exit (``python -m narrative_debugger.app``, output discarded)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - started, done.returncode


# ----- children (each prints one JSON line) -----
def child_state(path: Path, content: Path, steps: int = 0) -> dict:
    bare = _bare_json_load(path)
    # The tick: half of saved_at_tick, read from the file's head without a full parse.
    head = path.read_bytes()[:400].decode("utf-8", "replace")
    at = head.find('"saved_at_tick":')
    tick = int(head[at + 16 : head.find(",", at)]) // 2 if at >= 0 else 0
    gc.collect()
    state_s, state_code = _run_cli(["state", str(path), "--tick", str(tick), "--content", str(content)])
    return {"json_load": bare, "state": state_s, "state_exit": state_code}


def child_check(path: Path, content: Path, steps: int = 0) -> dict:
    bare = _bare_json_load(path)
    gc.collect()
    check_s, check_code = _run_cli(["check", str(path), "--content", str(content), "--format", "json"])
    return {"json_load": bare, "check": check_s, "check_exit": check_code}


def child_memory(path: Path, content: Path, steps: int = 0) -> dict:
    from narrative_debugger.models.playthrough import Playthrough

    play = Playthrough.open(path, content)
    state = play.state_at(play.last_tick // 2)
    state.npcs
    len(state.knowledge.facts)
    return {"peak_mb": peak_rss_mb()}


def child_gui(path: Path, content: Path, steps: int, cold: bool = False) -> dict:
    """The window's figures. ``cold``: the open is the process's first work, as a user's
    first open after starting the app: no ``json.load`` before it has touched (and
    freed) the memory the load then takes; only the open's figures are measured."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    bare = None if cold else _bare_json_load(path)
    gc.collect()
    peak_reset = reset_peak_rss()  # the window's own peak, not the bare load's objects
    from narrative_debugger.app.window.main_window import MainWindow, make_app
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    app = make_app()
    app.setApplicationName("narrative-debugger-bench")
    window = MainWindow(persist=False)
    window.resize(1600, 1000)
    window.show()
    app.processEvents()

    # The stall probe: a 5 ms timer on the GUI thread; the longest gap between its
    # ticks is the longest time the event loop could not run.
    gaps = {"last": time.perf_counter(), "max": 0.0, "at": 0.0}

    def probe():
        now = time.perf_counter()
        if now - gaps["last"] > gaps["max"]:
            gaps["max"], gaps["at"] = now - gaps["last"], gaps["last"]
        gaps["last"] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(probe)

    def background_busy() -> bool:
        busy = getattr(window, "background_busy", None)
        return bool(busy()) if callable(busy) else False

    loop = QEventLoop()
    marks: dict[str, float] = {}
    old = window.session.playthrough

    class PaintSeen(QObject):
        """Notes the first paint of the central area (the tick bar in it) once the new
        save is in the session. The window paints itself, its central area one pass
        after the save arrives; a forced ``repaint()`` here was a second full paint of
        every widget, a stall of the bench's own making."""

        def eventFilter(self, watched, event):  # noqa: N802 (Qt override)
            if (event.type() == QEvent.Paint and "painting" not in marks
                    and window.session.ready and window.session.playthrough is not old):
                marks["painting"] = time.perf_counter()
            return False

    paint_seen = PaintSeen()
    window.tickbar.installEventFilter(paint_seen)

    def poll():
        now = time.perf_counter()
        if "paint" not in marks and "painting" in marks:
            marks["paint"] = now  # the pass that painted has ended: an upper bound, within 5 ms
        if "paint" in marks and not window.loader.busy and not background_busy():
            marks.setdefault("idle", now)
            if now - marks["idle"] > 0.3:
                loop.quit()

    poller = QTimer()
    poller.setInterval(5)
    poller.timeout.connect(poll)
    started = time.perf_counter()
    gaps["last"] = started
    timer.start()
    poller.start()
    window.open_save(path, content)
    loop.exec()
    timer.stop()
    poller.stop()
    window.tickbar.removeEventFilter(paint_seen)
    first_paint = marks["paint"] - started
    background = marks["idle"] - started
    out = {"json_load": bare, "first_paint": first_paint, "background_done": background, "max_stall": gaps["max"],
           "max_stall_at": gaps["at"] - started}
    if cold:
        window.close()
        return out

    session = window.session
    session.set_tick(session.last_tick // 2)
    app.processEvents()
    prompt = window.views["prompt"]

    waiting = QEventLoop()

    def preview_ready(preview) -> None:
        if preview.tick == session.tick:
            waiting.quit()

    prompt.previewReady.connect(preview_ready)
    give_up = QTimer()
    give_up.setInterval(5000)
    give_up.timeout.connect(waiting.quit)
    give_up.start()

    def step_series(n: int, other_npc: list[bool] | None = None) -> tuple[list[float], list[float]]:
        step_ms, prompt_ms = [], []
        for _ in range(n):
            npc = session.npc
            t0 = time.perf_counter()
            window.tickbar.next_action.trigger()
            QApplication.processEvents()  # runs the refresh and paints what it invalidated
            step_ms.append((time.perf_counter() - t0) * 1000)
            if other_npc is not None:
                other_npc.append(session.npc != npc)  # the step selected the event's other NPC
            current = prompt.current_preview
            if current is None or current.tick != session.tick:
                # Wait in the event loop, as the window does between steps: a loop that
                # spun on processEvents kept the GUI thread busy, and the preview's
                # worker gives way to a busy GUI thread (``gil_slices.give_way``).
                waiting.exec()
            prompt_ms.append((time.perf_counter() - t0) * 1000)
        return step_ms, prompt_ms

    def split(step_ms: list[float], other_npc: list[bool]) -> dict:
        """p50/p99 of the steps that kept the NPC and of those that selected another."""
        kinds = {}
        for name, wanted in (("same_npc", False), ("other_npc", True)):
            values = [ms for ms, other in zip(step_ms, other_npc) if other == wanted]
            kinds[name] = (len(values), statistics.median(values), percentile(values, 0.99)) if values else (0, 0.0, 0.0)
        return kinds

    prompt_all: list[float] = []
    for view in VIEWS:
        session.set_view(view)
        app.processEvents()
        step_series(3)  # warm up
        other_npc: list[bool] = []
        step_ms, prompt_ms = step_series(steps, other_npc)
        out[f"step_{view}"] = (statistics.median(step_ms), percentile(step_ms, 0.99))
        out[f"kinds_{view}"] = split(step_ms, other_npc)
        prompt_all += prompt_ms
    out["prompt_ready"] = (statistics.median(prompt_all), percentile(prompt_all, 0.99))
    window.set_grid(True)
    app.processEvents()
    step_series(3)
    other_npc = []
    step_ms, prompt_ms = step_series(steps, other_npc)
    out["step_all"] = (statistics.median(step_ms), percentile(step_ms, 0.99))
    out["kinds_all"] = split(step_ms, other_npc)
    # A drag: live previews across a tenth of the range, all four views visible.
    last = session.last_tick
    frames = []
    for k in range(steps):
        t0 = time.perf_counter()
        session.set_tick(last // 2 + k * max(1, last // (10 * steps)), live=True)
        QApplication.processEvents()
        frames.append((time.perf_counter() - t0) * 1000)
    out["drag"] = (statistics.median(frames), percentile(frames, 0.99))
    out["peak_mb"] = peak_rss_mb()
    out["peak_reset"] = peak_reset
    window.close()
    return out


def child_cold(path: Path, content: Path, steps: int) -> dict:
    return child_gui(path, content, steps, cold=True)


CHILDREN = {"state": child_state, "check": child_check, "memory": child_memory, "gui": child_gui, "cold": child_cold}


def _child(kind: str, path: Path, content: Path, steps: int) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, str(path), str(content), str(steps)]
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        return {"error": f"child {kind} exited {done.returncode}"}
    return json.loads(lines[-1])


def _ratio(value, bare) -> str:
    return f"{value:6.2f} s ({value / bare:4.2f}x)" if value is not None else "-"


def measure(npcs: int, events: int, steps: int, gui: bool) -> dict:
    path, content = bench_save(npcs, events)
    result = {"npcs": npcs, "events": events, "mb": path.stat().st_size / 1e6}
    # state and check each in a fresh process, each beside its own json.load.
    result["state"] = _child("state", path, content, steps)
    result["check"] = _child("check", path, content, steps)
    result["memory"] = _child("memory", path, content, steps)
    if gui:
        result["cold"] = _child("cold", path, content, steps)
        result["gui"] = _child("gui", path, content, steps)
    return result


def report(r: dict) -> None:
    mem, g = r["memory"], r.get("gui")
    print(f"\n== {r['events']:,} events, {r['npcs']:,} NPCs ({r['mb']:.0f} MB) ==")
    for name, what in (("state", "state --tick T"), ("check", "check --format json")):
        m = r[name]
        if "error" in m:
            print(f"  {what}: {m['error']}")
        else:
            print(f"  {what:20} {_ratio(m[name], m['json_load'])} exit {m[name + '_exit']}; bare json.load {m['json_load']:.2f} s in that process   (goal <= 1.5x)")
    print(f"  peak memory of an open: {mem.get('peak_mb', float('nan')):.0f} MB (goal <= 1024)")
    if g is None:
        return
    if "error" in g:
        print(f"  window: {g['error']}")
        return
    bare = g["json_load"]
    print(f"  window (json.load {bare:.2f} s in that process): first paint {_ratio(g['first_paint'], bare)} (goal <= 1.5x); "
          f"background work done {g['background_done']:.2f} s; longest event-loop stall {g['max_stall'] * 1000:.0f} ms "
          f"(goal <= 50), from {g['max_stall_at']:.2f} s")
    c = r.get("cold") or {}
    if "error" in c:
        print(f"  cold open: {c['error']}")
    elif c:
        print(f"  cold open (the process's first work, no json.load before it): first paint {c['first_paint']:.2f} s; "
              f"background work done {c['background_done']:.2f} s; longest event-loop stall {c['max_stall'] * 1000:.0f} ms "
              f"(goal <= 50), from {c['max_stall_at']:.2f} s")

    def kinds(name: str) -> str:
        parts = []
        for kind, label in (("same_npc", "same NPC"), ("other_npc", "another NPC")):
            n, p50, p99 = g[f"kinds_{name}"][kind]
            parts.append(f"{label}: {n} steps, p50 {p50:.1f} p99 {p99:.1f}" if n else f"{label}: no step")
        return "   [" + "; ".join(parts) + "]"

    for view in VIEWS:
        p50, p99 = g[f"step_{view}"]
        print(f"  step, {view:12} in front: p50 {p50:6.1f} ms  p99 {p99:6.1f} ms (goal <= 16){kinds(view)}")
    p50, p99 = g["step_all"]
    print(f"  step, all four views:        p50 {p50:6.1f} ms  p99 {p99:6.1f} ms (goal <= 33){kinds('all')}")
    p50, p99 = g["drag"]
    print(f"  drag preview frame:          p50 {p50:6.1f} ms  p99 {p99:6.1f} ms (goal <= 16)")
    p50, p99 = g["prompt_ready"]
    print(f"  prompt preview ready:        p50 {p50:6.1f} ms  p99 {p99:6.1f} ms (goal <= 50)")
    since = "after its bare json.load" if g.get("peak_reset") else "including its bare json.load"
    print(f"  peak memory of the window process ({since}): {g['peak_mb']:.0f} MB (goal <= 1024)")


def scaling_table(rows: list[dict]) -> None:
    print("\n== scaling (6 NPCs) ==")
    head = ("events", "MB", "json.load", "state x", "check x", "peak MB", "paint x", "stall ms", "cold stall ms", "step all p99", "drag p99", "prompt p99")
    print(" | ".join(head))
    for r in rows:
        st, ch, mem, g, c = r["state"], r["check"], r["memory"], r.get("gui") or {}, r.get("cold") or {}
        bare = st.get("json_load", float("nan"))
        cells = [f"{r['events']:,}", f"{r['mb']:.0f}", f"{bare:.2f} s", f"{st.get('state', 0) / bare:.2f}",
                 f"{ch.get('check', 0) / ch.get('json_load', float('nan')):.2f}", f"{mem.get('peak_mb', 0):.0f}"]
        if "first_paint" in g:
            cold = f"{c['max_stall'] * 1000:.0f}" if "max_stall" in c else "-"
            cells += [f"{g['first_paint'] / g['json_load']:.2f}", f"{g['max_stall'] * 1000:.0f}", cold, f"{g['step_all'][1]:.1f} ms",
                      f"{g['drag'][1]:.1f} ms", f"{g['prompt_ready'][1]:.1f} ms"]
        print(" | ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", default="3,6,300,3000", help="NPC counts of the 1M-event saves (comma list; empty for none)")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--scaling", default="10000,100000,1000000", help="event counts for the scaling table (6 NPCs)")
    parser.add_argument("--steps", type=int, default=100, help="steps per view")
    parser.add_argument("--no-gui", action="store_true")
    parser.add_argument("--child", nargs=4, metavar=("KIND", "SAVE", "CONTENT", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, save, content, steps = args.child
        print(json.dumps(CHILDREN[kind](Path(save), Path(content), int(steps))))
        return 0
    print(f"machine: {os.cpu_count()} cores; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    done: dict[tuple[int, int], dict] = {}
    for npcs in [int(x) for x in args.saves.split(",") if x.strip()]:
        done[(npcs, args.events)] = r = measure(npcs, args.events, args.steps, not args.no_gui)
        report(r)
        sys.stdout.flush()
    rows = []
    for events in [int(x) for x in args.scaling.split(",") if x.strip()]:
        r = done.get((6, events)) or measure(6, events, args.steps, not args.no_gui)
        if (6, events) not in done:
            report(r)
        rows.append(r)
    if rows:
        scaling_table(rows)
    print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
