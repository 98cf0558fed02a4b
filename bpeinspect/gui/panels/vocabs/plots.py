"""The Vocabularies view's two figures: the overlap as UpSet bars, and each vocabulary's
composition as stacked bars on one scale.

An **UpSet chart** has one bar per combination of vocabularies (the tokens exactly those hold)
and, under it, a dot matrix saying which vocabularies the combination is: unlike a Venn
diagram it stays readable for four sets. A click on a bar emits ``comboPicked(mask)``.

This module imports pyqtgraph: the view imports it on the worker, never on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bpeinspect.core.analysis import VocabDiff, length_buckets
from bpeinspect.gui.overlay.palette import CATEGORY_COLORS, UiColors, app_colors
from bpeinspect.gui.turns import later

MAX_CATEGORIES = 14  # categories drawn by name; the rest of the scripts are one "other scripts"
OTHER_SCRIPTS = "other scripts"


def combo_label(diff: VocabDiff, mask: int) -> str:
    """``"only A"`` for one side, ``"A ∩ B"`` for several (exactly those)."""
    names = [diff.names[k] for k in range(len(diff.sides)) if mask >> k & 1]
    return f"only {names[0]}" if len(names) == 1 else " ∩ ".join(names)


def composition_series(diff: VocabDiff, by: str) -> tuple[list[str], list[list[int]]]:
    """Category labels and, per label, each side's count: by ``script`` (the largest
    :data:`MAX_CATEGORIES` by name, the remaining scripts together) or by ``length`` in bytes."""
    if by == "length":
        return length_buckets([s.lengths for s in diff.sides])
    order = diff.category_order()
    if len(order) > MAX_CATEGORIES:
        keep, rest = order[: MAX_CATEGORIES - 3] + order[-2:], order[MAX_CATEGORIES - 3 : -2]
    else:
        keep, rest = order, []
    values = [[s.composition.get(c, 0) for s in diff.sides] for c in keep]
    labels = list(keep)
    if rest:
        labels.insert(len(labels) - 2, OTHER_SCRIPTS)
        values.insert(len(values) - 2, [sum(s.composition.get(c, 0) for c in rest) for s in diff.sides])
    return labels, values


def category_colors(n: int) -> list[QColor]:
    """``n`` colours, each category its own (they repeat only past sixteen)."""
    return [QColor(CATEGORY_COLORS[k % len(CATEGORY_COLORS)]) for k in range(n)]


class _Figure(QWidget):
    """A pyqtgraph layout with theme colours and a renderer for export."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = pg.GraphicsLayoutWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.canvas)
        self.diff: VocabDiff | None = None
        # The plots are made, and the figure drawn, a turn at a time from the canvas's first
        # paint on: a plot made in the turn of that paint held the GUI thread for over 50 ms
        # with it (and in the turns the window's parts paint in). A figure not shown (another
        # page) draws when it is next painted.
        self._stale = True  # a change (of the comparison, the theme) not drawn yet
        self.canvas.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Paint and watched is self.canvas.viewport():
            if not self.ready() or self._stale:
                later(self._catch_up_now)
        return False

    def _catch_up_now(self) -> None:
        if not self.ready():
            self.make_next()
            later(self._catch_up_now)  # the next plot, or the drawing, in the next turn
        elif self._stale:
            self.redraw()

    def ready(self) -> bool:
        """Whether every plot of the figure is made."""
        raise NotImplementedError

    def make_next(self) -> None:
        """Make one more of the figure's plots."""
        raise NotImplementedError

    def style_plot(self, item: pg.PlotItem, c: UiColors) -> None:
        item.setMenuEnabled(False)
        item.hideButtons()
        for ax in ("left", "bottom"):
            axis = item.getAxis(ax)
            axis.setTextPen(c.plot_text)
            axis.setPen(c.plot_axis)

    def renderer(self):
        if self._stale:  # (an export asked for before the next turn)
            self.redraw()
        canvas = self.canvas

        def render(painter: QPainter, size: QSize) -> None:
            source = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
            canvas.scene().render(painter, QRectF(0, 0, size.width(), size.height()), source)

        return render, canvas.viewport().size()

    def set_diff(self, diff: VocabDiff | None) -> None:
        self.diff = diff
        self.redraw()

    def redraw(self) -> None:
        """Draw :attr:`diff` again into the plots made once (making a pyqtgraph plot costs tens
        of ms: a comparison arriving only clears and fills them); a figure not made or not shown
        yet is drawn when it next paints."""
        if not self.ready() or not self.isVisible():
            self._stale = True
            return
        self._stale = False
        self.draw_now(app_colors())

    def draw_now(self, c: UiColors) -> None:
        self.canvas.setBackground(c.plot_bg)
        for item in self.plots():
            item.clear()
            self.style_plot(item, c)
        if self.diff is not None:
            self.draw(self.diff, c)

    def plots(self) -> list[pg.PlotItem]:
        raise NotImplementedError

    def draw(self, diff: VocabDiff, c: UiColors) -> None:
        raise NotImplementedError

    def csv_rows(self) -> tuple[list[str], list[list[object]]]:
        """The figure's numbers: a header and its rows."""
        raise NotImplementedError


