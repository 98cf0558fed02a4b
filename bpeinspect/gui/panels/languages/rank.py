"""Two plots of premiums that stay readable with 500 languages: the rank plot and the script plot.

The **rank plot** sorts each tokenizer's premiums from the most costly language down and draws
one line per tokenizer: a fairer tokenizer's line lies lower and flatter. It can rank by a
corpus measure instead (fertility, Rényi efficiency, utilization, characters per token). The **script plot**
has a row per script (the costliest first under the chosen tokenizer) and, per tokenizer, a box
from the first to the third quartile, the median as a bar, and every language as a dot.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel

from bpeinspect.core.analysis import METRICS, CorpusStats, percentile
from bpeinspect.gui.overlay.palette import UiColors
from bpeinspect.gui.panels.languages.export import baseline_name, log2_premium, premium_text, premium_ticks
from bpeinspect.gui.panels.languages.plotbase import PlotPage

MEASURED = ("fertility", "renyi", "utilization")  # the METRICS that need each text's ids counted
ROW_PIXELS = 22  # the script plot's height per script, so that every name can be read


class RankPage(PlotPage):
    """One figure against rank, one line per tokenizer: the premium by default (the baseline
    language, 1× by definition, left out), or one of the corpus measures (:data:`METRICS`)."""

    title = "Rank"
    metricChosen = Signal(str)  # a measure other than the premium: the view measures the corpus if it has not

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.measure = "premium"
        self.metric_box = QComboBox()
        self.metric_box.setToolTip(
            "what the languages are ranked by (fertility, Rényi efficiency and "
            "utilization: the corpus measures, counted when first chosen)"
        )
        for key, label in METRICS.items():
            self.metric_box.addItem(label, key)
        self.metric_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.metric_box.currentIndexChanged.connect(lambda _: self.set_metric(self.metric_box.currentData()))
        row = QHBoxLayout()
        row.addWidget(QLabel("Rank by"))
        row.addWidget(self.metric_box)
        row.addStretch(1)
        self.box.insertLayout(0, row)
        self.item.getViewBox().setMouseEnabled(x=True, y=False)

    def set_metric(self, metric: str) -> None:
        """Rank by ``metric`` (a key of :data:`METRICS`)."""
        if metric == self.measure:
            return
        self.measure = metric
        self.metric_box.setCurrentIndex(self.metric_box.findData(metric))
        if metric in MEASURED:
            self.metricChosen.emit(metric)
        self.redraw()

    def empty_reason(self, stats: CorpusStats | None) -> str:
        if self.measure == "premium" or stats is None or not stats.tokenizers:
            return super().empty_reason(stats)
        if self.measure in MEASURED and not stats.has_measures():
            return "Measuring the corpus: fertility, Rényi efficiency and utilization need each text's token ids…"
        return "No language passes the filters." if not len(stats.corpus) else ""

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        if self.measure != "premium":
            yield from self._draw_metric(stats)
            return
        hi, n = 1.0, 1
        xs: list[float] = []
        ys: list[float] = []
        keys: list[tuple[str, str]] = []
        for k, tok in enumerate(stats.tokenizers):
            codes, premiums = self.ranked(tok)
            x = np.arange(1, len(codes) + 1, dtype=float)
            y = np.array([log2_premium(p) for p in premiums])
            curve = pg.PlotDataItem(x, y, pen=pg.mkPen(self.series_color(k), width=2), name=tok)
            self.item.addItem(curve)
            yield
            xs.extend(x)
            ys.extend(y)
            keys.extend((code, tok) for code in codes)
            hi = max(hi, *premiums) if premiums else hi
            n = max(n, len(codes))
        self.targets.set(xs, ys, keys)
        lo = min((2.0**v for v in ys), default=1.0)
        self.item.getAxis("left").setTicks(premium_ticks(lo, hi))
        self.item.getAxis("bottom").setTicks(None)
        for level in (0.0, 1.0, 2.0):  # 1x (the baseline), 2x and 4x: the summary's thresholds
            self.guide(level, dashed=level == 0.0)
        self.item.setXRange(0, n + 1, padding=0.01)
        self.item.setYRange(math.log2(max(lo, 1 / 64)) - 0.1, math.log2(hi) + 0.2, padding=0)
        base = baseline_name(stats)
        self.set_labels(
            f"Premium vs {base}, languages from the most costly down",
            f"tokens ÷ {base} (log scale)",  # (short: the plot may be 220 px high)
            "rank (1 = most costly)",
        )

    def _draw_metric(self, stats: CorpusStats) -> Iterator[None]:
        """A measure on a linear scale, each line from its highest value down."""
        xs: list[float] = []
        ys: list[float] = []
        keys: list[tuple[str, str]] = []
        n = 1
        for k, tok in enumerate(stats.tokenizers):
            codes, values = self.ranked(tok)
            x = np.arange(1, len(codes) + 1, dtype=float)
            y = np.asarray(values, dtype=float)
            self.item.addItem(pg.PlotDataItem(x, y, pen=pg.mkPen(self.series_color(k), width=2), name=tok))
            yield
            xs.extend(x)
            ys.extend(y)
            keys.extend((code, tok) for code in codes)
            n = max(n, len(codes))
        self.targets.set(xs, ys, keys)
        self.item.getAxis("left").enableAutoSIPrefix(False)  # 0.35, not "350 (x0.001)"
        self.item.getAxis("left").setTicks(None)
        self.item.getAxis("bottom").setTicks(None)
        self.item.setXRange(0, n + 1, padding=0.01)
        if ys:
            lo, hi = min(ys), max(ys)
            self.item.setYRange(min(lo, 0.0), hi * 1.05 if hi > 0 else 1.0, padding=0)
        label = METRICS[self.measure]
        note = " (not defined where words are not separated by spaces)" if self.measure == "fertility" else ""
        self.set_labels(
            f"{label[:1].upper()}{label[1:]}, languages from the highest down{note}", label, "rank (1 = highest)"
        )

    def ranked(self, tokenizer: str, stats: CorpusStats | None = None) -> tuple[list[str], list[float]]:
        """The codes and figures of one line, the highest first (premiums without the baseline)."""
        stats = stats or self.stats
        assert stats is not None
        s = stats.metric_series(tokenizer, self.measure)
        keep = [i for i, code in enumerate(s.codes) if code != stats.baseline or self.measure != "premium"]
        return [s.codes[i] for i in keep], [s.premiums[i] for i in keep]

    def heading(self, code: str, tokenizer: str) -> str:
        codes, _ = self.ranked(tokenizer)
        return f"rank {codes.index(code) + 1} of {len(codes)} under {tokenizer}"

    def csv_rows(self, stats: CorpusStats) -> tuple[list[str], list[list[object]]]:
        rows: list[list[object]] = []
        for tok in stats.tokenizers:
            for rank, (code, p) in enumerate(zip(*self.ranked(tok, stats)), 1):
                lang = stats.corpus.language(code)
                rows.append([tok, rank, code, lang.name, lang.script, p])
        return ["tokenizer", "rank", "code", "language", "script", self.measure], rows


def _jitter(code: str) -> float:
    """A fixed offset in [-0.5, 0.5) per language, so the dots of one script spread out the same way each time."""
    return (zlib.crc32(code.encode()) % 1000) / 1000 - 0.5


class ScriptPage(PlotPage):
    """A row per script: each tokenizer's quartile box, median and dots."""

    title = "Scripts"
    scrolls = True
    legend_offset = (10, 10)  # top left: the costliest scripts' rows are empty on the left

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        vb = self.item.getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=True, y=False)
        self.item.showAxis("top")
        self.rows: list[str] = []  # scripts, top to bottom

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        focus = self.focus if self.focus in stats.tokenizers else stats.tokenizers[0]
        order = stats.script_groups(focus)
        self.rows = [g.script for g in order]
        row_of = {s: i for i, s in enumerate(self.rows)}
        n = len(stats.tokenizers)
        band = 0.8 / n
        xs: list[float] = []
        ys: list[float] = []
        keys: list[tuple[str, str]] = []
        hi = lo = 1.0
        for k, tok in enumerate(stats.tokenizers):
            offset = (k - (n - 1) / 2) * band
            q1s, q3s, centres, medians = [], [], [], []
            dot_x, dot_y = [], []
            for g in stats.script_groups(tok):
                y = row_of[g.script] + offset
                q1s.append(log2_premium(percentile(g.premiums, 25)))
                q3s.append(log2_premium(percentile(g.premiums, 75)))
                medians.append(log2_premium(g.median))
                centres.append(y)
                for code, p in zip(g.codes, g.premiums):
                    dot_x.append(log2_premium(p))
                    dot_y.append(y + _jitter(code) * band * 0.7)
                    keys.append((code, tok))
                hi, lo = max(hi, *g.premiums), min(lo, *g.premiums)
            colour = self.series_color(k)
            boxes = pg.BarGraphItem(
                x0=q1s,
                x1=q3s,
                y=centres,
                height=band * 0.85,
                brush=self.series_color(k, 60),
                pen=pg.mkPen(colour, width=1),
            )
            self.item.addItem(boxes)
            yield
            mx = np.repeat(medians, 3)
            my = np.column_stack(
                [np.array(centres) - band * 0.45, np.array(centres) + band * 0.45, np.full(len(centres), np.nan)]
            ).ravel()
            mx[2::3] = np.nan
            self.item.addItem(pg.PlotCurveItem(mx, my, connect="finite", pen=pg.mkPen(colour, width=3)))
            yield
            dots = pg.ScatterPlotItem(dot_x, dot_y, size=4, pen=None, brush=self.series_color(k, 170), name=tok)
            self.item.addItem(dots)
            yield
            xs.extend(dot_x)
            ys.extend(dot_y)
        self.targets.set(xs, ys, keys)
        counts = {g.script: len(g.codes) for g in order}
        ticks = [(i, f"{s} ({counts[s]})") for i, s in enumerate(self.rows)]
        self.item.getAxis("left").setTicks([ticks, []])
        self.item.getAxis("bottom").setTicks(premium_ticks(lo, hi))
        self.item.getAxis("top").setTicks(premium_ticks(lo, hi))
        self.guide(0.0, angle=90)
        self.item.setYRange(-0.6, len(self.rows) - 0.4, padding=0)
        self.item.setXRange(math.log2(max(lo, 1 / 64)) - 0.2, math.log2(hi) + 0.2, padding=0)
        self.plot.setMinimumHeight(ROW_PIXELS * len(self.rows) + 110)
        base = baseline_name(stats)
        self.set_labels(
            f"Premium vs {base} per script (ordered by the median under {focus})",
            "",
            f"tokens ÷ {base} tokens (log scale); box: middle half, bar: median",
        )

    def heading(self, code: str, tokenizer: str) -> str:
        assert self.stats is not None
        p = self.stats.premium(tokenizer, code)
        return f"{tokenizer}: {premium_text(p)}"

    def csv_rows(self, stats: CorpusStats) -> tuple[list[str], list[list[object]]]:
        rows: list[list[object]] = []
        for tok in stats.tokenizers:
            for g in stats.script_groups(tok):
                for code, p in zip(g.codes, g.premiums):
                    rows.append([g.script, tok, code, stats.corpus.language(code).name, p, g.median])
        return ["script", "tokenizer", "code", "language", "premium", "script median"], rows


__all__ = ["ROW_PIXELS", "RankPage", "ScriptPage"]
