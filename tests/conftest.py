"""Shared fixtures. Qt tests run offscreen; pytest-qt owns the QApplication."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.open_guard import install as install_open_guard
from tests.support.settings import settings_under

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CONTENT = SAMPLES / "content"
DATA = Path(__file__).resolve().parent / "data"

#: Notes what a test opens or lists outside the repository (tests/support/open_guard.py).
OPEN_GUARD = install_open_guard(ROOT)


def _guarded(phase):
    """A test phase (setup, call, teardown) fails when it opened a path outside the repository."""

    @pytest.hookimpl(wrapper=True)
    def hook(item):
        OPEN_GUARD.take()
        OPEN_GUARD.armed = True
        try:
            result = yield
        finally:
            OPEN_GUARD.armed = False
        outside = OPEN_GUARD.take()
        if outside:
            pytest.fail(f"the test {phase} opened files outside the repository (issue 35): {outside}", pytrace=False)
        return result

    return hook


pytest_runtest_setup = _guarded("setup")
pytest_runtest_call = _guarded("call")
pytest_runtest_teardown = _guarded("teardown")


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per CPU this process may run on (its affinity, which taskset
    and container CPU sets narrow); with one CPU, none: the suite runs serially, as a single
    worker would only add its start-up. xdist's own count asks psutil for the machine's
    cores and so ignores the affinity."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this OS (macOS, Windows)
        cpus = os.cpu_count() or 1
    return cpus if cpus > 1 else 0


def pytest_configure(config):
    config.addinivalue_line("markers", "window(save=..., size=..., content=..., **MainWindow kwargs): what the window fixture opens")


@pytest.fixture(scope="session")
def evening_playthrough():
    """The bundled ordinary-evening sample, opened once per test run (read-only)."""
    from narrative_debugger.models.playthrough import Playthrough

    return Playthrough.open(SAMPLES / "evening.json", CONTENT)


@pytest.fixture()
def isolated_settings(tmp_path):
    """QSettings written under tmp_path, never the user's real settings; the previous
    format, folder and application names are restored afterwards (tests/support/settings.py)."""
    with settings_under(tmp_path / "settings") as folder:
        yield folder


@pytest.fixture()
def message_boxes(monkeypatch, isolated_settings):
    """Modal boxes would block an offscreen run: ``QMessageBox.warning``, ``information``
    and ``critical``, and a box's ``exec`` (``plain_text.show_message``), record
    ``(kind, title, text)`` in the returned list instead. ``text`` is the text shown; the
    boxes themselves are in ``boxes.shown`` (their details, their format)."""
    from PySide6.QtWidgets import QMessageBox

    from narrative_debugger.widgets.kit.plain_text import MESSAGE_ICONS

    class Boxes(list):
        shown: list = []

    boxes = Boxes()
    boxes.shown = []
    kinds = {icon: kind for kind, icon in MESSAGE_ICONS.items()}
    for name in ("warning", "information", "critical"):
        monkeypatch.setattr(QMessageBox, name, staticmethod(lambda *a, _n=name, **k: boxes.append((_n, *a[1:3])) or QMessageBox.Ok))

    def record(box):
        boxes.append((kinds.get(box.icon(), "other"), box.windowTitle(), box.text()))
        boxes.shown.append(box)
        return QMessageBox.Ok

    monkeypatch.setattr(QMessageBox, "exec", record)
    return boxes


@pytest.fixture()
def open_window(qtbot, isolated_settings):
    """A factory: ``open_window(save=None, size=(1400, 900), content=None, shown=True, **kwargs)``
    gives a shown, exposed MainWindow of ``size`` pixels (None: the size MainWindow chose,
    its default or a restored layout's), owned by qtbot, whose QSettings live under the
    test's tmp_path; with ``save`` (and its ``content`` folder when given) opened and ready.
    ``shown=False`` leaves it hidden (its sliced work then runs at once); ``owned=False`` leaves
    it to the test to delete (qtbot would close it at teardown). ``kwargs`` go to
    MainWindow (e.g. ``persist=False``). Call it again for a second window on the same
    settings (what a restart sees). Tests make every MainWindow here (test_test_hygiene)."""
    from narrative_debugger.app.window.main_window import MainWindow

    def make(save: Path | None = None, size: tuple[int, int] | None = (1400, 900), content: Path | None = None,
             shown: bool = True, owned: bool = True, **kwargs):
        w = MainWindow(**kwargs)
        if owned:  # owned=False: the test deletes the window itself, and qtbot must not close it again
            qtbot.addWidget(w)
        if size is not None:
            w.resize(*size)
        if shown:
            w.show()
            qtbot.waitExposed(w)
        if save is not None:
            w.open_save(save, content, wait=True)
            assert w.session.ready
        return w

    return make


@pytest.fixture()
def window(request, open_window):
    """The one shown MainWindow of a test, from ``open_window``. By default the evening
    sample at 1400x900; a module or test changes that with
    ``@pytest.mark.window(save=..., size=..., persist=...)`` (``save=None``: no save)."""
    marker = request.node.get_closest_marker("window")
    kwargs = dict(marker.kwargs) if marker else {}
    kwargs.setdefault("save", SAMPLES / "evening.json")
    return open_window(**kwargs)


def k002_save(folder: Path) -> tuple[Path, dict, int, int]:
    """The evening sample with a FactLearned that names the interaction in progress (K002),
    put before that conversation's first DialogueLine, written to ``folder/k002.json``.

    Returns (path, the document, the journal index of the InteractionStarted, the
    journal index of the FactLearned); the fact is ``doc["k002_fact"]``.
    """
    import json

    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    journal = doc["journal"]
    start = next(i for i, e in enumerate(journal) if "InteractionStarted" in e["event"])
    target = journal[start]["event"]["InteractionStarted"]["target"]
    line = next(i for i in range(start, len(journal)) if "DialogueLine" in journal[i]["event"])
    fact_id = f"interaction.{doc['npcs'][str(target)]['slug']}_001"
    journal.insert(line, {"tick": journal[line]["tick"], "event": {"FactLearned": {"fact_id": fact_id, "confidence": "KnowsOf", "source": "Heard"}}})
    path = folder / "k002.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    doc["k002_fact"] = fact_id
    return path, doc, start, line
