"""Listing a content folder once (save-format §7), with every entry it will not read reported.

``load_content`` reads the files ``list_content`` hands it and nothing else, so an entry
that is left out is a finding, never a silent skip (issue 35, "No silent fallbacks"):

- C006 (error): a folder the content needs (``npcs/``, ``lore/``, ``monologues/``,
  ``global/``, ``global/enums/``) exists but cannot be listed, or is not a folder.
- C009 (error): a content file that is a symbolic link whose target lies outside the
  content folder; it is not followed (the evidence would come from elsewhere).
- C011 (warning): an entry of ``npcs/``, ``lore/`` or ``monologues/`` that is not a
  ``.yaml``/``.yml`` file (a sub-folder, ``notes.txt``, ``kael.YAML``), or a YAML file in
  the content folder, ``global/`` or ``global/enums/`` with a name the tool does not
  read (``prompts.yaml``).

Hidden entries (a name starting with ``.``, such as ``.gitkeep``) that are not YAML are
left out without a finding; other files in the content folder and in ``global/`` (a
README) are not content and are left out too. A folder that does not exist is empty
content, not a finding.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from narrative_debugger.models.rules.findings import FindingSink, Target

YAML_SUFFIXES = (".yaml", ".yml")
#: The folders whose every YAML file is read (one profile, one pool of cards or lines each).
POOL_FOLDERS = ("npcs", "lore", "monologues")
#: The YAML files read by name, by folder ("" is the content folder itself).
NAMED_FILES = {
    "": ("prompt.yaml",),
    "global": ("locations.yaml",),
    "global/enums": ("topics.yaml", "fact_categories.yaml"),
}


@dataclass(frozen=True, slots=True)
class ContentFiles:
    """The files of a content folder that ``load_content`` reads.

    Attributes:
        named: the files read by name that exist and may be read, by path relative
            to the content folder (``"prompt.yaml"``, ``"global/enums/topics.yaml"``).
        pools: ``"npcs"``, ``"lore"``, ``"monologues"`` -> their YAML files, sorted by name.
    """

    named: dict[str, Path]
    pools: dict[str, tuple[Path, ...]]
    #: Every entry seen, by path relative to the content folder (``"prompt.yaml"``,
    #: ``"npcs"``, ``"npcs/kael-davan.yaml"``), read or not: what is absent is not here.
    seen: frozenset[str] = frozenset()
    #: Whether the content folder itself could be listed; when not, nothing else was tried.
    listed: bool = True
    #: The folders read by name (``"global"``, ``"global/enums"``) that exist but could not
    #: be listed (each has its C006): their files are neither seen nor known to be missing.
    unlisted: frozenset[str] = frozenset()


def list_content(root: Path, sink: FindingSink) -> ContentFiles:
    """List ``root`` once, adding C006, C009 and C011 findings to ``sink`` (see module doc).

    Never raises. When the content folder itself cannot be listed, that one C006 is all:
    its sub-folders are not tried (their names would only be guesses). Locations are ``rel:1:1`` (the entry relative to ``root``); the
    findings land in the Findings dock only (``Target`` kind ``file``): the Content
    dock never opens a folder or a link that leads outside.
    """
    root = Path(root)
    real_root = os.path.realpath(root)
    named: dict[str, Path] = {}
    pools: dict[str, tuple[Path, ...]] = {}
    seen: set[str] = set()
    unlisted: set[str] = set()
    for folder, names in NAMED_FILES.items():
        before = len(sink.items)
        entries = _entries(root, folder, sink)
        if entries is None:
            if not folder:  # the content folder itself: its sub-folders cannot be known, and are not tried
                return ContentFiles(named, {name: () for name in POOL_FOLDERS}, frozenset(), listed=False)
            if len(sink.items) > before:  # a C006, not a folder that does not exist
                unlisted.add(folder)
            continue
        for entry in entries:
            rel = _rel(folder, entry.name)
            seen.add(rel)
            if entry.name in names:
                if not _outside(entry, rel, real_root, sink):
                    named[rel] = Path(entry.path)
            elif entry.name.endswith(YAML_SUFFIXES) and not (folder == "global" and entry.name == "enums"):
                _skipped(sink, rel, f"{rel} is not read: the content reads {_names_in(folder)} here")
    for folder in POOL_FOLDERS:
        files = []
        for entry in _entries(root, folder, sink) or ():
            rel = _rel(folder, entry.name)
            seen.add(rel)
            if entry.name.endswith(YAML_SUFFIXES):
                if not _outside(entry, rel, real_root, sink):
                    files.append(Path(entry.path))
            elif not entry.name.startswith("."):
                why = f"sub-folders of {folder}/ are not read" if _is_dir(entry) else f"only .yaml and .yml files of {folder}/ are read"
                _skipped(sink, rel, f"{rel} is not read: {why}")
        pools[folder] = tuple(files)
    return ContentFiles(named, pools, frozenset(seen), unlisted=frozenset(unlisted))


def _rel(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _names_in(folder: str) -> str:
    names = NAMED_FILES[folder]
    return " and ".join(names) if len(names) > 1 else names[0]


def _target(rel: str) -> Target:
    return Target("file", file=rel, line=1, col=1)


def _entries(root: Path, folder: str, sink: FindingSink) -> list[os.DirEntry] | None:
    """The entries of ``root/folder`` sorted by name; None (after a C006) when it cannot
    be listed, or silently when it does not exist."""
    path = os.path.join(root, folder) if folder else os.fspath(root)
    shown = f"{folder}/" if folder else "the content folder"
    try:
        with os.scandir(path) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        sink.add("C006", f"{shown} is not a folder: nothing in it can be read", f"{folder or '.'}:1:1", target=_target(folder or "."))
    except OSError as exc:
        sink.add("C006", f"{shown} cannot be listed ({exc.strerror or exc}): none of its files were read",
                 f"{folder or '.'}:1:1", target=_target(folder or "."))
    return None


def _outside(entry: os.DirEntry, rel: str, real_root: str, sink: FindingSink) -> bool:
    """True (after a C009) when ``entry`` is a symbolic link leading outside the content folder."""
    try:
        if not entry.is_symlink():
            return False
        target = os.path.realpath(entry.path)
        inside = os.path.commonpath([real_root, target]) == real_root
    except (OSError, ValueError):
        inside = False
    if not inside:
        sink.add("C009", f"{rel} is a symbolic link that leads outside the content folder: not followed, not read",
                 f"{rel}:1:1", target=_target(rel))
    return not inside


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _skipped(sink: FindingSink, rel: str, message: str) -> None:
    sink.add("C011", message, f"{rel}:1:1", target=_target(rel))
