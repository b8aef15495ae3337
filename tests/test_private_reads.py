"""Tests assert public behaviour (issue 36): the reads of private attributes left in the
tests stay few. What counts is in ``tests/support/count_private_reads.py``."""

from __future__ import annotations

from pathlib import Path

from tests.support.count_private_reads import count, private_reads

#: Issue 36's bound on the tests' private reads (165 when it was set; 39 after).
MOST = 40


def test_the_tests_read_few_private_attributes():
    per_file = count(Path(__file__).resolve().parent)
    total = sum(len(reads) for reads in per_file.values())
    listing = "\n".join(f"{path.name}:{line}: {name}" for path, reads in per_file.items() for line, name in reads)
    assert total <= MOST, (
        f"{total} reads of private attributes in the tests (at most {MOST}). Assert what a user or a caller "
        f"sees instead: model data, signals, rendered output, the CLI, public properties "
        f"(python -m tests.support.count_private_reads -v):\n{listing}"
    )


def test_the_count_sees_reads_and_leaves_out_the_files_own_names():
    source = (
        "import collections\n"
        "def _helper():\n    return 1\n"
        "class Fake:\n"
        "    def __init__(self):\n        self._mine = 1\n"
        "    def read(self):\n        return self._mine\n"  # the file's own class: not counted
        "def test(view, monkeypatch, model):\n"
        "    _helper()\n"                       # a name, not an attribute
        "    view._mine\n"                      # another object's: counted
        "    view._layers\n"                    # counted
        "    model.__class__\n"                 # a dunder: not counted
        "    collections.namedtuple('P', 'x')(1)._replace(x=2)\n"  # namedtuple API: not counted
        "    monkeypatch.setattr(model, '_cache', None)\n"  # counted, by name
        "    view._layers = {}\n"               # a write: not counted
    )
    assert private_reads(source) == [(11, "_mine"), (12, "_layers"), (15, "_cache (by name)")]
