"""Monologue lines the tests add to a copy of the sample content."""

from __future__ import annotations

import shutil
from pathlib import Path

SAMPLE_CONTENT = Path(__file__).resolve().parents[2] / "sample_saves" / "content"


def never_fired_line(line_id: str, text: str) -> str:
    """A pool entry (YAML) gated on fifty abandoned quarrels with Kael: no generated
    playtest fires it, and each comes closest at its most abandoned quarrels (a nearest miss)."""
    return f"""
- id: {line_id}
  text: "{text}"
  trigger: on_arrival
  prerequisites:
    interaction:
      target: "npc:kael-davan"
      state: conflict_abandoned
      min_count: 50
  tags: [test]
"""


def sample_content_plus(folder: Path, extra: str) -> Path:
    """A copy of the sample content at ``folder`` (made), with the YAML pool entries
    ``extra`` appended to its harbor-nights pool; returns ``folder``."""
    shutil.copytree(SAMPLE_CONTENT, folder)
    pool = folder / "monologues" / "harbor-nights.yaml"
    pool.write_text(pool.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return folder
