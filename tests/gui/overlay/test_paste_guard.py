"""A paste over the limit neither freezes nor crashes the window: it is refused with a
message, the text is untouched and the window goes on working. Pastes under the limit go in."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QSettings, QThreadPool
from PySide6.QtGui import QGuiApplication

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.overlay.paste_guard import PASTE_LIMIT, TEXT_LIMIT

pytestmark = pytest.mark.timeout(300)

UNIT = "The quick brown fox 123 jumps — naïve café 日本語 👩‍💻.\n"


def text_of_size(n_bytes: int) -> str:
    return UNIT * (n_bytes // len(UNIT.encode()))


@pytest.fixture
def window(qtbot, tmp_path):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), panels=())
    qtbot.addWidget(win)
    win.show()
    win.open_tokenizer("cl100k_base")
    win.set_text("before the paste ")
    qtbot.waitUntil(win.is_idle, timeout=60000)
    yield win
    # pytest-qt has closed and deleted the window by now; wait for its jobs in the pool
    QThreadPool.globalInstance().waitForDone(60_000)


def pane_of(win):
    return win.panes.panes()[0]


def test_a_paste_over_the_limit_is_refused_and_the_window_still_works(qtbot, window):
    big = text_of_size(PASTE_LIMIT + (4 << 20))
    QGuiApplication.clipboard().setText(big)
    view = pane_of(window).view
    view.setFocus()
    view.moveCursor(view.textCursor().MoveOperation.End)
    view.paste()  # refused before Qt copies the text in (which would take seconds)
    qtbot.wait(200)
    qtbot.waitUntil(window.is_idle, timeout=10000)
    assert window.text() == "before the paste "
    assert "Nothing was pasted" in window.message.text() and "MB" in window.message.text()

    # the window still works: a normal paste goes in and is encoded
    QGuiApplication.clipboard().setText("and after it")
    view.paste()
    qtbot.waitUntil(window.is_idle, timeout=30000)
    assert window.text() == "before the paste and after it"
    assert list(window.registry.result(pane_of(window).tok).enc.ids) == load_tokenizer("cl100k_base").encode(
        window.text(), allowed_special="all"
    )


def test_a_big_drop_is_refused_too(window):
    data = QMimeData()
    data.setText(text_of_size(PASTE_LIMIT + (1 << 20)))
    pane_of(window).view.insertFromMimeData(data)
    assert window.text() == "before the paste "
    assert "Nothing was pasted" in window.message.text()


def test_a_paste_under_the_limit_goes_in(qtbot, window):
    text = text_of_size(1 << 20)
    QGuiApplication.clipboard().setText(text)
    view = pane_of(window).view
    view.moveCursor(view.textCursor().MoveOperation.End)
    view.paste()
    qtbot.waitUntil(window.is_idle, timeout=120000)
    assert window.text() == "before the paste " + text
    assert window.message.text() == ""
    enc = window.registry.result(pane_of(window).tok).enc
    assert len(enc.ids) == len(load_tokenizer("cl100k_base").encode_ordinary(window.text()))


def test_the_whole_text_is_capped(window, monkeypatch):
    from bpeinspect.gui.overlay import paste_guard

    monkeypatch.setattr(paste_guard, "TEXT_LIMIT", 10_000)  # the real one is 64 MB: too slow to fill here
    window.set_text("x" * 9000)
    data = QMimeData()
    data.setText("y" * 5000)
    pane_of(window).view.insertFromMimeData(data)
    assert "y" not in window.text()
    assert "would grow" in window.message.text()
    window.jobs.cancel_all()


def test_a_huge_text_file_is_not_opened(qtbot, window, tmp_path):
    path = tmp_path / "huge.txt"
    with open(path, "wb") as f:
        f.truncate(TEXT_LIMIT + 1)  # sparse: no need to write 64 MB
    window.open_text_file(str(path))
    qtbot.waitUntil(window.is_idle, timeout=10000)
    assert window.text() == "before the paste "
    assert "huge.txt" in window.message.text() and "bpeinspect-cli" in window.message.text()
