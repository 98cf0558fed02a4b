from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from bpeinspect.core import load_tokenizer


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.runner.cancel_all()
    try:
        qtbot.waitUntil(lambda: not win.runner.is_busy(), timeout=30000)
    except Exception as exc:
        stuck = [(job.key, getattr(job, "state", "?")) for job in win.runner._running]
        raise AssertionError(f"jobs still running at teardown: {stuck}") from exc


@pytest.fixture(scope="session")
def cl100k():
    return load_tokenizer("cl100k_base")


def wait_idle(qtbot, win, timeout: int = 30000) -> None:
    qtbot.waitUntil(win.is_idle, timeout=timeout)
