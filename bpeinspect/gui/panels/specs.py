"""The panels the main window docks, as a registry of :class:`PanelSpec`\\ s.

The window reads :data:`PANELS` (see :class:`~bpeinspect.gui.window.docks.PanelHost`): it
makes each dock (the lazy ones, and pyqtgraph with them, the first time they are shown), adds
the menu entries that show them, and tabs them together. Each spec's ``make`` gets a
:class:`~bpeinspect.gui.panels.context.PanelContext` (the panel host) and builds its view, tied
to the window through what :class:`~bpeinspect.gui.panels.context.PanelWindow` names of it: its
registry model, its text and its ``tokenActivated``/``pieceActivated`` signals. The panels made
here are the ones docked at the start; a lazy panel's factory is in its own module
(:func:`lazy_panel`), so that this one does not import it. The token views (merge tree,
vocabulary, replay) also follow each other through an :class:`Inspector`.

>>> [spec.key for spec in PANELS]
['tokens', 'tree', 'replay', 'vocab', 'compare', 'languages', 'vocabs', 'training', 'chat', 'dataset']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.gui.panels.compare import CompareView
from bpeinspect.gui.panels.context import PanelContext, PanelWindow, TokenView
from bpeinspect.gui.panels.merge_tree import MergeTreeBrowser
from bpeinspect.gui.panels.replay import ReplayWidget
from bpeinspect.gui.panels.token_list import TokenList
from bpeinspect.gui.panels.vocabulary import VocabBrowser
from bpeinspect.gui.registry import RESULT_ROLE, follow_rows, reference_first

# what the tree and the replay show before the user clicks anything: a long word, built in steps
EXAMPLE_PIECE = " tokenization"
# how long after a click the docks follow it: a frame, so that the click's own turn and paint
# and the docks' turns are apart even for timers due meanwhile (a zero timer ran in the same
# pass of the event loop as the click's paint, one long stretch at the first click)
FOLLOW_MS = 16
RIGHT, BOTTOM = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.BottomDockWidgetArea


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
        # the views follow a new current tokenizer one per turn, those in front first (each builds
        # what it shows of a vocabulary: three in one turn held the window for 100-200 ms)
        self._current: Tokenizer | None = window.registry.current()
        self._catch_up = QTimer(self, singleShot=True, interval=FOLLOW_MS)
        self._catch_up.timeout.connect(self._follow_next)
        win = window
        win.registry.currentChanged.connect(self._follow)
        win.registry.removed.connect(lambda _tok: self._catch_up.start())  # views behind let go of it
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

    def docked(self, key: str, dock: QDockWidget) -> None:
        """``dock`` holds the view of ``key`` (if one is attached): left behind, that view
        catches up with the current tokenizer when it comes to the front."""
        if key in self.views:
            dock.visibilityChanged.connect(lambda visible: visible and self._catch_up.start())

    def pending(self) -> bool:
        """Whether a picked token or pre-token, or a view's new tokenizer, waits for its turn to be shown."""
        return self._later.isActive() or self._catch_up.isActive()

    def _set(self, key: str, tok: Tokenizer | None) -> None:
        if tok is not None and self.shown[key] is not tok:
            self.shown[key] = tok
            self.views[key].set_tokenizer(tok)

    def _follow(self, tok: Tokenizer | None) -> None:
        if self._later.isActive():  # what was picked first, then the new tokenizer, as they came
            self._later.stop()
            self._show_picked()
        self._current = tok
        self._catch_up.start()

    def _follow_next(self) -> None:
        """Put one view on the current tokenizer, and come back for the next: a view in front,
        or one whose tokenizer was closed (not kept alive by it). A view behind another tab or
        hidden waits until it is shown."""
        tok = self._current
        if tok is None:
            return
        registry = self.window.registry
        for key, view in self.views.items():
            old = self.shown[key]
            due = old is None or old not in registry or self._in_view(key)
            if old is tok or not due:
                continue
            self._set(key, tok)
            if not self.user_picked and key in self.EXAMPLE_VIEWS:
                view.show_piece(EXAMPLE_PIECE)
            self._catch_up.start()
            return

    def _in_view(self, key: str) -> bool:
        dock = self.docks.get(key)
        return dock is None or not cast(QWidget, self.window).isVisible() or _in_front(dock)

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


