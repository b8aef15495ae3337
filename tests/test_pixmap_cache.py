"""The pixmap cache holds the timelines' cached drawings (issue 10)."""

from __future__ import annotations

from narrative_debugger.app.window import main_window
from narrative_debugger.app.window.main_window import PIXMAP_CACHE_MAX_KB, PIXMAP_CACHE_MIN_KB, make_app, pixmap_cache_kb
from PySide6.QtGui import QPixmapCache


def test_pixmap_cache_is_screenfuls_within_bounds():
    # 1920 x 1080 at ratio 1: 12 screenfuls of 8 100 KB
    assert pixmap_cache_kb(1920, 1080) == 12 * 1920 * 1080 * 4 // 1024 == 97_200
    assert pixmap_cache_kb(800, 600) == PIXMAP_CACHE_MIN_KB  # 22 500 KB asked, the floor given
    assert pixmap_cache_kb(1920, 1080, 2.0) == PIXMAP_CACHE_MAX_KB  # 388 800 KB asked, the cap given
    assert pixmap_cache_kb(0, 0) == PIXMAP_CACHE_MIN_KB
    assert pixmap_cache_kb(-5, 100) == PIXMAP_CACHE_MIN_KB


def test_make_app_raises_the_limit_and_never_lowers_it(qapp, monkeypatch):
    before = QPixmapCache.cacheLimit()
    try:
        QPixmapCache.setCacheLimit(10 * 1024)  # Qt's default
        make_app()
        screen = qapp.primaryScreen()
        size = screen.size()
        assert QPixmapCache.cacheLimit() == pixmap_cache_kb(size.width(), size.height(), screen.devicePixelRatio())
        assert QPixmapCache.cacheLimit() >= PIXMAP_CACHE_MIN_KB
        QPixmapCache.setCacheLimit(PIXMAP_CACHE_MAX_KB * 2)
        monkeypatch.setattr(main_window, "PIXMAP_CACHE_MAX_KB", PIXMAP_CACHE_MIN_KB)
        make_app()
        assert QPixmapCache.cacheLimit() == PIXMAP_CACHE_MAX_KB * 2  # a larger limit set by someone else stays
    finally:
        QPixmapCache.setCacheLimit(before)
