"""The open tokenizers as one list model: the picker's model, and the one every panel follows.

Each row is an :class:`OpenTokenizer`: the tokenizer, the spec it was opened from (a built-in
name, a path, ``trained:…``), and the window's latest encoding of its text. Rows stay in the
order the tokenizers were asked for (:meth:`TokenizerRegistry.expect`), whatever order their
loads finish in, so the panes, the picker and the compare view list them alike.

One of them is the **reference** every comparison is made against (the panes' "vs X", the
compare view, the languages plot's order): the one the user pinned, else the first row.
A row may be open without a pane (``shown`` false: a trained tokenizer joins the picker, not
the overlay, until the user asks). Two tokenizers of one name are told apart by
:meth:`TokenizerRegistry.label` (the picker shows labels).

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
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath
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
from bpeinspect.core.live_text import EncodeResult
from bpeinspect.gui.turns import later

TOKENIZER_ROLE = Qt.ItemDataRole.UserRole + 1
SPEC_ROLE = Qt.ItemDataRole.UserRole + 2
RESULT_ROLE = Qt.ItemDataRole.UserRole + 3
REFERENCE_ROLE = Qt.ItemDataRole.UserRole + 4  # True for the reference tokenizer
SHOWN_ROLE = Qt.ItemDataRole.UserRole + 5  # True if the row has a pane in the overlay
_Index = QModelIndex | QPersistentModelIndex


@dataclass(eq=False)
class OpenTokenizer:
    """One row: a tokenizer, where it came from, and the latest encoding of the window's text."""

    tok: Tokenizer
    spec: str
    rank: int  # the order it was asked for in
    result: EncodeResult | None = None
    revision: int = -1  # the text revision ``result`` encodes (or failed to)
    shown: bool = True  # has a pane in the overlay


