"""Small file builders shared by the tests."""

from __future__ import annotations

from pathlib import Path

#: The prompt.yaml a content folder gets unless the test gives its own (or None for
#: none): without one, the folder has a C012 warning (the prompt lacks its sections).
DEFAULT_PROMPT = "narrator_prompt: You voice the Reach.\n"


def write_content(tmp_path: Path, files: dict[str, str | None]) -> Path:
    """A content folder ``tmp_path/content`` holding ``files`` (relative path -> text,
    None for a file left out) and, unless ``files`` names it, ``DEFAULT_PROMPT`` as its
    prompt.yaml; returns it."""
    root = tmp_path / "content"
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in {"prompt.yaml": DEFAULT_PROMPT, **files}.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
