"""Tuning: the constants the rules derive values with, as one frozen value (issue 38).

The replay, the levels and the prompt builder read their constants from a ``Tuning``;
``DEFAULT_TUNING`` holds the seeds' numbers, so a replay without one behaves as it
always did. ``whatif --set NAME=VALUE`` reaches these under the names of ``NAMES``
(``Tuning.with_value``); ``whatif --list`` prints them with their values.

Names and what they hold:

- ``relationship.sentiment_weight`` (0.5), ``relationship.length_cap`` (0.3),
  ``relationship.length_divisor`` (500), ``relationship.turns_cap`` (0.2),
  ``relationship.turns_step`` (0.05), ``relationship.base`` (0.1): the delta formula of
  the relationship seed, ``sentiment * weight + min(length_cap, length / divisor) +
  min(turns_cap, turns * step) + base``, clamped to -1..1 score points.
- ``levels.stranger`` … ``levels.good_friend`` (20 / 40 / 60 / 80): each level's
  inclusive upper bound in score points; above the last is Close Friend.
- ``npc.SLUG.threshold``: the NPC's stress threshold (ToleranceThreshold, schema §8.1),
  and ``npc.SLUG.walk_away_threshold``: walk-aways before a penalty (InteractionTolerance);
  both default to the save's snapshot.
- ``prompt.budget`` (prompt.yaml's ``context_token_budget``), ``prompt.min_available``
  (256 tokens history and lore always get) and ``prompt.card_share`` (0.4 of what is
  available may go to lore): the prompt budget and its reserves (context builder seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from narrative_debugger.models.boundary import cut
from narrative_debugger.models.domain.types import LEVEL_BOUNDS, RelationshipLevel

#: The formula's constants by name (relationship seed, "Delta Formula"): field, default.
FORMULA_FIELDS = ("sentiment_weight", "length_cap", "length_divisor", "turns_cap", "turns_step", "base")
LEVEL_NAMES = ("stranger", "acquaintance", "friend", "good_friend")


@dataclass(frozen=True, slots=True)
class Tuning:
    """The rules' constants; the defaults are the seeds' (see the module docstring).

    Attributes:
        sentiment_weight, length_cap, length_divisor, turns_cap, turns_step, base: the
            delta formula's constants (score points; the divisor in characters).
        level_bounds: inclusive upper bounds of Stranger, Acquaintance, Friend and Good
            Friend in score points, ascending.
        thresholds: (slug, stress threshold) pairs that replace the snapshot's.
        walk_away_thresholds: (slug, walk-aways before a penalty) pairs that replace
            the snapshot's.
        prompt_budget: tokens, or None for prompt.yaml's ``context_token_budget``.
        min_available: tokens history and lore always get, whatever the fixed sections cost.
        card_share: the share (0..1) of the available tokens lore may take.
    """

    sentiment_weight: float = 0.5
    length_cap: float = 0.3
    length_divisor: float = 500.0
    turns_cap: float = 0.2
    turns_step: float = 0.05
    base: float = 0.1
    level_bounds: tuple[float, float, float, float] = tuple(b for b, _ in LEVEL_BOUNDS)
    thresholds: tuple[tuple[str, int], ...] = ()
    walk_away_thresholds: tuple[tuple[str, int], ...] = ()
    prompt_budget: int | None = None
    min_available: int = 256
    card_share: float = 0.4

    def unclamped_delta(self, sentiment: float, message_length: float, conversation_turns: float) -> float:
        """The delta formula before its clamp, in score points."""
        return (sentiment * self.sentiment_weight + min(self.length_cap, message_length / self.length_divisor)
                + min(self.turns_cap, conversation_turns * self.turns_step) + self.base)

    @property
    def formula_is_default(self) -> bool:
        """True when the delta formula's constants are the seed's."""
        return all(getattr(self, name) == getattr(DEFAULT_TUNING, name) for name in FORMULA_FIELDS)

    def level_for(self, score: float) -> RelationshipLevel:
        """The level of ``score`` under these bounds (inclusive upper bounds)."""
        if self.level_bounds == DEFAULT_TUNING.level_bounds:
            return RelationshipLevel.for_score(score)
        for bound, (_, level) in zip(self.level_bounds, LEVEL_BOUNDS):
            if score <= bound:
                return level
        return RelationshipLevel.CLOSE_FRIEND

    def threshold_of(self, slug: str, default: int) -> int:
        """The stress threshold of NPC ``slug``: the tuned one, else ``default``."""
        return dict(self.thresholds).get(slug, default)

    def walk_away_threshold_of(self, slug: str, default: int) -> int:
        """Walk-aways before a penalty for NPC ``slug``: the tuned number, else ``default``."""
        return dict(self.walk_away_thresholds).get(slug, default)

    def with_value(self, name: str, raw: object, in_order: bool = True) -> "Tuning":
        """A copy with the tuning value ``name`` set to ``raw`` (a JSON value).

        ``in_order`` False leaves the level bounds' order unchecked (``check_bounds``
        checks it once several values are set: raising two bounds one at a time passes
        through an order that falls).

        Raises:
            KeyError: ``name`` is not a tuning name (see ``NAMES``, ``npc.SLUG.threshold``,
                ``npc.SLUG.walk_away_threshold``).
            ValueError: the value has the wrong type or is out of range (the message says which).
        """
        if name.startswith("npc."):
            slug, _, what = name[4:].rpartition(".")
            if not slug or what not in ("threshold", "walk_away_threshold"):
                raise KeyError(name)
            if what == "threshold":
                value = _integer(raw, -(2**15), 2**15 - 1, "an i16")
                return replace(self, thresholds=_set_pair(self.thresholds, slug, value))
            value = _integer(raw, 0, 255, "a u8")
            return replace(self, walk_away_thresholds=_set_pair(self.walk_away_thresholds, slug, value))
        spec = NAMES.get(name)
        if spec is None:
            raise KeyError(name)
        field_name, check = spec
        if field_name.startswith("level_bounds."):
            k = int(field_name.rpartition(".")[2])
            value = _number(raw, 0.0, 100.0)
            bounds = list(self.level_bounds)
            bounds[k] = value
            tuned = replace(self, level_bounds=tuple(bounds))
            if in_order:
                tuned.check_bounds()
            return tuned
        return replace(self, **{field_name: check(raw)})

    def check_bounds(self) -> None:
        """Raise ValueError when the level bounds fall (each must be at least the one
        before: relationship seed, levels by score)."""
        bounds = self.level_bounds
        if any(a > b for a, b in zip(bounds, bounds[1:])):
            raise ValueError(f"level bounds must not fall (each at least the one before): {', '.join(f'{b:g}' for b in bounds)}")


def _set_pair(pairs: tuple[tuple[str, int], ...], slug: str, value: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted({**dict(pairs), slug: value}.items()))


def _shown(raw: object) -> str:
    """A JSON value as the user typed it (``true``, ``"abc"``), a long one cut and said so."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if raw is None:
        return "null"
    return cut(repr(raw) if not isinstance(raw, str) else '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"')


