"""Dataset mode: the tokens of a whole fine-tuning set (``.jsonl`` or ``.json`` records) under
every open tokenizer.

Opening a file looks at its first records on the worker and names their shape (chat messages,
prompt/completion, prompt/response, text...); when none fits, a list of the records' text
fields lets the user pick what to count. The counting streams on the worker (in a process pool
for big files) with a progress bar and Cancel. Then: tokens per record as a histogram (one
curve per tokenizer), the totals per role or field with the chat template's tokens (once per
record), and the longest records, which open in the chat panel or the text box when clicked.

>>> view = DatasetView(); view.set_tokenizers([tok], ["o200k_base"])   # doctest: +SKIP
>>> view.open_file("train.jsonl")                                      # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer, VocabularyError, display_label
from bpeinspect.core.dataset import (
    TEMPLATE_PART,
    DatasetError,
    DatasetStats,
    Shape,
    Target,
    conversation,
    count_dataset,
    field_texts,
    fields_shape,
    peek_shape,
)
from bpeinspect.core.io import detect_format, is_builtin
from bpeinspect.core.pool import BACKGROUND_NICENESS
from bpeinspect.gui.concurrency import Jobs, ProgressBar, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.palette import app_colors
from bpeinspect.gui.registry import distinct_names, follow_rows, specs_of, tokenizers_of
from bpeinspect.gui.turns import later

if TYPE_CHECKING:
    from bpeinspect.gui.panels.chat import ChatView
    from bpeinspect.gui.panels.context import PanelContext

LONGEST = 50  # records listed
PLOT_MIN_HEIGHT = 120  # px
TABLE_MIN_HEIGHT = 48  # px: a header and a row
POOL_FROM_BYTES = 8 << 20  # files this big are counted on every core
FILTER = "Datasets (*.jsonl *.json *.ndjson *.jsonlines);;All files (*)"


def peek(path: str) -> Any:
    """The shape guess of the file's first records (what :meth:`DatasetView.open_file` asks first)."""
    reader, guess = peek_shape(path)
    close = getattr(reader, "close", None)
    if close is not None:
        close()
    if guess.shape is None and guess.looked_at and reader.kind == "json object":  # a tokenizer.json?
        try:
            kind = detect_format(path)
        except VocabularyError:
            return guess  # records of fields to pick from
        raise DatasetError(
            f"{Path(path).name} is a tokenizer file ({kind}), not a dataset: it has no text fields to count. "
            "Open it with Tokenizers ▸ Open tokenizer file…"
        )
    return guess


def _home_shortened(path: str) -> str:
    """``path`` for a label: the home folder as ``~``, control and invisible characters shown.

    >>> import os; _home_shortened(os.path.join(os.path.expanduser("~"), "data", "chats.jsonl"))
    '~/data/chats.jsonl'
    """
    home = os.path.expanduser("~").rstrip(os.sep)
    if home and (path == home or path.startswith(home + os.sep)):
        path = "~" + path[len(home) :]
    return display_label(path)


def _reopenable(spec: str) -> str | None:
    """``spec`` if another process can open the same tokenizer from it (a built-in or a file)."""
    return spec if is_builtin(spec) or (spec and os.path.exists(spec)) else None


def _labels(toks: Sequence[Tokenizer], specs: Sequence[str]) -> list[str]:
    """Distinct display names: ``tok.name`` (else its file's), numbered when two share one."""
    return distinct_names(t.name or Path(s).name or f"tokenizer {i + 1}" for i, (t, s) in enumerate(zip(toks, specs)))


