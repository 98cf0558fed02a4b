"""Tokenizers ▸ Train a tokenizer…: the main window's way into the training workspace.

Kept apart from :mod:`.training` so that the app starts without loading the workspace and
pyqtgraph; they are imported the first time the menu is used.

>>> show = install_training_panel(window)   # doctest: +SKIP
>>> ws = show()  # the workspace, shown as the "Training" panel  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from bpeinspect.gui.panels.specs import add_menu_action

if TYPE_CHECKING:
    from bpeinspect.gui.training.workspace import TrainingWorkspace


def install_training_panel(window) -> Callable[[], TrainingWorkspace]:
    """Add Tokenizers ▸ Train a tokenizer… (Ctrl+T) to a :class:`~.main_window.MainWindow`.

    The workspace is made on first use (so pyqtgraph is not loaded at start-up) and shown as
    the "Training" panel (floating at first; it can be docked). Returns the function the
    menu calls, which shows the panel and returns the workspace.
    """
    state: dict[str, TrainingWorkspace] = {}

    def show() -> TrainingWorkspace:
        ws = state.get("ws")
        if ws is None:
            from bpeinspect.gui.training.workspace import TrainingWorkspace

            ws = state["ws"] = TrainingWorkspace(window.registry)
            dock = window.add_panel("Training", ws, Qt.DockWidgetArea.BottomDockWidgetArea)
            dock.setFloating(True)
            dock.resize(1200, 800)
        dock = ws.parentWidget()
        dock.show()
        dock.raise_()
        return ws

    add_menu_action(window, "Tokenizers", "Train a tokenizer…", "Ctrl+T", show)
    return show
