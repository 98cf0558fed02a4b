"""Settings survive a restart: layout, docks, theme, text size, layers, palette, recent files.

Every test uses an INI file in tmp_path, never the user's real settings.
"""

from __future__ import annotations

import platform

import pytest
from PySide6.QtCore import QByteArray, QSettings, Qt, qVersion
from PySide6.QtWidgets import QLabel

from bpeinspect import __version__
from bpeinspect.gui.overlay.palette import PALETTES
from bpeinspect.gui.window import theme as theme_mod
from bpeinspect.gui.window.about import AboutDialog
from bpeinspect.gui.window.main_window import MainWindow
from bpeinspect.gui.window.settings import RECENT_LIMIT, Preferences
from tests.gui.conftest import wait_idle


def ini(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def make_window(qtbot, settings: QSettings) -> MainWindow:
    win = MainWindow(settings=settings, panels=())
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def close(qtbot, win: MainWindow) -> None:
    win.jobs.cancel_all()
    qtbot.waitUntil(lambda: not win.jobs.is_busy(), timeout=30000)
    win.close()


def test_everything_survives_a_restart(qtbot, tmp_path):
    text_file = tmp_path / "notes.txt"
    text_file.write_text("hello world, again", encoding="utf-8")

    win = make_window(qtbot, ini(tmp_path))
    win.resize(720, 540)  # within the offscreen screen (800x600): restoreGeometry keeps windows on screen
    dock = win.add_panel("Vocabulary", QLabel("vocab"))
    win.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    win.main_split.setSizes([500, 90])
    split_before = win.main_split.sizes()
    win.set_theme("dark")
    palette = next(p for p in PALETTES if p != win.appearance.palette_name)
    win.commands[f"view.palette.{palette}"].trigger()
    win.commands["view.layer.boundaries"].setChecked(True)
    win.commands["view.layer.colors"].setChecked(False)
    win.open_tokenizer("gpt2")
    win.open_text_file(str(text_file))
    wait_idle(qtbot, win)
    assert win.text() == "hello world, again"
    base = win.document.defaultFont().pointSizeF()
    for _ in range(3):
        win.commands["view.zoom_in"].trigger()
    assert win.document.defaultFont().pointSizeF() == base + 3
    size_before = (win.width(), win.height())
    close(qtbot, win)

    win2 = make_window(qtbot, ini(tmp_path))
    dock2 = win2.add_panel("Vocabulary", QLabel("vocab again"))
    qtbot.waitUntil(lambda: win2.dockWidgetArea(dock2) == Qt.DockWidgetArea.LeftDockWidgetArea, timeout=5000)
    assert (win2.width(), win2.height()) == size_before
    assert win2.main_split.sizes() == split_before
    look = win2.appearance
    assert look.dark and win2.commands["view.dark"].isChecked()
    assert win2.commands["view.theme.dark"].isChecked() and not win2.commands["view.theme.system"].isChecked()
    assert look.palette_name == palette
    assert look.layers.boundaries and not look.layers.colors
    assert win2.commands["view.layer.boundaries"].isChecked() and not win2.commands["view.layer.colors"].isChecked()
    assert win2.prefs.recent_texts() == [str(text_file)]
    recent = win2.commands.menu("file/recent_texts")
    recent.aboutToShow.emit()
    assert [a.text() for a in recent.actions()] == [str(text_file)]
    win2.open_tokenizer("gpt2")
    wait_idle(qtbot, win2)
    assert win2.document.defaultFont().pointSizeF() == base + 3
    assert win2.panes.panes()[0].view.font().pointSizeF() == base + 3
    # recent text opens from the menu
    recent.actions()[0].trigger()
    qtbot.waitUntil(lambda: win2.text() == "hello world, again", timeout=10000)
    close(qtbot, win2)
    win2.set_theme("light")  # the palette is application-wide: leave it light for other tests


def test_font_size_is_kept_when_no_tokenizer_is_open(qtbot, tmp_path):
    win = make_window(qtbot, ini(tmp_path))
    win.appearance.set_text_size(17.0)
    close(qtbot, win)
    assert Preferences(ini(tmp_path)).font_size == 17.0
    win2 = make_window(qtbot, ini(tmp_path))
    win2.open_tokenizer("gpt2")
    wait_idle(qtbot, win2)
    assert win2.document.defaultFont().pointSizeF() == 17.0
    close(qtbot, win2)


def test_dark_theme_toggle_is_an_override_and_system_is_followed(qtbot, tmp_path, monkeypatch):
    win = make_window(qtbot, ini(tmp_path))
    try:
        look, dark_action = win.appearance, win.commands["view.dark"]
        assert win.prefs.theme == "system"
        dark_action.setChecked(True)  # View ▸ Dark theme
        assert win.prefs.theme == "dark" and win.commands["view.theme.dark"].isChecked()
        dark_action.setChecked(False)
        assert win.prefs.theme == "light" and not look.dark and win.commands["view.theme.light"].isChecked()

        win.commands["view.theme.system"].trigger()
        assert win.prefs.theme == "system"
        monkeypatch.setattr(theme_mod, "system_is_dark", lambda: True)
        look.follow_system()  # what QStyleHints.colorSchemeChanged calls
        assert look.dark and dark_action.isChecked() and win.prefs.theme == "system"
        monkeypatch.setattr(theme_mod, "system_is_dark", lambda: False)
        look.follow_system()
        assert not look.dark and win.prefs.theme == "system"

        win.set_theme("light")  # an override ignores the desktop
        monkeypatch.setattr(theme_mod, "system_is_dark", lambda: True)
        look.follow_system()
        assert not look.dark
    finally:
        win.set_theme("light")
        close(qtbot, win)


def test_damaged_settings_fall_back_to_defaults(qtbot, tmp_path):
    s = ini(tmp_path)
    s.setValue("window/schema", 1)
    s.setValue("window/geometry", QByteArray(b"\x00garbage\xff" * 5))
    s.setValue("window/state", QByteArray(b"nonsense"))
    s.setValue("window/main_split", "not bytes")
    s.setValue("appearance/theme", "purple")
    s.setValue("appearance/font_size", "huge")
    s.setValue("view/palette", "no-such-palette")
    s.setValue("view/layers/colors", "maybe")
    s.setValue("recent_texts", 42)
    s.sync()
    win = make_window(qtbot, ini(tmp_path))
    p = win.prefs
    assert p.theme == "system" and p.font_size is None and p.recent_texts() == []
    assert not win.appearance.dark and win.appearance.palette_name in PALETTES
    assert (win.width(), win.height()) == (1400, 860)
    close(qtbot, win)


def test_out_of_range_and_invalid_values_are_refused(tmp_path):
    p = Preferences(ini(tmp_path))
    p.font_size = 1000
    assert p.font_size == 48.0
    p.settings.setValue("appearance/font_size", 2.0)
    assert p.font_size is None
    with pytest.raises(ValueError, match="theme"):
        p.theme = "sepia"


def test_recent_texts_newest_first_deduplicated_and_capped(tmp_path):
    p = Preferences(ini(tmp_path))
    for i in range(RECENT_LIMIT + 5):
        p.remember_text(f"/t/{i}.txt")
    p.remember_text("/t/3.txt")
    got = p.recent_texts()
    assert len(got) == RECENT_LIMIT and got[0] == "/t/3.txt" and got.count("/t/3.txt") == 1
    assert got[1] == f"/t/{RECENT_LIMIT + 4}.txt"
    vocab = tmp_path / "a.tiktoken"
    vocab.write_text("")
    # the app's own list of old joins the core's (which keeps files that still exist)
    p.settings.setValue("recent_tokenizers", [str(vocab), "/gone/b.tiktoken"])
    assert p.recent_tokenizers() == [str(vocab.resolve())]
    assert p.settings.value("recent_tokenizers") is None
    p.clear_recent()
    assert p.recent_texts() == [] and p.recent_tokenizers() == []


def test_about_shows_the_versions(qtbot, tmp_path):
    win = make_window(qtbot, ini(tmp_path))
    about_action = win.commands["help.about"]
    assert about_action.shortcut().toString()  # F1 (HelpContents) on every platform here
    about_action.trigger()
    about = win.about
    assert isinstance(about, AboutDialog) and about.isVisible()
    shown = about.label.text()
    for version in (__version__, qVersion(), platform.python_version()):
        assert version in shown and version in about.text()
    about.close()
    close(qtbot, win)


def test_menus_hold_the_new_entries(qtbot, tmp_path):
    win = make_window(qtbot, ini(tmp_path))
    titles = [a.text() for a in win.menuBar().actions()]
    assert titles[-1] == "&Help"
    a = win.commands
    file_menu = a.menu("file")
    assert [act.menu() for act in file_menu.actions() if act.menu()] == [
        a.menu("file/recent_texts"),
        a.menu("file/recent_tokenizers"),
    ]
    view_entries = [act.menu().title() if act.menu() else act.text() for act in a.menu("view").actions()]
    assert view_entries.index("Theme") == view_entries.index("Panels") - 1
    assert {"Token colours", "Palette", "Dark theme", "Zoom in", "Reset zoom"} <= set(view_entries)
    close(qtbot, win)
