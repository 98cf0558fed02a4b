"""The vocabulary browser: every token of a tokenizer, searchable, filterable and sortable.

The table's model (:mod:`.vocabulary_model`) computes cells when they are drawn; searching,
filtering and sorting run in a worker and replace its rows when they finish.

Example::

    browser = VocabBrowser()
    browser.set_tokenizer(load_tokenizer("o200k_base"))
    browser.tokenActivated.connect(merge_tree.show_token)
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import SYMBOLS, QueryError, Tokenizer
from bpeinspect.core.analysis import BYTES, COMMON, KINDS, SCRIPTS, TokenQuery, VocabIndex, positions, token_scripts
from bpeinspect.gui.concurrency import Jobs, ProgressBar, Typing, Worker, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.panels.columns import FitColumns
from bpeinspect.gui.panels.vocabulary_model import (
    COL_BYTES,
    COL_FLAGS,
    COL_ID,
    COL_KIND,
    COL_LEN,
    COL_PARENTS,
    COL_RANK,
    COL_SCRIPT,
    COL_TOKEN,
    COLUMNS,
    TOKEN_ID_ROLE,
    VocabTableModel,
)

# column widths in characters; what a 460 px dock shows at first (the others: right-click the header)
COLUMN_CHARS = {
    COL_ID: 7,
    COL_RANK: 7,
    COL_TOKEN: 18,
    COL_BYTES: 22,
    COL_LEN: 4,
    COL_SCRIPT: 9,
    COL_KIND: 9,
    COL_PARENTS: 20,
}
HIDDEN_AT_FIRST = frozenset({COL_RANK, COL_BYTES, COL_PARENTS, COL_FLAGS})


def search_rows(
    index: VocabIndex, query: TokenQuery, *, sort: str, descending: bool, progress: Any = None, should_stop: Any = None
) -> tuple[list[int], Any]:
    """A worker's search: the rows and where each id is among them (which the table needs to
    find a token; a dict of 200k ids built on the GUI thread would stall it). ``should_stop``
    is also where the worker gives way to a busy GUI thread (see :func:`~bpeinspect.gui.concurrency.give_way`):
    a column's order asks it every 2048 tokens."""
    rows = index.search(query, sort=sort, descending=descending, progress=progress, should_stop=should_stop)
    return rows, positions(rows)


def shows_everything(query: TokenQuery) -> bool:
    """True when ``query`` keeps every token (no search text, no filter).

    >>> shows_everything(TokenQuery()), shows_everything(TokenQuery(mode="id", text=" ")), shows_everything(TokenQuery(min_len=2))
    (True, True, False)
    """
    blank = not query.text or (query.mode == "id" and not query.text.strip())
    return blank and query == TokenQuery(mode=query.mode, text=query.text, ignore_case=query.ignore_case)


_REGEX_SIGNS = re.compile(r"\\[dwsbpPDWSB]|^\^|(?<!\\)\$$|\[[^\]]+\]|\.[*+?]|\{\d+(,\d*)?\}|\(\?")


def looks_like_regex(text: str) -> bool:
    """Whether a text search reads like a regular expression (a hint, when it finds nothing).

    >>> looks_like_regex(r"^\\d{3}$"), looks_like_regex("[aeiou]+"), looks_like_regex("hello")
    (True, True, False)
    """
    return bool(_REGEX_SIGNS.search(text))


