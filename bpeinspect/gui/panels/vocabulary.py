"""The vocabulary table: every token of a tokenizer, searchable, filterable and sortable.

The model is a flat list of ids over a :class:`~bpeinspect.core.analysis.vocab.VocabIndex`; cells are
computed when drawn (parents too), so opening o200k_base costs one sorted id list. Searching,
filtering and sorting run in a worker and replace the list when they finish.

Example::

    browser = VocabBrowser()
    browser.set_tokenizer(load_tokenizer("o200k_base"))
    browser.tokenActivated.connect(merge_tree.show_token)
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer
from bpeinspect.core.analysis.vocab import BYTES, COMMON, KINDS, SCRIPTS, QueryError, TokenQuery, VocabIndex
from bpeinspect.core.text import LEGEND, SYMBOLS, hex_bytes
from bpeinspect.gui.concurrency import Jobs, describe_error

TOKEN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
_Index = QModelIndex | QPersistentModelIndex

# (header, sort key in VocabIndex.sorted or None, tooltip)
COLUMNS: list[tuple[str, str | None, str]] = [
    ("ID", "id", "token id"),
    ("Rank", "rank", "merge rank of the merge that makes the token"),
    ("Token", "token", f"the token's text; {LEGEND}"),
    ("Bytes", "token", "the token's bytes in hex"),
    ("Len", "length", "length in bytes"),
    ("Script", "script", "scripts of the token's letters (Common: none; bytes: no whole character)"),
    ("Kind", "kind", "what the token is made of"),
    ("Parents", None, "the two tokens merged to make it"),
    ("Flags", None, "unreachable: the encoder never produces it from its own bytes; unused: never occurs "
     "in the corpus; unbuildable: no chain of merges makes it"),
]  # fmt: skip
COL_ID, COL_RANK, COL_TOKEN, COL_BYTES, COL_LEN, COL_SCRIPT, COL_KIND, COL_PARENTS, COL_FLAGS = range(len(COLUMNS))
_MONO_COLUMNS = {COL_TOKEN, COL_BYTES, COL_PARENTS}
_NUMBER_COLUMNS = {COL_ID, COL_RANK, COL_LEN}
_WARN_BG = QColor(255, 228, 225)
_WARN_FG = QColor(160, 20, 20)


class VocabTableModel(QAbstractTableModel):
    """Rows are token ids (in the order last searched/sorted); columns are :data:`COLUMNS`."""

    sortRequested = Signal(int, Qt.SortOrder)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.index_: VocabIndex | None = None
        self._rows: list[int] = []
        self._row_of: dict[int, int] | None = None
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- contents ----------------------------------------------------------------------------------

    def set_index(self, index: VocabIndex | None, rows: list[int] | None = None) -> None:
        self.beginResetModel()
        self.index_ = index
        self._rows = (index.ids() if index is not None else []) if rows is None else rows
        self._row_of = None
        self.endResetModel()

    def set_rows(self, rows: list[int]) -> None:
        self.beginResetModel()
        self._rows = rows
        self._row_of = None
        self.endResetModel()

    def rows(self) -> list[int]:
        return list(self._rows)

    def token_id(self, row: int) -> int:
        return self._rows[row]

    def row_of(self, token_id: int) -> int | None:
        if self._row_of is None:
            self._row_of = {t: r for r, t in enumerate(self._rows)}
        return self._row_of.get(token_id)

    def refresh_flags(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, self.columnCount() - 1))

    # -- Qt model API --------------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section][2]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        # The view asks; the browser sorts in a worker and calls set_rows.
        self.sortRequested.emit(column, order)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        ix = self.index_
        if ix is None or not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        tid = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(ix, tid, col)
        if role == TOKEN_ID_ROLE:
            return tid
        if role == Qt.ItemDataRole.FontRole and col in _MONO_COLUMNS:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if col in _NUMBER_COLUMNS:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col in (COL_TOKEN, COL_BYTES, COL_FLAGS, COL_PARENTS):
            return self._tooltip(ix, tid, col)
        if role == Qt.ItemDataRole.BackgroundRole and self._warn(ix, tid):
            return _WARN_BG
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_FLAGS:
            return _WARN_FG
        return None

    def _text(self, ix: VocabIndex, tid: int, col: int) -> str:
        tok = ix.tok
        if col == COL_ID:
            return str(tid)
        if col == COL_RANK:
            r = ix.rank(tid)
            return "" if r is None else str(r)
        if col == COL_TOKEN:
            return ix.display(tid)
        if col == COL_BYTES:
            h = hex_bytes(tok.token_bytes(tid))
            return h if len(h) <= 60 else h[:57] + "…"
        if col == COL_LEN:
            return str(len(tok.token_bytes(tid)))
        if col == COL_SCRIPT:
            return "+".join(ix.scripts(tid))
        if col == COL_KIND:
            return ix.kind(tid)
        if col == COL_PARENTS:
            p = tok.merge_graph.parents(tid)
            if p is None:
                return ""
            return f"{ix.display(p[0])} + {ix.display(p[1])}"
        if col == COL_FLAGS:
            return ", ".join(self._flags(ix, tid))
        return ""

    def _flags(self, ix: VocabIndex, tid: int) -> list[str]:
        out = []
        if ix.unreachable is not None and tid in ix.unreachable:
            out.append("unreachable")
        if ix.unused is not None and tid in ix.unused:
            out.append("unused")
        if not ix.tok.is_special(tid) and not ix.tok.merge_graph.is_buildable(tid):
            out.append("unbuildable")
        return out

    def _warn(self, ix: VocabIndex, tid: int) -> bool:
        return bool((ix.unreachable and tid in ix.unreachable) or (ix.unused and tid in ix.unused))

    def _tooltip(self, ix: VocabIndex, tid: int, col: int) -> str:
        tok = ix.tok
        if col == COL_PARENTS:
            p = tok.merge_graph.parents(tid)
            return "" if p is None else f"{p[0]} {ix.display(p[0])!s}  +  {p[1]} {ix.display(p[1])!s}"
        if col == COL_FLAGS:
            lines = []
            u = ix.unreachable.get(tid) if ix.unreachable else None
            if u is not None:
                how = "merging its bytes" if u.reason == "merges" else "splitting its text into pre-tokens"
                lines.append(f"unreachable: {how} gives " + " ".join(ix.display(i) for i in u.produced))
            if ix.unused and tid in ix.unused:
                lines.append("unused: never occurs when the corpus is encoded")
            if "unbuildable" in self._flags(ix, tid):
                lines.append("unbuildable: no chain of merges makes it (the encoder can still look it up whole)")
            return "\n".join(lines)
        bts = tok.token_bytes(tid)
        return f"{tid}: {bts!r}\n{hex_bytes(bts)}"


class VocabBrowser(QWidget):
    """Search box, filters and the token table. Emits ``tokenActivated(id)`` when a token is picked."""

    tokenActivated = Signal(int)
    MODES = (("Text", "text"), ("ID", "id"), ("Hex bytes", "hex"), ("Regex", "regex"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.index_: VocabIndex | None = None
        self.jobs = Jobs(self)
        self._sort: tuple[str, bool] = ("id", False)
        self._want_unreachable = False
        self._quiet = False
        self._quiet_select = False
        self._pending_select: int | None = None  # select this id when the running search lands
        self.model = VocabTableModel(self)
        self.model.sortRequested.connect(self._on_sort)
        self._build()
        self._debounce = QTimer(self, singleShot=True, interval=250)
        self._debounce.timeout.connect(self.run_query)

    def _build(self) -> None:
        self.search = QLineEdit(placeholderText="Search tokens ({} for space, {} for newline)…".format(SYMBOLS[" "], SYMBOLS["\n"]), clearButtonEnabled=True)
        self.mode = QComboBox()
        for label, key in self.MODES:
            self.mode.addItem(label, key)
        self.ignore_case = QCheckBox("Aa", toolTip="ignore case")
        self.min_len = QSpinBox(minimum=0, maximum=1024, specialValueText="any", toolTip="minimum length in bytes")
        self.max_len = QSpinBox(minimum=0, maximum=1024, specialValueText="any", toolTip="maximum length in bytes")
        self.script = QComboBox(toolTip="only tokens using this script")
        self.script.addItem("any script", None)
        for s in (*SCRIPTS, COMMON, BYTES):
            self.script.addItem(s.replace("_", " "), s)
        self.kind = QComboBox(toolTip="only tokens of this kind")
        self.kind.addItem("any kind", None)
        for k in KINDS:
            self.kind.addItem(k, k)
        self.show_which = QComboBox(toolTip="special, unreachable and unused tokens")
        for label, key in (("all tokens", "all"), ("no specials", "nospecial"), ("specials only", "special"),
                           ("unreachable", "unreachable"), ("unused in corpus", "unused")):  # fmt: skip
            self.show_which.addItem(label, key)
        self.status = QLabel()
        self.progress = QProgressBar(maximumWidth=160, textVisible=False)
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
        for col, chars in ((COL_ID, 8), (COL_RANK, 8), (COL_TOKEN, 22), (COL_BYTES, 24), (COL_LEN, 5),
                           (COL_SCRIPT, 11), (COL_KIND, 11), (COL_PARENTS, 22)):  # fmt: skip
            self.table.setColumnWidth(col, em * chars + 12)
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
        filters.addWidget(self.script)
        filters.addWidget(self.kind)
        filters.addWidget(self.show_which)
        filters.addStretch(1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.cancel)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(filters)
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
        self._want_unreachable = False
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
            self._debounce.stop()
            try:
                self.index_.tok.token_bytes(token_id)
            except ValueError:  # not a token of this vocabulary
                return
            if self._sort[0] != "id":  # other orders can take a while on 200k tokens: sort in a worker
                self._pending_select = token_id
                self.run_query()
                return
            self.model.set_rows(self.index_.sorted(self.index_.ids(), *self._sort))
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
        """Search/filter/sort in a worker; the table keeps its rows until the result arrives."""
        if self.index_ is None:
            return
        q = self.query()
        if q.unreachable and self.index_.unreachable is None:
            self.find_unreachable()
            return
        if q.unused and self.index_.unused is None:
            self._set_status("Unused tokens need a corpus (set one from the training view).", error=True)
            return
        sort, desc = self._sort
        self._submit("query", self._on_rows, "Searching…", self.index_.search, q, sort=sort, descending=desc)

    def find_unreachable(self) -> None:
        """Scan for unreachable tokens in a worker, then show them."""
        if self.index_ is None:
            return
        self._want_unreachable = True
        self._submit("scan", self._on_scanned, "Finding unreachable tokens…", self.index_.compute_unreachable)

    def cancel_work(self) -> None:
        self.jobs.cancel_all()
        self.progress.hide()
        self.cancel.hide()

    def _submit(self, key: str, on_done: Any, label: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        self.jobs.submit(
            key, fn, *args,
            on_returned=lambda value: (self._finish(key), on_done(value)),
            on_errored=lambda exc: (self._finish(key), self._set_status(describe_error(exc), error=True)),
            on_aborted=lambda: (self._finish(key), self._update_status()),
            on_progress=self._on_progress,
            **kwargs,
        )  # fmt: skip
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

    def _on_rows(self, rows: list[int]) -> None:
        keep = self._pending_select if self._pending_select is not None else self._selected_id()
        self._pending_select = None
        self.model.set_rows(rows)
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
            self._debounce.start()

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
        self._quiet_select = not emit
        ix = self.model.index(row, COL_TOKEN)
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
        self.status.setStyleSheet("color: #a01414;" if error else "")

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
        name = ix.tok.name or "tokenizer"
        self._set_status(f"{name}: " + " · ".join(parts))


__all__ = ["COLUMNS", "TOKEN_ID_ROLE", "QueryError", "VocabBrowser", "VocabTableModel"]
