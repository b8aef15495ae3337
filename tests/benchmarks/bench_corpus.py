"""Issue 39's figures: indexing against ``check --jobs N``, coverage and query times over
a large corpus, and the peak memory of a worker.

    python tests/benchmarks/bench_corpus.py [--saves 1000] [--events 10000] [--index 8] [--jobs 2]

1. ``--index`` generated saves of ``--events`` entries are checked (``check --jobs N``)
   and indexed (``corpus --jobs N``, with and without ``--no-prompts``) by the command
   line, each in a fresh process; wall-clock times are printed side by side.
2. A corpus of ``--saves`` saves is made from those indexed parts: each part is copied
   under a new save path (the rows are the same playtests again), then
   compacted as ``corpus`` ends (timed), then ``coverage --format json`` and three
   queries are timed (best of 3, in-process:
   connecting, planning and reading the Parquet parts included).
3. The peak resident memory of one process that checks a save, against one that
   indexes it (``check.check_file`` / ``corpus.index_one`` in a fresh spawned worker).

Generated saves are cached under the system temp folder (``saves.CACHE``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.figures import peak_rss_mb  # noqa: E402
from tests.benchmarks.saves import CACHE  # noqa: E402
from tests.support.savegen.generator import generate_save, write_save  # noqa: E402

QUERIES = {
    "lines never fired": "SELECT c.id FROM content c WHERE c.kind = 'monologue_line' AND c.id NOT IN (SELECT id FROM firings WHERE kind = 'monologue_line')",
    "rules that fire most": "SELECT id, count(*) AS n FROM firings WHERE kind = 'finding' GROUP BY id ORDER BY n DESC LIMIT 10",
    "Kael's final scores": "SELECT level, count(*) AS saves, avg(score) AS mean FROM npcs WHERE slug = 'kael-davan' GROUP BY level",
}


def playtests(count: int, events: int) -> list[Path]:
    folder = CACHE / f"corpus-{events}ev"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(count):
        path = folder / f"play{k:04d}.json"
        if not path.exists():
            write_save(generate_save(seed=1000 + k, events=events), path)
        out.append(path)
    return out


def cli(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT,
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _measure(kind: str, path: str, corpus: str) -> float:
    from narrative_debugger.models.corpus.rows import content_stamp, file_sha256
    from narrative_debugger.models.playthrough import default_content_dir

    if kind == "check":
        from narrative_debugger.app.cli.commands.check import check_file

        check_file(Path(path), None)
    else:
        from narrative_debugger.app.cli.commands.corpus import index_one

        stamp = content_stamp(default_content_dir(Path(path)))
        index_one((path, file_sha256(Path(path)), stamp, corpus, kind == "index"), None)
    return peak_rss_mb()


def peak(kind: str, path: Path, corpus: Path) -> float:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_measure, kind, str(path), str(corpus)).result()


def replicate(source: Path, target: Path, saves: int) -> None:
    """A corpus of ``saves`` saves from ``source``'s parts, each copied under a new path."""
    from narrative_debugger.models.corpus import store
    from narrative_debugger.models.corpus.rows import SCHEMA

    parts = sorted((source / store.PARTS).iterdir())
    shutil.rmtree(target, ignore_errors=True)
    (target / store.PARTS).mkdir(parents=True)
    shutil.copytree(source / store.CONTENT, target / store.CONTENT)
    con = store._connection()
    for k in range(saves):
        part = parts[k % len(parts)]
        new_path = f"/replica/{k:05d}/save.json"
        folder = target / store.PARTS / store.part_key(new_path)
        folder.mkdir()
        for name in SCHEMA:
            column = "path" if name == "saves" else "save"
            con.execute(f"COPY (SELECT * REPLACE ('{new_path}' AS {column}) FROM read_parquet('{part / (name + '.parquet')}')) "
                        f"TO '{folder / (name + '.parquet')}' (FORMAT parquet)")
    start = time.perf_counter()
    store.compact(target)
    store.write_database(target)
    print(f"  compacting every part into tables/ (a first run, or one after a stopped run): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    store.compact(target, ["/replica/00000/save.json"])
    print(f"  compacting after one save changed (what a later run ends with): {time.perf_counter() - start:.2f} s")


def best_of(fn, times: int = 3) -> float:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return min(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=1000)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--index", type=int, default=8, help="saves checked and indexed for the time comparison")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        saves = playtests(args.index, args.events)
        names = [str(p) for p in saves]
        jobs = str(args.jobs)
        print(f"{args.index} saves of {args.events} events, --jobs {args.jobs} (wall clock, fresh processes):")
        check = cli("check", *names, "--jobs", jobs, "--format", "json")
        bare = cli("corpus", *names, "--out", str(work / "bare"), "--jobs", jobs, "--no-prompts")
        full = cli("corpus", *names, "--out", str(work / "full"), "--jobs", jobs)
        again = cli("corpus", *names, "--out", str(work / "full"), "--jobs", jobs)
        print(f"  check --jobs {jobs}:              {check:7.2f} s")
        print(f"  corpus --no-prompts --jobs {jobs}: {bare:7.2f} s  ({bare / check:.2f}x check)")
        print(f"  corpus --jobs {jobs} (prompts):   {full:7.2f} s  ({full / check:.2f}x check)")
        print(f"  corpus again (all skipped):     {again:7.2f} s")
        print("peak resident memory of one worker (one save, fresh spawned process):")
        mem_check = peak("check", saves[0], work / "mem")
        mem_bare = peak("bare", saves[0], work / "mem")
        mem_full = peak("index", saves[0], work / "mem")
        print(f"  check: {mem_check:6.1f} MB   corpus --no-prompts: {mem_bare:6.1f} MB   corpus: {mem_full:6.1f} MB")

        from narrative_debugger.models.corpus import store
        from narrative_debugger.models.corpus.coverage import coverage

        big = work / "big"
        print(f"corpus of {args.saves} saves (the {args.index} indexed ones' parts copied under new paths):")
        replicate(work / "full", big, args.saves)

        def run_coverage():
            con = store.connect(big)
            try:
                return coverage(con)
            finally:
                con.close()

        doc = run_coverage()
        assert doc["saves"] == args.saves
        print(f"  coverage --format json: {best_of(run_coverage):6.3f} s")
        for label, sql in QUERIES.items():
            print(f"  query {label + ':':24} {best_of(lambda: store.query(big, sql)):6.3f} s")
        rows = store.query(big, "SELECT count(*) FROM firings")[1][0][0]
        print(f"  ({rows} firings rows in all)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
