"""The dark theme keeps its text readable: the special-token cell of the ids, search
placeholders and the docks' buttons."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLineEdit, QStyle

from bpeinspect.gui.overlay.ids_view import IdsView
from bpeinspect.gui.overlay.palette import TokenPalette


def luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _most_contrast(image, background: QColor) -> float:
    best = 1.0
    for y in range(image.height()):
        for x in range(image.width()):
            px = image.pixelColor(x, y)
            if px.alpha() > 200:
                best = max(best, contrast(px, background))
    return best


@pytest.fixture
def dark(qtbot, window):
    window.set_theme("dark", remember=False)
    yield window
    window.set_theme("light", remember=False)


@pytest.mark.parametrize("is_dark", [False, True])
def test_special_token_cells_are_readable(qtbot, is_dark):
    pal = TokenPalette(dark=is_dark)
    assert contrast(pal.text_color(), pal.special_fill) >= 4.5
    view = IdsView()
    qtbot.addWidget(view)
    view.resize(200, 60)
    view.set_ids([100257], bytearray([1]), pal, 100300)  # one special token
    view.show()
    cell = view.viewport().grab().toImage().copy(4, 4, 30, 10)
    assert contrast(cell.pixelColor(2, 2), pal.text_color()) >= 4.5


def test_placeholders_and_dock_buttons_in_the_dark(qtbot, dark):
    app_pal = QGuiApplication.palette()
    base, window_bg = app_pal.color(QPalette.ColorRole.Base), app_pal.color(QPalette.ColorRole.Window)
    assert contrast(app_pal.color(QPalette.ColorRole.PlaceholderText), base) >= 4.5
    edit = QLineEdit(placeholderText="Search tokens…")
    qtbot.addWidget(edit)
    edit.resize(200, 28)
    edit.show()
    assert _most_contrast(edit.grab().toImage().copy(8, 6, 100, 16), base) >= 4.5
    style = QApplication.style()
    for kind in (QStyle.StandardPixmap.SP_TitleBarCloseButton, QStyle.StandardPixmap.SP_TitleBarNormalButton):
        icon = style.standardIcon(kind).pixmap(16, 16).toImage()
        assert _most_contrast(icon, window_bg) >= 4.5, kind


def test_an_unchecked_box_shows_its_border_in_the_dark(qtbot, dark):
    """Fusion draws the box's edge a shade darker than the window: on a dark one, unseen."""
    from PySide6.QtWidgets import QCheckBox, QStyleOptionButton

    bg = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    box = QCheckBox("Fertility, Rényi, utilization")
    qtbot.addWidget(box)
    box.show()
    opt = QStyleOptionButton()
    box.initStyleOption(opt)
    square = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, opt, box)
    assert not box.isChecked() and square.width() > 4
    assert _most_contrast(box.grab().toImage().copy(square), bg) >= 3.0


def test_a_theme_switch_recolours_the_dock_buttons_without_a_new_style(qtbot, panel_window):
    """A new application style polishes every widget of the window again (30-60 ms on the GUI
    thread); the docks alone are told to fetch their buttons' icons in the new colours."""
    from PySide6.QtWidgets import QAbstractButton

    window = panel_window
    window.set_theme("light", remember=False)
    style = QApplication.style()
    window.set_theme("dark", remember=False)
    try:
        assert QApplication.style() is style
        window_bg = QGuiApplication.palette().color(QPalette.ColorRole.Window)
        docks = list(window.panels.docks.values())
        assert docks
        for dock in docks:
            button = dock.findChild(QAbstractButton, "qt_dockwidget_closebutton")
            assert button is not None
            assert _most_contrast(button.icon().pixmap(16, 16).toImage(), window_bg) >= 4.5, dock.windowTitle()
    finally:
        window.set_theme("light", remember=False)