class TokenizerRegistry(QAbstractListModel):
    """Open tokenizers in the order they were asked for, and the current one.

    Besides the model's own signals, ``added``/``removed`` carry the tokenizer (after the
    rows changed) and ``currentChanged`` the new current one (or None).
    """

    added = Signal(object)  # Tokenizer
    removed = Signal(object)  # Tokenizer
    currentChanged = Signal(object)  # Tokenizer or None
    referenceChanged = Signal(object)  # Tokenizer or None
    shownChanged = Signal(object, bool)  # (Tokenizer, has a pane)
    loadingChanged = Signal()  # a spec began to load, or will not come after all
    renamed = Signal(object)  # Tokenizer, after its name changed (its row's label too)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[OpenTokenizer] = []
        self._current: Tokenizer | None = None
        self._pinned: Tokenizer | None = None  # the reference the user chose
        self._reference: Tokenizer | None = None  # the reference last announced
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
            return self.label(row.tok)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = row.tok.source or row.spec
            return tip + ("\n(the reference: the others are compared with it)" if row.tok is self.reference() else "")
        if role == REFERENCE_ROLE:
            return row.tok is self.reference()
        if role == SHOWN_ROLE:
            return row.shown
        if role == TOKENIZER_ROLE:
            return row.tok
        if role == SPEC_ROLE:
            return row.spec
        if role == RESULT_ROLE:
            return row.result
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = super().roleNames()
        names.update(
            {
                TOKENIZER_ROLE: QByteArray(b"tokenizer"),
                SPEC_ROLE: QByteArray(b"spec"),
                RESULT_ROLE: QByteArray(b"result"),
                REFERENCE_ROLE: QByteArray(b"reference"),
                SHOWN_ROLE: QByteArray(b"shown"),
            }
        )
        return names

    # -- opening and closing ------------------------------------------------------------------------

    def expect(self, spec: str) -> None:
        """``spec`` is being loaded: its row will come in this place of the order."""
        if spec not in self._expected and self.find(spec) is None:
            self._expected[spec] = next(self._ranks)
            self.loadingChanged.emit()

    def forget(self, spec: str) -> None:
        """``spec`` will not come after all (its load failed)."""
        if self._expected.pop(spec, None) is not None:
            self.loadingChanged.emit()

    def is_open(self, spec: str) -> bool:
        """Whether ``spec`` (a built-in name or a file, however its path is spelled) is open or
        loading: what the window no longer offers to add."""
        specs = [r.spec for r in self._rows] + list(self._expected)
        if spec in specs:
            return True
        path = _resolved(spec)
        return path is not None and any(_resolved(s) == path for s in specs)

    def loading(self) -> list[str]:
        """Specs expected and not open yet."""
        return list(self._expected)

    def add(self, tok: Tokenizer, spec: str = "", *, shown: bool = True) -> None:
        """Open ``tok`` in its place; it becomes current if nothing is, or if it comes first.
        ``shown=False``: it joins the picker without a pane in the overlay."""
        if tok in self:
            return
        spec = spec or tok.name
        rank = self._expected.pop(spec, None)
        rank = next(self._ranks) if rank is None else rank
        row = sum(1 for r in self._rows if r.rank < rank)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.insert(row, OpenTokenizer(tok, spec, rank, shown=shown))
        self.endInsertRows()
        self._relabel()
        self.added.emit(tok)
        if self._current is None or row == 0:
            self.set_current(tok)
        self._announce_reference()

    def remove(self, tok: Tokenizer) -> None:
        row = self.row_of(tok)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self._rows[row]
        if self._pinned is tok:
            self._pinned = None
        self.endRemoveRows()
        self._relabel()
        self.removed.emit(tok)
        if self._current is tok:
            self.set_current(self._rows[0].tok if self._rows else None)
        self._announce_reference()

    def replace(self, old: Tokenizer, new: Tokenizer) -> None:
        """Put ``new`` in ``old``'s row (the same file with other settings): same place, same
        pane visibility, current and reference if ``old`` was."""
        entry = self.entry(old)
        if entry is None or new in self:
            return
        was_current, was_pinned = self._current is old, self._pinned is old
        self._expected[entry.spec] = entry.rank
        self.remove(old)
        self.add(new, entry.spec, shown=entry.shown)
        if was_pinned:
            self.set_reference(new)
        if was_current:
            self.set_current(new)

    def rename(self, tok: Tokenizer, name: str) -> None:
        """Call ``tok`` ``name`` (its spaces evened out) from now on: the picker, the panes and
        every view that follows the rows show it, and it is saved under it. ``ValueError`` for
        an empty name or a tokenizer that is not open."""
        name = " ".join(name.split())
        if not name:
            raise ValueError("A tokenizer needs a name.")
        if tok not in self:
            raise ValueError(f"{tok!r} is not open")
        if name == tok.name:
            return
        tok.name = name
        self._relabel()  # namesakes' labels change too
        self.renamed.emit(tok)

    def set_current(self, tok: Tokenizer | None) -> None:
        if tok is not None and tok not in self:
            raise ValueError(f"{tok!r} is not open")
        if tok is not self._current:
            self._current = tok
            self.currentChanged.emit(tok)

    # -- the reference, panes and labels ---------------------------------------------------------------

    def reference(self) -> Tokenizer | None:
        """The tokenizer the others are compared with: the pinned one, else the first row."""
        if self._pinned is not None:
            return self._pinned
        return self._rows[0].tok if self._rows else None

    def is_pinned(self) -> bool:
        """True if the user chose the reference (else it is the first row)."""
        return self._pinned is not None

    def set_reference(self, tok: Tokenizer | None) -> None:
        """Pin ``tok`` as the reference (``None``: the first row again)."""
        if tok is not None and tok not in self:
            raise ValueError(f"{tok!r} is not open")
        self._pinned = tok
        self._announce_reference()

    def _announce_reference(self) -> None:
        ref = self.reference()
        if ref is not self._reference:
            self._reference = ref
            if self._rows:
                self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1), [REFERENCE_ROLE])
            self.referenceChanged.emit(ref)

    def is_shown(self, tok: Tokenizer) -> bool:
        entry = self.entry(tok)
        return entry is not None and entry.shown

    def set_shown(self, tok: Tokenizer, shown: bool) -> None:
        """Give ``tok`` a pane in the overlay (or take it away; it stays in the picker)."""
        row = self.row_of(tok)
        if row is None or self._rows[row].shown == shown:
            return
        self._rows[row].shown = shown
        self.dataChanged.emit(self.index(row), self.index(row), [SHOWN_ROLE])
        self.shownChanged.emit(tok, shown)

    def label(self, tok: Tokenizer) -> str:
        """``tok``'s name, with what tells it apart from open tokenizers of the same name
        (its file, then its folder and file, then a number)."""
        base = tok.name or "tokenizer"
        same = [r for r in self._rows if (r.tok.name or "tokenizer") == base]
        entry = self.entry(tok)
        if len(same) < 2 or entry is None:
            return base
        for hint in (_file_hint, _folder_hint):
            hints = [hint(r.spec) for r in same]
            mine = hint(entry.spec)
            if mine and hints.count(mine) == 1 and mine != base:
                return f"{base} ({mine})"
        return f"{base} #{same.index(entry) + 1}"

    def _relabel(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1), [Qt.ItemDataRole.DisplayRole])

    # -- reading --------------------------------------------------------------------------------------

    def tokenizers(self) -> list[Tokenizer]:
        return [r.tok for r in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, tok: object) -> bool:
        return any(r.tok is tok for r in self._rows)

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


