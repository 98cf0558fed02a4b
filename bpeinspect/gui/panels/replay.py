"""Merge replay: step through how one pre-token's bytes are merged into tokens.

The interactive form of tiktoken's ``_educational.visualise``: the parts after each merge are
drawn as chips, the pair merged at the current step is highlighted with its rank, and the
next pair to merge is outlined. The steps come from :func:`bpeinspect.core.trace`, computed in
a worker.

Example::

    replay = ReplayWidget()
    replay.set_tokenizer(load_tokenizer("gpt2"))
    replay.show_piece(" unbelievable")   # e.g. from a click on a pre-token in the overlay
    replay.set_step(3)
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import MergeStep, Tokenizer, Trace, display_bytes, trace
from bpeinspect.gui.concurrency import Jobs, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.glyphs import shown, token_shown  # characters no font draws as code points
from bpeinspect.gui.overlay.palette import app_colors
from bpeinspect.gui.panels.columns import FitColumns

MAX_PIECE_BYTES = 4096  # a trace is quadratic in the piece length
_Index = QModelIndex | QPersistentModelIndex


def parts_at(tr: Trace, step: int) -> tuple[int, ...]:
    """The token ids after ``step`` merges (``0`` is the bytes)."""
    return tr.initial if step <= 0 else tr.steps[step - 1].parts


class StepsModel(QAbstractTableModel):
    """One row per merge of a :class:`Trace`: step, rank, left + right → result."""

    HEADERS = ("Step", "Rank", "Left", "Right", "Result", "Parts")

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.tok: Tokenizer | None = None
        self.trace: Trace | None = None
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_trace(self, tok: Tokenizer | None, tr: Trace | None) -> None:
        self.beginResetModel()
        self.tok, self.trace = tok, tr
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.trace is None else len(self.trace.steps)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        tr, tok = self.trace, self.tok
        if tr is None or tok is None or not index.isValid() or not 0 <= index.row() < len(tr.steps):
            return None
        s = tr.steps[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(s.step + 1)
            if col == 1:
                return str(s.rank)
            if col in (2, 3, 4):
                tid = (s.left, s.right, s.result)[col - 2]
                return f"{token_shown(tok, tid)}  ({tid})"
            if col == 5:
                return str(len(s.parts))
        if role == Qt.ItemDataRole.FontRole and col in (2, 3, 4):
            return self._mono
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 1, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole + 1:
            return s.result
        return None


class PartsView(QWidget):
    """The parts of the piece as wrapped chips; click a chip to pick its token."""

    chipClicked = Signal(int)
    PAD, GAP, LINE_GAP = 6, 6, 36

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: list[str] = []
        self.ids: list[int] = []
        self.merged: int | None = None  # index of the chip made by the current step
        self.merged_rank: int | None = None
        self.next_pair: int | None = None  # index of the left chip of the next merge
        self.next_rank: int | None = None
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(font.pointSizeF() * 1.25)
        self.setFont(font)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._rects: list[QRectF] = []

    def set_parts(
        self,
        labels: list[str],
        ids: list[int],
        *,
        done: MergeStep | None = None,
        upcoming: MergeStep | None = None,
    ) -> None:
        """Show chips ``labels`` for tokens ``ids``; the chip ``done`` made and the pair ``upcoming``
        merges next are highlighted, with their ranks."""
        self.labels, self.ids = labels, ids
        self.merged, self.merged_rank = (done.position, done.rank) if done is not None else (None, None)
        self.next_pair, self.next_rank = (upcoming.position, upcoming.rank) if upcoming is not None else (None, None)
        self._rects = []
        self.updateGeometry()
        self.update()

    def _layout(self, width: int) -> list[QRectF]:
        fm = QFontMetrics(self.font())
        h = fm.height() + 2 * self.PAD
        x, y = float(self.GAP), float(self.LINE_GAP)
        out = []
        for text in self.labels:
            w = fm.horizontalAdvance(text) + 2 * self.PAD
            if x + w > width - self.GAP and x > self.GAP:
                x, y = float(self.GAP), y + h + self.LINE_GAP
            out.append(QRectF(x, y, w, h))
            x += w + self.GAP
        return out

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        rects = self._layout(width)
        return int(rects[-1].bottom() + self.LINE_GAP) if rects else 40

    def sizeHint(self) -> QSize:
        return QSize(400, self.heightForWidth(max(self.width(), 400)))

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        c = app_colors()
        self._rects = rects = self._layout(self.width())
        small = QFont(self.font())
        small.setPointSizeF(self.font().pointSizeF() * 0.7)
        for i, (r, text) in enumerate(zip(rects, self.labels)):
            fill = QColor(c.chip_merged if i == self.merged else c.chips[self.ids[i] % len(c.chips)])
            pen = QPen(QColor(c.chip_border), 1)
            if self.next_pair is not None and i in (self.next_pair, self.next_pair + 1):
                pen = QPen(QColor(c.chip_next), 2.5)
            p.setPen(pen)
            p.setBrush(fill)
            p.drawRoundedRect(r, 5, 5)
            p.setPen(QColor(c.chip_text))
            p.setFont(self.font())
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, text)
            p.setFont(small)
            if i == self.merged and self.merged_rank is not None:
                p.setPen(QColor(c.chip_rank))
                p.drawText(
                    QRectF(r.x(), r.y() - 18, max(r.width(), 90), 16),
                    Qt.AlignmentFlag.AlignLeft,
                    f"rank {self.merged_rank}",
                )
            if self.next_pair == i and self.next_rank is not None and i != self.merged:
                p.setPen(QColor(c.chip_next))
                p.drawText(
                    QRectF(r.x(), r.bottom() + 2, 140, 16), Qt.AlignmentFlag.AlignLeft, f"next: rank {self.next_rank}"
                )
        p.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        for i, r in enumerate(self._rects):
            if r.contains(pos):
                self.chipClicked.emit(self.ids[i])
                return


class ReplayWidget(QWidget):
    """Type text (or get a pre-token from :meth:`show_piece`) and step through its merges."""

    tokenActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tok: Tokenizer | None = None
        self.trace: Trace | None = None
        self.jobs = Jobs(self)
        self._piece: bytes | None = None
        self._typed = False  # the piece came from the entry (split by the rule), not show_piece
        self.entry = QLineEdit(
            placeholderText="Type a word or text; pick a pre-token to replay…", clearButtonEnabled=True
        )
        self.pieces = QComboBox()
        self.pieces.setToolTip("the pre-tokens the split rule cuts the text into")
        self.pieces.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.pieces.hide()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setPageStep(1)
        self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.first = QPushButton("⏮")
        self.prev = QPushButton("◀")
        self.next = QPushButton("▶")
        self.last = QPushButton("⏭")
        self.play = QPushButton("Play")
        self.play.setCheckable(True)
        for b, tip in (
            (self.first, "bytes (before any merge)"),
            (self.prev, "previous merge"),
            (self.next, "next merge"),
            (self.last, "all merges done"),
        ):
            b.setToolTip(tip)
            b.setFixedWidth(36)
        self.step_label = QLabel()
        self.step_label.setWordWrap(True)
        self.step_label.setTextFormat(Qt.TextFormat.RichText)
        self.note = ToneLabel(tone="note")
        self.note.setWordWrap(True)
        self.parts_view = PartsView()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.parts_view)
        self.steps = StepsModel(self)
        self.table = QTableView()
        self.table.setModel(self.steps)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        em = self.fontMetrics().horizontalAdvance("0")
        for col, chars in ((0, 3), (1, 6), (2, 9), (3, 9), (4, 10), (5, 5)):  # the steps fit a dock (DOCK_WIDTH)
            self.table.setColumnWidth(col, em * chars + 12)
        FitColumns(
            self.table, {2: em * 6, 3: em * 6, 4: em * 6, 5: em * 4 + 12}
        )  # in a narrow dock the pieces give way
        self._timer = QTimer(self, interval=700)
        self._timer.timeout.connect(self._tick)

        top = QHBoxLayout()
        top.addWidget(self.entry, 1)
        top.addWidget(self.pieces)
        controls = QHBoxLayout()
        for b in (self.first, self.prev, self.next, self.last, self.play):
            controls.addWidget(b)
        controls.addWidget(self.slider, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(scroll)
        split.addWidget(self.table)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(controls)
        lay.addWidget(self.step_label)
        lay.addWidget(self.note)
        lay.addWidget(split, 1)

        self.entry.textChanged.connect(self._on_text)
        self.pieces.currentIndexChanged.connect(self._on_piece_chosen)
        self.slider.valueChanged.connect(self._show_step)
        self.first.clicked.connect(lambda: self.set_step(0))
        self.prev.clicked.connect(lambda: self.set_step(self.step() - 1))
        self.next.clicked.connect(lambda: self.set_step(self.step() + 1))
        self.last.clicked.connect(lambda: self.set_step(self.slider.maximum()))
        self.play.toggled.connect(self._on_play)
        self.parts_view.chipClicked.connect(self.tokenActivated)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.table.doubleClicked.connect(self._on_double)
        self._show_step(0)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # a change of theme, among others
            self._show_step(self.step())  # the step's chips in the new theme's colours
        super().changeEvent(event)

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizer(self, tok: Tokenizer) -> None:
        """Replay the current pre-token (if any) with ``tok``."""
        self.tok = tok
        if self._piece is None:
            self._clear()
        elif self._typed:
            self._on_text(self.entry.text())  # the new split rule may cut the text differently
        else:
            self._replay(self._piece)

    def show_piece(self, text: str | bytes) -> None:
        """Replay one pre-token exactly as given (it is not split again)."""
        bts = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        self.entry.blockSignals(True)
        self.entry.setText(bts.decode("utf-8", "replace"))
        self.entry.blockSignals(False)
        self.pieces.hide()
        self._typed = False
        self._replay(bts)

    def show_token(self, token_id: int) -> None:
        """Replay the token's own bytes as one pre-token: how the encoder builds it (or does not)."""
        if self.tok is None:
            return
        try:
            bts = self.tok.token_bytes(token_id)
        except ValueError as exc:
            self._message(str(exc))
            return
        self.show_piece(bts)
        if self.tok.is_special(token_id):
            self._message(
                "This is a special token: the encoder inserts it whole; below is how its text merges as ordinary text."
            )

    @property
    def busy(self) -> bool:
        """True while a trace is being computed."""
        return self.jobs.pending()

    def step(self) -> int:
        return self.slider.value()

    def set_step(self, step: int) -> None:
        self.slider.setValue(max(0, min(step, self.slider.maximum())))

    # -- work ----------------------------------------------------------------------------------------

    def _on_text(self, text: str) -> None:
        self._typed = True
        if self.tok is None:
            return
        pieces = self.tok.pre_tokens(text) if text else []
        self.pieces.blockSignals(True)
        self.pieces.clear()
        for p in pieces:
            self.pieces.addItem(shown(display_bytes(p.encode("utf-8", "surrogatepass"))), p)
        self.pieces.blockSignals(False)
        self.pieces.setVisible(len(pieces) > 1)
        if pieces:
            self._replay(pieces[0].encode("utf-8", "surrogatepass"))
        else:
            self._clear()

    def _on_piece_chosen(self, i: int) -> None:
        p = self.pieces.itemData(i)
        if p is not None:
            self._replay(p.encode("utf-8", "surrogatepass"))

    def _replay(self, piece: bytes) -> None:
        self._piece = piece
        if self.tok is None:
            return
        self.jobs.cancel("trace")
        if len(piece) > MAX_PIECE_BYTES:
            self._clear(keep_piece=True)
            self._message(f"This pre-token is {len(piece):,} bytes; replay works on pieces up to {MAX_PIECE_BYTES:,}.")
            return
        self.jobs.submit(
            "trace",
            trace,
            self.tok,
            piece,
            on_returned=self._on_trace,
            on_errored=lambda exc: self._message(describe_error(exc)),
        )
        self.step_label.setText("Tracing…")

    def _on_trace(self, tr: Trace) -> None:
        self.trace = tr
        self.steps.set_trace(self.tok, tr)
        self.slider.blockSignals(True)
        self.slider.setMaximum(len(tr.steps))
        self.slider.setValue(len(tr.steps))
        self.slider.blockSignals(False)
        special = self.tok is not None and tr.piece.decode("utf-8", "replace") in self.tok.special_tokens
        self.note.setVisible(tr.shortcut or special)
        if tr.shortcut and self.tok is not None:
            got = " ".join(token_shown(self.tok, i) for i in tr.result)
            self.note.setText(
                "The encoder looks the whole piece up before merging (tiktoken's rule), so it gives "
                f"<b>{_html(got)}</b> rather than the result of the merges below."
            )
        self._show_step(len(tr.steps))

    # -- display ---------------------------------------------------------------------------------------

    def _show_step(self, k: int) -> None:
        tr, tok = self.trace, self.tok
        n = len(tr.steps) if tr is not None else 0
        for b, enabled in ((self.first, k > 0), (self.prev, k > 0), (self.next, k < n), (self.last, k < n)):
            b.setEnabled(enabled)
        if tr is None or tok is None:
            self.parts_view.set_parts([], [])
            self.step_label.setText("Type a word above, or click a pre-token in the text.")
            return
        parts = list(parts_at(tr, k))
        labels = [token_shown(tok, i) for i in parts]
        done = tr.steps[k - 1] if k > 0 else None
        nxt = tr.steps[k] if k < n else None
        self.parts_view.set_parts(labels, parts, done=done, upcoming=nxt)
        if done is None:
            text = f"<b>Bytes</b>: {len(parts)} part{'s' if len(parts) != 1 else ''}"
        else:
            text = (
                f"<b>Step {k} of {n}</b>: {_chip(tok, done.left)} + {_chip(tok, done.right)} → "
                f"{_chip(tok, done.result)} &nbsp;rank <b>{done.rank}</b>"
            )
        if nxt is not None:
            text += f" &nbsp;·&nbsp; next: {_chip(tok, nxt.left)} + {_chip(tok, nxt.right)} (rank {nxt.rank})"
        elif n or k == 0:
            text += f" &nbsp;·&nbsp; done: {len(parts)} token{'s' if len(parts) != 1 else ''}"
        self.step_label.setText(text)
        self.table.blockSignals(True)
        if k > 0:
            self.table.selectRow(k - 1)
        else:
            self.table.clearSelection()
        self.table.blockSignals(False)

    def _clear(self, keep_piece: bool = False) -> None:
        self.trace = None
        if not keep_piece:
            self._piece = None
        self.steps.set_trace(None, None)
        self.slider.setMaximum(0)
        self.note.hide()
        self._show_step(0)

    def _message(self, text: str) -> None:
        self.note.setText(_html(text))
        self.note.show()

    def _on_row(self, current: QModelIndex, _prev: QModelIndex) -> None:
        if current.isValid():
            self.set_step(current.row() + 1)

    def _on_double(self, index: QModelIndex) -> None:
        tid = index.data(Qt.ItemDataRole.UserRole + 1)
        if tid is not None:
            self.tokenActivated.emit(tid)

    def _on_play(self, on: bool) -> None:
        if on:
            if self.step() >= self.slider.maximum():
                self.set_step(0)
            self._timer.start()
        else:
            self._timer.stop()

    def _tick(self) -> None:
        if self.step() >= self.slider.maximum():
            self.play.setChecked(False)
        else:
            self.set_step(self.step() + 1)


def _chip(tok: Tokenizer, tid: int) -> str:
    return f"<code style='background:{app_colors().code_bg}'>{_html(token_shown(tok, tid))}</code>"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["MAX_PIECE_BYTES", "PartsView", "ReplayWidget", "StepsModel", "parts_at"]
