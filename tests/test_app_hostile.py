"""The window against hostile files (issue 8 §3, §7): special files are refused at
once with a message that names the file once, and the window keeps what it showed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from narrative_debugger.app.main_window import MainWindow
from narrative_debugger.app.report import open_report
from PySide6.QtWidgets import QMessageBox

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"


@pytest.fixture()
def shown(monkeypatch, isolated_settings):
    """Modal boxes would block an offscreen run; record (kind, title, text) instead."""
    boxes = []
    for name in ("warning", "information", "critical"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, _n=name, **k: boxes.append((_n, *a[1:3])) or QMessageBox.Ok))
    return boxes


@pytest.fixture()
def window(qtbot, shown):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    w.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    assert w.session.ready
    return w


def _opened(window, path: Path, shown) -> str:
    before = window.session.playthrough
    window.open_save(path, wait=True)
    assert window.session.playthrough is before  # still showing the last good save
    kind, title, text = shown[-1]
    assert (kind, title) == ("warning", "Cannot read this save")
    return text


def test_a_gone_save_says_its_name_once(window, tmp_path, shown):
    text = _opened(window, tmp_path / "evening.json", shown)
    assert f"F001 at 1:1: {tmp_path / 'evening.json'}: cannot be read (No such file or directory)" in text
    assert "evening.json: evening.json" not in text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_device_save_is_refused_at_once(window, tmp_path, shown):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    assert "pipe.json: is a FIFO (named pipe), not a regular file; not read" in _opened(window, fifo, shown)
    if os.path.exists("/dev/zero"):
        zero = tmp_path / "zero.json.gz"
        zero.symlink_to("/dev/zero")
        assert "zero.json.gz: is a character device, not a regular file; not read" in _opened(window, zero, shown)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_report_png_is_refused_at_once(window, tmp_path, shown):
    fifo = tmp_path / "report.png"
    os.mkfifo(fifo)
    assert open_report(window, fifo, ask=False) is False
    kind, title, text = shown[-1]
    assert (kind, title) == ("warning", "Cannot open report")
    assert text == f"{fifo}: is a FIFO (named pipe), not a regular file; not read"
