"""The two tables of the languages view: the fairness summary and the searchable language table.

Both are item models over a :class:`~bpeinspect.core.analysis.fairness.CorpusStats` (the
figures the view shows, its filters and baseline applied). The summary compares the open
tokenizers side by side, one column each; the language table has one row per language with
every figure, sorts by any column and filters by a search over code, name, script and region.
Each cell that stands for a language holds its code in :data:`CODE_ROLE`, so a double-click
opens that language's text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QLineEdit, QTableView, QVBoxLayout, QWidget

from bpeinspect.core.analysis import TOP, CorpusStats, FairnessSummary
from bpeinspect.gui.panels.languages.export import (
    Renderer,
    baseline_name,
    csv_text,
    language_name,
    premium_text,
    share_text,
    widget_renderer,
)

CODE_ROLE = Qt.ItemDataRole.UserRole + 1  # the language code a cell stands for
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2  # the raw value (sorting, CSV)
_Index = QModelIndex | QPersistentModelIndex
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

# the summary's rows: (header, tooltip)
SUMMARY_ROWS: list[tuple[str, str]] = [
    ("languages", "languages besides the baseline"),
    ("median premium", "half of the languages cost more than this, half less"),
    ("90th percentile", "one language in ten costs more than this"),
    ("maximum", "the most costly language's premium"),
    ("above 2×", "share of the languages that cost more than twice the baseline"),
    ("above 4×", "share of the languages that cost more than four times the baseline"),
    *[(f"most costly {i + 1}", "the languages this tokenizer handles worst") for i in range(TOP)],
    *[(f"least costly {i + 1}", "the languages this tokenizer handles best") for i in range(TOP)],
]


# a summary cell: a count, a figure, a language's (code, premium), or nothing
Cell = int | float | tuple[str, float] | None


class SummaryModel(QAbstractTableModel):
    """Rows are :data:`SUMMARY_ROWS`, columns the tokenizers' :class:`FairnessSummary`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._stats: CorpusStats | None = None
        self._sums: list[FairnessSummary] = []

    def set_stats(self, stats: CorpusStats | None) -> None:
        self.beginResetModel()
        self._stats = stats
        self._sums = stats.summaries() if stats is not None else []
        self.endResetModel()

    def summaries(self) -> list[FairnessSummary]:
        return list(self._sums)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or not self._sums else len(SUMMARY_ROWS)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._sums)

    def _cell(self, row: int, s: FairnessSummary) -> tuple[Cell, str | None]:
        """(raw value, language code or None) of one cell."""
        fixed: tuple[Cell, ...] = (s.languages, s.median, s.p90, s.max, s.over_2, s.over_4)
        if row < len(fixed):
            return fixed[row], (s.most_costly[0][0] if row == 3 and s.most_costly else None)
        k = row - len(fixed)
        ranked = s.most_costly if k < TOP else s.least_costly
        k %= TOP
        return (ranked[k] if k < len(ranked) else None), (ranked[k][0] if k < len(ranked) else None)

    @staticmethod
    def _text(stats: CorpusStats, row: int, value: Cell) -> str:
        if value is None:
            return ""
        if row == 0:
            return f"{value:,}"
        if isinstance(value, tuple):
            code, p = value
            return f"{stats.corpus.language(code).name}  {premium_text(p)}"
        if row in (4, 5):
            return share_text(float(value))
        return premium_text(float(value))

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        stats = self._stats
        if not index.isValid() or stats is None:
            return None
        s = self._sums[index.column()]
        value, code = self._cell(index.row(), s)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(stats, index.row(), value)
        if role == VALUE_ROLE:
            return value[1] if isinstance(value, tuple) else value
        if role == CODE_ROLE:
            return code
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return None if isinstance(value, tuple) else int(_RIGHT)
        if role == Qt.ItemDataRole.ToolTipRole and code is not None:
            lang = stats.corpus.language(code)
            p = stats.premium(s.tokenizer, code)
            return (
                f"{language_name(lang)}: {premium_text(p)} {baseline_name(stats)} under "
                f"{s.tokenizer}\nDouble-click to open its text"
            )
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self._sums):
                return self._sums[section].tokenizer
            return None
        if 0 <= section < len(SUMMARY_ROWS):
            if role == Qt.ItemDataRole.DisplayRole:
                return SUMMARY_ROWS[section][0]
            if role == Qt.ItemDataRole.ToolTipRole:
                return SUMMARY_ROWS[section][1]
        return None

    def csv(self) -> str:
        """The table as CSV: one row per figure, a column per tokenizer (languages as ``code:premium``)."""
        head = ["figure", *(s.tokenizer for s in self._sums)]
        rows = []
        for r, (name, _) in enumerate(SUMMARY_ROWS):
            cells: list[object] = [name]
            for s in self._sums:
                value, _code = self._cell(r, s)
                cells.append(f"{value[0]}:{value[1]:.4f}" if isinstance(value, tuple) else value)
            rows.append(cells)
        return csv_text(head, rows)


