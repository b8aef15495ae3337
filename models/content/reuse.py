"""A content folder read once per process while none of its files changes.

``check`` over many saves of one game, and every open in the window, read the same
content folder again for each save, seconds each for a large folder. A folder's
``Content`` is kept with the folder's stamp (``folder_stamp``): the names in the
folder and in the sub-folders ``load_content`` reads, and a digest of their files'
bytes. The next open of the same folder compares stamps and reuses the ``Content``
when they are equal; a file written, added, removed or renamed changes the stamp,
and the folder is read again.

A ``Content`` is never changed once read, so one object serves every playthrough
that reads it. At most ``KEEP_FOLDERS`` folders are kept.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from narrative_debugger.models.content.loader import Content

#: The sub-folders ``load_content`` reads files from (save-format §7), besides the folder itself.
READ_FOLDERS = ("global", "global/enums", "npcs", "lore", "monologues")
#: How many content folders' ``Content`` a process keeps.
KEEP_FOLDERS = 2

_kept: dict[tuple[str, str], tuple[tuple, Content]] = {}


def folder_stamp(root: Path) -> tuple:
    """The names of the entries of ``root`` and of its ``READ_FOLDERS``, and a digest of
    the bytes of every file among them (BLAKE2b); a missing folder is its name alone.

    Equal stamps mean that ``load_content(root)`` reads the same bytes. Reading the
    bytes costs a small fraction of parsing them,
    and unlike sizes and times it cannot miss a quick rewrite of the same length.
    """
    digest = hashlib.blake2b(digest_size=20)
    names = []
    for folder in ("", *READ_FOLDERS):
        path = os.path.join(root, folder) if folder else os.fspath(root)
        try:
            entries = sorted(os.scandir(path), key=lambda entry: entry.name)
        except OSError:
            names.append((folder,))
            continue
        names.append((folder, tuple(entry.name for entry in entries)))
        for entry in entries:
            try:
                if not entry.is_file():
                    continue
                with open(entry.path, "rb") as file:
                    data = file.read()
            except OSError:
                data = b"\0unreadable"
            digest.update(b"%d:%s\0" % (len(data), entry.name.encode("utf-8", "surrogateescape")))
            digest.update(data)
    return tuple(names), digest.digest()


def kept_content(root: Path) -> tuple[Content | None, tuple]:
    """(the ``Content`` kept for ``root`` when its stamp is unchanged, else None; the stamp now).

    Take the stamp before reading the folder and give it to ``keep_content`` with what
    was read: a file changed while it was read then changes the next stamp.
    """
    stamp = folder_stamp(root)
    kept = _kept.get(_key(root))
    return (kept[1] if kept is not None and kept[0] == stamp else None), stamp


def keep_content(root: Path, stamp: tuple, content: Content) -> None:
    """Keep ``content``, read from ``root`` when it had ``stamp``, for later opens."""
    key = _key(root)
    _kept.pop(key, None)
    while len(_kept) >= KEEP_FOLDERS:
        del _kept[next(iter(_kept))]  # the folder kept longest ago
    _kept[key] = (stamp, content)


def forget_content() -> None:
    """Drop every kept ``Content`` (tests)."""
    _kept.clear()


def _key(root: Path) -> tuple[str, str]:
    # The path as given too: a ``Content`` names its folder as it was given (findings,
    # ``check`` output), so another spelling of the same folder reads it again.
    return os.fspath(root), os.path.realpath(root)
