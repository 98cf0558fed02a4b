"""What the window reads out about the current tokenizer: its token ids, and the status line.

Both follow the registry (the current tokenizer and its latest encoding) by themselves.

>>> ids = IdsBox(registry, appearance); status = StatusLine(registry, encoder)   # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.gui.overlay.ids_view import IdsView
from bpeinspect.gui.panels.big_copy import BigCopy, IdSnapshot
from bpeinspect.gui.panels.token_list import ElidedLabel
from bpeinspect.gui.registry import RESULT_ROLE, TokenizerRegistry
from bpeinspect.gui.window.encoder import Encoder
from bpeinspect.gui.window.theme import Appearance


class IdsBox(QWidget):
    """The current tokenizer's ids as coloured cells, with "Copy list" and "Copy JSON"."""

    tokenClicked = Signal(int)  # token index in the current encoding

    def __init__(self, registry: TokenizerRegistry, appearance: Appearance, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry, self.appearance = registry, appearance
        self.view = IdsView()
        self.view.tokenClicked.connect(self.tokenClicked)
        self.title = ElidedLabel("Token ids")  # a long tokenizer name does not widen the text area
        self.copier = BigCopy(self)
        copy_list = QToolButton()
        copy_list.setText("Copy list")
        copy_list.clicked.connect(self.copy_list)
        copy_json = QToolButton()
        copy_json.setText("Copy JSON")
        copy_json.clicked.connect(self.copy_json)
        head = QHBoxLayout()
        head.setContentsMargins(6, 0, 6, 0)
        head.addWidget(self.title, 1)
        head.addWidget(copy_list)
        head.addWidget(copy_json)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addLayout(head)
        lay.addWidget(self.view, 1)
        registry.currentChanged.connect(self.refresh)
        registry.dataChanged.connect(self._on_data)
        registry.renamed.connect(self._retitle)  # the ids stay: only the name changes
        appearance.changed.connect(self._restyle)

    def ids(self) -> list[int]:
        tok = self.registry.current()
        r = self.registry.result(tok) if tok is not None else None
        return r.enc.ids_between(0, len(r.enc))[0] if r is not None else []

    def _copy(self, fmt: str) -> None:
        tok = self.registry.current()
        r = self.registry.result(tok) if tok is not None else None
        if r is not None:
            self.copier.copy(IdSnapshot.of(r.enc), None, fmt, tok)

    def copy_list(self) -> None:
        """All the ids, ``1, 2, 3`` (built in a worker)."""
        self._copy("ids")

    def copy_json(self) -> None:
        """All the ids, ``[1, 2, 3]`` (built in a worker)."""
        self._copy("ids_json")

    def refresh(self, *_args: object) -> None:
        tok = self.registry.current()
        r = self.registry.result(tok) if tok is not None else None
        if tok is None or r is None:
            self.view.set_ids([], None, self.appearance.token_palette)
            self.title.setText("Token ids")
            return
        self._retitle()
        self.view.set_ids(r.enc, None, self.appearance.token_palette, tok.n_vocab)

    def _retitle(self, *_args: object) -> None:
        """The title: the current tokenizer's name as the registry labels it, and its count."""
        tok = self.registry.current()
        r = self.registry.result(tok) if tok is not None else None
        if tok is not None and r is not None:
            self.title.setText(f"Token ids — {self.registry.label(tok)} ({len(r.enc):,})")

    def _on_data(self, first: QModelIndex, _last: QModelIndex, roles: list[int]) -> None:
        if RESULT_ROLE in roles and first.row() == self.registry.current_row():
            self.refresh()

    def _restyle(self) -> None:
        self.view.palette_ = self.appearance.token_palette
        self.view.viewport().update()


class CountBadge(QWidget):
    """The current tokenizer's token count, big, and the text's character count beside it;
    while its text is still being encoded, "counting…" and how far it has got."""

    def __init__(self, registry: TokenizerRegistry, encoder: Encoder, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry, self.encoder = registry, encoder
        self.tokens = QLabel()
        self.tokens.setObjectName("bigTokenCount")
        font = self.tokens.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.tokens.setFont(font)
        self.chars = QLabel()
        self.chars.setObjectName("charCount")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 0, 8, 0)
        lay.setSpacing(10)
        lay.addWidget(self.tokens)
        lay.addWidget(self.chars)
        for signal in (registry.currentChanged, registry.rowsInserted, registry.rowsRemoved, registry.dataChanged):
            signal.connect(self.refresh)
        encoder.partial.connect(self.refresh)
        encoder.settled.connect(self.refresh)
        self.refresh()

    def refresh(self, *_args: object) -> None:
        tok = self.registry.current()
        going = self.encoder.progress(tok) if tok is not None else None
        if tok is not None and going is not None:
            done, total = going
            self.tokens.setText("counting…")
            self.chars.setText(f"{total:,} characters · {100 * done // max(total, 1)}%")
            self.setToolTip(f"{self.registry.label(tok)}: {done:,} of {total:,} characters encoded so far")
            return
        r = self.registry.result(tok) if tok is not None else None
        if tok is None or r is None:
            self.tokens.setText("—" if tok is None else "…")
            self.chars.setText("")
            self.setToolTip("")
            return
        n, chars = len(r.enc), r.enc.n_chars
        self.tokens.setText(f"{n:,} token{'s' if n != 1 else ''}")
        self.chars.setText(f"{chars:,} character{'s' if chars != 1 else ''}")
        self.setToolTip(f"{self.registry.label(tok)}: {n:,} tokens for {chars:,} characters (code points)")


class StatusLine(QLabel):
    """Tokens, characters, bytes and their ratios for the current tokenizer, and how long its
    own latest encode took (never another tokenizer's); while a long text is being encoded,
    how far each tokenizer has got."""

    def __init__(self, registry: TokenizerRegistry, encoder: Encoder, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry, self.encoder = registry, encoder
        for signal in (registry.currentChanged, registry.rowsInserted, registry.rowsRemoved, registry.dataChanged):
            signal.connect(self.refresh)
        encoder.partial.connect(self.refresh)

    def progress_text(self) -> str | None:
        """``Encoding 27,300,000 characters: o200k_base 45% · cl100k_base 43%`` while a long text
        is encoded (``None`` otherwise)."""
        going = [(tok, p) for tok in self.registry.tokenizers() if (p := self.encoder.progress(tok)) is not None]
        if not going:
            return None
        total = max(p[1] for _, p in going)
        parts = [f"{self.registry.label(tok)} {100 * done // max(all_, 1)}%" for tok, (done, all_) in going]
        return f"Encoding {total:,} characters: " + " · ".join(parts)

    def refresh(self, *_args: object) -> None:
        going = self.progress_text()
        if going is not None:
            self.setText(going)
            return
        tok: Tokenizer | None = self.registry.current()
        r = self.registry.result(tok) if tok is not None else None
        if tok is None or r is None:
            self.setText("no tokenizer" if tok is None else f"{tok.name}: encoding…")
            return
        enc = r.enc
        n, chars, nbytes = len(enc), enc.n_chars, enc.n_bytes
        bpt = nbytes / n if n else 0.0
        cpt = chars / n if n else 0.0
        # a result shown as a worker finished has no time of its own (0): no time then
        took = f" · encoded in {r.seconds * 1000:.1f} ms ({r.mode})" if r.seconds else ""
        self.setText(
            f"{self.registry.label(tok)}:  {n:,} tokens · {chars:,} chars · {nbytes:,} bytes · "
            f"{bpt:.2f} bytes/token · {cpt:.2f} chars/token{took}"
        )