class LanguageModel(QAbstractTableModel):
    """One row per language (:meth:`CorpusStats.language_table`): facts, then tokens and premium per tokenizer."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._head: list[str] = []
        self._rows: list[list[object]] = []
        self._search: list[str] = []  # lower-case code, name, script, region per row

    def set_stats(self, stats: CorpusStats | None) -> None:
        self.beginResetModel()
        self._head, self._rows = stats.language_table() if stats is not None else ([], [])
        self._search = [" ".join(str(v) for v in row[:4]).lower() for row in self._rows]
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._head)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows by one column's raw values (empty cells last), in Python: a proxy's
        sort would call back into Python twice per comparison."""
        if not 0 <= column < len(self._head):
            return

        def key(i: int) -> tuple:
            v = self._rows[i][column]
            return (v is None, v.lower() if isinstance(v, str) else 0 if v is None else v)

        order_ = sorted(range(len(self._rows)), key=key, reverse=order == Qt.SortOrder.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        self._rows = [self._rows[i] for i in order_]
        self._search = [self._search[i] for i in order_]
        self.layoutChanged.emit()

    def matches(self, row: int, words: list[str]) -> bool:
        return all(w in self._search[row] for w in words)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        value = self._rows[row][col]
        if role == Qt.ItemDataRole.DisplayRole:
            if value is None:
                return ""
            if isinstance(value, float):
                return premium_text(value)
            return f"{value:,}" if isinstance(value, int) else value
        if role == VALUE_ROLE:
            return value
        if role == CODE_ROLE:
            return self._rows[row][0]
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(_RIGHT)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._head[section].replace(" tokens", "\ntokens").replace(" premium", "\npremium")
        return None

    def csv_maker(self, rows: list[int] | None = None) -> Callable[[], str]:
        """What makes the table (or these rows of it) as CSV, on any thread: the rows are held as they are now."""
        head, body = self._head, self._rows
        picked = range(len(body)) if rows is None else list(rows)
        return lambda: csv_text(head, (body[r] for r in picked))


class SearchProxy(QSortFilterProxyModel):
    """Keeps the rows whose code, name, script or region hold every word searched; sorting is
    the language model's own (:meth:`LanguageModel.sort`)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._words: list[str] = []

    def set_search(self, text: str) -> None:
        self.beginFilterChange()
        self._words = text.lower().split()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: _Index) -> bool:
        model = self.sourceModel()
        return not self._words or not isinstance(model, LanguageModel) or model.matches(row, self._words)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)


class TablePage(QWidget):
    """A table of the view: a :class:`QTableView` (and for the language table, a search box)."""

    languageActivated = Signal(str)  # a language code

    def __init__(self, model: SummaryModel | LanguageModel, *, searchable: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.proxy = SearchProxy(self)
        self.proxy.setSourceModel(model)
        self.table = QTableView()
        self.table.setModel(self.proxy if searchable else model)
        self.table.setSelectionBehavior(
            QTableView.SelectionBehavior.SelectRows if searchable else QTableView.SelectionBehavior.SelectItems
        )
        self.table.setSortingEnabled(searchable)
        if searchable:
            self.table.sortByColumn(1, Qt.SortOrder.AscendingOrder)  # by name
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(not searchable)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setResizeContentsPrecision(60)  # a few rows tell the width; 500 would take a while
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(self._activate)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)  # docked below a small window's text, the rows get the pixels
        self.search: QLineEdit | None = None
        self.count_label = QLabel()
        if searchable:  # the count beside the search box: the rows get its line
            self.search = QLineEdit()
            self.search.setPlaceholderText("Search languages: name, code, script or region")
            self.search.setClearButtonEnabled(True)
            self.search.textChanged.connect(self._on_search)
            top = QHBoxLayout()
            top.addWidget(self.search, 1)
            top.addWidget(self.count_label)
            lay.addLayout(top)
            lay.addWidget(self.table, 1)
        else:  # the summary's note below it
            self.count_label.setWordWrap(True)  # a long line would set the panel's least width
            lay.addWidget(self.table, 1)
            lay.addWidget(self.count_label)
        self._searchable = searchable
        self._unsized: list[int] = []  # columns still to fit to their contents (see _size_next)
        self._sizer = QTimer(self, singleShot=True, interval=0)
        self._sizer.timeout.connect(self._size_next)

    def set_stats(self, stats: CorpusStats | None, focus: str | None = None) -> None:
        # (every tokenizer is a column: a table has no focus)
        self.model.set_stats(stats)
        if self._searchable:  # the new rows in the order the header shows
            header = self.table.horizontalHeader()
            self.model.sort(header.sortIndicatorSection(), header.sortIndicatorOrder())
        self._unsized = list(range(self.model.columnCount()))
        self._sizer.start()
        self._count()

    def sizing(self) -> bool:
        """True while some columns are still to be fitted to their contents."""
        return bool(self._unsized)

    def _size_next(self) -> None:
        """Fit one column to its contents, the next on the next event-loop turn: the whole
        table's ``resizeColumnsToContents`` asked the model for every cell of 60 rows in each of
        its columns in one turn, which next to the counting worker stalled the window."""
        if self._unsized:
            self.table.resizeColumnToContents(self._unsized.pop(0))
        if self._unsized:
            self._sizer.start()

    def _on_search(self, text: str) -> None:
        self.proxy.set_search(text)
        self._count()

    def _count(self) -> None:
        if self._searchable:
            shown, total = self.proxy.rowCount(), self.model.rowCount()
            self.count_label.setText(f"{shown:,} of {total:,} languages" if shown != total else f"{total:,} languages")
        else:
            self.count_label.setText(
                "premium = a language's tokens ÷ the baseline's tokens for the same text, "
                "under the same tokenizer; double-click a language to open its text"
            )

    def shown_rows(self) -> list[int]:
        """The model rows the table shows, in its order (search and sort applied)."""
        return [self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount())]

    def _activate(self, index: QModelIndex) -> None:
        code = index.data(CODE_ROLE)
        if code:
            self.languageActivated.emit(code)

    def csv_maker(self) -> Callable[[], str]:
        """What makes the CSV of what the table shows (on the worker)."""
        if isinstance(self.model, LanguageModel):
            return self.model.csv_maker(self.shown_rows())
        text = self.model.csv()
        return lambda: text

    def renderer(self) -> tuple[Renderer, QSize]:
        return widget_renderer(self.table)


__all__ = ["CODE_ROLE", "SUMMARY_ROWS", "VALUE_ROLE", "LanguageModel", "SearchProxy", "SummaryModel", "TablePage"]