def _number(raw: object, low: float, high: float, *, above_low: bool = False) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or (isinstance(raw, float) and not math.isfinite(raw)):
        raise ValueError(f"expected a number, found {_shown(raw)}")
    if raw < low or raw > high or (above_low and raw == low):  # an int of any size compares exactly with a float
        side = "above" if above_low else "from"
        raise ValueError(f"{_shown(raw)} is out of range: {side} {low:g} to {high:g}")
    return float(raw)


def _integer(raw: object, low: int, high: int, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError(f"expected an integer ({what}), found {_shown(raw)}")
    if not low <= raw <= high:
        raise ValueError(f"{_shown(raw)} is out of range for {what}: {low} to {high}")
    return raw


#: Every global tuning name: (field of Tuning, check of a JSON value). NPC names are
#: ``npc.SLUG.threshold`` and ``npc.SLUG.walk_away_threshold``.
NAMES: dict[str, tuple[str, object]] = {
    "relationship.sentiment_weight": ("sentiment_weight", lambda v: _number(v, -10.0, 10.0)),
    "relationship.length_cap": ("length_cap", lambda v: _number(v, 0.0, 10.0)),
    "relationship.length_divisor": ("length_divisor", lambda v: _number(v, 0.0, 1e9, above_low=True)),
    "relationship.turns_cap": ("turns_cap", lambda v: _number(v, 0.0, 10.0)),
    "relationship.turns_step": ("turns_step", lambda v: _number(v, 0.0, 10.0)),
    "relationship.base": ("base", lambda v: _number(v, -10.0, 10.0)),
    **{f"levels.{name}": (f"level_bounds.{k}", None) for k, name in enumerate(LEVEL_NAMES)},
    "prompt.budget": ("prompt_budget", lambda v: _integer(v, 1, 10_000_000, "a token count")),
    "prompt.min_available": ("min_available", lambda v: _integer(v, 0, 10_000_000, "a token count")),
    "prompt.card_share": ("card_share", lambda v: _number(v, 0.0, 1.0)),
}

DEFAULT_TUNING = Tuning()


def tuning_values(tuning: Tuning, npcs=(), prompt_budget: int | None = None) -> list[tuple[str, object]]:
    """Every tuning name with its value under ``tuning``, in ``NAMES`` order, then the
    NPCs' (``npcs``: NpcState values of a save, slug order). ``prompt_budget`` stands
    for ``prompt.budget`` when the tuning leaves it to prompt.yaml (None: unknown)."""
    out: list[tuple[str, object]] = []
    for name, (field_name, _) in NAMES.items():
        if field_name.startswith("level_bounds."):
            out.append((name, tuning.level_bounds[int(field_name.rpartition(".")[2])]))
        elif field_name == "prompt_budget":
            out.append((name, tuning.prompt_budget if tuning.prompt_budget is not None else prompt_budget))
        else:
            out.append((name, getattr(tuning, field_name)))
    for npc in sorted(npcs, key=lambda n: n.slug):
        out.append((f"npc.{npc.slug}.threshold", tuning.threshold_of(npc.slug, npc.tolerance.threshold)))
        out.append((f"npc.{npc.slug}.walk_away_threshold", tuning.walk_away_threshold_of(npc.slug, npc.interaction_tolerance.walk_away_threshold)))
    return out
