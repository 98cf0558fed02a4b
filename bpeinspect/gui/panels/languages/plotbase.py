"""What every plot of the languages view shares: the theme, hover and click on a language, export.

A :class:`PlotPage` holds one pyqtgraph plot. A subclass draws a
:class:`~bpeinspect.core.analysis.fairness.CorpusStats` in :meth:`PlotPage.draw`, a generator
that yields after each item it adds: the page runs it a few milliseconds per event-loop turn,
from the turn after the figures came (adding 500 points or a coastline to a scene costs tens
of ms) and says ``drawn`` at its end.
The subclass registers the points a pointer can land on in :attr:`PlotPage.targets`; the page
then shows the language under the pointer in a tooltip and emits ``languageActivated(code)``
on a click.
Premiums are drawn on a log2 scale (``1×, 2×, 4×`` ticks), where twice as costly is always the
same step.

This module imports pyqtgraph: the view imports it on the worker, never on the GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QPainter
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from bpeinspect.core.analysis import CorpusStats
from bpeinspect.gui.overlay.palette import UiColors, app_colors
from bpeinspect.gui.panels.languages.export import Renderer, csv_text, language_tooltip

HIT_PIXELS = 9.0  # how near the pointer must be to a point to hit it
STEP_SECONDS = 0.006  # drawing work per event-loop turn (one step may run past it)
# px a plot keeps at least, for its title, axes, lines and the legend of a few tokenizers (below
# the text of a 700 px window, the dock gave it 115 px: 43 for the lines, under a 68 px legend)
LEAST_PLOT_HEIGHT = 220


class Targets:
    """Points in view coordinates with the (language code, tokenizer) each one stands for."""

    def __init__(self) -> None:
        self.x = np.empty(0)
        self.y = np.empty(0)
        self.keys: list[tuple[str, str]] = []

    def set(
        self, x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, keys: Sequence[tuple[str, str]]
    ) -> None:
        self.x = np.asarray(x, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.keys = list(keys)

    def nearest(self, x: float, y: float, px: float, py: float, limit: float = HIT_PIXELS) -> int | None:
        """Index of the point nearest ``(x, y)`` within ``limit`` pixels (a pixel is ``px`` × ``py``)."""
        if not self.keys or not px or not py:
            return None
        d = ((self.x - x) / px) ** 2 + ((self.y - y) / py) ** 2
        i = int(np.nanargmin(d)) if np.isfinite(d).any() else -1
        return i if i >= 0 and d[i] <= limit * limit else None


class PlotPage(QWidget):
    """One plot of the view; subclasses implement :meth:`draw` (and :meth:`csv_rows`)."""

    languageActivated = Signal(str)  # a language code
    drawn = Signal()  # the last set_stats is drawn
    title = ""
    scrolls = True  # a page taller than the dock (a plot below a small window's text, the script rows) scrolls
    legend_offset = (-10, 10)  # pyqtgraph's: negative x from the right, positive y from the top

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stats: CorpusStats | None = None
        self.focus: str | None = None  # the tokenizer the map colours by and the scripts order by
        self.targets = Targets()
        self._steps: Iterator[None] | None = None
        self._stepper = QTimer(self, singleShot=True, interval=0)
        self._stepper.timeout.connect(self._step)
        self.plot = pg.PlotWidget(enableMenu=False)  # its context menus cost half of making it
        self.plot.setMinimumHeight(LEAST_PLOT_HEIGHT)
        self.item = item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.showGrid(x=True, y=True, alpha=0.15)
        self.legend = item.addLegend(offset=self.legend_offset, labelTextSize="9pt")
        self.note = QLabel()  # what the page says when it has nothing to draw
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setWordWrap(True)
        self.note.hide()
        self.box = lay = QVBoxLayout(self)  # pages put their controls above the plot
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.note)
        lay.addWidget(self.plot, 1)
        self._dark: bool | None = None
        self.apply_theme()
        self.plot.scene().sigMouseMoved.connect(self._on_moved)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)

    # -- data ------------------------------------------------------------------------------------

    def set_stats(self, stats: CorpusStats | None, focus: str | None = None) -> None:
        self.stats, self.focus = stats, focus
        self.redraw()

    def redraw(self) -> None:
        """Start drawing :attr:`stats` afresh (in steps; ``drawn`` says when it is done)."""
        self.item.clear()
        self.legend.clear()
        self.targets.set([], [], [])
        stats = self.stats
        why = self.empty_reason(stats)
        self.note.setText(why or "")
        self.note.setVisible(bool(why))
        self.plot.setVisible(not why)
        self._steps = None if why or stats is None else self.draw(stats, app_colors())
        # no paint of a half-drawn plot: each would cost as much as the whole one
        self.plot.setUpdatesEnabled(self._steps is None)
        if self._steps is None:
            self._step()
        else:  # the first step in a turn of its own, not in the caller's (a tokenizer added, a tab shown)
            self._stepper.start()

    def is_drawing(self) -> bool:
        return self._steps is not None

    def _step(self) -> None:
        steps = self._steps
        if steps is not None:
            end = time.perf_counter() + STEP_SECONDS
            try:
                while time.perf_counter() < end:
                    next(steps)
            except StopIteration:
                self._steps = None
                self.plot.setUpdatesEnabled(True)
            else:
                self._stepper.start()
                return
        self.drawn.emit()

    def empty_reason(self, stats: CorpusStats | None) -> str:
        """Why there is nothing to draw ("" when there is)."""
        if stats is None or not stats.tokenizers:
            return "Nothing counted yet."
        if stats.baseline is None:
            return "Premiums need a baseline: choose a language to compare with."
        if not len(stats.corpus):
            return "No language passes the filters."
        return ""

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        """Add the plot's items, yielding after each costly step."""
        raise NotImplementedError

    def csv_rows(self, stats: CorpusStats) -> tuple[list[str], list[list[object]]]:
        raise NotImplementedError

    def csv_maker(self) -> Callable[[], str]:
        stats = self.stats
        if stats is None or self.empty_reason(stats):
            raise ValueError("nothing to export yet")
        return lambda: csv_text(*self.csv_rows(stats))

    # -- theme -----------------------------------------------------------------------------------

    def apply_theme(self) -> None:
        c = app_colors()
        self._dark = c.dark
        self.plot.setBackground(c.plot_bg)
        self.legend.setBrush(pg.mkBrush(QColor(c.plot_legend_bg)))
        self.legend.setLabelTextColor(c.plot_text)
        for ax in ("left", "bottom", "top", "right"):
            axis = self.item.getAxis(ax)
            axis.setTextPen(c.plot_text)
            axis.setPen(c.plot_axis)
            axis.label.setDefaultTextColor(QColor(c.plot_text))
        self.item.titleLabel.setText(self.item.titleLabel.text, color=c.plot_text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and app_colors().dark != self._dark:
            self.apply_theme()
            self.redraw()
        super().changeEvent(event)

    def series_color(self, k: int, alpha: int = 255) -> QColor:
        c = QColor(app_colors().series[k % len(app_colors().series)])
        c.setAlpha(alpha)
        return c

    def set_labels(self, title: str, left: str, bottom: str) -> None:
        c = app_colors()
        self.item.setTitle(title, color=c.plot_text, size="11pt")
        for side, text in (("left", left), ("bottom", bottom)):
            if text:  # an empty label would show a hidden axis again
                self.item.setLabel(side, text, color=c.plot_text)

    def guide(self, pos: float, *, angle: float = 0, dashed: bool = True) -> pg.InfiniteLine:
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.DotLine
        line = pg.InfiniteLine(pos=pos, angle=angle, pen=pg.mkPen(app_colors().plot_guide, style=style))
        self.item.addItem(line, ignoreBounds=True)
        return line

    # -- hover and click ---------------------------------------------------------------------------

    def hit(self, scene_pos: QPointF) -> tuple[str, str] | None:
        """The (language code, tokenizer) of the point under ``scene_pos``, if any."""
        vb = self.item.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        px, py = vb.viewPixelSize()
        i = self.targets.nearest(p.x(), p.y(), px, py)
        return None if i is None else self.targets.keys[i]

    def tooltip_for(self, code: str, tokenizer: str) -> str:
        assert self.stats is not None
        return language_tooltip(self.stats, code, heading=self.heading(code, tokenizer))

    def heading(self, code: str, tokenizer: str) -> str:
        return ""

    def _on_moved(self, pos: QPointF) -> None:
        hit = self.hit(pos)
        if hit is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), self.tooltip_for(*hit), self.plot)

    def _on_clicked(self, event) -> None:
        hit = self.hit(event.scenePos())
        if hit is not None and event.button() == Qt.MouseButton.LeftButton:
            self.languageActivated.emit(hit[0])

    # -- export ----------------------------------------------------------------------------------

    def renderer(self) -> tuple[Renderer, QSize]:
        """Draws the plot's scene (a vector zoom: text stays in proportion)."""
        plot = self.plot

        def render(painter: QPainter, size: QSize) -> None:
            source = plot.mapToScene(plot.viewport().rect()).boundingRect()
            plot.scene().render(painter, QRectF(0, 0, size.width(), size.height()), source)

        return render, plot.viewport().size()


__all__ = ["HIT_PIXELS", "PlotPage", "Targets"]
