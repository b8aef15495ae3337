"""Table cells drawn from laid-out text kept between paints.

``QStyledItemDelegate`` lays every cell's text out again at each paint: shaping,
eliding and a ``QTextLayout`` per cell. Most of a table's repaint is that layout, and
a step that changes the NPC repaints four tables. ``StaticTextDelegate`` keeps the
elided text of each (text, font, width, elide mode, alignment) as a prepared ``QStaticText`` and
draws that: the same table repaints in well under the time, pixel for pixel the same.

It draws the cells the tables here show: one line of plain text with the model's font,
alignment, foreground and background. Any other cell (an icon or check box, a value
that is not text, several lines, a wrapped cell whose text is too wide, the focused
cell) is left to ``QStyledItemDelegate``, so every cell looks as it did. Text is always
plain: a name like ``<b>x</b>`` from a save is drawn as those characters.
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QAbstractProxyModel, QEvent, QSize, Qt
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QPalette, QStaticText, QTextLayout, QTextOption
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from narrative_debugger.widgets.kit.roles import ALIGN, BACKGROUND, DECORATION, DISPLAY, FONT, FOREGROUND

_CHECK = int(Qt.CheckStateRole.value)
_SELECTED = QStyle.StateFlag.State_Selected.value
_FOCUS = QStyle.StateFlag.State_HasFocus.value
_ACTIVE = QStyle.StateFlag.State_Active.value
_ENABLED = QStyle.StateFlag.State_Enabled.value
_WRAP_FEATURE = QStyleOptionViewItem.ViewItemFeature.WrapText
_WRAP = _WRAP_FEATURE.value
_ITEM_VIEW_ITEM = QStyle.ControlElement.CE_ItemViewItem
_NORMAL, _INACTIVE, _DISABLED = QPalette.ColorGroup.Normal, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled
_TEXT, _HIGHLIGHT, _HIGHLIGHTED_TEXT = QPalette.ColorRole.Text, QPalette.ColorRole.Highlight, QPalette.ColorRole.HighlightedText
_PLAIN = Qt.TextFormat.PlainText
_RIGHT = Qt.AlignmentFlag.AlignRight.value
_HCENTER = Qt.AlignmentFlag.AlignHCenter.value
#: The horizontal alignments a static text is laid out across its cell for.
_ACROSS = _RIGHT | _HCENTER
_TOP = Qt.AlignmentFlag.AlignTop.value
_BOTTOM = Qt.AlignmentFlag.AlignBottom.value
_DEFAULT_ALIGN = (Qt.AlignLeft | Qt.AlignVCenter).value
_NO_BRUSH = Qt.BrushStyle.NoBrush
#: Events after which laid-out text may draw differently.
_RELAYOUT = frozenset({QEvent.Type.FontChange, QEvent.Type.StyleChange})
_ELIDE_NONE = Qt.TextElideMode.ElideNone


class _Laid:
    """One cell text as drawn: the prepared static text, its line height (pixels), and
    whether the whole text fitted the width."""

    __slots__ = ("text", "height", "fits")

    def __init__(self, text: QStaticText, height: int, fits: bool) -> None:
        self.text, self.height, self.fits = text, height, fits


class StaticTextDelegate(QStyledItemDelegate):
    """Draws one-line plain-text cells from prepared ``QStaticText`` kept between paints.

    Args:
        parent: the view (its style draws the focus frame and every cell handed back).
        elide: the elide mode of every cell (None: the view's ``textElideMode``).
        wrap: None follows the view's word wrap (a cell too wide for one line is then
            drawn wrapped, by ``QStyledItemDelegate``); False always elides one line.
        keep: how many laid-out texts to keep (least recently drawn go first).

    A model may answer every role the delegate reads in one call: ``cell(index)``
    returns ``(display, font, alignment, background, foreground)``, each what ``data``
    gives for that role, and the model has no icon or check box. Five ``data`` calls a
    cell, each from Qt into Python, are half of a table's repaint.
    """

    def __init__(self, parent: QWidget | None = None, *, elide: Qt.TextElideMode | None = None,
                 wrap: bool | None = None, keep: int = 4096) -> None:
        super().__init__(parent)
        self._elide = elide
        self._wrap = wrap
        self._keep = keep
        self._laid: OrderedDict[tuple, _Laid] = OrderedDict()
        self._sizes: dict[tuple, QSize] = {}  # (text, font key) -> sizeHint, for models with ``cell``
        self._metrics: dict[str, QFontMetrics] = {}
        # QFont.key() costs ~10 us: the view's font is keyed "" (a font change forgets
        # every text) and a model's fonts by identity (models hand out the same QFont).
        self._font_keys: dict[int, tuple[QFont, str]] = {}
        # Per model: which of font, alignment, background, foreground and icon or check
        # box it can answer (a model's ``CELL_ROLES``; all of them when it has none).
        self._asks: dict[int, tuple] = {}
        if parent is not None:
            parent.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if event.type() in _RELAYOUT:
            self.forget()
        return False

    @property
    def elide(self) -> Qt.TextElideMode | None:
        """The elide mode of every cell (None: the view's ``textElideMode``)."""
        return self._elide

    # ----- the cache -----
    @property
    def kept(self) -> int:
        """How many laid-out texts it keeps now (at most ``keep``; 0 after ``forget``)."""
        return len(self._laid)

    def _lay_out(self, text: str, font: QFont, font_key: str, width: int, elide: Qt.TextElideMode, across: int) -> _Laid:
        key = (text, font_key, width, elide, across)
        laid = self._laid.get(key)
        if laid is not None:
            self._laid.move_to_end(key)
            return laid
        metrics = self._metrics.get(font_key)
        if metrics is None:
            metrics = self._metrics[font_key] = QFontMetrics(font)
        whole = metrics.horizontalAdvance(text)
        fits = whole <= width
        shown = text if fits or elide == _ELIDE_NONE else metrics.elidedText(text, elide, width)
        static = QStaticText(shown)
        static.setTextFormat(_PLAIN)
        if across:  # laid out across the cell's width, as QTextLayout aligns a line (sub-pixel offsets)
            static.setTextWidth(width)
            static.setTextOption(QTextOption(Qt.AlignmentFlag(across)))
        static.prepare(font=font)
        laid = _Laid(static, _line_height(text, font, width), fits)
        self._laid[key] = laid
        if len(self._laid) > self._keep:
            self._laid.popitem(last=False)
        return laid

    def forget(self) -> None:
        """Drop every laid-out text and measured size (after a font or style change)."""
        self._laid.clear()
        self._metrics.clear()
        self._font_keys.clear()
        self._sizes.clear()

    def _font_key(self, font: QFont) -> str:
        known = self._font_keys.get(id(font))
        if known is None or known[0] is not font:
            known = self._font_keys[id(font)] = (font, font.key())
        return known[1]

    def sizeHint(self, option, index):  # noqa: N802 (Qt override)
        """``QStyledItemDelegate``'s size of a one-line cell, measured once per (text,
        font) for a model with ``cell``: a column's refit asks it for every row in view,
        and each answer would ask the model for six roles."""
        model = index.model()
        asks = self._asked(model)
        cell = asks[7]
        wraps = self._wrap if self._wrap is not None else bool(option.features.value & _WRAP)
        if cell is None or wraps:
            return super().sizeHint(option, index)
        text, font, _, _, _ = cell(model.mapToSource(index) if asks[1] else index)
        if type(text) is not str or "\n" in text:
            return super().sizeHint(option, index)
        key = (text, "" if font is None else self._font_key(font))
        size = self._sizes.get(key)
        if size is None:
            if len(self._sizes) >= self._keep:
                self._sizes.clear()
            size = self._sizes[key] = super().sizeHint(option, index)
        return size

    # ----- painting -----
    def draw_as_style(self, painter, option, index) -> None:
        """Draw the cell as ``QStyledItemDelegate`` does, with this delegate's elide mode and wrapping."""
        if self._elide is None and self._wrap is None:
            super().paint(painter, option, index)
        else:
            draw_item(self, painter, option, index, wrap=bool(self._wrap), elide=self._elide)

    def _asked(self, model) -> tuple:
        asks = self._asks.get(id(model))
        if asks is None or asks[0] is not model:
            proxy = isinstance(model, QAbstractProxyModel)
            roles = getattr(model.sourceModel() if proxy else model, "CELL_ROLES", None)
            has = (lambda role: True) if roles is None else roles.__contains__
            source = model.sourceModel() if proxy else model
            asks = self._asks[id(model)] = (model, proxy, has(FONT), has(ALIGN), has(BACKGROUND), has(FOREGROUND),
                                            has(DECORATION) or has(_CHECK), getattr(source, "cell", None))
        return asks

    def paint(self, painter, option, index) -> None:
        model = index.model()
        _, proxy, asks_font, asks_align, asks_background, asks_foreground, asks_icon, cell = self._asked(model)
        if proxy:  # one mapping, then the source's own data (a proxy maps again for every role)
            index = model.mapToSource(index)
            model = model.sourceModel()
        data = model.data
        state = option.state.value
        if cell is not None:  # every role this delegate reads, in one call (``cell`` below)
            text, font, align, background, ink = cell(index)
            if type(text) is not str or "\n" in text or state & _FOCUS:
                self.draw_as_style(painter, option, index)
                return
        else:
            text = data(index, DISPLAY)
            if (type(text) is not str or "\n" in text or state & _FOCUS
                    or asks_icon and (data(index, DECORATION) is not None or data(index, _CHECK) is not None)):
                self.draw_as_style(painter, option, index)
                return
            font = data(index, FONT) if asks_font else None
            align = data(index, ALIGN) if asks_align else None
            background = data(index, BACKGROUND) if asks_background else None
            ink = data(index, FOREGROUND) if asks_foreground else None
        rect = option.rect
        if font is None:
            font, font_key = option.font, ""
        else:
            font_key = self._font_key(font)
        elide = self._elide if self._elide is not None else option.textElideMode
        width = rect.width() - 6  # the style's text margin, 3 pixels a side
        align = _DEFAULT_ALIGN if align is None else int(align)
        laid = self._lay_out(text, font, font_key, width, elide, align & _ACROSS) if text else None
        if laid is not None and not laid.fits:
            wraps = self._wrap if self._wrap is not None else bool(option.features.value & _WRAP)
            if wraps:
                self.draw_as_style(painter, option, index)
                return
        group = _NORMAL if state & _ENABLED else _DISABLED
        if group is _NORMAL and not state & _ACTIVE:
            group = _INACTIVE
        palette = option.palette
        selected = state & _SELECTED
        if selected:
            painter.fillRect(rect, palette.brush(group, _HIGHLIGHT))
        elif background is not None and (type(background) is not QBrush or background.style() != _NO_BRUSH):
            painter.fillRect(rect, background)
        if laid is None:
            return
        if selected:
            ink = palette.color(group, _HIGHLIGHTED_TEXT)
        elif ink is None:
            ink = palette.color(group, _TEXT)
        elif type(ink) is QBrush:
            ink = ink.color()
        x = rect.x() + 3
        if align & _TOP:
            y = rect.y()
        elif align & _BOTTOM:
            y = rect.y() + rect.height() - laid.height
        else:
            y = rect.y() + (rect.height() - laid.height) // 2
        painter.save()
        painter.setFont(font)
        painter.setPen(ink)
        painter.drawStaticText(x, y, laid.text)
        painter.restore()


def _line_height(text: str, font: QFont, width: int) -> int:
    """The height (whole pixels) of ``text`` laid out as one line in ``font``, as the style
    measures it to centre a cell's text: the line's own height, which grows when a glyph
    comes from a fallback font with a taller ascent or descent (a CJK font for "名前"),
    not the font's ``QFontMetrics.height()``."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(width)
    layout.endLayout()
    return int(line.height())


def draw_item(delegate: QStyledItemDelegate, painter, option, index, *, wrap: bool, elide: Qt.TextElideMode | None = None) -> None:
    """Draw one cell as ``delegate`` would, its text wrapped or not and elided at ``elide``
    (None: the view's mode). PySide hands a Python ``initStyleOption`` override a copy of
    the option, so the option is set up on a copy here and the item drawn from it."""
    opt = QStyleOptionViewItem(option)
    delegate.initStyleOption(opt, index)
    if elide is not None:
        opt.textElideMode = elide
    if wrap:
        opt.features |= _WRAP_FEATURE
    else:
        opt.features &= ~_WRAP_FEATURE
    widget = opt.widget
    style = widget.style() if widget is not None else QApplication.style()
    style.drawControl(_ITEM_VIEW_ITEM, opt, painter, widget)
