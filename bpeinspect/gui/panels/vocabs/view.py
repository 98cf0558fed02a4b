"""The Vocabularies view: two to four open tokenizers' vocabularies side by side.

Left, three pages: the **overlap** as UpSet bars (a click on a bar lists its tokens), the
**composition** of each vocabulary by script or by byte length as stacked bars on one scale,
and a **summary** per pair (tokens shared, the same id, the longest id-aligned prefix, special
tokens in common, merges in common). Right, the **tokens** of one combination (only in A,
in both, ...): searchable, sorted by any column, a click on a token showing it in the token
views (merge tree, vocabulary) under the tokenizer that holds it.

The comparison, the merges in common, every sort and search and the CSV export run on the
worker (:mod:`bpeinspect.gui.concurrency`); figures export as PNG or SVG.
"""

from __future__ import annotations

import html
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import SYMBOLS, QueryError, Tokenizer, parse_display
from bpeinspect.core.analysis import (
    MAX_SIDES,
    MergeOverlap,
    VocabDiff,
    compare_vocabularies,
    list_tokens,
    merges_in_common,
    sorted_already,
)
from bpeinspect.core.pool import BACKGROUND_NICENESS, ProcessPool
from bpeinspect.gui.concurrency import Jobs, Typing, describe_error
from bpeinspect.gui.panels.languages import export
from bpeinspect.gui.panels.vocabs.model import TokenRows, rows_csv
from bpeinspect.gui.panels.vocabs.plots import CompositionPlot, UpsetPlot, combo_label, csv_text
from bpeinspect.gui.registry import distinct_names, follow_rows, reference_first

if TYPE_CHECKING:
    from bpeinspect.gui.panels.context import PanelContext

SEARCH_DEBOUNCE_MS = 250
# the first comparison starts computing this long after the view is first shown: computed beside
# the view's first paint and the making of its plots, it slowed them to over 100 ms
FIRST_PAINT_MS = 150
FIRST_PAINT_WAIT_S = 2.0  # (a view never shown compares after this long)
TOKEN_COLUMN_WIDTH = 200  # px
PAGES = ("overlap", "composition", "summary")


