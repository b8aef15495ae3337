"""Issue 38's figure: a what-if against the time to open the same save.

    python tests/benchmarks/bench_whatif.py [--events 1000000] [--npcs 3 300]

For each shape, each figure in a fresh process (nothing warmed by the one before):

- ``open``: ``Playthrough.open`` with its checks, what ``check`` and ``state`` do;
- ``whatif early`` / ``middle`` / ``late``: ``what_if`` with one RelationshipInteraction's
  sentiment changed at 5 %, 50 % and 95 % of the journal (the save opened as recorded,
  the edit replayed, compared, the prompts to regenerate found);
- ``whatif tuning``: ``sentiment_weight=0.25``, which changes every NPC from tick 0.

Each what-if is timed twice: as the ``whatif`` command runs it (the save opened, then the
what-if), and as the window runs it (``(open)``: the save is open already; only the
what-if is timed). Each is printed as seconds and as a ratio to ``open`` (issue 38: at
most 1.5x). Then the commands as QA runs them, each a fresh ``narrative-debugger``
process: ``check`` (the save opened and checked) and ``whatif`` for each case, as
a ratio to ``check``.

``--window``: the What if panel's run instead, in a window (offscreen) with the save open
and checked: the ``middle`` edit applied through ``WhatIfController.add_edits``; printed:
the wall time until the session compares, the longest GUI stall from the edit until
0.5 s after (a 5 ms QTimer's longest gap, as ``bench_core.py`` measures an open's) and
every gap over 50 ms (with the GUI thread's CPU time in it: a gap with little is the
machine's, not the window's work) and every garbage collection over 10 ms, the
longest gap that ends once the session compares
(the hand-over's: the views' refresh and the paint passes after it), the window's peak
memory and the largest peak of its child processes (the forkserver's, the what-if's;
sampled every 50 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.saves import bench_save  # noqa: E402

_CHILD = r"""
import json, sys, time
from pathlib import Path
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.whatif.patch import split_edits
from narrative_debugger.models.whatif.run import what_if
from tests.benchmarks.figures import peak_rss_mb
path, content, what = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
started = time.perf_counter()
if what == "open":
    play = Playthrough.open(path, content)
    out = {"events": len(play.save.journal), "kinds": None}
    if len(sys.argv) > 4:
        kinds = play.save.journal.kinds
        out["kinds"] = [i for i, k in enumerate(kinds) if k == "RelationshipInteraction"]
else:
    recorded = None
    if len(sys.argv) > 4:  # the window's case: the save is open already; only the what-if is timed
        recorded = Playthrough.open(path, content)
        started = time.perf_counter()
    ops, tuning, sets = split_edits([tuple(pair) for pair in what])
    result = what_if(path, content, ops, tuning, sets, recorded=recorded)
    out = {"changed": result.changed, "regenerate": len(result.prompts_regenerate)}
out["seconds"] = time.perf_counter() - started
out["peak_mb"] = peak_rss_mb()
print(json.dumps(out))
"""


_WINDOW_CHILD = r"""
import gc, json, os, sys, threading, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from narrative_debugger.app.window.main_window import MainWindow, make_app
from PySide6.QtCore import QEventLoop, QTimer
from tests.benchmarks.figures import ChildPeaks, peak_rss_mb
if __name__ == "__main__":  # forkserver and spawn import the main module
    path, content = Path(sys.argv[1]), Path(sys.argv[2])
    app = make_app()
    app.setApplicationName("narrative-debugger-bench")
    window = MainWindow(persist=False)
    window.resize(1600, 1000)
    window.show()
    window.open_save(path, content, wait=True)
    kinds = window.session.playthrough.save.journal.kinds
    at = [i for i, k in enumerate(kinds) if k == "RelationshipInteraction"]
    edit = (f"/journal/{at[len(at) // 2]}/event/RelationshipInteraction/sentiment", 0.8)
    gaps = {"last": 0.0, "cpu": 0.0, "max": 0.0, "at": 0.0, "over": [], "ends": []}
    def probe():
        now, cpu = time.perf_counter(), time.thread_time()
        if now - gaps["last"] > gaps["max"]:
            gaps["max"], gaps["at"] = now - gaps["last"], gaps["last"]
        if now - gaps["last"] > 0.05:
            gaps["over"].append((round(gaps["last"] - started, 2), round((now - gaps["last"]) * 1000), round((cpu - gaps["cpu"]) * 1000)))
        gaps["ends"].append((now, now - gaps["last"]))
        gaps["last"], gaps["cpu"] = now, cpu
    collections = {"start": 0.0, "long": []}
    def collecting(phase, info):  # garbage collections over 10 ms: (s, generation, ms, thread)
        now = time.perf_counter()
        if phase == "start":
            collections["start"] = now
        elif now - collections["start"] > 0.01:
            collections["long"].append((round(collections["start"] - started, 2), info["generation"],
                                        round((now - collections["start"]) * 1000), threading.current_thread().name))
    timer = QTimer(); timer.setInterval(5); timer.timeout.connect(probe)
    children = ChildPeaks()
    sampler = QTimer(); sampler.setInterval(50); sampler.timeout.connect(children.sample)
    loop = QEventLoop()
    marks = {}
    def compared():
        marks["done"] = time.perf_counter()
        QTimer.singleShot(500, loop.quit)
    window.session.comparisonChanged.connect(compared)
    started = gaps["last"] = time.perf_counter()
    gc.callbacks.append(collecting)
    timer.start()
    sampler.start()
    window.whatif.add_edits([edit])
    loop.exec()
    timer.stop()
    sampler.stop()
    handover = max((gap for end, gap in gaps["ends"] if end >= marks["done"]), default=0.0)
    print(json.dumps({"seconds": marks["done"] - started, "max_stall": gaps["max"], "max_stall_at": gaps["at"] - started,
                      "handover_stall": handover, "collections": collections["long"],
                      "stalls_over_50ms": gaps["over"], "changed": window.whatif.result.changed, "peak_mb": peak_rss_mb(),
                      "child_peak_mb": max(children.peaks.values(), default=0.0)}))
    window.close()
