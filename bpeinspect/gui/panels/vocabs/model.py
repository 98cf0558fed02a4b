"""The Vocabularies view's token table: a flat list of token bytes over a
:class:`~bpeinspect.core.analysis.vocab_diff.VocabDiff`, cells made when drawn.

Sorting and searching run on the view's worker
(:func:`~bpeinspect.core.analysis.vocab_diff.list_tokens`); the model only shows the rows it
is handed, so 200k rows cost a list, not 200k items.

>>> from bpeinspect.core import load_tokenizer
>>> from bpeinspect.core.analysis.vocab_diff import compare_vocabularies
>>> diff = compare_vocabularies([("r50k", load_tokenizer("r50k_base")), ("cl100k", load_tokenizer("cl100k_base"))])
>>> model = TokenRows(); model.set_rows(diff, [b" hello"])
>>> [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
['Token', 'ID in r50k', 'ID in cl100k', 'Len', 'Category']
>>> [model.index(0, c).data() for c in range(model.columnCount())]
['␣hello', '23748', '24748', '6', 'Latin']
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase

from bpeinspect.core import LEGEND, display_bytes, hex_bytes
from bpeinspect.core.analysis import VocabDiff
from bpeinspect.gui.overlay.glyphs import shown

_Index = QModelIndex | QPersistentModelIndex
COL_TOKEN = 0


class TokenRows(QAbstractTableModel):
    """Columns: the token, its id in each vocabulary (empty where it is missing), its length in
    bytes and its category. ``sortRequested(key, descending)`` asks the view to sort."""

    sortRequested = Signal(str, bool)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.diff: VocabDiff | None = None
        self._rows: list[bytes] = []
        self._shown: dict[bytes, str] = {}
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_rows(self, diff: VocabDiff | None, rows: list[bytes]) -> None:
        self.beginResetModel()
        if diff is not self.diff:
            self._shown = {}
        self.diff, self._rows = diff, rows
        self.endResetModel()

    def rows(self) -> list[bytes]:
        return self._rows

    def token(self, row: int) -> bytes:
        return self._rows[row]

    def sides(self) -> int:
        return len(self.diff.sides) if self.diff is not None else 0

    def sort_key(self, column: int) -> str:
        """The :func:`list_tokens` sort key of a column."""
        n = self.sides()
        if column == COL_TOKEN:
            return "token"
        if column <= n:
            return f"id:{column - 1}"
        return "length" if column == n + 1 else "category"

    # -- Qt ----------------------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.sides() + 3

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or self.diff is None:
            return None
        n = self.sides()
        if role == Qt.ItemDataRole.DisplayRole:
            if section == COL_TOKEN:
                return "Token"
            if section <= n:
                return f"ID in {self.diff.names[section - 1]}"
            return "Len" if section == n + 1 else "Category"
        if role == Qt.ItemDataRole.ToolTipRole:
            if section == COL_TOKEN:
                return f"the token's text; {LEGEND}"
            if section <= n:
                return f"the token's id in {self.diff.names[section - 1]} (empty: it does not hold the token)"
            return "length in bytes" if section == n + 1 else "the script of its letters, or what else it is"
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.diff is None:
            return None
        t = self._rows[index.row()]
        col, n = index.column(), self.sides()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_TOKEN:
                s = self._shown.get(t)
                if s is None:
                    s = self._shown[t] = shown(display_bytes(t))
                return s
            if col <= n:
                i = self.diff.token_id(col - 1, t)
                return "" if i is None else str(i)
            return str(len(t)) if col == n + 1 else self.diff.category(t)
        if role == Qt.ItemDataRole.ToolTipRole and col == COL_TOKEN:
            return hex_bytes(t)
        if role == Qt.ItemDataRole.FontRole and col == COL_TOKEN:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and 0 < col <= n + 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if self.diff is not None:
            self.sortRequested.emit(self.sort_key(column), order == Qt.SortOrder.DescendingOrder)


def rows_csv(diff: VocabDiff, rows: list[bytes]) -> str:
    """``rows`` as CSV: the token as shown, its hex, its id in each vocabulary, its length and
    category (for the worker: it reads nothing of the model).

    >>> from bpeinspect.core import load_tokenizer
    >>> from bpeinspect.core.analysis.vocab_diff import compare_vocabularies
    >>> d = compare_vocabularies([("a", load_tokenizer("r50k_base")), ("b", load_tokenizer("cl100k_base"))])
    >>> print(rows_csv(d, [b" hello"]), end="")
    token,hex,id_a,id_b,bytes,category
    ␣hello,2068656c6c6f,23748,24748,6,Latin
    """
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["token", "hex", *(f"id_{name}" for name in diff.names), "bytes", "category"])
    for t in rows:
        ids = [diff.token_id(k, t) for k in range(len(diff.sides))]
        w.writerow([display_bytes(t), t.hex(), *("" if i is None else i for i in ids), len(t), diff.category(t)])
    return buf.getvalue()


__all__ = ["TokenRows", "rows_csv"]
