"""Live plots of a training: each merge's count against its index, and the corpus's bytes per
token against the vocabulary size.

Points arrive in batches (one per progress report) into growing arrays; the curves are
redrawn at most :data:`REDRAW_MS` apart, and the axes are set by hand (from the target
size and the first merge's count) so that a redraw repaints the curve, not the axes:
pyqtgraph's autorange would rebuild both axes on every new point, which made redraws
the largest pause of the window during training.

>>> plots = TrainingPlots(); plots.add_merges(report.new_merges)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QWidget

from bpeinspect.core import TrainedMerge
from bpeinspect.gui.overlay.palette import UiColors, app_colors
from bpeinspect.gui.turns import later

REDRAW_MS = 250
X_START = 1024  # merges the x axes show at first
MAX_POINTS = 1000  # bins of the merge-count curve (about two points each)


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


def bytes_per_token_curve(
    vocab_size: int, corpus_bytes: int, bytes_per_token: float, merges: Sequence[TrainedMerge]
) -> list[tuple[int, float]]:
    """One (vocabulary size, bytes/token) point per merge of a report, worked back from the
    report's figure: before each merge the corpus had ``count`` more tokens. A fast run
    reports only a few times; its curve still has a point per merge, not a straight line.

    >>> from bpeinspect.core import TrainedMerge
    >>> ms = [TrainedMerge(0, 97, 98, 256, 10, b"ab"), TrainedMerge(1, 256, 99, 257, 5, b"abc")]
    >>> bytes_per_token_curve(258, 100, 100 / 85, ms)
    [(256, 1.0), (257, 1.1111111111111112), (258, 1.1764705882352942)]
    """
    if not bytes_per_token or not corpus_bytes:
        return []
    tokens = corpus_bytes / bytes_per_token
    points = [(vocab_size, bytes_per_token)]
    for k, m in enumerate(reversed(merges)):
        tokens += m.count
        points.append((vocab_size - k - 1, corpus_bytes / tokens))
    return points[::-1]


def peaks(x: np.ndarray, y: np.ndarray, bins: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``2 * bins`` points that draw like ``(x, y)``: each bin's first x with its
    lowest and highest y (a line through them covers the same pixels).

    >>> peaks(np.arange(6.0), np.array([5.0, 1, 4, 2, 3, 0]), bins=2)
    (array([0., 0., 3., 3.]), array([1., 5., 0., 3.]))
    """
    n = len(x)
    if n <= 2 * bins:
        return x, y
    step = -(-n // bins)
    m = n // step * step
    lo = y[:m].reshape(-1, step).min(axis=1)
    hi = y[:m].reshape(-1, step).max(axis=1)
    xs = np.repeat(x[:m:step], 2)
    ys = np.column_stack([lo, hi]).ravel()
    if m < n:
        xs = np.append(xs, [x[m], x[m]])
        ys = np.append(ys, [y[m:].min(), y[m:].max()])
    return xs, ys


def _plot(left: str, bottom: str) -> pg.PlotWidget:
    w = pg.PlotWidget(enableMenu=False)  # no context menus: they cost half of making the plot
    w.setLabel("left", left)
    w.setLabel("bottom", bottom)
    # no grid: pyqtgraph draws grid lines through its axes, which made each redraw several times dearer
    # no SI prefix: when the x axis grew past 1000 merges its label changed to "(x1e+03)",
    # and the relayout that followed was a visible pause of the window
    for axis in ("left", "bottom"):
        w.getAxis(axis).enableAutoSIPrefix(False)
    w.setMinimumHeight(150)
    return w


def _color_plot(w: pg.PlotWidget, title: str, c: UiColors) -> None:
    w.setBackground(c.plot_bg)
    w.setTitle(title, color=c.plot_text, size="10pt")
    for axis in ("left", "bottom"):
        w.getAxis(axis).setTextPen(c.plot_text)
        w.getAxis(axis).setPen(c.plot_axis)


STACK_BELOW = 560  # px: a narrower panel shows the plots one above the other


class TrainingPlots(QWidget):
    """The two live plots of the training workspace."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # the plots are made after the panel first paints, one per event-loop turn (each
        # PlotWidget costs a visible pause); until then the points and axes are only kept: a run
        # behind another tab made both at once at its first progress, 45 ms on the GUI thread
        self.counts_plot: pg.PlotWidget | None = None
        self.bpt_plot: pg.PlotWidget | None = None
        self._redraw = QTimer(self, singleShot=True, interval=REDRAW_MS)
        self._redraw.timeout.connect(self.redraw)
        self._x_max = 1000  # merges the run will make
        self._x_shown = 1000  # merges the x axes show: doubles as the run goes, up to _x_max
        self._base = 256
        self._bpt_top = 2.0  # the bytes-per-token axis's top (1 to 2 until a run grows it)
        self._counts_top = 4.0  # the counts axis's top, log10
        self._marks: tuple[list[int], int] = ([], 0)  # the latest reset's sizes and specials
        self.size_lines: list[pg.InfiniteLine] = []
        self.merge_index = _Growing()
        self.merge_count = _Growing()
        self.vocab = _Growing()
        self.bpt = _Growing()
        self._lay = QHBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        # the plots are made one per turn from the panel's first paint on: made as the panel was
        # built, the first came in the turn of the panel's first paint, and the two together
        # held the GUI thread for over 50 ms (in the turns the window's parts paint in, too)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        super().paintEvent(event)
        if self.bpt_plot is None:
            later(self._make_one)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        """Side by side when there is room, one above the other in a narrow panel (beside a
        window, the second plot was cut off at the right edge)."""
        super().resizeEvent(event)
        wide = event.size().width() >= STACK_BELOW
        want = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._lay.direction() != want:
            self._lay.setDirection(want)

    def _make_one(self) -> None:
        """Make the next plot; once both are there, give them the state so far."""
        if self.counts_plot is None:
            self.counts_plot = _plot("count", "merge #")
            self.counts_plot.setLogMode(x=False, y=True)
            self.counts_curve = self.counts_plot.plot()
            self._lay.addWidget(self.counts_plot, 1)
            later(self._make_one)
            return
        if self.bpt_plot is None:
            self.bpt_plot = _plot("bytes / token", "vocabulary size")
            self.bpt_curve = self.bpt_plot.plot()
            self._lay.addWidget(self.bpt_plot, 1)
            for plot in (self.counts_plot, self.bpt_plot):
                plot.disableAutoRange()
                plot.setMouseEnabled(x=False, y=False)
            self._apply_theme()
            self._show_marks()
            self.redraw()

    def _plots(self) -> tuple[pg.PlotWidget, pg.PlotWidget]:
        """The two plots (counts, bytes per token), once made."""
        assert self.counts_plot is not None and self.bpt_plot is not None
        return self.counts_plot, self.bpt_plot

    def _apply_theme(self) -> None:
        c = app_colors()
        self._dark = c.dark
        _color_plot(self.counts_plot, "Count of each merge", c)
        _color_plot(self.bpt_plot, "Corpus bytes per token", c)
        self.counts_curve.setPen(pg.mkPen(c.count_curve, width=1.5))
        self.bpt_curve.setPen(pg.mkPen(c.bpt_curve, width=2))
        for line in self.size_lines:
            line.setPen(pg.mkPen(c.plot_guide, style=Qt.PenStyle.DashLine))
            line.label.setColor(c.plot_text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.bpt_plot is not None and app_colors().dark != self._dark:
            self._apply_theme()
        super().changeEvent(event)

    def reset(self, sizes: Iterable[int] = (), n_specials: int = 0) -> None:
        """Clear the curves; mark the vocabulary sizes asked for on the bytes-per-token plot."""
        for g in (self.merge_index, self.merge_count, self.vocab, self.bpt):
            g.clear()
        self._marks = (list(sizes), n_specials)
        top = max(sizes, default=1256)
        self._x_max = max(top - 256 - n_specials, 1)
        self._base = 256 + n_specials
        self._x_shown = min(self._x_max, X_START)
        self._counts_top, self._bpt_top = 4.0, 2.0
        if self.bpt_plot is not None:
            self._show_marks()
            self.redraw()

    def _show_marks(self) -> None:
        """Axes and size lines for the latest :meth:`reset` and the points so far (the plots
        are made)."""
        counts_plot, bpt_plot = self._plots()
        self._set_x()
        counts_plot.setYRange(0, self._counts_top, padding=0.02)
        bpt_plot.setYRange(1.0, self._bpt_top, padding=0.02)
        for line in self.size_lines:
            bpt_plot.removeItem(line)
        self.size_lines = []
        c = app_colors()
        for size in self._marks[0]:
            line = pg.InfiniteLine(
                size,
                angle=90,
                pen=pg.mkPen(c.plot_guide, style=Qt.PenStyle.DashLine),
                label=f"{size:,}",
                labelOpts={"position": 0.92, "color": c.plot_text},
            )
            bpt_plot.addItem(line)
            self.size_lines.append(line)

    def add_merges(self, merges: Iterable[TrainedMerge]) -> None:
        merges = list(merges)
        if not merges:
            return
        first = self.merge_index.n == 0
        self.merge_index.extend(m.rank for m in merges)
        self.merge_count.extend(max(m.count, 1) for m in merges)  # log axis: no zeros
        if first:  # counts mostly fall: the first one sets the top of the axis
            self._counts_top = float(np.log10(max(merges[0].count, 10)) + 0.3)
            if self.counts_plot is not None:
                self.counts_plot.setYRange(0, self._counts_top, padding=0.02)
        self._schedule()

    def add_points(self, points: list[tuple[int, float]]) -> None:
        """(vocabulary size, bytes/token) points, in order; sizes already drawn are skipped."""
        last = self.vocab.view()[-1] if self.vocab.n else -1
        points = [(v, b) for v, b in points if v > last]
        if not points:
            return
        self.vocab.extend(v for v, _ in points)
        self.bpt.extend(b for _, b in points)
        top = max(b for _, b in points)
        if top > self._bpt_top:  # grow the axis in steps, not at every point
            self._bpt_top = max(top * 1.25, self._bpt_top + 0.5)
            if self.bpt_plot is not None:
                self.bpt_plot.setYRange(1.0, self._bpt_top, padding=0.02)
        self._schedule()

    def _schedule(self) -> None:
        if self.bpt_plot is not None and not self._redraw.isActive():
            self._redraw.start()

    def redraw(self) -> None:
        """Hand the new points to the curves (also called at the end of a run); plots not made
        yet draw them when they are."""
        self._redraw.stop()
        if self.bpt_plot is None:
            return
        self.counts_curve.setData(*peaks(self.merge_index.view(), self.merge_count.view()))
        # a 16k-point line with a 2 px pen made every repaint slow; its peaks draw the same pixels
        self.bpt_curve.setData(*peaks(self.vocab.view(), self.bpt.view()))
        n = self.merge_index.n
        if n > 0.9 * self._x_shown and self._x_shown < max(self._x_max, n):
            self._x_shown = min(max(self._x_max, n), max(2 * self._x_shown, n))
            self._set_x()

    def _set_x(self) -> None:
        counts_plot, bpt_plot = self._plots()
        counts_plot.setXRange(0, self._x_shown, padding=0.02)
        bpt_plot.setXRange(self._base, self._base + self._x_shown, padding=0.02)

    def points(self) -> int:
        """How many points the curves hold (merges, bytes-per-token points)."""
        return self.merge_index.n + self.vocab.n
