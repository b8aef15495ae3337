"""Benchmark of ``diff`` on two large generated saves that fork half way (prints figures; not a test).

Usage: python tests/benchmarks/bench_diff.py [--events 1000000] [--seed 11] [--fork-seed 12] [--cache DIR] [--repeat 2]

Each run, in a fresh process: (1) opening both saves (``Playthrough.open`` twice),
(2) the whole ``diff A B --format json`` command (opening both, comparing, writing
the JSON to /dev/null). Prints the median of each, the comparison's own share and
the ratio (goal: diff <= 2x opening both), the machine's load average before and
after, and the peak memory of the diff process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.savegen.generator import generate_fork, write_save  # noqa: E402

OPEN_BOTH = """
import sys, time
from narrative_debugger.models.playthrough import Playthrough
t0 = time.perf_counter()
a = Playthrough.open(sys.argv[1]); b = Playthrough.open(sys.argv[2])
assert a.readable and b.readable
print(time.perf_counter() - t0)
"""

DIFF = """
import contextlib, os, sys, time
sys.path.insert(0, "tests/benchmarks")
from figures import peak_rss_mb
from narrative_debugger.app.cli.main import main
t0 = time.perf_counter()
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    status = main(["diff", sys.argv[1], sys.argv[2], "--format", "json"])
elapsed = time.perf_counter() - t0
print(elapsed, status, peak_rss_mb())
"""

COMPARE_ONLY = """
import sys, time
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.compare.comparison import compare
a = Playthrough.open(sys.argv[1]); b = Playthrough.open(sys.argv[2])
t0 = time.perf_counter()
c = compare(a, b)
t1 = time.perf_counter()
doc = c.to_json()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, len(c.differences()), c.divergence.a_index if c.divergence else None)
"""


def python(code: str, *args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--fork-seed", type=int, default=12)
    parser.add_argument("--cache", type=Path, default=Path("/tmp"), help="where the generated pair is kept and reused")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    stem = f"bench-diff-{args.events}-{args.seed}-{args.fork_seed}"
    path_a, path_b = args.cache / f"{stem}-a.json.gz", args.cache / f"{stem}-b.json.gz"
    if path_a.exists() and path_b.exists():
        print(f"reusing {path_a} and {path_b}")
    else:
        t0 = time.perf_counter()
        doc_a, doc_b, at = generate_fork(seed=args.seed, events=args.events, fork_at=args.events // 2, fork_seed=args.fork_seed, scenario="large")
        write_save(doc_a, path_a)
        write_save(doc_b, path_b)
        del doc_a, doc_b
        print(f"generated two {args.events}-event saves forking at journal[{at}] in {time.perf_counter() - t0:.1f} s")

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    opens, diffs, peaks = [], [], []
    for _ in range(args.repeat):
        opens.append(float(python(OPEN_BOTH, str(path_a), str(path_b))[0]))
        elapsed, status, peak = python(DIFF, str(path_a), str(path_b))
        assert status == "1", f"diff exited {status}, expected 1 (the saves differ)"
        diffs.append(float(elapsed))
        peaks.append(float(peak))
    compare_s, json_s, count, index = python(COMPARE_ONLY, str(path_a), str(path_b))
    open_s, diff_s = statistics.median(opens), statistics.median(diffs)
    print(f"open both:            {open_s:6.2f} s (median of {args.repeat}: {', '.join(f'{x:.2f}' for x in opens)})")
    print(f"diff A B (whole cmd): {diff_s:6.2f} s (median of {args.repeat}: {', '.join(f'{x:.2f}' for x in diffs)})")
    print(f"  of which compare:   {float(compare_s):6.2f} s, JSON document {float(json_s):.2f} s; {count} differences; journals part at {index}")
    print(f"ratio diff / open:    {diff_s / open_s:6.2f} (goal <= 2.00)")
    print(f"peak memory of diff:  {max(peaks):6.0f} MB")
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
