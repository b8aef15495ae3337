"""Findings: every problem the loader, the replay or the checks see, as a value.

A finding has a stable code from ``shared/docs/checks.md``, a severity, a message a
tester understands without the source, a location (a JSON path such as
``npcs.17.relationship.score`` or ``journal[12].event.WalkAwayPenalty.penalty``, or
``file:line:col`` for content and unparsable files) and the tick it applies to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import msgspec

from narrative_debugger.models.rules.catalogue import RULES, Severity

__all__ = ["TARGET_KINDS", "Finding", "FindingSink", "Severity", "Target", "finding"]

#: What a finding can be about (``Target.kind``).
TARGET_KINDS = ("journal", "fact", "entity", "npc", "interaction", "line", "content", "file")
# ASCII digits, at most 20 (a u64): ``int`` never meets a 4 300-digit numeral or a '٣'.
_TEXT_POSITION = re.compile(r"^(?:(.*):)?([0-9]{1,20}):([0-9]{1,20})$")
_JOURNAL = re.compile(r"^journal\[([0-9]{1,20})\](?:\.(.*))?$")


@dataclass(frozen=True, slots=True)
class Target:
    """What a finding is about, structured so views select it without parsing text.

    Attributes:
        kind: one of ``TARGET_KINDS``.
        journal_index: the journal entry (0-based position in ``journal``).
        previous_journal_index: J001 only: the earlier entry whose tick the entry goes back from.
        fact_id: the FactId (as written, even when malformed).
        npc: the NPC's slug.
        stable_id: the StableId of the NPC or entity.
        line_id: a monologue line id.
        topic: I009: the topic that is not in topics.yaml.
        field: the path below the object (``metadata.Interaction.ended_tick``,
            ``relationship.shared_references.jokes``, ``event.RelationshipInteraction.delta``).
        file: a content file (relative to the content folder) or the save file.
        line, col: 1-based text position in ``file``.
        snapshot: True when the finding is about the saved snapshot, not the journal.
    """

    kind: str
    journal_index: int | None = None
    previous_journal_index: int | None = None
    fact_id: str | None = None
    npc: str | None = None
    stable_id: int | None = None
    line_id: str | None = None
    topic: str | None = None
    field: str | None = None
    file: str | None = None
    line: int | None = None
    col: int | None = None
    snapshot: bool = False

    def to_json(self) -> dict:
        """The keys that apply (not None), plus ``kind`` and ``snapshot`` always."""
        return {k: v for k, v in msgspec.to_builtins(self).items() if v is not None or k == "snapshot"}

    @classmethod
    def from_location(cls, location: str) -> "Target":
        """The target a location names by itself, for findings made without one.

        ``file:line:col`` (content) gives ``content``; ``line:col`` (an unparsable
        save) and JSON paths outside the journal give ``file``; ``journal[i]...``
        gives ``journal``. The checks that know more (the NPC, the fact, the line)
        pass their own target.
        """
        location = location or ""
        m = _JOURNAL.match(location)
        if m:
            return cls("journal", journal_index=int(m.group(1)), field=m.group(2))
        m = _TEXT_POSITION.match(location)
        if m:
            return cls("content" if m.group(1) else "file", file=m.group(1) or None, line=int(m.group(2)), col=int(m.group(3)))
        return cls("file", field=location or None)



@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a save or in content.

    Attributes:
        code: catalogue code (``K003``).
        severity: from the catalogue.
        message: what is wrong, in a tester's words.
        location: JSON path, or ``file:line:col``.
        tick: the game tick it applies to, when there is one.
        target: what it is about, structured (``Target``).
        values: what a view shows beside the culprit: ``(label, value)`` pairs such as
            ``(("recorded delta", "0.375"), ("formula", "0.1750"))``.
    """

    code: str
    severity: Severity
    message: str
    location: str
    tick: int | None = None
    target: Target | None = None
    values: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        """The contract shape ``{"code", "severity", "message", "location", "tick", "target"}``."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "location": self.location,
            "tick": self.tick,
            "target": (self.target or Target.from_location(self.location)).to_json(),
        }


def finding(code: str, message: str, location: str, tick: int | None = None, target: Target | None = None, values=()) -> Finding:
    """Make a finding with the catalogue severity of ``code`` (``catalogue.RULES``).

    Without ``target``, the one ``location`` names by itself (``Target.from_location``).

    Raises:
        KeyError: for a code that is not in the catalogue (a bug, not bad input).
    """
    return Finding(code, RULES[code].severity, message, location, tick, target or Target.from_location(location), tuple(values))


class FindingSink:
    """Collects findings, capping repeats of one code so a broken 1M-event save stays readable.

    After ``per_code_limit`` findings of one code, further ones are counted and a
    single summary finding is added by ``close()``.
    """

    def __init__(self, per_code_limit: int = 10_000) -> None:
        self.items: list[Finding] = []
        self._counts: dict[str, int] = {}
        self._limit = per_code_limit
        self._last_location: dict[str, str] = {}

    def add(self, code: str, message: str, location: str, tick: int | None = None, target: Target | None = None, values=()) -> None:
        """Record one finding (see ``finding``)."""
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n <= self._limit:
            self.items.append(finding(code, message, location, tick, target, values))
        else:
            self._last_location[code] = location

    def extend(self, findings) -> None:
        """Record findings made elsewhere."""
        for f in findings:
            self.add(f.code, f.message, f.location, f.tick, f.target, f.values)

    def state(self) -> tuple[int, tuple, tuple]:
        """``(held, counts, last_locations)``: how many findings it holds, and its count
        and last suppressed location by code, as pairs: what ``restore`` takes back
        (a replay's checkpoint, issue 38)."""
        return len(self.items), tuple(self._counts.items()), tuple(self._last_location.items())

    def restore(self, items, counts, last_locations) -> None:
        """Hold ``items`` (the first findings ``state`` counted, in order) with those
        counts and locations, as the sink ``state`` was read from did then."""
        self.items = list(items)
        self._counts = dict(counts)
        self._last_location = dict(last_locations)

    def count(self, code: str) -> int:
        """How many findings of ``code`` were seen, including suppressed ones."""
        return self._counts.get(code, 0)

    @classmethod
    def merged(cls, *sinks: "FindingSink") -> "FindingSink":
        """One sink holding what ``sinks`` saw, as if each had been added to it in turn:
        the same findings, the same repeats capped, the same counts and notes.

        A sink keeps the first findings of a code and counts the rest, so the kept ones
        of each come before its suppressed ones; added in turn, the cap then falls on
        the same findings. The window shows the replay's findings before the snapshot
        is checked, and the whole list, in the order one sink gave, after."""
        out = cls(sinks[0]._limit if sinks else 10_000)
        for sink in sinks:
            kept: dict[str, int] = {}
            for f in sink.items:
                kept[f.code] = kept.get(f.code, 0) + 1
                out.add(f.code, f.message, f.location, f.tick, f.target, f.values)
            for code, n in sink._counts.items():
                more = n - kept.get(code, 0)
                if more:
                    out._counts[code] += more
                    out._last_location[code] = sink._last_location[code]
        return out

    def close(self) -> list[Finding]:
        """The findings, plus one note per code whose repeats were suppressed."""
        out = list(self.items)
        for code, n in self._counts.items():
            if n > self._limit:
                out.append(
                    finding(
                        code,
                        f"{n - self._limit} more {code} findings not listed ({n} in all)",
                        self._last_location.get(code, ""),
                    )
                )
        return out
