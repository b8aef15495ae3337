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
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from figures import VIEWS, run_child  # noqa: E402
from saves import bench_save  # noqa: E402


def _ratio(value, bare) -> str:
    return f"{value:6.2f} s ({value / bare:4.2f}x)" if value is not None else "-"


def measure(npcs: int, events: int, steps: int, gui: bool) -> dict:
    path, content = bench_save(npcs, events)
    result = {"npcs": npcs, "events": events, "mb": path.stat().st_size / 1e6}
    # state and check each in a fresh process, each beside its own json.load.
    result["state"] = run_child("state", path, content, steps)
    result["check"] = run_child("check", path, content, steps)
    result["memory"] = run_child("memory", path, content, steps)
    if gui:
        result["cold"] = run_child("cold", path, content, steps)
        result["gui"] = run_child("gui", path, content, steps)
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
    args = parser.parse_args()
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
