"""What the token view draws from, apart from the widget: which layers are on, an encoding read
a part at a time, where each id label goes, and one text block's line geometry."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QTextBlock, QTextLine

from bpeinspect.core import Encoding
from bpeinspect.core.encoding import SPLITS_CHAR
from bpeinspect.core.live_text import LiveEncoding, Part
from bpeinspect.core.text import utf16_len
from bpeinspect.gui.overlay.tooltips import group_around


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


def place_id_labels(fm: QFontMetricsF, items: list[tuple[QRectF, str]]) -> list[IdLabel]:
    """Where each token's id goes, under the token's rectangle, whole (never "683…"): narrowed
    down to :data:`MIN_SQUEEZE` to fit its token, else wider than the token; a label that would
    run into the one before it on the line starts after it. ``items`` are in text order."""
    out: list[IdLabel] = []
    prev: QRectF | None = None  # the token rectangle of the label before
    for rect, text in items:
        width = fm.horizontalAdvance(text)
        room = max(rect.width() - 2, 1.0)
        squeeze = 1.0 if width <= room else max(room / width, MIN_SQUEEZE)
        top = rect.bottom() - fm.height()
        left = rect.left() + 1
        if prev is not None and out and abs(rect.top() - prev.top()) < 0.5 and rect.left() >= prev.left():
            left = max(left, out[-1].box.right() + LABEL_GAP)  # same line, left to right: after the one before
        out.append(IdLabel(text, QRectF(left, top, width * squeeze, fm.height()), squeeze))
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
            x = self._x[key] = line.cursorToX(pos)[0]
        return x

    def end_x(self, line: QTextLine) -> float:
        """Where the block's text ends on its last line: the right edge, or the left in right-to-left text."""
        if self.rtl:
            return self.x(line, self.blen) if self.blen else line.x() + line.width()
        return line.x() + line.naturalTextWidth()
