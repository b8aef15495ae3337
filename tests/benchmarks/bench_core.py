"""Issue 37's goals table, measured (prints figures; not a test).

Usage (from the checkout; offscreen is fine, and is what CI uses)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_core.py                  # 1M events; 3, 6, 300, 3 000 NPCs
    ... bench_core.py --npcs 3 --long-conversations     # the 3-NPC save, then ~97 000 conversations in 3 NPCs
    ... bench_core.py --npcs --scaling 10000 100000     # only the scaling table (10k .. 10M without values)
    ... bench_core.py --ci                              # CI: 100 000 events, 3 NPCs; exit 1 only on a stall over 500 ms

Saves come from the generator (``saves.bench_save``: scenario ``large``, seed 11,
cached under the temp folder); ``--long-conversations`` adds the generator's
``many-conversations`` scenario with 3 NPCs (two exchanges a conversation: ~97 000
conversations in 1 000 000 entries, the shape of the issue's hidden playtest save).

Every figure comes from a fresh process (``figures.run_child``), and every ratio's
``json.load`` from the same run:

- ``state --tick T`` (T = half of saved_at_tick) and ``check --format json``: the wall
  time of the command's own process, started by a child right after that child timed a
  bare ``json.load`` of the file; the ratio is to that load.
- window usable: a cold child (the open is its first work, as a user's first open)
  opens the save in the window; the time to the end of the event-loop pass that first
  painted the central area with the save at ``saved_at_tick``, as a ratio to the median
  of the run's bare loads (one of them a fresh process's first work, just before the
  cold open; one load slowed by a busy moment of a shared machine moves a median
  less than a mean); then one step must move the tick ("stepping works").
- longest GUI stall during an open: the longest gap of a 5 ms QTimer on the GUI thread,
  from the open to the end of the background work; the largest of the cold open, the
  open after a ``json.load`` (the warm child) and a cold open pinned to one core
  (``taskset -c 0``, when taskset is there).
- steps (the warm child, from the middle of the playthrough): "next event" p99 with one
  view in front through the event loop (the step's refresh and what it invalidated,
  painted), the same with the whole window painted at once (``QWidget.repaint``), with
  all four views; a drag frame p99; the prompt preview ready after a step, p99.
- peak memory: the cold window process's peak (VmHWM), and the peaks of the processes
  it started (the content child, for large content folders), read from /proc every 20 ms.

The table's goal column is the issue's; the last column says met or missed. No figure
fails the run except in ``--ci``, where a stall over ``CI_STALL_MS`` (the design broke,
not a busy machine) exits 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

from figures import VIEWS, run_child  # noqa: E402
from saves import bench_save  # noqa: E402

#: ``--ci`` exits 1 when the longest GUI stall of an open is over this (issue 37).
CI_STALL_MS = 500.0
#: The scaling table's event counts (issue 37).
SCALING = (10_000, 100_000, 1_000_000, 10_000_000)
PIN = ("taskset", "-c", "0")

#: (figure key, label, goal, unit): the issue's goals table, one row a figure.
GOALS = (
    ("state", "state --tick T", 0.75, "x"),
    ("check", "check", 0.75, "x"),
    ("usable", "window usable (first paint, cold)", 1.0, "x"),
    ("stall", "longest GUI stall during an open", 50.0, "ms"),
    ("stall_pinned", "  the same, pinned to one core", 50.0, "ms"),
    ("step_front", "step p99, one view in front", 12.0, "ms"),
    ("step_repaint", "  with a full-window repaint", 33.0, "ms"),
    ("step_all", "step p99, all four views", 33.0, "ms"),
    ("drag", "drag p99", 16.0, "ms"),
    ("prompt", "prompt ready after a step, p99", 50.0, "ms"),
    ("peak", "peak memory, window process", 400.0, "MB"),
    ("peak_both", "peak memory, window + child", 700.0, "MB"),
)


def conversations(path: Path) -> int:
    """How many conversations the save's journal starts (``InteractionStarted`` entries),
    counted in the bytes, without a parse."""
    needle, count, tail = b'"InteractionStarted"', 0, b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            block = tail + chunk  # a needle cut by the chunk's edge, whole again
            count += block.count(needle)
            tail = block[-(len(needle) - 1):]  # too short to hold a whole needle: none counted twice
    return count


def measure(path: Path, content: Path, steps: int, *, gui: bool = True, pinned: bool = True) -> dict:
    """The raw figures of one save, each child in a fresh process."""
    runs = {"state": run_child("state", path, content, 0), "check": run_child("check", path, content, 0),
            "load": run_child("load", path, content, 0), "cold": run_child("cold", path, content, steps)}
    if gui:
        if pinned and shutil.which(PIN[0]):
            runs["pinned"] = run_child("cold", path, content, steps, prefix=PIN)
        runs["gui"] = run_child("gui", path, content, steps)
    return runs


def figures_of(runs: dict) -> dict:
    """The goals table's figures from ``measure``'s runs: ``{key: (value, note)}``,
    value None when the run did not give it. Ratios are to the same run's json.load."""
    out: dict[str, tuple[float | None, str]] = {}
    loads = {name: r["json_load"] for name, r in runs.items() if r.get("json_load")}
    bare = statistics.median(loads.values()) if loads else None
    out["json_load"] = (bare, ", ".join(f"{name} {s:.2f}" for name, s in loads.items()))
    for name in ("state", "check"):
        r = runs.get(name, {})
        if name in r:
            out[name] = (r[name] / r["json_load"], f"{r[name]:.2f} s, json.load {r['json_load']:.2f} s, exit {r[name + '_exit']}")
    cold, gui, pinned = runs.get("cold", {}), runs.get("gui", {}), runs.get("pinned", {})
    if "first_paint" in cold and bare:
        out["usable"] = (cold["first_paint"] / bare, f"{cold['first_paint']:.2f} s; stepping {'works' if cold.get('steps') else 'FAILED'}")
    stalls = {k: r["max_stall"] * 1000 for k, r in (("cold", cold), ("after json.load", gui)) if "max_stall" in r}
    if stalls:
        out["stall"] = (max(stalls.values()), ", ".join(f"{k} {v:.0f}" for k, v in stalls.items()))
    if "max_stall" in pinned:
        out["stall_pinned"] = (pinned["max_stall"] * 1000, "cold, taskset -c 0")
    if "step_all" in gui:
        front = {v: gui[f"step_{v}"][1] for v in VIEWS}
        worst = max(front, key=front.get)
        out["step_front"] = (front[worst], " ".join(f"{v} {ms:.0f}" for v, ms in front.items()))
        repaint = {v: gui[f"repaint_{v}"][1] for v in VIEWS}
        worst = max(repaint, key=repaint.get)
        out["step_repaint"] = (repaint[worst], " ".join(f"{v} {ms:.0f}" for v, ms in repaint.items()))
        out["step_all"] = (gui["step_all"][1], f"p50 {gui['step_all'][0]:.1f}")
        out["drag"] = (gui["drag"][1], f"p50 {gui['drag'][0]:.1f}")
        out["prompt"] = (gui["prompt_ready"][1], f"p50 {gui['prompt_ready'][0]:.1f}")
    if "peak_mb" in cold:
        child = cold.get("child_peak_mb", 0.0)
        out["peak"] = (cold["peak_mb"], "cold open")
        out["peak_both"] = (cold["peak_mb"] + child, f"child {child:.0f} MB" if child else "no child process")
    return out


