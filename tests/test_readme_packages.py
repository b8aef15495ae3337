"""The README's Debian package lists (issue 8 item 9): `.ci/run` installs the headless
list, and the desktop list holds the package of every X11/xcb library that Qt's
``xcb`` platform plugin links against (the README once missed libxcb-icccm4 and
libxcb-keysyms1, and `make run` failed on a fresh Debian)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = {"python3", "python3-venv", "make"}


def readme_lists() -> list[set[str]]:
    """The packages of each ``sudo apt-get install`` block of the README, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^sudo apt-get install ((?:.*\\\n)*.*)$", text, flags=re.M)
    return [set(block.replace("\\", " ").split()) for block in blocks]


def debian_package(soname: str) -> str:
    """The package of a shared library by Debian policy §8.1: ``libxcb-icccm.so.4`` -> ``libxcb-icccm4``."""
    name, version = re.fullmatch(r"(lib[^.]+)\.so\.(\d+)", soname).groups()
    name = name.lower()
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def test_ci_installs_the_readme_headless_list():
    headless = readme_lists()[0] - TOOLS
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    listed = re.search(r'^QT_DEBS="([^"]*)"', ci, flags=re.M).group(1).split()
    assert set(listed) == headless and {"libegl1", "libxkbcommon0", "libglib2.0-0"} <= headless


def test_policy_names():
    assert debian_package("libxcb-icccm.so.4") == "libxcb-icccm4"
    assert debian_package("libxkbcommon-x11.so.0") == "libxkbcommon-x11-0"
    assert debian_package("libX11-xcb.so.1") == "libx11-xcb1"


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("ldd") is None, reason="needs ldd (Linux)")
def test_desktop_list_covers_every_x11_library_the_xcb_plugin_links():
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    binaries = [qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6",
                *sorted((qt / "plugins" / "xcbglintegrations").glob("*.so"))]
    assert binaries[0].exists()
    sonames = set()
    for binary in binaries:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
        sonames |= set(re.findall(r"^\s*(lib(?:xcb|X11|xkbcommon)[\w-]*\.so\.\d+)", out, flags=re.M))
    assert {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"} <= sonames
    listed = set().union(*readme_lists()[:2])
    missing = sorted(debian_package(s) for s in sonames if debian_package(s) not in listed)
    assert not missing, f"README's desktop list lacks {missing}"


def test_ci_installs_a_cjk_fallback_font():
    """The pixel tests run with a taller fallback font present (issue 35: 14 of them once
    failed on a machine with fonts-droid-fallback, the CI machine had none)."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    listed = re.search(r'^FONT_DEBS="([^"]*)"', ci, flags=re.M).group(1).split()
    assert set(listed) == {"fonts-droid-fallback", "fonts-noto-cjk"}
    assert re.search(r'for pkg in \$FONT_DEBS; do\n\s*dpkg -s "\$pkg"', ci)
