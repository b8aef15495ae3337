"""A content folder is read once per process while none of its files changes
(``models/content/reuse.py``): ``check`` of many saves read it again for each."""

from __future__ import annotations

import shutil

import pytest
from narrative_debugger.models import playthrough as playthrough_module
from narrative_debugger.models.content import reuse
from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.playthrough import Playthrough
from tests.conftest import CONTENT, SAMPLES


@pytest.fixture
def content(tmp_path):
    """A copy of the sample content, and no folder kept from earlier tests."""
    reuse.forget_content()
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    yield folder
    reuse.forget_content()


def _open(content):
    return Playthrough.open(SAMPLES / "evening.json", content)


def test_a_folder_read_once_serves_the_next_opens(content, monkeypatch):
    reads = []
    monkeypatch.setattr(playthrough_module, "load_content", lambda root: reads.append(root) or load_content(root))
    first = _open(content)
    second = _open(content)
    assert reads == [content] and second.content is first.content
    assert second.findings == first.findings


@pytest.mark.parametrize("change", ["rewrite", "add", "remove", "rename"])
def test_a_changed_file_is_read_again(content, change):
    first = _open(content)
    name = first.content.npc_name("mira-holt")
    profile = content / "npcs" / "mira-holt.yaml"
    text = profile.read_text(encoding="utf-8")
    if change == "rewrite":  # same length, at once: no clock or size can tell
        profile.write_text(text.replace(name, name[::-1]), encoding="utf-8")
    elif change == "add":
        (content / "npcs" / "new-face.yaml").write_text("slug: new-face\nname: New Face\n", encoding="utf-8")
    elif change == "remove":
        profile.unlink()
    else:
        profile.rename(content / "npcs" / "mira-holt.yml.bak")
    second = _open(content)
    assert second.content is not first.content
    assert ("mira-holt" in second.content.npcs) == (change in ("rewrite", "add"))
    if change in ("rewrite", "add"):
        assert second.content.npc_name("mira-holt") == (name[::-1] if change == "rewrite" else name)
    assert ("new-face" in second.content.npcs) == (change == "add")
    assert _open(content).content is second.content  # and kept again


def test_another_spelling_of_the_folder_reads_it_for_itself(content, monkeypatch):
    monkeypatch.chdir(content.parent)
    by_path = _open(content)
    relative = Playthrough.open(SAMPLES / "evening.json", content.relative_to(content.parent))
    assert relative.content is not by_path.content and str(relative.content.root) == "content"


def test_at_most_keep_folders_are_kept(tmp_path, content):
    others = []
    for k in range(reuse.KEEP_FOLDERS + 1):
        shutil.copytree(CONTENT, tmp_path / f"other{k}")
        others.append(_open(tmp_path / f"other{k}").content)
    assert _open(tmp_path / f"other{reuse.KEEP_FOLDERS}").content is others[-1]
    assert _open(tmp_path / "other0").content is not others[0]  # the oldest went first
