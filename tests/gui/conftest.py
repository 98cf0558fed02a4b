from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.app import configure_process
from bpeinspect.gui.concurrency import Worker

configure_process()  # what the app does at start: tests of responsiveness need it


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    """The recent-files list (the core's, in the user's config folder) of each test its own."""
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def _window(qtbot, settings, panels):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=settings, panels=panels)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.jobs.cancel_all()
    try:
        qtbot.waitUntil(lambda: not win.jobs.is_busy(), timeout=30000)
    except Exception as exc:
        raise AssertionError(f"jobs still running at teardown: {win.jobs.running_keys()}") from exc
    Worker.shutdown()  # the panels' jobs


@pytest.fixture
def window(qtbot, settings):
    """A main window without panels (the panel tests use ``panel_window``)."""
    yield from _window(qtbot, settings, ())


@pytest.fixture
def panel_window(qtbot, settings):
    """A main window with every panel of bpeinspect.gui.panels.specs.PANELS."""
    from bpeinspect.gui.panels.specs import PANELS

    yield from _window(qtbot, settings, PANELS)


@pytest.fixture(scope="session")
def cl100k():
    return load_tokenizer("cl100k_base")


def wait_jobs(qtbot, jobs, timeout: int = 30000) -> None:
    """Wait until no job of ``jobs`` (a gui.concurrency.Jobs) runs, on its ``busyChanged`` signal."""
    if jobs.is_busy():
        with qtbot.waitSignal(jobs.busyChanged, timeout=timeout, check_params_cb=lambda busy: not busy):
            pass


def wait_idle(qtbot, win, timeout: int = 30000) -> None:
    """Wait for the window's ``idle`` signal (unless it is idle already)."""
    if not win.is_idle():
        with qtbot.waitSignal(win.idle, timeout=timeout):
            pass


class CountingFont:
    """Stands for one font of the system: counts the first look into its character map."""

    def __init__(self, opened: list[int], index: int, maps_all: bool) -> None:
        self.opened, self.index, self.maps_all = opened, index, maps_all
        self.asked = False

    def inFontUcs4(self, code: int) -> bool:  # noqa: N802 (Qt's name)
        if not self.asked:
            self.asked = True
            self.opened.append(self.index)
        return self.maps_all


def stand_in_fonts(monkeypatch, count: int) -> list[int]:
    """The system's fonts replaced by ``count`` :class:`CountingFont`, the last of them mapping
    every character and the default family none; returns the list of fonts looked into."""
    from bpeinspect.gui.overlay import glyphs

    opened: list[int] = []
    monkeypatch.setattr(glyphs, "_ALL_FONTS", [CountingFont(opened, i, maps_all=i == count - 1) for i in range(count)])
    monkeypatch.setattr(glyphs, "_OPENED", [0])
    monkeypatch.setattr(glyphs, "_COVERAGE", {})
    monkeypatch.setattr(glyphs, "_family_has", lambda family, ch: False)  # the family maps nothing
    return opened


class PaintTurns:
    """The turn of the event loop in which each of some widgets was first painted, counted from
    :meth:`start` (a call posted in a turn runs in the next, so the count moves once a turn)."""

    def __init__(self, widgets) -> None:
        from PySide6.QtCore import QEvent, QObject

        self.turn, self.first, self._ticking = -1, {}, False
        outer = self

        class Paints(QObject):
            def eventFilter(self, obj, event):  # noqa: N802
                if event.type() == QEvent.Type.Paint:
                    outer.first.setdefault(obj, outer.turn)
                return False

        self._filter = Paints()
        for w in widgets:
            self.watch(w)

    def watch(self, widget) -> None:
        """Note ``widget``'s first paint too."""
        widget.installEventFilter(self._filter)

    def start(self) -> None:
        self.first.clear()
        self.turn, self._ticking = 0, True
        self._tick()

    def stop(self) -> None:
        self._ticking = False

    def _tick(self) -> None:
        from PySide6.QtCore import QTimer

        if self._ticking:
            self.turn += 1
            QTimer.singleShot(0, self._tick)
