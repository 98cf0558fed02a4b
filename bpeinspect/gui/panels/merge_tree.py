"""The merge-tree browser: how a token is built down to its bytes, and what it is a part of.

Both trees are lazy :class:`MergeTreeModel`\\ s over the core's :class:`~bpeinspect.core.MergeGraph`:
a node's children are looked up when it is expanded, in batches for tokens that are part of
thousands of others. The "part of" direction needs every token's parents
(``merge_graph.compute_all``), which runs in a worker the first time.

Example::

    tree = MergeTreeBrowser()
    tree.set_tokenizer(load_tokenizer("cl100k_base"))
    tree.show_token(15339)          # "hello"
    tree.show_piece(" unbelievable")  # the tokens of one pre-token, each with its tree
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer, display_bytes
from bpeinspect.core.memory import quiet_gc
from bpeinspect.gui.concurrency import Jobs, ProgressBar, Typing, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.glyphs import bytes_cell, rank_cell, shown, token_shown
from bpeinspect.gui.panels.columns import FitColumns

TOKEN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
BATCH = 256  # children fetched per fetchMore
_Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("Token", "ID", "Rank", "Merge", "Bytes")
COL_TOKEN, COL_ID, COL_RANK, COL_MERGE, COL_BYTES = range(len(COLUMNS))


class _Node:
    """One row of the tree; the model keeps every node alive (the index points at it)."""

    __slots__ = ("children", "kids", "parent", "row", "token_id")

    def __init__(self, token_id: int, parent: _Node | None, row: int) -> None:
        self.token_id = token_id
        self.parent = parent
        self.row = row
        self.kids: list[int] | None = None  # all child ids, looked up on first need
        self.children: list[_Node] = []  # the fetched ones


class MergeTreeModel(QAbstractItemModel):
    """``direction="down"``: a node's children are the two tokens merged to make it.
    ``direction="up"``: a node's children are the tokens it is one of the two parts of
    (call :meth:`set_ready` once ``merge_graph.compute_all`` has run)."""

    def __init__(self, direction: Literal["down", "up"] = "down", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.direction = direction
        self.tok: Tokenizer | None = None
        self._roots: list[_Node] = []
        self._ready = direction == "down"
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._italic = QFont(self._mono)
        self._italic.setItalic(True)

    def set_tokenizer(self, tok: Tokenizer | None) -> None:
        self.beginResetModel()
        self.tok = tok
        self._roots = []
        self._ready = self.direction == "down"
        self.endResetModel()

    def set_roots(self, ids: list[int]) -> None:
        self.beginResetModel()
        self._roots = [_Node(t, None, r) for r, t in enumerate(ids)]
        self.endResetModel()

    def roots(self) -> list[int]:
        return [n.token_id for n in self._roots]

    def set_ready(self, ready: bool = True) -> None:
        """For ``"up"``: the merge graph's children are known now, so nodes may have children."""
        self.beginResetModel()
        self._ready = ready
        for n in self._roots:
            n.kids, n.children = None, []
        self.endResetModel()

    @property
    def ready(self) -> bool:
        return self._ready

    # -- structure ---------------------------------------------------------------------------------

    def _kids(self, node: _Node) -> list[int]:
        if node.kids is None:
            tok = self.tok
            if tok is None or not self._ready:
                return []
            g = tok.merge_graph
            if self.direction == "down":
                p = g.parents(node.token_id)
                node.kids = [] if p is None else [p[0], p[1]]
            else:
                node.kids = g.children(node.token_id)
        return node.kids

    def _node(self, index: _Index) -> _Node | None:
        return index.internalPointer() if index.isValid() else None

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        pnode = self._node(parent)
        siblings = self._roots if pnode is None else pnode.children
        if row >= len(siblings):
            return QModelIndex()
        return self.createIndex(row, column, siblings[row])

    def parent(self, index: _Index | None = None) -> Any:
        if index is None:  # QObject.parent()
            return super().parent()
        node = self._node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        node = self._node(parent)
        return len(self._roots) if node is None else len(node.children)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008
        node = self._node(parent)
        if node is None:
            return bool(self._roots) and not parent.isValid()
        if parent.column() != 0:
            return False
        return bool(node.children) or bool(self._kids(node))

    def canFetchMore(self, parent: _Index) -> bool:
        node = self._node(parent)
        if node is None or parent.column() != 0:
            return False
        return len(node.children) < len(self._kids(node))

    def fetchMore(self, parent: _Index) -> None:
        node = self._node(parent)
        if node is None or parent.column() != 0:
            return
        kids = self._kids(node)
        start = len(node.children)
        end = min(len(kids), start + BATCH)
        if end <= start:
            return
        self.beginInsertRows(parent, start, end - 1)
        node.children.extend(_Node(kids[r], node, r) for r in range(start, end))
        self.endInsertRows()

    def child_count(self, index: _Index) -> int:
        """How many children the node has in all (fetched or not)."""
        node = self._node(index)
        return len(self._roots) if node is None else len(self._kids(node))

    # -- data --------------------------------------------------------------------------------------

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self._node(index)
        tok = self.tok
        if node is None or tok is None:
            return None
        tid, col = node.token_id, index.column()
        g = tok.merge_graph
        if role == Qt.ItemDataRole.DisplayRole:
            if col == COL_TOKEN:
                return token_shown(tok, tid)
            if col == COL_ID:
                return str(tid)
            if col == COL_RANK:
                return rank_cell(g.rank(tid))
            if col == COL_MERGE:
                p = g.parents(tid)
                if p is None:
                    return tok.leaf_label(tid)
                return f"{token_shown(tok, p[0])} + {token_shown(tok, p[1])}"
            if col == COL_BYTES:
                return bytes_cell(tok.token_bytes(tid), 16)
            return None
        if role == TOKEN_ID_ROLE:
            return tid
        if role == Qt.ItemDataRole.FontRole and col in (COL_TOKEN, COL_MERGE, COL_BYTES):
            return self._mono if g.is_buildable(tid) else self._italic
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_ID, COL_RANK):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{tid}: {token_shown(tok, tid)}"
            if tok.word_marks is not None:
                tip += "\n" + tok.word_marks.where(*tok.token_marks(tid))
            if not g.is_buildable(tid):
                tip += "\nunbuildable: no chain of merges makes this token; shown split at its best split"
            return tip
        return None


