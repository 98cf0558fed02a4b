"""The tokenizer panes: one :class:`TokenizerPane` per open tokenizer, stacked in a :class:`PaneStack`.

Every pane shows the same document under its own tokenizer. The stack follows the registry:
a pane comes in at its tokenizer's row (if the row is shown in the overlay) and goes with it,
the current one is highlighted, the reference wears a pin, and scrolling one scrolls them all.
Panes fold to their header, and when they do not fit the stack scrolls: the window never
grows past the screen.

>>> stack = PaneStack(registry, document, appearance)   # doctest: +SKIP
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer, normalizer_badge
from bpeinspect.core.io import provenance_badges
from bpeinspect.core.live_text import EncodeResult, LiveEncoding
from bpeinspect.gui.overlay.token_view import TokenView
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.theme import Appearance

PLACEHOLDER = "Open a tokenizer: “Add tokenizer” above, Tokenizers ▸ built-ins, or File ▸ Open tokenizer…"
MIN_VIEW_HEIGHT = 64  # px: a pane keeps about three lines; below that the stack scrolls
QWIDGETSIZE_MAX = (1 << 24) - 1
CHOOSABLE = ("default split", "assumed")  # provenance badges that open the split-rule settings


def _normalizer_badge(tok: Tokenizer) -> QLabel | None:
    """A small tag in the pane header when the tokenizer normalizes text (NFC, SentencePiece's ▁)."""
    b = normalizer_badge(tok)
    return None if b is None else _tag(*b, name="normalizerBadge")


def _tag(text: str, tip: str, *, name: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setToolTip(tip)
    label.setStyleSheet(f"#{name} {{ border:1px solid palette(mid); border-radius:3px; padding:0 3px; font-size:8pt }}")
    return label


class TokenizerPane(QWidget):
    """A header (collapse, name, token count, reference pin, close) above a :class:`TokenView`
    of the shared text. Collapsed, only the header shows."""

    closeRequested = Signal(object)  # Tokenizer
    focused = Signal(object)  # Tokenizer
    pinRequested = Signal(object)  # Tokenizer: make it the reference
    settingsRequested = Signal(object)  # Tokenizer: choose its split rule and special tokens
    collapsedChanged = Signal(bool)

    def __init__(self, tok: Tokenizer, document: QTextDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tok = tok
        self.view = TokenView(self)
        # the bar keeps its room: the width the text wraps at stays the same in every pane
        self.view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.view.setDocument(document)
        self.view.installEventFilter(self)
        self.view.setMinimumHeight(MIN_VIEW_HEIGHT)
        self.fold = QToolButton()
        self.fold.setAutoRaise(True)
        self.fold.setCheckable(True)
        self.fold.setObjectName("foldButton")
        self.fold.toggled.connect(self.set_collapsed)
        self.title = QLabel(f"<b>{html.escape(tok.name or 'tokenizer')}</b>")
        self.title.setToolTip(tok.source or tok.name)
        self.badge = _normalizer_badge(tok)
        # a default split rule (unknown rank file, GGUF without a pre-tokenizer), missing bytes
        self.provenance = [_tag(text, tip, name="provenanceBadge") for text, tip in provenance_badges(tok)]
        self.settings_badge = next((t for t in self.provenance if t.text() in CHOOSABLE), None)
        if self.settings_badge is not None:  # a default the user may replace: click it
            self.settings_badge.setCursor(Qt.CursorShape.PointingHandCursor)
            self.settings_badge.setToolTip(
                self.settings_badge.toolTip() + "\nClick to choose the split rule and special tokens."
            )
            self.settings_badge.installEventFilter(self)
        self.count = QLabel("encoding…")
        self.count.setObjectName("tokenCount")
        self.pin = QToolButton()
        self.pin.setObjectName("pinButton")
        self.pin.setAutoRaise(True)
        self.pin.setCheckable(True)
        self.pin.clicked.connect(lambda: self.pinRequested.emit(self.tok))
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip(f"Close {tok.name}")
        close.clicked.connect(lambda: self.closeRequested.emit(self.tok))
        head = QHBoxLayout()
        head.setContentsMargins(2, 2, 2, 0)
        head.setSpacing(4)
        head.addWidget(self.fold)
        head.addWidget(self.title)
        if self.badge is not None:
            head.addWidget(self.badge)
        for tag in self.provenance:
            head.addWidget(tag)
        head.addWidget(self.count, 1)
        head.addWidget(self.pin)
        head.addWidget(close)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(1)
        lay.addLayout(head)
        lay.addWidget(self.view, 1)
        self.set_reference(False)
        self.set_collapsed(False)

    def set_label(self, label: str) -> None:
        """The name shown (the registry's label: duplicates told apart)."""
        self.title.setText(f"<b>{html.escape(label)}</b>")

    def set_current(self, current: bool) -> None:
        self.title.setStyleSheet("color: palette(highlight)" if current else "")

    def set_reference(self, reference: bool) -> None:
        """Show whether this pane is the reference the others are compared with."""
        self.pin.setChecked(reference)
        self.pin.setText("★ reference" if reference else "☆")
        self.pin.setToolTip(
            "The reference: the other panes, the compare view and the languages plot compare with it"
            if reference
            else "Make this the reference the others are compared with"
        )

    def set_collapsed(self, collapsed: bool) -> None:
        """Show only the header (the pane keeps its place and its encoding)."""
        if self.fold.isChecked() != collapsed:
            self.fold.setChecked(collapsed)  # comes back here through toggled
            return
        self.fold.setText("▸" if collapsed else "▾")
        self.fold.setToolTip("Show the text" if collapsed else "Fold the pane to its header")
        self.view.setVisible(not collapsed)
        self.setMaximumHeight(self.sizeHint().height() if collapsed else QWIDGETSIZE_MAX)
        self.collapsedChanged.emit(collapsed)

    def set_count(self, n_tokens: int, n_chars: int, reference: tuple[str, int] | None = None) -> None:
        """Show the token count; ``reference`` (name, count) adds the difference to that pane."""
        per = n_chars / n_tokens if n_tokens else 0.0
        text = f"  {n_tokens:,} tokens · {per:.2f} chars/token"
        if reference is not None and reference[1]:
            diff = (n_tokens - reference[1]) / reference[1] * 100
            text += f" · {diff:+.1f}% vs {reference[0]}"
        self.count.setText(text)

    def set_progress(self, done: int, total: int) -> None:
        """Show how far the encoding of a text still being encoded has got (no count yet)."""
        self.count.setText(f"  encoding… ({done:,} of {total:,} characters so far)")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.view and event.type() == QEvent.Type.FocusIn:
            self.focused.emit(self.tok)
        elif obj is self.settings_badge and event.type() == QEvent.Type.MouseButtonRelease:
            self.settingsRequested.emit(self.tok)
            return True
        return False


class LayoutAnchor(QPlainTextEdit):
    """An invisible view of the shared text that sets the width the panes wrap it at.

    Qt's plain-text layout takes its width from one view, the first to show the text or the
    widest; when that view goes, the next view to show the text lays all of it out again (a
    tenth of a second per pass at 10 MB, twice for a new pane). The anchor lives as long as
    the stack and is one pixel wider than the panes' text, so it stays that view: panes come and
    go without laying the text out, and the anchor, resized before them, lays it out once per
    change of the stack's width."""

    def __init__(self, document: QTextDocument, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("layoutAnchor")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setReadOnly(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)  # as the panes' views
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setDocument(document)
        self.setGeometry(0, 0, 1, 0)  # no height: never seen
        self.lower()

    def follow(self, width: int) -> None:
        """The panes are about to be ``width`` wide: wrap the text for them first."""
        if self.width() != width + 1:
            self.resize(width + 1, 0)

    def changeEvent(self, event: QEvent) -> None:
        # a view's font becomes the document's; the panes' fonts are the ones that count
        if event.type() not in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange):
            super().changeEvent(event)


# widgets the user types into: the focus is left there when the first pane comes
TYPING_WIDGETS = (QPlainTextEdit, QTextEdit, QLineEdit, QAbstractSpinBox, QAbstractItemView)


class PaneStack(QScrollArea):
    """The panes of the tokenizers shown in the overlay, top to bottom in the registry's order
    (a placeholder while there are none). The panes share the height of the window; when
    they cannot (each keeps a few lines), the stack scrolls instead of growing the window."""

    tokenClicked = Signal(object, int)  # (Tokenizer, token index in its encoding)
    settingsRequested = Signal(object)  # Tokenizer
    scrolled = Signal(int)  # the UTF-16 position of the first line the panes show

    def __init__(self, registry: TokenizerRegistry, document: QTextDocument, appearance: Appearance) -> None:
        super().__init__()
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # the bar keeps its room when the stack fits: a pane that changed width would lay the whole
        # text out again (a tenth of a second at 10 MB, per pane) whenever a docked panel or one
        # more pane made the stack scroll, or stop scrolling
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the panes' texts take the focus, not the frame around them
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.setWidget(self.splitter)
        self.anchor = LayoutAnchor(document, self)  # before any pane shows the text
        self.splitter.installEventFilter(self)
        self.registry, self.document, self.appearance = registry, document, appearance
        self.read_only = False
        # what the views paste with (LiveDocument.insert_text), and pasted UTF-8 bytes (.paste_data)
        self.insert_text: Callable[[QTextCursor, str], None] | None = None
        self.insert_data: Callable[[QTextCursor, QByteArray], None] | None = None
        # (encoded, total) characters of a tokenizer's text still being encoded, None once done
        self.progress: Callable[[Tokenizer], tuple[int, int] | None] = lambda _tok: None
        self.placeholder = QLabel(PLACEHOLDER)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.splitter.addWidget(self.placeholder)
        registry.added.connect(self._add)
        registry.added.connect(lambda _tok: self._show_pins())  # a second row (maybe without a pane)
        registry.removed.connect(self._remove)
        registry.shownChanged.connect(self._on_shown)
        registry.currentChanged.connect(self._highlight)
        registry.referenceChanged.connect(self._on_reference)
        registry.dataChanged.connect(self._on_data)
        appearance.changed.connect(self._restyle)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.splitter and event.type() == QEvent.Type.Resize:
            self.anchor.follow(self.splitter.width())  # before the splitter resizes the panes
        return super().eventFilter(obj, event)

    def panes(self) -> list[TokenizerPane]:
        sp = self.splitter
        return [w for w in (sp.widget(i) for i in range(sp.count())) if isinstance(w, TokenizerPane)]

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
            pane.set_progress(live.n_chars, total_chars)

    def show_result(self, tok: Tokenizer, result: EncodeResult) -> None:
        pane = self.pane_of(tok)
        if pane is not None:
            pane.view.set_encoding(tok, result.enc, changed=result.changed)
        self.refresh_counts()

    def refresh_counts(self) -> None:
        """Token counts in every pane header, compared with the reference's count. A pane whose
        text is still being encoded keeps saying so (see :meth:`show_partial`), and only finished
        counts are compared (:attr:`progress` says which are not)."""
        ref = self.registry.reference()
        top = self.registry.result(ref) if ref is not None and self.progress(ref) is None else None
        for pane in self.panes():
            r = self.registry.result(pane.tok)
            going = self.progress(pane.tok)
            if going is not None:
                pane.set_progress(*going)
                continue
            if r is None:
                continue
            reference = None
            if ref is not None and top is not None and pane.tok is not ref and top.enc.n_chars == r.enc.n_chars:
                reference = (self.registry.label(ref), len(top.enc))
            pane.set_count(len(r.enc), r.enc.n_chars, reference)

    def select_token(self, tok: Tokenizer, index: int | None) -> None:
        """Outline token ``index`` of ``tok``'s pane (scrolled to) and the same place in the
        others; ``None`` clears the outline everywhere."""
        result = self.registry.result(tok)
        if index is None or result is None or not 0 <= index < len(result.enc):
            for pane in self.panes():
                pane.view.select_token(None, scroll=False)
            return
        pos = result.enc.utf16_span(index)[0]
        for pane in self.panes():
            other = self.registry.result(pane.tok)
            if other is not None:
                j = index if pane.tok is tok else other.enc.token_at_utf16(pos)
                pane.view.select_token(j, scroll=pane.tok is tok)

    # -- following the registry ---------------------------------------------------------------------

    def _add(self, tok: Tokenizer) -> None:
        if not self.registry.is_shown(tok) or self.pane_of(tok) is not None:
            return
        if self.placeholder.parent() is not None:
            self.placeholder.setParent(None)
        pane = TokenizerPane(tok, self.document)
        pane.view.setReadOnly(self.read_only)
        pane.view.insert_text = self.insert_text
        pane.view.insert_data = self.insert_data
        self.appearance.style_view(pane.view)
        pane.view.tokenClicked.connect(lambda i, p=pane: self.tokenClicked.emit(p.tok, i))
        pane.closeRequested.connect(self.registry.remove)
        pane.pinRequested.connect(self._pin)
        pane.settingsRequested.connect(self.settingsRequested)
        pane.view.zoomRequested.connect(self.appearance.zoom)
        pane.focused.connect(self.registry.set_current)
        pane.view.verticalScrollBar().valueChanged.connect(lambda v, p=pane: self._sync_scroll(p, v))
        before = [t for t in self.registry.tokenizers() if t is not tok and self.pane_of(t) is not None]
        row = self.registry.row_of(tok) or 0
        at = sum(1 for t in before if (self.registry.row_of(t) or 0) < row)
        self.splitter.insertWidget(at, pane)
        first = self.pane_of(before[0]) if before else None
        if first is not None:  # the new pane shows the place the others show, not the text's top
            pane.view.verticalScrollBar().setValue(first.view.verticalScrollBar().value())
        focus = self.window().focusWidget()
        if not before and not isinstance(focus, TYPING_WIDGETS):
            pane.view.setFocus()  # typing goes into the text from the start (not to a button)
        pane.set_current(tok is self.registry.current())
        pane.set_reference(tok is self.registry.reference())
        pane.set_label(self.registry.label(tok))
        result = self.registry.result(tok)
        if result is not None:
            pane.view.set_encoding(tok, result.enc)
        self._show_pins()
        self.refresh_counts()

    def _remove(self, tok: Tokenizer) -> None:
        pane = self.pane_of(tok)
        if pane is not None:
            pane.setParent(None)
            pane.deleteLater()
        if not self.panes() and self.placeholder.parent() is None:
            self.splitter.addWidget(self.placeholder)
        self._show_pins()
        self.refresh_counts()

    def _on_shown(self, tok: Tokenizer, shown: bool) -> None:
        (self._add if shown else self._remove)(tok)

    def _pin(self, tok: Tokenizer) -> None:
        # the pin of the reference unpins it only if it was chosen (the first row stays the default)
        reg = self.registry
        reg.set_reference(None if reg.reference() is tok and reg.is_pinned() else tok)
        pane = self.pane_of(tok)
        if pane is not None:
            pane.set_reference(tok is reg.reference())

    def _on_reference(self, ref: Tokenizer | None) -> None:
        for pane in self.panes():
            pane.set_reference(pane.tok is ref)
        self.refresh_counts()

    def _show_pins(self) -> None:
        # one tokenizer alone compares with nothing: no pin until there is a second
        alone = len(self.registry) < 2
        for pane in self.panes():
            pane.pin.setVisible(not alone)

    def _on_data(self, first: object, last: object, roles: list[int]) -> None:
        if Qt.ItemDataRole.DisplayRole in roles:
            for pane in self.panes():
                pane.set_label(self.registry.label(pane.tok))

    def _highlight(self, tok: Tokenizer | None) -> None:
        for pane in self.panes():
            pane.set_current(tok is not None and pane.tok is tok)

    def _restyle(self) -> None:
        for pane in self.panes():
            self.appearance.style_view(pane.view)

    def _sync_scroll(self, source: TokenizerPane, value: int) -> None:
        self.scrolled.emit(source.view.firstVisibleBlock().position())
        for pane in self.panes():
            if pane is not source and pane.view.verticalScrollBar().value() != value:
                pane.view.verticalScrollBar().setValue(value)
