"""The README's "How to find a dropped story card" commands run as quoted and print what it shows."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from narrative_debugger.app.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def test_readme_dropped_card_commands_work_as_quoted(tmp_path, capsys, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    passage = readme[readme.index("### How to find a dropped story card"):]
    block = passage[passage.index("```\n") + 4:]
    block = block[: block.index("```")]
    lines = block.splitlines()
    assert lines[0] == "cp -r sample_saves/content /tmp/tight"
    budget = re.fullmatch(r"sed -i 's/(.*)/(.*)/' /tmp/tight/prompt.yaml", lines[1])
    content = tmp_path / "tight"
    shutil.copytree(ROOT / "sample_saves" / "content", content)
    prompt = content / "prompt.yaml"
    assert budget.group(1) in prompt.read_text(encoding="utf-8")
    prompt.write_text(prompt.read_text(encoding="utf-8").replace(budget.group(1), budget.group(2)), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    commands = [k for k, line in enumerate(lines) if line.startswith("narrative-debugger ")]
    assert len(commands) == 2
    for k in commands:
        argv = [a if a != "/tmp/tight" else str(content) for a in shlex.split(lines[k])[1:]]
        assert main(argv) == 0
        out = capsys.readouterr().out
        quoted = []
        for line in lines[k + 1:]:
            if not line.startswith("#"):
                break
            quoted.append(line[1:].strip())
        assert quoted
        quoted = quoted[:2]  # the lines quoted whole (later ones are shortened with …)
        for q in quoted:
            assert " ".join(q.split()) in " ".join(out.split()), q
