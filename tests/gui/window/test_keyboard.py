"""The keyboard: the focus starts in the text, Tab leaves the Tokens table, Ctrl+Tab leaves
the text (where Tab types a tab), and the focus chain goes through every pane."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.conftest import wait_idle


def _focus(win):
    return QApplication.focusWidget() or win.focusWidget()


def test_the_focus_starts_in_the_text_and_tab_goes_through_the_panes(qtbot, panel_window):
    win = panel_window
    win.activateWindow()
    win.open_tokenizer("cl100k_base")
    win.open_tokenizer("r50k_base")
    win.set_text("hello")
    wait_idle(qtbot, win)
    views = [p.view for p in win.panes.panes()]
    qtbot.waitUntil(lambda: _focus(win) in views, timeout=5000)  # the pane that came first
    first = _focus(win)
    second = next(v for v in views if v is not first)
    qtbot.keyClick(first, Qt.Key.Key_Tab)  # in the text, Tab types a tab
    assert win.text() == "\thello" and _focus(win) is first
    qtbot.keyClick(first, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert _focus(win) is not first and win.text() == "\thello"
    # the focus chain reaches the other pane and the Tokens table, and Tab leaves the table
    seen = []
    for _ in range(60):
        w = _focus(win)
        seen.append(w)
        qtbot.keyClick(
            w,
            Qt.Key.Key_Tab,
            Qt.KeyboardModifier.ControlModifier if w in (first, second) else Qt.KeyboardModifier.NoModifier,
        )
    table = win.panels.view("tokens").table
    assert second in seen and table in seen
    at = seen.index(table)
    assert seen[at + 1] is not table  # one Tab leaves it