@dataclass
class _UpsetItems:
    """What the UpSet figure draws with: the bars, their count labels, the matrix's links and
    dots (out of and in each combination)."""

    bars: pg.BarGraphItem
    links: pg.PlotDataItem
    dots_off: pg.ScatterPlotItem
    dots_on: pg.ScatterPlotItem
    labels: list[pg.TextItem] = field(default_factory=list)

    def all(self) -> list[pg.GraphicsObject]:
        return [self.bars, self.links, self.dots_off, self.dots_on, *self.labels]


class UpsetPlot(_Figure):
    """Bars of the tokens each combination holds exactly, over the matrix of its members."""

    comboPicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.masks: list[int] = []
        self.canvas.scene().sigMouseClicked.connect(self._clicked)
        # made after the panel has opened, one per event-loop turn: a pyqtgraph plot costs
        # tens of ms, and the panel's first show held the GUI thread for both
        self._made: list[pg.PlotItem] = []
        self._items: _UpsetItems | None = None

    @property
    def bars_item(self) -> pg.PlotItem:
        return self._make(0)

    @property
    def matrix(self) -> pg.PlotItem:
        return self._make(1)

    def _make(self, k: int) -> pg.PlotItem:
        """Plot ``k`` (0: the bars, 1: the matrix), made with those before it if not made yet."""
        while len(self._made) <= k:
            row = len(self._made)
            item = self.canvas.addPlot(row=row, col=0)
            item.setMouseEnabled(x=False, y=False)
            item.getAxis("bottom").setTicks([[]])
            item.getAxis("left").setWidth(90)
            self.canvas.ci.layout.setRowStretchFactor(row, 3 if row == 0 else 1)
            if row == 1:
                item.setXLink(self._made[0])
            self._made.append(item)
        return self._made[k]

    def ready(self) -> bool:
        return len(self._made) == 2

    def make_next(self) -> None:
        self._make(len(self._made))

    def draw_now(self, c: UiColors) -> None:
        # the items stay and take the new numbers: adding a pyqtgraph item to a plot, and
        # removing it, cost more than the figure's whole drawing (45 ms for four vocabularies)
        self.canvas.setBackground(c.plot_bg)
        for item in self.plots():
            self.style_plot(item, c)
        if self.diff is None:
            self.masks = []
            for part in self._parts().all():
                part.setVisible(False)
            self.bars_item.setTitle(None)
            return
        self.draw(self.diff, c)

    def plots(self) -> list[pg.PlotItem]:
        return [self.bars_item, self.matrix]

    def _parts(self) -> _UpsetItems:
        """The figure's items, made on first use and then only given new data."""
        if self._items is None:
            self._items = _UpsetItems(
                bars=pg.BarGraphItem(x=[0.0], height=[0.0], width=0.7),
                links=pg.PlotDataItem([], [], connect="pairs"),
                dots_off=pg.ScatterPlotItem(size=13, pen=pg.mkPen(None)),
                dots_on=pg.ScatterPlotItem(size=13, pen=pg.mkPen(None)),
            )
            self.bars_item.addItem(self._items.bars)
            for item in (self._items.links, self._items.dots_off, self._items.dots_on):
                self.matrix.addItem(item)
        return self._items

    def _place_labels(self, make: bool = True) -> None:
        """Each bar's count over it, in the labels made so far (``make``: with those still missing)."""
        counts = self.diff.exclusive_counts() if self.diff is not None else {}
        labels = self._parts().labels
        while make and len(labels) < len(self.masks):
            labels.append(pg.TextItem(anchor=(0.5, 1.0)))
            self.bars_item.addItem(labels[-1])
        color = app_colors().plot_text
        for k, (label, m) in enumerate(zip(labels, self.masks)):
            label.setText(f"{counts[m]:,}", color=color)
            label.setPos(k, counts[m])
            label.setVisible(True)
        for label in labels[len(self.masks) :]:
            label.setVisible(False)

    def draw(self, diff: VocabDiff, c: UiColors) -> None:
        counts = diff.exclusive_counts()
        self.masks = sorted((m for m in counts if counts[m]), key=lambda m: (-counts[m], m))
        x = np.arange(len(self.masks), dtype=float)
        heights = np.array([counts[m] for m in self.masks], dtype=float)
        bars, matrix = self.bars_item, self.matrix
        items = self._parts()
        for part in items.all():
            part.setVisible(True)
        bars.setTitle("Tokens held by exactly these vocabularies", color=c.plot_text, size="10pt")
        bars.showGrid(y=True, alpha=0.15)
        items.bars.setOpts(x=x, height=heights, width=0.7, brush=QColor(c.series[0]), pen=pg.mkPen(None))
        if len(items.labels) < len(x):
            # the labels still to make, in the next turn: making a pyqtgraph text item costs
            # about 3 ms, and a fourth vocabulary makes eight more
            later(self._place_labels)
        self._place_labels(make=False)
        bars.setLabel("left", "tokens", color=c.plot_text)
        n = len(diff.sides)
        matrix.getAxis("left").setTicks([[(n - 1 - k, diff.names[k]) for k in range(n)]])
        off, on = QColor(c.plot_axis), QColor(c.plot_text)
        off.setAlpha(70)
        # one item for every column's link between its members: pairs of points, one line each
        link_xs, link_ys = [], []
        for xi, m in zip(x, self.masks):
            ys = [n - 1 - k for k in range(n) if m >> k & 1]
            if len(ys) > 1:
                link_xs += [xi, xi]
                link_ys += [min(ys), max(ys)]
        items.links.setData(link_xs, link_ys, connect="pairs", pen=pg.mkPen(on, width=3))
        dot_xs = np.repeat(x, n)
        dot_ys = np.tile(np.arange(n - 1, -1, -1, dtype=float), len(x))
        member = np.array([bool(m >> k & 1) for m in self.masks for k in range(n)], dtype=bool)
        items.dots_off.setData(dot_xs[~member], dot_ys[~member], brush=off)
        items.dots_on.setData(dot_xs[member], dot_ys[member], brush=on)
        for item in (bars, matrix):  # the items' bounds would widen an automatic range
            item.disableAutoRange()
        bars.setXRange(-0.6, max(len(x) - 0.4, 0.6), padding=0)
        bars.setYRange(0, max(heights.max() * 1.12 if len(heights) else 1, 1), padding=0)
        matrix.setYRange(-0.6, n - 0.4, padding=0)

    def mask_at(self, scene_pos: QPointF) -> int | None:
        """The combination whose bar (or matrix column) is under ``scene_pos``."""
        if not self.masks:
            return None
        x = self.bars_item.getViewBox().mapSceneToView(scene_pos).x()
        k = int(round(x))
        return self.masks[k] if 0 <= k < len(self.masks) and abs(x - k) <= 0.4 else None

    def _clicked(self, event) -> None:
        m = self.mask_at(event.scenePos())
        if m is not None and event.button() == Qt.MouseButton.LeftButton:
            self.comboPicked.emit(m)

    def csv_rows(self) -> tuple[list[str], list[list[object]]]:
        assert self.diff is not None
        diff = self.diff
        counts = diff.exclusive_counts()
        head = ["combination", *diff.names, "tokens"]
        rows = [
            [combo_label(diff, m), *(int(bool(m >> k & 1)) for k in range(len(diff.sides))), counts[m]]
            for m in diff.combinations()
        ]
        return head, rows


