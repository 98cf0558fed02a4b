"""Small widgets of the main window: a tokenizer's pane and the in-window message bar.

>>> pane = TokenizerPane(tok, document)   # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.core.io.provenance import badges as provenance_badges
from bpeinspect.core.normalize import badge
from bpeinspect.gui.overlay.token_view import TokenView


class MessageBar(QFrame):
    """A dismissable message at the top of the window (errors never open a modal box)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.clear)
        self._lines: list[str] = []
        self._has_error = False
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.hide()

    def show_message(self, text: str, *, error: bool = True) -> None:
        """Show ``text``; messages pile up (the last five) until the bar is closed, and the bar
        stays red while it holds an error."""
        self._has_error = self._has_error or error
        bg, fg = ("#fde2e1", "#7a1010") if self._has_error else ("#e3f1fd", "#0d3b66")
        self.setStyleSheet(
            f"#messageBar {{ background:{bg}; border:1px solid {fg}; border-radius:4px }} QLabel {{ color:{fg} }}"
        )
        self._lines = [*self._lines, text][-5:]
        self.label.setText("\n".join(self._lines))
        self.show()

    def clear(self) -> None:
        self._lines = []
        self._has_error = False
        self.hide()

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""


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

    def eventFilter(self, obj, event) -> bool:
        if obj is self.view and event.type() == event.Type.FocusIn:
            self.focused.emit(self.tok)
        return False
