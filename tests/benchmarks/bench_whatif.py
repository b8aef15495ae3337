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
most 1.5x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.saves import bench_save  # noqa: E402

_CHILD = r"""
import json, sys, time
from pathlib import Path
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.whatif.run import split_edits, what_if
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
