"""Hostile inputs (issue 8 §3): special files, compressed bombs, report PNGs, odd JSON,
YAML tabs and names that try to steer output paths. None may hang, traceback or
blow up memory; each gets its finding code and a location."""

from __future__ import annotations

import copy
import functools
import gzip
import io
import json
import os
import re
import struct
import threading
import tracemalloc
import zlib
from pathlib import Path

import pytest
from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.fileio import FileRefused, inflate_gzip, read_regular_file
from narrative_debugger.models.report.meta import (
    MAX_RECORD_BYTES,
    REPORT_FORMAT_VERSION,
    REPORT_KEY,
    ReportError,
    ViewRecord,
    embed_record,
    read_record,
    read_record_file,
    safe_file_stem,
    write_new_file,
)
from narrative_debugger.models.save.jsonio import MAX_DOCUMENT_BYTES, decode_bytes, decode_file
from narrative_debugger.models.save.savefile import load_save, load_save_bytes

from tests.support.files import write_content

DATA = Path(__file__).parent / "data"
RAW = (DATA / "minimal.json").read_bytes()
BASE = json.loads(RAW)
NEEDS_FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _in_thread(fn, timeout=10.0):
    """Run ``fn`` in a daemon thread; fail (instead of hanging the suite) when it blocks."""
    result = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{fn} blocked for more than {timeout} s"
    if "error" in result:
        raise result["error"]
    return result["value"]


def _only_f001(save):
    assert not save.readable
    (f,) = save.findings
    assert f.code == "F001" and f.location == "1:1"
    return f


# ----- special files -----


@NEEDS_FIFO
def test_fifo_save_is_refused_at_once(tmp_path):
    fifo = tmp_path / "evening.json"
    os.mkfifo(fifo)
    f = _only_f001(_in_thread(lambda: load_save(fifo)))
    assert f.message == f"{fifo}: is a FIFO (named pipe), not a regular file; not read"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_device_save_is_refused_at_once(tmp_path, device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    link = tmp_path / "endless.json.gz"
    link.symlink_to(device)
    f = _only_f001(_in_thread(lambda: load_save(link)))
    assert "character device" in f.message and f.message.startswith(f"{link}: ")


def test_folder_save_is_refused(tmp_path):
    folder = tmp_path / "looks-like.json"
    folder.mkdir()
    f = _only_f001(load_save(folder))
    assert f.message == f"{folder}: is a folder, not a regular file; not read"


def test_missing_save_names_the_file_once(tmp_path):
    f = _only_f001(load_save(tmp_path / "evening.json"))
    assert f.message == f"{tmp_path / 'evening.json'}: cannot be read (No such file or directory)"
    assert "evening.json" not in f.location


def test_save_over_the_cap_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(RAW)
    document, sha = decode_file(path, "big.json", max_bytes=len(RAW) - 1)
    assert not document.parsed and sha == ""
    assert document.findings[0].code == "F001" and "larger than" in document.findings[0].message
    document, sha = decode_file(path, "big.json", max_bytes=len(RAW))
    assert document.parsed and document.findings == [] and len(sha) == 64


def test_a_file_that_grows_past_the_cap_while_read_is_refused(tmp_path, monkeypatch):
    """A regular file may claim a small size (procfs) or grow while read: the cap holds
    on the bytes actually read, not on st_size."""
    path = tmp_path / "growing.json"
    path.write_bytes(b" " * 10)
    real_stat = os.stat

    def lying_stat(p, *a, **k):
        st = real_stat(p, *a, **k)
        if str(p) == str(path):
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 0, *st[7:10]))
        return st

    path.write_bytes(b" " * 5000)
    monkeypatch.setattr(os, "stat", lying_stat)
    with pytest.raises(FileRefused, match="larger than 1000 bytes"):
        read_regular_file(path, 1000)