class VocabBrowser(QWidget):
    """Search box, filters and the token table. Emits ``tokenActivated(id)`` when a token is picked."""

    tokenActivated = Signal(int)
    MODES = (("Text", "text"), ("ID", "id"), ("Hex bytes", "hex"), ("Regex", "regex"))

    def __init__(self, parent: QWidget | None = None, typing: Typing | None = None) -> None:
        """``typing``: the text's, where the user types; the view's background work waits for
        the typing to pause (``None``: it does not wait)."""
        super().__init__(parent)
        self.typing = typing
        self.index_: VocabIndex | None = None
        self.jobs = Jobs(self)
        self._sort: tuple[str, bool] = ("id", False)
        self._quiet = False
        self._quiet_select = False
        self._pending_select: int | None = None  # select this id when the running search lands
        self.model = VocabTableModel(self)
        self.model.sortRequested.connect(self._on_sort)
        self._build()
        self.debounce = QTimer(self, singleShot=True, interval=250)
        self.debounce.timeout.connect(self.run_query)
        # the Script column's first cells would build the table of every code point's script
        # here, on the GUI thread: a worker builds it while nobody looks at the vocabulary
        Worker(token_scripts, b"a", paused_by=self.typing).start()

    def _build(self) -> None:
        self.search = QLineEdit(
            placeholderText="Search tokens ({} for space, {} for newline)…".format(SYMBOLS[" "], SYMBOLS["\n"]),
            clearButtonEnabled=True,
        )
        self.mode = QComboBox()
        for label, key in self.MODES:
            self.mode.addItem(label, key)
        self.ignore_case = QCheckBox("Aa")
        self.ignore_case.setToolTip("ignore case")
        self.min_len, self.max_len = QSpinBox(), QSpinBox()
        for box, bound in ((self.min_len, "minimum"), (self.max_len, "maximum")):
            box.setRange(0, 1024)
            box.setSpecialValueText("any")
            box.setToolTip(f"{bound} length in bytes")
        self.script = QComboBox()
        self.script.setToolTip("only tokens using this script")
        self.script.addItem("any script", None)
        for s in (*SCRIPTS, COMMON, BYTES):
            self.script.addItem(s.replace("_", " "), s)
        self.kind = QComboBox()
        self.kind.setToolTip("only tokens of this kind")
        self.kind.addItem("any kind", None)
        for k in KINDS:
            self.kind.addItem(k, k)
        self.show_which = QComboBox()
        self.show_which.setToolTip("special, unreachable and unused tokens")
        for label, key in (
            ("all tokens", "all"),
            ("no specials", "nospecial"),
            ("specials only", "special"),
            ("unreachable", "unreachable"),
            ("unused in corpus", "unused"),
        ):
            self.show_which.addItem(label, key)
        for combo in (self.script, self.kind, self.show_which):
            # narrower than their longest item: the filters fit the dock's width
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(7)
        self.status = ToneLabel()
        self.status.setWordWrap(True)  # a long hint wraps: one line as wide as it would widen the dock
        self.progress = ProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel = QPushButton("Cancel")
        self.cancel.hide()
        self.cancel.clicked.connect(self.cancel_work)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL_ID, Qt.SortOrder.AscendingOrder)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        vh = self.table.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(True)
        em = self.fontMetrics().horizontalAdvance("0")
        for col, chars in COLUMN_CHARS.items():
            self.table.setColumnWidth(col, em * chars + 12)
        # in a narrow dock the token and its bytes give way, not the columns after them
        FitColumns(self.table, {COL_TOKEN: em * 8, COL_BYTES: em * 8, COL_PARENTS: em * 8})
        self.columns_menu = QMenu(self)
        for col, (title, _key, tip) in enumerate(COLUMNS):
            act = self.columns_menu.addAction(title)
            act.setCheckable(True)
            act.setToolTip(tip)
            act.toggled.connect(lambda on, c=col: self.table.setColumnHidden(c, not on))
            act.setChecked(col not in HIDDEN_AT_FIRST)
            self.table.setColumnHidden(col, col in HIDDEN_AT_FIRST)
        self.columns_menu.actions()[COL_ID].setEnabled(False)  # a row without its id means nothing
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.customContextMenuRequested.connect(lambda pos: self.columns_menu.popup(hh.mapToGlobal(pos)))
        self.columns_button = QToolButton()
        self.columns_button.setText("Columns ▾")
        self.columns_button.setToolTip("Show or hide columns (or right-click the header)")
        self.columns_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.columns_button.setMenu(self.columns_menu)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.table.activated.connect(lambda ix: self._emit(ix.row()))

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.mode)
        top.addWidget(self.ignore_case)
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Length"))
        filters.addWidget(self.min_len)
        filters.addWidget(QLabel("to"))
        filters.addWidget(self.max_len)
        filters.addStretch(1)
        filters.addWidget(self.columns_button)
        which = QHBoxLayout()  # a row of its own: the dock stays DOCK_WIDTH wide
        for combo in (self.script, self.kind, self.show_which):
            which.addWidget(combo, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.cancel)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(filters)
        lay.addLayout(which)
        lay.addWidget(self.table, 1)
        lay.addLayout(bottom)

        self.search.textChanged.connect(self._schedule)
        for combo in (self.mode, self.script, self.kind, self.show_which):
            combo.currentIndexChanged.connect(self._schedule)
        for spin in (self.min_len, self.max_len):
            spin.valueChanged.connect(self._schedule)
        self.ignore_case.toggled.connect(self._schedule)

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizer(self, tok: Tokenizer) -> None:
        """Show ``tok``'s vocabulary (instant: cells and searches are computed when needed)."""
        self.cancel_work()
        self.index_ = VocabIndex(tok)
        self.model.set_index(self.index_)
        if self.query() != TokenQuery() or self._sort != ("id", False):
            self.run_query()
        self._update_status()

    def show_token(self, token_id: int) -> None:
        """Select ``token_id``, clearing the search and filters if they hide it."""
        if self.index_ is None:
            return
        row = self.model.row_of(token_id)
        if row is None:
            self.cancel_work()
            self._quiet = True
            try:
                self._reset_filters()
            finally:
                self._quiet = False
            self.debounce.stop()
            try:
                self.index_.tok.token_bytes(token_id)
            except ValueError:  # not a token of this vocabulary
                return
            if self._sort[0] != "id":  # other orders can take a while on 200k tokens: sort in a worker
                self._pending_select = token_id
                self.run_query()
                return
            self.model.show_every_id(self._sort[1])
            self._update_status()
            row = self.model.row_of(token_id)
            if row is None:
                return
        self._select(row)

    def show_piece(self, text: str) -> None:
        """Search the table for tokens containing ``text``."""
        self.mode.setCurrentIndex(0)
        self.search.setText(text)

    def set_corpus(self, corpus: str | list[str]) -> None:
        """Mark tokens that never occur when ``corpus`` is encoded (worker) and offer the "unused" filter."""
        if self.index_ is None:
            return
        self._submit("scan", self._on_scanned, "Encoding the corpus…", self.index_.compute_unused, corpus)

    @property
    def busy(self) -> bool:
        """True while a search or scan is running."""
        return self.jobs.pending()

    def query(self) -> TokenQuery:
        which = self.show_which.currentData()
        return TokenQuery(
            text=self.search.text(),
            mode=self.mode.currentData(),
            min_len=self.min_len.value() or None,
            max_len=self.max_len.value() or None,
            script=self.script.currentData(),
            kind=self.kind.currentData(),
            special={"special": True, "nospecial": False}.get(which),
            unreachable=which == "unreachable",
            unused=which == "unused",
            ignore_case=self.ignore_case.isChecked(),
        )

    # -- work ----------------------------------------------------------------------------------------

    def run_query(self) -> None:
        """Search/filter/sort in a worker; the table keeps its rows until the result arrives.
        Every token in id order is shown at once: the index holds the ids sorted."""
        if self.index_ is None:
            return
        q = self.query()
        if self._sort[0] == "id" and shows_everything(q):
            self._show_every_id()
            return
        if q.unreachable and self.index_.unreachable is None:
            self.find_unreachable()
            return
        if q.unused and self.index_.unused is None:
            self._set_status("Unused tokens need a corpus (set one from the training view).", error=True)
            return
        sort, desc = self._sort
        self._submit("query", self._on_rows, "Searching…", search_rows, self.index_, q, sort=sort, descending=desc)

    def _show_every_id(self) -> None:
        """Every id, in the id order asked for: no worker, nothing sorted (see :meth:`run_query`)."""
        self.jobs.cancel("query")  # what it would bring is out of date
        self._finish("query")
        keep = self._pending_select if self._pending_select is not None else self._selected_id()
        self._pending_select = None
        self.model.show_every_id(self._sort[1])
        if keep is not None and (row := self.model.row_of(keep)) is not None:
            self._select(row, emit=False)
        self._update_status()

    def find_unreachable(self) -> None:
        """Scan for unreachable tokens in a worker, then show them."""
        if self.index_ is None:
            return
        self._submit("scan", self._on_scanned, "Finding unreachable tokens…", self.index_.compute_unreachable)

    def cancel_work(self) -> None:
        self.jobs.cancel_all()
        self.progress.hide()
        self.cancel.hide()

    def _submit(self, key: str, on_done: Any, label: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        def returned(value: Any) -> None:
            self._finish(key)
            on_done(value)

        def errored(exc: BaseException) -> None:
            self._finish(key)
            self._set_status(describe_error(exc), error=True)

        def aborted() -> None:
            self._finish(key)
            self._update_status()

        self.jobs.submit(
            key,
            fn,
            *args,
            on_returned=returned,
            on_errored=errored,
            on_aborted=aborted,
            on_progress=self._on_progress,
            **kwargs,
        )
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel.show()
        self.status.setText(label)

    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _finish(self, key: str) -> None:
        """``key``'s outcome is in: hide the bar unless the other job still runs."""
        if not self.jobs.pending("scan" if key == "query" else "query"):
            self.progress.hide()
            self.cancel.hide()

    def _on_rows(self, found: tuple[list[int], Any]) -> None:
        keep = self._pending_select if self._pending_select is not None else self._selected_id()
        self._pending_select = None
        self.model.set_rows(*found)
        if keep is not None and (row := self.model.row_of(keep)) is not None:
            self._select(row, emit=False)
        self._update_status()

    def _on_scanned(self, _: object) -> None:
        self.model.refresh_flags()
        self._update_status()
        if self.query().unreachable or self.query().unused:
            self.run_query()

    # -- helpers ------------------------------------------------------------------------------------

    def _schedule(self) -> None:
        if not self._quiet:
            self.debounce.start()

    def _on_sort(self, column: int, order: Qt.SortOrder) -> None:
        key = COLUMNS[column][1]
        if key is None:  # parents and flags have no order of their own: sort by id, and say so
            key = "id"
            hh = self.table.horizontalHeader()
            hh.blockSignals(True)
            hh.setSortIndicator(COL_ID, order)
            hh.blockSignals(False)
        self._sort = (key, order == Qt.SortOrder.DescendingOrder)
        if self.index_ is not None:
            self.run_query()

    def _reset_filters(self) -> None:
        self.search.clear()
        for w in (self.min_len, self.max_len):
            w.setValue(0)
        for c in (self.script, self.kind, self.show_which):
            c.setCurrentIndex(0)

    def _select(self, row: int, emit: bool = False) -> None:
        # by the id's cell: scrolling to it keeps the table at its left edge (the token's
        # cell would scroll a narrow dock to the right, hiding the ids)
        self._quiet_select = not emit
        ix = self.model.index(row, COL_ID)
        self.table.setCurrentIndex(ix)
        self.table.scrollTo(ix, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._quiet_select = False

    def _selected_id(self) -> int | None:
        ix = self.table.currentIndex()
        return self.model.token_id(ix.row()) if ix.isValid() else None

    def _on_current(self, current: QModelIndex, _prev: QModelIndex) -> None:
        if current.isValid() and not self._quiet_select:
            self._emit(current.row())

    def _emit(self, row: int) -> None:
        if 0 <= row < self.model.rowCount():
            self.tokenActivated.emit(self.model.token_id(row))

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.set_tone("error" if error else None)

    def _update_status(self) -> None:
        ix = self.index_
        if ix is None:
            self._set_status("No tokenizer")
            return
        parts = [f"{self.model.rowCount():,} of {len(ix.tok):,} tokens"]
        if ix.unreachable is not None:
            parts.append(f"{len(ix.unreachable):,} unreachable")
        if ix.unused is not None:
            parts.append(f"{len(ix.unused):,} unused in the corpus")
        missing = getattr(ix.tok, "missing_bytes", ())
        if missing:  # single bytes without a token: dropped from text when encoding
            shown = " ".join(f"{b:02x}" for b in missing[:8]) + (" …" if len(missing) > 8 else "")
            parts.append(f"no token for {len(missing)} single byte{'s' if len(missing) != 1 else ''} ({shown})")
        query = self.query()
        if self.model.rowCount() == 0 and query.mode == "text" and looks_like_regex(query.text):
            parts.append("this reads like a regular expression: set the search to Regex to use it as one")
        name = ix.tok.name or "tokenizer"
        self._set_status(f"{name}: " + " · ".join(parts))
        self.status.setToolTip(
            f"No token for the single bytes {' '.join(f'{b:02x}' for b in missing)}: text holding them is "
            "dropped when encoding (as Hugging Face tokenizers and llama.cpp drop it); the overlay marks it."
            if missing
            else ""
        )


__all__ = [
    "COLUMNS",
    "COL_BYTES",
    "COL_FLAGS",
    "COL_ID",
    "COL_KIND",
    "COL_LEN",
    "COL_PARENTS",
    "COL_RANK",
    "COL_SCRIPT",
    "COL_TOKEN",
    "TOKEN_ID_ROLE",
    "QueryError",
    "VocabBrowser",
    "VocabTableModel",
]
