"""A layout that places its widgets in a row and wraps them onto more rows when the row is
too narrow for all (as words wrap in a line of text): a bar of controls that fits a small
window without widening it."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QLayoutItem, QStyle, QWidget


class FlowLayout(QLayout):
    """Widgets left to right, on as many rows as the width needs; each row as tall as its
    tallest widget, the widgets centred in it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []

    def add_group(self, *widgets: QWidget) -> QWidget:
        """Add ``widgets`` as one piece that wraps whole (a label stays beside its box)."""
        group = QWidget()
        row = QHBoxLayout(group)
        row.setContentsMargins(0, 0, 0, 0)
        for w in widgets:
            row.addWidget(w)
        self.addWidget(group)
        return group

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        """Everything on one row."""
        shown = self._shown()
        width = sum(i.sizeHint().width() for i in shown) + self._gap() * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width, height) + self._margins()

    def minimumSize(self) -> QSize:  # noqa: N802
        """The widest widget: every other one can go to a row of its own."""
        size = QSize()
        for item in self._shown():
            size = size.expandedTo(item.minimumSize())
        return size + self._margins()

    def _shown(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty()]

    def _margins(self) -> QSize:
        m = self.contentsMargins()
        return QSize(m.left() + m.right(), m.top() + m.bottom())

    def _gap(self) -> int:
        if self.spacing() >= 0:
            return self.spacing()
        parent = self.parentWidget()
        style = parent.style() if parent is not None else None
        gap = style.pixelMetric(QStyle.PixelMetric.PM_LayoutHorizontalSpacing, None, parent) if style else -1
        return gap if gap >= 0 else 6

    def _place(self, rect: QRect, *, move: bool) -> int:
        """Lay the widgets out in ``rect`` (only measure unless ``move``); the height they need."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        gap = self._gap()
        rows: list[list[QLayoutItem]] = [[]]
        x = 0
        for item in self._shown():
            w = item.sizeHint().width()
            if rows[-1] and x + w > area.width():
                rows.append([])
                x = 0
            rows[-1].append(item)
            x += w + gap
        y = area.y()
        for row in rows:
            height = max((i.sizeHint().height() for i in row), default=0)
            x = area.x()
            for item in row:
                hint = item.sizeHint()
                w = min(hint.width(), area.width())
                if move:
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2), QSize(w, hint.height())))
                x += w + gap
            y += height + gap
        return y - gap - rect.y() + m.bottom() if rows[0] else m.top() + m.bottom()
