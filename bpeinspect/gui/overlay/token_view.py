"""The text editor that draws an :class:`~bpeinspect.core.Encoding` over its text.

Nothing is written into the document: token backgrounds, whitespace glyphs, pre-token
boundaries and id labels are painted for the visible lines only, straight from the
encoding's UTF-16 spans (Qt's positions). So a 1 MB text costs no more to draw than a
page, copy and paste give the real text, and positions stay true.

>>> view = TokenView()            # doctest: +SKIP
>>> view.set_encoding(tok, tok.encode_with_offsets(view.text()))  # doctest: +SKIP
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPen,
    QStaticText,
    QTextBlock,
    QTextCursor,
    QTextLine,
)
from PySide6.QtWidgets import QPlainTextEdit, QToolTip, QWidget

from bpeinspect.core import Encoding, Tokenizer
from bpeinspect.core.encoding import SPECIAL, SPLITS_CHAR
from bpeinspect.core.live_text import LiveEncoding, Part
from bpeinspect.core.text import SYMBOLS, utf16_len
from bpeinspect.gui.overlay.glyphs import (
    CodePointSpacer,
    box_width,
    coverage_for,
    missing_positions,
    paint_code_point,
)
from bpeinspect.gui.overlay.palette import TokenPalette
from bpeinspect.gui.overlay.tooltips import byte_fractions, dropped_tooltip, group_around, token_tooltip

GLYPHS = {ch: SYMBOLS[ch] for ch in (" ", "\t", "\u00a0")}  # drawn over the blank they stand for
NEWLINE_GLYPH = SYMBOLS["\n"]


@dataclass
class Layers:
    """Which overlays are drawn."""

    colors: bool = True
    whitespace: bool = True
    boundaries: bool = False
    ids: bool = False
    specials: bool = True


def document_text(doc) -> str:
    """The document's text exactly as typed (``toPlainText`` would turn NBSP into spaces)."""
    return doc.toRawText().replace("\u2029", "\n")


class WholeEncoding:
    """A plain :class:`Encoding` read the way a :class:`LiveEncoding` is: one part."""

    def __init__(self, enc: Encoding) -> None:
        self.whole = enc

    def __len__(self) -> int:
        return len(self.whole.ids)

    def part_at_u16(self, _pos: int) -> Part:
        return Part(self.whole)

    def parts(self) -> Iterator[Part]:
        yield Part(self.whole)

    def part_of_token(self, i: int) -> Part | None:
        return Part(self.whole) if 0 <= i < len(self.whole.ids) else None

    def token_at_utf16(self, pos: int) -> int | None:
        return self.whole.token_at_utf16(pos)

    def utf16_span(self, i: int) -> tuple[int, int]:
        return self.whole.utf16_starts[i], self.whole.utf16_ends[i]


def as_parts(enc: Encoding | LiveEncoding | None) -> LiveEncoding | WholeEncoding | None:
    return enc if enc is None or isinstance(enc, LiveEncoding) else WholeEncoding(enc)


