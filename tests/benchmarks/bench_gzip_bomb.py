"""Peak memory while a gzip bomb is refused (issue 35, pattern 5; prints figures; not a test).

Usage::

    .venv/bin/python tests/benchmarks/bench_gzip_bomb.py [--inflated-mib 2200] [--cap-mib 2048]

Writes a gzip file of spaces (about 2.2 MB) that inflates past the cap (the default
cap is the reader's, 2 GiB), then, each in a fresh child process, refuses it two ways
and prints the child's peak resident memory (VmHWM) and wall time:

- before: one pass, ``fileio.inflate_gzip`` with the cap applied while inflating,
  which is how ``jsonio.decode_file`` read a gzip save before issue 35 (it holds the
  inflated bytes until the cap is passed);
- after: ``jsonio.decode_file`` as it is (``fileio.inflate_gzip_guarded``: a stream
  that inflates more than a save does is only counted from 32 MiB on).

Each child also prints its resident memory after importing, so the figure that the
refusal adds can be read apart from the interpreter's own.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from narrative_debugger.models import fileio
from narrative_debugger.models.save import jsonio
from tests.benchmarks.figures import peak_rss_mb

path, cap, how = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
base = peak_rss_mb()
start = time.perf_counter()
if how == "before":
    try:
        fileio.inflate_gzip(fileio.iter_regular_file(path, cap), cap)
        said = "not refused"
    except fileio.FileRefused as exc:
        said = str(exc)
else:
    document, _ = jsonio.decode_file(path, path.name, max_bytes=cap)
    said = document.findings[0].message if document.findings else "not refused"
print(f"{{base:.0f}} {{peak_rss_mb():.0f}} {{time.perf_counter() - start:.2f}} {{said}}")
"""


def write_bomb(path: Path, inflated: int) -> int:
    """Write ``inflated`` bytes of spaces, gzip level 9, to ``path``; its size in bytes."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (16 << 20)
    with open(path, "wb") as out:
        left = inflated
        while left > 0:
            out.write(comp.compress(block[: min(left, len(block))]))
            left -= len(block)
        out.write(comp.flush())
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inflated-mib", type=int, default=2200, help="what the bomb inflates to (default 2200 MiB)")
    parser.add_argument("--cap-mib", type=int, default=2048, help="the cap (default 2048 MiB, the reader's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bomb.json.gz"
        size = write_bomb(path, args.inflated_mib << 20)
        cap = args.cap_mib << 20
        print(f"bomb: {size / 1e6:.2f} MB of gzip inflating to {args.inflated_mib} MiB; cap {args.cap_mib} MiB")
        for how in ("before", "after"):
            child = subprocess.run(
                [sys.executable, "-c", CHILD.format(root=str(ROOT)), str(path), str(cap), how],
                capture_output=True, text=True, check=True, cwd=ROOT,
            )
            base, peak, seconds, said = child.stdout.split(" ", 3)
            print(f"{how:>6}: peak RSS {peak} MB (after imports {base} MB), {seconds} s; {said.strip()[:110]}")


if __name__ == "__main__":
    main()
