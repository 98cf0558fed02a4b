"""Across languages: grouped bars of token counts, bytes/token or premium per sample and tokenizer.

A standalone widget; the main window docks it and calls :meth:`LanguagesView.set_tokenizers`.
Counting runs in a worker with progress and cancel; the plot and the table show the same
numbers (the table exports as CSV, the plot as PNG or SVG).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QCursor, QImage, QPaintDevice, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer
from bpeinspect.core.analysis.samples import LANGUAGES, Sample, code_samples, load_samples
from bpeinspect.core.analysis.stats import StatsTable, TextStats, compute_stats
from bpeinspect.core.io.atomic import atomic_path
from bpeinspect.gui.concurrency import Jobs, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.palette import app_colors

# key -> (menu text, axis label, value of a row)
METRICS: dict[str, tuple[str, str, Callable[[TextStats], float]]] = {
    "tokens": ("Token count", "tokens", lambda r: float(r.tokens)),
    "bytes_per_token": ("Bytes per token", "UTF-8 bytes per token", lambda r: r.bytes_per_token),
    "chars_per_token": ("Characters per token", "characters per token", lambda r: r.chars_per_token),
    "premium": ("Premium vs baseline", "tokens ÷ baseline tokens", lambda r: r.premium or 0.0),
}


def tokenizer_labels(toks: Sequence[Tokenizer]) -> list[str]:
    """Distinct display names: ``tok.name``, numbered when two share one."""
    labels: list[str] = []
    for i, t in enumerate(toks):
        base = t.name or f"tokenizer {i + 1}"
        label, n = base, 2
        while label in labels:
            label, n = f"{base} ({n})", n + 1
        labels.append(label)
    return labels


def sample_tooltip(name: str) -> str:
    lang = LANGUAGES.get(name)
    return f"{name} — {lang[0]} ({lang[1]} script)" if lang else name


class LanguagesView(QWidget):
    """Grouped bar chart plus table of per-sample statistics for 1–8 tokenizers."""

    sampleActivated = Signal(object)  # the Sample clicked in the plot or double-clicked in the table
    statsReady = Signal(object)  # the StatsTable after each completed run
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tokenizers: list[Tokenizer] = []
        self._labels: list[str] = []
        self._samples: list[Sample] = []
        self._stats: StatsTable | None = None
        self.jobs = Jobs(self)
        self._order: list[str] = []
        self._bars: list[pg.BarGraphItem] = []
        self._build()
        self.set_samples(load_samples(), "Bundled languages")

    # -- construction ----------------------------------------------------------------------

    def _build(self) -> None:
        self.source_box = QComboBox()
        self.source_box.addItems(["Bundled languages", "Bundled code & data", "Folder…"])
        self.source_box.activated.connect(self._on_source)
        self.metric_box = QComboBox()
        for key, (text, _, _) in METRICS.items():
            self.metric_box.addItem(text, key)
        self.metric_box.currentIndexChanged.connect(self._redraw)
        self.baseline_box = QComboBox()
        self.baseline_box.setToolTip("premium = a sample's tokens ÷ the baseline sample's tokens, per tokenizer")
        self.baseline_box.currentIndexChanged.connect(self._redraw)
        self.sort_box = QComboBox()
        self.sort_box.addItem("Sort by value", "value")
        self.sort_box.addItem("Sort by name", "name")
        self.sort_box.currentIndexChanged.connect(self._redraw)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.png_button = QPushButton("PNG…")
        self.svg_button = QPushButton("SVG…")
        self.csv_button = QPushButton("CSV…")
        self.png_button.clicked.connect(lambda: self._ask_export("png"))
        self.svg_button.clicked.connect(lambda: self._ask_export("svg"))
        self.csv_button.clicked.connect(lambda: self._ask_export("csv"))
        for b, what in ((self.png_button, "the plot as PNG"), (self.svg_button, "the plot as SVG")):
            b.setToolTip(f"Export {what}")
        self.csv_button.setToolTip("Export the table as CSV")
        top = QHBoxLayout()
        for w in (self.source_box, self.metric_box, QLabel("baseline"), self.baseline_box, self.sort_box):
            top.addWidget(w)
        top.addStretch(1)
        for w in (self.progress, self.cancel_button, self.png_button, self.svg_button, self.csv_button):
            top.addWidget(w)
        self.status = ToneLabel()
        self.status.setWordWrap(True)

        self.plot = pg.PlotWidget(enableMenu=False)  # its context menus cost half of making it
        self.plot.setMinimumHeight(220)
        self.plot.setToolTip("Hover a bar for its numbers; click it to open the sample")
        item = self.plot.getPlotItem()
        item.showGrid(y=True, alpha=0.25)
        item.setMenuEnabled(False)
        item.getViewBox().setMouseEnabled(x=True, y=False)
        self.legend = item.addLegend(offset=(60, 10), labelTextSize="10pt")
        self.baseline_line = pg.InfiniteLine(pos=1.0, angle=0)
        self._apply_theme()
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.plot.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.cellDoubleClicked.connect(lambda row, _col: self._activate(self._order[row]))

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.table)
        split.setSizes([400, 200])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        self._set_running(False)

    # -- public API --------------------------------------------------------------------------

    def set_tokenizers(self, tokenizers: Sequence[Tokenizer]) -> None:
        """Measure these tokenizers (bars in this order) and redraw when done."""
        self._tokenizers = list(tokenizers)
        self._labels = tokenizer_labels(self._tokenizers)
        self.start()

    def set_samples(self, samples: Sequence[Sample], title: str = "") -> None:
        """Measure these samples (e.g. :func:`bpeinspect.core.analysis.samples.load_samples` of a folder)."""
        self._samples = list(samples)
        names = [s.name for s in self._samples]
        keep = self.baseline_box.currentData()
        self.baseline_box.blockSignals(True)
        self.baseline_box.clear()
        for s in self._samples:
            self.baseline_box.addItem(s.name, s.name)
        pick = keep if keep in names else ("en" if "en" in names else (names[0] if names else None))
        if pick is not None:
            self.baseline_box.setCurrentIndex(names.index(pick))
        self.baseline_box.blockSignals(False)
        if title:
            self.setWindowTitle(title)
        self.start()

    def set_folder(self, folder: str | os.PathLike[str]) -> None:
        """Measure a folder of the user's own files (one per language)."""
        try:
            samples = load_samples(folder)
        except ValueError as exc:
            self._show_error(str(exc))
            return
        self.set_samples(samples, str(folder))

    def set_metric(self, key: str) -> None:
        self.metric_box.setCurrentIndex(list(METRICS).index(key))

    def set_baseline(self, name: str) -> None:
        self.baseline_box.setCurrentIndex(self.baseline_box.findData(name))

    def stats(self) -> StatsTable | None:
        """The last completed counts, with premiums against the chosen baseline."""
        if self._stats is None:
            return None
        base = self.baseline_box.currentData()
        return self._stats.with_baseline(base if base in self._stats.sources else None)

    def series(self) -> dict[str, tuple[list[float], list[float]]]:
        """What the plot shows: tokenizer label -> (bar x positions, bar heights)."""
        return {b.name(): (list(b.opts["x"]), list(b.opts["height"])) for b in self._bars}

    def categories(self) -> list[str]:
        """Sample names along the x axis, in plot order."""
        return list(self._order)

    def is_running(self) -> bool:
        return self.jobs.pending()

    # -- the worker ----------------------------------------------------------------------------

    def start(self) -> None:
        """(Re)start counting; an older run is cancelled and its results ignored."""
        self.cancel()
        if not self._tokenizers or not self._samples:
            self._stats = None
            self._redraw()
            return
        pairs = list(zip(self._labels, self._tokenizers))
        samples = list(self._samples)
        self.jobs.submit(
            "count", compute_stats, pairs, samples,
            on_progress=self._on_progress, on_returned=self._on_done,
            on_errored=lambda exc: (self._set_running(False), self._show_error(describe_error(exc))),
            on_aborted=lambda: self._set_running(False),
        )  # fmt: skip
        self.status.setText(f"Counting {len(samples)} samples × {len(pairs)} tokenizers…")
        self.status.set_tone(None)
        self._set_running(True)

    def cancel(self) -> None:
        if self.jobs.pending():
            self.jobs.cancel_all()
            self._set_running(False)
            self.status.setText("Cancelled.")

    def _set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)

    def _on_progress(self, done: int, total: int) -> None:
        if total:
            self.progress.setValue(int(1000 * done / total))

    def _on_done(self, table: StatsTable) -> None:
        self._set_running(False)
        self._stats = table
        total = sum(r.bytes for r in table.rows) // max(1, len(table.tokenizers))
        self.status.setText(f"{len(table.sources)} samples × {len(table.tokenizers)} tokenizers, {total:,} bytes each.")
        self._redraw()
        self.statsReady.emit(self.stats())

    def _show_error(self, message: str) -> None:
        self.status.setText(message)
        self.status.set_tone("error")
        self.failed.emit(message)

    # -- drawing --------------------------------------------------------------------------------

    def _metric(self) -> str:
        return self.metric_box.currentData()

    def _apply_theme(self) -> None:
        """The plot's background, text, axes and guide line in the theme's colours."""
        c = app_colors()
        self._dark = c.dark
        item = self.plot.getPlotItem()
        self.plot.setBackground(c.plot_bg)
        self.legend.setBrush(pg.mkBrush(QColor(c.plot_legend_bg)))
        self.legend.setLabelTextColor(c.plot_text)
        for ax in ("left", "bottom"):
            item.getAxis(ax).setTextPen(c.plot_text)
            item.getAxis(ax).setPen(c.plot_axis)
        self.baseline_line.setPen(pg.mkPen(c.plot_guide, style=Qt.PenStyle.DashLine))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and app_colors().dark != self._dark:
            self._apply_theme()
            self._redraw()
        super().changeEvent(event)

    def _redraw(self) -> None:
        c = app_colors()
        item = self.plot.getPlotItem()
        for b in self._bars:
            item.removeItem(b)
        self._bars = []
        self.legend.clear()
        item.removeItem(self.baseline_line)
        table = self.stats()
        self.baseline_box.setEnabled(self._metric() == "premium")
        if table is None or not table.rows:
            self._order = []
            self.table.setRowCount(0)
            return
        key = self._metric()
        _, axis_label, value = METRICS[key]
        labels = table.tokenizers
        self._order = self._sorted_sources(table, value)
        n = len(labels)
        width = 0.8 / n
        for k, label in enumerate(labels):
            xs = [i - 0.4 + width * (k + 0.5) for i in range(len(self._order))]
            hs = [value(table.get(label, src)) for src in self._order]
            bar = pg.BarGraphItem(
                x=xs, height=hs, width=width * 0.92, brush=c.series[k % len(c.series)], pen=pg.mkPen(None), name=label
            )
            item.addItem(bar)  # named items join the legend by themselves
            self._bars.append(bar)
        if key == "premium":
            item.addItem(self.baseline_line)
        item.getAxis("bottom").setTicks([[(i, src) for i, src in enumerate(self._order)]])
        item.setLabel("left", axis_label, color=c.plot_text)
        item.setLabel("bottom", "sample", color=c.plot_text)
        item.setTitle(f"{METRICS[key][0]} per sample", color=c.plot_text)
        top = max((h for b in self._bars for h in b.opts["height"]), default=1.0)
        item.setXRange(-0.6, len(self._order) - 0.4, padding=0)
        item.setYRange(0, top * 1.12, padding=0)
        self._fill_table(table)

    def _sorted_sources(self, table: StatsTable, value: Callable[[TextStats], float]) -> list[str]:
        sources = table.sources
        if self.sort_box.currentData() == "name":
            return sorted(sources)
        first = table.tokenizers[0]
        return sorted(sources, key=lambda s: (value(table.get(first, s)), s))

    def _fill_table(self, table: StatsTable) -> None:
        labels = table.tokenizers
        heads = ["sample", "language", "script", "bytes", "chars"]
        for label in labels:
            heads += [f"{label}\ntokens", f"{label}\nbytes/token", f"{label}\npremium"]
        self.table.clear()
        self.table.setColumnCount(len(heads))
        self.table.setHorizontalHeaderLabels(heads)
        self.table.setRowCount(len(self._order))
        for row, src in enumerate(self._order):
            lang = LANGUAGES.get(src, ("", ""))
            first = table.get(labels[0], src)
            cells: list[object] = [src, lang[0], lang[1], first.bytes, first.chars]
            for label in labels:
                r = table.get(label, src)
                cells += [r.tokens, round(r.bytes_per_token, 2), round(r.premium, 2) if r.premium is not None else ""]
            for col, v in enumerate(cells):
                it = QTableWidgetItem()
                it.setData(Qt.ItemDataRole.DisplayRole, v)
                if not isinstance(v, str):
                    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, it)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    # -- hover, click, export -------------------------------------------------------------------

    def bar_at(self, x: float, y: float) -> tuple[str, str] | None:
        """``(tokenizer label, sample name)`` of the bar under view coordinates ``(x, y)``."""
        if not self._bars or not self._order:
            return None
        i = round(x)
        if not 0 <= i < len(self._order):
            return None
        k = int((x - i + 0.4) / (0.8 / len(self._bars)))
        if not 0 <= k < len(self._bars):
            return None
        height = self._bars[k].opts["height"][i]
        if not min(0, height) <= y <= max(0, height):
            return None
        return self._bars[k].name(), self._order[i]

    def tooltip_for(self, tokenizer: str, source: str) -> str:
        table = self.stats()
        r = table.get(tokenizer, source) if table else None
        if r is None:
            return ""
        lines = [sample_tooltip(source), f"{tokenizer}: {r.tokens:,} tokens"]
        lines.append(f"{r.bytes:,} bytes, {r.chars:,} characters")
        lines.append(f"{r.bytes_per_token:.2f} bytes/token, {r.chars_per_token:.2f} chars/token")
        if r.premium is not None:
            lines.append(f"premium {r.premium:.2f}× {table.baseline}")
        return "\n".join(lines)

    def _on_mouse_moved(self, pos: QPointF) -> None:
        p = self.plot.getPlotItem().getViewBox().mapSceneToView(pos)
        hit = self.bar_at(p.x(), p.y())
        if hit is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), self.tooltip_for(*hit), self.plot)

    def _on_mouse_clicked(self, event) -> None:
        p = self.plot.getPlotItem().getViewBox().mapSceneToView(event.scenePos())
        hit = self.bar_at(p.x(), p.y())
        if hit is not None:
            self._activate(hit[1])

    def _activate(self, name: str) -> None:
        sample = next((s for s in self._samples if s.name == name), None)
        if sample is not None:
            self.sampleActivated.emit(sample)

    def _on_source(self, index: int) -> None:
        if index == 0:
            self.set_samples(load_samples(), "Bundled languages")
        elif index == 1:
            self.set_samples(code_samples(), "Bundled code & data")
        else:
            folder = QFileDialog.getExistingDirectory(self, "Folder of samples (one file per language)")
            if folder:
                self.set_folder(folder)

    def _ask_export(self, kind: str) -> None:
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV table (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", f"languages.{kind}", filters[kind])
        if not path:
            return
        try:
            {"png": self.export_png, "svg": self.export_svg, "csv": self.export_csv}[kind](path)
        except (OSError, ValueError) as exc:
            self._show_error(f"{path}: could not export: {exc}")

    def export_csv(self, path: str | os.PathLike[str]) -> None:
        """Write the table (long form, one row per tokenizer × sample) as CSV, atomically."""
        table = self.stats()
        if table is None:
            raise ValueError("nothing measured yet")
        with atomic_path(path, suffix=Path(path).suffix) as tmp:
            tmp.write_text(table.to_csv(), encoding="utf-8")

    def export_png(self, path: str | os.PathLike[str], scale: int = 2) -> None:
        """Write the plot as a PNG image (``scale`` × its size on screen), atomically."""

        def write(tmp: Path) -> None:
            image = QImage(self.plot.viewport().size() * scale, QImage.Format.Format_ARGB32)
            image.fill(QColor(app_colors().plot_bg))
            self._render_scene(image)
            if not image.save(str(tmp), "PNG"):
                raise OSError("could not write the PNG")

        with atomic_path(path, suffix=Path(path).suffix) as tmp:
            write(tmp)

    def export_svg(self, path: str | os.PathLike[str]) -> None:
        """Write the plot as an SVG image, atomically."""

        # pyqtgraph's SVGExporter cannot parse the paths Qt 6.8+ writes; render through QSvgGenerator.
        def write(tmp: Path) -> None:
            gen = QSvgGenerator()
            gen.setFileName(str(tmp))
            size = self.plot.viewport().size()
            gen.setSize(size)
            gen.setViewBox(QRect(QPoint(0, 0), size))
            gen.setTitle(self.plot.getPlotItem().titleLabel.text)
            gen.setDescription("bpeinspect: tokens across languages")
            self._render_scene(gen)

        with atomic_path(path, suffix=Path(path).suffix) as tmp:
            write(tmp)

    def _render_scene(self, device: QPaintDevice) -> None:
        # The scene drawn into the device's whole area: a vector zoom, so text stays in proportion.
        source = self.plot.mapToScene(self.plot.viewport().rect()).boundingRect()
        painter = QPainter(device)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            self.plot.scene().render(painter, QRectF(0, 0, device.width(), device.height()), source)
        finally:
            painter.end()

    def closeEvent(self, event) -> None:
        self.cancel()
        super().closeEvent(event)