class TokenView(QPlainTextEdit):
    """A :class:`QPlainTextEdit` with token overlays; several views may share one document."""

    tokenClicked = Signal(int)  # token index in the current encoding
    zoomRequested = Signal(int)  # +1 / -1: Ctrl+wheel, handled by the window for every pane

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tok: Tokenizer | None = None
        self.enc: Encoding | LiveEncoding | None = None  # what was set; drawn through self.parts
        self.parts: LiveEncoding | WholeEncoding | None = None
        self.layers = Layers()
        self.palette_ = TokenPalette()
        self.selected: int | None = None
        self._glyph_cache: dict[tuple[str, str], QStaticText] = {}
        self.text_scale = 1.0  # text is drawn this much smaller than the font (2/3 with inline ids)
        self._press_pos = None
        # inserts pasted or dropped text in place of the cursor's selection (set by the window)
        self.insert_text: Callable[[QTextCursor, str], None] | None = None
        self.setMouseTracking(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabStopDistance(4 * QFontMetricsF(self.font()).horizontalAdvance(" "))

    def insertFromMimeData(self, source) -> None:
        from bpeinspect.gui.overlay.paste_guard import allow_paste  # a 100 MB paste would not fit

        if not allow_paste(self, source):
            return
        if self.insert_text is None or not source.hasText():
            super().insertFromMimeData(source)
            return
        # the window's document puts a big text in a slice per turn (Qt would hold the loop)
        self.insert_text(self.textCursor(), source.text())
        self.ensureCursorVisible()

    # -- state ------------------------------------------------------------------------------------

    def text(self) -> str:
        return document_text(self.document())

    def group_of(self, i: int) -> tuple[int, int] | None:
        """The run ``(first, last)`` of tokens sharing characters with token ``i``, or ``None``.

        Worked out on demand from the neighbours, so a new encoding needs no table."""
        p = self.parts.part_of_token(i) if self.parts is not None else None
        if p is None:
            return None
        g = _group(p.enc, i - p.token)
        return None if g is None else (g[0] + p.token, g[1] + p.token)

    def set_encoding(
        self,
        tok: Tokenizer | None,
        enc: Encoding | LiveEncoding | None,
        *,
        changed: tuple[int, int] | None = None,
    ) -> None:
        """Show ``enc`` (an encoding of this view's text by ``tok``, whole or kept in
        segments); ``changed`` is the UTF-16 range that differs from the encoding shown
        before (``None``: repaint everything)."""
        self.tok, self.enc = tok, enc
        if self.parts is None or self.parts is not enc and getattr(self.parts, "whole", None) is not enc:
            self.parts = as_parts(enc)
        if self.selected is not None and (enc is None or self.selected >= len(self.parts)):
            self.selected = None
        if changed is None:
            self.viewport().update()
        else:  # only the re-encoded lines look different (Qt repaints lines that moved)
            self._update_range(*changed)

    def _update_range(self, start: int, end: int) -> None:
        doc = self.document()
        first = doc.findBlock(start)
        last = doc.findBlock(max(start, end - 1))
        if not first.isValid() or not last.isValid():
            self.viewport().update()
            return
        offset = self.contentOffset()
        top = self.blockBoundingGeometry(first).translated(offset).top()
        bottom = self.blockBoundingGeometry(last).translated(offset).bottom()
        self.viewport().update(0, int(top) - 1, self.viewport().width(), int(bottom - top) + 3)

    def set_layers(self, layers: Layers) -> None:
        self.layers = layers
        self.viewport().update()

    def set_token_palette(self, palette: TokenPalette) -> None:
        self.palette_ = palette
        self.viewport().update()

    def select_token(self, index: int | None, *, scroll: bool = True) -> None:
        """Outline token ``index`` (and scroll to it)."""
        self.selected = index
        if index is not None and self.parts is not None and 0 <= index < len(self.parts) and scroll:
            cur = self.textCursor()
            cur.setPosition(min(self.parts.utf16_span(index)[0], self.document().characterCount() - 1))
            self.setTextCursor(cur)
            self.ensureCursorVisible()
        self.viewport().update()

    def token_at_point(self, point: QPointF) -> int | None:
        """Index of the token under a viewport point, if any."""
        if self.parts is None:
            return None
        pos = self._position_at(point)
        if pos is None:
            return None
        block = self.document().findBlock(pos)
        p = self.parts.part_at_u16(block.position())
        if p is None:
            return None
        enc, base = p.enc, p.u16
        found = enc.token_at_utf16(pos - base)
        if found is None:
            return None
        # a character or grapheme cluster shared by several tokens: pick the one drawn there
        layout = block.layout()
        rel = pos - block.position()
        lo, hi = rel, rel + 1
        while lo > 0 and not layout.isValidCursorPosition(lo):
            lo -= 1
        while hi < block.length() - 1 and not layout.isValidCursorPosition(hi):
            hi += 1
        first = bisect.bisect_right(enc.utf16_ends, block.position() + lo - base)
        last = bisect.bisect_left(enc.utf16_starts, block.position() + hi - base)
        if last - first > 1:
            geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
            lg = _LineGeometry(block, self._newline_width())
            # slivers are drawn at least 2 px wide and may overlap: take the nearest centre
            hits = [
                (abs(r.center().x() - point.x()), i)
                for i in range(first, last)
                for r in self._rects(p, block, geo, i, lg)
                if r.contains(point)
            ]
            if hits:
                return p.token + min(hits)[1]
        return p.token + found

    def dropped_spans(self) -> list[tuple[int, int]]:
        """UTF-16 spans of the characters whose bytes have no token (dropped by the encoding)."""
        if self.parts is None:
            return []
        return [span for p in self.parts.parts() for span in _dropped_in(p)]

    def dropped_at_point(self, point: QPointF) -> tuple[int, int] | None:
        """The UTF-16 span of the dropped character(s) under a viewport point, if any."""
        if self.parts is None:
            return None
        pos = self._position_at(point)
        p = self.parts.part_at_u16(pos) if pos is not None else None
        spans = _dropped_in(p) if p is not None else []
        k = bisect.bisect_right(spans, (pos, float("inf"))) - 1
        return spans[k] if k >= 0 and spans[k][0] <= pos < spans[k][1] else None  # type: ignore[operator]

    def _position_at(self, point: QPointF) -> int | None:
        block = self.cursorForPosition(point.toPoint()).block()
        if not block.isValid():
            return None
        geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
        layout = block.layout()
        y = point.y() - geo.top()
        for li in range(layout.lineCount()):
            line = layout.lineAt(li)
            if line.y() <= y < line.y() + line.height():
                x = point.x() - geo.left()
                end = line.textStart() + line.textLength()
                right = line.x() + line.naturalTextWidth()
                if x > right + self._newline_width():
                    return None
                if x > right:
                    # past the text: the line break (or nothing, for a wrapped line)
                    return block.position() + end if end == block.length() - 1 else None
                rel = line.xToCursor(x, QTextLine.CursorPosition.CursorOnCharacter)
                return block.position() + min(rel, max(end - 1, line.textStart()))
        return None

    # -- events -----------------------------------------------------------------------------------

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            i = self.token_at_point(QPointF(e.pos()))
            p = self.parts.part_of_token(i) if i is not None and self.parts is not None else None
            dropped = self.dropped_at_point(QPointF(e.pos())) if i is None else None
            if dropped is not None and self.tok is not None:
                QToolTip.showText(e.globalPos(), dropped_tooltip(self.tok, self._utf16_text(*dropped)), self)
            elif p is None or self.tok is None:
                QToolTip.hideText()
            else:
                j = i - p.token
                tip = token_tooltip(self.tok, p.enc, j, _group(p.enc, j), at=p, total=len(self.parts))
                QToolTip.showText(e.globalPos(), tip, self)
            return True
        return super().event(e)

    def wheelEvent(self, e) -> None:
        if e.modifiers() & Qt.KeyboardModifier.ControlModifier:
            delta = e.angleDelta().y()
            if delta:
                self.zoomRequested.emit(1 if delta > 0 else -1)
            e.accept()
            return
        super().wheelEvent(e)

    def mousePressEvent(self, e) -> None:
        self._press_pos = e.position()
        super().mousePressEvent(e)

    def mouseReleaseEvent(self, e) -> None:
        super().mouseReleaseEvent(e)
        if (
            e.button() == Qt.MouseButton.LeftButton
            and self._press_pos is not None
            and (e.position() - self._press_pos).manhattanLength() < 4
        ):
            i = self.token_at_point(e.position())
            if i is not None:
                self.selected = i
                self.viewport().update()
                self.tokenClicked.emit(i)
        self._press_pos = None

    # -- painting ---------------------------------------------------------------------------------

    def glyph_font(self) -> QFont:
        """The font the text is drawn in (the widget font, unless ids make room below it)."""
        font = QFont(self.font())
        if self.text_scale != 1.0:
            font.setPointSizeF(font.pointSizeF() * self.text_scale)
        return font

    def _newline_width(self) -> float:
        return QFontMetricsF(self.glyph_font()).horizontalAdvance(NEWLINE_GLYPH) + 2

    def paintEvent(self, e) -> None:
        blocks = list(self._visible_blocks(e.rect()))
        drawn = []  # (part, [(token index in the part, rectangles)]) per visible block
        if self.parts is not None:
            nl = self._newline_width()
            for block, geo in blocks:
                p = self.parts.part_at_u16(block.position())
                if p is not None and p.enc.ids:
                    lg = _LineGeometry(block, nl)
                    drawn.append((p, [(i, self._rects(p, block, geo, i, lg)) for i in self._local_range(p, block)]))
        if drawn and self.layers.colors:
            p = QPainter(self.viewport())
            try:
                p.setRenderHint(QPainter.RenderHint.Antialiasing)
                for part, items in drawn:
                    self._paint_tokens(p, part.enc, items)
            finally:
                p.end()
        super().paintEvent(e)
        p = QPainter(self.viewport())
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            if self.layers.whitespace:
                for block, geo in blocks:
                    self._paint_whitespace(p, block, geo)
            self._paint_code_points(p, blocks)
            if self.parts is not None:
                self._paint_dropped(p, blocks)
            for part, items in drawn:
                self._paint_marks(p, part, items)
        finally:
            p.end()

    def _visible_blocks(self, rect):
        block = self.firstVisibleBlock()
        offset = self.contentOffset()
        while block.isValid():
            geo = self.blockBoundingGeometry(block).translated(offset)
            if geo.top() > rect.bottom():
                break
            if block.isVisible() and geo.bottom() >= rect.top():
                yield block, geo
            block = block.next()

    def _local_range(self, p: Part, block: QTextBlock) -> range:
        """The tokens of part ``p`` in ``block`` (indices into ``p.enc``)."""
        enc = p.enc
        start = block.position() - p.u16
        end = start + block.length()  # includes the line break
        return range(bisect.bisect_right(enc.utf16_ends, start), bisect.bisect_left(enc.utf16_starts, end))

    def _token_range(self, block: QTextBlock) -> range:
        """The tokens in ``block`` (indices into the whole encoding)."""
        p = self.parts.part_at_u16(block.position()) if self.parts is not None else None
        if p is None:
            return range(0)
        r = self._local_range(p, block)
        return range(r.start + p.token, r.stop + p.token)

    def _segments(self, block: QTextBlock, geo: QRectF, i: int) -> list[QRectF]:
        """Rectangles covering token ``i`` (of the whole encoding) inside ``block``, one per line."""
        p = self.parts.part_of_token(i) if self.parts is not None else None
        if p is None:
            return []
        return self._rects(p, block, geo, i - p.token, _LineGeometry(block, self._newline_width()))

    def _rects(self, p: Part, block: QTextBlock, geo: QRectF, i: int, lg: _LineGeometry) -> list[QRectF]:
        """Rectangles covering token ``i`` of part ``p`` inside ``block`` (one per line it touches)."""
        enc = p.enc
        bpos = block.position() - p.u16
        blen = lg.blen
        s, e = enc.utf16_starts[i] - bpos, enc.utf16_ends[i] - bpos
        frac = None
        if enc.flags[i] & SPLITS_CHAR:
            group = _group(enc, i)
            if group is not None:
                frac = byte_fractions(enc, i, group[0])
        out = []
        nlines = len(lg.lines)
        li = max(0, bisect.bisect_right(lg.starts, max(s, 0)) - 1)
        while li < nlines:
            line = lg.lines[li]
            ls, le = lg.starts[li], lg.ends[li]
            if ls >= e and not (li == nlines - 1 and s >= blen):
                break
            last_line = li == nlines - 1
            li += 1
            if e <= ls or (s >= le and not (last_line and s >= blen)):
                continue
            a, b = max(s, ls), min(e, le)
            # inside a grapheme cluster (a ZWJ emoji, a combining mark) Qt has no cursor
            # positions: draw the token on its share of the whole cluster
            a2, b2 = a, b
            if not lg.ascii:
                while a2 > ls and not lg.layout.isValidCursorPosition(a2):
                    a2 -= 1
                while b2 < le and not lg.layout.isValidCursorPosition(b2):
                    b2 += 1
            x1 = lg.x(line, a2)
            x2 = lg.x(line, b2)
            f = frac
            if (a2, b2) != (a, b) and b2 > a2:
                c0, c1 = (a - a2) / (b2 - a2), (b - a2) / (b2 - a2)
                if f is not None and a == s and b == e:
                    f = (c0 + (c1 - c0) * f[0], c0 + (c1 - c0) * f[1])
                else:
                    f = (c0, c1)
                a, b = s, e  # apply the fraction below
            if last_line and e > blen:  # the token includes the line break
                x2 = max(x1, x2) + lg.newline_width if s <= blen else x2
                if s >= blen:
                    x1 = line.x() + line.naturalTextWidth()
                    x2 = x1 + lg.newline_width
            lo, hi = min(x1, x2), max(x1, x2)
            if f is not None and a == s and b == e:
                f0, f1 = f
                if x2 < x1:  # right-to-left run
                    f0, f1 = 1 - f1, 1 - f0
                lo, hi = lo + (hi - lo) * f0, lo + (hi - lo) * f1
            out.append(QRectF(geo.left() + lo, geo.top() + line.y(), max(hi - lo, 2.0), line.height()))
        return out

    def _paint_tokens(self, p: QPainter, enc: Encoding, items: list[tuple[int, list[QRectF]]]) -> None:
        pal = self.palette_
        edge = QPen(pal.edge, 1.0)
        previous = None
        for i, segs in items:
            special = enc.flags[i] & SPECIAL
            color = pal.special if special and self.layers.specials else pal.background(enc.ids[i])
            if special and self.layers.specials:
                color = QColor(color)
                color.setAlpha(90)
            # a gap separates every two tokens; neighbours that share a colour get an edge too
            p.setPen(edge if color == previous else Qt.PenStyle.NoPen)
            p.setBrush(color)
            for r in segs:
                p.drawRoundedRect(r.adjusted(0.75, 0.5, -0.75, -0.5), 3, 3)
            previous = color

    def _paint_marks(self, p: QPainter, part: Part, items: list[tuple[int, list[QRectF]]]) -> None:
        enc, pal, layers = part.enc, self.palette_, self.layers
        small = self.glyph_font()
        small.setPointSizeF(max(5.0, small.pointSizeF() * 0.62))
        fm = QFontMetricsF(small)
        gap = fm.horizontalAdvance("0")  # ids apart by a digit's width
        id_ends: dict[int, float] = {}  # line top -> where the last id drawn on it ends
        by_index = dict(items)
        for i, segs in items:
            if not segs:
                continue
            group = _group(enc, i)
            if group is not None and i == group[0]:
                # tokens that share a character: a dashed frame round the whole group
                rects = [r for j in range(group[0], group[1] + 1) for r in by_index.get(j, [])]
                frame = rects[0]
                for r in rects[1:]:
                    frame = frame.united(r) if abs(r.top() - frame.top()) < 1 else frame
                p.setPen(QPen(pal.split_char, 1.2, Qt.PenStyle.DashLine))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRoundedRect(frame.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
            if enc.flags[i] & SPECIAL and layers.specials:
                p.setPen(QPen(pal.special, 1.6))
                p.setBrush(Qt.BrushStyle.NoBrush)
                for r in segs:
                    p.drawRoundedRect(r.adjusted(1, 1, -1, -1), 3, 3)
            if layers.boundaries and (i == 0 or enc.pieces_of[i] != enc.pieces_of[i - 1]):
                r = segs[0]
                p.setPen(QPen(pal.boundary, 2))
                p.drawLine(QPointF(r.left() + 0.5, r.top() + 1), QPointF(r.left() + 0.5, r.bottom() - 1))
            if layers.ids:
                # the id under the token, whole (never cut to "12…"), starting under the token
                # after the id before it on the line; where there is no room left, it is left
                # out (hovering shows it, and the ids strip)
                r = segs[0]
                label = str(enc.ids[i])
                width = fm.horizontalAdvance(label)
                line = round(r.top())
                x = max(r.left() + 1, id_ends.get(line, -1e9))
                if x <= max(r.right() - 4, r.left() + 1):
                    p.setFont(small)
                    p.setPen(pal.text_color())
                    box = QRectF(x, r.bottom() - fm.height(), width + 1, fm.height())
                    p.drawText(box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, label)
                    id_ends[line] = x + width + gap
            if i + part.token == self.selected:
                p.setPen(QPen(pal.selection, 2.2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                for r in segs:
                    p.drawRoundedRect(r.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)

    def _paint_whitespace(self, p: QPainter, block: QTextBlock, geo: QRectF) -> None:
        layout = block.layout()
        if layout.lineCount() == 0:
            return
        text = block.text()
        if not any(ch in text for ch in GLYPHS) and not block.next().isValid():
            return
        font = self.glyph_font()
        p.setPen(self.palette_.glyph)
        p.setFont(font)
        fm = QFontMetricsF(font)
        text_height = fm.height()
        lines = [layout.lineAt(li) for li in range(layout.lineCount())]
        li = 0
        k = 0  # UTF-16 position in the block: what Qt's layout counts
        for ch in text:
            glyph = GLYPHS.get(ch)
            if glyph is not None:
                while li + 1 < len(lines) and k >= lines[li].textStart() + lines[li].textLength():
                    li += 1
                line = lines[li]
                x1, x2 = line.cursorToX(k)[0], line.cursorToX(k + 1)[0]
                st = self._static_glyph(glyph, font)
                size = st.size()
                top = geo.top() + line.y() + (min(text_height, line.height()) - size.height()) / 2
                p.drawStaticText(QPointF(geo.left() + (x1 + x2 - size.width()) / 2, top), st)
            k += 2 if ord(ch) > 0xFFFF else 1
        if block.next().isValid():
            line = lines[-1]
            right = line.x() + line.naturalTextWidth()
            st = self._static_glyph(NEWLINE_GLYPH, font)
            size = st.size()
            top = geo.top() + line.y() + (min(text_height, line.height()) - size.height()) / 2
            p.drawStaticText(QPointF(geo.left() + right + 1, top), st)

    def _utf16_text(self, start: int, end: int) -> str:
        cur = self.textCursor()
        cur.setPosition(start)
        cur.setPosition(end, cur.MoveMode.KeepAnchor)
        return cur.selectedText()

    def _cell(self, block: QTextBlock, geo: QRectF, start: int, end: int, height: float) -> QRectF | None:
        """The box of the block's characters ``start:end`` (UTF-16, relative to the block)."""
        layout = block.layout()
        line = layout.lineForTextPosition(start)
        if not line.isValid():
            return None
        x1 = line.cursorToX(start)[0]
        x2 = line.cursorToX(min(end, line.textStart() + line.textLength()))[0]
        lo, hi = min(x1, x2), max(x1, x2)
        return QRectF(geo.left() + lo, geo.top() + line.y(), max(hi - lo, 4.0), min(height, line.height()))

    def _paint_code_points(self, p: QPainter, blocks: list[tuple[QTextBlock, QRectF]]) -> None:
        """Characters no font draws, as their code point (their cells are widened by a
        :class:`CodePointSpacer`, attached to the document the first time one is seen)."""
        doc = self.document()
        cov = coverage_for(doc.defaultFont())
        font = self.glyph_font()
        height = QFontMetricsF(font).height()
        color = self.palette_.text_color()
        spacer = doc.findChild(CodePointSpacer)
        if spacer is not None:
            spacer.follow(cov)
        spaced = spacer is not None
        for block, geo in blocks:
            missing = cov.missing_in(block.text())
            if not missing:
                continue
            if not spaced:  # widen the cells once this paint is over
                QTimer.singleShot(0, self, self._attach_spacer)
                spaced = True
            layout = block.layout()
            found = missing_positions(block.text(), missing)
            for k, (pos, n, ch) in enumerate(found):
                end = pos + n
                if layout.isValidCursorPosition(pos) and layout.isValidCursorPosition(end):
                    cell = self._cell(block, geo, pos, end, height)
                else:  # a mark inside a cluster: its (widened) glyph lies at the cluster's end
                    start = pos
                    while start > 0 and not layout.isValidCursorPosition(start):
                        start -= 1
                    while end < block.length() - 1 and not layout.isValidCursorPosition(end):
                        end += 1
                    cluster = self._cell(block, geo, start, end, height)
                    later = sum(1 for q, _n, _c in found[k + 1 :] if q < end)
                    w = box_width(ch, font)
                    cell = None if cluster is None else QRectF(cluster.right() - (later + 1) * w, cluster.top(), w, cluster.height())
                if cell is not None:
                    paint_code_point(p, cell, ch, color, font)

    def _attach_spacer(self) -> None:
        CodePointSpacer.ensure(self.document())

    def _paint_dropped(self, p: QPainter, blocks: list[tuple[QTextBlock, QRectF]]) -> None:
        """Characters holding a byte that has no token: tinted and framed (no token covers them)."""
        height = QFontMetricsF(self.glyph_font()).height()
        pen = QPen(self.palette_.dropped, 1.6)
        tint = QColor(self.palette_.dropped)
        tint.setAlpha(50)
        p.setBrush(tint)
        for block, geo in blocks:
            bpos, bend = block.position(), block.position() + block.length() - 1
            part = self.parts.part_at_u16(bpos) if self.parts is not None else None
            spans = _dropped_in(part) if part is not None else []
            k = bisect.bisect_left(spans, (bpos, -1))
            while k < len(spans) and spans[k][0] < bend:
                a, b = spans[k]
                k += 1
                cell = self._cell(block, geo, max(a, bpos) - bpos, min(b, bend) - bpos, height)
                if cell is None:
                    continue
                p.setPen(pen)
                p.drawRect(cell.adjusted(0.8, 0.8, -0.8, -0.8))

    def _static_glyph(self, glyph: str, font: QFont) -> QStaticText:
        key = (glyph, font.key())
        st = self._glyph_cache.get(key)
        if st is None:
            st = self._glyph_cache[key] = QStaticText(glyph)
            st.prepare(font=font)
        return st


def _group(enc: Encoding, i: int) -> tuple[int, int] | None:
    """The run of tokens of ``enc`` sharing characters with token ``i`` (more than one), or None."""
    return group_around(enc, i) if enc.flags[i] & SPLITS_CHAR else None


def _dropped_in(p: Part) -> list[tuple[int, int]]:
    """UTF-16 spans, in the whole text, of the dropped characters of part ``p``."""
    return [(p.u16 + a, p.u16 + b) for a, b in (_utf16_span(p.enc, s, e) for s, e in p.enc.dropped)]


def _utf16_span(enc: Encoding, a: int, b: int) -> tuple[int, int]:
    """Code point span ``a:b`` of ``enc.text`` in UTF-16 units, counted from the nearest token."""
    j = bisect.bisect_right(enc.char_ends, a) - 1
    c0, u0 = (enc.char_ends[j], enc.utf16_ends[j]) if j >= 0 else (0, 0)
    if c0 > a:  # a token ends past it (tokens overlapping a split character): count from the start
        c0, u0 = 0, 0
    start = u0 + utf16_len(enc.text[c0:a])
    return start, start + utf16_len(enc.text[a:b])


class _LineGeometry:
    """One block's lines, with x positions cached (neighbouring tokens share their edges)."""

    def __init__(self, block: QTextBlock, newline_width: float) -> None:
        self.layout = layout = block.layout()
        self.lines = [layout.lineAt(k) for k in range(layout.lineCount())]
        self.starts = [ln.textStart() for ln in self.lines]
        self.ends = [ln.textStart() + ln.textLength() for ln in self.lines]
        self.blen = block.length() - 1
        self.ascii = block.text().isascii()
        self.newline_width = newline_width
        self._x: dict[tuple[int, int], float] = {}

    def x(self, line: QTextLine, pos: int) -> float:
        key = (line.lineNumber(), pos)
        x = self._x.get(key)
        if x is None:
            x = self._x[key] = line.cursorToX(pos)[0]
        return x