def _resolved(spec: str) -> str | None:
    """The absolute path of a vocabulary file spec, None for a built-in name or a trained one."""
    if spec.startswith("trained:") or ("/" not in spec and "\\" not in spec and "." not in spec):
        return None
    try:
        return os.path.realpath(spec) if os.path.exists(spec) else None
    except (OSError, ValueError):
        return None


def _file_hint(spec: str) -> str:
    if spec.startswith("trained:"):
        return "trained"
    if "/" not in spec and "\\" not in spec and "." not in spec:
        return "built-in"
    return PurePath(spec).name


def _folder_hint(spec: str) -> str:
    p = PurePath(spec)
    return f"{p.parent.name}/{p.name}" if p.parent.name else ""


def distinct_names(names: Iterable[str]) -> list[str]:
    """``names`` told apart by a number where one repeats (what a view lists its tokenizers as).

    >>> distinct_names(["gpt2", "o200k_base", "gpt2", "gpt2"])
    ['gpt2', 'o200k_base', 'gpt2 (2)', 'gpt2 (3)']
    """
    out: list[str] = []
    for name in names:
        label, n = name, 2
        while label in out:
            label, n = f"{name} ({n})", n + 1
        out.append(label)
    return out


def tokenizers_of(model: QAbstractItemModel) -> list[Tokenizer]:
    """The tokenizers a list model holds (its :data:`TOKENIZER_ROLE`), in row order."""
    return [model.index(r, 0).data(TOKENIZER_ROLE) for r in range(model.rowCount())]


def specs_of(model: QAbstractItemModel) -> list[str]:
    return [model.index(r, 0).data(SPEC_ROLE) for r in range(model.rowCount())]


def reference_first(registry: TokenizerRegistry) -> tuple[list[Tokenizer], list[str]]:
    """The open tokenizers with the reference first, and their labels (what a comparison lists)."""
    toks = registry.tokenizers()
    ref = registry.reference()
    if ref in toks:
        toks.remove(ref)
        toks.insert(0, ref)
    return toks, [registry.label(t) for t in toks]


def follow_rows(model: QAbstractItemModel, slot: Any) -> None:
    """Call ``slot()`` after rows come or go, the model resets, or a tokenizer is renamed (the
    names a view lists change): in a later event-loop turn, once for the changes made until
    then, each view in a turn of its own."""
    model.rowsInserted.connect(lambda *_: later(slot))
    model.rowsRemoved.connect(lambda *_: later(slot))
    model.modelReset.connect(lambda *_: later(slot))
    if isinstance(model, TokenizerRegistry):
        model.renamed.connect(lambda *_: later(slot))