class MergeTreeBrowser(QWidget):
    """ "Built from" and "part of" trees for one token; emits ``tokenActivated(id)`` on a double-click."""

    tokenActivated = Signal(int)
    EXPAND_DEPTH = 4

    def __init__(self, parent: QWidget | None = None, typing: Typing | None = None) -> None:
        """``typing``: the text's, where the user types; the view's background work waits for
        the typing to pause (``None``: it does not wait)."""
        super().__init__(parent)
        self.typing = typing
        self.tok: Tokenizer | None = None
        # what is shown, to show again under another tokenizer: ("token", its bytes),
        # ("piece", text) or ("entry", what was typed in the box)
        self.query: tuple[str, bytes | str] | None = None
        self.jobs = Jobs(self)
        self.down = MergeTreeModel("down", self)
        self.up = MergeTreeModel("up", self)
        self.entry = QLineEdit(placeholderText="Token id, or text of one pre-token…", clearButtonEnabled=True)
        self.entry.returnPressed.connect(self._on_entry)
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = ToneLabel(tone="error")
        self.down_view = self._make_view(self.down)
        self.up_view = self._make_view(self.up)
        self.up_label = QLabel("Part of")
        self.progress = ProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(160)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self.cancel_work)
        for w in (self.progress, self.cancel, self.message):
            w.hide()

        top = QHBoxLayout()
        top.addWidget(self.entry, 1)
        down_box = QWidget()
        dl = QVBoxLayout(down_box)
        dl.setContentsMargins(0, 0, 0, 0)
        self.down_label = QLabel("Built from")
        dl.addWidget(self.down_label)
        dl.addWidget(self.down_view)
        up_box = QWidget()
        ul = QVBoxLayout(up_box)
        ul.setContentsMargins(0, 0, 0, 0)
        uh = QHBoxLayout()
        uh.addWidget(self.up_label, 1)
        uh.addWidget(self.progress)
        uh.addWidget(self.cancel)
        ul.addLayout(uh)
        ul.addWidget(self.up_view)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(down_box)
        split.addWidget(up_box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.title)
        lay.addWidget(self.message)
        lay.addWidget(split, 1)

    def _make_view(self, model: MergeTreeModel) -> QTreeView:
        v = QTreeView()
        v.setModel(model)
        v.setUniformRowHeights(True)
        v.setAlternatingRowColors(True)
        v.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        v.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        v.header().setStretchLastSection(True)
        em = v.fontMetrics().horizontalAdvance("0")
        for col, chars in ((COL_TOKEN, 26), (COL_ID, 8), (COL_RANK, 8), (COL_MERGE, 22)):
            v.setColumnWidth(col, em * chars + 12)
        # in a narrow dock the columns give way, down to a few characters each (ids: six digits)
        least = {COL_TOKEN: em * 12, COL_ID: em * 6 + 12, COL_RANK: em * 6 + 12, COL_MERGE: em * 9, COL_BYTES: em * 6}
        FitColumns(v, least)
        v.activated.connect(self._on_activated)
        return v

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizer(self, tok: Tokenizer) -> None:
        """Show trees of ``tok``; the "part of" tree fills in once a worker has linked all tokens.

        What was shown is shown again under ``tok``: the same pre-token, or the token with the
        same bytes (its pre-token's tokens if ``tok`` has no such token)."""
        self.cancel_work()
        self.tok = tok
        self.down_label.setText(f"Built from (merges: {tok.merge_source})")
        self.down_label.setToolTip("Where the merge order and each token's two parts come from")
        self.down.set_tokenizer(tok)
        self.up.set_tokenizer(tok)
        self.title.clear()
        self.message.hide()
        self._start_children()
        self._show_again()

    def _show_again(self) -> None:
        if self.tok is None or self.query is None:
            return
        kind, value = self.query
        if kind == "entry":  # what the user typed, as typed
            self.entry.setText(str(value))
            self._on_entry()
            return
        if kind == "piece":
            self.show_piece(str(value))
            return
        assert isinstance(value, bytes)
        tid = self.tok.token_id(value)
        if tid is not None:
            self.show_token(tid)
        else:
            self.show_piece(value.decode("utf-8", "replace"))

    def show_token(self, token_id: int) -> None:
        """Show how ``token_id`` is built and what it is a part of."""
        tok = self.tok
        if tok is None:
            return
        try:
            bts = tok.token_bytes(token_id)
        except ValueError as exc:
            self._error(str(exc))
            return
        self.message.hide()
        self.query = ("token", bts)
        self.title.setText(
            f"<b>{token_id}</b> &nbsp;<code>{_html(token_shown(tok, token_id))}</code> &nbsp;{len(bts)} bytes"
        )
        self._show_down([token_id])
        self.up.set_roots([token_id])
        self._expand(self.up_view, self.up, depth=1)
        self._update_up_label()

    def show_piece(self, text: str) -> None:
        """Show the trees of the tokens that one pre-token ``text`` is encoded into."""
        tok = self.tok
        if tok is None or not text:
            return
        ids = tok.encode_piece(text)
        self.message.hide()
        self.query = ("piece", text)
        self.title.setText(
            f"pre-token <code>{_html(shown(display_bytes(text.encode('utf-8', 'surrogatepass'))))}</code> → {len(ids)} "
            f"token{'s' if len(ids) != 1 else ''}"
        )
        self._show_down(ids)
        self.up.set_roots(ids)
        self._update_up_label()

    @property
    def busy(self) -> bool:
        """True while the worker links all tokens for the "part of" tree."""
        return self.jobs.pending()

    def cancel_work(self) -> None:
        self.jobs.cancel_all()
        self.progress.hide()
        self.cancel.hide()
        self._update_up_label()

    # -- internals -------------------------------------------------------------------------------

    def _show_down(self, ids: list[int]) -> None:
        self.down.set_roots(ids)
        self._expand(self.down_view, self.down, depth=self.EXPAND_DEPTH)

    def _expand(self, view: QTreeView, model: MergeTreeModel, depth: int) -> None:
        level = [model.index(r, 0) for r in range(model.rowCount())]
        for _ in range(depth):
            nxt: list[QModelIndex] = []
            for ix in level:
                if model.canFetchMore(ix):
                    model.fetchMore(ix)
                if model.rowCount(ix):
                    view.expand(ix)
                    nxt.extend(model.index(r, 0, ix) for r in range(model.rowCount(ix)))
            level = nxt

    def _start_children(self) -> None:
        tok = self.tok
        if tok is None:
            return
        self.jobs.submit(
            "link",
            _link_all,
            tok,
            on_progress=self._on_progress,
            on_returned=self._on_children_ready,
            on_errored=self._on_failed,
            on_aborted=self._on_cancelled,
            paused_by=self.typing,  # nobody waits for it: it pauses while the user types
        )
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel.show()
        self._update_up_label()

    def _on_progress(self, done: int, total: int) -> None:
        if total:
            self.progress.setRange(0, total)
            self.progress.setValue(done)  # painted with the rest of the window (see ProgressBar)

    def _on_children_ready(self, _: object) -> None:
        self.progress.hide()
        self.cancel.hide()
        self.up.set_ready(True)
        self._expand(self.up_view, self.up, depth=1)
        self._update_up_label()

    def _on_failed(self, exc: BaseException) -> None:
        self.cancel_work()
        self._error(describe_error(exc))

    def _on_cancelled(self) -> None:
        self.cancel_work()

    def _update_up_label(self) -> None:
        if not self.up.ready:
            text = "Part of: linking tokens…" if self.jobs.pending() else "Part of: not computed"
        elif len(self.up.roots()) == 1:
            n = self.up.child_count(self.up.index(0, 0))
            text = f"Part of {n:,} token{'s' if n != 1 else ''}"
        else:
            text = "Part of"
        self.up_label.setText(text)

    def _on_entry(self) -> None:
        text = self.entry.text()
        if self.tok is None or not text:
            return
        if text.strip().isdigit():
            self.show_token(int(text.strip()))
        else:
            self.show_piece(text)
        self.query = ("entry", text)

    def _on_activated(self, index: QModelIndex) -> None:
        tid = index.data(TOKEN_ID_ROLE)
        if tid is not None:
            self.show_token(tid)
            self.tokenActivated.emit(tid)

    def _error(self, message: str) -> None:
        self.message.setText(message)
        self.message.show()


def _link_all(tok: Tokenizer, *, progress: Callable[[int, int], None], should_stop: Callable[[], bool]) -> None:
    """Every token's parents, then the children index (so the GUI thread never builds it).

    The index is some 50k lists that live as long as the tokenizer: made with the cyclic GC
    held off and then frozen (see :func:`~bpeinspect.core.memory.quiet_gc`), since every full
    collection would otherwise walk them all with every thread locked out, and a
    busy worker sets one off every few hundred milliseconds."""
    with quiet_gc():
        tok.merge_graph.compute_all(progress=progress, should_stop=should_stop)
        tok.merge_graph.index_children(should_stop=should_stop)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["COLUMNS", "TOKEN_ID_ROLE", "MergeTreeBrowser", "MergeTreeModel"]
