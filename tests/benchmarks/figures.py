"""Small helpers the benchmark scripts share."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]
