"""The token ids of the current encoding as a grid of coloured cells, drawn lazily.

Only the visible rows are painted, and only their ids are read (from an encoding kept in
segments as from a list), so 1.2 million ids cost no more than a screenful. Clicking a cell
selects that token.

>>> view = IdsView()                        # doctest: +SKIP
>>> view.set_ids([9906, 1917], palette)     # doctest: +SKIP
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from bpeinspect.core import SPECIAL
from bpeinspect.gui.overlay.palette import TokenPalette


class IdSource(Protocol):
    """Token ids read a stretch at a time (a :class:`~bpeinspect.core.live_text.LiveEncoding`)."""

    def __len__(self) -> int: ...

    def ids_between(self, first: int, end: int) -> tuple[list[int], bytearray]: ...


class _ListSource:
    def __init__(self, ids: list[int], flags: bytearray | None) -> None:
        self.ids, self.flags = ids, flags if flags is not None else bytearray(len(ids))

    def __len__(self) -> int:
        return len(self.ids)

    def ids_between(self, first: int, end: int) -> tuple[list[int], bytearray]:
        return self.ids[first:end], self.flags[first:end]


class IdsView(QAbstractScrollArea):
    """A wrapped grid of token ids coloured like their tokens."""

    tokenClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source: IdSource = _ListSource([], None)
        self.palette_ = TokenPalette()
        self.selected: int | None = None
        self._digits = 6
        # what the last paint showed: (first index, ids, flags, columns); an edit that leaves
        # the cells on screen as they were (a keystroke far below them) repaints nothing
        self._shown: tuple[int, list[int], bytearray, int] | None = None
        self.setMinimumHeight(60)
        self.verticalScrollBar().valueChanged.connect(self.viewport().update)

    def set_ids(
        self,
        ids: list[int] | IdSource,
        flags: bytearray | None = None,
        palette: TokenPalette | None = None,
        n_vocab: int = 0,
    ) -> None:
        """Show ``ids`` (a list, with ``flags``, or a source read a screenful at a time);
        cells are as wide as the largest id of a ``n_vocab`` vocabulary."""
        same = ids is self.source and (palette is None or palette is self.palette_)
        self.source = _ListSource(ids, flags) if isinstance(ids, list) else ids
        digits, self._digits = self._digits, max(len(str(max(n_vocab - 1, 0))), 3)
        if palette is not None:
            self.palette_ = palette
        if self.selected is not None and self.selected >= len(self.source):
            self.selected = None
        # the same source after an edit: repaint only if the cells on screen differ
        self._relayout(repaint=not same or digits != self._digits or self._visible() != self._shown)

    def __len__(self) -> int:
        return len(self.source)

    def _cell(self) -> tuple[float, float]:
        fm = QFontMetricsF(self.font())
        return fm.horizontalAdvance("0" * self._digits) + 10, fm.height() + 4

    def _cols(self) -> int:
        w, _ = self._cell()
        return max(1, int((self.viewport().width() - 4) // w))

    def _relayout(self, repaint: bool = True) -> None:
        _, h = self._cell()
        rows = -(-len(self.source) // self._cols())
        page = max(1, int(self.viewport().height() // h))
        self.verticalScrollBar().setRange(0, max(0, rows - page))  # a new value repaints
        self.verticalScrollBar().setPageStep(page)
        if repaint:
            self.viewport().update()

    def _visible(self) -> tuple[int, list[int], bytearray, int]:
        """The cells on screen: the first one's index, their ids and flags, the columns."""
        _, h = self._cell()
        cols = self._cols()
        first = self.verticalScrollBar().value() * cols
        rows = int(self.viewport().height() // h) + 1
        ids, flags = self.source.ids_between(first, first + rows * cols)
        return first, ids, flags, cols

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._relayout()

    def select(self, index: int | None) -> None:
        """Highlight ``index`` and scroll its row into view."""
        self.selected = index
        if index is not None and len(self.source):
            row = index // self._cols()
            sb = self.verticalScrollBar()
            if not sb.value() <= row < sb.value() + sb.pageStep():
                sb.setValue(max(0, row - sb.pageStep() // 2))
        self.viewport().update()

    def index_at(self, x: float, y: float) -> int | None:
        w, h = self._cell()
        col, row = int((x - 2) // w), int(y // h) + self.verticalScrollBar().value()
        if col < 0 or col >= self._cols():
            return None
        i = row * self._cols() + col
        return i if 0 <= i < len(self.source) else None

    def mousePressEvent(self, e) -> None:
        i = self.index_at(e.position().x(), e.position().y())
        if i is not None:
            self.select(i)
            self.tokenClicked.emit(i)

    def paintEvent(self, e) -> None:
        p = QPainter(self.viewport())
        w, h = self._cell()
        pal = self.palette_
        self._shown = first, ids, flags, cols = self._visible()
        for k, tid in enumerate(ids):
            r, c = divmod(k, cols)
            i = first + k
            rect = QRectF(2 + c * w, r * h, w - 2, h - 2)
            special = flags[k] & SPECIAL
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(pal.special_fill if special else pal.background(tid))
            p.drawRoundedRect(rect, 3, 3)
            if i == self.selected:
                p.setPen(QPen(pal.selection, 2))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRoundedRect(rect.adjusted(1, 1, -1, -1), 3, 3)
            p.setPen(pal.text_color())
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, str(tid))
        p.end()
