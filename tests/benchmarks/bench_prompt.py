"""Benchmark: stepping through 1 000 consecutive ticks of the prompt preview (prints figures).

Usage: python tests/benchmarks/bench_prompt.py [--events 200000] [--steps 1000] [--budget 8192]

For each step it builds the preview (reusing the builder, as the app does) and, for
comparison, times encoding only the sections that changed since the previous step.
Goal: a step costs no more than 1.5x tokenising only the changed sections, and well
under one frame (16 ms) for typical prompts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import percentile  # noqa: E402
from narrative_debugger.models.playthrough import BUNDLED_CONTENT, Playthrough  # noqa: E402
from narrative_debugger.models.prompt.builder import PromptBuilder, compare  # noqa: E402

from tests.support.savegen.generator import generate_save, write_save  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp()) / "bench-prompt.json"
    write_save(generate_save(seed=args.seed, events=args.events, scenario="large"), path)
    play = Playthrough.open(path, BUNDLED_CONTENT)
    index = play.index
    # The NPC with the most dialogue; start where a long conversation history exists.
    npc = max(play.save.npcs.values(), key=lambda n: len(index.dialogue_with(n.stable_id, play.last_tick)))
    lines = index.dialogue_with(npc.stable_id, play.last_tick)
    start = lines[len(lines) // 2].tick
    turn_ticks = sorted({rec.tick for rec in lines if rec.tick > start})[: args.steps]
    for label, ticks in (("consecutive ticks", list(range(start + 1, start + 1 + args.steps))), ("consecutive turns (dialogue lines)", turn_ticks)):
        builder = PromptBuilder(play, budget=args.budget)
        encoder = builder.counter
        previous = builder.build(npc.slug, start)
        step_ms, changed_step_ms, changed_ms, ratios = [], [], [], []
        for tick in ticks:
            t0 = time.perf_counter()
            preview = builder.build(npc.slug, tick)
            step = (time.perf_counter() - t0) * 1000
            diff = compare(previous, preview)
            step_ms.append(step)
            if diff.changed:
                t0 = time.perf_counter()
                for name in diff.changed:
                    section = preview.section(name)
                    if section is not None:
                        encoder.encode(section.text)
                only_changed = (time.perf_counter() - t0) * 1000
                changed_step_ms.append(step)
                changed_ms.append(only_changed)
                ratios.append(step / max(only_changed, 1e-6))
            previous = preview
        print(f"-- {label}: {len(ticks)} steps from tick {start}, {len(changed_step_ms)} changed the prompt ({preview.total_tokens} tokens at the end)")
        print(f"   time per step: median {statistics.median(step_ms):.3f} ms, p99 {percentile(step_ms, 0.99):.3f} ms (goal well under 16 ms)")
        if ratios:
            print(f"   steps that changed it: median {statistics.median(changed_step_ms):.3f} ms, p99 {percentile(changed_step_ms, 0.99):.3f} ms; "
                  f"encoding only the changed sections: median {statistics.median(changed_ms):.3f} ms")
            print(f"   ratio: median {statistics.median(ratios):.2f}x, p90 {percentile(ratios, 0.9):.2f}x (goal <= 1.5x)")
    print(f"save: {args.events} events; NPC {npc.slug}; {len(lines)} dialogue lines; budget {args.budget}")
    path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
