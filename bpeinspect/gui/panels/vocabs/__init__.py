"""Vocabularies side by side: the view (see :mod:`.view`), its token table and its figures.

>>> from bpeinspect.gui.panels.vocabs import VocabsView   # doctest: +SKIP
"""

from bpeinspect.gui.panels.vocabs.view import VocabsView

__all__ = ["VocabsView"]
