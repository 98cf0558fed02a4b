"""The world map of premiums: each language a dot where it is spoken, coloured by what it costs.

Longitude and latitude are plotted as they are (an equirectangular map) over the coastlines
of Natural Earth (one NaN-separated curve). A dot's colour is its premium under the chosen
tokenizer on a log scale from 1× to 16× (the theme's ``premium_scale``); costly languages
are drawn last, on top. Languages without a location are left out and counted in the title.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from bpeinspect.core.analysis import CorpusStats, coastline_xy
from bpeinspect.gui.overlay.palette import UiColors
from bpeinspect.gui.panels.languages.export import baseline_name, premium_text
from bpeinspect.gui.panels.languages.plotbase import PlotPage

SCALE_TOP = 4.0  # log2 of the premium that gets the last colour (16x)
DOT_SIZE = 8
DOTS_PER_STEP = 48  # dots added per drawing step (see MapPage.draw)


@functools.cache
def coast() -> tuple[np.ndarray, np.ndarray]:
    xs, ys = coastline_xy()
    return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


def scale_colors(premiums: np.ndarray, stops: tuple[str, ...]) -> list[QColor]:
    """The colour of each premium: ``stops`` spread evenly over log2 premium 0 (1×) to :data:`SCALE_TOP`."""
    cmap = pg.ColorMap(np.linspace(0.0, 1.0, len(stops)), [QColor(s) for s in stops])
    t = np.clip(np.log2(np.maximum(premiums, 1e-9)) / SCALE_TOP, 0.0, 1.0)
    return list(cmap.mapToQColor(t))


class MapPage(PlotPage):
    """Languages at their latitude and longitude, coloured by premium under :attr:`focus`."""

    title = "Map"
    legend_offset = (10, -10)  # bottom left, over the South Pacific

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.item.setAspectLocked(True, ratio=1.0)
        self.item.showGrid(x=False, y=False)
        for ax in ("left", "bottom"):
            self.item.hideAxis(ax)
        self.codes: list[str] = []  # in drawing order

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        focus = self.focus if self.focus in stats.tokenizers else stats.tokenizers[0]
        xs, ys = coast()
        self.item.addItem(pg.PlotCurveItem(xs, ys, connect="finite", pen=pg.mkPen(c.plot_land, width=1)))
        yield
        points = sorted(stats.map_points(focus), key=lambda m: (m.premium, m.code))
        self.codes = [m.code for m in points]
        lon = np.array([m.longitude for m in points], dtype=float)
        lat = np.array([m.latitude for m in points], dtype=float)
        prem = np.array([m.premium for m in points], dtype=float)
        yield
        brushes = [pg.mkBrush(q) for q in scale_colors(prem, c.premium_scale)]
        edge = pg.mkPen(c.plot_point_edge, width=0.6)
        yield
        # a scatter item draws each dot's symbol once (a colour each), so the dots come in items
        # of DOTS_PER_STEP, one per step: all 500 in one item held the loop for several frames
        for k in range(0, len(points), DOTS_PER_STEP):
            part = slice(k, k + DOTS_PER_STEP)
            self.item.addItem(pg.ScatterPlotItem(lon[part], lat[part], size=DOT_SIZE, brush=brushes[part], pen=edge))
            yield
        self.targets.set(lon, lat, [(code, focus) for code in self.codes])
        for k, stop in enumerate(c.premium_scale):
            level = 2 ** round(k * SCALE_TOP / (len(c.premium_scale) - 1))
            label = (
                f"{level}× or less" if k == 0 else f"{level}× or more" if k == len(c.premium_scale) - 1 else f"{level}×"
            )
            sample = pg.ScatterPlotItem(size=DOT_SIZE + 2, brush=pg.mkBrush(stop), pen=pg.mkPen(c.plot_point_edge))
            self.legend.addItem(sample, label)
            yield
        self.item.setXRange(-180, 180, padding=0.01)
        self.item.setYRange(-58, 84, padding=0.01)
        missing = len(stats.corpus) - len(points)
        unplaced = f"; {missing} without a location not shown" if missing else ""
        self.set_labels(f"Premium vs {baseline_name(stats)} under {focus}{unplaced}", "", "")

    def heading(self, code: str, tokenizer: str) -> str:
        assert self.stats is not None
        lang = self.stats.corpus.language(code)
        where = (
            f"{abs(lang.latitude or 0):.1f}°{'N' if (lang.latitude or 0) >= 0 else 'S'}, "
            f"{abs(lang.longitude or 0):.1f}°{'E' if (lang.longitude or 0) >= 0 else 'W'}"
        )
        return f"{where}; {tokenizer}: {premium_text(self.stats.premium(tokenizer, code))}"

    def csv_rows(self, stats: CorpusStats) -> tuple[list[str], list[list[object]]]:
        head = ["code", "language", "latitude", "longitude", *(f"{t} premium" for t in stats.tokenizers)]
        rows: list[list[object]] = []
        for t in stats.corpus:
            lang = t.language
            if lang.located:
                rows.append(
                    [
                        t.code,
                        lang.name,
                        lang.latitude,
                        lang.longitude,
                        *(stats.premium(tok, t.code) for tok in stats.tokenizers),
                    ]
                )
        return head, rows


__all__ = ["DOTS_PER_STEP", "DOT_SIZE", "SCALE_TOP", "MapPage", "coast", "scale_colors"]
