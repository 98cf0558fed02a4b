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
import html
from collections.abc import Callable
from typing import cast

from PySide6.QtCore import QByteArray, QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QHelpEvent,
    QKeyEvent,
    QPainter,
    QPen,
    QStaticText,
    QTextBlock,
    QTextCursor,
    QTextLine,
)
from PySide6.QtWidgets import QAbstractScrollArea, QPlainTextEdit, QToolTip, QWidget

from bpeinspect.core import SPECIAL, Encoding, Tokenizer, display_bytes, hex_bytes
from bpeinspect.core.live_text import LiveEncoding, Part
from bpeinspect.gui.overlay.glyphs import CodePointSpacer, shown, token_shown
from bpeinspect.gui.overlay.layout import (
    Layers,
    LineGeometry,
    WholeEncoding,
    as_parts,
    document_text,
    dropped_in,
    place_id_labels,
    split_group,
    token_rects,
)
from bpeinspect.gui.overlay.marks import NEWLINE_GLYPH, paint_code_points, paint_dropped, paint_whitespace
from bpeinspect.gui.overlay.palette import TokenPalette, app_colors

# -- what the view says about a token on hover --------------------------------------------------


def token_tooltip(
    tok: Tokenizer,
    enc: Encoding,
    i: int,
    group: tuple[int, int] | None = None,
    *,
    at: Part | None = None,
    total: int | None = None,
) -> str:
    """Rich-text tooltip for token ``i``: id, text, bytes, rank, parents, spans.

    ``enc`` may be one part of a longer encoding (``at`` says where it lies in the whole,
    ``total`` how many tokens the whole has): positions are then those in the whole."""
    info = enc.token(i)
    at = at or Part(enc)
    rows = [
        ("id", f"<b>{info.id}</b>"),
        ("text", f"<code>{html.escape(shown(display_bytes(info.text_bytes)))}</code>"),
        *([("word", tok.word_marks.where(*tok.token_marks(info.id)))] if tok.word_marks and not info.special else []),
        ("bytes", f"<code>{hex_bytes(info.text_bytes)}</code> ({len(info.text_bytes)} B)"),
    ]
    if info.special:
        rows.append(("kind", "<b>special token</b>"))
    elif tok.is_added(info.id):
        rows.append(("kind", "<b>added token</b> (not special: matched before BPE in any encoding)"))
    else:
        graph = tok.merge_graph
        rank = graph.rank(info.id)
        rows.append(("rank", "—" if rank is None else str(rank)))
        parents = graph.parents(info.id)
        if parents is None:
            kind = "a single byte" if len(info.text_bytes) == 1 else "not buildable by merges"
            rows.append(("parents", kind))
        else:
            a, b = parents
            rows.append(
                (
                    "parents",
                    f"{a} <code>{html.escape(token_shown(tok, a))}</code> + "
                    f"{b} <code>{html.escape(token_shown(tok, b))}</code>",
                )
            )
    (c0, c1), (b0, b1) = info.char_span, info.byte_span
    rows.append(("chars", f"{c0 + at.char}–{c1 + at.char}  (bytes {b0 + at.byte}–{b1 + at.byte})"))
    if group is not None and group[0] != group[1]:
        chars = enc.text[enc.char_starts[group[0]] : enc.char_ends[group[1]]]
        rows.append(
            (
                "note",
                f"tokens {group[0] + at.token}–{group[1] + at.token} share the character(s) "
                f"<code>{html.escape(shown(chars))}</code>; this one holds bytes {hex_bytes(info.text_bytes)}",
            )
        )
    quiet = app_colors().tip_label  # the theme's, not a grey the dark tooltip hides
    body = "".join(f"<tr><td style='color:{quiet}'>{k}</td><td>{v}</td></tr>" for k, v in rows)
    n = len(enc.ids) if total is None else total
    return f"<table cellspacing=2>{body}</table><i style='color:{quiet}'>token {i + at.token + 1:,} of {n:,}</i>"


