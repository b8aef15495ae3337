"""Content folders with a chosen number of NPCs, for benchmarks (a checkout-only tool).

``crowd_content(n, out)`` copies the sample content and keeps ``n`` NPC profiles:
fewer than six keeps the first ``n`` of ``KEEP_ORDER`` (so a 3-NPC save gives three
NPCs very long histories), more than six adds clones of one profile named
``crowd-0007`` and up (StableIds from ``generator.npc_ids``). Monologue pools are
kept as they are: a line about an NPC that was left out simply never fires.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SAMPLE_CONTENT = Path(__file__).resolve().parents[3] / "sample_saves" / "content"
#: Which sample NPCs a small crowd keeps, in this order.
KEEP_ORDER = ("lera-sessik", "kael-davan", "mira-holt", "sera-venn", "orrin-vask", "tobin-quill")
#: The profile every added NPC is cloned from.
CLONE_OF = "mira-holt"


def crowd_content(npcs: int, out: Path, base: Path = SAMPLE_CONTENT) -> Path:
    """Write a content folder with ``npcs`` NPC profiles into ``out`` (replaced if present).

    Args:
        npcs: how many NPCs (at least 1).
        out: the folder to write.
        base: the content folder to copy (the sample content by default).

    Returns:
        ``out``.

    Raises:
        ValueError: for fewer than one NPC.
    """
    if npcs < 1:
        raise ValueError("a crowd needs at least one NPC")
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(base, out)
    folder = out / "npcs"
    for slug in KEEP_ORDER[npcs:]:
        (folder / f"{slug}.yaml").unlink()
    template = (base / "npcs" / f"{CLONE_OF}.yaml").read_text(encoding="utf-8")
    for k in range(len(KEEP_ORDER) + 1, npcs + 1):
        text = template.replace("name: Mira Holt", f"name: Crowd {k:04d}", 1)
        (folder / f"crowd-{k:04d}.yaml").write_text(text, encoding="utf-8")
    return out


__all__ = ["crowd_content"]
