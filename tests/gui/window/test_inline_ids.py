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


def _raised(window, position: int) -> bool:
    """Whether the line at ``position`` is laid out raised (above room for the ids)."""
    from PySide6.QtGui import QTextCharFormat

    block = window.document.findBlock(position)
    up = QTextCharFormat.VerticalAlignment.AlignSuperScript
    return any(r.format.verticalAlignment() == up for r in block.layout().formats())


def test_ids_on_in_a_long_text_format_what_is_shown_first_then_the_rest_in_slices(qtbot, window):
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
    assert _raised(window, top) and _raised(window, top + 500)  # what the panes show, at once
    assert not _raised(window, 0) and window.live.is_formatting() and not window.is_idle()  # the rest, later
    wait_idle(qtbot, window, timeout=60000)
    assert all(_raised(window, p) for p in (0, top - 1, len(text) - 1, len(text) // 4))
    window.commands["view.layer.ids"].setChecked(False)
    wait_idle(qtbot, window, timeout=60000)
    assert not any(_raised(window, p) for p in (0, top, len(text) - 1))


def test_ids_on_and_off_leave_the_undo_history_and_the_copied_text_alone(qtbot, window):
    from PySide6.QtGui import QGuiApplication

    window.open_tokenizer("cl100k_base")
    window.set_text("hello world\nsecond line\n")
    wait_idle(qtbot, window)
    view = window.panes.panes()[0].view
    view.setFocus()
    qtbot.keyClicks(view, "typed ")
    steps = window.document.availableUndoSteps()
    assert steps >= 1
    window.commands["view.layer.ids"].setChecked(True)
    wait_idle(qtbot, window)
    assert window.document.availableUndoSteps() == steps  # a look, not an edit
    assert _raised(window, 0) and _raised(window, len(window.text()) - 1)
    view.selectAll()
    view.copy()
    mime = QGuiApplication.clipboard().mimeData()
    assert "super" not in (mime.html() if mime.hasHtml() else "")
    window.document.undo()  # the typing goes: the lines stay raised
    qtbot.waitUntil(lambda: window.text() == "hello world\nsecond line\n")
    assert _raised(window, 0)
    window.commands["view.layer.ids"].setChecked(False)
    wait_idle(qtbot, window)
    assert not window.document.isUndoAvailable() and not _raised(window, 0)


def test_lines_typed_or_pasted_with_ids_on_are_raised_too(qtbot, window):
    from PySide6.QtGui import QTextCursor

    window.open_tokenizer("cl100k_base")
    window.set_text("first\n")
    wait_idle(qtbot, window)
    window.commands["view.layer.ids"].setChecked(True)
    wait_idle(qtbot, window)
    cur = QTextCursor(window.document)
    cur.movePosition(QTextCursor.MoveOperation.End)
    cur.insertText("typed\nand more\n" + "a pasted line\n" * 300)
    wait_idle(qtbot, window)
    assert window.document.blockCount() > 300
    assert all(_raised(window, window.document.findBlockByNumber(k).position()) for k in (0, 1, 2, 150, 301))


def test_ids_on_and_off_keep_the_document_font(qtbot, window):
    # a new default font makes Qt lay out every line of the text again at once
    window.set_text("hello world\n" * 50)
    wait_idle(qtbot, window)
    fonts: list = []
    window.document.contentsChanged.connect(lambda: fonts.append(window.document.defaultFont().pointSizeF()))
    size = window.document.defaultFont().pointSizeF()
    window.commands["view.layer.ids"].setChecked(True)
    wait_idle(qtbot, window)
    assert window.document.defaultFont().pointSizeF() == size and _raised(window, 0)
    window.commands["view.layer.ids"].setChecked(False)
    wait_idle(qtbot, window)
    assert window.document.defaultFont().pointSizeF() == size and not _raised(window, 0)
    assert set(fonts) <= {size}


def test_zoom_with_ids_on_resizes_the_text_and_its_room(qtbot, window):
    window.set_text("hello world\nsecond line\n")
    wait_idle(qtbot, window)
    window.commands["view.zoom_in"].trigger()
    window.commands["view.zoom_in"].trigger()
    plain_x = _x_of_fifth_char(window)
    plain_h = window.document.documentLayout().blockBoundingRect(window.document.firstBlock()).height()
    window.commands["view.zoom_out"].trigger()
    window.commands["view.zoom_out"].trigger()
    window.commands["view.layer.ids"].setChecked(True)
    wait_idle(qtbot, window)
    window.commands["view.zoom_in"].trigger()
    window.commands["view.zoom_in"].trigger()
    wait_idle(qtbot, window)
    assert abs(_x_of_fifth_char(window) - plain_x) < 1.0  # the zoomed size, not the old one
    raised_h = window.document.documentLayout().blockBoundingRect(window.document.firstBlock()).height()
    assert raised_h > plain_h * 1.3  # room for the ids below the zoomed text
