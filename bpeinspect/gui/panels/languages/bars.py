"""Grouped bars per text for a small corpus: token count, bytes/token, characters/token or premium.

A bar per text and tokenizer is readable for a few dozen texts (the fable, the code and data
samples, a folder of one's own), not for 500: past :data:`MAX_BARS` texts the page says to use
the rank, script and map plots instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QWidget

from bpeinspect.core.analysis import CorpusStats, StatsTable, TextStats
from bpeinspect.gui.overlay.palette import UiColors
from bpeinspect.gui.panels.languages.export import baseline_name, premium_text
from bpeinspect.gui.panels.languages.plotbase import PlotPage

MAX_BARS = 60
# key -> (menu text, axis label, value of a row)
METRICS: dict[str, tuple[str, str, Callable[[TextStats], float]]] = {
    "tokens": ("Token count", "tokens", lambda r: float(r.tokens)),
    "bytes_per_token": ("Bytes per token", "UTF-8 bytes per token", lambda r: r.bytes_per_token),
    "chars_per_token": ("Characters per token", "characters per token", lambda r: r.chars_per_token),
    "premium": ("Premium vs baseline", "tokens ÷ baseline tokens", lambda r: r.premium or 0.0),
}


def _cell(table: StatsTable, tokenizer: str, source: str) -> TextStats:
    """The row of ``tokenizer`` on ``source``: every tokenizer measures every text."""
    row = table.get(tokenizer, source)
    if row is None:
        raise KeyError(f"{tokenizer} has no figures for {source}")
    return row


class BarsPage(PlotPage):
    """Bars per text, grouped by tokenizer, sorted by value under the first tokenizer or by name."""

    title = "Bars"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.metric_box = QComboBox()
        for key, (text, _, _) in METRICS.items():
            self.metric_box.addItem(text, key)
        self.sort_box = QComboBox()
        self.sort_box.addItem("Sort by value", "value")
        self.sort_box.addItem("Sort by name", "name")
        self.metric_box.currentIndexChanged.connect(self.redraw)
        self.sort_box.currentIndexChanged.connect(self.redraw)
        bar = QHBoxLayout()
        bar.addWidget(self.metric_box)
        bar.addWidget(self.sort_box)
        bar.addStretch(1)
        self.box.insertLayout(0, bar)
        self.item.getViewBox().setMouseEnabled(x=True, y=False)
        self.order: list[str] = []  # text codes along the x axis
        self.bars: list[pg.BarGraphItem] = []

    def set_metric(self, key: str) -> None:
        self.metric_box.setCurrentIndex(self.metric_box.findData(key))

    def measure(self) -> str:
        return self.metric_box.currentData()

    def empty_reason(self, stats: CorpusStats | None) -> str:
        if stats is None or not stats.tokenizers:
            return "Nothing counted yet."
        if len(stats.corpus) > MAX_BARS:
            return (
                f"{len(stats.corpus)} texts are too many for bars (up to {MAX_BARS}): see Rank, Scripts, "
                "Map and Table, or filter by script or region."
            )
        if not len(stats.corpus):
            return "No language passes the filters."
        if self.measure() == "premium" and stats.baseline is None:
            return "Premiums need a baseline: choose a language to compare with."
        return ""

    def redraw(self) -> None:
        self.bars = []
        self.order = []
        super().redraw()

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        table = stats.table()
        _, axis_label, value = METRICS[self.measure()]
        labels = table.tokenizers
        self.order = self._sorted(table, value)
        n = len(labels)
        width = 0.8 / n
        xs_all, ys_all, keys = [], [], []
        for k, label in enumerate(labels):
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(self.order))]
            hs = [value(_cell(table, label, src)) for src in self.order]
            bar = pg.BarGraphItem(
                x=xs, height=hs, width=width * 0.92, brush=c.series[k % len(c.series)], pen=pg.mkPen(None), name=label
            )
            self.item.addItem(bar)  # named items join the legend by themselves
            yield
            self.bars.append(bar)
            xs_all += xs
            ys_all += hs
            keys += [(src, label) for src in self.order]
        self.targets.set(xs_all, ys_all, keys)
        if self.measure() == "premium":
            self.guide(1.0)
        self.item.getAxis("bottom").setTicks([[(i, src) for i, src in enumerate(self.order)]])
        self.item.getAxis("left").setTicks(None)
        top = max((h for b in self.bars for h in b.opts["height"]), default=1.0)
        self.item.setXRange(-0.6, len(self.order) - 0.4, padding=0)
        self.item.setYRange(0, top * 1.12, padding=0)
        self.set_labels(f"{METRICS[self.measure()][0]} per text", axis_label, "text")

    def _sorted(self, table: StatsTable, value: Callable[[TextStats], float]) -> list[str]:
        if self.sort_box.currentData() == "name":
            return sorted(table.sources)
        first = table.tokenizers[0]
        return sorted(table.sources, key=lambda s: (value(_cell(table, first, s)), s))

    def bar_at(self, x: float, y: float) -> tuple[str, str] | None:
        """``(tokenizer, text code)`` of the bar under view coordinates ``(x, y)``."""
        if not self.bars or not self.order:
            return None
        i = round(x)
        if not 0 <= i < len(self.order):
            return None
        k = int((x - i + 0.4) / (0.8 / len(self.bars)))
        if not 0 <= k < len(self.bars):
            return None
        height = self.bars[k].opts["height"][i]
        if not min(0, height) <= y <= max(0, height):
            return None
        return self.bars[k].name(), self.order[i]

    def hit(self, scene_pos) -> tuple[str, str] | None:
        vb = self.item.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        found = self.bar_at(p.x(), p.y())
        return None if found is None else (found[1], found[0])

    def series(self) -> dict[str, tuple[list[float], list[float]]]:
        """What the plot shows: tokenizer -> (bar x positions, bar heights)."""
        return {b.name(): (list(b.opts["x"]), list(b.opts["height"])) for b in self.bars}

    def heading(self, code: str, tokenizer: str) -> str:
        assert self.stats is not None
        p = self.stats.premium(tokenizer, code)
        vs = f", {premium_text(p)} {baseline_name(self.stats)}" if p is not None else ""
        return f"{tokenizer}: {self.stats.counts[tokenizer, code].tokens:,} tokens{vs}"

    def csv_maker(self) -> Callable[[], str]:
        stats = self.stats
        if stats is None or self.empty_reason(stats):
            raise ValueError("nothing to export yet")
        return lambda: stats.table().to_csv()  # stats --csv's columns, a row per text and tokenizer


__all__ = ["MAX_BARS", "METRICS", "BarsPage"]
