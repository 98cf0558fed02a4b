"""Columns that fit the width of their table: in a narrow dock every column stays in sight."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QTreeView


class FitColumns(QObject):
    """Keeps the columns of ``view`` within its width. Each column has the width it was given
    (or the user dragged it to); when they add up to more than the view shows, the columns of
    ``least`` give way, in proportion to what each has above its least width (pixels), so that
    no column hides behind a horizontal scroll bar while they can still shrink. A wider view
    gives them their widths back. The last column takes what is left."""

    def __init__(self, view: QAbstractItemView, least: Mapping[int, int]) -> None:
        super().__init__(view)
        self.view, self.least = view, dict(least)
        self.header = header(view)
        self.header.setStretchLastSection(False)  # (Qt's never makes the last one narrower than it was)
        # column: the width the panel or the user gave it, before any fitting
        self.wanted = {c: self.header.sectionSize(c) for c in range(self.header.count())}
        self._fitting = False
        self._later = QTimer(self, singleShot=True, interval=0)
        self._later.timeout.connect(self.fit)
        self.header.sectionResized.connect(self._on_resized)
        self.header.sectionCountChanged.connect(self._on_count)
        view.viewport().installEventFilter(self)
        self._later.start()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def _shown(self) -> list[int]:
        h = self.header
        return [h.logicalIndex(v) for v in range(h.count()) if not h.isSectionHidden(h.logicalIndex(v))]

    def _on_count(self, old: int, new: int) -> None:
        for col in range(old, new):
            self.wanted.setdefault(col, self.header.defaultSectionSize())
        self._later.start()

    def _on_resized(self, col: int, _old: int, new: int) -> None:
        if self._fitting:
            return
        if new > 0:
            self.wanted[col] = new  # the user's own width (or the panel's)
        self._later.start()  # (a column shown or hidden: the others fit anew)

    def widths(self, available: int) -> dict[int, int]:
        """What each shown column gets in ``available`` pixels."""
        shown = self._shown()
        if not shown:
            return {}
        want = {c: self.wanted.get(c, self.header.sectionSize(c)) for c in shown}
        over = sum(want.values()) - available
        out = dict(want)
        if over > 0:
            give = {c: max(0, want[c] - least) for c, least in self.least.items() if c in want}
            total = sum(give.values())
            for c, spare in give.items():
                if total:
                    out[c] = want[c] - min(spare, -(-over * spare // total))  # (rounded up: it fits)
        last = shown[-1]
        out[last] = max(out[last], available - sum(out.values()) + out[last])  # it takes what is left
        return out

    def fit(self) -> None:
        widths = self.widths(self.view.viewport().width())
        self._fitting = True
        try:
            for col, width in widths.items():
                if self.header.sectionSize(col) != width:
                    self.header.resizeSection(col, width)
        finally:
            self._fitting = False


def header(view: QAbstractItemView) -> QHeaderView:
    """The header that names the columns of a table or a tree."""
    if isinstance(view, QTreeView):
        return view.header()
    assert isinstance(view, QTableView)
    return view.horizontalHeader()
