"""Text whose bytes have no token (Falcon, StarCoder, …) is marked in the overlay."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.gui.overlay.marks import cell_rect
from bpeinspect.gui.overlay.token_view import TokenView, dropped_tooltip
from tests.conformance.sources import VOCABS
from tests.gui.overlay.test_token_view import make_view


def no_byte_3() -> Tokenizer:
    return Tokenizer({bytes([b]): b for b in range(256) if b != 3}, pattern="gpt2", name="no-03")


def falcon() -> Tokenizer:
    """Falcon's real vocabulary (llama.cpp's GGUF), from the conformance cache; skipped if it cannot be fetched."""
    from tests.conformance.conftest import vocab_file

    return load_tokenizer(str(vocab_file(next(v for v in VOCABS if v.id == "gguf-falcon"))))


def cell_of(view: TokenView, start: int, end: int) -> QRectF:
    block = view.document().findBlock(start)
    geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
    cell = cell_rect(block, geo, start - block.position(), end - block.position(), 100)
    assert cell is not None
    return cell


def dropped_pixels(view: TokenView, rect: QRectF) -> int:
    img = view.viewport().grab().toImage()
    want = view.palette_.dropped
    n = 0
    for x in range(int(rect.left()), int(rect.right()) + 1):
        for y in range(int(rect.top()), int(rect.bottom()) + 1):
            c = QColor(img.pixel(x, y))
            if abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 60:
                n += 1
    return n


def test_dropped_characters_are_marked_with_a_tooltip(qtbot):
    tok = no_byte_3()
    text = "😀 a\x03b \x03\n"
    view = make_view(qtbot, tok, text)
    assert view.enc.dropped == [(3, 4), (6, 7)]  # code points
    assert view.dropped_spans() == [(4, 5), (7, 8)]  # UTF-16: the emoji counts two
    cell = cell_of(view, 4, 5)
    assert dropped_pixels(view, cell) > 10
    assert dropped_pixels(view, cell_of(view, 3, 4)) == 0  # "a" is a token: no mark
    assert view.dropped_at_point(QPointF(cell.center())) == (4, 5)
    assert view.token_at_point(QPointF(cell.center())) is None
    tip = dropped_tooltip(tok, view._utf16_text(4, 5))
    assert "U+0003" in tip and "single byte <code>03</code>" in tip and "no-03" in tip


def test_no_mark_without_dropped_bytes(qtbot):
    view = make_view(qtbot, load_tokenizer("cl100k_base"), "a\x03b")
    assert view.enc.dropped == [] and view.dropped_spans() == []
    assert dropped_pixels(view, cell_of(view, 1, 2)) == 0


def test_falcon_drops_control_bytes_and_says_which(qtbot):
    tok = falcon()
    assert 0x03 in tok.missing_bytes and 0xC0 in tok.missing_bytes
    view = make_view(qtbot, tok, "def f():\n\treturn '\x03\x04'  # 世界\n")
    spans = view.dropped_spans()
    assert len(spans) == 2
    for a, b in spans:
        assert view._utf16_text(a, b) in ("\x03", "\x04")
        assert dropped_pixels(view, cell_of(view, a, b)) > 10
    tip = dropped_tooltip(tok, "\x03\x04")
    assert "Falcon" in tip and "single bytes <code>03 04</code>" in tip


def test_the_vocabulary_view_names_falcons_missing_bytes(qtbot):
    from bpeinspect.gui.panels.vocabulary import VocabBrowser
    from tests.gui.conftest import wait_jobs

    tok = falcon()
    w = VocabBrowser()
    qtbot.addWidget(w)
    w.set_tokenizer(tok)
    wait_jobs(qtbot, w.jobs)
    assert f"no token for {len(tok.missing_bytes)} single bytes (03 04 05 0b" in w.status.text()
    assert "03 04 05 0b 11 13 14 15 16 17 19 1c 1d 1e c0 c1 f2 f5" in w.status.toolTip()  # all of them