def test_disabled_controls_look_disabled_in_the_dark(qtbot, dark):
    """The training's Cancel after a run looked as clickable as Train."""
    from PySide6.QtWidgets import QPushButton

    pal = QGuiApplication.palette()
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
        on = pal.color(QPalette.ColorGroup.Active, role)
        off = pal.color(QPalette.ColorGroup.Disabled, role)
        assert contrast(on, off) >= 1.8, role
    enabled, disabled = QPushButton("Cancel"), QPushButton("Cancel", enabled=False)
    for b in (enabled, disabled):
        qtbot.addWidget(b)
        b.resize(90, 30)
        b.show()
    bg = pal.color(QPalette.ColorRole.Button)
    assert _most_contrast(enabled.grab().toImage(), bg) > _most_contrast(disabled.grab().toImage(), bg) * 1.5


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_token_tooltips_are_readable_in_both_themes(qtbot, window, theme):
    """The tooltip's labels were a fixed grey: 3.1:1 on the dark tooltip, 3.9:1 on the light one."""
    from bpeinspect.core import load_tokenizer
    from bpeinspect.gui.overlay.token_view import token_tooltip

    window.set_theme(theme, remember=False)
    try:
        tok = load_tokenizer("cl100k_base")
        tip = token_tooltip(tok, tok.encode_with_offsets("hello world"), 1)
        base = QGuiApplication.palette().color(QPalette.ColorRole.ToolTipBase)
        colours = re.findall(r"color:\s*([#\w]+)", tip)
        assert colours and all(contrast(QColor(c), base) >= 4.5 for c in colours), colours
    finally:
        window.set_theme("light", remember=False)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_layer_toggles_look_like_buttons_and_on_stands_out(qtbot, window, theme):
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QToolButton

    window.set_theme(theme)
    bar = window.toolbar
    on = bar.widgetForAction(window.commands["view.layer.specials"])
    off = bar.widgetForAction(window.commands["view.layer.ids"])
    assert isinstance(on, QToolButton) and on.isChecked() and not off.isChecked()
    qtbot.wait(20)
    shot_on, shot_off = on.grab().toImage(), off.grab().toImage()
    middle = QPoint(shot_on.width() // 2, 3)  # inside the button, above its text
    background = bar.grab().toImage().pixelColor(bar.mapFrom(off, QPoint(off.width() + 2, off.height() // 2)))
    # off: a frame around it, as a button has (not a bare label on the bar)
    edge = shot_off.pixelColor(0, shot_off.height() // 2)
    assert contrast(edge, background) > 1.3
    # on: its face differs plainly from an off one's
    assert contrast(shot_on.pixelColor(middle), shot_off.pixelColor(middle)) > 2.0


def test_a_window_started_with_the_dark_theme_saved_is_dark(qtbot, settings):
    """Starting with "dark" saved gave light window colours and dark-theme token colours (light
    text on a light page): the style the app is given first reset the dark palette just set."""
    from bpeinspect.gui.window.main_window import MainWindow
    from bpeinspect.gui.window.settings import Preferences

    app = QApplication.instance()
    app.setStyle("Fusion")  # as at the app's start: not yet the window's own style
    Preferences(settings).theme = "dark"
    win = MainWindow(settings=settings, panels=())
    qtbot.addWidget(win)
    try:
        win.show()
        qtbot.waitExposed(win)
        palette = QGuiApplication.palette()
        assert palette.color(QPalette.ColorRole.Window).lightness() < 80
        assert palette.color(QPalette.ColorRole.Base).lightness() < 80
        shot = win.grab().toImage()
        menu = win.menuBar().geometry().center()
        assert shot.pixelColor(menu.x(), menu.y()).lightness() < 80  # as drawn
        assert contrast(palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)) >= 7
    finally:
        win.set_theme("light", remember=False)


def test_a_theme_switch_repaints_the_text_and_each_dock_in_later_turns_of_their_own(qtbot, panel_window):
    """A new palette repainted the whole window in one turn: 55-80 ms on the GUI thread with the
    training plots open. The text and each dock on screen repaint in later turns, one per turn,
    the text first, and the window ends in the new colours on screen, docks included."""
    from bpeinspect.gui.turns import pending
    from tests.gui.conftest import PaintTurns

    window = panel_window
    window.set_theme("light", remember=False)
    window.resize(1200, 800)
    window.panels.show("languages")
    qtbot.waitUntil(lambda: not window.panels.importing() and not pending(), timeout=10000)
    qtbot.wait(50)
    docks = [d for d in window.panels.docks.values() if not d.visibleRegion().isEmpty() and not d.isFloating()]
    assert len(docks) >= 2
    text = window.centralWidget()
    paints = PaintTurns([text, *docks])
    try:
        paints.start()
        window.set_theme("dark", remember=False)
        assert paints.first == {}  # none in the switch's own turn
        qtbot.waitUntil(lambda: not pending() and all(w in paints.first for w in [text, *docks]), timeout=3000)
        paints.stop()
        turns = [paints.first[w] for w in [text, *docks]]
        assert len(set(turns)) == len(turns)  # each in a turn of its own
        assert turns[0] == min(turns)  # the text first
        qtbot.wait(50)
        shot = window.screen().grabWindow(window.winId()).toImage()
        dark_bg = QGuiApplication.palette().color(QPalette.ColorRole.Window)
        assert luminance(dark_bg) < 0.1
        for dock in docks:
            title = dock.mapTo(window, dock.rect().topLeft())
            seen = shot.pixelColor(title.x() + dock.width() // 2, title.y() + 3)
            assert abs(luminance(seen) - luminance(dark_bg)) < 0.05, dock.windowTitle()
    finally:
        paints.stop()
        window.set_theme("light", remember=False)
