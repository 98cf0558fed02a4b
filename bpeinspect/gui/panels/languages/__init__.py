"""Across languages: the languages view and its pages (see :mod:`.view`).

>>> from bpeinspect.gui.panels.languages import LanguagesView   # doctest: +SKIP
"""

from bpeinspect.gui.panels.languages.view import LanguagesView

__all__ = ["LanguagesView"]