class VocabsView(QWidget):
    """Compare the vocabularies of :meth:`set_tokenizers`' first :data:`MAX_SIDES` tokenizers."""

    tokenPicked = Signal(object, int)  # (Tokenizer, token id)
    failed = Signal(str)
    exported = Signal(str)

    def __init__(self, parent: QWidget | None = None, typing: Typing | None = None) -> None:
        """``typing``: the text's, where the user types; the view's background work waits for
        the typing to pause (``None``: it does not wait)."""
        super().__init__(parent)
        self.typing = typing
        self.toks: list[Tokenizer] = []
        self.names: list[str] = []
        self.diff: VocabDiff | None = None
        self.merges: MergeOverlap | None = None
        self.jobs = Jobs(self)
        self._sort = ("id:0", False)
        self._fit_columns = True
        self._build()
        self._debounce = QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self._debounce.timeout.connect(self.refresh_list)
        self._painted = threading.Event()  # the view has been shown and drawn once
        self._paint_later = QTimer(self, singleShot=True, interval=FIRST_PAINT_MS)
        self._paint_later.timeout.connect(self._painted.set)
        self._show_empty()

    def _build(self) -> None:
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.by = QComboBox()
        self.by.setToolTip("what the composition bars are cut by")
        self.by.addItem("by script", "script")
        self.by.addItem("by length", "length")
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("the figure shown as PNG, SVG or CSV; the token list as CSV")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        for label, kind in (
            ("Figure as PNG…", "png"),
            ("Figure as SVG…", "svg"),
            ("Figure's numbers as CSV…", "csv"),
            ("Token list as CSV…", "list"),
        ):
            menu.addAction(label, self._exporter(kind))
        self.export_button.setMenu(menu)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.by)
        top.addWidget(self.export_button)

        self.upset = UpsetPlot()
        self.upset.comboPicked.connect(self.pick_combination)
        self.composition = CompositionPlot()
        self.by.currentIndexChanged.connect(lambda _: self.composition.set_by(self.by.currentData()))
        self.summary = QTextBrowser(openExternalLinks=False)
        self.pages = QTabWidget()
        self.pages.addTab(self.upset, "Overlap")
        self.pages.addTab(self.composition, "Composition")
        self.pages.addTab(self.summary, "Summary")
        self.pages.currentChanged.connect(lambda _: self.by.setVisible(self.current_page() == "composition"))

        self.which = QComboBox()
        self.which.setToolTip("which tokens to list")
        self.which.currentIndexChanged.connect(lambda _: self.refresh_list())
        self.search = QLineEdit(
            placeholderText="Search tokens ({} for space, {} for newline)…".format(SYMBOLS[" "], SYMBOLS["\n"]),
            clearButtonEnabled=True,
        )
        self.search.textChanged.connect(lambda _: self._debounce.start())
        self.count = QLabel()
        self.model = TokenRows(self)
        self.model.sortRequested.connect(self._sort_by)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.clicked.connect(self._clicked)
        self.table.activated.connect(self._clicked)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.which)
        rl.addWidget(self.search)
        rl.addWidget(self.table, 1)
        rl.addWidget(self.count)

        split = QSplitter()
        split.addWidget(self.pages)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([600, 500])
        # with fewer than two tokenizers, a note stands in for the empty figures and list
        self.empty_note = QLabel(
            "Open a second tokenizer to see here how much of their vocabularies they share, "
            "what their tokens are made of, and the tokens each one has alone."
        )
        self.empty_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_note.setWordWrap(True)
        self.body = QStackedWidget()
        self.body.addWidget(self.empty_note)
        self.body.addWidget(split)
        self._figures = split
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.body, 1)
        self.by.setVisible(False)

    # -- tokenizers and the comparison -------------------------------------------------------------

    def set_tokenizers(self, toks: Sequence[Tokenizer], names: Sequence[str]) -> None:
        """Compare the first :data:`MAX_SIDES` of ``toks`` (at once, on the worker)."""
        toks, names = list(toks)[:MAX_SIDES], list(names)[:MAX_SIDES]
        if toks == self.toks and names == self.names and self.diff is not None:
            return
        self.toks, self.names = toks, names
        self.jobs.cancel_all()
        self.diff, self.merges = None, None
        self._show_empty()
        if len(toks) < 2:
            return
        self._show_figures(True)
        self._say("Comparing the vocabularies…")
        self.jobs.submit(
            "diff",
            _compare_once_drawn,
            self._painted,
            list(zip(distinct_names(names), toks)),
            on_returned=self._on_diff,
            on_errored=lambda exc: self._fail(f"Could not compare the vocabularies: {describe_error(exc)}"),
        )

    def _show_empty(self) -> None:
        self.model.set_rows(None, [])
        self.upset.set_diff(None)
        self.composition.set_diff(None)
        self.which.blockSignals(True)
        self.which.clear()
        self.which.blockSignals(False)
        self.count.setText("")
        if len(self.toks) < 2:
            self._show_figures(False)
            self._say("Open two to four tokenizers to compare their vocabularies.")
            self.summary.setHtml("")

    def _show_figures(self, shown: bool) -> None:
        """The figures and the list, or the note that stands in for them (and nothing to export)."""
        self.body.setCurrentWidget(self._figures if shown else self.empty_note)
        self.export_button.setEnabled(shown)

    def _on_diff(self, diff: VocabDiff) -> None:
        self.diff = diff
        self._fit_columns = True
        more = " (the first four open tokenizers)" if len(self.toks) >= MAX_SIDES else ""
        self._say(
            f"{len(diff.sides)} vocabularies{more}: "
            + ", ".join(f"{s.name} {s.tokens:,}" for s in diff.sides)
            + " tokens, special and added tokens apart."
        )
        self.upset.set_diff(diff)
        self.composition.set_diff(diff)
        self._fill_which(diff)
        self._write_summary()
        self.refresh_list()
        self.jobs.submit(
            "merges",
            merges_in_common,
            list(zip(diff.names, self.toks)),
            paused_by=self.typing,
            on_returned=self._on_merges,
            on_progress=self._merges_progress,
            on_errored=lambda exc: self._fail(f"Could not compare the merges: {describe_error(exc)}"),
        )

    def _fill_which(self, diff: VocabDiff) -> None:
        counts = diff.exclusive_counts()
        self.which.blockSignals(True)
        self.which.clear()
        n = len(diff.sides)
        for m in diff.combinations():
            self.which.addItem(f"{combo_label(diff, m)} ({counts[m]:,})", m)  # exactly these sides
        if n > 2:
            for a in range(n):
                for b in range(a + 1, n):
                    mask = 1 << a | 1 << b
                    shared = diff.inclusive_count(mask)
                    # a negative mask: these sides and maybe others
                    self.which.addItem(f"in {diff.names[a]} and {diff.names[b]}, maybe others too ({shared:,})", -mask)
        self.which.setCurrentIndex(0)
        self.which.blockSignals(False)

    def _merges_progress(self, done: int, total: int) -> None:
        if self.merges is None and total:
            self._write_summary(f"recovering merges from the ranks… {100 * done // total}%")

    def _on_merges(self, merges: MergeOverlap) -> None:
        self.merges = merges
        self._write_summary()

    def _write_summary(self, merges_note: str = "") -> None:
        diff = self.diff
        if diff is None:
            self.summary.setHtml("")
            return
        esc = html.escape
        rows = []
        for a in range(len(diff.sides)):
            for b in range(a + 1, len(diff.sides)):
                sa, sb = diff.sides[a], diff.sides[b]
                shared = diff.shared_count(a, b)
                cells = [
                    f"{esc(sa.name)} · {esc(sb.name)}",
                    f"{shared:,} ({100 * shared / max(sa.tokens, 1):.1f}% · {100 * shared / max(sb.tokens, 1):.1f}%)",
                    f"{diff.same_id(a, b):,}",
                    f"{diff.id_prefix(a, b):,}",
                    esc(", ".join(diff.shared_specials(a, b))) or "none",
                ]
                if self.merges is not None:
                    both = self.merges.inclusive_count(1 << a | 1 << b)
                    cells.append(
                        f"{both:,} of {self.merges.totals[a]:,} · {self.merges.totals[b]:,}; "
                        f"{self.merges.same_rank[a, b]:,} at the same place"
                    )
                else:
                    cells.append(esc(merges_note or "computing…"))
                rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        head = [
            "pair",
            "tokens shared (share of each)",
            "same id",
            "ids 0… that agree",
            "special tokens in both",
            "merges in common",
        ]
        self.summary.setHtml(
            "<table cellspacing='0' cellpadding='4' border='1' style='border-collapse: collapse'>"
            + "<tr>"
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr>"
            + "".join(rows)
            + "</table>"
            + "<p>Tokens are compared by their bytes; special and added tokens are compared apart, by their text. "
            "<i>ids 0… that agree</i> is the longest run of ids from 0 that are the same token in both: when one "
            "vocabulary extends another, the size of the one extended.</p>"
        )

    # -- the token list ----------------------------------------------------------------------------

    def pick_combination(self, mask: int) -> None:
        """List the tokens exactly the vocabularies of ``mask`` hold."""
        k = self.which.findData(mask)
        if k >= 0:
            self.which.setCurrentIndex(k)

    def _sort_by(self, key: str, descending: bool) -> None:
        self._sort = (key, descending)
        self.refresh_list()

    def refresh_list(self) -> None:
        diff, choice = self.diff, self.which.currentData()
        if diff is None or choice is None:
            return
        try:
            needle = parse_display(self.search.text())
        except (QueryError, ValueError) as exc:
            self.count.setText(str(exc))
            return
        mask, exact = abs(choice), choice > 0
        key, descending = self._sort
        self.count.setText("Listing…")
        self.jobs.submit(
            "list",
            list_tokens,
            diff,
            mask,
            exact=exact,
            search=needle,
            sort=key,
            descending=descending,
            on_returned=lambda rows: self._on_rows(diff, rows),
            on_errored=lambda exc: self.count.setText(f"Could not list them: {describe_error(exc)}"),
        )

    def _on_rows(self, diff: VocabDiff, rows: list[bytes]) -> None:
        if diff is not self.diff:
            return
        self.model.set_rows(diff, rows)
        if self._fit_columns:
            self._fit_columns = False
            self._size_columns()
        self.count.setText(f"{len(rows):,} tokens")

    def _size_columns(self) -> None:
        """Widths from the headers' text (resizing to the contents would lay out a thousand
        rows of tokens on the GUI thread: a second and more at the first list)."""
        header, metrics = self.table.horizontalHeader(), self.table.fontMetrics()
        header.resizeSection(0, TOKEN_COLUMN_WIDTH)
        for col in range(1, self.model.columnCount()):
            text = str(self.model.headerData(col, Qt.Orientation.Horizontal))
            header.resizeSection(col, max(metrics.horizontalAdvance(text) + 28, 60))  # the sort arrow too

    def _clicked(self, index: QModelIndex) -> None:
        diff = self.diff
        if diff is None or not index.isValid():
            return
        t = self.model.token(index.row())
        col = index.column()
        order = list(range(len(diff.sides)))
        if 1 <= col <= len(diff.sides):  # an id column: that vocabulary first
            order.insert(0, order.pop(col - 1))
        for k in order:
            i = diff.token_id(k, t)
            if i is not None:
                self.tokenPicked.emit(self.toks[k], i)
                return

    # -- pages, export and state -----------------------------------------------------------------

    def current_page(self) -> str:
        return PAGES[self.pages.currentIndex()]

    def show_page(self, page: str) -> None:
        self.pages.setCurrentIndex(PAGES.index(page))

    def is_busy(self) -> bool:
        return self.jobs.is_busy() or self._debounce.isActive()

    def _say(self, text: str) -> None:
        self.status.setText(text)

    def _fail(self, message: str) -> None:
        self._say(message)
        self.failed.emit(message)

    def _exporter(self, kind: str) -> Callable[[], None]:
        """The menu's action for exporting ``kind``."""
        return lambda: self._ask_export(kind)

    def _ask_export(self, kind: str) -> None:
        page = "tokens" if kind == "list" else self.current_page()
        suffix = "csv" if kind == "list" else kind
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV table (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"vocabularies-{page}.{suffix}", filters[suffix])
        if path:
            self.export(kind, path)

    def export(self, kind: str, path: str | os.PathLike[str]) -> None:
        """Write the figure shown (``png``, ``svg``, ``csv`` of its numbers) or the token list
        (``list``, CSV); ``exported(path)`` says when it is written."""
        try:
            if self.diff is None:
                raise ValueError("nothing compared yet")
            if kind == "list":
                maker = _maker(rows_csv, self.diff, list(self.model.rows()))
            elif kind == "csv":
                figure = {"overlap": self.upset, "composition": self.composition}.get(self.current_page())
                if figure is None:
                    raise ValueError("the summary is a table: export the overlap or the composition")
                maker = _maker(csv_text, *figure.csv_rows())
            else:
                render, size = self._renderer()
                if kind == "png":
                    export.submit_png(self.jobs, path, render, size, done=self.exported.emit, failed=self._fail)
                    return
                export.write_svg(path, render, size, title=f"Vocabularies: {self.current_page()}")
                self.exported.emit(str(path))
                return
        except (OSError, ValueError) as exc:
            self._fail(f"{path}: could not export: {exc}")
            return
        self.jobs.submit(
            "export",
            export.write_text,
            path,
            maker,
            on_returned=self.exported.emit,
            on_errored=lambda exc: self._fail(f"{path}: could not export: {exc}"),
        )

    def _renderer(self):
        page = self.current_page()
        if page == "overlap":
            return self.upset.renderer()
        if page == "composition":
            return self.composition.renderer()
        return export.widget_renderer(self.summary)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._painted.is_set() and not self._paint_later.isActive():
            self._paint_later.start()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.diff is not None:
            self.upset.redraw()
            self.composition.redraw()
        super().changeEvent(event)

    def closeEvent(self, event) -> None:
        self.jobs.cancel_all()
        super().closeEvent(event)


