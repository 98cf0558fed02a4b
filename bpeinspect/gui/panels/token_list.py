"""The token list: each token of the current encoding with its text next to its id, as the
web playgrounds show it, copyable as text, ids or JSON pairs.

The model reads the encoding when a row is drawn, so a million tokens cost no more than a
screenful; the window's encoding is kept per segment of the text
(:class:`~bpeinspect.core.live_text.LiveEncoding`) and is read a part at a time, never joined.
Copying takes the selected rows, or all of them when none are selected, and is built in a
worker (:class:`~bpeinspect.gui.panels.big_copy.BigCopy`): millions of tokens take seconds.

>>> from bpeinspect.core import load_tokenizer
>>> from bpeinspect.gui.panels.big_copy import build_copy
>>> tok = load_tokenizer("cl100k_base"); enc = tok.encode_with_offsets("hi 🎉")
>>> b"".join(build_copy(IdSnapshot.of(enc), None, "text", tok)).decode()
'hi\\n␣<f0 9f>\\n<8e>\\n<89>'
>>> b"".join(build_copy(IdSnapshot.of(enc), [(0, 2)], "pairs", tok)).decode()
'[{"id": 6151, "token": "hi"}, {"id": 11410, "token": "<20 f0 9f>"}]'
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import LEGEND, Encoding, Tokenizer
from bpeinspect.core.live_text import LiveEncoding
from bpeinspect.gui.overlay.glyphs import token_shown  # characters no font draws as code points
from bpeinspect.gui.panels.big_copy import BigCopy, IdSnapshot

_Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("#", "ID", "Token", "Bytes")
COL_INDEX, COL_ID, COL_TOKEN, COL_BYTES = range(len(COLUMNS))
TEXTS_KEPT = 1 << 16  # token texts remembered before the memo starts afresh
# the roles the model gives, as ints (what a view passes; comparing enums costs more)
_DISPLAY, _ALIGN, _FONT, _TIP = (
    int(r.value)
    for r in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ToolTipRole,
    )
)
_GIVEN = frozenset((_DISPLAY, _ALIGN, _FONT, _TIP))
_SHOWN_ROLES = [_DISPLAY, _FONT, _TIP]  # what changes with the tokens (alignment does not)
_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)


def token_text(tok: Tokenizer, token_id: int) -> str:
    """A token's text as every view shows it (``␣`` for a space, ``<e4 bd>`` for bytes of a split character)."""
    return token_shown(tok, token_id)


