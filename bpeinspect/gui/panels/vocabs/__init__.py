"""Vocabularies side by side: the view (see :mod:`.view`), its token table and its figures, and
how the window docks it (:func:`make_panel`, called the first time the panel is shown).

>>> from bpeinspect.gui.panels.vocabs import VocabsView   # doctest: +SKIP
"""

from bpeinspect.gui.panels.vocabs.view import VocabsView, make_panel, panel_shown

__all__ = ["VocabsView", "make_panel", "panel_shown"]
