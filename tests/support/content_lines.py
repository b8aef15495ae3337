"""Monologue lines the tests add to a copy of the sample content."""

from __future__ import annotations


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
