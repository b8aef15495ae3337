"""Benchmark of the models layer on a generated save (prints figures; not a test).

Usage: python tests/benchmarks/bench_models.py [--events 1000000] [--seed 11] [--keep PATH]

Prints: generation time, file size, bare json.load time, load + index time (and the
ratio, goal <= 3), state-at-tick median and p99 over random ticks (goal p99 <= 16 ms),
check time, prompt step time, and peak memory (goal <= 2 GB).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import peak_rss_mb, percentile  # noqa: E402
from narrative_debugger.models.playthrough import BUNDLED_CONTENT, Playthrough  # noqa: E402

from tests.support.savegen.generator import generate_save, write_save  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--samples", type=int, default=2000, help="random ticks for the state query")
    parser.add_argument("--keep", type=Path, help="write the generated save here and keep it (reused when it exists)")
    args = parser.parse_args()

    path = args.keep or Path(tempfile.mkdtemp()) / f"bench-{args.events}.json"
    t0 = time.perf_counter()
    if args.keep is not None and args.keep.exists():
        print(f"reusing {path} ({path.stat().st_size / 1e6:.0f} MB)")
    else:
        doc = generate_save(seed=args.seed, events=args.events, scenario="large")
        write_save(doc, path)
        del doc
        gc.collect()
        print(f"generated {args.events} events in {time.perf_counter() - t0:.1f} s -> {path} ({path.stat().st_size / 1e6:.0f} MB)")

    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        bare = json.load(fh)
    bare_s = time.perf_counter() - t0
    del bare
    gc.collect()
    print(f"bare json.load: {bare_s:.2f} s")

    t0 = time.perf_counter()
    play = Playthrough.open(path, BUNDLED_CONTENT)
    load_s = time.perf_counter() - t0
    print(f"load + replay + index + check: {load_s:.2f} s  (ratio to bare json.load {load_s / bare_s:.2f}; goal <= 3)")
    print(f"  journal entries {len(play.save.journal)}, facts {len(play.save.knowledge.facts)}, findings {len(play.findings)}")

    rng = random.Random(1)
    last = play.last_tick
    times = []
    for _ in range(args.samples):
        tick = rng.randint(0, last)
        t0 = time.perf_counter()
        state = play.state_at(tick)
        npcs = state.npcs
        knowledge = state.knowledge
        n = len(knowledge.facts)
        for sid in npcs:
            knowledge.interaction_count_with(sid)
            knowledge.last_interaction_with(sid)
        knowledge.active_interaction()
        times.append((time.perf_counter() - t0) * 1000)
    print(
        f"state at a random tick (NPCs, fact count, per-NPC count and last interaction, active): "
        f"median {statistics.median(times):.3f} ms, p99 {percentile(times, 0.99):.3f} ms (goal p99 <= 16 ms); last n={n}"
    )

    t0 = time.perf_counter()
    json_state = __import__("narrative_debugger.models.timeline.state_json", fromlist=["state_json"]).state_json(play, play.save.saved_at_tick)
    print(f"full `state` JSON at saved_at_tick: {(time.perf_counter() - t0) * 1000:.0f} ms ({len(json_state['facts'])} facts)")

    del play, state, knowledge, json_state
    gc.collect()
    t0 = time.perf_counter()
    check = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "check", str(path), "--content", str(BUNDLED_CONTENT), "--format", "json"], capture_output=True, cwd=ROOT)
    print(f"`narrative-debugger check` as QA runs it (new process): {time.perf_counter() - t0:.2f} s, exit {check.returncode}")
    probe = (
        "import sys; sys.path.insert(0, %r); from figures import peak_rss_mb; "
        "from narrative_debugger.models.playthrough import Playthrough, BUNDLED_CONTENT; "
        "p = Playthrough.open(%r, BUNDLED_CONTENT); p.state_at(p.last_tick // 2).npcs; "
        "print(peak_rss_mb())" % (str(Path(__file__).resolve().parent), str(path))
    )
    peak = float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)
    print(f"peak memory of opening it (max RSS of a process that only opens it): {peak:.0f} MB (goal <= 2048 MB)")
    print(f"peak memory of this benchmark process (includes the bare json.load): {peak_rss_mb():.0f} MB")
    if args.keep is None:
        path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
