"""The window against hostile files (issue 8 §3, §7): special files are refused at
once with a message that names the file once, and the window keeps what it showed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from narrative_debugger.app.window.report import open_report

from tests.conftest import SAMPLES


pytestmark = [pytest.mark.usefixtures("message_boxes"), pytest.mark.window(save=SAMPLES / "walkaway-spiral.json", size=(1200, 800))]


def _opened(window, path: Path, message_boxes) -> str:
    before = window.session.playthrough
    window.open_save(path, wait=True)
    assert window.session.playthrough is before  # still showing the last good save
    kind, title, text = message_boxes[-1]
    assert (kind, title) == ("warning", "Cannot read this save")
    return text


def test_a_gone_save_says_its_name_once(window, tmp_path, message_boxes):
    text = _opened(window, tmp_path / "evening.json", message_boxes)
    assert f"F001 at 1:1: {tmp_path / 'evening.json'}: cannot be read (No such file or directory)" in text
    assert "evening.json: evening.json" not in text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_device_save_is_refused_at_once(window, tmp_path, message_boxes):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert "pipe.json: is a FIFO (named pipe), not a regular file; not read" in _opened(window, fifo, message_boxes)
    if os.path.exists("/dev/zero"):
        zero = tmp_path / "zero.json.gz"
        zero.symlink_to("/dev/zero")
        assert "zero.json.gz: is a character device, not a regular file; not read" in _opened(window, zero, message_boxes)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_report_png_is_refused_at_once(window, tmp_path, message_boxes):
    fifo = tmp_path / "report.png"
    os.mkfifo(fifo)
    assert open_report(window, fifo, ask=False) is False
    kind, title, text = message_boxes[-1]
    assert (kind, title) == ("warning", "Cannot open report")
    assert text == f"{fifo}: is a FIFO (named pipe), not a regular file; not read"


def test_a_240_character_name_fits_its_box_and_is_whole_in_the_details(window, tmp_path, message_boxes):
    """A name with no space to wrap at (240 characters) made the cannot-read box as wide
    as the name, cut off at its edge. It is shown elided in the middle, the box fits the
    screen, and the whole text is in the details."""
    name = ("Playtest" * 30)[:235] + ".json"
    bad = tmp_path / name
    bad.write_text('{"bad": ', encoding="utf-8")
    text = _opened(window, bad, message_boxes)
    box = message_boxes.shown[-1]
    assert name not in text and "…" in text and text.count(".json") == 2  # both lines end whole
    assert str(bad) in box.detailedText() and "F001 at 1:9" in box.detailedText()
    assert box.textFormat() == Qt.PlainText
    box.show()  # Qt sizes a box as it shows
    try:
        assert box.width() <= box.screen().availableGeometry().width()
    finally:
        box.hide()


def test_a_short_name_is_shown_whole_with_no_details(window, tmp_path, message_boxes):
    bad = tmp_path / "broken.json"
    bad.write_text('{"bad": ', encoding="utf-8")
    assert str(bad) in _opened(window, bad, message_boxes)
    assert message_boxes.shown[-1].detailedText() == ""


def test_the_window_opens_saves_with_5000_digit_numerals(window, tmp_path, message_boxes):
    """Issue 35: an interaction sequence or an NPC key of 5 000 digits reached int() in
    the loader (Python refuses past 4 300 digits). Both open, with their findings."""
    raw = (SAMPLES / "walkaway-spiral.json").read_text(encoding="utf-8")
    slug = window.session.playthrough.save.npcs.values()[0].slug
    sequence = f"interaction.{slug}_001"
    assert sequence in raw
    long_sequence = tmp_path / "long-sequence.json"
    long_sequence.write_text(raw.replace(sequence, f"interaction.{slug}_" + "1" * 5000, 1), encoding="utf-8")
    window.open_save(long_sequence, wait=True)
    assert window.session.playthrough.save.label == "long-sequence.json"
    assert "K003" in {f.code for f in window.session.playthrough.findings}
    sid = window.session.playthrough.save.npcs.keys()[0]
    long_key = tmp_path / "long-key.json"
    long_key.write_text(raw.replace(f'"npcs":{{"{sid}":', '"npcs":{"' + "9" * 5000 + '":', 1), encoding="utf-8")
    window.open_save(long_key, wait=True)
    assert window.session.playthrough.save.label == "long-key.json"
    assert any(f.code == "F002" and f.location.startswith("npcs.9999") for f in window.session.playthrough.findings)