@NEEDS_FIFO
def test_content_fifo_device_and_folder_are_c001(tmp_path):
    root = tmp_path / "content"
    (root / "npcs").mkdir(parents=True)
    (root / "npcs" / "kael-davan.yaml").write_text("name: Kael\n")
    os.mkfifo(root / "npcs" / "sera-venn.yaml")
    (root / "npcs" / "dir-npc.yaml").mkdir()
    (root / "lore").mkdir()
    if os.path.exists("/dev/zero"):
        (root / "lore" / "endless.yaml").symlink_to("/dev/zero")
    content = _in_thread(lambda: load_content(root))
    by_file = {f.location.split(":")[0]: f for f in content.findings}
    assert by_file["npcs/sera-venn.yaml"].code == "C001" and "FIFO" in by_file["npcs/sera-venn.yaml"].message
    assert by_file["npcs/sera-venn.yaml"].location == "npcs/sera-venn.yaml:1:1"
    assert by_file["npcs/dir-npc.yaml"].code == "C001" and "folder" in by_file["npcs/dir-npc.yaml"].message
    if os.path.exists("/dev/zero"):  # a link out of the content folder is not followed (issue 35)
        assert by_file["lore/endless.yaml"].code == "C009"
    assert content.npcs["kael-davan"].name == "Kael"  # what could be read is kept


# ----- gzip -----


def test_multi_member_gzip_is_read_whole(tmp_path):
    half = len(RAW) // 2
    path = tmp_path / "two.json.gz"
    path.write_bytes(gzip.compress(RAW[:half]) + gzip.compress(RAW[half:]))
    save = load_save(path)
    assert save.readable and save.findings == []
    assert save.saved_at_tick == 170 and list(save.npcs) == [17]
    assert save.sha256 == __import__("hashlib").sha256(path.read_bytes()).hexdigest()


def test_inflating_in_small_steps_loses_nothing(monkeypatch):
    """Output pending inside zlib when a step is full (long runs) is drained, also at
    the end of the input."""
    from narrative_debugger.models import fileio

    monkeypatch.setattr(fileio, "INFLATE_STEP_BYTES", 1000)
    data = b"\x00" * 300_000 + RAW + b"z" * 70_000
    packed = gzip.compress(data) + gzip.compress(RAW)
    assert bytes(inflate_gzip([packed], 10 << 20)) == data + RAW
    assert bytes(inflate_gzip([packed[i : i + 5] for i in range(0, len(packed), 5)], 10 << 20)) == data + RAW
    with pytest.raises(FileRefused, match="when decompressed"):
        inflate_gzip([packed], len(data))


def test_multi_member_gzip_in_small_chunks_and_padding():
    members = b"".join(gzip.compress(RAW[i : i + 100]) for i in range(0, len(RAW), 100))
    stream = [members[i : i + 7] for i in range(0, len(members), 7)] + [b"\x00" * 16]
    assert bytes(inflate_gzip(stream, len(RAW))) == RAW
    with pytest.raises(FileRefused, match="when decompressed"):
        inflate_gzip([members], len(RAW) - 1)


@pytest.mark.parametrize(
    "tail, message",
    [(b"garbage!", "not gzip"), (b"\x1f", "not gzip"), (gzip.compress(b"more", mtime=0)[:-6], "truncated")],
)
def test_broken_gzip_tails_are_f001(tail, message):
    doc = decode_bytes(gzip.compress(RAW) + tail, "tail.json.gz")
    assert not doc.parsed and doc.findings[0].code == "F001" and message in doc.findings[0].message


