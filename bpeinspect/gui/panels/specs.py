"""The panels the main window docks, as a registry of :class:`PanelSpec`\\ s.

The window reads :data:`PANELS` (see :class:`~bpeinspect.gui.window.docks.PanelHost`): it
makes each dock (the lazy ones, and pyqtgraph with them, the first time they are shown), adds
the menu entries that show them, and tabs them together. Each spec's ``make`` gets a
:class:`PanelContext` (the panel host) and builds its view, tied to the window through what
:class:`PanelWindow` names of it: its registry model, its text and its
``tokenActivated``/``pieceActivated`` signals. The token views (merge tree, vocabulary,
replay) also follow each other through an :class:`Inspector`.

>>> [spec.key for spec in PANELS]
['tokens', 'tree', 'replay', 'vocab', 'compare', 'languages', 'vocabs', 'training', 'chat', 'dataset']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from PySide6.QtCore import QObject, Qt, QTimer, SignalInstance
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QDockWidget, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.gui.overlay.layout import Layers
from bpeinspect.gui.overlay.palette import TokenPalette
from bpeinspect.gui.panels.compare import CompareView
from bpeinspect.gui.panels.merge_tree import MergeTreeBrowser
from bpeinspect.gui.panels.replay import ReplayWidget
from bpeinspect.gui.panels.token_list import TokenList
from bpeinspect.gui.panels.vocabulary import VocabBrowser
from bpeinspect.gui.registry import (
    RESULT_ROLE,
    TokenizerRegistry,
    follow_rows,
    reference_first,
    specs_of,
    tokenizers_of,
)

if TYPE_CHECKING:
    from bpeinspect.core.analysis import CorpusText
    from bpeinspect.gui.concurrency import Typing
    from bpeinspect.gui.panels.chat import ChatView
    from bpeinspect.gui.panels.languages import LanguagesView
    from bpeinspect.gui.panels.vocabs import VocabsView

# what the tree and the replay show before the user clicks anything: a long word, built in steps
EXAMPLE_PIECE = " tokenization"
# how long after a click the docks follow it: a frame, so that the click's own turn and paint
# and the docks' turns are apart even for timers due meanwhile (a zero timer ran in the same
# pass of the event loop as the click's paint, one long stretch at the first click)
FOLLOW_MS = 16
RIGHT, BOTTOM = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea


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
    text, the token picked, its appearance and its message bar."""

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
    def tokenActivated(self) -> SignalInstance: ...  # (Tokenizer, token id) picked

    @property
    def pieceActivated(self) -> SignalInstance: ...  # (Tokenizer, pre-token text) picked

    @property
    def selectionChanged(self) -> SignalInstance: ...

    def text(self) -> str: ...

    def set_text(self, text: str, *, right_to_left: bool = False) -> None: ...

    def open_text_file(self, path: str, *, right_to_left: bool = False) -> None: ...

    def show_error(self, text: str) -> None: ...

    def select_token(self, tok: Tokenizer, index: int) -> None: ...

    def selected_index(self, tok: Tokenizer | None) -> int | None: ...


class TokenView(Protocol):
    """A view the :class:`Inspector` keeps on the current tokenizer and the token picked."""

    @property
    def tokenActivated(self) -> SignalInstance: ...  # (token id) picked in the view

    def set_tokenizer(self, tok: Tokenizer) -> None: ...

    def show_token(self, token_id: int) -> None: ...

    def show_piece(self, text: str) -> None: ...


class PanelContext(Protocol):
    """What a panel is made with (the window's panel host): the window, the docks made so far,
    the :class:`Inspector` the token views follow, and a way to show another panel."""

    @property
    def window(self) -> PanelWindow: ...

    @property
    def docks(self) -> dict[str, QDockWidget]: ...

    @property
    def inspector(self) -> Inspector: ...

    def show(self, key: str) -> QWidget: ...


@dataclass(frozen=True)
class PanelSpec:
    """One dockable panel: how to make it, where it docks, and the menu entry that shows it."""

    key: str
    title: str
    make: Callable[[PanelContext], QWidget]
    area: Qt.DockWidgetArea = RIGHT
    tab_with: str | None = None  # tabbed behind this panel's dock
    menu: str | None = None  # the menu (an ActionRegistry key) of a "show" entry
    action: str = ""
    shortcut: str | None = None
    lazy: bool = False  # made the first time it is shown
    module: str | None = None  # a lazy panel's module, imported ahead of time off the GUI thread (pyqtgraph is slow)
    floating_size: tuple[int, int] | None = None  # first shown floating, this big
    # called with its view each time it is shown from the menu
    shown: Callable[[Any, PanelContext], None] | None = None
    docked: Callable[[Any, QDockWidget], object] | None = None  # called with its view once its dock is made


