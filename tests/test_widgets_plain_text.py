"""Text from saves and content is text (issue 8 item 2): a name like
``<b>bold</b><img src=x>`` is shown literally in every label, tooltip, table cell and
graphics item of the window, never rendered as markup."""

from __future__ import annotations

import json
import shutil

import pytest
from narrative_debugger.widgets.kit.slices import any_busy
from narrative_debugger.widgets.registry import VIEW_NAMES
from PySide6.QtCore import QAbstractItemModel, QAbstractListModel, QModelIndex, Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QAbstractItemView, QGraphicsTextItem, QGraphicsView, QLabel, QWidget

from tests.conftest import CONTENT, SAMPLES

HOSTILE = "<b>bold</b><img src=x>"
FILE_STEM = "<b>bold<img src=x>"  # a file name cannot hold "/"
MARK = "bold"  # what survives if the markup were rendered


def rendered(text: str, fmt=Qt.AutoText) -> str:
    """What Qt shows for ``text`` in a label of format ``fmt`` (tooltips are AutoText)."""
    if fmt == Qt.PlainText or (fmt == Qt.AutoText and not GuiQt.mightBeRichText(text)):
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def literal(text: str) -> bool:
    """True when ``text`` (as shown) never shows the hostile name as markup."""
    # "<b>bold" on screen means the tag was shown, not rendered (an elided label keeps only the start).
    return MARK not in text or HOSTILE in text or FILE_STEM in text or "<b>" + MARK in text