def test_gzip_bomb_is_refused_while_inflating_without_holding_it(tmp_path):
    """64 MiB of spaces in 64 KiB of gzip, against a 4 MiB cap: refused with F001, and
    no more than about the cap is ever held (tracemalloc peak)."""
    cap = 4 * 1024 * 1024
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * (1 << 20)
    bomb = b"".join(comp.compress(chunk) for _ in range(64)) + comp.flush()
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(bomb)
    tracemalloc.start()
    try:
        document, _ = decode_file(path, "bomb.json.gz", max_bytes=cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not document.parsed
    (f,) = document.findings
    assert f.code == "F001" and f.location == "1:1"
    assert f.message == f"{path}: is larger than {cap} bytes (4 MiB) when decompressed; refused while inflating"
    assert peak < 3 * cap, peak


def _spaces_gzip(mib: int, head: bytes = b"") -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    return comp.compress(head) + b"".join(comp.compress(block) for _ in range(mib)) + comp.flush()


def _peak_while(fn):
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.mark.parametrize("how", ["file", "bytes"])
def test_gzip_bomb_is_refused_holding_a_small_part_of_the_cap(tmp_path, how):
    """Issue 35: a bomb was refused only after the cap's worth was held (1.1 GB for the
    1 GiB cap). Past a sixteenth of the cap at a ratio no save has, the rest is only
    counted: 96 MiB of spaces against a 32 MiB cap is refused holding under an eighth
    of the cap (tracemalloc peak), with the same F001 as before."""
    cap = 32 * 1024 * 1024
    bomb = _spaces_gzip(96)
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(bomb)
    if how == "file":
        (document, _), peak = _peak_while(lambda: decode_file(path, "bomb.json.gz", max_bytes=cap))
        label = str(path)
    else:
        document, peak = _peak_while(lambda: decode_bytes(bomb, "bomb.json.gz", max_bytes=cap))
        label = "bomb.json.gz"
    assert not document.parsed
    (f,) = document.findings
    assert (f.code, f.location) == ("F001", "1:1")
    assert f.message == f"{label}: is larger than {cap} bytes (32 MiB) when decompressed; refused while inflating"
    assert peak < cap / 8, peak


def test_a_save_that_compresses_like_a_bomb_but_fits_the_cap_is_read_whole(tmp_path):
    """A stream that trips the ratio test but ends within the cap is read again from
    the start: nothing lost, and the SHA-256 is of the file's bytes."""
    import hashlib

    cap = 32 * 1024 * 1024
    packed = _spaces_gzip(12, head=RAW)  # valid JSON: the save, then 12 MiB of white space
    path = tmp_path / "airy.json.gz"
    path.write_bytes(packed)
    document, sha = decode_file(path, "airy.json.gz", max_bytes=cap)
    assert document.parsed and not document.findings, document.findings
    assert document.size == len(RAW) + 12 * 1024 * 1024
    assert sha == hashlib.sha256(packed).hexdigest()
    assert decode_bytes(packed, "airy.json.gz", max_bytes=cap).value == document.value == BASE


@pytest.mark.parametrize("cap", [1, 64, 1 << 20, MAX_DOCUMENT_BYTES])
def test_the_guarded_inflate_gives_what_inflate_gives(cap):
    from narrative_debugger.models.fileio import inflate_gzip_guarded

    streams = [gzip.compress(RAW), gzip.compress(RAW[:500]) + gzip.compress(RAW[500:]) + b"\x00" * 10, _spaces_gzip(1)]
    for stream in streams:
        try:
            expected = inflate_gzip([stream], cap)
        except FileRefused as exc:
            with pytest.raises(FileRefused, match=re.escape(str(exc))):
                inflate_gzip_guarded(lambda: [stream], cap)
            continue
        assert inflate_gzip_guarded(lambda: [stream[i : i + 7] for i in range(0, len(stream), 7)], cap) == expected


def test_default_cap_is_two_gib():
    # Issue 37: a 10 000 000-entry save (about 1.5 GB of JSON) must open.
    assert MAX_DOCUMENT_BYTES == 2 * 1024**3


# ----- report PNGs -----


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(*extra: bytes) -> bytes:
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + b"".join(extra) + _chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + _chunk(b"IEND", b"")


RECORD = ViewRecord(REPORT_FORMAT_VERSION, "evening.json", "ab" * 32, "/tmp/evening.json", "", 170, "kael-davan", "prompt")


@functools.lru_cache(maxsize=1)
def _bomb_body() -> bytes:
    """64 MiB of 'A' deflated (about 64 KiB)."""
    comp = zlib.compressobj(9)
    block = b"A" * (1 << 20)
    return b"".join(comp.compress(block) for _ in range(64)) + comp.flush()


def _bomb_text_chunk(kind: bytes, key: bytes) -> bytes:
    body = _bomb_body()
    if kind == b"zTXt":
        return _chunk(b"zTXt", key + b"\x00\x00" + body)
    return _chunk(b"iTXt", key + b"\x00\x01\x00\x00\x00" + body)


def test_other_text_chunks_are_never_inflated():
    """A 64 MiB zTXt and iTXt bomb under other keywords sit before the record: the
    record is read, and the bombs are skipped, not inflated (tracemalloc peak)."""
    png = embed_record(_png(_bomb_text_chunk(b"zTXt", b"Comment"), _bomb_text_chunk(b"iTXt", b"narrative-debugger.viewX")), RECORD)
    tracemalloc.start()
    try:
        record = read_record(png)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record == RECORD
    assert peak < 8 * 1024 * 1024, peak


def test_own_chunk_is_inflated_with_a_cap():
    key = REPORT_KEY.encode("latin-1")
    ok = _chunk(b"iTXt", key + b"\x00\x01\x00\x00\x00" + zlib.compress(RECORD.to_json().encode()))
    assert read_record(_png(ok)) == RECORD
    bomb = _chunk(b"iTXt", key + b"\x00\x01\x00\x00\x00" + zlib.compress(b" " * (MAX_RECORD_BYTES + 10)))
    with pytest.raises(ReportError, match="inflates to more than"):
        read_record(_png(bomb))
    huge = _chunk(b"iTXt", key + b"\x00\x00\x00\x00\x00" + b" " * (MAX_RECORD_BYTES + 10))
    with pytest.raises(ReportError, match="more than the"):
        read_record(_png(huge))


@NEEDS_FIFO
def test_report_png_fifo_device_and_folder_are_refused(tmp_path):
    fifo = tmp_path / "report.png"
    os.mkfifo(fifo)
    with pytest.raises(ReportError, match="FIFO"):
        _in_thread(lambda: read_record_file(fifo))
    with pytest.raises(ReportError, match="folder"):
        read_record_file(tmp_path)
    if os.path.exists("/dev/zero"):
        link = tmp_path / "zero.png"
        link.symlink_to("/dev/zero")
        with pytest.raises(ReportError, match="character device"):
            _in_thread(lambda: read_record_file(link))
    good = tmp_path / "good.png"
    good.write_bytes(embed_record(_png(), RECORD))
    assert read_record_file(good) == RECORD


# ----- documents that are JSON but not saves -----


@pytest.mark.parametrize("raw, kind", [(b"null", "null"), (b"[1, 2]", "a list"), (b"42", "an integer"), (b'"save"', "a string"), (b"true", "a boolean")])
def test_a_document_that_is_not_an_object_is_f002(raw, kind):
    save = load_save_bytes(raw, "odd.json")
    assert not save.readable
    (f,) = save.findings
    assert (f.code, f.location) == ("F002", "$")
    assert f.message == f"odd.json: $: the top level must be an object, found {kind}"


# ----- duplicate keys -----


def test_duplicate_key_is_reported_at_its_own_place_naming_the_first():
    """'target' appears in several journal events before the object that repeats it;
    the finding stands at the repeat, and names the first 'target' of that object."""
    text = RAW.decode()
    anchor = '"text": "Cargo\'s late again.'
    assert anchor in text
    # the DialogueLine event gains a second "speaker" after its text
    text = text.replace(anchor, anchor.replace('"text"', '"speaker": 99, "text"', 1), 1)
    doc = decode_bytes(text.encode(), "dup.json")
    assert doc.parsed
    (f,) = doc.findings
    lines = text.splitlines()
    line, col = map(int, f.location.split(":"))
    assert lines[line - 1][col - 1 :].startswith('"speaker": 99')
    first = text.index('"speaker": 17')
    first_line = text.count("\n", 0, first) + 1
    first_col = first - (text.rfind("\n", 0, first) + 1) + 1
    assert f.message == f"dup.json: duplicate key 'speaker' at {line}:{col}; first at {first_line}:{first_col}; the last value is used"


def test_duplicate_keys_in_nested_objects_and_escaped_keys():
    text = '{\n "a": {"k": 1, "x": {"k": 2}, "k": 3},\n "b": [{"k\\u0041": 1, "kA": 2}],\n "k": 4\n}'
    doc = decode_bytes(text.encode(), "n.json")
    assert [f.location for f in doc.findings] == ["2:31", "3:23"]
    assert "duplicate key 'k' at 2:31; first at 2:8;" in doc.findings[0].message
    assert "duplicate key 'kA' at 3:23; first at 3:9;" in doc.findings[1].message
    assert doc.value["a"]["k"] == 3


# ----- lone surrogates -----


@pytest.mark.parametrize(
    "body, bad",
    [
        ("\\\\\\ud800 x", "\\ud800"),  # escaped backslash, then a lone high half
        ("\\\\\\udc00", "\\udc00"),  # escaped backslash, then a lone low half
        ("\\\\\\\\\\\\\\ud800", "\\ud800"),  # three escaped backslashes, then a lone high half
        ("\\ud800\\\\udc00", "\\ud800"),  # a high half, then a literal backslash and 'udc00'
        ("\\\\ud800\\udc00", "\\udc00"),  # literal 'ud800', then a lone low half
        ("x\\uDBFF", "\\uDBFF"),  # at the end of a string, upper case
        ("\\ud800\\ud800\\udc00", "\\ud800"),  # the first high half is alone
    ],
)
def test_lone_surrogate_is_found_wherever_it_is(body, bad):
    text = RAW.decode().replace("Cargo's late again.", body)
    doc = decode_bytes(text.encode(), "lone.json")
    assert not doc.parsed and doc.findings[0].code == "F001", doc.findings
    assert f"the escape {bad} is half of a UTF-16 pair" in doc.findings[0].message
    line, col = map(int, doc.findings[0].location.split(":"))
    row = text.splitlines()[line - 1]
    assert row[col - 1 :].startswith(bad)
    assert row[col - 2] == "\\" or not row[col - 2 :].startswith("\\\\")  # the escape's own backslash


def test_lone_surrogate_in_a_key():
    text = RAW.decode().replace('"dock-ward"}}}}}}', '"dock-ward"}}}, "x\\udfff": {}}}}', 1)
    doc = decode_bytes(text.encode(), "key.json")
    assert not doc.parsed and "\\udfff" in doc.findings[0].message


@pytest.mark.parametrize("body", ["\\\\ud800", "\\\\\\\\ud800", "\\ud83d\\ude00", "\\\\\\ud83d\\ude00", "\\u00e9\\\\"])
def test_literal_backslash_u_and_proper_pairs_are_fine(body):
    text = RAW.decode().replace("Cargo's late again.", body)
    doc = decode_bytes(text.encode(), "ok.json")
    assert doc.parsed and doc.findings == []


# ----- YAML -----


def test_tab_before_a_yaml_comment_is_valid(tmp_path):
    root = write_content(
        tmp_path,
        {
            "npcs/kael-davan.yaml": "name: Kael Davan\t# the smuggler\npronouns: he/him \t# set by writers\ndescription:\t'Dock hand'\t\n\t# a note\n",
            "global/enums/topics.yaml": "- cargo\t# from the docks\n- [weather]\t# flow\n",
        },
    )
    content = load_content(root)
    assert content.findings == []
    profile = content.npcs["kael-davan"]
    assert (profile.name, profile.pronouns, profile.description) == ("Kael Davan", "he/him", "Dock hand")


@pytest.mark.parametrize(
    "text, where, words",
    [
        ("name: a\x00b\n", "1:8", "U+0000 is not allowed"),
        ("name: Kael\ndescription: \x1b[2J\n", "2:14", "U+001B is not allowed"),
        ("name: " + "[" * 20000 + "]" * 20000 + "\n", "1:1", "does not parse"),
        ("name: !!python/object/apply:os.system [echo]\n", "1:7", "could not determine a constructor"),
        ("name: Kael\ntolerance:\n  threshold: " + "9" * 5000 + "\n", "3:14", "it is 5000 characters long; at most 40 are read"),
        ("name: Kael\ntolerance:\n  threshold: -" + "9" * 5000 + "\n", "3:14", "at most 40 are read"),
        # hex is text in content (decimal ASCII only): the key refuses it, at the key
        ("name: Kael\ntolerance:\n  threshold: 0x" + "f" * 5000 + "\n", "3:3", "at most 40 are read"),
    ],
)
def test_hostile_yaml_is_c001_never_an_exception(tmp_path, text, where, words):
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": text})
    (f,) = load_content(root).findings
    assert f.code == "C001" and f.location == f"npcs/kael-davan.yaml:{where}" and words in f.message, f


@pytest.mark.parametrize(
    "text, where, escape",
    [
        ('name: "Sera \\ud800 Venn"\n', "1:13", "\\ud800"),
        ('name: Sera\ndescription: "a \\\\ud800 b \\uDC00"\n', "2:27", "\\uDC00"),
        ('name: Sera\ntriggers: ["\\U0000d83d"]\n', "2:13", "\\U0000d83d"),
        ('"\\ud83d\\ude00": Sera\n', "1:2", "\\ud83d"),
    ],
)
def test_a_surrogate_escape_in_yaml_is_c001_at_the_escape(tmp_path, text, where, escape):
    # PyYAML alone would hand back a lone surrogate, which no output can encode as UTF-8.
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": text})
    content = load_content(root)
    (f,) = content.findings
    assert f.code == "C001" and f.location == f"npcs/kael-davan.yaml:{where}", f
    assert f"the escape {escape} is a UTF-16 surrogate" in f.message, f
    f.message.encode("utf-8")


def test_an_escaped_backslash_before_u_is_no_surrogate(tmp_path):
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": 'name: "Kael \\\\ud800 \\u00e9"\n'})
    content = load_content(root)
    assert content.findings == []
    assert content.npcs["kael-davan"].name == "Kael \\ud800 \u00e9"


def test_a_tab_in_indentation_is_still_c001_with_its_place(tmp_path):
    root = write_content(tmp_path, {"npcs/kael-davan.yaml": "name: Kael\ntolerance:\n  \tthreshold: 4\n"})
    (f,) = load_content(root).findings
    assert f.code == "C001" and f.location.startswith("npcs/kael-davan.yaml:3:") and "tabs" in f.message


# ----- output file names -----


@pytest.mark.parametrize(
    "text, stem",
    [
        ("../../etc/passwd", "_._etc_passwd"),
        ("-t170-../x", "t170-._x"),
        ("..", "report"),
        ("evening-t170-kael-davan", "evening-t170-kael-davan"),
        ("a\nb\x00c\x1bd", "a_b_c_d"),
        ("C:\\Windows\\x", "C_Windows_x"),
        ("x" * 500, "x" * 80),
        ("Sëra Venn", "Sëra_Venn"),
    ],
)
def test_safe_file_stem(text, stem):
    assert safe_file_stem(text) == stem


def test_write_new_file_refuses_a_path_in_the_name(tmp_path):
    with pytest.raises(ValueError):
        write_new_file(tmp_path, "../escape", ".png", b"x")
    assert list(tmp_path.iterdir()) == []
    assert not (tmp_path.parent / "escape.png").exists()


def test_malicious_slug_cannot_steer_the_report_path(tmp_path):
    """A save whose NPC slug is a path: the screenshot and its summary land in --out."""
    doc = copy.deepcopy(BASE)
    slug = "../../../escaped\n"
    doc["npcs"]["17"]["slug"] = slug
    save = tmp_path / "saves" / "..evil.json"
    save.parent.mkdir()
    save.write_text(json.dumps(doc))
    out = tmp_path / "out" / "inner"
    out.mkdir(parents=True)
    result = _cli("screenshot", str(save), "--out", str(out), "--npc", slug, "--view", "knowledge", "--size", "900x600", timeout=180)
    assert result.returncode == 0, result.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written == ["evil-t170-._._._escaped_.md", "evil-t170-._._._escaped_.png"]
    assert {p.suffix for p in out.iterdir()} == {".png", ".md"}
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(written + ["..evil.json"])


def _cli(*args, timeout=60, env=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "narrative_debugger.app", *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_a_png_of_countless_tiny_chunks_is_refused_quickly():
    from narrative_debugger.models.report.meta import MAX_PNG_CHUNKS

    tiny = _chunk(b"tEXt", b"")
    png = _png(tiny * (MAX_PNG_CHUNKS + 10))
    with pytest.raises(ReportError, match="more than 200000 chunks"):
        read_record(png)


def test_record_text_reader_stops_at_iend():
    stream = io.BytesIO(_png() + _chunk(b"iTXt", REPORT_KEY.encode() + b"\x00\x00\x00\x00\x00{}"))
    with pytest.raises(ReportError, match="carries no"):
        read_record(stream.getvalue())


def test_a_bomb_within_the_cap_is_refused_by_its_ratio_holding_little(tmp_path):
    """Trial 47: a 1.9 MB file of 1.9 GB of white space (within the 2 GiB cap) was read
    again whole: 4 GB and 26 s. Past 32 MiB at more than 500 times its gzip size it is
    refused, holding what the ratio test holds; 40 MiB of spaces stand in for it."""
    bomb = _spaces_gzip(40, head=RAW[:-1])
    path = tmp_path / "airy-bomb.json.gz"
    path.write_bytes(bomb)
    (document, _), peak = _peak_while(lambda: decode_file(path, "airy-bomb.json.gz"))
    assert not document.parsed
    (f,) = document.findings
    assert (f.code, f.location) == ("F001", "1:1")
    assert f"from {len(bomb):,}" in f.message and "no save compresses past 500 times (its JSON about 10); refused unread as a gzip bomb" in f.message
    assert peak < 40 * 1024 * 1024, peak
