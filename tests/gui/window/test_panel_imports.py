"""The lazy panels' modules (pyqtgraph behind them) are imported by a worker when the window opens."""

from __future__ import annotations

import threading

from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.window import docks
from tests.gui.conftest import _window


def test_lazy_panel_modules_are_imported_off_the_gui_thread(qtbot, monkeypatch, settings):
    from bpeinspect.gui.panels.specs import PANELS

    seen: list[tuple[list[str], bool]] = []
    real = docks._import_all

    def spy(modules: list[str]) -> None:
        seen.append((list(modules), threading.current_thread() is threading.main_thread()))
        real(modules)

    monkeypatch.setattr(docks, "_import_all", spy)
    for _win in _window(qtbot, settings, PANELS):
        qtbot.waitUntil(lambda: bool(seen) and Worker.running_count() == 0, timeout=20000)
    modules, on_gui_thread = seen[0]
    assert modules == [s.module for s in PANELS if s.lazy and s.module]
    assert "bpeinspect.gui.panels.languages" in modules
    assert not on_gui_thread


def test_the_host_says_while_it_imports(qtbot, monkeypatch, settings):
    """benchmarks/latency.py waits for the imports before its first action (a load measured
    next to them shared the interpreter with them)."""
    from bpeinspect.gui.panels.specs import PANELS

    release = threading.Event()
    real = docks._import_all
    monkeypatch.setattr(docks, "_import_all", lambda modules: (release.wait(20), real(modules)))
    for win in _window(qtbot, settings, PANELS):
        qtbot.wait(50)
        assert win.panels.importing()
        release.set()
        qtbot.waitUntil(lambda w=win: not w.panels.importing(), timeout=20000)


def test_the_languages_views_own_modules_are_imported_with_the_panels(qtbot, monkeypatch, settings):
    """Its counting, tables and plot pages (and the map) come in at the window's start, not on the
    view's worker at its first open, beside the first paint."""
    from bpeinspect.gui.panels import languages
    from bpeinspect.gui.panels.specs import PANELS

    warmed: list[bool] = []
    monkeypatch.setattr(languages, "warm_up", lambda: warmed.append(threading.current_thread() is threading.main_thread()),
                        raising=False)  # fmt: skip
    for win in _window(qtbot, settings, PANELS):
        qtbot.waitUntil(lambda w=win: not w.panels.importing(), timeout=20000)
    assert warmed == [False]


def test_the_panels_modules_are_imported_after_the_windows_first_paint(qtbot, monkeypatch, settings):
    """Imported next to the first show, they held the interpreter away from its first paint (a
    100 ms stall): they start once the window is shown and has painted."""
    from PySide6.QtCore import QEvent, QObject

    from bpeinspect.gui.panels.specs import PANELS
    from bpeinspect.gui.window.main_window import MainWindow

    painted: list[bool] = []
    started: list[bool] = []  # whether the window had painted when the imports started
    real = docks._import_all
    monkeypatch.setattr(docks, "_import_all", lambda modules: (started.append(bool(painted)), real(modules)))

    class Paints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                painted.append(True)
            return False

    win = MainWindow(settings=settings, panels=PANELS)
    qtbot.addWidget(win)
    paints = Paints()
    win.centralWidget().installEventFilter(paints)
    qtbot.wait(docks.IMPORTS_AFTER_SHOW_MS + 200)
    assert started == []  # not shown: nothing imported yet
    assert not win.panels.importing()
    win.show()
    assert win.panels.importing()  # due: benchmarks wait for it
    qtbot.waitUntil(lambda: bool(started) and not win.panels.importing(), timeout=20000)
    assert started == [True]
    win.jobs.cancel_all()
    Worker.shutdown()


def test_the_chat_template_engine_is_imported_with_the_panels(tmp_path):
    """The chat's first render imported jinja2 on a worker beside the panel's first paint: the
    window's start-up imports bring it in (a fresh process: another test may have imported it)."""
    import os
    import subprocess
    import sys

    script = """
import sys, time
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.panels.specs import PANELS
from bpeinspect.gui.window.main_window import MainWindow

app = QApplication([])
win = MainWindow(settings=QSettings(sys.argv[1], QSettings.Format.IniFormat), panels=PANELS)
assert "jinja2" not in sys.modules
win.show()
end = time.monotonic() + 60
while time.monotonic() < end and (win.panels.importing() or Worker.running_count()):
    app.processEvents()
    time.sleep(0.01)
print("jinja2.sandbox" in sys.modules)
win.jobs.cancel_all()
Worker.shutdown()
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "BPEINSPECT_CONFIG_DIR": str(tmp_path)}
    args = [sys.executable, "-c", script, str(tmp_path / "s.ini")]
    out = subprocess.run(args, check=False, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True"
