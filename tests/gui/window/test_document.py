"""A big paste is decoded off the GUI thread: Ctrl+V returns before the text goes in, the
panes are read-only meanwhile, and the text then goes in at the cursor, as one step to undo."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtGui import QGuiApplication

from bpeinspect.gui.window import document
from tests.gui.conftest import wait_idle

UNIT = "Pasted text — naïve café 日本語 👩‍💻 नमस्ते\r\n"


def test_a_big_paste_is_decoded_in_a_worker_and_goes_in_at_the_cursor(qtbot, window, monkeypatch):
    window.open_tokenizer("cl100k_base")
    window.set_text("before after")
    wait_idle(qtbot, window)
    big = UNIT * (3 * document.PASTE_ON_WORKER // len(UNIT.encode()))
    QGuiApplication.clipboard().setText(big)
    threads = []
    real = document.decode_paste
    monkeypatch.setattr(document, "decode_paste", lambda data: threads.append(threading.get_ident()) or real(data))
    view = window.panes.panes()[0].view
    cur = view.textCursor()
    cur.setPosition(len("before "))
    view.setTextCursor(cur)
    view.paste()
    assert window.text() == "before after" and view.isReadOnly()  # nothing yet: it is being read
    wait_idle(qtbot, window, timeout=60000)
    want = "before " + big.replace("\r\n", "\n") + "after"
    assert window.text() == want and not view.isReadOnly()
    assert threads and threading.get_ident() not in threads
    assert list(window.registry.result(window.registry.current()).enc.ids) == window.registry.current().encode(want)
    window.document.undo()  # one step
    assert window.text() == "before after"


def test_a_new_text_while_a_paste_is_read_wins(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("old")
    wait_idle(qtbot, window)
    QGuiApplication.clipboard().setText(UNIT * (3 * document.PASTE_ON_WORKER // len(UNIT.encode())))
    view = window.panes.panes()[0].view
    view.paste()
    window.set_text("new text")
    assert not view.isReadOnly()
    wait_idle(qtbot, window, timeout=60000)
    qtbot.wait(100)
    assert window.text() == "new text"


def test_a_small_paste_goes_in_at_once(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("ab")
    wait_idle(qtbot, window)
    QGuiApplication.clipboard().setText("x\r\ny")
    view = window.panes.panes()[0].view
    cur = view.textCursor()
    cur.setPosition(1)
    view.setTextCursor(cur)
    view.paste()
    assert window.text() == "ax\nyb"


def test_a_big_selection_replaced_goes_out_a_slice_per_turn_and_comes_back_in_one_undo(qtbot, window):
    from PySide6.QtGui import QTextCursor

    window.open_tokenizer("cl100k_base")
    old = "an old line of text, to be replaced\n" * 30_000  # about a megabyte
    window.set_text("before\n" + old + "after")
    wait_idle(qtbot, window, timeout=60000)
    cur = QTextCursor(window.document)
    cur.setPosition(len("before\n"))
    cur.setPosition(len("before\n") + len(old), QTextCursor.MoveMode.KeepAnchor)
    window.live.insert_text(cur, "the new text\n")
    assert len(window.text()) > len(old) // 2  # not all of it at once
    assert window.live.is_feeding() and window.panes.panes()[0].view.isReadOnly()
    wait_idle(qtbot, window, timeout=60000)
    want = "before\nthe new text\nafter"
    assert window.text() == want and not window.panes.panes()[0].view.isReadOnly()
    assert list(window.registry.result(window.registry.current()).enc.ids) == window.registry.current().encode(want)
    window.document.undo()  # one step
    assert window.text() == "before\n" + old + "after"


# lines, and one long line (12 slices of it: Qt lays out one long line slowly)
@pytest.mark.parametrize(
    "old", ["emoji 👩‍💻 and 😀 in every line\n" * 13_333, "😀" * 100_000], ids=["lines", "one-long-line"]
)
def test_a_big_selection_goes_out_in_slices_that_never_split_a_character(qtbot, window, monkeypatch, old):
    from PySide6.QtGui import QTextCursor

    window.set_text("before\n" + old + "after")
    wait_idle(qtbot, window, timeout=60000)
    reads = []
    monkeypatch.setattr(document, "document_text", lambda doc: reads.append(1) or "")  # the whole text read back
    cur = QTextCursor(window.document)
    cur.setPosition(len("before\n"))
    cur.setPosition(len("before\n") + len(old.encode("utf-16-le")) // 2, QTextCursor.MoveMode.KeepAnchor)
    window.live.insert_text(cur, "new\n")
    wait_idle(qtbot, window, timeout=60000)
    assert not reads  # each slice's change was followed as an edit
    assert window.text() == "before\nnew\nafter"
