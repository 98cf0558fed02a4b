"""The overlay view: Qt positions, hit testing, tooltips, clicks, painting."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QTextCursor

from bpeinspect.core.encoding import split_groups
from bpeinspect.gui.overlay.palette import TokenPalette
from bpeinspect.gui.overlay.token_view import Layers, TokenView, token_tooltip

ASTRAL = "a😀b 日本語\n👩‍👩‍👧 x 🎉🎉\n\tΩmega 𝔘𝔫𝔦 <|endoftext|>\n"


def make_view(qtbot, tok, text):
    view = TokenView()
    qtbot.addWidget(view)
    view.resize(700, 300)
    view.setPlainText(text)
    view.show()
    qtbot.waitExposed(view)
    view.set_encoding(tok, tok.encode_with_offsets(view.text()))
    return view


def test_utf16_spans_select_the_token_text_in_qt(qtbot, cl100k):
    view = make_view(qtbot, cl100k, ASTRAL)
    enc = view.enc
    assert enc.text == ASTRAL
    doc = view.document()
    for i in range(len(enc.ids)):
        cur = QTextCursor(doc)
        cur.setPosition(enc.utf16_starts[i])
        cur.setPosition(enc.utf16_ends[i], QTextCursor.MoveMode.KeepAnchor)
        got = cur.selectedText().replace("\u2029", "\n")
        assert got == enc.text[enc.char_starts[i] : enc.char_ends[i]], i


def test_hit_testing_finds_every_token(qtbot, cl100k):
    view = make_view(qtbot, cl100k, ASTRAL)
    groups = {i: g for g in split_groups(view.enc) for i in range(g[0], g[1] + 1)}
    block = view.document().firstBlock()
    seen = set()
    while block.isValid():
        geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
        for i in view._token_range(block):
            for r in view._segments(block, geo, i):
                hit = view.token_at_point(QPointF(r.center()))
                assert hit is not None, i
                g = groups.get(i, (i, i))
                if r.width() > 4:  # wide enough to be told apart: exactly this token (or its group)
                    assert g[0] <= hit <= g[1], (i, hit)
                else:  # a sliver inside a glyph cluster: some token drawn right there
                    assert any(q.contains(r.center()) for q in view._segments(block, geo, hit)), (i, hit)
                seen.add(i)
        block = block.next()
    assert seen == set(range(len(view.enc.ids)))


def test_split_characters_are_grouped(cl100k):
    enc = cl100k.encode_with_offsets("x 🎉")
    groups = split_groups(enc)
    assert len(groups) == 1
    first, last = groups[0]
    assert b"".join(cl100k.token_bytes(t) for t in enc.ids[first : last + 1]) == " 🎉".encode()


def test_tooltip_tells_id_bytes_rank_parents_and_span(cl100k):
    enc = cl100k.encode_with_offsets("hello world")
    tip = token_tooltip(cl100k, enc, 1)
    tid = enc.ids[1]
    a, b = cl100k.merge_graph.parents(tid)
    assert f"<b>{tid}</b>" in tip
    assert "20 77 6f 72 6c 64" in tip and "(6 B)" in tip
    assert f"{a} " in tip and f"{b} " in tip
    assert "5–11" in tip
    assert "�" not in token_tooltip(cl100k, cl100k.encode_with_offsets("🎉"), 1)


def test_click_emits_token_index(qtbot, cl100k):
    view = make_view(qtbot, cl100k, "hello world again")
    block = view.document().firstBlock()
    geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
    r = view._segments(block, geo, 2)[0]
    with qtbot.waitSignal(view.tokenClicked) as sig:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=r.center().toPoint())
    assert sig.args == [2]
    assert view.selected == 2


def test_token_backgrounds_are_painted_in_palette_colours(qtbot, cl100k):
    view = make_view(qtbot, cl100k, "hello world again and again")
    view.set_layers(Layers(whitespace=False))
    img = view.viewport().grab().toImage()
    block = view.document().firstBlock()
    geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
    pal = TokenPalette()
    for i in range(len(view.enc.ids)):
        r = view._segments(block, geo, i)[0]
        px = img.pixelColor(int(r.left()) + 4, int(r.top()) + 2)
        want = pal.background(view.enc.ids[i])
        assert abs(px.red() - want.red()) + abs(px.green() - want.green()) + abs(px.blue() - want.blue()) < 30, i


def test_all_layers_paint_without_errors(qtbot, cl100k):
    view = make_view(qtbot, cl100k, ASTRAL * 3)
    view.set_layers(Layers(colors=True, whitespace=True, boundaries=True, ids=True, specials=True))
    view.select_token(3)
    view.set_token_palette(TokenPalette("colour-blind safe", dark=True))
    assert not view.viewport().grab().isNull()


def test_palette_is_stable_and_named():
    a, b = TokenPalette(), TokenPalette()
    assert all(a.background(i) == b.background(i) for i in range(500))
    assert len({a.background(i).name() for i in range(500)}) == len(a.colors)
    safe = TokenPalette("colour-blind safe")
    assert safe.background(7) == TokenPalette("colour-blind safe").background(7)


def test_hover_shows_tooltip_for_token(qtbot, cl100k):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    view = make_view(qtbot, cl100k, "hello world")
    block = view.document().firstBlock()
    geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
    r = view._segments(block, geo, 1)[0]
    pos = r.center().toPoint()
    view.event(QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
    assert QToolTip.isVisible()
    assert f"<b>{view.enc.ids[1]}</b>" in QToolTip.text()
    assert view.token_at_point(QPointF(690, 280)) is None  # empty space: no token, no tooltip


def test_selecting_a_token_repaints_the_old_and_new_outline_only(qtbot, cl100k):
    """A click repaints where the outline was and where it goes, not every visible line (on a
    big text, two panes' full repaints were a third of a click's time)."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QRegion

    text = "".join(f"line {n} with a few words to colour\n" for n in range(12))
    view = make_view(qtbot, cl100k, text)
    painted = QRegion()

    class Spy(QObject):
        def eventFilter(self, obj, e):
            nonlocal painted
            if e.type() == QEvent.Type.Paint:
                painted = painted.united(e.region())
            return False

    spy = Spy()
    view.viewport().installEventFilter(spy)

    def outline(i):  # the rectangles of token i, with the pen's width round them
        start = view.enc.utf16_starts[i]
        block = view.document().findBlock(start)
        geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
        return [r.adjusted(-1, -1, 1, 1).toAlignedRect() for r in view._segments(block, geo, i)]

    first, second = 3, view.enc.token_at_utf16(text.index("line 8") + 7)
    view.select_token(first, scroll=False)
    qtbot.wait(50)
    painted = QRegion()
    view.select_token(second, scroll=False)
    qtbot.waitUntil(lambda: not painted.isEmpty(), timeout=2000)
    qtbot.wait(50)
    for r in outline(first) + outline(second):
        assert QRegion(r).subtracted(painted).isEmpty(), r
    area = sum(r.width() * r.height() for r in painted)
    assert area < view.viewport().width() * view.viewport().height() / 4
    assert view.selected == second


