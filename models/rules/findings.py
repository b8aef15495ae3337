"""Findings: every problem the loader, the replay or the checks see, as a value.

A finding has a stable code from ``shared/docs/checks.md``, a severity, a message a
tester understands without the source, a location (a JSON path such as
``npcs.17.relationship.score`` or ``journal[12].event.WalkAwayPenalty.penalty``, or
``file:line:col`` for content and unparsable files) and the tick it applies to.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.Enum):
    """``error`` makes ``check`` exit 1; ``warning`` does not."""

    ERROR = "error"
    WARNING = "warning"


#: code -> (severity, short title) for every rule of the catalogue (checks.md).
CATALOGUE: dict[str, tuple[Severity, str]] = {
    "F001": (Severity.ERROR, "not JSON, not gzip or not UTF-8"),
    "F002": (Severity.ERROR, "shape: missing field, wrong type or unknown variant"),
    "F003": (Severity.ERROR, "not a save, or a newer format version"),
    "K001": (Severity.ERROR, "FactId is not category.topic"),
    "K002": (Severity.ERROR, "interaction metadata on the wrong fact, or missing"),
    "K003": (Severity.ERROR, "interaction FactId is not interaction.{slug}_{NNN}"),
    "K004": (Severity.WARNING, "a tick after saved_at_tick"),
    "K005": (Severity.WARNING, "map keys not in BTreeMap order"),
    "I001": (Severity.ERROR, "illegal interaction transition"),
    "I002": (Severity.ERROR, "ended_tick missing on an ended interaction, or set on one in progress"),
    "I003": (Severity.ERROR, "ended_tick before started_tick"),
    "I004": (Severity.ERROR, "confrontation flag disagrees with state or journal"),
    "I005": (Severity.ERROR, "two interactions in progress at once"),
    "I006": (Severity.ERROR, "interaction sequence numbers not 001, 002, ..."),
    "I007": (Severity.ERROR, "FactId slug is not the slug of target_entity"),
    "I008": (Severity.ERROR, "confidence disagrees with interaction state"),
    "I009": (Severity.WARNING, "unknown topic"),
    "I010": (Severity.ERROR, "target is not an NPC of the save"),
    "I011": (Severity.ERROR, "interaction event with nothing in progress"),
    "R001": (Severity.ERROR, "relationship score outside 0..100 or not finite"),
    "R002": (Severity.ERROR, "recorded delta is not the relationship formula"),
    "R003": (Severity.ERROR, "score_after is not previous score plus delta (or minus penalty)"),
    "R004": (Severity.ERROR, "more than 10 shared references of a kind, or a duplicate"),
    "R005": (Severity.ERROR, "impossible relationship counters"),
    "T001": (Severity.ERROR, "stress out of i16 range or not previous + delta"),
    "T002": (Severity.WARNING, "interaction tolerance outside its documented range"),
    "T003": (Severity.ERROR, "walk-away without its walk_away stress change"),
    "T004": (Severity.ERROR, "walk-away penalty missing, unexpected or of the wrong size"),
    "J001": (Severity.ERROR, "journal ticks decrease"),
    "J002": (Severity.ERROR, "journal event after saved_at_tick"),
    "J003": (Severity.ERROR, "replaying the journal does not give the snapshot"),
    "J004": (Severity.ERROR, "event names an unknown fact, entity or speaker"),
    "C001": (Severity.ERROR, "content YAML does not parse"),
    "C002": (Severity.ERROR, "NPC profile without a name, or a file name that is not a slug"),
    "C003": (Severity.ERROR, "monologue prerequisite breaks the schema"),
    "C004": (Severity.WARNING, "prerequisite names an undefined NPC or fact category"),
    "C005": (Severity.ERROR, "two monologue lines with one id"),
    "M001": (Severity.ERROR, "monologue fired while its prerequisites did not hold"),
    "M002": (Severity.ERROR, "monologue fired for an unknown line id"),
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a save or in content.

    Attributes:
        code: catalogue code (``K003``).
        severity: from the catalogue.
        message: what is wrong, in a tester's words.
        location: JSON path, or ``file:line:col``.
        tick: the game tick it applies to, when there is one.
    """

    code: str
    severity: Severity
    message: str
    location: str
    tick: int | None = None

    def to_json(self) -> dict:
        """The contract shape ``{"code", "severity", "message", "location", "tick"}``."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "location": self.location,
            "tick": self.tick,
        }


def finding(code: str, message: str, location: str, tick: int | None = None) -> Finding:
    """Make a finding with the catalogue severity of ``code``.

    Raises:
        KeyError: for a code that is not in the catalogue (a bug, not bad input).
    """
    return Finding(code, CATALOGUE[code][0], message, location, tick)


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

    def add(self, code: str, message: str, location: str, tick: int | None = None) -> None:
        """Record one finding (see ``finding``)."""
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n <= self._limit:
            self.items.append(finding(code, message, location, tick))
        else:
            self._last_location[code] = location

    def extend(self, findings) -> None:
        """Record findings made elsewhere."""
        for f in findings:
            self.add(f.code, f.message, f.location, f.tick)

    def count(self, code: str) -> int:
        """How many findings of ``code`` were seen, including suppressed ones."""
        return self._counts.get(code, 0)

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
