from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.app import configure_process

configure_process()  # what the app does at start: tests of responsiveness need it


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
    win.jobs.cancel_all()
    try:
        qtbot.waitUntil(lambda: not win.jobs.is_busy(), timeout=30000)
    except Exception as exc:
        raise AssertionError(f"jobs still running at teardown: {win.jobs.running_keys()}") from exc


@pytest.fixture(scope="session")
def cl100k():
    return load_tokenizer("cl100k_base")


def wait_idle(qtbot, win, timeout: int = 30000) -> None:
    qtbot.waitUntil(win.is_idle, timeout=timeout)
