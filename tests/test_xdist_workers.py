"""``make test`` runs ``pytest -n auto``: one worker per CPU this process may run on, and
serially on one CPU (tests/conftest.py's pytest_xdist_auto_num_workers)."""

from __future__ import annotations

import os

import pytest

from tests import conftest


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this OS")
@pytest.mark.parametrize(("cpus", "workers"), [({0}, 0), ({3}, 0), ({0, 1}, 2), (set(range(8)), 8)])
def test_auto_counts_the_cpus_this_process_may_use(monkeypatch, cpus, workers):
    """taskset -c 0 on a many-core machine: serial, not one worker per core of the machine."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cpus)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert conftest.pytest_xdist_auto_num_workers(None) == workers


def test_auto_without_affinity_counts_the_machines_cpus(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert conftest.pytest_xdist_auto_num_workers(None) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert conftest.pytest_xdist_auto_num_workers(None) == 0
