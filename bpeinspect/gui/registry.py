"""The open tokenizers as one list model: the picker's model, and the one every panel follows.

Each row is an :class:`OpenTokenizer`: the tokenizer, the spec it was opened from (a built-in
name, a path, ``trained:…``), and the window's latest encoding of its text. Rows stay in the
order the tokenizers were asked for (:meth:`TokenizerRegistry.expect`), whatever order their
loads finish in, so the panes, the picker and the compare view list them alike.

>>> from bpeinspect.core import load_tokenizer
>>> reg = TokenizerRegistry()
>>> reg.expect("o200k_base"); reg.expect("r50k_base")
>>> reg.add(load_tokenizer("r50k_base"), "r50k_base")      # its load finished first
>>> reg.add(load_tokenizer("o200k_base"), "o200k_base")
>>> [reg.index(r).data() for r in range(reg.rowCount())], reg.current().name
(['o200k_base', 'r50k_base'], 'o200k_base')
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from bpeinspect.core import Tokenizer
from bpeinspect.core.live import EncodeResult

TOKENIZER_ROLE = Qt.ItemDataRole.UserRole + 1
SPEC_ROLE = Qt.ItemDataRole.UserRole + 2
RESULT_ROLE = Qt.ItemDataRole.UserRole + 3
_Index = QModelIndex | QPersistentModelIndex


@dataclass(eq=False)
class OpenTokenizer:
    """One row: a tokenizer, where it came from, and the latest encoding of the window's text."""

    tok: Tokenizer
    spec: str
    rank: int  # the order it was asked for in
    result: EncodeResult | None = None
    revision: int = -1  # the text revision ``result`` encodes (or failed to)


class TokenizerRegistry(QAbstractListModel):
    """Open tokenizers in the order they were asked for, and the current one.

    Besides the model's own signals, ``added``/``removed`` carry the tokenizer (after the
    rows changed) and ``currentChanged`` the new current one (or None).
    """

    added = Signal(object)  # Tokenizer
    removed = Signal(object)  # Tokenizer
    currentChanged = Signal(object)  # Tokenizer or None

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[OpenTokenizer] = []
        self._current: Tokenizer | None = None
        self._expected: dict[str, int] = {}  # spec -> rank, while it loads
        self._ranks = itertools.count()

    # -- the model --------------------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.tok.name or "tokenizer"
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tok.source or row.spec
        if role == TOKENIZER_ROLE:
            return row.tok
        if role == SPEC_ROLE:
            return row.spec
        if role == RESULT_ROLE:
            return row.result
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = super().roleNames()
        names.update({TOKENIZER_ROLE: QByteArray(b"tokenizer"), SPEC_ROLE: QByteArray(b"spec"),
                      RESULT_ROLE: QByteArray(b"result")})  # fmt: skip
        return names

    # -- opening and closing ------------------------------------------------------------------------

    def expect(self, spec: str) -> None:
        """``spec`` is being loaded: its row will come in this place of the order."""
        if spec not in self._expected and self.find(spec) is None:
            self._expected[spec] = next(self._ranks)

    def forget(self, spec: str) -> None:
        """``spec`` will not come after all (its load failed)."""
        self._expected.pop(spec, None)

    def loading(self) -> list[str]:
        """Specs expected and not open yet."""
        return list(self._expected)

    def add(self, tok: Tokenizer, spec: str = "") -> None:
        """Open ``tok`` in its place; it becomes current if nothing is, or if it comes first."""
        if tok in self:
            return
        spec = spec or tok.name
        rank = self._expected.pop(spec, None)
        rank = next(self._ranks) if rank is None else rank
        row = sum(1 for r in self._rows if r.rank < rank)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.insert(row, OpenTokenizer(tok, spec, rank))
        self.endInsertRows()
        self.added.emit(tok)
        if self._current is None or row == 0:
            self.set_current(tok)

    def remove(self, tok: Tokenizer) -> None:
        row = self.row_of(tok)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._rows[row]
        self.endRemoveRows()
        self.removed.emit(tok)
        if self._current is tok:
            self.set_current(self._rows[0].tok if self._rows else None)

    def set_current(self, tok: Tokenizer | None) -> None:
        if tok is not None and tok not in self:
            raise ValueError(f"{tok!r} is not open")
        if tok is not self._current:
            self._current = tok
            self.currentChanged.emit(tok)

    # -- reading --------------------------------------------------------------------------------------

    def tokenizers(self) -> list[Tokenizer]:
        return [r.tok for r in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, tok: object) -> bool:
        return self.row_of(tok) is not None  # type: ignore[arg-type]

    def current(self) -> Tokenizer | None:
        return self._current

    def current_row(self) -> int:
        """The current tokenizer's row, or -1."""
        row = self.row_of(self._current) if self._current is not None else None
        return -1 if row is None else row

    def row_of(self, tok: Tokenizer) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.tok is tok), None)

    def entry(self, tok: Tokenizer) -> OpenTokenizer | None:
        row = self.row_of(tok)
        return None if row is None else self._rows[row]

    def entries(self) -> list[OpenTokenizer]:
        return list(self._rows)

    def spec_of(self, tok: Tokenizer) -> str:
        """The name or path ``tok`` was opened from."""
        entry = self.entry(tok)
        return entry.spec if entry is not None else tok.name

    def find(self, spec: str) -> Tokenizer | None:
        return next((r.tok for r in self._rows if r.spec == spec), None)

    # -- encodings ------------------------------------------------------------------------------------

    def result(self, tok: Tokenizer) -> EncodeResult | None:
        entry = self.entry(tok)
        return None if entry is None else entry.result

    def set_result(self, tok: Tokenizer, result: EncodeResult | None, revision: int) -> None:
        """Keep ``result`` (an encoding of text revision ``revision``) in ``tok``'s row."""
        row = self.row_of(tok)
        if row is None:
            return
        entry = self._rows[row]
        entry.result, entry.revision = result, revision
        ix = self.index(row)
        self.dataChanged.emit(ix, ix, [RESULT_ROLE])


def tokenizers_of(model: QAbstractItemModel) -> list[Tokenizer]:
    """The tokenizers a list model holds (its :data:`TOKENIZER_ROLE`), in row order."""
    return [model.index(r, 0).data(TOKENIZER_ROLE) for r in range(model.rowCount())]


def specs_of(model: QAbstractItemModel) -> list[str]:
    return [model.index(r, 0).data(SPEC_ROLE) for r in range(model.rowCount())]


def follow_rows(model: QAbstractItemModel, slot: Any) -> None:
    """Call ``slot()`` whenever rows come, go or the model resets."""
    model.rowsInserted.connect(lambda *_: slot())
    model.rowsRemoved.connect(lambda *_: slot())
    model.modelReset.connect(lambda *_: slot())
