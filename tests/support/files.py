"""Small file builders shared by the tests."""

from __future__ import annotations

from pathlib import Path

#: The prompt.yaml a content folder gets unless the test gives its own (or None for
#: none): without one, the folder has a C012 warning (the prompt lacks its sections).
DEFAULT_PROMPT = "narrator_prompt: You voice the Reach.\n"

#: The enum files a content folder gets unless the test gives its own (or None for
#: none): without them, the folder has C012 warnings (I009 is skipped, C004 knows only
#: the saves' categories). The topics and categories of the sample content.
DEFAULT_ENUMS = {
    "global/enums/topics.yaml": "- cargo\n- smuggling\n- the-ring\n- harbor-dues\n- family\n- weather\n- guild-politics\n"
                                "- the-lighthouse\n- salt-trade\n- debts\n- shipwrecks\n- rumors\n- old-songs\n",
    "global/enums/fact_categories.yaml": "- interaction\n- contraband\n- smuggling\n- harbor\n- guild\n- lighthouse\n- weather\n"
                                         "- family\n- person\n- salt-market\n- shipwreck\n- rumor\n",
}

#: Everything ``write_content`` adds unless the test names it.
DEFAULT_FILES = {"prompt.yaml": DEFAULT_PROMPT, **DEFAULT_ENUMS}


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text, UTF-8) under ``root`` (made if needed),
    with their folders; returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def write_enums(root: Path) -> Path:
    """Write ``DEFAULT_ENUMS`` into the content folder ``root`` (made if needed), for
    tests that build the rest of a content folder by hand and are not about the enum
    files; returns ``root``."""
    return write_files(root, DEFAULT_ENUMS)


def write_content(tmp_path: Path, files: dict[str, str | None]) -> Path:
    """A content folder ``tmp_path/content`` holding ``files`` (relative path -> text,
    None for a file left out) and, unless ``files`` names them, ``DEFAULT_FILES``
    (a prompt.yaml and the two enum files, so that the folder has no C012); returns it."""
    root = tmp_path / "content"
    root.mkdir(parents=True, exist_ok=True)
    return write_files(root, {rel: text for rel, text in {**DEFAULT_FILES, **files}.items() if text is not None})