"""


def child(path: Path, content: Path, what, *extra: str) -> dict:
    run = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(content), json.dumps(what), *extra],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if run.returncode != 0:
        raise SystemExit(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--npcs", type=int, nargs="+", default=[3])
    parser.add_argument("--window", action="store_true", help="the What if panel's run in a window: wall time and longest GUI stall")
    args = parser.parse_args()
    if args.window:
        for npcs in args.npcs:
            path, content = bench_save(npcs, args.events)
            run = subprocess.run([sys.executable, "-c", _WINDOW_CHILD, str(path), str(content)], capture_output=True, text=True, cwd=ROOT, check=False)
            if run.returncode != 0:
                raise SystemExit(run.stderr)
            got = json.loads(run.stdout.strip().splitlines()[-1])
            print(f"{npcs} NPCs, {args.events:,} ev: what-if in the window {got['seconds']:.2f} s, longest GUI stall "
                  f"{got['max_stall'] * 1000:.0f} ms (at {got['max_stall_at']:.2f} s; over 50 ms, (s, ms, the GUI thread's CPU ms): "
                  f"{got['stalls_over_50ms']}), the hand-over's {got['handover_stall'] * 1000:.0f} ms, garbage collections over "
                  f"10 ms (s, generation, ms, thread): {got['collections']}, "
                  f"peak {got['peak_mb']:.0f} MB, a child process's peak {got['child_peak_mb']:.0f} MB", flush=True)
        return
    print(f"{'shape':<24}{'figure':<24}{'seconds':>9}{'ratio':>8}{'peak MB':>9}")
    for npcs in args.npcs:
        path, content = bench_save(npcs, args.events)
        shape = f"{npcs} NPCs, {args.events:,} ev"
        opened = child(path, content, "open", "kinds")
        print(f"{shape:<24}{'open':<24}{opened['seconds']:>9.2f}{1.0:>8.2f}{opened['peak_mb']:>9.0f}", flush=True)
        kinds = opened["kinds"]
        cases = {f"whatif {name}": [[f"/journal/{kinds[int(len(kinds) * at)]}/event/RelationshipInteraction/sentiment", 0.8]]
                 for name, at in (("early", 0.05), ("middle", 0.5), ("late", 0.95))}
        cases["whatif tuning"] = [["relationship.sentiment_weight", 0.25]]
        for name, edits in cases.items():
            for where, extra in (("", ()), (" (open)", ("window",))):
                got = child(path, content, edits, *extra)
                print(f"{shape:<24}{name + where:<24}{got['seconds']:>9.2f}{got['seconds'] / opened['seconds']:>8.2f}{got['peak_mb']:>9.0f}", flush=True)
        # The commands as QA runs them (a fresh process each, start-up and output included;
        # ``cli.main.entry`` runs them without the collector): whatif against check.
        check = command("check", str(path), "--content", str(content), "--format", "json")
        print(f"{shape:<24}{'command: check':<24}{check:>9.2f}{1.0:>8.2f}", flush=True)
        for name, edits in cases.items():
            sets = [arg for target, value in edits for arg in ("--set", f"{target}={json.dumps(value)}")]
            took = command("whatif", str(path), "--content", str(content), *sets, "--format", "json")
            print(f"{shape:<24}{'command: ' + name:<24}{took:>9.2f}{took / check:>8.2f}", flush=True)


def command(*args: str) -> float:
    """Wall seconds of ``narrative-debugger ARGS`` in a fresh process (output discarded)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