def _token_view(key: str, make_view: Callable[[PanelWindow], TokenView]) -> Callable[[PanelContext], QWidget]:
    """A panel whose view the :class:`Inspector` keeps on the current tokenizer and the token
    picked, under ``key``."""

    def make(host: PanelContext) -> QWidget:
        view = make_view(host.window)
        host.inspector.attach(key, view)
        return cast(QWidget, view)  # each of them is a widget

    return make


def _make_compare(host: PanelContext) -> QWidget:
    win = host.window
    view = CompareView(text_source=win.live_text, text_changed=win.document.contentsChanged, live=win.live_encoding)
    view.active = False  # until its tab is brought forward
    reg = win.registry

    def on_data(_first: Any, _last: Any, roles: list[int]) -> None:
        if RESULT_ROLE in roles:  # an encoding of the text is complete (or failed)
            view.encodings_changed()

    reg.dataChanged.connect(on_data)

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


def _make_from(module: str, host: PanelContext) -> QWidget:
    factory: Callable[[PanelContext], QWidget] = importlib.import_module(module).make_panel
    return factory(host)


def _shown_from(module: str, view: Any, host: PanelContext) -> None:
    shown: Callable[[Any, PanelContext], None] | None = getattr(importlib.import_module(module), "panel_shown", None)
    if shown is not None:
        shown(view, host)


def lazy_panel(
    key: str,
    title: str,
    module: str,
    shortcut: str,
    floating_size: tuple[int, int],
    *,
    area: Qt.DockWidgetArea = BOTTOM,
    menu: str = "view",
    action: str = "",
) -> PanelSpec:
    """A panel made the first time its menu entry (``action``, else its title and "…") shows it,
    by ``module``'s ``make_panel(host)``; the module is imported then, or ahead of time off the
    GUI thread. The module's ``panel_shown(view, host)``, where it has one, runs each time the
    menu shows the panel.

    >>> spec = lazy_panel("chat", "Chat", "bpeinspect.gui.panels.chat", "Ctrl+Shift+M", (760, 820))
    >>> spec.lazy, spec.action, spec.menu, spec.area == BOTTOM
    (True, 'Chat…', 'view', True)
    """
    return PanelSpec(
        key,
        title,
        partial(_make_from, module),
        area,
        menu=menu,
        action=action or f"{title}…",
        shortcut=shortcut,
        lazy=True,
        module=module,
        floating_size=floating_size,
        shown=partial(_shown_from, module),
    )


PANELS: tuple[PanelSpec, ...] = (
    PanelSpec("tokens", "Tokens", _make_tokens),
    PanelSpec(
        "tree", "Merge tree", _token_view("tree", lambda w: MergeTreeBrowser(typing=w.typing)), tab_with="tokens"
    ),
    PanelSpec("replay", "Merge replay", _token_view("replay", lambda _w: ReplayWidget()), tab_with="tree"),
    PanelSpec("vocab", "Vocabulary", _token_view("vocab", lambda w: VocabBrowser(typing=w.typing)), tab_with="replay"),
    PanelSpec(
        "compare",
        "Compare",
        _make_compare,
        tab_with="vocab",
        docked=lambda view, dock: dock.visibilityChanged.connect(view.set_active),
    ),
    lazy_panel("languages", "Languages", "bpeinspect.gui.panels.languages", "Ctrl+L", (1100, 700)),
    lazy_panel("vocabs", "Vocabularies", "bpeinspect.gui.panels.vocabs", "Ctrl+Shift+B", (1200, 720)),
    lazy_panel(
        "training",
        "Training",
        "bpeinspect.gui.training.workspace",
        "Ctrl+T",
        (1200, 800),
        menu="tokenizers",
        action="Train a tokenizer…",
    ),
    lazy_panel("chat", "Chat", "bpeinspect.gui.panels.chat", "Ctrl+Shift+M", (760, 820), area=RIGHT),
    lazy_panel("dataset", "Dataset", "bpeinspect.gui.panels.dataset", "Ctrl+Shift+J", (1200, 760)),
)
