"""The window's actions and menus, kept by key rather than found by their title.

Every menu entry is an :class:`ActionSpec` added to an :class:`ActionRegistry` with the slot
it calls; menus are made from :data:`MENUS` and :data:`SUBMENUS` on first use, in that order,
so entries added later (the panels' "Languages…", "Train a tokenizer…") land in a menu by
its key.

>>> actions = ActionRegistry(window)                                            # doctest: +SKIP
>>> actions.add(ActionSpec("view.zoom_in", "view", "Zoom in", "Ctrl++"), zoom_in)  # doctest: +SKIP
>>> actions["view.zoom_in"].trigger()                                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

MENUS = {"file": "&File", "edit": "&Edit", "tokenizers": "&Tokenizers", "view": "&View", "help": "&Help"}
SUBMENUS = {
    "file/recent_texts": "Recent texts",
    "file/recent_tokenizers": "Recent tokenizers",
    "view/palette": "Palette",
    "view/theme": "Theme",
    "view/panels": "Panels",
}

Shortcut = str | QKeySequence.StandardKey | None


@dataclass(frozen=True)
class ActionSpec:
    """One menu entry: its key, the menu it is in, its text and shortcut."""

    key: str  # "view.layer.ids"
    menu: str  # a key of MENUS or SUBMENUS
    text: str
    shortcut: Shortcut = None
    checkable: bool = False
    checked: bool = False
    group: str | None = None  # checkable entries of one group exclude each other
    role: QAction.MenuRole | None = None


class ActionRegistry:
    """The actions and menus of one main window."""

    def __init__(self, window: QMainWindow) -> None:
        self.window = window
        self._actions: dict[str, QAction] = {}
        self._menus: dict[str, QMenu] = {}
        self._groups: dict[str, QActionGroup] = {}
        self._syncing = False  # set_checked at work: slots are not called

    def menu(self, key: str) -> QMenu:
        """The menu ``key`` (made on first use)."""
        menu = self._menus.get(key)
        if menu is None:
            if key in MENUS:
                menu = self.window.menuBar().addMenu(MENUS[key])
            else:
                parent, _, _ = key.rpartition("/")
                menu = self.menu(parent).addMenu(SUBMENUS[key])
            self._menus[key] = menu
        return menu

    def add(self, spec: ActionSpec, slot: Callable[..., Any]) -> QAction:
        """Add ``spec`` to its menu; ``slot`` gets ``checked`` for checkable entries, nothing otherwise."""
        act = QAction(spec.text, self.window)
        if spec.shortcut is not None:
            act.setShortcut(QKeySequence(spec.shortcut))
        if spec.role is not None:
            act.setMenuRole(spec.role)
        if spec.checkable:
            act.setCheckable(True)
            act.setChecked(spec.checked)
            act.toggled.connect(lambda checked: self._syncing or slot(checked))
        else:
            act.triggered.connect(lambda _checked=False: slot())
        if spec.group is not None:
            self._groups.setdefault(spec.group, QActionGroup(self.window)).addAction(act)
        self.menu(spec.menu).addAction(act)
        self._actions[spec.key] = act
        return act

    def add_action(self, key: str, menu: str, act: QAction) -> QAction:
        """Put an action made elsewhere (a dock's toggle) into ``menu`` under ``key``."""
        self.menu(menu).addAction(act)
        self._actions[key] = act
        return act

    def separator(self, menu: str) -> None:
        self.menu(menu).addSeparator()

    def set_checked(self, key: str, on: bool) -> None:
        """Check or uncheck ``key`` (the others of its group follow) without calling slots."""
        self._syncing = True
        try:
            self._actions[key].setChecked(on)
        finally:
            self._syncing = False

    def __getitem__(self, key: str) -> QAction:
        return self._actions[key]

    def __contains__(self, key: str) -> bool:
        return key in self._actions

    def keys(self) -> list[str]:
        return list(self._actions)
