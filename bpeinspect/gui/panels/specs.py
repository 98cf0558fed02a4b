"""Dock the inspection views into the main window and keep them following the text.

Clicking a token in the overlay shows its merge tree and its row in the vocabulary; clicking
gives its pre-token to the merge replay; the current tokenizer of the picker is the one the
views show. A token picked inside one view is shown by the others too.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from bpeinspect.core import Tokenizer
from bpeinspect.gui.panels.compare import install_compare
from bpeinspect.gui.panels.merge_tree import MergeTreeBrowser
from bpeinspect.gui.panels.replay import ReplayWidget
from bpeinspect.gui.panels.vocabulary import VocabBrowser

DOCK_WIDTH = 460
# what the tree and the replay show before the user clicks anything: a long word, built in steps
EXAMPLE_PIECE = " tokenization"


class Panels:
    """The docked views of one main window and the wiring between them."""

    def __init__(self, win) -> None:
        self.win = win
        self.tree = MergeTreeBrowser()
        self.vocab = VocabBrowser()
        self.replay = ReplayWidget()
        self.views: list[QWidget] = [self.tree, self.vocab, self.replay]
        self.shown: dict[int, Tokenizer | None] = {id(v): None for v in self.views}
        area = Qt.DockWidgetArea.RightDockWidgetArea
        self.docks: dict[str, QDockWidget] = {
            "tree": win.add_panel("Merge tree", self.tree, area),
            "replay": win.add_panel("Merge replay", self.replay, area),
            "vocab": win.add_panel("Vocabulary", self.vocab, area),
        }
        win.tabifyDockWidget(self.docks["tree"], self.docks["replay"])
        win.tabifyDockWidget(self.docks["replay"], self.docks["vocab"])
        # the compare view (gui.compare) follows the registry and the text by itself
        self.compare, self.docks["compare"] = install_compare(win)
        win.tabifyDockWidget(self.docks["vocab"], self.docks["compare"])
        self.docks["tree"].raise_()
        # after the first layout pass, or Qt ignores the size
        QTimer.singleShot(0, lambda: win.resizeDocks([self.docks["tree"]], [DOCK_WIDTH], Qt.Orientation.Horizontal))
        self._user_picked = False  # until then the views show EXAMPLE_PIECE
        win.registry.currentChanged.connect(self._follow)
        win.tokenActivated.connect(self._on_token)
        win.pieceActivated.connect(self._on_piece)
        for view in self.views:
            view.tokenActivated.connect(lambda tid, src=view: self._on_view_token(src, tid))
        self._follow(win.registry.current())

    def _set(self, view: QWidget, tok: Tokenizer | None) -> None:
        if tok is not None and self.shown[id(view)] is not tok:
            self.shown[id(view)] = tok
            view.set_tokenizer(tok)

    def _follow(self, tok: Tokenizer | None) -> None:
        for view in self.views:
            self._set(view, tok)
        if tok is not None and not self._user_picked:
            self.tree.show_piece(EXAMPLE_PIECE)
            self.replay.show_piece(EXAMPLE_PIECE)

    def _on_token(self, tok: Tokenizer, token_id: int) -> None:
        self._user_picked = True
        for view in (self.tree, self.vocab):
            self._set(view, tok)
            view.show_token(token_id)
        if not self.docks["vocab"].isVisible() or self.docks["replay"].isVisible():
            self.docks["tree"].raise_()

    def _on_piece(self, tok: Tokenizer, piece: str) -> None:
        self._user_picked = True
        self._set(self.replay, tok)
        self.replay.show_piece(piece)

    def _on_view_token(self, source: QWidget, token_id: int) -> None:
        for view in (self.tree, self.vocab):
            if view is not source:
                view.show_token(token_id)


    def is_idle(self) -> bool:
        """True when no view has work running."""
        return not any(view.busy for view in self.views) and not self.compare.busy


def install_panels(win) -> Panels:
    """Create the docked views for ``win`` (kept on it as ``win.panels_``)."""
    win.panels_ = Panels(win)
    return win.panels_


def add_menu_action(win, menu_title: str, text: str, shortcut: str, slot) -> None:
    """Append ``text`` (with ``shortcut``) to the window's menu titled ``menu_title``."""
    for action in win.menuBar().actions():
        if action.menu() is not None and action.text().replace("&", "") == menu_title:
            menu = action.menu()
            menu.addSeparator()
            act = menu.addAction(text)
            act.setShortcut(shortcut)
            act.triggered.connect(lambda _checked=False: slot())
            return
