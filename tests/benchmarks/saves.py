"""Generated saves for the benchmarks, cached under the system temp folder.

``bench_save(npcs, events)`` returns ``(save path, content folder)`` for a save of the
generator's ``large`` scenario (seed 11; ``scenario=`` picks another) played by a content folder with ``npcs``
NPCs (``tests.support.savegen.crowd``). Six NPCs is the sample content itself. Both
are written once and reused by later runs (delete the folder to regenerate).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.savegen.crowd import SAMPLE_CONTENT, crowd_content  # noqa: E402
from tests.support.savegen.generator import generate_save_file  # noqa: E402

CACHE = Path(os.environ.get("NARRATIVE_BENCH_CACHE", Path(tempfile.gettempdir()) / "narrative-bench"))
SEED = 11


def bench_content(npcs: int) -> Path:
    """The content folder with ``npcs`` NPCs (the sample content for six)."""
    if npcs == 6:
        return SAMPLE_CONTENT
    folder = CACHE / f"content-{npcs}npcs"
    if not (folder / "npcs").is_dir() or len(list((folder / "npcs").glob("*.yaml"))) != npcs:
        crowd_content(npcs, folder)
    return folder


def bench_save(npcs: int, events: int, *, scenario: str = "large", quiet: bool = False) -> tuple[Path, Path]:
    """``(save, content folder)`` of a generated save, generated on first use."""
    CACHE.mkdir(parents=True, exist_ok=True)
    content = bench_content(npcs)
    path = CACHE / f"{scenario}-{npcs}npcs-{events}ev-seed{SEED}.json"
    if not path.exists():
        started = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        generate_save_file(tmp, seed=SEED, events=events, scenario=scenario, content_dir=content)
        tmp.rename(path)
        if not quiet:
            print(f"generated {path.name} in {time.perf_counter() - started:.1f} s ({path.stat().st_size / 1e6:.0f} MB)", flush=True)
    return path, content