def ci_exit_code(figs: dict) -> int:
    """``--ci``'s verdict: 1 when a measured stall (pinned or not) is over ``CI_STALL_MS``
    or no stall was measured at all (the window did not open), else 0. The other goals
    never fail CI: on a shared machine they measure the machine as much as the design."""
    stalls = [figs[k][0] for k in ("stall", "stall_pinned") if k in figs and figs[k][0] is not None]
    return 0 if stalls and max(stalls) <= CI_STALL_MS else 1


def print_table(title: str, figs: dict, runs: dict) -> None:
    print(f"\n== {title} ==")
    for name, r in runs.items():
        if "error" in r:
            print(f"  ! {name}: {r['error']}")
    bare, each = figs.get("json_load", (None, ""))
    if bare:
        print(f"  bare json.load: median {bare:.2f} s (each child's, s: {each})")
    print(f"  {'figure':38} {'measured':>10}  {'goal':>9}  {'':6}  detail")
    for key, label, goal, unit in GOALS:
        value, note = figs.get(key, (None, "not measured"))
        shown = "-" if value is None else f"{value:.2f}x" if unit == "x" else f"{value:.0f} {unit}" if unit == "MB" else f"{value:.1f} {unit}"
        target = f"<= {goal:g}x" if unit == "x" else f"<= {goal:g} {unit}"
        verdict = "" if value is None else "met" if value <= goal else "missed"
        print(f"  {label:38} {shown:>10}  {target:>9}  {verdict:6}  {note}")
    sys.stdout.flush()