def _in_front(dock: QDockWidget | None) -> bool:
    """Whether ``dock`` is shown and is the tab in front (tabbed docks behind another still say
    ``isVisible()``; their visible region is empty)."""
    return dock is not None and dock.isVisible() and not dock.visibleRegion().isEmpty()


class Inspector(QObject):
    """Keeps the token views on the current tokenizer and on the token or pre-token picked.

    A token picked in the text reaches the views a frame later (:data:`FOLLOW_MS`): the
    click's own work (the outline in the panes and the ids) is painted first, and the docks'
    work (the tree, the vocabulary's row, the replay, the tree's dock brought forward and
    painted; the token list follows the same way) runs in turns of its own, so that no one
    stretch holds the window long."""

    TOKEN_VIEWS = ("tree", "vocab")  # show a picked token
    PIECE_VIEWS = ("replay",)  # replay a picked pre-token
    EXAMPLE_VIEWS = ("tree", "replay")  # show EXAMPLE_PIECE until something is picked
    KEEP_IN_FRONT = ("tokens", "vocab", "replay")  # a pick does not bring the tree over these

    def __init__(self, window: PanelWindow, docks: dict[str, QDockWidget]) -> None:
        super().__init__(cast(QObject, window))  # a QMainWindow: the inspector goes with it
        self.window, self.docks = window, docks
        self.views: dict[str, TokenView] = {}
        self.shown: dict[str, Tokenizer | None] = {}
        self.user_picked = False
        # the latest token and pre-token picked, not yet shown (the latest pick wins)
        self._token: tuple[Tokenizer, int] | None = None
        self._piece: tuple[Tokenizer, str] | None = None
        self._later = QTimer(self, singleShot=True, interval=FOLLOW_MS)
        self._later.timeout.connect(self._show_picked)
        win = window
        win.registry.currentChanged.connect(self._follow)
        win.tokenActivated.connect(self._on_token)
        win.pieceActivated.connect(self._on_piece)

    def attach(self, key: str, view: TokenView) -> None:
        self.views[key] = view
        self.shown[key] = None
        view.tokenActivated.connect(lambda tid, src=key: self._on_view_token(src, tid))
        tok = self.window.registry.current()
        self._set(key, tok)
        if tok is not None and not self.user_picked and key in self.EXAMPLE_VIEWS:
            view.show_piece(EXAMPLE_PIECE)

    def pending(self) -> bool:
        """Whether a picked token or pre-token waits for its turn to be shown."""
        return self._later.isActive()

    def _set(self, key: str, tok: Tokenizer | None) -> None:
        if tok is not None and self.shown[key] is not tok:
            self.shown[key] = tok
            self.views[key].set_tokenizer(tok)

    def _follow(self, tok: Tokenizer | None) -> None:
        if self._later.isActive():  # what was picked first, then the new tokenizer, as they came
            self._later.stop()
            self._show_picked()
        for key in self.views:
            self._set(key, tok)
            if tok is not None and not self.user_picked and key in self.EXAMPLE_VIEWS:
                self.views[key].show_piece(EXAMPLE_PIECE)

    def _on_token(self, tok: Tokenizer, token_id: int) -> None:
        self.user_picked = True
        self._token = (tok, token_id)
        self._later.start()

    def _on_piece(self, tok: Tokenizer, piece: str) -> None:
        self.user_picked = True
        self._piece = (tok, piece)
        self._later.start()

    def _show_picked(self) -> None:
        token, piece, self._token, self._piece = self._token, self._piece, None, None
        if token is not None:
            self._show(self.TOKEN_VIEWS, token[0], "show_token", token[1])
            # the tree comes forward, unless a view that follows the pick is in front (the token
            # list the user may have clicked in, the vocabulary, the replay): that one stays
            if "tree" in self.docks and not any(_in_front(self.docks.get(k)) for k in self.KEEP_IN_FRONT):
                self.docks["tree"].raise_()
        if piece is not None:
            self._show(self.PIECE_VIEWS, piece[0], "show_piece", piece[1])

    def _show(self, keys: tuple[str, ...], tok: Tokenizer, method: str, what: Any) -> None:
        for key in keys:
            if key in self.views:
                self._set(key, tok)
                getattr(self.views[key], method)(what)

    def _on_view_token(self, source: str, token_id: int) -> None:
        for key in self.TOKEN_VIEWS:
            if key != source and key in self.views:
                self.views[key].show_token(token_id)


