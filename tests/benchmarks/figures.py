"""What the benchmark scripts share: percentiles, peak memory, and the measuring children.

The children (``state``, ``check``, ``memory``, ``gui``, ``cold``) each run in a fresh
process (``run_child``), which prints one JSON line of figures: a figure taken in the
process that made the measurements before it would carry their warm caches and their
memory. ``bench_open.py`` (issue 10) and ``bench_core.py`` (issue 37) print them.
Run a child by hand with ``python tests/benchmarks/figures.py KIND SAVE CONTENT STEPS``.
"""

from __future__ import annotations

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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The four views a step is timed with in front (``Session.set_view`` names).
VIEWS = ("knowledge", "interactions", "timelines", "prompt")


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB, since it was started.

    Linux's ``VmHWM`` belongs to the process image: ``getrusage``'s ``ru_maxrss``
    survives ``exec``, so a child that a large benchmark process spawned would report
    at least its parent's peak (a 1 MB save measured as 1 218 MB).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> bool:
    """Start ``peak_rss_mb`` again from the memory in use now (Linux: ``clear_refs`` 5).

    The window benchmark times a bare ``json.load`` first, in its own process: its
    ~1 GB of Python objects would otherwise be the window process's peak. Returns
    False where the peak cannot be reset (the figure then includes that load).
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def bare_json_load(path: Path) -> float:
    """Seconds of a bare ``json.load`` of ``path`` in this process (the ratios' denominator)."""
    gc.collect()
    started = time.perf_counter()
    with open(path, "rb") as fh:
        doc = json.load(fh)
    elapsed = time.perf_counter() - started
    del doc
    gc.collect()
    return elapsed


def run_cli(argv: list[str]) -> tuple[float, int]:
    """The wall time and exit status of the command as a user runs it: a process of
    its own from start to exit (``python -m narrative_debugger.app``, output discarded)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "narrative_debugger.app", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - started, done.returncode


class ChildPeaks:
    """The peak resident memory (VmHWM) of the processes this one starts, and of theirs,
    read from ``/proc`` at each ``sample``: a lower bound (the last moments before a
    process exits go unseen). ``getrusage(RUSAGE_CHILDREN)`` cannot give it: a child
    that ``subprocess`` starts by ``vfork`` carries this process's peak through ``exec``."""

    def __init__(self) -> None:
        self.me = os.getpid()
        self.family = {self.me}
        self.peaks: dict[int, float] = {}

    def sample(self) -> None:
        try:
            names = os.listdir("/proc")
        except OSError:
            return
        for name in names:
            if not name.isdigit() or int(name) <= self.me:  # a child's pid is higher (no wrap-around here)
                continue
            pid = int(name)
            try:
                with open(f"/proc/{pid}/stat", "rb") as stat:
                    ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
                if ppid not in self.family:
                    continue
                self.family.add(pid)
                with open(f"/proc/{pid}/status", "rb") as status:
                    for line in status:
                        if line.startswith(b"VmHWM:"):
                            self.peaks[pid] = max(self.peaks.get(pid, 0.0), int(line.split()[1]) / 1024)
            except (OSError, ValueError, IndexError):
                continue

    def total_mb(self) -> float:
        """The sum of the peaks seen (MB); 0 when no child ran."""
        return sum(self.peaks.values())


def saved_at_tick(path: Path) -> int:
    """The save's ``saved_at_tick``, read from the file's head without a full parse (0 if absent)."""
    with open(path, "rb") as fh:
        head = fh.read(400).decode("utf-8", "replace")
    at = head.find('"saved_at_tick":')
    return int(head[at + 16 : head.find(",", at)]) if at >= 0 else 0


# ----- children (each prints one JSON line) -----
def child_state(path: Path, content: Path, steps: int = 0) -> dict:
    bare = bare_json_load(path)
    tick = saved_at_tick(path) // 2
    gc.collect()
    state_s, state_code = run_cli(["state", str(path), "--tick", str(tick), "--content", str(content)])
    return {"json_load": bare, "state": state_s, "state_exit": state_code}


def child_state_both(path: Path, content: Path, steps: int = 0) -> dict:
    """``state --tick T``'s work two ways, after a bare ``json.load``: in this process
    (``Playthrough.open`` with its checks, as the command runs it) and through the
    window's open process (``engine.OpenProcess``: the child opens and checks, this
    process maps its files), each timed to the state's JSON text; the texts must be
    equal. Issue 37: "the command line uses the same core in process, or the same
    child: measure both"."""
    import threading

    from narrative_debugger.app.workers import engine
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.report.json_text import dumps_indented
    from narrative_debugger.models.timeline.state_json import state_json

    bare = bare_json_load(path)
    tick = saved_at_tick(path) // 2
    gc.collect()
    started = time.perf_counter()
    play = Playthrough.open(path, content)
    here = dumps_indented(state_json(play, tick))
    in_process = time.perf_counter() - started
    del play
    gc.collect()
    started = time.perf_counter()
    with engine.OpenProcess(path, content) as process:
        for message in process.messages(threading.Event()):
            if message[0] == "replayed":
                play = message[1][0]
            elif message[0] == "checked":
                play.take_checks(message[1][0])
            elif message[0] in ("failed", "done"):
                break
        there = dumps_indented(state_json(play, tick))
    through_child = time.perf_counter() - started
    return {"json_load": bare, "state_in_process": in_process, "state_through_child": through_child, "same": here == there}


def child_check(path: Path, content: Path, steps: int = 0) -> dict:
    bare = bare_json_load(path)
    gc.collect()
    check_s, check_code = run_cli(["check", str(path), "--content", str(content), "--format", "json"])
    return {"json_load": bare, "check": check_s, "check_exit": check_code}


def child_load(path: Path, content: Path, steps: int = 0) -> dict:
    """A bare ``json.load`` as a fresh process's first work, as the cold open is."""
    return {"json_load": bare_json_load(path)}


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
    bare = None if cold else bare_json_load(path)
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
    children = ChildPeaks()
    child_sampler = QTimer()
    child_sampler.setInterval(20)
    child_sampler.timeout.connect(children.sample)
    started = time.perf_counter()
    gaps["last"] = started
    timer.start()
    poller.start()
    if cold:
        child_sampler.start()
    window.open_save(path, content)
    loop.exec()
    timer.stop()
    poller.stop()
    child_sampler.stop()
    window.tickbar.removeEventFilter(paint_seen)
    first_paint = marks["paint"] - started
    background = marks["idle"] - started
    out = {"json_load": bare, "first_paint": first_paint, "background_done": background, "max_stall": gaps["max"],
           "max_stall_at": gaps["at"] - started}
    if cold:
        # The window process's own peak (no json.load ran before the open), and the
        # peaks of the processes it started (the content child), seen every 20 ms.
        out["peak_mb"] = peak_rss_mb()
        out["child_peak_mb"] = children.total_mb()
        before = window.session.tick
        window.tickbar.prev_action.trigger()  # the window opens at saved_at_tick: no next event
        app.processEvents()
        out["steps"] = window.session.tick != before  # "stepping works" once the window is usable
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

    def step_series(n: int, other_npc: list[bool] | None = None, repaint: bool = False) -> tuple[list[float], list[float]]:
        """``n`` steps; ``repaint``: each also paints the whole window at once (``QWidget.repaint``)."""
        step_ms, prompt_ms = [], []
        for _ in range(n):
            npc = session.npc
            t0 = time.perf_counter()
            window.tickbar.next_action.trigger()
            QApplication.processEvents()  # runs the refresh and paints what it invalidated
            if repaint:
                window.repaint()
            step_ms.append((time.perf_counter() - t0) * 1000)
            if other_npc is not None:
                other_npc.append(session.npc != npc)  # the step selected the event's other NPC
            current = prompt.current_preview
            if current is None or current.tick != session.tick:
                # Wait in the event loop, as the window does between steps: a loop that
                # spun on processEvents kept the GUI thread busy.
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
        step_ms, prompt_ms = step_series(steps, repaint=True)
        out[f"repaint_{view}"] = (statistics.median(step_ms), percentile(step_ms, 0.99))
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


CHILDREN = {"state": child_state, "state-both": child_state_both, "check": child_check, "load": child_load, "memory": child_memory, "gui": child_gui,
            "cold": child_cold}


def run_child(kind: str, path: Path, content: Path, steps: int, prefix: tuple[str, ...] = ()) -> dict:
    """The figures of the child ``kind`` (a key of ``CHILDREN``), run in a fresh process,
    started through ``prefix`` (``("taskset", "-c", "0")`` pins it to one core); on a
    failure ``{"error": ...}`` and the child's output on stderr."""
    cmd = [*prefix, sys.executable, str(Path(__file__).resolve()), kind, str(path), str(content), str(steps)]
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        return {"error": f"child {kind} exited {done.returncode}"}
    return json.loads(lines[-1])


if __name__ == "__main__":
    KIND, SAVE, CONTENT, STEPS = sys.argv[1:5]
    print(json.dumps(CHILDREN[KIND](Path(SAVE), Path(CONTENT), int(STEPS))))
