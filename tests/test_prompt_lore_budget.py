"""The lore budget (prompt-preview §8: story cards take at most 40 % of ``available``)
is one exact computation that the builder, the Explain dock and ``why`` share."""

from __future__ import annotations

import json
import shutil

from narrative_debugger.app.cli.main import main
from narrative_debugger.models.prompt.builder import PromptBuilder, lore_budget
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING
from narrative_debugger.models.playthrough import Playthrough
from tests.conftest import CONTENT, SAMPLES

U64_MAX = 2**64 - 1


def test_the_share_is_exact_past_2_53():
    # Trial 47: int(0.4 × 18446744073709550914) in floats is 7378697629483821056, 691 too many.
    assert lore_budget(18446744073709550914, 0.4) == 7378697629483820365 == 18446744073709550914 * 2 // 5
    assert lore_budget(7936, 0.4) == 3174 and lore_budget(10, 0.3) == 3  # 0.3 as written, not 0.29999…


def test_why_prints_the_lore_budget_the_builder_spent(tmp_path, capsys):
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    prompt = content / "prompt.yaml"
    prompt.write_text(prompt.read_text(encoding="utf-8").replace("context_token_budget: 8192", f"context_token_budget: {U64_MAX}"), encoding="utf-8")
    code = main(["why", str(SAMPLES / "evening.json"), "card:kael-davan/dock-ward", "--tick", "100000", "--content", str(content), "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out)
    text = json.dumps(doc)
    exact = 18446744073709550914 * 2 // 5
    assert f"= {exact}" in text and "7378697629483821056" not in text


def test_a_tuned_card_share_is_the_one_the_explain_dock_shows():
    play = Playthrough.open(SAMPLES / "evening.json", CONTENT)
    tuned = Playthrough.build(play.save, play.content, tuning=DEFAULT_TUNING.with_value("prompt.card_share", 0.25))
    preview = PromptBuilder(tuned).build("kael-davan", 100000)
    assert preview.card_share == 0.25 and preview.card_budget == preview.available // 4
