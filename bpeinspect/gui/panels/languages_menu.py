"""View ▸ Languages…: the token counts of the open tokenizers across the bundled languages.

Like the training workspace, the view (and pyqtgraph) is made on first use; after that it
follows the open tokenizers. Clicking a language in the plot opens its sample as the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt

from bpeinspect.gui.panels.specs import add_menu_action

if TYPE_CHECKING:
    from bpeinspect.gui.panels.languages import LanguagesView


def install_languages_panel(window) -> Callable[[], LanguagesView]:
    """Add View ▸ Languages… (Ctrl+L) to a main window; returns the function the menu calls."""
    state: dict[str, LanguagesView] = {}

    def follow(*_: object) -> None:
        view = state.get("view")
        if view is not None and view.parentWidget().isVisible() and window.registry.tokenizers():
            view.set_tokenizers(window.registry.tokenizers())

    def open_sample(sample) -> None:
        text = sample.text if sample.text is not None else None
        if text is None and sample.path is not None:
            window.open_text_file(str(sample.path))
        elif text is not None:
            window.set_text(text)

    def show() -> LanguagesView:
        view = state.get("view")
        if view is None:
            from bpeinspect.gui.panels.languages import LanguagesView

            view = state["view"] = LanguagesView()
            view.sampleActivated.connect(open_sample)
            view.failed.connect(window.show_error)
            dock = window.add_panel("Languages", view, Qt.DockWidgetArea.BottomDockWidgetArea)
            dock.setFloating(True)
            dock.resize(1100, 700)
            window.registry.added.connect(follow)
            window.registry.removed.connect(follow)
        dock = view.parentWidget()
        dock.show()
        dock.raise_()
        follow()
        return view

    add_menu_action(window, "View", "Languages…", "Ctrl+L", show)
    return show