def dropped_tooltip(tok: Tokenizer, chars: str) -> str:
    """Rich-text tooltip for characters the encoding drops: which of their bytes have no token."""
    data = chars.encode("utf-8", "surrogatepass")
    missing = set(tok.missing_bytes)
    lost = sorted({b for b in data if b in missing})
    listed = " ".join(f"{b:02x}" for b in lost)
    cps = " ".join(f"U+{ord(c):04X}" for c in chars)
    name = html.escape(tok.name or "this tokenizer")
    return (
        f"<b>dropped</b>: <code>{html.escape(shown(display_bytes(data)))}</code> ({cps}, bytes <code>{hex_bytes(data)}</code>)"
        f"<br>{name} has no token for the single byte{'s' if len(lost) != 1 else ''} <code>{listed}</code>, "
        "so no token holds this text: it is dropped when encoding, as Hugging Face tokenizers and llama.cpp drop it."
    )


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
        self._press_pos = None
        self._card_shown = False  # a hover card of this view is (or may be) on screen
        # inserts pasted or dropped text in place of the cursor's selection (set by the window)
        self.insert_text: Callable[[QTextCursor, str], None] | None = None
        # the same for UTF-8 bytes, which it may decode off the GUI thread (set by the window)
        self.insert_data: Callable[[QTextCursor, QByteArray], None] | None = None
        self.setMouseTracking(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTabStopDistance(4 * QFontMetricsF(self.font()).horizontalAdvance(" "))

    def insertFromMimeData(self, source) -> None:
        from bpeinspect.gui.overlay.paste_guard import allow_paste  # a 100 MB paste would not fit

        data = source.data("text/plain") if source.hasFormat("text/plain") else None
        if not allow_paste(self, source, None if data is None else data.size()):
            return
        if data is not None and self.insert_data is not None:
            # bytes: turning megabytes into a string here would hold the event loop
            self.insert_data(self.textCursor(), data)
        elif self.insert_text is None or not source.hasText():
            super().insertFromMimeData(source)
            return
        else:
            # the window's document puts a big text in a slice per turn (Qt would hold the loop)
            self.insert_text(self.textCursor(), source.text())
        self.ensureCursorVisible()

    # -- state ------------------------------------------------------------------------------------

    def text(self) -> str:
        return document_text(self.document())

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
        self.hide_card()  # it would speak of a token that may no longer be there
        self.tok, self.enc = tok, enc
        if self.parts is None or self.parts is not enc and getattr(self.parts, "whole", None) is not enc:
            self.parts = as_parts(enc)
        if self.selected is not None and (enc is None or self.parts is None or self.selected >= len(self.parts)):
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
        before, self.selected = self.selected, index
        if index is not None and self.parts is not None and 0 <= index < len(self.parts) and scroll:
            pos = min(self.parts.utf16_span(index)[0], self.document().characterCount() - 1)
            cur = self.textCursor()
            if cur.position() != pos or cur.hasSelection():
                cur.setPosition(pos)
                self.setTextCursor(cur)
            self.ensureCursorVisible()
        if index is None:  # cleared after an edit, maybe: the text under the old outline may have moved
            self.viewport().update()
        else:
            self._update_outline(before, index)

    def _update_outline(self, *tokens: int | None) -> None:
        """Repaint where the outline of ``tokens`` is drawn (the old and the new selection):
        a click repaints two tokens, not every visible line of every pane."""
        vp = self.viewport()
        area = vp.rect()
        offset = self.contentOffset()
        doc = self.document()
        for i in tokens:
            if i is None or self.parts is None or not 0 <= i < len(self.parts):
                continue
            start, end = self.parts.utf16_span(i)
            block, last = doc.findBlock(start), doc.findBlock(max(start, end - 1))
            if not block.isValid() or not last.isValid() or last.blockNumber() - block.blockNumber() > 8:
                vp.update()  # a token over many lines (or past the document): everything
                return
            while block.isValid() and block.blockNumber() <= last.blockNumber():
                geo = self.blockBoundingGeometry(block).translated(offset)
                if block.isVisible() and geo.bottom() >= 0 and geo.top() <= area.bottom():
                    for r in self._segments(block, geo, i):
                        vp.update(r.adjusted(-3, -3, 3, 3).toAlignedRect())
                block = block.next()

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
            lg = LineGeometry(block, self._newline_width())
            # slivers are drawn at least 2 px wide and may overlap: take the nearest centre
            hits = [
                (abs(r.center().x() - point.x()), i)
                for i in range(first, last)
                for r in token_rects(p, block, geo, i, lg)
                if r.contains(point)
            ]
            if hits:
                return p.token + min(hits)[1]
        return p.token + found

    def dropped_spans(self) -> list[tuple[int, int]]:
        """UTF-16 spans of the characters whose bytes have no token (dropped by the encoding)."""
        if self.parts is None:
            return []
        return [span for p in self.parts.parts() for span in dropped_in(p)]

    def dropped_at_point(self, point: QPointF) -> tuple[int, int] | None:
        """The UTF-16 span of the dropped character(s) under a viewport point, if any."""
        if self.parts is None:
            return None
        pos = self._position_at(point)
        if pos is None:
            return None
        p = self.parts.part_at_u16(pos)
        spans = dropped_in(p) if p is not None else []
        k = bisect.bisect_right(spans, (pos, float("inf"))) - 1
        return spans[k] if k >= 0 and spans[k][0] <= pos < spans[k][1] else None

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

    def hide_card(self) -> None:
        """Hide the hover card this view showed (a key press, an edit, a new text)."""
        if self._card_shown:
            self._card_shown = False
            QToolTip.hideText()

    def changeEvent(self, e: QEvent) -> None:
        if e.type() == QEvent.Type.FontChange and self.document().defaultFont() == self.font():
            # the shared document has this font already: Qt would give it again and lay all of
            # the text out anew, once per pane (a long text takes a while)
            QAbstractScrollArea.changeEvent(self, e)
            return
        super().changeEvent(e)

    def event(self, e: QEvent) -> bool:
        if e.type() in (QEvent.Type.KeyPress, QEvent.Type.InputMethod):
            self.hide_card()
            key = cast(QKeyEvent, e)  # read only for a KeyPress
            ctrl = e.type() == QEvent.Type.KeyPress and key.modifiers() & Qt.KeyboardModifier.ControlModifier
            if ctrl and key.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                # Tab types a tab in the text; Ctrl+Tab (Ctrl+Shift+Tab) goes to the next (previous) pane
                QWidget.focusNextPrevChild(self, key.key() == Qt.Key.Key_Tab)  # the editor's own keeps the focus
                return True
        if e.type() == QEvent.Type.ToolTip:
            help_event = cast(QHelpEvent, e)
            i = self.token_at_point(QPointF(help_event.pos()))
            p = self.parts.part_of_token(i) if i is not None and self.parts is not None else None
            dropped = self.dropped_at_point(QPointF(help_event.pos())) if i is None else None
            if dropped is not None and self.tok is not None:
                QToolTip.showText(help_event.globalPos(), dropped_tooltip(self.tok, self._utf16_text(*dropped)), self)
                self._card_shown = True
            elif p is None or i is None or self.parts is None or self.tok is None:
                self.hide_card()
            else:
                j = i - p.token
                tip = token_tooltip(self.tok, p.enc, j, split_group(p.enc, j), at=p, total=len(self.parts))
                QToolTip.showText(help_event.globalPos(), tip, self)
                self._card_shown = True
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
                before, self.selected = self.selected, i
                self._update_outline(before, i)
                self.tokenClicked.emit(i)
        self._press_pos = None

    # -- painting ---------------------------------------------------------------------------------

    def glyph_font(self) -> QFont:
        """The font the text is drawn in."""
        return QFont(self.font())

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
                    lg = LineGeometry(block, nl)
                    drawn.append((p, [(i, token_rects(p, block, geo, i, lg)) for i in self._local_range(p, block)]))
        if drawn and self.layers.colors:
            painter = QPainter(self.viewport())
            try:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                for part, items in drawn:
                    self._paint_tokens(painter, part.enc, items)
            finally:
                painter.end()
        super().paintEvent(e)
        painter = QPainter(self.viewport())
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            if self.layers.whitespace:
                for block, geo in blocks:
                    paint_whitespace(
                        painter,
                        block,
                        geo,
                        font=self.glyph_font(),
                        color=self.palette_.glyph,
                        prepared=self._static_glyph,
                        newline_width=self._newline_width(),
                    )
            paint_code_points(
                painter,
                blocks,
                self.document(),
                font=self.glyph_font(),
                color=self.palette_.text_color(),
                first_seen=lambda: QTimer.singleShot(0, self, self._attach_spacer),
            )
            if self.parts is not None:
                paint_dropped(painter, blocks, self.parts, font=self.glyph_font(), color=self.palette_.dropped)
            for part, items in drawn:
                self._paint_marks(painter, part, items)
        finally:
            painter.end()

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
        return token_rects(p, block, geo, i - p.token, LineGeometry(block, self._newline_width()))

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
        by_index = dict(items)
        labels: list[tuple[QRectF, str]] = []  # (the token's first rectangle, its id)
        fills: list[QColor] = []  # each label's token colour: an id that runs on is still its token's
        for i, segs in items:
            if not segs:
                continue
            group = split_group(enc, i)
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
                labels.append((segs[0], str(enc.ids[i])))
                fills.append(pal.background(enc.ids[i]))
            if i + part.token == self.selected:
                p.setPen(QPen(pal.selection, 2.2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                for r in segs:
                    p.drawRoundedRect(r.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
        if labels:
            p.setFont(small)
            p.setPen(pal.text_color())
            fm = QFontMetricsF(small)
            for label in place_id_labels(fm, labels):
                # on its token's colour: an id that runs on under the next token still reads as its own
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(fills[label.index])
                p.drawRoundedRect(label.box.adjusted(-1, 0, 1, 0), 2, 2)
                p.setPen(pal.text_color())
                p.save()
                p.translate(label.box.topLeft())
                p.scale(label.squeeze, 1.0)
                p.drawText(
                    QRectF(0, 0, label.box.width() / label.squeeze, label.box.height()),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    label.text,
                )
                p.restore()

    def _utf16_text(self, start: int, end: int) -> str:
        cur = self.textCursor()
        cur.setPosition(start)
        cur.setPosition(end, cur.MoveMode.KeepAnchor)
        return cur.selectedText()

    def _attach_spacer(self) -> None:
        """Format the blocks shown for missing characters and tall scripts (only those: a
        big text is formatted as it is scrolled through)."""
        CodePointSpacer.ensure(self.document()).format_blocks(
            b for b, _ in self._visible_blocks(self.viewport().rect())
        )

    def _static_glyph(self, glyph: str, font: QFont) -> QStaticText:
        key = (glyph, font.key())
        st = self._glyph_cache.get(key)
        if st is None:
            st = self._glyph_cache[key] = QStaticText(glyph)
            st.prepare(font=font)
        return st
