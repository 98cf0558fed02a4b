"""Live plots of a training: each merge's count against its index, and the corpus's bytes per
token against the vocabulary size.

Points arrive in batches (one per progress report); the curves keep growing arrays and
redraw at most once per report, with pyqtgraph's clipping and downsampling so that 100k
merges still draw in a few milliseconds.

>>> plots = TrainingPlots(); plots.add_merges(report.new_merges)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QWidget

from bpeinspect.core import TrainedMerge

COUNT_PEN = "#3d7bd9"
BPT_PEN = "#d9653d"


class _Growing:
    """An array that grows by batches (amortized doubling)."""

    def __init__(self, dtype=np.float64) -> None:
        self.data = np.zeros(1024, dtype=dtype)
        self.n = 0

    def extend(self, values: Iterable[float]) -> None:
        arr = np.fromiter(values, dtype=self.data.dtype)
        need = self.n + len(arr)
        if need > len(self.data):
            grown = np.zeros(max(need, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.n] = self.data[: self.n]
            self.data = grown
        self.data[self.n : need] = arr
        self.n = need

    def view(self) -> np.ndarray:
        return self.data[: self.n]

    def clear(self) -> None:
        self.n = 0


def _plot(title: str, left: str, bottom: str) -> pg.PlotWidget:
    w = pg.PlotWidget(background="w")
    w.setTitle(title, color="#333", size="10pt")
    w.setLabel("left", left)
    w.setLabel("bottom", bottom)
    w.showGrid(x=True, y=True, alpha=0.25)
    w.setMenuEnabled(False)
    w.setMinimumHeight(150)
    for axis in ("left", "bottom"):
        w.getAxis(axis).setTextPen("#333")
        w.getAxis(axis).setPen("#888")
    return w


class TrainingPlots(QWidget):
    """The two live plots of the training workspace."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts_plot = _plot("Count of each merge", "count", "merge #")
        self.counts_plot.setLogMode(x=False, y=True)
        self.counts_curve = self.counts_plot.plot(pen=pg.mkPen(COUNT_PEN, width=1.5))
        self.counts_curve.setClipToView(True)
        self.counts_curve.setDownsampling(auto=True, method="peak")
        self.bpt_plot = _plot("Corpus bytes per token", "bytes / token", "vocabulary size")
        self.bpt_curve = self.bpt_plot.plot(pen=pg.mkPen(BPT_PEN, width=2), symbol="o", symbolSize=3,
                                            symbolBrush=BPT_PEN, symbolPen=None)  # fmt: skip
        self.size_lines: list[pg.InfiniteLine] = []
        self.merge_index = _Growing()
        self.merge_count = _Growing()
        self.vocab = _Growing()
        self.bpt = _Growing()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.counts_plot, 1)
        lay.addWidget(self.bpt_plot, 1)

    def reset(self, sizes: Iterable[int] = ()) -> None:
        """Clear the curves; mark the vocabulary sizes asked for on the bytes-per-token plot."""
        for g in (self.merge_index, self.merge_count, self.vocab, self.bpt):
            g.clear()
        self.counts_curve.setData([], [])
        self.bpt_curve.setData([], [])
        for line in self.size_lines:
            self.bpt_plot.removeItem(line)
        self.size_lines = []
        for size in sizes:
            line = pg.InfiniteLine(size, angle=90, pen=pg.mkPen("#999", style=pg.QtCore.Qt.PenStyle.DashLine),
                                   label=f"{size:,}", labelOpts={"position": 0.92, "color": "#666"})  # fmt: skip
            self.bpt_plot.addItem(line)
            self.size_lines.append(line)

    def add_merges(self, merges: Iterable[TrainedMerge]) -> None:
        merges = list(merges)
        if not merges:
            return
        self.merge_index.extend(m.rank for m in merges)
        self.merge_count.extend(max(m.count, 1) for m in merges)  # log axis: no zeros
        self.counts_curve.setData(self.merge_index.view(), self.merge_count.view())

    def add_point(self, vocab_size: int, bytes_per_token: float) -> None:
        if self.vocab.n and self.vocab.view()[-1] == vocab_size:
            return
        self.vocab.extend([vocab_size])
        self.bpt.extend([bytes_per_token])
        self.bpt_curve.setData(self.vocab.view(), self.bpt.view())

    def points(self) -> int:
        """How many points the curves hold (merges, bytes-per-token points)."""
        return self.merge_index.n + self.vocab.n
