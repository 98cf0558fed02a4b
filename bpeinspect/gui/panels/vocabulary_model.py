"""The vocabulary table's model: a flat list of token ids over a :class:`~bpeinspect.core.analysis.vocab.VocabIndex`.

Cells are computed when drawn (parents too), so opening o200k_base costs one sorted id list;
sorting is asked of the browser (``sortRequested``), which sorts in a worker and hands the
rows back with :meth:`VocabTableModel.set_rows`.

>>> from bpeinspect.core import load_tokenizer
>>> model = VocabTableModel(); model.set_index(VocabIndex(load_tokenizer("gpt2")))
>>> model.rowCount(), model.index(32, COL_TOKEN).data()
(50257, 'A')
"""

from __future__ import annotations

import bisect
import operator
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase

from bpeinspect.core import LEGEND, display_bytes, hex_bytes
from bpeinspect.core.analysis import VocabIndex, positions
from bpeinspect.gui.overlay.glyphs import bytes_cell, rank_cell, shown
from bpeinspect.gui.overlay.palette import app_colors

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
    (
        "Flags",
        None,
        "unreachable: the encoder never produces it from its own bytes; unused: never occurs "
        "in the corpus; unbuildable: no chain of merges makes it",
    ),
]
COL_ID, COL_RANK, COL_TOKEN, COL_BYTES, COL_LEN, COL_SCRIPT, COL_KIND, COL_PARENTS, COL_FLAGS = range(len(COLUMNS))
_MONO_COLUMNS = {COL_TOKEN, COL_BYTES, COL_PARENTS}
_NUMBER_COLUMNS = {COL_ID, COL_RANK, COL_LEN}


class VocabTableModel(QAbstractTableModel):
    """Rows are token ids (in the order last searched/sorted); columns are :data:`COLUMNS`."""

    sortRequested = Signal(int, Qt.SortOrder)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.index_: VocabIndex | None = None
        self._rows: list[int] = []
        self._row_of: np.ndarray | None = None  # row of each id (see core.analysis.vocab.positions)
        self._id_order = 0  # 1 / -1: the rows are every id in ascending / descending order (row_of bisects)
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- contents ----------------------------------------------------------------------------------

    def set_index(self, index: VocabIndex | None, rows: list[int] | None = None) -> None:
        self.beginResetModel()
        self.index_ = index
        self._rows = (index.ids() if index is not None else []) if rows is None else rows
        self._row_of = None
        # every id in ascending order (a tokenizer just shown): a row is found by bisection, where
        # building the positions of 200k ids would hold the GUI thread at the first click
        self._id_order = 1 if rows is None else 0
        self.endResetModel()

    def show_every_id(self, descending: bool = False) -> None:
        """Show every id of the index in id order: the index holds them sorted, so nothing is
        sorted and no positions are built (a row is found by bisection)."""
        self.beginResetModel()
        rows = self.index_.ids() if self.index_ is not None else []
        if descending:
            rows.reverse()
        self._rows, self._row_of = rows, None
        self._id_order = -1 if descending else 1
        self.endResetModel()

    def set_rows(self, rows: list[int], row_of: np.ndarray | None = None) -> None:
        """Show ``rows`` (token ids); ``row_of``: their :func:`~bpeinspect.core.analysis.vocab.positions`,
        if a worker made them (else made when first asked)."""
        self.beginResetModel()
        self._rows = rows
        self._row_of = row_of
        self._id_order = 0
        self.endResetModel()

    def rows(self) -> list[int]:
        return list(self._rows)

    def token_id(self, row: int) -> int:
        return self._rows[row]

    def row_of(self, token_id: int) -> int | None:
        if self._id_order and self._row_of is None:
            rows = self._rows
            if self._id_order > 0:
                row = bisect.bisect_left(rows, token_id)
            else:
                row = bisect.bisect_left(rows, -token_id, key=operator.neg)
            return row if row < len(rows) and rows[row] == token_id else None
        if self._row_of is None:
            self._row_of = positions(self._rows)
        where = self._row_of
        row = int(where[token_id]) if 0 <= token_id < len(where) else -1
        return None if row < 0 else row

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
            return shown(self._text(ix, tid, col))  # characters no font draws as code points
        if role == TOKEN_ID_ROLE:
            return tid
        if role == Qt.ItemDataRole.FontRole and col in _MONO_COLUMNS:
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if col in _NUMBER_COLUMNS:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col in (COL_TOKEN, COL_BYTES, COL_FLAGS, COL_PARENTS):
            return shown(self._tooltip(ix, tid, col))
        if role == Qt.ItemDataRole.BackgroundRole and self._warn(ix, tid):
            return QColor(app_colors().warn_bg)
        if role == Qt.ItemDataRole.ForegroundRole and col == COL_FLAGS:
            return QColor(app_colors().warn_text)
        return None

    def _text(self, ix: VocabIndex, tid: int, col: int) -> str:
        tok = ix.tok
        if col == COL_ID:
            return str(tid)
        if col == COL_RANK:
            return rank_cell(ix.rank(tid))
        if col == COL_TOKEN:
            return ix.display(tid)
        if col == COL_BYTES:
            return bytes_cell(tok.token_bytes(tid), 20)
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
        return f"{tid}: {tok.shown_with_marks(tid, display_bytes(bts))}\n{hex_bytes(bts)}"
