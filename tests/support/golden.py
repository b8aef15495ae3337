"""The golden files of the test suite, and the one command that writes them again.

``make golden`` runs ``python -m tests.support.golden``: it rebuilds every golden file
from the code as it is, then ``git diff`` shows what changed. Read that diff before
committing it: a golden file changes only when the output is meant to change.

Golden files:

- ``tests/data/prompt_tokens_golden.json``: for every sample save, every NPC of it, both
  shipped encodings and four ticks (0, a third, a half and the whole of
  ``saved_at_tick``), the prompt's ``[total tokens, available tokens, [tokens of each
  section, in order]]`` (held by ``tests/test_prompt_sections.py``).
- ``tests/data/golden/cli/``: the JSON that ``check``, ``state``, ``why``, ``diff`` and
  ``prompt`` print for the sample saves, generated saves and bad saves, byte for byte,
  with each case's arguments, exit status and stderr in ``cases.json`` (issue 37; made by
  ``tests/support/golden_cli.py``, held by ``tests/test_cli_golden.py``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_saves"
DATA = ROOT / "tests" / "data"
PROMPT_TOKENS = DATA / "prompt_tokens_golden.json"
ENCODINGS = ("cl100k_base", "o200k_base")

#: What a golden test prints when its file disagrees with the code.
REGENERATE = "run `make golden` to write the golden files again and read the diff it shows"


def prompt_cases() -> list[tuple[str, str, str, int]]:
    """(save file name, NPC slug, encoding, tick) for each prompt the golden file holds."""
    from narrative_debugger.models.playthrough import Playthrough

    cases = []
    for path in sorted(SAMPLES.glob("*.json")):
        play = Playthrough.open(path, None)
        end = play.save.saved_at_tick
        ticks = sorted({0, end // 3, end // 2, end})
        for npc in sorted(n.slug for n in play.save.npcs.values()):
            cases += [(path.name, npc, enc, tick) for enc in ENCODINGS for tick in ticks]
    return cases


def prompt_key(save: str, npc: str, encoding: str, tick: int) -> str:
    """The golden file's key of one case."""
    return f"{save} {npc} {encoding} {tick}"


def prompt_tokens() -> dict[str, list]:
    """Each case's ``[total, available, [section tokens]]``, built by the prompt builder."""
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.prompt.builder import PromptBuilder

    figures: dict[str, list] = {}
    builders: dict[tuple[str, str], PromptBuilder] = {}
    plays: dict[str, Playthrough] = {}
    for save, npc, encoding, tick in prompt_cases():
        if save not in plays:
            plays[save] = Playthrough.open(SAMPLES / save, None)
        builder = builders.setdefault((save, encoding), PromptBuilder(plays[save], encoding=encoding))
        p = builder.build(npc, tick)
        figures[prompt_key(save, npc, encoding, tick)] = [p.total_tokens, p.available, [s.tokens for s in p.sections]]
    return figures


def write_json(path: Path, value: dict) -> None:
    """One entry a line, so that a changed figure is a one-line diff."""
    lines = [f" {json.dumps(key)}: {json.dumps(item)}" for key, item in value.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def main() -> None:
    write_json(PROMPT_TOKENS, prompt_tokens())
    print(f"wrote {PROMPT_TOKENS.relative_to(ROOT)}")
    from tests.support.golden_cli import CLI_GOLDEN, build_workspace, write_cli_goldens

    with tempfile.TemporaryDirectory(prefix="golden-") as folder:
        count = write_cli_goldens(build_workspace(Path(folder)))
    print(f"wrote {CLI_GOLDEN.relative_to(ROOT)}/ ({count} cases)")


if __name__ == "__main__":
    main()
