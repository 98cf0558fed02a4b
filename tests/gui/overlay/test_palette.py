"""Every colour lives in the palette module, both themes name the same colours, widgets follow the theme."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from PySide6.QtGui import QColor, QGuiApplication
from PySide6.QtWidgets import QApplication

import bpeinspect.gui
from bpeinspect.gui.message_bar import MessageBar, ToneLabel
from bpeinspect.gui.overlay import palette
from bpeinspect.gui.overlay.palette import app_colors, colors, dark_window_palette, is_dark

GUI = Path(bpeinspect.gui.__file__).parent
# hex colours, QColor literals, named colours in style sheets and rich text (color:gray), Qt's own
COLOUR = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|QColor\(\s*(?:\"|\d)|color:\s*[a-z]+\b(?!\()"
                    r"|GlobalColor\.(?!transparent)")


def test_no_colour_outside_the_palette_module():
    found = [
        f"{path.relative_to(GUI)}:{n}: {line.strip()}"
        for path in GUI.rglob("*.py")
        if path.name != "palette.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if COLOUR.search(line)
    ]
    assert not found, "colours belong in gui/overlay/palette.py:\n" + "\n".join(found)


def test_both_themes_name_every_colour_and_each_is_valid():
    light, dark = colors(dark=False), colors(dark=True)
    assert not light.dark and dark.dark
    for field in dataclasses.fields(palette.UiColors):
        if field.name == "dark":
            continue
        for theme in (light, dark):
            value = getattr(theme, field.name)
            for name in value if isinstance(value, tuple) else (value,):
                assert QColor(name).isValid(), (field.name, name)
        assert len(str(getattr(light, field.name))) == len(str(getattr(dark, field.name))) or field.name == "series"
    assert is_dark(dark_window_palette())


def test_widgets_follow_a_change_of_theme(qtbot):
    app = QApplication.instance()
    bar, note = MessageBar(), ToneLabel("careful", tone="note")
    qtbot.addWidget(bar)
    qtbot.addWidget(note)
    bar.show_message("broken", error=True)
    light_sheet, light_note = bar.errors.styleSheet(), note.styleSheet()
    assert colors(dark=False).error_text in light_sheet and colors(dark=False).note_text in light_note
    app.setPalette(dark_window_palette())
    app.processEvents()  # the palette change reaches each widget as a posted event
    try:
        assert app_colors().dark and is_dark(QGuiApplication.palette())
        assert colors(dark=True).error_text in bar.errors.styleSheet()
        assert colors(dark=True).note_text in note.styleSheet()
    finally:
        app.setPalette(app.style().standardPalette())
        app.processEvents()
    assert bar.errors.styleSheet() == light_sheet and note.styleSheet() == light_note
