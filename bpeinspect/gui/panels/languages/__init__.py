"""Across languages: the languages view and its pages (see :mod:`.view`), and how the window
docks it (:func:`make_panel`, called the first time the panel is shown).

>>> from bpeinspect.gui.panels.languages import LanguagesView   # doctest: +SKIP
"""

from bpeinspect.gui.panels.languages.view import LanguagesView, load_modules, make_panel, panel_shown


def warm_up() -> None:
    """Import the view's counting, tables and plot pages and read the map, ahead of its first
    open (the window's start-up worker calls it): imported by the view's own worker when it
    opens, they held the interpreter beside the GUI thread's first paint of the view."""
    load_modules()


__all__ = ["LanguagesView", "make_panel", "panel_shown", "warm_up"]
