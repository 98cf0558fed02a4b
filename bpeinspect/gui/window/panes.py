"""The tokenizer panes: one :class:`TokenizerPane` per open tokenizer, stacked in a :class:`PaneStack`.

Every pane shows the same document under its own tokenizer. The stack follows the registry:
a pane comes in at its tokenizer's row and goes with it, the current one is highlighted, and
scrolling one scrolls them all.

>>> stack = PaneStack(registry, document, appearance)   # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QToolButton, QVBoxLayout, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.core.io.provenance import badges as provenance_badges
from bpeinspect.core.live import EncodeResult
from bpeinspect.core.live_text import LiveEncoding
from bpeinspect.core.normalize import badge
from bpeinspect.gui.overlay.token_view import TokenView
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.theme import Appearance

PLACEHOLDER = "Open a tokenizer: Tokenizers ▸ built-ins, or File ▸ Open tokenizer…"


def _normalizer_badge(tok: Tokenizer) -> QLabel | None:
    """A small tag in the pane header when the tokenizer normalizes text (NFC, SentencePiece's ▁)."""
    b = badge(tok)
    return None if b is None else _tag(*b, name="normalizerBadge")


def _tag(text: str, tip: str, *, name: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setToolTip(tip)
    label.setStyleSheet(f"#{name} {{ border:1px solid palette(mid); border-radius:3px; padding:0 3px; font-size:8pt }}")
    return label


class TokenizerPane(QWidget):
    """A header (name, token count, close) above a :class:`TokenView` of the shared text."""

    closeRequested = Signal(object)  # Tokenizer
    focused = Signal(object)  # Tokenizer

    def __init__(self, tok: Tokenizer, document: QTextDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tok = tok
        self.view = TokenView(self)
        self.view.setDocument(document)
        self.view.installEventFilter(self)
        self.title = QLabel(f"<b>{tok.name or 'tokenizer'}</b>")
        self.title.setToolTip(tok.source or tok.name)
        self.badge = _normalizer_badge(tok)
        # a default split rule (unknown rank file, GGUF without a pre-tokenizer), missing bytes
        self.provenance = [_tag(text, tip, name="provenanceBadge") for text, tip in provenance_badges(tok)]
        self.count = QLabel("encoding…")
        self.count.setObjectName("tokenCount")
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip(f"Close {tok.name}")
        close.clicked.connect(lambda: self.closeRequested.emit(self.tok))
        head = QHBoxLayout()
        head.setContentsMargins(6, 2, 2, 0)
        head.addWidget(self.title)
        if self.badge is not None:
            head.addWidget(self.badge)
        for tag in self.provenance:
            head.addWidget(tag)
        head.addWidget(self.count, 1)
        head.addWidget(close)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        lay.addLayout(head)
        lay.addWidget(self.view, 1)

    def set_current(self, current: bool) -> None:
        self.title.setStyleSheet("color: palette(highlight)" if current else "")

    def set_count(self, n_tokens: int, n_chars: int, reference: tuple[str, int] | None = None) -> None:
        """Show the token count; ``reference`` (name, count) adds the difference to that pane."""
        per = n_chars / n_tokens if n_tokens else 0.0
        text = f"  {n_tokens:,} tokens · {per:.2f} chars/token"
        if reference is not None and reference[1]:
            diff = (n_tokens - reference[1]) / reference[1] * 100
            text += f" · {diff:+.1f}% vs {reference[0]}"
        self.count.setText(text)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.view and event.type() == QEvent.Type.FocusIn:
            self.focused.emit(self.tok)
        return False


class PaneStack(QSplitter):
    """The panes, top to bottom in the registry's order (a placeholder while there are none)."""

    tokenClicked = Signal(object, int)  # (Tokenizer, token index in its encoding)

    def __init__(self, registry: TokenizerRegistry, document: QTextDocument, appearance: Appearance) -> None:
        super().__init__(Qt.Orientation.Vertical)
        self.setChildrenCollapsible(False)
        self.registry, self.document, self.appearance = registry, document, appearance
        self.read_only = False
        self.insert_text = None  # what the views paste with (LiveDocument.insert_text)
        self.placeholder = QLabel(PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.addWidget(self.placeholder)
        registry.added.connect(self._add)
        registry.removed.connect(self._remove)
        registry.currentChanged.connect(self._highlight)
        appearance.changed.connect(self._restyle)

    def panes(self) -> list[TokenizerPane]:
        return [w for w in (self.widget(i) for i in range(self.count())) if isinstance(w, TokenizerPane)]

    def pane_of(self, tok: Tokenizer) -> TokenizerPane | None:
        return next((p for p in self.panes() if p.tok is tok), None)

    def below_view(self, position: int) -> bool:
        """True if document ``position`` lies below the last line every pane shows."""
        for pane in self.panes():
            view = pane.view
            block = view.cursorForPosition(view.viewport().rect().bottomLeft()).block()
            if not block.isValid() or position <= block.position() + block.length():
                return False
        return True

    def set_read_only(self, on: bool) -> None:
        """Read-only while a big text goes in."""
        self.read_only = on
        for pane in self.panes():
            pane.view.setReadOnly(on)

    def show_partial(self, tok: Tokenizer, live: LiveEncoding, total_chars: int) -> None:
        """Part of a long text is encoded: its colours show while the rest runs."""
        pane = self.pane_of(tok)
        if pane is not None:
            if pane.view.enc is not live:
                pane.view.set_encoding(tok, live)
            pane.count.setText(f"  encoding… ({live.n_chars:,} of {total_chars:,} characters so far)")

    def show_result(self, tok: Tokenizer, result: EncodeResult) -> None:
        pane = self.pane_of(tok)
        if pane is not None:
            pane.view.set_encoding(tok, result.enc, changed=result.changed)
            self.refresh_counts()

    def refresh_counts(self) -> None:
        """Token counts in every pane header, the lower ones compared with the top pane's."""
        panes = self.panes()
        top = self.registry.result(panes[0].tok) if panes else None
        for i, pane in enumerate(panes):
            r = self.registry.result(pane.tok)
            if r is None:
                continue
            reference = None
            if top is not None and i > 0 and top.enc.n_chars == r.enc.n_chars:
                reference = (top.tok.name, len(top.enc))
            pane.set_count(len(r.enc), r.enc.n_chars, reference)

    def select_token(self, tok: Tokenizer, index: int) -> None:
        """Outline token ``index`` of ``tok``'s pane (scrolled to) and the same place in the others."""
        result = self.registry.result(tok)
        if result is None:
            return
        pos = result.enc.utf16_span(index)[0]
        for pane in self.panes():
            other = self.registry.result(pane.tok)
            if other is not None:
                j = index if pane.tok is tok else other.enc.token_at_utf16(pos)
                pane.view.select_token(j, scroll=pane.tok is tok)

    # -- following the registry ---------------------------------------------------------------------

    def _add(self, tok: Tokenizer) -> None:
        if self.placeholder.parent() is not None:
            self.placeholder.setParent(None)
        pane = TokenizerPane(tok, self.document)
        pane.view.setReadOnly(self.read_only)
        pane.view.insert_text = self.insert_text
        self.appearance.style_view(pane.view)
        pane.view.tokenClicked.connect(lambda i, p=pane: self.tokenClicked.emit(p.tok, i))
        pane.closeRequested.connect(self.registry.remove)
        pane.view.zoomRequested.connect(self.appearance.zoom)
        pane.focused.connect(self.registry.set_current)
        pane.view.verticalScrollBar().valueChanged.connect(lambda v, p=pane: self._sync_scroll(p, v))
        row = self.registry.row_of(tok)
        self.insertWidget(len(self.panes()) if row is None else row, pane)
        pane.set_current(tok is self.registry.current())

    def _remove(self, tok: Tokenizer) -> None:
        pane = self.pane_of(tok)
        if pane is not None:
            pane.setParent(None)
            pane.deleteLater()
        if not self.panes():
            self.addWidget(self.placeholder)
        self.refresh_counts()

    def _highlight(self, tok: Tokenizer | None) -> None:
        for pane in self.panes():
            pane.set_current(tok is not None and pane.tok is tok)

    def _restyle(self) -> None:
        for pane in self.panes():
            self.appearance.style_view(pane.view)

    def _sync_scroll(self, source: TokenizerPane, value: int) -> None:
        for pane in self.panes():
            if pane is not source and pane.view.verticalScrollBar().value() != value:
                pane.view.verticalScrollBar().setValue(value)