class CompositionPlot(_Figure):
    """One horizontal bar per vocabulary, cut into its categories; every bar on one scale."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.by = "script"
        # made when the figure is first shown: a pyqtgraph plot costs tens of ms, and the
        # panel opens on its Overlap page
        self._plot: pg.PlotItem | None = None
        self._legend: pg.LegendItem | None = None
        self._legend_due: list[tuple[pg.BarGraphItem, str]] = []  # drawn, their legend entries to come

    @property
    def plot(self) -> pg.PlotItem:
        return self._made()[0]

    @property
    def legend(self) -> pg.LegendItem:
        return self._made()[1]

    def _made(self) -> tuple[pg.PlotItem, pg.LegendItem]:
        """The plot and its legend, made on first use."""
        if self._plot is None or self._legend is None:
            self._plot = self.canvas.addPlot(row=0, col=0)
            self._plot.setMouseEnabled(x=False, y=False)
            self._plot.getAxis("left").setWidth(90)
            self._legend = self._plot.addLegend(offset=(-10, 10), labelTextSize="8pt", colCount=2)
        return self._plot, self._legend

    def plots(self) -> list[pg.PlotItem]:
        return [self.plot]

    def ready(self) -> bool:
        return self._plot is not None

    def make_next(self) -> None:
        self._made()

    def draw_now(self, c: UiColors) -> None:
        if self._legend is not None:
            # the legend emptied at once: the plot's clear takes each bar out of it, and the
            # legend measured itself again after each (14 bars: 40 ms)
            self._legend.clear()
        super().draw_now(c)

    def set_by(self, by: str) -> None:
        self.by = by
        self.redraw()

    def draw(self, diff: VocabDiff, c: UiColors) -> None:
        labels, values = composition_series(diff, self.by)
        plot, legend = self.plot, self.legend
        legend.clear()
        what = "script and kind" if self.by == "script" else "length in bytes"
        plot.setTitle(f"Tokens by {what}", color=c.plot_text, size="10pt")
        plot.showGrid(x=True, alpha=0.15)
        legend.setBrush(pg.mkBrush(QColor(c.plot_legend_bg)))
        legend.setLabelTextColor(c.plot_text)
        n = len(diff.sides)
        ys = np.arange(n - 1, -1, -1, dtype=float)
        left = np.zeros(n)
        colors = category_colors(len(labels))
        named: list[tuple[pg.BarGraphItem, str]] = []
        for label, counts, color in zip(labels, values, colors):
            width = np.asarray(counts, dtype=float)
            if not width.any():
                continue
            item = pg.BarGraphItem(x0=left.copy(), y=ys, height=0.6, width=width, brush=color, pen=pg.mkPen(c.plot_bg))
            plot.addItem(item)
            named.append((item, label))
            left += width
        # the legend in the next turn: its labels cost about as much as the bars, and both with
        # the paint that follows held the GUI thread for over 50 ms
        self._legend_due = named
        QTimer.singleShot(0, self._fill_legend)
        plot.getAxis("left").setTicks([[(n - 1 - k, diff.names[k]) for k in range(n)]])
        plot.setLabel("bottom", "tokens", color=c.plot_text)
        plot.disableAutoRange()
        plot.setYRange(-0.6, n - 0.4 + 0.9 * (n + len(labels) / 2) / 3, padding=0)  # room for the legend
        plot.setXRange(0, max(left.max(), 1) * 1.02, padding=0)

    def _fill_legend(self) -> None:
        named, self._legend_due = self._legend_due, []
        for item, label in named:
            if item.scene() is not None:  # (not cleared by a redraw since)
                self.legend.addItem(item, label)

    def csv_rows(self) -> tuple[list[str], list[list[object]]]:
        assert self.diff is not None
        labels, values = composition_series(self.diff, self.by)
        return ["length" if self.by == "length" else "category", *self.diff.names], [
            [label, *counts] for label, counts in zip(labels, values)
        ]


def csv_text(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    w.writerows(rows)
    return buf.getvalue()


__all__ = ["CompositionPlot", "UpsetPlot", "combo_label", "composition_series", "csv_text"]
