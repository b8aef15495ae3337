"""QSettings kept under a test's own folder, and the process-wide settings state put back after."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SettingsState:
    """What ``QSettings()`` with no arguments depends on: the default format, the folder of
    user-scope INI files, and the application's organisation and name."""

    default_format: object
    ini_user_path: str
    organization: str
    application: str

    @classmethod
    def now(cls) -> SettingsState:
        from PySide6.QtCore import QCoreApplication, QSettings

        # Qt has no getter for setPath's folder: an INI file named by a probe organisation
        # and application sits at <folder>/<organisation>/<application>.ini.
        probe = QSettings(QSettings.IniFormat, QSettings.UserScope, "probe-org", "probe-app").fileName()
        return cls(
            QSettings.defaultFormat(),
            str(Path(probe).parent.parent),
            QCoreApplication.organizationName(),
            QCoreApplication.applicationName(),
        )

    def apply(self) -> None:
        from PySide6.QtCore import QCoreApplication, QSettings

        QSettings.setDefaultFormat(self.default_format)
        QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, self.ini_user_path)
        QCoreApplication.setOrganizationName(self.organization)
        QCoreApplication.setApplicationName(self.application)


@contextmanager
def settings_under(folder: Path):
    """Inside the block, ``QSettings()`` reads and writes one INI file under ``folder``;
    on leaving it (also on an exception) the previous ``SettingsState`` is back."""
    from PySide6.QtCore import QSettings

    before = SettingsState.now()
    SettingsState(QSettings.IniFormat, str(folder), "SettledReachTest", "narrative-debugger-test").apply()
    try:
        yield folder
    finally:
        before.apply()
