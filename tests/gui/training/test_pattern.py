"""The split-rule chooser's first preview."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from bpeinspect.gui.overlay import glyphs
from bpeinspect.gui.training import pattern
from bpeinspect.gui.training.pattern import PatternChooser
from tests.gui.conftest import CountingFont, stand_in_fonts


def test_first_preview_opens_a_few_fonts_per_event_loop_turn(qapp, monkeypatch):
    """Opening the Training panel looked the preview's characters up in every font of the system
    in one turn (a millisecond or more each the first time): it now opens a few per turn, and
    the preview it draws is the one drawn at once."""
    opened = stand_in_fonts(monkeypatch, 40)
    chooser = PatternChooser(default="gpt4")
    per_turn = []
    for _ in range(200):
        before = len(opened)
        QApplication.processEvents()
        per_turn.append(len(opened) - before)
        if chooser.preview.text():
            break
    assert chooser.preview.text(), "the preview never showed"
    assert sorted(opened) == list(range(40))  # every font looked at once, in the end
    assert max(per_turn) <= pattern.FONTS_PER_TURN
    shown = chooser.preview.text()
    assert chooser.update_preview()
    assert chooser.preview.text() == shown


def test_some_font_has_goes_on_where_a_bounded_look_stopped(qapp, monkeypatch):
    opened: list[int] = []
    fonts = [CountingFont(opened, i, maps_all=i == 9) for i in range(12)]
    monkeypatch.setattr(glyphs, "_ALL_FONTS", fonts)
    monkeypatch.setattr(glyphs, "_OPENED", [0])
    assert glyphs._some_font_has("日", 4) is None
    assert opened == [0, 1, 2, 3]
    assert glyphs._some_font_has("日", 4) is None
    assert glyphs._some_font_has("日", 4) is True
    assert opened == list(range(10))
    assert glyphs._some_font_has("語") is True  # unbounded, as before
    assert opened == list(range(10))
