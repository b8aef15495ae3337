"""Benchmark: why-queries on a generated 1 000 000-event save (prints figures).

Usage: python tests/benchmarks/bench_why.py [--save /tmp/big.json.gz] [--queries 600] [--seed 11]

The save is the generator's ``--scenario large --events 1000000 --seed 11``, written
once to ``--save`` and reused. Each query explains one target at a random tick: every
NPC value (score, level, stress, walk-aways, counters, shared references), a random
fact, every monologue line, a story card and the history of a random NPC. The first
query of each NPC value reads its track from the index once, and the first of each
monologue line its clauses' flips (both reported as "first");
the goal is p99 ≤ 100 ms over all queries. The machine is shared, so the load average
is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import percentile  # noqa: E402
from narrative_debugger.models.explain import explain  # noqa: E402
from narrative_debugger.models.explain.tracks import NPC_ATTRIBUTES  # noqa: E402
from narrative_debugger.models.playthrough import BUNDLED_CONTENT, Playthrough  # noqa: E402
from narrative_debugger.models.prompt.builder import PromptBuilder  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--save", type=Path, default=Path("/tmp/big.json.gz"))
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--queries", type=int, default=600)
    args = parser.parse_args()
    if not args.save.exists():
        print(f"generating {args.save} ({args.events} events, seed {args.seed}) ...", flush=True)
        cmd = [sys.executable, "-m", "tests.support.savegen", "--scenario", "large", "--events", str(args.events), "--seed", str(args.seed), "--out", str(args.save)]
        subprocess.run(cmd, check=True, cwd=ROOT)
    t0 = time.perf_counter()
    play = Playthrough.open(args.save, BUNDLED_CONTENT)
    print(f"opened {args.save.name}: {len(play.save.journal):,} entries in {time.perf_counter() - t0:.1f} s")
    rng = random.Random(args.seed)
    slugs = [n.slug for n in play.save.npcs.values()]
    facts = [f for f in play.index.facts if not f.startswith("interaction.")] or list(play.index.facts)
    lines = list(play.content.monologues)
    cards = [c.id for c in play.content.cards]
    first_tick, last_tick = play.first_tick, play.last_tick
    builder = PromptBuilder(play)

    def targets():
        slug = rng.choice(slugs)
        yield f"npc:{slug}.{rng.choice(NPC_ATTRIBUTES)}"
        yield f"fact:{rng.choice(facts)}"
        yield f"fact:interaction.{slug}_{rng.randint(1, 30):03d}"
        yield f"line:{rng.choice(lines)}"
        yield f"card:{slug}/{rng.choice(cards)}"
        yield f"history:{slug}"

    by_kind: dict[str, list[float]] = {}
    first: list[tuple[str, float]] = []
    # First use of each NPC value: its track is read from the index once.
    for slug in slugs:
        for attr in NPC_ATTRIBUTES:
            t0 = time.perf_counter()
            explain(play, f"npc:{slug}.{attr}", last_tick, builder=builder)
            first.append((f"npc:{slug}.{attr}", (time.perf_counter() - t0) * 1000))
    first_lines = []
    # First use of each monologue line: its clauses' flips and their sweep are read once.
    for line_id in lines:
        t0 = time.perf_counter()
        explain(play, f"line:{line_id}", last_tick, builder=builder)
        first_lines.append((f"line:{line_id}", (time.perf_counter() - t0) * 1000))
    done = 0
    while done < args.queries:
        tick = rng.randint(first_tick, last_tick)
        for target in targets():
            if target.startswith("fact:") and target[5:] not in play.index.facts:
                continue
            t0 = time.perf_counter()
            explain(play, target, tick, builder=builder)
            ms = (time.perf_counter() - t0) * 1000
            by_kind.setdefault(target.split(":")[0] + (":" + target.rsplit(".", 1)[1] if target.startswith("npc:") else ""), []).append(ms)
            done += 1
    every = [ms for values in by_kind.values() for ms in values]
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    worst_first = max(first, key=lambda x: x[1])
    print(f"first query of each NPC value (track read once): median {percentile([m for _, m in first], 0.5):.1f} ms, max {worst_first[1]:.1f} ms ({worst_first[0]})")
    worst_line = max(first_lines, key=lambda x: x[1])
    print(f"first query of each monologue line (clauses read once): median {percentile([m for _, m in first_lines], 0.5):.1f} ms, max {worst_line[1]:.1f} ms ({worst_line[0]})")
    print(f"{'kind':<32} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, values in sorted(by_kind.items()):
        print(f"{kind:<32} {len(values):>5} {percentile(values, 0.5):>8.2f} {percentile(values, 0.99):>8.2f} {max(values):>8.2f}")
    p99 = percentile(every, 0.99)
    print(f"{'all queries':<32} {len(every):>5} {percentile(every, 0.5):>8.2f} {p99:>8.2f} {max(every):>8.2f}")
    print(f"goal p99 <= 100 ms: {'met' if p99 <= 100 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