# -- the panels --------------------------------------------------------------------------------------


def _make_tokens(host: PanelContext) -> QWidget:
    win = host.window
    reg = win.registry
    view = TokenList()

    def refresh(*_args: object) -> None:
        tok = reg.current()
        r = reg.result(tok) if tok is not None else None
        view.set_encoding(tok, r.enc if r is not None else None, reg.label(tok) if tok is not None else "")
        follow_selection()

    # the list follows a click in the turn after it, with the other docks (see Inspector): its
    # scroll and repaint stay out of the click's own turn, and are not painted
    # at all when the merge tree is brought forward over it
    later = QTimer(view, singleShot=True, interval=FOLLOW_MS)
    later.timeout.connect(lambda: view.select(win.selected_index(reg.current()), scroll=True))
    follow_selection = later.start

    # a new encoding of the text (a keystroke's) reaches the list a frame after the panes have
    # shown its colours: the list's repaint (Qt's item painting, whatever changed)
    # stays out of the keystroke's turn, and keystrokes that come faster share one
    later_rows = QTimer(view, singleShot=True, interval=FOLLOW_MS)
    later_rows.timeout.connect(refresh)

    def on_data(first: Any, last: Any, roles: list[int]) -> None:
        if RESULT_ROLE in roles and first.row() <= reg.current_row() <= last.row() and not later_rows.isActive():
            later_rows.start()

    def on_current(*_args: object) -> None:
        later_rows.stop()
        refresh()

    reg.currentChanged.connect(on_current)
    reg.dataChanged.connect(on_data)
    win.selectionChanged.connect(follow_selection)

    def clicked(index: int) -> None:
        tok = reg.current()
        if tok is not None:
            win.select_token(tok, index)

    view.tokenClicked.connect(clicked)
    refresh()
    return view


def _make_tree(host: PanelContext) -> QWidget:
    view = MergeTreeBrowser(typing=host.window.typing)
    host.inspector.attach("tree", view)
    return view


def _make_replay(host: PanelContext) -> QWidget:
    view = ReplayWidget()
    host.inspector.attach("replay", view)
    return view


def _make_vocab(host: PanelContext) -> QWidget:
    view = VocabBrowser(typing=host.window.typing)
    host.inspector.attach("vocab", view)
    return view


def _make_compare(host: PanelContext) -> QWidget:
    win = host.window
    view = CompareView(text_source=win.text, text_changed=win.document.contentsChanged)
    view.active = False  # until its tab is brought forward
    reg = win.registry

    def follow() -> None:
        toks, labels = reference_first(reg)
        if toks != view.toks or labels != view.names:
            view.set_tokenizers(toks, labels)

    follow_rows(reg, follow)
    view.set_token_palette(win.appearance.token_palette)
    win.appearance.changed.connect(lambda: view.set_token_palette(win.appearance.token_palette))
    reg.referenceChanged.connect(lambda _ref: follow())
    reg.dataChanged.connect(lambda *_: follow())  # labels change when a namesake comes or goes
    follow()
    return view


def _make_languages(host: PanelContext) -> QWidget:
    from bpeinspect.gui.panels.languages import LanguagesView

    win = host.window
    view = LanguagesView()

    def open_language(text: CorpusText) -> None:  # shown right to left when its language is written so
        sample, rtl = text.sample, text.language.direction == "rtl"
        if sample.text is not None:
            win.set_text(sample.text, right_to_left=rtl)
        elif sample.path is not None:
            win.open_text_file(str(sample.path), right_to_left=rtl)

    view.languageActivated.connect(open_language)
    view.addTokenizerRequested.connect(win.files.ask_open_tokenizer)
    view.failed.connect(win.show_error)
    follow_rows(win.registry, lambda: _languages_follow(view, host))
    win.registry.referenceChanged.connect(lambda _ref: _languages_follow(view, host))
    return view


def _languages_follow(view: LanguagesView, host: PanelContext) -> None:
    toks, _labels = reference_first(host.window.registry)  # the plot sorts by the reference
    if toks and host.docks["languages"].isVisible():
        view.set_tokenizers(toks)


def _make_vocabs(host: PanelContext) -> QWidget:
    from bpeinspect.gui.panels.vocabs import VocabsView

    win = host.window
    view = VocabsView(typing=win.typing)
    reg = win.registry

    def follow() -> None:
        if host.docks["vocabs"].isVisible():
            view.set_tokenizers(*reference_first(reg))

    follow_rows(reg, follow)
    reg.referenceChanged.connect(lambda _ref: follow())
    view.tokenPicked.connect(win.tokenActivated.emit)  # the token views follow it, under its tokenizer
    view.failed.connect(win.show_error)
    view.set_tokenizers(*reference_first(reg))
    return view


