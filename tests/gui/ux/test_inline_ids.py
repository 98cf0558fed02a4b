"""With "Token ids inline" on, text must keep its size (a new text, a
restart) and every id must be drawn whole."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF

from bpeinspect.gui.overlay import token_view
from tests.gui.conftest import wait_idle
from tests.gui.window.test_settings import close, ini, make_window

TEXT = "hello world\nsecond line"


def _x_of_5th(win) -> float:
    layout = win.document.firstBlock().layout()
    assert layout.lineCount() > 0  # laid out by a pane
    return layout.lineAt(0).cursorToX(5)[0]


def test_a_text_set_while_ids_are_on_keeps_its_size(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text(TEXT)
    wait_idle(qtbot, window)
    plain_x = _x_of_5th(window)
    window.commands["view.layer.ids"].setChecked(True)
    window.set_text("hello world, again")  # a file opened with the ids on
    wait_idle(qtbot, window)
    qtbot.wait(10)
    assert _x_of_5th(window) == pytest.approx(plain_x, abs=1.0)  # not 1.5 times as wide
    cur = window.panes.panes()[0].view.textCursor()
    cur.insertText("typed ")  # typed text too
    qtbot.wait(10)
    assert _x_of_5th(window) == pytest.approx(plain_x, abs=1.0)


def test_a_restart_with_ids_on_keeps_the_text_size_and_zoom(qtbot, tmp_path):
    win = make_window(qtbot, ini(tmp_path))
    plain_size = win.appearance.text_size
    win.open_tokenizer("cl100k_base")
    win.set_text(TEXT)
    wait_idle(qtbot, win)
    plain_x = _x_of_5th(win)
    win.commands["view.layer.ids"].setChecked(True)
    win.commands["view.zoom_in"].trigger()
    close(qtbot, win)

    again = make_window(qtbot, ini(tmp_path))
    assert again.appearance.layers.ids
    assert again.appearance.text_size == plain_size + 1  # the zoom, not 1.5 times it
    again.open_tokenizer("cl100k_base")
    again.set_text(TEXT)
    wait_idle(qtbot, again)
    qtbot.wait(10)
    zoomed_x = _x_of_5th(again)
    assert plain_x < zoomed_x < plain_x * 1.25  # one point bigger, not 1.5 times
    again.commands["view.layer.ids"].setChecked(False)
    assert again.document.defaultFont().pointSizeF() == pytest.approx(plain_size + 1)
    close(qtbot, again)


def test_short_tokens_show_their_whole_id():
    font = QFont()
    font.setPointSizeF(7)
    fm = QFontMetricsF(font)
    digit = fm.horizontalAdvance("0")
    # three one-character tokens, each far narrower than its five-digit id, then a wide one
    rects = [QRectF(i * digit, 0, digit, 20) for i in range(3)] + [QRectF(3 * digit, 0, 20 * digit, 20)]
    labels = ["68301", "12345", "99999", "7"]
    placed = token_view.place_id_labels(fm, list(zip(rects, labels, strict=True)))
    assert [p.text for p in placed] == ["68301", "7"]  # never "683…" nor "…": the two that fit
    assert [p.index for p in placed] == [0, 3]  # the others are left out (hover and the ids strip show them)
    boxes = [p.box for p in placed]
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert a.right() <= b.left() + 0.01  # side by side, not over each other
    for p in placed:
        assert p.box.left() >= rects[p.index].left() - 0.01  # each starts under its own token


def test_the_view_draws_ids_through_place_id_labels(qtbot, window, monkeypatch):
    seen = []
    real = token_view.place_id_labels

    def spy(fm, items):
        seen.extend(label for _rect, label in items)
        return real(fm, items)

    monkeypatch.setattr(token_view, "place_id_labels", spy)
    window.open_tokenizer("cl100k_base")
    window.set_text("a b c 中文 🎉")
    window.commands["view.layer.ids"].setChecked(True)
    wait_idle(qtbot, window)
    view = window.panes.panes()[0].view
    view.viewport().grab()
    r = window.registry.result(window.registry.current())
    assert set(seen) >= {str(r.enc.id_at(i)) for i in range(len(r.enc))}


def test_ids_of_a_long_run_of_narrow_tokens_stay_under_their_tokens(qapp):
    """A CJK run is one character per token, each narrower than its six-digit id: ids laid one
    after another drifted right of their tokens (the 40th id stood under the 20th token). An id
    starts under its own token or is left out (hover and the ids strip show it)."""
    font = QFont()
    font.setPointSizeF(7)
    fm = QFontMetricsF(font)
    char = 2 * fm.horizontalAdvance("0")
    rects = [QRectF(i * char, 0, char, 20) for i in range(40)]
    labels = [str(150000 + i) for i in range(40)]
    placed = token_view.place_id_labels(fm, list(zip(rects, labels, strict=True)))
    assert placed[0].text == labels[0] and len(placed) >= 10  # every third or fourth token at least
    for label in placed:
        i = labels.index(label.text)  # whole, and its own token's
        assert rects[i].left() <= label.box.left() <= rects[i].left() + rects[i].width() / 2
    boxes = [p.box for p in placed]
    assert all(a.right() <= b.left() + 0.01 for a, b in zip(boxes, boxes[1:], strict=False))


def test_the_view_draws_cjk_ids_under_their_own_tokens(qtbot, window, monkeypatch):
    from PySide6.QtGui import QPainter, QTextCursor

    window.open_tokenizer("o200k_base")
    text = "中文：我能吞下玻璃而不伤身体。分词器把汉字切成字节。日本語：いろはにほへと ちりぬるを。" * 2
    window.set_text(text)
    window.commands["view.layer.ids"].setChecked(True)
    for _ in range(3):
        window.commands["view.zoom_in"].trigger()
    wait_idle(qtbot, window)
    drawn: list[tuple[float, float, str]] = []
    original = QPainter.drawText

    def record(painter, *args):
        if len(args) == 3 and isinstance(args[2], str) and args[2].isdigit():
            box = painter.transform().mapRect(args[0])
            drawn.append((box.left(), box.center().y(), args[2]))
        return original(painter, *args)

    monkeypatch.setattr(QPainter, "drawText", record)
    view = window.panes.panes()[0].view
    enc = window.registry.result(window.registry.current()).enc

    def x_at(pos: int) -> tuple[float, QRectF]:
        cur = QTextCursor(view.document())
        cur.setPosition(pos)
        r = view.cursorRect(cur)
        return r.left(), QRectF(r)

    def painted() -> bool:
        drawn.clear()
        view.viewport().grab()
        return len(drawn) >= 10

    qtbot.waitUntil(painted, timeout=10000)
    starts = {}
    for i in range(len(enc)):
        a, b = enc.utf16_starts[i], enc.utf16_ends[i]
        (xa, ra), (xb, rb) = x_at(a), x_at(b)
        xb = xb if rb.top() == ra.top() else view.viewport().width()  # the last token of a line
        last = xb if enc.splits_char(i) else xa + (xb - xa) / 2  # a split character's tokens share it
        starts.setdefault(str(enc.ids[i]), []).append((xa, max(last, xa + 2), ra))
    for x, y, label in drawn:
        spans = starts[label]  # the id of a token of the text, whole
        assert any(xa - 1.5 <= x <= last + 1.5 and r.top() <= y <= r.bottom() + 20 for xa, last, r in spans), (label, x)
