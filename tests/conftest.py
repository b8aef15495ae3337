"""Shared fixtures. Qt tests run offscreen; pytest-qt owns the QApplication."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def evening_playthrough():
    """The bundled ordinary-evening sample, opened once per test run (read-only)."""
    from narrative_debugger.models.playthrough import Playthrough

    return Playthrough.open(SAMPLES / "evening.json", CONTENT)


@pytest.fixture()
def isolated_settings(tmp_path, monkeypatch):
    """QSettings written under tmp_path, never the user's real settings."""
    from PySide6.QtCore import QCoreApplication, QSettings

    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(tmp_path / "settings"))
    QCoreApplication.setOrganizationName("SettledReachTest")
    QCoreApplication.setApplicationName("narrative-debugger-test")
    yield tmp_path / "settings"