class TokenListModel(QAbstractTableModel):
    """Rows are the tokens of one encoding, in order."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.tok: Tokenizer | None = None
        self.enc: Encoding | LiveEncoding | None = None
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._special = QFont(self._mono)
        self._special.setBold(True)
        self._n = 0  # rows the views know of (a LiveEncoding grows and shrinks in place)
        # the part the last row read came from, as (first row, end row, its encoding, the
        # LiveEncoding's count of changes then): a view asks for a screenful of neighbouring
        # rows, nine roles each, per paint
        self._part_rows: tuple[int, int, Encoding, int] | None = None
        self._texts: dict[int, str] = {}  # token id -> its text, as shown (for this tokenizer)

    def set_encoding(self, tok: Tokenizer | None, enc: Encoding | LiveEncoding | None) -> None:
        """Show ``enc``. The same encoding again (a :class:`LiveEncoding` after an edit:
        the same object, changed in place) keeps the views' selection and scroll: rows are
        added or taken at the end and the rest said to have changed, where a reset would
        make every view start over."""
        self._part_rows = None
        if tok is not self.tok:
            self._texts = {}
        if enc is None or enc is not self.enc or tok is not self.tok:
            self.beginResetModel()
            self.tok, self.enc = tok, enc
            self._n = len(enc) if enc is not None else 0
            self.endResetModel()
            return
        old, new = self._n, len(enc)
        if new > old:
            self.beginInsertRows(QModelIndex(), old, new - 1)
            self._n = new
            self.endInsertRows()
        elif new < old:
            self.beginRemoveRows(QModelIndex(), new, old - 1)
            self._n = new
            self.endRemoveRows()
        if new:
            self.dataChanged.emit(self.index(0, 0), self.index(new - 1, len(COLUMNS) - 1), _SHOWN_ROLES)

    def ids(self) -> list[int]:
        enc = self.enc
        if enc is None:
            return []
        if isinstance(enc, LiveEncoding):  # read, not joined
            return enc.ids_between(0, len(enc))[0]
        return list(enc.ids)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._n

    def _part(self, r: int) -> tuple[Encoding | None, int]:
        """The encoding holding token ``r`` and its index there (a segment's, for a LiveEncoding)."""
        enc = self.enc
        if not isinstance(enc, LiveEncoding):
            return (enc, r) if enc is not None and r < len(enc.ids) else (None, 0)
        rows, changes = self._part_rows, enc.changes
        if rows is not None and rows[0] <= r < rows[1] and rows[3] == changes:
            return rows[2], r - rows[0]
        p = enc.part_of_token(r)
        if p is None:  # the encoding moved on since the views last heard of it
            return None, 0
        self._part_rows = (p.token, p.token + len(p.enc.ids), p.enc, changes)
        return p.enc, r - p.token

    def token_text(self, tok: Tokenizer, token_id: int) -> str:
        """:func:`token_text`, remembered for the tokenizer shown (a screenful is asked for on every paint)."""
        text = self._texts.get(token_id)
        if text is None:
            if len(self._texts) > TEXTS_KEPT:
                self._texts.clear()
            text = self._texts[token_id] = token_text(tok, token_id)
        return text

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole and section == COL_TOKEN:
            return f"the token's text; {LEGEND}"
        return None

    def data(self, index: _Index, role: int = _DISPLAY) -> Any:
        # a view asks for some nine roles per cell, on every paint: the ones not given go at once
        tok = self.tok
        if role not in _GIVEN or tok is None or not index.isValid():
            return None
        r, col = index.row(), index.column()
        if role == _ALIGN:
            return None if col == COL_TOKEN else _RIGHT
        if role == _FONT and col != COL_TOKEN:
            return None
        if r >= self._n:
            return None
        part, j = self._part(r)
        if part is None:
            return None
        tid = part.ids[j]
        if role == _DISPLAY:
            if col == COL_INDEX:
                return str(r)
            if col == COL_ID:
                return str(tid)
            if col == COL_TOKEN:
                return self.token_text(tok, tid)
            return str(part.byte_ends[j] - part.byte_starts[j])
        if role == _FONT:
            return self._special if part.is_special(j) else self._mono
        kind = tok.token_kind(tid)  # the tooltip
        return f"token {r}: id {tid}{'' if kind == 'normal' else f' ({kind})'}"


class ElidedLabel(QLabel):
    """A one-line label that fits the room it gets, shortened in the middle (the whole text in
    its tooltip), instead of asking for the width of its whole text."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._whole = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._whole = text
        self.setToolTip(text)
        self._fit()

    def text(self) -> str:
        return self._whole

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.fontMetrics().horizontalAdvance("Tokens…"), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        QLabel.setText(self, self.fontMetrics().elidedText(self._whole, Qt.TextElideMode.ElideMiddle, self.width()))


class TokenList(QWidget):
    """The current tokenizer's tokens: index, id, text and length in bytes."""

    tokenClicked = Signal(int)  # the token's index in the encoding

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TokenListModel(self)
        self.title = ElidedLabel("Tokens")  # a long name does not widen the dock
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setTabKeyNavigation(False)  # Tab goes on to the next pane (arrows move between cells)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        hh.setSectionResizeMode(COL_TOKEN, QHeaderView.ResizeMode.Stretch)
        em = self.fontMetrics().horizontalAdvance("0")
        for col, chars in ((COL_INDEX, 6), (COL_ID, 7), (COL_BYTES, 5)):
            self.table.setColumnWidth(col, em * chars + 12)
        self.table.clicked.connect(lambda ix: self.tokenClicked.emit(ix.row()))
        self.copier = BigCopy(self)
        buttons = []
        for label, tip, slot in (
            ("Copy text", "The tokens' texts, one per line (the selected ones, or all)", self.copy_text),
            ("Copy ids", "The ids as a list: 9906, 1917", self.copy_ids),
            ("Copy JSON", 'Pairs of id and text: [{"id": 9906, "token": "Hello"}, …]', self.copy_pairs),
        ):
            b = QToolButton()
            b.setText(label)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            buttons.append(b)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        for b in buttons:
            head.addWidget(b)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(head)
        lay.addWidget(self.table, 1)

    def set_encoding(self, tok: Tokenizer | None, enc: Encoding | LiveEncoding | None, label: str = "") -> None:
        keep = self.selected_ranges() or []
        self.model.set_encoding(tok, enc)
        n = len(enc) if enc is not None else 0
        # the dock's title says "Tokens" above it
        self.title.setText(f"{label or (tok.name if tok else '')} ({n:,})" if tok is not None else "Tokens")
        if len(keep) == 1 and keep[0][1] == keep[0][0] + 1 and keep[0][0] < n:
            self.select(keep[0][0], scroll=False)

    def select(self, row: int | None, *, scroll: bool = True) -> None:
        """Select token ``row`` (None: nothing) and scroll to it. Rows the user selected
        (several, with Shift or Ctrl) stay selected when ``row`` is one of them or None."""
        sel = self.table.selectionModel()
        ranges = self.selected_ranges() or []
        several = sum(end - first for first, end in ranges) > 1
        if row is None or not 0 <= row < self.model.rowCount():
            if not several:
                sel.clearSelection()
            return
        ix = self.model.index(row, COL_ID)
        if not (several and any(first <= row < end for first, end in ranges)):
            blocked = self.table.blockSignals(True)
            self.table.selectRow(row)
            self.table.blockSignals(blocked)
        if scroll:
            self.table.scrollTo(ix, QAbstractItemView.ScrollHint.PositionAtCenter)

    def selected_rows(self) -> list[int]:
        sel = self.table.selectionModel()
        return sorted(ix.row() for ix in sel.selectedRows()) if sel is not None else []

    def selected_ranges(self) -> list[tuple[int, int]] | None:
        """The selected rows as (first, end) ranges in order, None when none is selected (read
        from the selection's ranges: a selection of every row of millions costs no more)."""
        sel = self.table.selectionModel()
        if sel is None or not sel.hasSelection():
            return None
        spans = sorted((r.top(), r.bottom() + 1) for r in sel.selection().toList())
        merged: list[tuple[int, int]] = []
        for first, end in spans:
            if merged and first <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((first, end))
        return merged

    def _copy(self, fmt: str) -> None:
        if self.model.tok is not None and self.model.enc is not None:
            self.copier.copy(IdSnapshot.of(self.model.enc), self.selected_ranges(), fmt, self.model.tok)

    def copy_text(self) -> None:
        self._copy("text")

    def copy_ids(self) -> None:
        self._copy("ids")

    def copy_pairs(self) -> None:
        self._copy("pairs")


__all__ = ["COLUMNS", "TokenList", "TokenListModel"]
