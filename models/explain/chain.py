"""The shape of an explanation: steps, folded aggregates and the ``why`` JSON contract.

An ``Explanation`` answers "why is this value what it is at tick T" with the chain
of journal entries that made it, oldest first. Long chains keep their last N steps
in full and fold the older ones into per-rule aggregates (count, and sum of the
actual changes after − before) so that a numeric chain still adds up:
``initial + Σ folded sums = steps[0].before``, ``steps[k].after = steps[k+1].before``
and ``steps[-1].after = value`` (floats within rounding, 1e-6 score points).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

#: Steps kept in full when no ``--limit`` is given.
DEFAULT_LIMIT = 20


class UnknownTarget(ValueError):
    """A target (or the NPC, fact, line or card it names) the save or content lacks.

    Attributes:
        message: what was not found, in words.
        matches: close matches (``difflib.get_close_matches``), best first.
    """

    def __init__(self, message: str, matches: list[str] | None = None) -> None:
        self.message = message
        self.matches = list(matches or [])
        hint = f" (did you mean: {', '.join(self.matches)}?)" if self.matches else ""
        super().__init__(message + hint)


@dataclass(frozen=True, slots=True)
class Step:
    """One journal entry of a chain.

    Attributes:
        journal_index: the entry's index in the journal (0-based).
        tick: its tick (game ticks).
        event: the journal variant name (``RelationshipInteraction``...).
        rule: the rule applied, with its seed section.
        before, after: the value before and after the entry (numbers for numeric
            targets; strings, dicts or lists otherwise).
        detail: the arithmetic or the reason, in words and numbers.
    """

    journal_index: int
    tick: int
    event: str
    rule: str
    before: Any
    after: Any
    detail: str

    def to_json(self) -> dict:
        return {
            "journal_index": self.journal_index,
            "tick": self.tick,
            "event": self.event,
            "rule": self.rule,
            "before": self.before,
            "after": self.after,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Folded:
    """Older steps summarised: how many, and per rule how many and the sum of after − before."""

    count: int
    by_rule: dict[str, tuple[int, float]]

    def to_json(self) -> dict:
        return {"count": self.count, "by_rule": {rule: {"count": n, "sum": s} for rule, (n, s) in self.by_rule.items()}}

    @property
    def total(self) -> float:
        """Sum of every folded change (score points, stress units, counts)."""
        return sum(s for _, s in self.by_rule.values())


@dataclass
class Explanation:
    """Why ``target`` has ``value`` at ``tick``.

    Attributes:
        target: the target as written (``npc:kael-davan.score``).
        tick: game tick.
        value: the value at ``tick`` (what ``state`` gives).
        summary: one sentence.
        steps: the newest steps in full, oldest first.
        folded: the older steps by rule, or None when nothing was folded.
        numeric: True when before/after/value are numbers (the waterfall can draw it).
        npc: StableId of the NPC the target concerns, if any.
        extra: target-specific keys (``line:``: eligible, clauses, nearest_miss;
            ``card:``: included, keyword, tokens, lore_budget, used_before, reason).
        refused: steps whose change was refused by a limit, by their position in
            ``steps`` -> the value the step would have reached (a dropped story card:
            the lore tokens used before it + its tokens). Their before equals their
            after; the Explain dock draws the would-be change crossing the limit. Not
            part of the JSON (``reason`` and each step's detail give the arithmetic).
    """

    target: str
    tick: int
    value: Any
    summary: str
    steps: list[Step] = field(default_factory=list)
    folded: Folded | None = None
    numeric: bool = False
    npc: int | None = None
    extra: dict = field(default_factory=dict)
    refused: dict[int, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        """The ``why --format json`` contract (issue 11), extra keys after the common ones."""
        doc = {
            "target": self.target,
            "tick": self.tick,
            "value": self.value,
            "summary": self.summary,
            "steps": [s.to_json() for s in self.steps],
            "folded": self.folded.to_json() if self.folded is not None else None,
        }
        doc.update(self.extra)
        return doc


def fold_list(steps: list[Step], limit: int, initial: float | None = 0) -> tuple[list[Step], Folded | None]:
    """Keep the last ``limit`` steps; fold the rest by rule (count, Σ after − before).

    ``initial`` None means the steps are not numeric: folded sums are then 0.
    """
    limit = max(0, limit)
    if len(steps) <= limit:
        return steps, None
    cut = len(steps) - limit
    by_rule: dict[str, tuple[int, float]] = {}
    for s in steps[:cut]:
        n, total = by_rule.get(s.rule, (0, 0))
        change = (s.after - s.before) if initial is not None else 0
        by_rule[s.rule] = (n + 1, total + change)
    return steps[cut:], Folded(cut, by_rule)


def fmt_num(x: float) -> str:
    """A figure for text: an ``int`` (tokens, stress, counts) as it is; a float in score
    points (score, delta, penalty, their sums) with 2 decimals, as ``state --format text``
    prints a score (``14.55``, ``0.56``), so float noise (``0.30000000000000004``,
    ``12.000000001``, ``1e-05``) never shows and ``-0.0`` reads ``0.00``. Display only:
    the JSON keeps full values."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    return fmt_places(x, 2)


def fmt_sum(before: float, change: float, result: float, places: int | None = None) -> str:
    """``before + change = result`` written out (``0.56 − 0.43 = 0.13``, U+2212 for a
    negative ``change``), at the fewest decimals, 2 to 6, at which the written figures
    add up exactly.

    At ``fmt_num``'s 2 decimals a true 0.555 − 0.43 = 0.125 would read "0.56 − 0.43 =
    0.12", arithmetic that does not add up; it reads "0.555 − 0.430 = 0.125". Where no
    precision makes it exact (float noise), 6 decimals. Integers stay as they are.
    Display only: the JSON keeps full values."""
    op = "−" if change < 0 else "+"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (before, change, result)):
        return f"{before} {op} {abs(change)} = {result}"
    places = sum_places(before, change, result) if places is None else places
    b, c, r = (fmt_places(v, places) for v in (before, abs(change), result))
    return f"{b} {op if c.strip('0.') else '+'} {c} = {r}"


