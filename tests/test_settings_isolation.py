"""The tests' QSettings isolation (tests/support/settings.py) keeps writes under the test's
folder and puts the process-wide settings state back, also when the block fails."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from tests.support.settings import SettingsState, settings_under


@pytest.fixture()
def sentinel(tmp_path):
    """A settings state no fixture would set, in force during the test; the real one after."""
    real = SettingsState.now()
    state = SettingsState(QSettings.NativeFormat, str(tmp_path / "sentinel"), "SentinelOrg", "sentinel-app")
    state.apply()
    yield state
    real.apply()


def test_writes_land_under_the_folder_and_the_previous_state_comes_back(tmp_path, sentinel):
    assert SettingsState.now() == sentinel
    folder = tmp_path / "isolated"
    with settings_under(folder):
        inside = SettingsState.now()
        assert inside.default_format == QSettings.IniFormat and inside.ini_user_path == str(folder)
        settings = QSettings()
        settings.setValue("recent/files", ["a.json"])
        settings.sync()
        assert settings.status() == QSettings.NoError
    written = list(folder.rglob("*.ini"))
    assert len(written) == 1 and "a.json" in written[0].read_text(encoding="utf-8")
    assert SettingsState.now() == sentinel


def test_the_previous_state_comes_back_when_the_block_fails(tmp_path, sentinel):
    with pytest.raises(RuntimeError), settings_under(tmp_path / "isolated"):
        raise RuntimeError("a failing test")
    assert SettingsState.now() == sentinel


def test_the_fixture_gives_each_test_its_own_folder(isolated_settings, tmp_path):
    assert isolated_settings.parent == tmp_path
    assert QSettings().fileName().startswith(str(isolated_settings))
