"""A text laid out right to left (Arabic, Hebrew) keeps its tokens over its words and its line breaks on the left."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bpeinspect.gui.overlay.token_view import TokenView

ARABIC = "لكل شخص الحق في التعليم\nسلام"


def test_line_breaks_sit_where_right_to_left_lines_end(qtbot, cl100k):
    view = TokenView()
    qtbot.addWidget(view)
    view.resize(500, 200)
    opt = view.document().defaultTextOption()
    opt.setTextDirection(Qt.LayoutDirection.RightToLeft)
    opt.setAlignment(Qt.AlignmentFlag.AlignRight)
    view.document().setDefaultTextOption(opt)
    view.setPlainText(ARABIC)
    view.show()
    qtbot.waitExposed(view)
    view.set_encoding(cl100k, cl100k.encode_with_offsets(view.text()))
    block = view.document().firstBlock()
    geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
    segments = {i: view._segments(block, geo, i) for i in view._token_range(block)}
    enc = view.enc
    newline = next(i for i in segments if view.text()[enc.char_starts[i] : enc.char_ends[i]].endswith("\n"))
    words = [r for i, rects in segments.items() if i != newline for r in rects]
    assert min(r.left() for r in words) > view.viewport().width() / 3  # the words are on the right
    gap = min(r.left() for r in words) - max(r.right() for r in segments[newline])
    assert -1 <= gap <= 3  # the line break just left of the words, where the line ends
    for i, rects in segments.items():  # each token over its own text, however Qt orders the words
        assert rects and all(r.width() > 1 for r in rects), i
    view.grab()  # paints without error