def sum_places(before: float, change: float, result: float) -> int:
    """The fewest decimals, 2 to 6, at which ``before + change = result`` adds up as
    written (6 where none does: float noise)."""
    for places in range(2, 7):
        if adds_up(before, change, result, places):
            return places
    return 6


def adds_up(before: float, change: float, result: float, places: int) -> bool:
    """Whether ``before + change = result`` adds up written with ``places`` decimals."""
    b, c, r = (Decimal(f"{v:.{places}f}") for v in (before, change, result))
    return b + c == r


def apart_places(a: float, b: float) -> int:
    """The decimals two scores are written with side by side (A beside B): ``fmt_num``'s
    2, or the fewest up to 6 at which ``fmt_places`` writes ``a`` and ``b`` apart when
    they differ but read the same at 2 (0.6123 and 0.6127 both read "0.61": at 3,
    "0.612" and "0.613"). Values that part only past 6 decimals (float noise) or are
    NaN keep 2."""
    if a == b or a != a or b != b:
        return 2
    for places in range(2, 7):
        if fmt_places(a, places) != fmt_places(b, places):
            return places
    return 2


def fmt_places(x: float, places: int) -> str:
    """``x`` with ``places`` decimals; ``-0.00`` reads ``0.00``."""
    text = f"{x:.{places}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def fmt_signed(x: float) -> str:
    """``+0.55`` / ``−0.30`` (U+2212), as ``fmt_num``; a change that rounds to zero is ``+0.00``."""
    text = fmt_num(abs(x))
    return ("−" if x < 0 and text.strip("0.") else "+") + text


def fmt_plain(x) -> str:
    """An input figure as the save gives it (a sentiment, a message length, a stress
    step), without float noise or exponent: up to 6 decimals, trailing zeros dropped
    (``0.30000000000000004`` → ``0.3``, ``1e-05`` → ``0.00001``, ``-0.0`` → ``0``,
    ``1234567`` stays ``1234567``)."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    if not isinstance(x, float):
        return str(x)
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_value(value) -> str:
    """A before/after/value scalar for text: numbers as ``fmt_num``, None as ``—``."""
    if value is None:
        return "—"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt_num(value)
    return str(value)
