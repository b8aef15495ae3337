"""Colours, pens and words shared by the knowledge and interaction views.

One place decides how a domain value looks so that the fact table, the knowledge
graph and the interaction diagram agree: an interaction that walked away is the
same amber everywhere, a ``Suspects`` edge is always dotted. Nothing here holds
state; every function is a pure mapping from a ``models.types`` value to a Qt value
or a display string.
"""

from __future__ import annotations

import re
from functools import lru_cache
import zlib
from dataclasses import dataclass

from narrative_debugger.models.domain.types import (
    InteractionState,
    KnowledgeConfidence,
    KnowledgeSource,
    KnowledgeState,
    RelationshipState,
)
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette, QPen

#: Marker lanes of the tick bar and the timelines, top to bottom: session event kind -> (label, colour).
KIND_STYLE: dict[str, tuple[str, str]] = {
    "walk-away": ("Walk-away", "#d62728"),
    "confrontation": ("Confrontation", "#f28e2b"),
    "penalty": ("Penalty", "#8b0000"),
    "interaction": ("Interaction start", "#1f77b4"),
    "monologue": ("Monologue", "#9467bd"),
    "finding": ("Finding", "#d4a017"),
}

#: Fill colour of each interaction state (schema §3.2). Red is kept for faults.
INTERACTION_COLORS: dict[InteractionState, QColor] = {
    InteractionState.Active: QColor("#3b7dd8"),
    InteractionState.Completed: QColor("#2f9e6e"),
    InteractionState.WalkedAway: QColor("#d9a21b"),
    InteractionState.Confrontation: QColor("#e8690c"),
    InteractionState.ConflictAbandoned: QColor("#8e44ad"),
}

#: Fill colour of an NPC node by what the player thinks of them (schema §2).
RELATIONSHIP_COLORS: dict[RelationshipState, QColor] = {
    RelationshipState.Unknown: QColor("#a3a9b0"),
    RelationshipState.Known: QColor("#6fa8dc"),
    RelationshipState.Friendly: QColor("#51b36b"),
    RelationshipState.PersonOfInterest: QColor("#e5a50a"),
    RelationshipState.Hostile: QColor("#d64545"),
}

#: Colour of a schema fault (an illegal transition, an I001 finding).
FAULT_COLOR = QColor("#e03131")
#: Colour that marks "changed since the previous step" (table rows, graph rings).
CHANGED_COLOR = QColor("#ff8c1a")
#: Background of a changed row in the fact table.
CHANGED_BACKGROUND = QColor("#fff1d6")
#: Colour of the selection ring around a node.
SELECTION_COLOR = QColor("#1c7ed6")
#: Ink for edges and neutral text.
INK = QColor("#4a5562")
#: Light ink for secondary text.
MUTED_INK = QColor("#7b8794")



@dataclass(frozen=True)
class PaletteColors:
    """Colours of the application palette (light or dark) for painted views and plots.

    Attributes:
        canvas: the background of a drawing (``QPalette.Base``).
        panel: the window background (``QPalette.Window``).
        ink: text (``QPalette.Text``).
        muted: secondary text (``QPalette.PlaceholderText``).
        grid: faint lines (``QPalette.Mid``).
        dark: True on a dark palette (the canvas is darker than mid-grey).
    """

    canvas: QColor
    panel: QColor
    ink: QColor
    muted: QColor
    grid: QColor
    dark: bool


def palette_colors(palette: QPalette | None = None) -> PaletteColors:
    """The ``PaletteColors`` of ``palette`` (the application's when None)."""
    pal = palette if palette is not None else QGuiApplication.palette()
    canvas = pal.color(QPalette.Base)
    return PaletteColors(canvas=canvas, panel=pal.color(QPalette.Window), ink=pal.color(QPalette.Text),
                         muted=pal.color(QPalette.PlaceholderText), grid=pal.color(QPalette.Mid),
                         dark=canvas.lightnessF() < 0.5)


#: Tints made so far: (kind, palette cacheKey, colour rgba) -> QColor. Item models ask
#: for a tint in ``data()`` for every cell painted; working out the palette each time
#: is a large share of a table's repaint. Cleared when it grows.
_TINTS: dict[tuple, QColor] = {}
_TINTS_MAX = 512


def _tint(kind: str, color: QColor, palette: QPalette | None, make) -> QColor:
    pal = palette if palette is not None else QGuiApplication.palette()
    key = (kind, pal.cacheKey(), color.rgba())
    found = _TINTS.get(key)
    if found is None:
        if len(_TINTS) >= _TINTS_MAX:
            _TINTS.clear()
        found = _TINTS[key] = make(color, palette_colors(pal).dark)
    return QColor(found)  # the caller's own copy


def _row_tint(light: QColor, dark: bool) -> QColor:
    if not dark:
        return QColor(light)
    hsl = light.toHsl()
    return QColor.fromHslF(max(0.0, hsl.hslHueF()), min(1.0, hsl.hslSaturationF() * 0.6), 0.22)


def row_tint(light: QColor, palette: QPalette | None = None) -> QColor:
    """A row or panel background for the palette: ``light`` itself on a light palette, on a
    dark one the same hue as a dark shade, so the palette's light text stays readable."""
    return _tint("row", light, palette, _row_tint)


def ink_tint(color: QColor, palette: QPalette | None = None) -> QColor:
    """A text colour for the palette: ``color`` on a light palette, lightened on a dark one."""
    return _tint("ink", color, palette, lambda c, dark: QColor(c).lighter(165) if dark else QColor(c))


_BRUSHES: dict[int, QBrush] = {}


