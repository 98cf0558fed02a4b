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


def test_a_text_file_is_read_in_small_parts_that_make_up_its_text(tmp_path) -> None:
    from bpeinspect.gui.window.document import normalize_newlines, read_text_parts

    text = "héllo wörld 🎉 日本語\r\nline\r\n" * 50 + "end\r"
    path = tmp_path / "t.txt"
    for data in (text.encode(), b"\xef\xbb\xbf" + text.encode()):
        path.write_bytes(data)
        for size in (1, 2, 3, 5, 7, 64, 1 << 20):
            parts, had_cr = read_text_parts(str(path), part=size)
            assert "".join(parts) == normalize_newlines(text) and had_cr, size
            # no part much longer than asked: each is decoded (and handed on) in a short call
            assert max(len(p.encode()) for p in parts) <= size + 8, size
    path.write_bytes(b"plain\nlines\n")
    assert read_text_parts(str(path), part=4) == (["plai", "n\nli", "nes\n"], False)
    path.write_bytes(b"")
    assert read_text_parts(str(path)) == ([], False)


def test_a_text_file_that_is_not_utf8_names_the_bad_byte_and_where(tmp_path) -> None:
    from bpeinspect.gui.window.document import read_text_parts

    path = tmp_path / "bad.txt"
    path.write_bytes("ok 🎉 ".encode() * 30 + b"\xff rest")
    for size in (3, 16, 1 << 20):
        with pytest.raises(ValueError, match=rf"bad.txt: not UTF-8 text \(byte {len('ok 🎉 '.encode()) * 30}: ff\)"):
            read_text_parts(str(path), part=size)


def test_a_big_selection_goes_out_without_laying_out_the_lines_it_is_cut_at(qtbot):
    # Qt lays out the line a cursor lands on when it moves outside an edit block, and its
    # plain-text layout then took time in proportion to the whole text: 100 ms at 10 MB
    from PySide6.QtGui import QTextCursor
    from PySide6.QtWidgets import QPlainTextDocumentLayout

    live = document.LiveDocument()
    laid_out = []

    class Layout(QPlainTextDocumentLayout):
        def blockBoundingRect(self, block):
            laid_out.append(block.blockNumber())
            return super().blockBoundingRect(block)

    live.document.setDocumentLayout(Layout(live.document))
    old = "an old line of text, to be replaced\n" * 30_000  # about a megabyte, 60 slices
    live.set_text(old)
    qtbot.waitUntil(lambda: not live.is_feeding(), timeout=60000)
    laid_out.clear()
    cur = QTextCursor(live.document)
    cur.select(QTextCursor.SelectionType.Document)
    live.insert_text(cur, "the new text\n")
    qtbot.waitUntil(lambda: not live.is_feeding(), timeout=60000)
    assert live.text() == "the new text\n"
    # no view shows it: no line needs a layout, but for the first, where the new text goes
    assert set(laid_out) <= {0}
    live.document.undo()  # still one step
    assert live.text() == old


class _Clock:
    """A clock that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_a_fed_slice_that_takes_longer_than_a_turn_makes_the_next_ones_smaller(qtbot, monkeypatch):
    # a slow slice (a loaded machine, slow change handlers) held the window for one long turn
    live = document.LiveDocument()
    added = []
    clock = _Clock(step=2 * document.FEED_BUDGET)  # every slice takes twice a turn's budget
    monkeypatch.setattr(document, "time", clock)
    text = "a line of text of forty characters here\n" * 10_000
    live.set_text(text)  # the slices go in from the next turn on
    live.document.contentsChange.connect(lambda pos, removed, add: added.append(add))
    qtbot.waitUntil(lambda: len(added) > 20, timeout=60000)
    # the first slice is a full one; each slow one shrinks the next, down to the smallest
    assert added[0] >= document.FEED_SLICE
    assert added[1] < added[0]
    assert max(added[10:]) <= document.MIN_FEED_SLICE + 40
    clock.step = 0.0  # the slices go in fast again: they grow back
    qtbot.waitUntil(lambda: not live.is_feeding(), timeout=60000)
    assert live.feed_slice == document.FEED_SLICE
    assert live.text() == text
