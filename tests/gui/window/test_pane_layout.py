"""The panes share one layout of the text: panes that come and go do not lay it out again."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent

from tests.gui.conftest import wait_idle

WIDE = 50  # lines long enough to wrap, at the top
LONG_AT = WIDE + 10_000  # a wrapping line far below what any pane shows


def _text() -> str:
    return ("word " * 300 + "\n") * WIDE + "short\n" * 10_000 + "far " * 400 + "\n" + "short\n" * 10_000


def _far_lines(window) -> int:
    """Lines of the far wrapping line as laid out now (0 once a new layout has cleared it)."""
    return window.document.findBlockByNumber(LONG_AT).layout().lineCount()


def test_closing_and_opening_panes_keeps_the_text_laid_out(qtbot, window):
    window.resize(1000, 700)
    window.set_text(_text())
    for name in ("r50k_base", "p50k_base"):
        window.open_tokenizer(name)
    wait_idle(qtbot, window)
    layout = window.document.documentLayout()
    layout.blockBoundingRect(window.document.findBlockByNumber(LONG_AT))  # lay the far line out
    assert _far_lines(window) > 1
    # whichever view Qt took its wrapping width from goes at some point: the panes come back
    for name in ("p50k_base", "r50k_base"):
        pane = next(p for p in window.panes.panes() if p.tok.name == name)
        window.registry.remove(pane.tok)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        window.open_tokenizer(name)
        qtbot.waitUntil(lambda n=name: any(p.tok.name == n for p in window.panes.panes()), timeout=30_000)
        wait_idle(qtbot, window)
        assert _far_lines(window) > 1, f"the text was laid out again when {name}'s pane came back"


def test_panes_wrap_the_text_at_their_own_width_as_the_window_changes(qtbot, window):
    window.resize(1000, 700)
    window.set_text(_text())
    window.open_tokenizer("r50k_base")
    window.open_tokenizer("p50k_base")
    wait_idle(qtbot, window)
    first = window.document.firstBlock()
    layout = window.document.documentLayout()
    for width in (700, 1200, 900):
        window.resize(width, 700)
        qtbot.wait(20)
        layout.blockBoundingRect(first)
        lines = [first.layout().lineAt(i).naturalTextWidth() for i in range(first.layout().lineCount())]
        for pane in window.panes.panes():
            room = pane.view.viewport().width()
            assert max(lines) <= room  # nothing runs past a pane's edge
            assert max(lines) > room - 60  # and the lines use the pane's width (a word is 32 px)