def hostile_save(tmp_path):
    """evening.json with the player, an NPC (content name), a line and a location made of markup,
    saved under a file name made of markup."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    profile = content / "npcs" / "lera-sessik.yaml"
    text = profile.read_text(encoding="utf-8").replace("name: Lera Sessik", f"name: {json.dumps(HOSTILE)}", 1)
    profile.write_text(text, encoding="utf-8")
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    doc["player"]["name"] = HOSTILE
    for entry in doc["journal"]:
        event = entry["event"]
        if "DialogueLine" in event:
            event["DialogueLine"]["text"] = f"{HOSTILE} says hello"
        if "InteractionStarted" in event:
            event["InteractionStarted"]["location"] = HOSTILE
    path = tmp_path / f"{FILE_STEM}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, content


def _model_texts(model: QAbstractItemModel, parent=QModelIndex(), limit: int = 400):  # noqa: B008
    # A list model has one column, and PySide6 keeps its columnCount private.
    columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)
    for row in range(min(model.rowCount(parent), limit)):
        for col in range(columns):
            index = model.index(row, col, parent)
            tip = index.data(Qt.ToolTipRole)
            if isinstance(tip, str):
                yield f"tooltip of {model.objectName() or type(model).__name__}[{row},{col}]", rendered(tip)
            if col == 0 and model.rowCount(index) > 0:
                yield from _model_texts(model, index, limit)


def shown_texts(window: QWidget):
    """(where, text as shown) of every label, tooltip, table tooltip and graphics item."""
    for label in window.findChildren(QLabel):
        yield f"label {label.objectName() or label.text()[:40]!r}", rendered(label.text(), label.textFormat())
    for widget in [window, *window.findChildren(QWidget)]:
        if widget.toolTip():
            yield f"tooltip of {type(widget).__name__} {widget.objectName()!r}", rendered(widget.toolTip())
    for view in window.findChildren(QAbstractItemView):
        if view.model() is not None:
            yield from _model_texts(view.model())
    for gv in window.findChildren(QGraphicsView):
        if gv.scene() is None:
            continue
        for item in gv.scene().items():
            if item.toolTip():
                yield f"tooltip of {type(item).__name__}", rendered(item.toolTip())
            if isinstance(item, QGraphicsTextItem):
                yield f"text item {type(item).__name__}", item.toPlainText()


pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown


def test_names_from_saves_and_content_are_shown_literally(qtbot, open_window, tmp_path):
    path, content = hostile_save(tmp_path)
    window = open_window(None, (1440, 900), persist=False)
    window.open_save(path, content, npc="lera-sessik", wait=True)
    s = window.session
    assert s.ready and s.playthrough.npc_name(s.npc) == HOSTILE
    line_tick = next(t for t, k in zip(s.playthrough.index.ticks, s.playthrough.index.kinds) if k == "DialogueLine")
    s.set_tick(line_tick)
    checked, bad = 0, []
    for view in VIEW_NAMES:
        s.set_view(view)
        if view == "prompt":
            prompt = window.views["prompt"]
            qtbot.waitUntil(lambda: prompt.current_preview is not None and prompt.current_preview.tick == s.tick, timeout=30_000)
        qtbot.waitUntil(lambda: not any_busy(window), timeout=30_000)  # the shown view has caught up
        for where, text in shown_texts(window):
            checked += 1
            if not literal(text) and (where, text[:160]) not in {b[1:] for b in bad}:
                bad.append((view, where, text[:160]))
    assert checked > 100
    assert not bad, "\n".join(map(str, bad[:60]))
    # The name is on screen somewhere, literally (the test would pass on an empty window otherwise).
    assert any(HOSTILE in text for _, text in shown_texts(window))


def test_plain_tip_and_elided_label(qtbot):
    from narrative_debugger.widgets.kit.plain_text import ElidedLabel, plain_tip

    assert plain_tip("plain\n<b>later</b>") == "plain\n<b>later</b>"  # Qt shows it as text already
    tip = plain_tip(f"{HOSTILE}\nsecond line & more")
    assert rendered(tip) == f"{HOSTILE}\nsecond line & more"
    label = ElidedLabel("a-rather-long-save-name-evening.json")
    qtbot.addWidget(label)
    label.resize(80, 20)
    label.show()
    assert label.text() != label.full_text() and "…" in label.text()
    assert label.text().endswith(".json")  # elided in the middle: the extension stays
    assert rendered(label.toolTip()) == "a-rather-long-save-name-evening.json"
    label.resize(label.sizeHint())
    assert label.text() == label.full_text() and label.toolTip() == ""


def shown_lines_label(qtbot, text: str, chars: int, height: int):
    """``(holder, label)``: a ``LinesLabel`` of 2 to 3 lines at the top of a shown holder
    ``chars`` average characters wide and ``height`` px tall, given ``text`` and laid out."""
    from narrative_debugger.widgets.kit.plain_text import LinesLabel

    from PySide6.QtWidgets import QApplication, QVBoxLayout

    holder = QWidget()
    qtbot.addWidget(holder)
    label = LinesLabel(holder, min_lines=2, max_lines=3)
    column = QVBoxLayout(holder)
    column.addWidget(label)
    column.addStretch(1)
    holder.resize(chars * label.fontMetrics().averageCharWidth(), height)
    holder.show()
    qtbot.waitExposed(holder)
    label.setText(text)
    QApplication.processEvents()
    return holder, label


def test_lines_label_cuts_at_its_last_line_and_keeps_the_text_whole_in_its_tooltip(qtbot):
    """A ``LinesLabel`` too narrow for its text shows at most ``max_lines`` lines, the last
    ending in "…" after a whole word, the escaped text whole in its tooltip; wide enough,
    the whole text and no tooltip (the timelines' readout: trial 50)."""
    from narrative_debugger.widgets.kit.plain_text import esc

    from PySide6.QtWidgets import QApplication

    words = " · ".join(f"<b>value</b> {n} of {esc(HOSTILE)}" for n in range(40))
    holder, label = shown_lines_label(qtbot, words, chars=20, height=400)  # laid out: cut to the label's width

    def shown_lines() -> tuple[str, int]:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(label.font())
        doc.setHtml(label.text())
        doc.setTextWidth(label.contentsRect().width())
        doc.documentLayout().documentSize()
        return doc.toPlainText(), sum(doc.findBlockByNumber(b).layout().lineCount() for b in range(doc.blockCount()))

    text, lines = shown_lines()
    assert lines <= 3 and text.endswith("…") and not text.endswith(" …") and not text.endswith("·…")
    assert rendered(words).startswith(text[:-1].rstrip())  # the start of the text, markup kept as text
    assert label.full_text() == words and label.toolTip() == words
    assert label.heightForWidth(label.width()) <= 3 * label.fontMetrics().lineSpacing() + 2
    holder.resize(100 * label.width(), 400)  # wide: the whole text again
    QApplication.processEvents()
    text, lines = shown_lines()
    assert label.text() == words and label.toolTip() == "" and lines <= 3
    label.setText("short")
    QApplication.processEvents()
    assert label.text() == "short" and label.heightForWidth(label.width()) >= 2 * label.fontMetrics().lineSpacing()


def test_lines_label_gives_lines_taller_than_its_font_their_whole_height(qtbot):
    """Three lines taller than the label's own line spacing (a glyph from a taller fallback
    font: the readout's "■" and "╍" under CJK fonts) are shown whole: the label is as tall
    as their layout, not three of its font's lines (a 4 px cut, seen with Noto Sans CJK)."""
    from PySide6.QtWidgets import QApplication

    size = 3 * QApplication.font().pointSize()
    text = "<br>".join(f"line {n} <span style='font-size:{size}pt'>tall</span>" for n in range(3))
    _, label = shown_lines_label(qtbot, text, chars=40, height=600)
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    doc.setTextWidth(label.contentsRect().width())
    assert doc.size().height() > 3 * label.fontMetrics().lineSpacing() + 2  # the case: taller lines
    assert label.text() == text and label.toolTip() == ""  # three lines: nothing cut
    assert label.height() >= doc.size().height()


def test_a_fact_known_in_b_only_is_shown_literally_in_its_tooltip(qtbot, open_window):
    # Trial 47: a what-if giving an NPC a slug of markup made B's interaction facts
    # (interaction.<slug>_001, known in B only); their tooltip rendered the FactId as HTML.
    window = open_window(None, (1440, 900), persist=False)
    window.open_save(SAMPLES / "evening.json", None, wait=True)
    s = window.session
    sid = s.playthrough.save.npc_by_slug("lera-sessik").stable_id
    with qtbot.waitSignal(s.comparisonChanged, timeout=60_000):
        assert window.whatif.add_edits([(f"/npcs/{sid}/slug", HOSTILE)])
    s.set_view("knowledge")
    qtbot.waitUntil(lambda: not any_busy(window), timeout=30_000)
    tips = [text for _, text in shown_texts(window) if "not known in A" in text]
    assert tips
    assert all(HOSTILE in text for text in tips if MARK in text), tips[:3]


def test_a_name_with_a_line_break_or_a_bidi_override_is_one_line_of_visible_text(qtbot, open_window, tmp_path):
    # Trial 47: a name's newline broke the NPC rows and headings in two, and a
    # right-to-left override showed '\u202emira' as "arim" (the command line escapes both).
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    for slug, name in (("lera-sessik", "Lera\nSessik"), ("mira-holt", "\u202eMira Holt")):
        profile = content / "npcs" / f"{slug}.yaml"
        first = profile.read_text(encoding="utf-8").split("\n", 1)
        profile.write_text(f"name: {json.dumps(name)}\n" + first[1], encoding="utf-8")
    window = open_window(None, (1440, 900), persist=False)
    window.open_save(SAMPLES / "evening.json", content, npc="lera-sessik", wait=True)
    qtbot.waitUntil(lambda: not any_busy(window), timeout=30_000)
    texts = [text for _, text in shown_texts(window)]
    assert any("Lera\\u000aSessik" in t for t in texts) and any("\\u202eMira Holt" in t for t in texts)
    assert not any("Lera\nSessik" in t or "\u202e" in t for t in texts)


def test_a_long_name_is_cut_in_the_timelines_legend(qtbot, open_window, tmp_path):
    # Trial 47: a 200-character name ran off the legend's edge (one word: it cannot wrap).
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    profile = content / "npcs" / "lera-sessik.yaml"
    profile.write_text(f"name: {'K' * 200}\n" + profile.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    window = open_window(None, (1440, 900), persist=False)
    window.open_save(SAMPLES / "evening.json", content, npc="lera-sessik", wait=True)
    window.session.set_view("timelines")
    qtbot.waitUntil(lambda: not any_busy(window), timeout=30_000)
    legend = window.views["timelines"].legend.text()
    assert "K" * 39 + "…" in legend and "K" * 40 not in legend
