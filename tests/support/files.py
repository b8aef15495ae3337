"""Small file builders shared by the tests."""

from __future__ import annotations

from pathlib import Path


def write_content(tmp_path: Path, files: dict[str, str]) -> Path:
    """A content folder ``tmp_path/content`` holding ``files`` (relative path -> text); returns it."""
    root = tmp_path / "content"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
