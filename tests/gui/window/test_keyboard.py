"""The keyboard: the focus starts in the text, Tab leaves the Tokens table, Ctrl+Tab leaves
the text (where Tab types a tab), and the focus chain goes through every pane."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollArea

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


def _dock_of(widget):
    from PySide6.QtWidgets import QDockWidget

    while widget is not None and not isinstance(widget, QDockWidget):
        widget = widget.parentWidget()
    return widget


def _tab_round(qtbot, win, start, presses=300):
    """The widgets Tab visits from ``start`` (Ctrl+Tab in a text), up to its return to ``start``."""
    from bpeinspect.gui.overlay.token_view import TokenView

    seen = []
    w = start
    for _ in range(presses):
        modifier = Qt.KeyboardModifier.ControlModifier if isinstance(w, TokenView) else Qt.KeyboardModifier.NoModifier
        qtbot.keyClick(w, Qt.Key.Key_Tab, modifier)
        w = _focus(win)
        if w is start:
            return seen
        seen.append(w)
    raise AssertionError(f"Tab did not come back to the text; it stayed in {[type(x).__name__ for x in seen[-3:]]}")


@pytest.mark.parametrize("front", ["vocab", "replay"])
def test_tab_goes_round_the_window_through_the_docks_in_front_and_skips_those_behind(qtbot, panel_window, front):
    win = panel_window
    win.activateWindow()
    win.open_tokenizer("cl100k_base")
    win.set_text("hello tokenization")
    wait_idle(qtbot, win)
    win.panels.show(front)  # a table of its own in front of the Tokens tab
    qtbot.wait(50)
    text = win.panes.panes()[0].view
    text.setFocus()
    qtbot.waitUntil(lambda: _focus(win) is text, timeout=5000)
    seen = _tab_round(qtbot, win, text)  # it comes back: no table keeps the Tab key
    docks = {_dock_of(w) for w in seen} - {None}
    assert win.panels.docks[front] in docks
    behind = [d for d in docks if d.visibleRegion().isEmpty()]
    assert not behind, f"Tab went into docks not in sight: {[d.windowTitle() for d in behind]}"
    assert any(win.ids.isAncestorOf(w) for w in seen)  # and through the ids below the text


@pytest.mark.parametrize("key", ["training", "chat", "languages"])
def test_a_panel_opened_from_its_menu_entry_takes_the_keyboard_focus(qtbot, panel_window, key):
    """Opened with its shortcut, a panel (docked, or a window of its own beside the main one)
    was out of the reach of Tab: the focus stayed in the text."""
    win = panel_window
    win.activateWindow()
    win.open_tokenizer("cl100k_base")
    win.set_text("hello")
    wait_idle(qtbot, win)
    text = win.panes.panes()[0].view
    qtbot.waitUntil(lambda: _focus(win) is text, timeout=5000)
    win.commands[f"panels.{key}"].trigger()
    view = win.panels.view(key)
    qtbot.waitUntil(lambda: view is not None and view.isAncestorOf(_focus(win) or win), timeout=5000)
    assert _focus(win).isVisible() and not isinstance(_focus(win), QScrollArea)  # a control, not a frame


def test_tab_never_lands_on_the_scroll_arrows_of_the_dock_tab_bars(qtbot, panel_window):
    from PySide6.QtWidgets import QTabBar, QToolButton

    win = panel_window
    win.resize(1024, 700)
    win.activateWindow()
    win.open_tokenizer("cl100k_base")
    win.set_text("hello")
    wait_idle(qtbot, win)
    win.panels.show("vocab")
    win.panels.show("tokens")
    qtbot.wait(50)  # the window fits the docks to their tabs; then the user narrows them
    dock = win.panels.docks["tokens"]
    win.resizeDocks([dock], [220], Qt.Orientation.Horizontal)  # a narrow side dock
    bars = [bar for bar in win.findChildren(QTabBar) if bar.parent() is win and bar.isVisible()]
    for bar in bars:  # whole titles: its tabs scroll (they are shortened first, to a few letters)
        bar.setElideMode(Qt.TextElideMode.ElideNone)
    qtbot.wait(50)
    arrows = [a for bar in bars for a in bar.findChildren(QToolButton)]
    assert any(a.isVisible() for a in arrows)  # the side docks' tabs scroll in this window
    text = win.panes.panes()[0].view
    text.setFocus()
    qtbot.waitUntil(lambda: _focus(win) is text, timeout=5000)
    seen = _tab_round(qtbot, win, text)
    assert not [w for w in seen if w in arrows]
    assert all(a.focusPolicy() == Qt.FocusPolicy.NoFocus for a in arrows)