def _vocabs_follow(view: VocabsView, host: PanelContext) -> None:
    view.set_tokenizers(*reference_first(host.window.registry))


def _make_training(host: PanelContext) -> QWidget:
    from bpeinspect.gui.training.workspace import TrainingWorkspace

    prefs = getattr(host.window, "prefs", None)  # the main window's stored settings
    return TrainingWorkspace(host.window.registry, settings=getattr(prefs, "settings", None))


def _make_chat(host: PanelContext) -> QWidget:
    from bpeinspect.gui.panels.chat import ChatView

    win = host.window
    view = ChatView()
    reg = win.registry
    reg.currentChanged.connect(lambda tok: view.set_tokenizer(tok, reg.spec_of(tok) if tok is not None else ""))
    tok = reg.current()
    view.set_tokenizer(tok, reg.spec_of(tok) if tok is not None else "")
    look = win.appearance

    def style() -> None:  # the window's token colours and layers, not its font
        view.token_view.set_layers(look.layers)
        view.token_view.set_token_palette(look.token_palette)

    look.changed.connect(style)
    style()
    view.token_view.tokenClicked.connect(lambda i: view.token_view.select_token(i, scroll=False))
    return view


def _make_dataset(host: PanelContext) -> QWidget:
    from bpeinspect.gui.panels.dataset import DatasetView

    win = host.window
    view = DatasetView()
    reg = win.registry
    follow_rows(reg, lambda: view.set_tokenizers(tokenizers_of(reg), specs_of(reg)))
    view.set_tokenizers(tokenizers_of(reg), specs_of(reg))
    view.failed.connect(win.show_error)
    view.recordActivated.connect(lambda record, shape: _open_record(host, record, shape))
    return view


def _open_record(host: PanelContext, record: Any, shape: Any) -> None:
    """A chat record opens in the chat panel; any other in the text box (its fields' text)."""
    from bpeinspect.core.dataset import conversation, field_texts

    messages = conversation(record) if shape.kind == "chat" else None
    if messages is not None:
        chat = cast("ChatView", host.show("chat"))
        chat.set_messages(messages, reply_header=False)  # counted as the dataset counts it
    else:
        host.window.set_text("\n\n".join(field_texts(shape, record)))


PANELS: tuple[PanelSpec, ...] = (
    PanelSpec("tokens", "Tokens", _make_tokens),
    PanelSpec("tree", "Merge tree", _make_tree, tab_with="tokens"),
    PanelSpec("replay", "Merge replay", _make_replay, tab_with="tree"),
    PanelSpec("vocab", "Vocabulary", _make_vocab, tab_with="replay"),
    PanelSpec(
        "compare",
        "Compare",
        _make_compare,
        tab_with="vocab",
        docked=lambda view, dock: dock.visibilityChanged.connect(view.set_active),
    ),
    PanelSpec(
        "languages",
        "Languages",
        _make_languages,
        BOTTOM,
        menu="view",
        action="Languages…",
        shortcut="Ctrl+L",
        lazy=True,
        floating_size=(1100, 700),
        shown=_languages_follow,
        module="bpeinspect.gui.panels.languages",
    ),
    PanelSpec(
        "vocabs",
        "Vocabularies",
        _make_vocabs,
        BOTTOM,
        menu="view",
        action="Vocabularies…",
        shortcut="Ctrl+Shift+B",
        lazy=True,
        floating_size=(1200, 720),
        shown=_vocabs_follow,
        module="bpeinspect.gui.panels.vocabs",
    ),
    PanelSpec(
        "training",
        "Training",
        _make_training,
        BOTTOM,
        menu="tokenizers",
        action="Train a tokenizer…",
        shortcut="Ctrl+T",
        lazy=True,
        floating_size=(1200, 800),
        module="bpeinspect.gui.training.workspace",
    ),
    PanelSpec(
        "chat",
        "Chat",
        _make_chat,
        RIGHT,
        menu="view",
        action="Chat…",
        shortcut="Ctrl+Shift+M",
        lazy=True,
        floating_size=(760, 820),
        module="bpeinspect.gui.panels.chat",
    ),
    PanelSpec(
        "dataset",
        "Dataset",
        _make_dataset,
        BOTTOM,
        menu="view",
        action="Dataset…",
        shortcut="Ctrl+Shift+J",
        lazy=True,
        floating_size=(1200, 760),
        module="bpeinspect.gui.panels.dataset",
    ),
)
