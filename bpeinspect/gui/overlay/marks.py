"""The marks the token view paints over its text, each a function of what it draws on: whitespace
marks, characters no font draws (as their code point), and dropped characters (no token)."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QStaticText, QTextBlock, QTextDocument

from bpeinspect.core import SYMBOLS
from bpeinspect.gui.overlay.glyphs import (
    CodePointSpacer,
    box_width,
    coverage_for,
    has_tall_runs,
    missing_positions,
    paint_code_point,
)
from bpeinspect.gui.overlay.layout import LineGeometry, cursor_x, dropped_in

GLYPHS = {ch: SYMBOLS[ch] for ch in (" ", "\t", "\u00a0")}  # drawn over the blank they stand for
NEWLINE_GLYPH = SYMBOLS["\n"]


def cell_rect(block: QTextBlock, geo: QRectF, start: int, end: int, height: float) -> QRectF | None:
    """The box of the block's characters ``start:end`` (UTF-16, relative to the block)."""
    layout = block.layout()
    line = layout.lineForTextPosition(start)
    if not line.isValid():
        return None
    x1 = cursor_x(line, start)
    x2 = cursor_x(line, min(end, line.textStart() + line.textLength()))
    lo, hi = min(x1, x2), max(x1, x2)
    return QRectF(geo.left() + lo, geo.top() + line.y(), max(hi - lo, 4.0), min(height, line.height()))


def paint_whitespace(
    p: QPainter,
    block: QTextBlock,
    geo: QRectF,
    *,
    font: QFont,
    color: QColor,
    prepared: Callable[[str, QFont], QStaticText],
    newline_width: float,
) -> None:
    """The whitespace marks of one block (spaces, tabs, NBSP and the line break), in ``font``; ``prepared`` gives a prepared glyph."""
    layout = block.layout()
    if layout.lineCount() == 0:
        return
    text = block.text()
    if not any(ch in text for ch in GLYPHS) and not block.next().isValid():
        return
    p.setPen(color)
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
            x1, x2 = cursor_x(line, k), cursor_x(line, k + 1)
            st = prepared(glyph, font)
            size = st.size()
            top = geo.top() + line.y() + (min(text_height, line.height()) - size.height()) / 2
            p.drawStaticText(QPointF(geo.left() + (x1 + x2 - size.width()) / 2, top), st)
        k += 2 if ord(ch) > 0xFFFF else 1
    if block.next().isValid():
        line = lines[-1]
        lg = LineGeometry(block, newline_width)
        st = prepared(NEWLINE_GLYPH, font)
        size = st.size()
        x = lg.end_x(line) - size.width() - 1 if lg.rtl else lg.end_x(line) + 1
        top = geo.top() + line.y() + (min(text_height, line.height()) - size.height()) / 2
        p.drawStaticText(QPointF(geo.left() + x, top), st)


def paint_code_points(
    p: QPainter,
    blocks: list[tuple[QTextBlock, QRectF]],
    doc: QTextDocument,
    *,
    font: QFont,
    color: QColor,
    first_seen: Callable[[], None],
) -> None:
    """Characters no font draws, as their code point (their cells are widened by a
    :class:`CodePointSpacer`; ``first_seen`` has one format the blocks shown, after this paint:
    the first time, or where they are not formatted yet)."""
    cov = coverage_for(doc.defaultFont())
    height = QFontMetricsF(font).height()
    spacer = doc.findChild(CodePointSpacer)
    if spacer is not None:
        spacer.follow(cov)
        if any(spacer.stale(block) for block, _ in blocks):
            first_seen()
    spaced = spacer is not None
    for block, geo in blocks:
        missing = cov.missing_in(block.text())
        if not missing:
            if not spaced and has_tall_runs(block.text()):  # their own font's line height
                first_seen()
                spaced = True
            continue
        if not spaced:  # widen the cells once this paint is over
            first_seen()
            spaced = True
        layout = block.layout()
        found = missing_positions(block.text(), missing)
        for k, (pos, n, ch) in enumerate(found):
            end = pos + n
            if layout.isValidCursorPosition(pos) and layout.isValidCursorPosition(end):
                cell = cell_rect(block, geo, pos, end, height)
            else:  # a mark inside a cluster: its (widened) glyph lies at the cluster's end
                start = pos
                while start > 0 and not layout.isValidCursorPosition(start):
                    start -= 1
                while end < block.length() - 1 and not layout.isValidCursorPosition(end):
                    end += 1
                cluster = cell_rect(block, geo, start, end, height)
                later = sum(1 for q, _n, _c in found[k + 1 :] if q < end)
                w = box_width(ch, font)
                cell = (
                    None
                    if cluster is None
                    else QRectF(cluster.right() - (later + 1) * w, cluster.top(), w, cluster.height())
                )
            if cell is not None:
                paint_code_point(p, cell, ch, color, font)


def paint_dropped(p: QPainter, blocks: list[tuple[QTextBlock, QRectF]], parts, *, font: QFont, color: QColor) -> None:
    """Characters holding a byte that has no token: tinted and framed (no token covers them)."""
    height = QFontMetricsF(font).height()
    pen = QPen(color, 1.6)
    tint = QColor(color)
    tint.setAlpha(50)
    p.setBrush(tint)
    for block, geo in blocks:
        bpos, bend = block.position(), block.position() + block.length() - 1
        part = parts.part_at_u16(bpos) if parts is not None else None
        spans = dropped_in(part) if part is not None else []
        k = bisect.bisect_left(spans, (bpos, -1))
        while k < len(spans) and spans[k][0] < bend:
            a, b = spans[k]
            k += 1
            cell = cell_rect(block, geo, max(a, bpos) - bpos, min(b, bend) - bpos, height)
            if cell is None:
                continue
            p.setPen(pen)
            p.drawRect(cell.adjusted(0.8, 0.8, -0.8, -0.8))
