"""What the token view draws from, apart from the widget: which layers are on, an encoding read
a part at a time, where each id label goes, and one text block's line geometry."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QTextBlock, QTextLine

from bpeinspect.core import SPLITS_CHAR, Encoding, byte_fractions, group_around, utf16_len
from bpeinspect.core.live_text import LiveEncoding, Part


def cursor_x(line: QTextLine, pos: int) -> float:
    """The x of the cursor at UTF-16 position ``pos`` on ``line``."""
    return cast("tuple[float, int]", line.cursorToX(pos))[0]  # (x, position); typed as object


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


MIN_SQUEEZE = 0.7  # an id is drawn this narrow at least (then it is wider than its token)
LABEL_GAP = 3.0  # px between two ids


@dataclass
class IdLabel:
    text: str  # the whole id
    box: QRectF  # where it is drawn
    squeeze: float  # horizontal scale (1: none)
    index: int  # which of the items it labels


def place_id_labels(fm: QFontMetricsF, items: list[tuple[QRectF, str]]) -> list[IdLabel]:
    """Where each token's id goes, under the token's rectangle, whole (never "683…"): narrowed
    down to :data:`MIN_SQUEEZE` to fit its token, else wider than the token. A label that would
    run into the one before it on the line starts after it, if that is still under the first
    half of its own token; otherwise it is left out (hover and the ids strip show it), so in a
    run of tokens narrower than their ids (CJK, one character each) the ids do not drift right
    of their tokens. ``items`` are in text order; the labels placed are returned."""
    out: list[IdLabel] = []
    prev: QRectF | None = None  # the token rectangle of the last label placed
    for k, (rect, text) in enumerate(items):
        width = fm.horizontalAdvance(text)
        room = max(rect.width() - 2, 1.0)
        squeeze = 1.0 if width <= room else max(room / width, MIN_SQUEEZE)
        left = rect.left() + 1
        if prev is not None and abs(rect.top() - prev.top()) < 0.5 and rect.left() >= prev.left():
            left = max(left, out[-1].box.right() + LABEL_GAP)  # same line, left to right: after the one before
            if left > rect.left() + max(rect.width() / 2, 1.0):
                continue  # it would stand under a later token
        out.append(IdLabel(text, QRectF(left, rect.bottom() - fm.height(), width * squeeze, fm.height()), squeeze, k))
        prev = rect
    return out


def split_group(enc: Encoding, i: int) -> tuple[int, int] | None:
    """The run of tokens of ``enc`` sharing characters with token ``i`` (more than one), or None."""
    return group_around(enc, i) if enc.flags[i] & SPLITS_CHAR else None


def dropped_in(p: Part) -> list[tuple[int, int]]:
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


class LineGeometry:
    """One block's lines, with x positions cached (neighbouring tokens share their edges)."""

    def __init__(self, block: QTextBlock, newline_width: float) -> None:
        self.layout = layout = block.layout()
        self.lines = [layout.lineAt(k) for k in range(layout.lineCount())]
        self.starts = [ln.textStart() for ln in self.lines]
        self.ends = [ln.textStart() + ln.textLength() for ln in self.lines]
        self.blen = block.length() - 1
        self.ascii = block.text().isascii()
        self.rtl = block.textDirection() == Qt.LayoutDirection.RightToLeft
        self.newline_width = newline_width
        self._x: dict[tuple[int, int], float] = {}

    def x(self, line: QTextLine, pos: int) -> float:
        key = (line.lineNumber(), pos)
        x = self._x.get(key)
        if x is None:
            x = self._x[key] = cursor_x(line, pos)
        return x

    def end_x(self, line: QTextLine) -> float:
        """Where the block's text ends on its last line: the right edge, or the left in right-to-left text."""
        if self.rtl:
            return self.x(line, self.blen) if self.blen else line.x() + line.width()
        return line.x() + line.naturalTextWidth()


def token_rects(p: Part, block: QTextBlock, geo: QRectF, i: int, lg: LineGeometry) -> list[QRectF]:
    """Rectangles covering token ``i`` of part ``p`` inside ``block`` (one per line it touches),
    ``geo`` being the block's place in the viewport."""
    enc = p.enc
    bpos = block.position() - p.u16
    blen = lg.blen
    s, e = enc.utf16_starts[i] - bpos, enc.utf16_ends[i] - bpos
    frac = None
    if enc.flags[i] & SPLITS_CHAR:
        group = split_group(enc, i)
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
        if last_line and e > blen:  # the token includes the line break (after the text's end, left in RTL)
            nw = -lg.newline_width if lg.rtl else lg.newline_width
            x2 = (min(x1, x2) if lg.rtl else max(x1, x2)) + nw if s <= blen else x2
            if s >= blen:
                x1 = lg.end_x(line)
                x2 = x1 + nw
        lo, hi = min(x1, x2), max(x1, x2)
        if f is not None and a == s and b == e:
            f0, f1 = f
            if x2 < x1:  # right-to-left run
                f0, f1 = 1 - f1, 1 - f0
            lo, hi = lo + (hi - lo) * f0, lo + (hi - lo) * f1
        out.append(QRectF(geo.left() + lo, geo.top() + line.y(), max(hi - lo, 2.0), line.height()))
    return out
