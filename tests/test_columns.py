"""A value handed from one process to another through a file of columns (issue 37):
what ``transfer.read`` gives reads like what ``transfer.write`` was given, its large
lists and dicts mapped from the file rather than rebuilt."""

from __future__ import annotations

import os
import pickle
import zlib
from array import array
from bisect import bisect_right

import pytest
from narrative_debugger.models.columns import transfer
from narrative_debugger.models.columns.mapped import CHUNK, IntColumn, LabelColumn, MappedDict, MappedSortedDict, PatchedColumn, RecordColumn, SortedColumn
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.timeline.state_json import state_json
from sortedcontainers import SortedDict, SortedList

from tests.conftest import CONTENT, SAMPLES

N = transfer.MIN_ITEMS + CHUNK + 3  # past one column's threshold, and a chunk's edge


def round_trip(tmp_path, value):
    path = tmp_path / "value.bin"
    transfer.write(path, value)
    return transfer.read(path)


def test_large_lists_and_dicts_come_back_as_columns_equal_to_them(tmp_path):
    ints = list(range(N))
    words = [f"w{i}" for i in range(N)]
    mixed = [None, 2**64 - 1, "x", (1, 2)] * (N // 4)
    table = {f"k{i}": (i, [i]) for i in range(N)}
    ordered = SortedDict((f"f{i:06d}", i) for i in range(N))
    keys = SortedList(f"s{i:06d}" for i in range(N))
    small = [1, 2, 3]
    value = {"ints": ints, "words": words, "mixed": mixed, "table": table, "ordered": ordered, "keys": keys, "small": small}
    got = round_trip(tmp_path, value)
    assert type(got["ints"]) is IntColumn and got["ints"] == ints and list(got["ints"]) == ints
    assert type(got["words"]) is RecordColumn and got["words"] == words
    assert got["mixed"] == mixed  # a u64 past int64 stays exact (records, not an int64 array)
    assert type(got["table"]) is MappedDict and got["table"] == table and list(got["table"]) == list(table)
    assert type(got["ordered"]) is MappedSortedDict and list(got["ordered"].items()) == list(ordered.items())
    assert type(got["keys"]) is SortedColumn and list(got["keys"]) == list(keys)
    assert got["small"] == small and type(got["small"]) is list  # small ones stay in the pickle


def test_numeric_arrays_are_mapped_back_as_they_were(tmp_path):
    import numpy as np

    arrays = {"u64": np.arange(N, dtype=np.uint64) * (2**44), "f32": np.linspace(0, 1, N, dtype=np.float32),
              "flags": np.arange(N) % 3 == 0, "grid": np.arange(2 * N, dtype=np.int16).reshape(2, N),
              "small": np.arange(5), "text": np.array(["a", "b"] * N)}
    positions = array("q", range(-3, 3 * N, 3))  # an index's dialogue positions
    got, got_positions = round_trip(tmp_path, (arrays, positions))
    for name, values in arrays.items():
        assert got[name].dtype == values.dtype and got[name].shape == values.shape and np.array_equal(got[name], values), name
    assert got_positions.dtype == np.int64 and got_positions.tolist() == positions.tolist()
    assert bisect_right(got_positions, 300) == bisect_right(positions, 300) and got_positions[-1] == positions[-1]
    assert not got["u64"].flags.writeable  # mapped from the file, never copied
    assert got["u64"][-1] == (N - 1) * 2**44 and got["small"].flags.writeable


def test_a_long_history_inside_a_dicts_value_is_a_column_of_its_own(tmp_path):
    # A fact updated 50 000 times sits in a chunk of 16 facts: reading one of them must
    # not decode its history, and reading it reads the history as a column.
    from narrative_debugger.models.timeline.index import Versions

    def versions(positions, values):
        made = Versions(positions[0], values[0])
        made.positions, made.values = positions, values
        return made

    def plain(v):
        return list(v.positions), list(v.values)

    facts = {f"fact.{i:05d}": versions([i], [f"v{i}"]) for i in range(N)}
    facts["fact.00007"] = versions(list(range(50_000)), [("value", k) for k in range(50_000)])
    got = round_trip(tmp_path, facts)
    long = got["fact.00007"]
    assert type(long.positions) is IntColumn and type(long.values) is RecordColumn
    assert plain(long) == plain(facts["fact.00007"]) and plain(got["fact.00008"]) == plain(facts["fact.00008"])
    assert all(plain(got[key]) == plain(value) for key, value in facts.items())
    assert long.at(31_000) == ("value", 31_000)  # a bisection of the mapped positions
    for i in range(0, N, 97):  # its chunk leaves the kept ones; read again, it is made again
        got[f"fact.{i:05d}"]
    assert got["fact.00007"].values[-1] == ("value", 49_999)


def test_a_list_of_few_distinct_labels_is_one_byte_an_item(tmp_path):
    kinds = (["DialogueLine", "InteractionStarted", None, "DialogueLine", "FactLearned"] * N)[:N]
    many = [f"label{i % 300}" for i in range(N)]  # more than a byte's worth: records
    got, got_many = round_trip(tmp_path, (kinds, many))
    assert type(got) is LabelColumn and type(got_many) is RecordColumn
    assert got == kinds and list(got) == kinds and list(reversed(got)) == kinds[::-1]
    for k in (0, 2, N - 1, -1, -N):
        assert got[k] == kinds[k]
    assert got[3:11] == kinds[3:11] and got[::-7] == kinds[::-7]
    with pytest.raises(IndexError):
        got[N]


def test_columns_read_like_the_lists_they_were(tmp_path):
    ints = list(range(0, 3 * N, 3))
    words = [f"w{i:06d}" for i in range(N)]
    col, wcol = round_trip(tmp_path, (ints, words))
    for k in (0, 1, CHUNK - 1, CHUNK, N - 1, -1, -CHUNK - 1):
        assert col[k] == ints[k] and wcol[k] == words[k]
        assert type(col[k]) is int
    for s in (slice(None), slice(5, CHUNK + 9), slice(CHUNK, CHUNK), slice(-20, None), slice(1, 4000, 7), slice(None, None, -3)):
        assert col[s] == ints[s] and wcol[s] == words[s]
    with pytest.raises(IndexError):
        wcol[N]
    assert list(reversed(wcol)) == words[::-1]
    assert bisect_right(col, 3 * 1000) == bisect_right(ints, 3 * 1000)
    assert "w000010" in wcol and wcol.index("w000300") == 300


def test_sorted_columns_answer_ranges_and_bisections(tmp_path):
    keys = SortedList(f"interaction.npc-{i % 7}_{i:05d}" for i in range(N))
    facts = SortedDict((k, len(k)) for k in keys)
    col, mapped = round_trip(tmp_path, (keys, facts))
    prefix = "interaction.npc-3_"
    want = [k for k in keys if k.startswith(prefix)]
    got = [k for k in col.irange(minimum=prefix) if k.startswith(prefix)][: len(want)]
    assert got == want
    assert list(mapped.irange(minimum=prefix, maximum=prefix + "\uffff")) == want
    assert mapped.bisect_left(prefix) == facts.bisect_left(prefix) and mapped.bisect_right(prefix) == facts.bisect_right(prefix)
    assert want[0] in col and "nope" not in col
    with pytest.raises(TypeError):
        mapped["new"] = 1  # a write would break the order


def test_lookups_read_the_writers_key_index_and_find_what_a_dict_finds(tmp_path):
    # Two FactIds with one CRC-32 (the key index's hash for a str): both are found.
    twins = ("fact.lhrsmlbcuu", "fact._kgzkrvjxt")
    assert zlib.crc32(twins[0].encode()) == zlib.crc32(twins[1].encode())
    words = {f"fact.{i:05d}": i for i in range(N)} | {twins[0]: "first", twins[1]: "second", "caf\u00e9 \ud800": "lone"}
    ids = {i * 2**50: i for i in range(N)} | {2**64 - 1: "u64 max", 2**63: "past int64", -5: "negative", 1: "one"}
    got_words, got_ids = round_trip(tmp_path, (words, ids))
    assert got_words.indexed and got_ids.indexed  # nothing to index when read
    for key, value in (*words.items(),):
        assert got_words[key] == value
    assert got_words[twins[0]] == "first" and got_words[twins[1]] == "second"
    for key, value in ids.items():
        assert got_ids[key] == value and key in got_ids
    for missing in ("fact.99999", "", "fact.lhrsmlbcuv", 2**64, 2**64 - 2, -1, None, (1, 2)):
        assert missing not in got_words and missing not in got_ids
        assert got_words.get(missing) is None
    assert got_ids[1.0] == "one" and got_ids[True] == "one"  # a dict's equal keys: float and bool too


def test_bisections_read_one_chunk_and_agree_with_sorted_containers(tmp_path):
    # Runs of equal keys across chunk edges, and probes before, between and after.
    keys = SortedList(f"k{i // 300:04d}" for i in range(N))
    facts = SortedDict((f"fact.{i:06d}", i) for i in range(0, 3 * N, 3))
    col, mapped = round_trip(tmp_path, (keys, facts))
    assert col.indexed and mapped.indexed
    for probe in ("", "k", "k0000", "k0001", "k0003", "k0004x", "k0008", "k9999", "l"):
        assert col.bisect_left(probe) == keys.bisect_left(probe), probe
        assert col.bisect_right(probe) == keys.bisect_right(probe), probe
        assert (probe in col) == (probe in keys)
        assert list(col.irange(probe, "k0005", (True, False))) == list(keys.irange(probe, "k0005", (True, False)))
    for i in (0, 1, 2, 3, 383, 384, 385, 3 * N - 1, 3 * N, 3 * N + 7):
        probe = f"fact.{i:06d}"
        assert mapped.bisect_left(probe) == facts.bisect_left(probe) and mapped.bisect_right(probe) == facts.bisect_right(probe)
        assert list(mapped.irange(maximum=probe, reverse=True))[:5] == list(facts.irange(maximum=probe, reverse=True))[:5]


def test_a_mapped_dict_keeps_a_readers_writes_beside_the_file(tmp_path):
    table = round_trip(tmp_path, {i: str(i) for i in range(N)})
    table[N] = "new"
    table.setdefault(N + 1, "other")
    table.setdefault(3, "not kept: 3 is in the file")
    assert table[N] == "new" and table[N + 1] == "other" and table[3] == "3"
    assert len(table) == N + 2 and list(table)[-2:] == [N, N + 1]
    with pytest.raises(KeyError):
        table[-1]


def test_a_list_reached_twice_is_one_column(tmp_path):
    shared = [f"x{i}" for i in range(N)]
    a, b = round_trip(tmp_path, (shared, {"again": shared}))
    assert a is b["again"]


def test_the_file_goes_with_its_last_column(tmp_path):
    path = tmp_path / "value.bin"
    transfer.write(path, [f"x{i}" for i in range(N)])
    column = transfer.read(path)
    if os.name == "posix":
        assert not path.exists()  # mapped, then its name removed: nothing is left behind on a crash
    assert column[N - 1] == f"x{N - 1}"
    del column
    assert not path.exists()


def test_shared_objects_are_the_readers_own(tmp_path):
    """A value made from one the reader holds (a what-if's B beside the window's A) names
    those parts, and the reader puts its own objects there; a value equal to a shared
    one is not taken for it."""
    recorded = {"npcs": {"mira": 1}, "journal": list(range(N))}
    made = {"a": recorded, "npcs": recorded["npcs"], "journal": recorded["journal"], "other": {"mira": 1}}
    path = tmp_path / "value.bin"
    transfer.write(path, made, shared={id(recorded): "play", id(recorded["npcs"]): ("save", "npcs")})
    readers = {"npcs": {"mira": 1}, "journal": [0]}
    got = transfer.read(path, shared={"play": readers, ("save", "npcs"): readers["npcs"]})
    assert got["a"] is readers and got["npcs"] is readers["npcs"]
    assert got["journal"] == list(range(N)) and got["journal"] is not readers["journal"]  # not named: written
    assert got["other"] == {"mira": 1} and got["other"] is not readers["npcs"]
    transfer.write(path, made, shared={id(recorded): "play"})
    with pytest.raises(pickle.UnpicklingError, match="play"):
        transfer.read(path, shared={})


def test_a_list_patched_from_a_shared_one_reads_as_itself(tmp_path):
    """A list that is one the reader holds but for a few items (a what-if's journal) is
    written as those items only, and read as the reader's list with them replaced."""
    recorded = [f"e{i}" for i in range(N)]
    edited = list(recorded)
    edited[5], edited[N - 1] = "five", "last"
    path = tmp_path / "value.bin"
    transfer.write(path, {"journal": edited, "again": edited},
                   shared={id(edited): transfer.Patched("journal", {5: "five", N - 1: "last"})})
    assert path.stat().st_size < 1000  # the items replaced, not the list
    readers = list(recorded)
    got = transfer.read(path, shared={"journal": readers})
    column = got["journal"]
    assert isinstance(column, PatchedColumn) and column == edited and list(column) == edited and got["again"] == edited
    assert column[5] == "five" and column[-1] == "last" and column[4] == "e4" and len(column) == N
    assert column[3:7] == ["e3", "e4", "five", "e6"] and column[1:8:2] == ["e1", "e3", "five", "e7"]
    assert list(reversed(column)) == edited[::-1] and column[::-1] == edited[::-1]
    assert readers == recorded  # the reader's list is not changed
    assert pickle.loads(pickle.dumps(column)) == edited


def test_a_column_handed_on_is_the_list_or_dict_it_stands_for(tmp_path):
    """A mapped value pickled again (a what-if's B holds parts of the mapped A) goes as
    its items: the mapping stays behind, and a file written from it reads the same."""
    value = {"ints": list(range(N)), "words": [f"w{i}" for i in range(N)], "table": {f"k{i}": i for i in range(N)},
             "ordered": SortedDict((f"f{i:06d}", i) for i in range(N)), "keys": SortedList(f"s{i:06d}" for i in range(N))}
    mapped = round_trip(tmp_path, value)
    again = pickle.loads(pickle.dumps(mapped))
    assert again == value and [type(again[k]) for k in value] == [list, list, dict, SortedDict, SortedList]
    path = tmp_path / "again.bin"
    transfer.write(path, {"nested": [mapped]})
    assert transfer.read(path)["nested"][0] == value


def test_a_file_kept_open_is_read_by_another_reader_after_its_name_is_gone(tmp_path):
    """The window keeps the open's file open while its playthrough lives; a what-if's
    child reads it through that descriptor (POSIX) or its name (elsewhere)."""
    path = tmp_path / "value.bin"
    transfer.write(path, {"words": [f"w{i}" for i in range(N)]})
    value, file = transfer.load(path, keep_open=True)
    handle = file.handle()
    other = transfer.read(os.dup(handle) if isinstance(handle, int) else handle)
    assert other == value and other["words"][N - 1] == f"w{N - 1}"
    transfer.write(path, [f"x{i}" for i in range(N)])
    _, file = transfer.load(path)
    if os.name == "posix":  # not kept open, and its name is gone
        with pytest.raises(ValueError):
            file.handle()


@pytest.mark.parametrize("name", ["evening.json", "qa-faults.json", "walkaway-spiral.json"])
def test_a_playthrough_handed_over_answers_as_the_one_opened(tmp_path, name, monkeypatch):
    """The window reads a playthrough the open's child process wrote: every tick's
    state (the ``state`` command's JSON) is the same as the one opened here, with the
    journal, the index and the snapshot's facts mapped as columns."""
    monkeypatch.setattr(transfer, "MIN_ITEMS", 64)  # the samples' lists are short: map most of them
    play = Playthrough.open(SAMPLES / name, CONTENT)
    got = round_trip(tmp_path, play)
    assert isinstance(got.save.journal.data, RecordColumn) and got.index.dialogue.journal is got.save.journal
    if len(play.index.facts) >= transfer.MIN_ITEMS:
        assert isinstance(got.index.facts, MappedDict) and isinstance(got.save.knowledge.facts, MappedSortedDict)
    assert got.findings == play.findings
    ticks = sorted(set(play.index.ticks))
    for tick in [ticks[0], ticks[len(ticks) // 3], ticks[-1], play.save.saved_at_tick]:
        assert state_json(got, tick) == state_json(play, tick)