def _compare_once_drawn(
    drawn: threading.Event, sides: list[tuple[str, Tokenizer]], should_stop: Callable[[], bool] | None = None
) -> VocabDiff:
    """:func:`compare_vocabularies` (on a worker), once the view has been drawn for the first
    time; the tokens are sorted into categories by a child process, which starts meanwhile.
    ``should_stop`` cancels it, and is where it gives way to a busy GUI thread."""
    with ProcessPool(2, niceness=BACKGROUND_NICENESS) as pool:
        if not all(sorted_already(tok) for _, tok in sides):
            pool.start()
        drawn.wait(FIRST_PAINT_WAIT_S)
        return compare_vocabularies(sides, should_stop=should_stop, pool=pool)


def _maker(fn, *args):
    return lambda: fn(*args)


def make_panel(host: PanelContext) -> VocabsView:
    """The view, tied to the window: it compares the window's tokenizers (the reference first)
    while it is shown, and a token picked in it goes to the token views."""
    win = host.window
    view = VocabsView(typing=win.typing)
    reg = win.registry

    def follow() -> None:
        if host.docks["vocabs"].isVisible():
            panel_shown(view, host)

    follow_rows(reg, follow)
    reg.referenceChanged.connect(lambda _ref: follow())
    view.tokenPicked.connect(win.tokenActivated.emit)  # the token views follow it, under its tokenizer
    view.failed.connect(win.show_error)
    panel_shown(view, host)
    return view


def panel_shown(view: VocabsView, host: PanelContext) -> None:
    view.set_tokenizers(*reference_first(host.window.registry))


__all__ = ["PAGES", "VocabsView", "make_panel", "panel_shown"]