def brush_of(color: QColor) -> QBrush:
    """One ``QBrush`` per colour (by ARGB value), for item models' ``data``, which Qt asks
    of every painted cell: a new ``QBrush`` a call costs microseconds a cell."""
    key = color.rgba()
    brush = _BRUSHES.get(key)
    if brush is None:
        brush = _BRUSHES[key] = QBrush(color)
    return brush


_CATEGORY_PALETTE = (
    "#7aa6c2", "#c29a7a", "#8fbf8f", "#b39ddb", "#e6a57e", "#80cbc4",
    "#d4a5a5", "#a1b56c", "#f0b86e", "#9fa8da", "#bcaaa4", "#ce93d8",
)


def category_color(category: str) -> QColor:
    """A stable pastel colour for a fact category (same name, same colour, every run)."""
    return QColor(_CATEGORY_PALETTE[zlib.crc32(category.encode()) % len(_CATEGORY_PALETTE)])


def confidence_pen(confidence: KnowledgeConfidence, color: QColor | None = None, scale: float = 1.0) -> QPen:
    """The edge style of a confidence level: Direct solid thick, KnowsDetails solid,
    KnowsOf dashed, Suspects dotted.

    Args:
        confidence: the level to draw.
        color: ink colour; ``INK`` by default.
        scale: multiplies the width (for highlighted edges).
    """
    width, style = {
        KnowledgeConfidence.Direct: (3.4, Qt.SolidLine),
        KnowledgeConfidence.KnowsDetails: (1.8, Qt.SolidLine),
        KnowledgeConfidence.KnowsOf: (1.5, Qt.DashLine),
        KnowledgeConfidence.Suspects: (1.5, Qt.DotLine),
    }[confidence]
    pen = QPen(color if color is not None else INK, width * scale, style)
    pen.setCapStyle(Qt.FlatCap if style != Qt.SolidLine else Qt.RoundCap)
    pen.setCosmetic(False)
    return pen


@lru_cache(maxsize=4096)
def words(name: str) -> str:
    """``PersonOfInterest`` -> ``Person of interest``; ``KnowsOf`` -> ``Knows of``.

    Kept per name: tables call it for every cell they paint."""
    parts = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", name)
    if not parts:
        return name
    return " ".join([parts[0]] + [p.lower() for p in parts[1:]])


def confidence_label(confidence: KnowledgeConfidence) -> str:
    """Display words of a confidence level."""
    return words(confidence.name)


def source_label(source: KnowledgeSource) -> str:
    """Display words of a knowledge source."""
    return words(source.name)


def state_label(state: KnowledgeState | InteractionState | RelationshipState) -> str:
    """Display words of a knowledge, interaction or relationship state."""
    return words(state.name)


#: Text drawn on a fill is this near-black or white, whichever contrasts more (``text_on``).
DARK_TEXT = QColor("#1d232a")
LIGHT_TEXT = QColor("#ffffff")
#: WCAG 2.x AA contrast for normal text.
MIN_TEXT_CONTRAST = 4.5


def relative_luminance(color: QColor) -> float:
    """WCAG 2.x relative luminance of an opaque colour: 0.0 (black) to 1.0 (white)."""

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(color.redF()) + 0.7152 * linear(color.greenF()) + 0.0722 * linear(color.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG 2.x contrast ratio of two opaque colours: 1.0 (same) to 21.0 (black on white)."""
    la, lb = relative_luminance(a), relative_luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def over(fill: QColor, canvas: QColor) -> QColor:
    """``fill`` painted on ``canvas``: the opaque colour a translucent fill shows as."""
    a = fill.alphaF()
    return QColor.fromRgbF(*(a * f + (1 - a) * c for f, c in ((fill.redF(), canvas.redF()), (fill.greenF(), canvas.greenF()),
                                                               (fill.blueF(), canvas.blueF()))))


def text_on(fill: QColor, canvas: QColor | None = None) -> QColor:
    """The text colour for ``fill`` (on ``canvas`` when the fill is translucent): ``DARK_TEXT``
    or ``LIGHT_TEXT``, whichever contrasts more, and pure black when neither reaches
    ``MIN_TEXT_CONTRAST`` (black or white always does: at worst 4.58 to 1)."""
    shown = over(fill, canvas) if canvas is not None and fill.alpha() < 255 else QColor(fill.rgb())
    best = max((DARK_TEXT, LIGHT_TEXT), key=lambda ink: contrast_ratio(ink, shown))
    return QColor(best) if contrast_ratio(best, shown) >= MIN_TEXT_CONTRAST else QColor("#000000")


def _ink_on(color: QColor, dark: bool, palette: QPalette | None) -> QColor:
    base = palette_colors(palette if palette is not None else QGuiApplication.palette()).canvas
    hsl = color.toHsl()
    h, sat, light = max(0.0, hsl.hslHueF()), hsl.hslSaturationF(), hsl.lightnessF()
    ink = QColor(color)
    while contrast_ratio(ink, base) < MIN_TEXT_CONTRAST and 0.0 < light < 1.0:
        light = min(1.0, light + 0.03) if dark else max(0.0, light - 0.03)
        ink = QColor.fromHslF(h, sat, light)
    return ink


def ink_on_canvas(color: QColor, palette: QPalette | None = None) -> QColor:
    """``color`` as text on the palette's canvas (``QPalette.Base``): the same hue, darkened
    on a light palette or lightened on a dark one until it reaches ``MIN_TEXT_CONTRAST``."""
    return _tint("on", color, palette, lambda c, dark: _ink_on(c, dark, palette))


def readable_text(background: QColor) -> QColor:
    """Near-black or white, whichever reads better on ``background`` (``text_on``)."""
    return text_on(background)