def scaling_table(npcs: int, counts: list[int], steps: int) -> None:
    """One row a size: bare json.load, state and check and first paint with their ratios, peak MB."""
    saves = [bench_save(npcs, events) for events in counts]  # generated first: no note inside the table
    print(f"\n== scaling ({npcs} NPCs) ==")
    print(" | ".join(("events", "MB", "json.load s", "state s (x)", "check s (x)", "first paint s (x)", "peak MB (window + child)")))
    for events, (path, content) in zip(counts, saves):
        figs = figures_of(runs := measure(path, content, steps, gui=False))
        cells = [f"{events:,}", f"{path.stat().st_size / 1e6:.0f}"]
        bare = figs["json_load"][0]
        cells.append(f"{bare:.2f}" if bare else "-")
        for key, raw in (("state", runs["state"].get("state")), ("check", runs["check"].get("check")),
                         ("usable", runs["cold"].get("first_paint"))):
            cells.append(f"{raw:.2f} ({figs[key][0]:.2f}x)" if key in figs else "-")
        cells.append(f"{figs['peak'][0]:.0f} + {figs['peak_both'][0] - figs['peak'][0]:.0f}" if "peak" in figs else "-")
        print(" | ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--npcs", type=int, nargs="*", help="the shapes: NPC counts (default 3 6 300 3000; 3 with --ci; none for no shape)")
    parser.add_argument("--long-conversations", action="store_true", help="also the 3-NPC many-conversations save")
    parser.add_argument("--scaling", type=int, nargs="*", metavar="EVENTS",
                        help=f"print the scaling table (default sizes {', '.join(f'{n:,}' for n in SCALING)})")
    parser.add_argument("--steps", type=int, default=100, help="steps per series")
    parser.add_argument("--ci", action="store_true", help=f"100 000 events, 3 NPCs (or --npcs); exit 1 only on a stall over {CI_STALL_MS:g} ms")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.ci:
        args.events, args.steps, args.long_conversations, args.scaling = 100_000, 40, False, None
    if args.npcs is None:
        args.npcs = [3] if args.ci else [3, 6, 300, 3000]
    print(f"machine: {os.cpu_count()} cores; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    shapes = [(n, "large") for n in args.npcs] + ([(3, "many-conversations")] if args.long_conversations else [])
    verdict = 0
    for npcs, scenario in shapes:
        path, content = bench_save(npcs, args.events, scenario=scenario)
        runs = measure(path, content, args.steps)
        figs = figures_of(runs)
        print_table(f"{args.events:,} events, {npcs:,} NPCs, {scenario} ({path.stat().st_size / 1e6:.0f} MB, "
                    f"{conversations(path):,} conversations)", figs, runs)
        verdict = max(verdict, ci_exit_code(figs))
    if args.scaling is not None:
        scaling_table(args.npcs[0] if args.npcs else 3, args.scaling or list(SCALING), args.steps)
    print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.ci and verdict:
        print(f"FAILED: a GUI stall over {CI_STALL_MS:g} ms while a save opened (or the window did not open): the design broke")
    return verdict if args.ci else 0


if __name__ == "__main__":
    sys.exit(main())
