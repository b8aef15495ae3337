"""Report PNG metadata round trip and never-overwrite writing (pure Python)."""

from __future__ import annotations

import io
import os
import struct
import zlib

import pytest
from narrative_debugger.models.report.meta import (
    ReportError,
    ViewRecord,
    add_text_chunk,
    embed_record,
    read_record,
    read_record_text,
    write_new_file,
)


def tiny_png() -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


RECORD = ViewRecord(1, "évening.json", "ab" * 32, "/tmp/évening.json", "/tmp/content", 4812, "ŝera-venn", "prompt", "interaction.sera-venn_002")


def test_round_trip_with_non_ascii_and_newlines():
    record = ViewRecord(**{**RECORD.__dict__, "npc": "Sëra\nVenn 漢"})
    png = embed_record(tiny_png(), record)
    assert read_record(png) == record


def test_a_save_path_that_is_not_utf8_survives_the_round_trip():
    # b"/tmp/\xffbad.json" reaches Python as "/tmp/\udcffbad.json" (PEP 383); the
    # record used to raise UnicodeEncodeError while embedding it in the PNG.
    path = os.fsdecode(b"/tmp/\xffbad.json")
    record = ViewRecord(**{**RECORD.__dict__, "save_name": os.fsdecode(b"\xffbad.json"), "save_path": path})
    text = record.to_json()
    text.encode("utf-8")
    assert "\\udcff" in text
    back = read_record(embed_record(tiny_png(), record))
    assert back == record and os.fsencode(back.save_path) == b"/tmp/\xffbad.json"


def test_plain_png_readers_still_see_an_image():
    png = embed_record(tiny_png(), RECORD)
    assert png.startswith(b"\x89PNG") and png.endswith(b"IEND\xaeB`\x82")
    assert read_record_text(io.BytesIO(png))  # the chunk is there, ancillary


def test_png_without_record_or_not_png():
    with pytest.raises(ReportError, match="carries no"):
        read_record(tiny_png())
    with pytest.raises(ReportError, match="not a PNG"):
        read_record(b"GIF89a")
    with pytest.raises(ReportError, match="truncated|corrupt"):
        read_record(embed_record(tiny_png(), RECORD)[:-20])


def test_newer_format_version_is_refused():
    png = add_text_chunk(tiny_png(), "narrative-debugger.view", '{"format_version": 99}')
    with pytest.raises(ReportError, match="format 99"):
        read_record(png)


def test_never_overwrites(tmp_path):
    first = write_new_file(tmp_path, "report", ".png", b"one")
    second = write_new_file(tmp_path, "report", ".png", b"two")
    assert first.name == "report.png" and second.name == "report-2.png"
    assert first.read_bytes() == b"one" and second.read_bytes() == b"two"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report-2.png", "report.png"]  # no temp files left