class DatasetView(QWidget):
    """The dataset panel (see the module docstring)."""

    recordActivated = Signal(object, object)  # the record (JSON data), the Shape it was counted as
    statsReady = Signal(object)  # the DatasetStats of a finished (or cancelled) run, once drawn
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path: str | None = None
        self.shape: Shape | None = None
        self.stats: DatasetStats | None = None
        self._unannounced = False  # a finished run not yet said (statsReady) once drawn
        self._toks: list[Tokenizer] = []
        self._specs: list[str] = []
        self._curves: list[pg.PlotDataItem] = []
        self._counting: Any = None  # the counting Worker
        self.jobs = Jobs(self)
        self._build()
        self._set_running(False)

    # -- construction ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.open_button = QPushButton("Open dataset…")
        self.open_button.setToolTip(
            "A .jsonl or .json file of records: chat messages, prompt/completion, prompt/response, text…"
        )
        self.open_button.clicked.connect(self._ask_open)
        self.file_label = QLabel("No dataset open.")
        self.progress = ProgressBar()
        self.progress.setMaximumWidth(180)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.file_label, 1)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        self.status = ToneLabel()
        self.status.setWordWrap(True)

        self.fields_box = QWidget()  # shown when the shape is unclear: a check box per text field
        self.field_boxes: list[QCheckBox] = []
        self.count_button = QPushButton("Count these fields")
        self.count_button.clicked.connect(self._count_fields)
        self.fields_layout = QHBoxLayout(self.fields_box)
        self.fields_layout.setContentsMargins(0, 0, 0, 0)
        self.fields_layout.addWidget(QLabel("Fields to count:"))
        self.fields_layout.addStretch(1)
        self.fields_layout.addWidget(self.count_button)
        self.fields_box.hide()

        self.plot = pg.PlotWidget(enableMenu=False)  # its context menus cost half of making it
        # low enough that, docked below the text of a 700 px window beside the other panels, the
        # window keeps its height (180 px made it grow past the screen)
        self.plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        self.legend = item.addLegend(offset=(-10, 10), labelTextSize="10pt")
        self.legend.setVisible(False)  # an empty box until something is drawn
        self._apply_theme()

        self.totals = QTableWidget()
        self.totals.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.totals.verticalHeader().setVisible(False)
        self.longest = QTableWidget()
        self.longest.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.longest.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.longest.setWordWrap(False)  # one line a record: a long beginning is cut with "…", not wrapped
        self.longest.verticalHeader().setVisible(False)
        self.longest.setToolTip("Click a record to open it")
        self.longest.cellClicked.connect(lambda row, _col: self.open_record(row))
        for table in (self.totals, self.longest):
            table.setMinimumHeight(TABLE_MIN_HEIGHT)
        tables = QWidget()
        tlay = QVBoxLayout(tables)
        tlay.setContentsMargins(0, 0, 0, 0)
        tlay.addWidget(QLabel("Totals"))
        tlay.addWidget(self.totals, 1)
        tlay.addWidget(QLabel("Longest records (click one to open it)"))
        tlay.addWidget(self.longest, 2)

        # the plot stands behind a note until a dataset is counted: painting its empty axes was
        # most of the panel's first show
        self.plot_note = QLabel("Tokens per record, drawn here once a dataset is counted.")
        self.plot_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.plot_note.setWordWrap(True)
        self.plot_note.setMinimumHeight(PLOT_MIN_HEIGHT)
        self.plot_stack = QStackedWidget()
        self.plot_stack.addWidget(self.plot_note)
        self.plot_stack.addWidget(self.plot)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot_stack)
        split.addWidget(tables)
        split.setSizes([500, 600])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(self.fields_box)
        lay.addWidget(split, 1)

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizers(self, toks: Sequence[Tokenizer], specs: Sequence[str]) -> None:
        """Count with these (in this order); an open dataset is counted again."""
        if list(toks) == self._toks and list(specs) == self._specs:
            return
        self._toks, self._specs = list(toks), list(specs)
        if self.path is not None and self.shape is not None:
            self.start()

    def open_file(self, path: str | os.PathLike[str]) -> None:
        """Look at the file's records (on the worker), then count them or ask for fields."""
        self.cancel(quiet=True)
        self.path, self.shape, self.stats = str(path), None, None
        self.file_label.setText(_home_shortened(self.path))
        self.file_label.setToolTip(display_label(self.path))
        self.fields_box.hide()
        self._say("Reading the first records…", None)
        self.jobs.submit("peek", peek, self.path, on_returned=self._peeked, on_errored=self._failed)

    def count_fields(self, fields: Sequence[str]) -> None:
        """Count the text of these fields of each record."""
        if fields:
            self.shape = fields_shape(*fields)
            self.fields_box.hide()
            self.start()

    def start(self) -> None:
        """Count the open dataset with every tokenizer (an older run is cancelled)."""
        self.cancel(quiet=True)
        if self.path is None or self.shape is None:
            return
        if not self._toks:
            self._say("Open a tokenizer to count with.", "note")
            return
        targets = [
            Target(label, tok, spec=_reopenable(spec))
            for label, tok, spec in zip(_labels(self._toks, self._specs), self._toks, self._specs)
        ]
        try:
            big = os.path.getsize(self.path) >= POOL_FROM_BYTES
        except OSError:
            big = False
        self._counting = self.jobs.submit(
            "count",
            count_dataset,
            self.path,
            targets,
            shape=self.shape,
            longest=LONGEST,
            processes=None if big else 1,
            niceness=BACKGROUND_NICENESS,
            on_progress=self._on_progress,
            on_returned=self._done,
            on_errored=self._failed,
            on_aborted=lambda: self._set_running(False),
        )
        self._say(f"Counting {self.shape.label} with {len(targets)} tokenizer{'s' if len(targets) > 1 else ''}…", None)
        self._set_running(True)

    def cancel(self, quiet: bool = False) -> None:
        """Stop counting; what was counted so far is shown (marked as stopped early)."""
        if self.jobs.pending("count") and not quiet and self._counting is not None:
            self._counting.cancel()  # not detached: it stops at the next batch and returns what it has
            self.cancel_button.setEnabled(False)
            self._say("Stopping…", None)
            return
        self.jobs.cancel_all()
        self._set_running(False)

    def is_running(self) -> bool:
        return self.jobs.pending()

    def histogram(self) -> dict[str, tuple[list[float], list[float]]]:
        """What the plot shows: tokenizer label -> (bin edges, records per bin)."""
        return {c.name(): (list(c.xData), list(c.yData)) for c in self._curves}

    def open_record(self, row: int) -> None:
        """Open the ``row``-th longest record (as if clicked)."""
        if self.stats is not None and 0 <= row < len(self.stats.longest):
            self.recordActivated.emit(self.stats.longest[row].record, self.stats.shape)

    # -- the worker's answers ----------------------------------------------------------------------

    def _peeked(self, guess: Any) -> None:
        if guess.shape is not None:
            self.shape = guess.shape
            self.start()
            return
        if not guess.looked_at:
            self._say(f"{self.path} holds no records.", "error")
            return
        self._say(
            f"The records are not chat messages, prompt/completion, prompt/response or text (only "
            f"{guess.fitting} of the first {guess.looked_at} fit one shape): pick the fields to count.",
            "note",
        )
        for box in self.field_boxes:
            box.setParent(None)
            box.deleteLater()
        self.field_boxes = []
        for k, name in enumerate(guess.fields):
            box = QCheckBox(name)
            box.toggled.connect(self._fields_picked)
            self.fields_layout.insertWidget(1 + k, box)
            self.field_boxes.append(box)
        self.count_button.setEnabled(False)
        self.fields_box.show()

    def _picked(self) -> list[str]:
        return [box.text() for box in self.field_boxes if box.isChecked()]

    def _fields_picked(self, _checked: bool) -> None:
        self.count_button.setEnabled(bool(self._picked()))

    def _count_fields(self) -> None:
        self.count_fields(self._picked())

    def _on_progress(self, done: int, total: int) -> None:
        if total:
            self.progress.setValue(int(1000 * done / total))

    def _done(self, stats: DatasetStats) -> None:
        self._set_running(False)
        self.stats = stats
        kind = "chat messages" if stats.shape.kind == "chat" else f"text in {stats.shape.label}"
        note = f"{stats.records:,} records of {kind}" + (f", {stats.skipped:,} skipped" if stats.skipped else "")
        note += f" in {stats.seconds:.1f} s" + (
            " — stopped early: the counts cover the records read" if stats.stopped else ""
        )
        if stats.truncated:
            note += f"; {stats.truncated}"
        self._say(note + ".", "note" if stats.stopped or stats.truncated else None)
        self._unannounced = True  # said once the tables are filled
        self._draw(stats)

    def _failed(self, exc: BaseException) -> None:
        self._set_running(False)
        self._say(describe_error(exc), "error")
        self.failed.emit(describe_error(exc))

    # -- drawing ---------------------------------------------------------------------------------

    def _set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)

    def _say(self, text: str, tone: str | None) -> None:
        self.status.setText(text)
        self.status.set_tone(tone)

    def _apply_theme(self) -> None:
        c = app_colors()
        self._dark = c.dark
        item = self.plot.getPlotItem()
        self.plot.setBackground(c.plot_bg)
        self.legend.setBrush(pg.mkBrush(QColor(c.plot_legend_bg)))
        self.legend.setLabelTextColor(c.plot_text)
        for ax in ("left", "bottom"):
            item.getAxis(ax).setTextPen(c.plot_text)
            item.getAxis(ax).setPen(c.plot_axis)
        item.setLabel("left", "records", color=c.plot_text)
        item.setLabel("bottom", "tokens per record", color=c.plot_text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and app_colors().dark != self._dark:
            self._apply_theme()
            if self.stats is not None:
                self._draw(self.stats)
        super().changeEvent(event)

    def _draw(self, stats: DatasetStats) -> None:
        c = app_colors()
        item = self.plot.getPlotItem()
        for curve in self._curves:
            item.removeItem(curve)
        self._curves = []
        self.legend.clear()
        edges, counts = stats.histogram()
        for k, (t, n) in enumerate(zip(stats.tokenizers, counts)):
            color = QColor(c.series[k % len(c.series)])
            fill = QColor(color)
            fill.setAlpha(60)
            curve = pg.PlotDataItem(
                edges, n, stepMode="center", fillLevel=0, brush=fill, pen=pg.mkPen(color, width=2), name=t.label
            )
            item.addItem(curve)
            self._curves.append(curve)
        self.legend.setVisible(bool(self._curves))
        self.plot_stack.setCurrentWidget(self.plot)
        item.setTitle(f"Tokens per record ({stats.records:,} records; last bin: the longest 1%)", color=c.plot_text)
        # the tables in later turns, one each: all in the turn the count came held the GUI thread
        # for 60 ms with six tokenizers
        later(self._fill_tables)

    def _fill_tables(self) -> None:
        if self.stats is not None:
            self._fill_totals(self.stats)
            later(self._fill_longest_now)

    def _fill_longest_now(self) -> None:
        if self.stats is not None:
            self._fill_longest(self.stats)
            if self._unannounced:
                self._unannounced = False
                self.statsReady.emit(self.stats)

    def _fill_totals(self, stats: DatasetStats) -> None:
        parts = stats.part_names
        head = ["tokenizer", "chat template", "tokens", *parts, "mean", "median", "p90", "max"]
        self.totals.clear()
        self.totals.setColumnCount(len(head))
        self.totals.setHorizontalHeaderLabels(head)
        self.totals.setRowCount(len(stats.tokenizers))
        for r, t in enumerate(stats.tokenizers):
            s = t.summary()
            cells = [t.label, t.template or "-", f"{t.tokens:,}"]
            cells += [f"{t.overhead:,}" if p == TEMPLATE_PART else f"{t.parts.get(p, 0):,}" for p in parts]
            cells += [f"{s['mean']:,.1f}", f"{s['median']:,.0f}", f"{s['p90']:,.0f}", f"{s['max']:,}"]
            for col, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if col >= 2:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.totals.setItem(r, col, cell)
        if TEMPLATE_PART in parts:
            col = 3 + parts.index(TEMPLATE_PART)
            header = self.totals.horizontalHeaderItem(col)  # there is one: the labels were set above
            if header is not None:
                header.setToolTip("The chat template's own tokens, once per record")
        self.totals.resizeColumnsToContents()

    def _fill_longest(self, stats: DatasetStats) -> None:
        head = ["record", "beginning", *(t.label for t in stats.tokenizers)]
        self.longest.clear()
        self.longest.setColumnCount(len(head))
        self.longest.setHorizontalHeaderLabels(head)
        self.longest.setRowCount(len(stats.longest))
        for r, rec in enumerate(stats.longest):
            cells = [f"{rec.index + 1:,}", rec.preview(100), *(f"{n:,}" for n in rec.tokens)]
            for col, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if col != 1:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.longest.setItem(r, col, cell)
        # the beginnings take the room left: measuring their text (any script) took most of the time
        self.longest.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col in range(len(head)):
            if col != 1:
                self.longest.resizeColumnToContents(col)

    def _ask_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a dataset", "", FILTER)
        if path:
            self.open_file(path)


def make_panel(host: PanelContext) -> DatasetView:
    """The view the window docks (the first time it is shown): it counts under the window's
    tokenizers, and a record clicked opens in the chat panel or the text box."""
    win = host.window
    view = DatasetView()
    reg = win.registry

    def follow() -> None:
        view.set_tokenizers(tokenizers_of(reg), specs_of(reg))

    follow_rows(reg, follow)
    follow()
    view.failed.connect(win.show_error)
    view.recordActivated.connect(lambda record, shape: _open_record(host, record, shape))
    return view


def _open_record(host: PanelContext, record: Any, shape: Shape) -> None:
    """A chat record opens in the chat panel; any other in the text box (its fields' text)."""
    messages = conversation(record) if shape.kind == "chat" else None
    if messages is not None:
        chat = cast("ChatView", host.show("chat"))
        chat.set_messages(messages, reply_header=False)  # counted as the dataset counts it
    else:
        host.window.set_text("\n\n".join(field_texts(shape, record)))
