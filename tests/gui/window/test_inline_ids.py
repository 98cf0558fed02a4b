"""Inline token ids: text that comes in later keeps its size, a restart
keeps the zoom, and short tokens show their whole id."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from tests.gui.conftest import wait_idle


def _x_of_fifth_char(window, block=None) -> float:
    """Where the fifth character of the first line (of ``block``) starts, once it is laid out."""
    block = window.document.firstBlock() if block is None else block
    window.document.documentLayout().blockBoundingRect(block)  # lays the block out
    assert block.layout().lineCount() > 0
    return block.layout().lineAt(0).cursorToX(5)[0]


def _window(qtbot, settings):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=settings, panels=())
    qtbot.addWidget(win)
    win.show()
    return win


def test_text_opened_with_ids_on_keeps_its_size(qtbot, window, tmp_path):
    window.open_tokenizer("cl100k_base")
    window.set_text("hello world")
    wait_idle(qtbot, window)
    plain_x = _x_of_fifth_char(window)
    window.commands["view.layer.ids"].setChecked(True)
    big = "hello world, and more\n" * 2000  # goes in slices
    path = tmp_path / "t.txt"
    path.write_text(big, encoding="utf-8")
    window.open_text_file(str(path))
    qtbot.waitUntil(lambda: window.text() == big, timeout=20000)
    wait_idle(qtbot, window)
    assert abs(_x_of_fifth_char(window) - plain_x) < 1.0  # not 1.5x
    last = window.document.lastBlock().previous()
    assert abs(_x_of_fifth_char(window, last) - plain_x) < 1.0  # the last slice too
    window.set_text("hello again")
    assert abs(_x_of_fifth_char(window) - plain_x) < 1.0


def test_restart_with_ids_on_keeps_text_size_and_zoom(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    first = _window(qtbot, settings)
    first.set_text("hello world")
    plain_x = _x_of_fifth_char(first)
    first.commands["view.layer.ids"].setChecked(True)
    first.commands["view.zoom_in"].trigger()
    size = first.appearance.text_size
    first.close()
    second = _window(qtbot, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    assert second.appearance.layers.ids and second.appearance.text_size == size
    second.commands["view.zoom_out"].trigger()  # back to the size plain_x was measured at
    second.set_text("hello world")
    assert abs(_x_of_fifth_char(second) - plain_x) < 1.0
    second.commands["view.layer.ids"].setChecked(False)
    assert second.document.defaultFont().pointSizeF() == size - 1
    assert abs(_x_of_fifth_char(second) - plain_x) < 1.0


def test_short_tokens_show_whole_ids_that_do_not_overlap(qtbot, window, monkeypatch):
    from PySide6.QtGui import QPainter

    window.open_tokenizer("o200k_base")
    window.set_text("x*2+1 # a, b; c. 日本語 テスト\n    return x*2+1 # a, b; c.")
    wait_idle(qtbot, window)
    window.commands["view.layer.ids"].setChecked(True)
    drawn = []
    original = QPainter.drawText

    def record(painter, *args):
        if len(args) == 3 and isinstance(args[2], str):
            t = painter.transform()  # an id may be drawn narrowed (scaled) to fit its token
            box = t.mapRect(args[0])
            drawn.append((box.left(), box.top(), painter.fontMetrics().horizontalAdvance(args[2]) * t.m11(), args[2]))
        return original(painter, *args)

    monkeypatch.setattr(QPainter, "drawText", record)
    view = window.panes.panes()[0].view
    labels: list = []

    def painted() -> bool:  # once the new format is laid out
        drawn.clear()
        view.viewport().grab()  # paints it, shown or not
        labels[:] = [d for d in drawn if d[3].isdigit() or "…" in d[3]]
        return len(labels) >= 8

    qtbot.waitUntil(painted, timeout=10000)
    ids = {str(i) for i in window.registry.result(window.registry.current()).enc.ids}
    assert all(label in ids for *_, label in labels)  # whole ids, never "12…"
    for (x1, y1, w1, _), (x2, y2, _, _) in zip(labels, labels[1:]):
        assert y1 != y2 or x2 >= x1 + w1  # one after the other on a line


def test_ids_on_in_a_long_text_format_what_is_shown_first_then_the_rest_in_slices(qtbot, window):
    from PySide6.QtGui import QTextCharFormat, QTextCursor

    def raised(position: int) -> bool:
        cur = QTextCursor(window.document)
        cur.setPosition(position + 1)  # the format of the character before the cursor
        return cur.charFormat().verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript

    window.open_tokenizer("cl100k_base")
    line = "a line of the long text, with words\n"
    text = line * (1_000_000 // len(line))  # about a megabyte
    window.set_text(text)
    wait_idle(qtbot, window, timeout=60000)
    view = window.panes.panes()[0].view
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    qtbot.wait(20)
    top = view.firstVisibleBlock().position()
    window.commands["view.layer.ids"].setChecked(True)
    assert raised(top) and raised(top + 500)  # what the panes show, at once
    assert not raised(0) and window.live.is_formatting() and not window.is_idle()  # the rest, later
    wait_idle(qtbot, window, timeout=60000)
    assert all(raised(p) for p in (0, top - 1, len(text) - 1, len(text) // 4))
    window.commands["view.layer.ids"].setChecked(False)
    wait_idle(qtbot, window, timeout=60000)
    assert not any(raised(p) for p in (0, top, len(text) - 1))


def test_formatting_a_slice_lays_out_its_line_once_not_at_each_cursor_move(qtbot):
    """Giving the text a new format (ids on) moves a cursor to each end of every slice: Qt
    must not lay out the long lines it lands on, only to lay them out again once formatted."""
    from PySide6.QtGui import QTextCharFormat
    from PySide6.QtWidgets import QPlainTextDocumentLayout

    from bpeinspect.gui.window.document import FORMAT_SLICE, LiveDocument

    class CountingLayout(QPlainTextDocumentLayout):
        asked = 0

        def blockBoundingRect(self, block):
            CountingLayout.asked += 1
            return super().blockBoundingRect(block)

    live = LiveDocument()
    live.document.setDocumentLayout(CountingLayout(live.document))
    live.set_text("a long line of words " * (FORMAT_SLICE // 7) + "\n" + "and another one " * (FORMAT_SLICE // 5))
    qtbot.waitUntil(lambda: live.feed_left() == 0, timeout=20000)
    fmt = QTextCharFormat()
    fmt.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
    CountingLayout.asked = 0
    live.set_char_format(fmt)
    qtbot.waitUntil(lambda: not live.is_formatting(), timeout=20000)
    slices = -(-(live.document.characterCount() - 1) // FORMAT_SLICE)
    # Qt lays out again the line a slice lies in once it is formatted: that is all (each
    # cursor move used to lay out the line it landed on first)
    assert 0 < CountingLayout.asked <= slices
    block = live.document.lastBlock()
    assert block.begin().fragment().charFormat().verticalAlignment() == fmt.verticalAlignment()