def test_the_hover_card_goes_on_a_key_press_and_on_a_new_encoding(qtbot, cl100k):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QToolTip

    view = make_view(qtbot, cl100k, "hello world")

    def hover() -> None:
        block = view.document().firstBlock()
        geo = view.blockBoundingGeometry(block).translated(view.contentOffset())
        pos = view._segments(block, geo, 1)[0].center().toPoint()
        view.event(QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
        assert QToolTip.isVisible()

    hover()
    qtbot.keyClick(view, Qt.Key.Key_End)
    # Qt hides a card 300 ms after it is told to; left alone, it stays 10 s or more
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=5000)
    hover()
    view.setPlainText("another text altogether")  # replaced: the card spoke of a token gone
    view.set_encoding(cl100k, cl100k.encode_with_offsets(view.text()))
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=5000)


def test_panes_given_the_documents_new_font_do_not_lay_the_shared_text_out_again(qtbot):
    from PySide6.QtGui import QTextDocument
    from PySide6.QtWidgets import QPlainTextDocumentLayout

    doc = QTextDocument()
    doc.setDocumentLayout(QPlainTextDocumentLayout(doc))
    views = [TokenView() for _ in range(3)]
    for v in views:
        qtbot.addWidget(v)
        v.setDocument(doc)
        v.show()
    doc.setPlainText("a line\n" * 1000)
    font = doc.defaultFont()
    font.setPointSizeF(font.pointSizeF() + 2)
    doc.setDefaultFont(font)  # the one layout of the text in the new font
    layouts = []
    doc.documentLayout().update.connect(lambda *_: layouts.append(1))
    for v in views:
        v.setFont(font)
    assert not layouts
    assert all(v.font().pointSizeF() == font.pointSizeF() for v in views)
    other = doc.defaultFont()
    other.setPointSizeF(other.pointSizeF() + 3)
    views[0].setFont(other)  # a font the document has not: given to it, as Qt does
    assert doc.defaultFont().pointSizeF() == other.pointSizeF() and layouts
