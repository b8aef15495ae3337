"""Tests never read outside the repository (issue 35): a guard on Python's ``open``.

A test once read ``/work/shared/docs/checks.md`` by an absolute path, so the suite
passed only on the machine that had that folder. ``install()`` adds an audit hook
(``sys.addaudithook``) that notes every file or folder Python opens or lists while a
test runs (the ``open``, ``os.listdir`` and ``os.scandir`` audit events) outside the
places a test may use; tests/conftest.py then fails that test with the paths.

Allowed: the repository, the interpreter and its packages (``sys.prefix`` and
``sys.base_prefix``, the ``sysconfig`` paths, ``sys.path`` as it was when the guard
was installed), the temporary folder (pytest's ``tmp_path`` is under it), ``/dev``,
``/proc`` and ``/sys``, and the system's own data that Qt and the standard library read
(``/etc``, ``/usr/share``, ``/usr/lib``, ``/usr/local/{share,lib,etc}``). Qt's own C++ file access
(fonts, fontconfig's cache) is not seen by Python and needs no rule.

The import system lists every folder on ``sys.path`` (``python -m pytest`` run from a
parent folder puts that folder there): listing a ``sys.path`` entry is not judged, opening
a file in it is.

A relative path given to ``os.open`` may be relative to a ``dir_fd`` (``shutil.rmtree``
works so) rather than to the current folder, so it is not judged; a relative path given
to ``open`` is taken from the current folder.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

#: Audit events that read the file system, with where their path argument is.
EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
SYSTEM = ("/dev", "/proc", "/sys", "/etc", "/usr/share", "/usr/lib", "/usr/lib64", "/usr/local/share", "/usr/local/lib",
          "/usr/local/etc", "/lib", "/lib64")


def _real(path: str) -> str:
    return os.path.realpath(path)


class OpenGuard:
    """Notes the paths opened outside ``allowed`` folders while ``armed``.

    Args:
        root: the repository (allowed, as is every folder in ``extra``).
        extra: more allowed folders (absolute paths).
    """

    def __init__(self, root: Path, extra: tuple[str, ...] = ()) -> None:
        places = {str(root), sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                  tempfile.gettempdir(), *SYSTEM, *extra}
        places.update(p for p in sysconfig.get_paths().values() if p)
        # sys.path as installed, but not a folder that holds the repository (``python -m
        # pytest`` run from a parent folder puts that folder first).
        places.update(p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)
                      and not str(root).startswith(os.path.normpath(p).rstrip("/") + "/"))
        roots = set()
        for place in places:
            roots.add(os.path.normpath(place))
            roots.add(_real(place))
        # A folder inside another allowed one adds nothing; "/" would allow everything.
        roots.discard("/")
        self.allowed = tuple(sorted(roots))
        self.armed = False
        self.outside: list[str] = []
        self._busy = threading.local()  # the hook's own realpath must not come back here

    def allows(self, path: str) -> bool:
        """Whether ``path`` (absolute) is inside an allowed folder, as written or resolved."""
        for candidate in (os.path.normpath(path), _real(path)):
            if any(candidate == place or candidate.startswith(place.rstrip("/") + "/") for place in self.allowed):
                return True
        return False

    def __call__(self, event: str, args: tuple) -> None:
        """The audit hook: one call per audit event of the process (kept cheap)."""
        if not self.armed or event not in EVENTS or not args or getattr(self._busy, "on", False):
            return
        path = args[0]
        if path is None or isinstance(path, int):  # a file descriptor, or os.listdir() of "."
            return
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return
        if not os.path.isabs(path):
            if event == "open" and args[1:2] == (None,):  # os.open: maybe relative to a dir_fd
                return
            path = os.path.join(os.getcwd(), path)
        elif event != "open" and path in sys.path:  # the import system lists the folders of sys.path
            return
        self._busy.on = True
        try:
            if not self.allows(path):
                self.outside.append(path)
        finally:
            self._busy.on = False

    def take(self) -> list[str]:
        """The paths noted since the last call (each once, in order), forgotten here."""
        seen = list(dict.fromkeys(self.outside))
        self.outside.clear()
        return seen


def install(root: Path) -> OpenGuard:
    """Add the guard as an audit hook (for the rest of the process; hooks cannot be removed)."""
    guard = OpenGuard(root)
    sys.addaudithook(guard)
    return guard
