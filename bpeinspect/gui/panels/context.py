"""What a panel is made with: the typed context the main window gives the panels.

Each panel's factory takes a :class:`PanelContext` (the window's panel host) and reaches the
window only through what :class:`PanelWindow` names of it, a :class:`typing.Protocol` the main
window satisfies: its registry of tokenizers, its text, the token picked, its appearance and its
message bar. The panels' registry is :mod:`bpeinspect.gui.panels.specs`; a panel made the first
time it is shown has its factory in its own module (``make_panel(host: PanelContext) -> QWidget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import QSettings, SignalInstance
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QDockWidget, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.core.live_text import LiveEncoding, LiveText
from bpeinspect.gui.overlay.layout import Layers
from bpeinspect.gui.overlay.palette import TokenPalette
from bpeinspect.gui.registry import TokenizerRegistry

if TYPE_CHECKING:
    from bpeinspect.gui.concurrency import Typing


class Look(Protocol):
    """The window's appearance, as the panels follow it: its token colours and layers."""

    @property
    def token_palette(self) -> TokenPalette: ...

    @property
    def layers(self) -> Layers: ...

    @property
    def changed(self) -> SignalInstance: ...  # layers, palette, theme or text size


class FileCommands(Protocol):
    def ask_open_tokenizer(self) -> None: ...


@runtime_checkable
class PanelWindow(Protocol):
    """What the panels use of the main window (which satisfies it): the open tokenizers, the
    text, the token picked, its appearance, its stored settings and its message bar."""

    @property
    def registry(self) -> TokenizerRegistry: ...

    @property
    def document(self) -> QTextDocument: ...  # the text's (``contentsChanged`` when it changes)

    @property
    def appearance(self) -> Look: ...

    @property
    def typing(self) -> Typing: ...  # the background work of panels pauses while the user types

    @property
    def files(self) -> FileCommands: ...

    @property
    def settings(self) -> QSettings: ...  # where the window and its panels remember the user's choices

    @property
    def tokenActivated(self) -> SignalInstance: ...  # (Tokenizer, token id) picked

    @property
    def pieceActivated(self) -> SignalInstance: ...  # (Tokenizer, pre-token text) picked

    @property
    def selectionChanged(self) -> SignalInstance: ...

    def text(self) -> str: ...

    def live_text(self) -> LiveText: ...  # the text in segments (read it without joining it)

    def live_encoding(self, tok: Tokenizer) -> LiveEncoding | None: ...  # the window's encoding of the text

    def set_text(self, text: str, *, right_to_left: bool = False) -> None: ...

    def open_text_file(self, path: str, *, right_to_left: bool = False) -> None: ...

    def show_error(self, text: str) -> None: ...

    def select_token(self, tok: Tokenizer, index: int) -> None: ...

    def selected_index(self, tok: Tokenizer | None) -> int | None: ...


class TokenView(Protocol):
    """A view kept on the current tokenizer and on the token picked (see :class:`TokenViews`)."""

    @property
    def tokenActivated(self) -> SignalInstance: ...  # (token id) picked in the view

    def set_tokenizer(self, tok: Tokenizer) -> None: ...

    def show_token(self, token_id: int) -> None: ...

    def show_piece(self, text: str) -> None: ...


class TokenViews(Protocol):
    """What keeps the token views following the current tokenizer and the token picked (the
    :class:`~bpeinspect.gui.panels.specs.Inspector`)."""

    def attach(self, key: str, view: TokenView) -> None: ...


class PanelContext(Protocol):
    """What a panel is made with (the window's panel host): the window, the docks made so far,
    what the token views follow, and a way to show another panel."""

    @property
    def window(self) -> PanelWindow: ...

    @property
    def docks(self) -> dict[str, QDockWidget]: ...

    @property
    def inspector(self) -> TokenViews: ...

    def show(self, key: str) -> QWidget: ...
