"""The window against hostile files (issue 8 §3, §7): special files are refused at
once with a message that names the file once, and the window keeps what it showed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from narrative_debugger.app.report import open_report

from tests.conftest import SAMPLES, open_window


@pytest.fixture()
def window(qtbot, message_boxes):
    return open_window(qtbot, SAMPLES / "walkaway-spiral.json", (1200, 800))


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
