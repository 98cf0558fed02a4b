"""Errors are kept apart from notices, and notices go away by themselves."""

from __future__ import annotations

from bpeinspect.gui import message_bar
from bpeinspect.gui.message_bar import MessageBar


def test_errors_and_notices_are_apart(qtbot):
    bar = MessageBar()
    qtbot.addWidget(bar)
    bar.show()
    bar.show_message("Exported the overlay to /tmp/o.html", error=False)
    bar.show_message("Could not open x.tiktoken: no such file", error=True)
    assert bar.error_text() == "Could not open x.tiktoken: no such file"
    assert bar.notice_text() == "Exported the overlay to /tmp/o.html"
    assert bar.errors.isVisible() and bar.notices.isVisible()
    assert bar.errors.styleSheet() != bar.notices.styleSheet()  # red and quiet, not one red pile


def test_notices_go_away_and_errors_stay(qtbot, monkeypatch):
    monkeypatch.setattr(message_bar, "NOTICE_MS", 50)
    monkeypatch.setattr(message_bar, "NOTICE_MS_PER_CHAR", 0)
    bar = MessageBar()
    qtbot.addWidget(bar)
    bar.show()
    bar.show_message("Saved", error=False)
    assert bar.notices.isVisible()
    qtbot.waitUntil(lambda: not bar.notices.isVisible(), timeout=2000)
    assert not bar.isVisible()  # nothing left: no empty strip takes room
    bar.show_message("broken", error=True)
    bar.show_message("Saved again", error=False)
    qtbot.waitUntil(lambda: not bar.notices.isVisible(), timeout=2000)
    qtbot.wait(100)
    assert bar.errors.isVisible() and bar.text() == "broken"  # an error stays until closed
