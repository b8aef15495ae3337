"""What a what-if returns (issue 38): ``WhatIf``, the comparison of the recorded run
with the edited one and what follows from the edit, as the ``whatif`` command's JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

from narrative_debugger.models.compare.comparison import Comparison


@dataclass
class WhatIf:
    """A what-if: the comparison of A (as recorded) with B (what if) and what follows.

    Attributes:
        comparison: the ``diff`` comparison (A as recorded, B what if).
        edits: the patch operations applied to the save, then the tuning values set
            (``{"op": "set", "name", "value"}``).
        would_not_happen: recorded decisions B's state no longer supports:
            ``{journal_index, tick, event, reason}``.
        would_happen: decisions B's state calls for that the journal lacks, same shape.
        crossings: slug -> ``{"a": [ticks], "b": [ticks]}`` where the stress threshold
            crossings (either way) moved.
        prompts_regenerate: slug -> ``{"first_tick", "turns"}``: the NPC's prompt text
            differs at ``turns`` of its lines, the first at ``first_tick``.
        end_levels: slug -> ``{"a", "b"}`` levels (display names) at the compared tick
            where they differ.
    """

    comparison: Comparison
    edits: list = field(default_factory=list)
    would_not_happen: list = field(default_factory=list)
    would_happen: list = field(default_factory=list)
    crossings: dict = field(default_factory=dict)
    prompts_regenerate: dict = field(default_factory=dict)
    end_levels: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when anything differs (``whatif`` exits 1)."""
        return bool(not self.comparison.equal or self.would_not_happen or self.would_happen or self.crossings or self.prompts_regenerate)

    def to_json(self) -> dict:
        """The ``diff`` contract with A = as recorded and B = what if, plus ``edits``,
        ``would_not_happen``, ``would_happen``, ``crossings``, ``prompts_regenerate`` and ``end_levels``."""
        out = self.comparison.to_json()
        out["edits"] = self.edits
        out["would_not_happen"] = self.would_not_happen
        out["would_happen"] = self.would_happen
        out["crossings"] = self.crossings
        out["prompts_regenerate"] = self.prompts_regenerate
        out["end_levels"] = self.end_levels
        return out
