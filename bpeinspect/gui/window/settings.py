"""What bpeinspect remembers between runs (QSettings), plus the Help menu and the About box.

:func:`attach` ties a :class:`Preferences` to a main window: it restores the window's size,
docks and splitter, the theme (follow the system, or a light/dark override), the text size,
the overlay layers and palette, and adds File ▸ Recent texts, View ▸ Theme and Help ▸ About.
Everything is written back when the window closes.

>>> prefs = attach(MainWindow(settings=QSettings("/tmp/s.ini", QSettings.Format.IniFormat)))  # doctest: +SKIP
>>> prefs.set_theme("dark"); prefs.theme                                                        # doctest: +SKIP
'dark'
"""

from __future__ import annotations

import platform
import sys
from typing import TYPE_CHECKING

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, qVersion
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMenu, QVBoxLayout, QWidget

from bpeinspect import __version__

if TYPE_CHECKING:
    from bpeinspect.gui.window.main_window import MainWindow

THEMES = ("system", "light", "dark")
RECENT_TEXTS_LIMIT = 10
FONT_RANGE = (6.0, 48.0)  # the main window's zoom limits
SCHEMA = 1  # bumped if a stored value changes meaning; older values are then ignored


def _as_bool(value: object, default: bool) -> bool:
    # INI files hand booleans back as the strings "true"/"false"
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return default


def _as_list(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    try:
        return [str(v) for v in value]  # type: ignore[union-attr]
    except TypeError:
        return []


class Preferences(QObject):
    """Typed access to the stored settings; :meth:`save_window`/:meth:`restore_window` do the window."""

    def __init__(self, settings: QSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings

    # -- plain values -----------------------------------------------------------------------------

    @property
    def theme(self) -> str:
        """``"system"`` (follow the desktop's colour scheme), ``"light"`` or ``"dark"``."""
        value = str(self.settings.value("appearance/theme", "system"))
        return value if value in THEMES else "system"

    @theme.setter
    def theme(self, value: str) -> None:
        if value not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)}, not {value!r}")
        self.settings.setValue("appearance/theme", value)

    @property
    def font_size(self) -> float | None:
        """The text's point size, or ``None`` for the default."""
        value = self.settings.value("appearance/font_size")
        try:
            size = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        return size if FONT_RANGE[0] <= size <= FONT_RANGE[1] else None

    @font_size.setter
    def font_size(self, value: float | None) -> None:
        if value is None:
            self.settings.remove("appearance/font_size")
        else:
            self.settings.setValue("appearance/font_size", float(min(max(value, FONT_RANGE[0]), FONT_RANGE[1])))

    def recent_texts(self) -> list[str]:
        """Text files opened lately, newest first."""
        return _as_list(self.settings.value("recent_texts"))[:RECENT_TEXTS_LIMIT]

    def remember_text(self, path: str) -> None:
        items = [p for p in self.recent_texts() if p != path]
        self.settings.setValue("recent_texts", [path, *items][:RECENT_TEXTS_LIMIT])

    def recent_tokenizers(self) -> list[str]:
        """Vocabulary files opened lately (the main window records them), newest first."""
        from bpeinspect.gui.registry import recent_tokenizers

        return recent_tokenizers(self.settings)

    def clear_recent(self) -> None:
        self.settings.remove("recent_texts")
        self.settings.remove("recent_tokenizers")

    # -- the window -------------------------------------------------------------------------------

    def save_window(self, win: MainWindow) -> None:
        """Store the window's geometry, toolbars/docks, splitter, text size, layers and palette."""
        s = self.settings
        s.setValue("window/schema", SCHEMA)
        s.setValue("window/geometry", win.saveGeometry())
        s.setValue("window/state", win.saveState(SCHEMA))
        s.setValue("window/main_split", win.main_split.saveState())
        s.setValue("view/palette", win.palette_name)
        for name, act in win.layer_actions.items():
            s.setValue(f"view/layers/{name}", act.isChecked())
        self.font_size = win.document.defaultFont().pointSizeF()
        s.sync()

    def restore_window(self, win: MainWindow) -> bool:
        """Put back what :meth:`save_window` stored; False if nothing (usable) was stored."""
        s = self.settings
        try:
            schema = int(s.value("window/schema", 0))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            schema = 0
        if schema != SCHEMA:
            return False
        for key, restore in (
            ("window/geometry", win.restoreGeometry),
            ("window/state", lambda v: win.restoreState(v, SCHEMA)),
            ("window/main_split", win.main_split.restoreState),
        ):
            value = s.value(key)
            if isinstance(value, QByteArray) and not value.isEmpty():
                restore(value)
        palette = s.value("view/palette")
        if isinstance(palette, str) and palette != win.palette_name:
            from bpeinspect.gui.overlay.palette import PALETTES

            if palette in PALETTES:
                win.set_palette(palette)
        for name, act in win.layer_actions.items():
            stored = s.value(f"view/layers/{name}")
            if stored is not None:
                act.setChecked(_as_bool(stored, act.isChecked()))  # toggled -> the window's own slot
        return True


def system_is_dark() -> bool:
    """True if the desktop asks for a dark colour scheme (Qt 6.5+ knows; otherwise light)."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return scheme is not None and scheme() == Qt.ColorScheme.Dark


def versions() -> dict[str, str]:
    """The versions an About box and a bug report need.

    >>> sorted(versions())
    ['Platform', 'PySide6', 'Python', 'Qt', 'bpeinspect']
    """
    frozen = " (frozen app)" if getattr(sys, "frozen", False) else ""
    return {
        "bpeinspect": __version__ + frozen,
        "Qt": qVersion(),
        "PySide6": PYSIDE_VERSION,
        "Python": f"{platform.python_version()} ({platform.python_implementation()})",
        "Platform": platform.platform(terse=True),
    }


class AboutDialog(QDialog):
    """bpeinspect's About box: what it is and the versions of bpeinspect, Qt, PySide6 and Python."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About bpeinspect")
        rows = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;{v}</td></tr>" for k, v in versions().items())
        self.label = QLabel(
            "<h3>bpeinspect</h3><p>A desktop inspector for byte-level BPE tokenizers:<br>"
            "token overlays, merge trees, training and comparisons.</p>"
            f"<table>{rows}</table>"
        )
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)

    def text(self) -> str:
        """The plain text shown (for tests and "copy to clipboard")."""
        return "\n".join(f"{k}: {v}" for k, v in versions().items())


class WindowSettings(QObject):
    """The glue between one :class:`MainWindow` and its :class:`Preferences` (see :func:`attach`)."""

    def __init__(self, win: MainWindow, prefs: Preferences) -> None:
        super().__init__(win)
        self.win = win
        self.prefs = prefs
        self._applying_theme = False
        self._font_size = prefs.font_size
        self.about: AboutDialog | None = None
        self._build_menus()
        prefs.restore_window(win)
        self.apply_theme()
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_scheme)
        win.registry.added.connect(self._on_tokenizer_added)  # after the window's own slot
        win.registry.removed.connect(self._on_tokenizer_removed)
        if hasattr(win, "textFileOpened"):
            win.textFileOpened.connect(self._on_text_opened)
        win.installEventFilter(self)

    # -- menus ------------------------------------------------------------------------------------

    def _build_menus(self) -> None:
        win = self.win
        file_menu = win.recent_menu.parentWidget()
        self.recent_texts_menu = QMenu("Recent texts", win)
        self.recent_texts_menu.aboutToShow.connect(self._fill_recent_texts)
        if isinstance(file_menu, QMenu):
            file_menu.insertMenu(win.recent_menu.menuAction(), self.recent_texts_menu)
        view_menu = win.panels_menu.parentWidget()
        self.theme_menu = QMenu("Theme", win)
        self.theme_group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for name, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            act = QAction(label, self.theme_menu, checkable=True)
            act.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            self.theme_group.addAction(act)
            self.theme_menu.addAction(act)
            self.theme_actions[name] = act
        if isinstance(view_menu, QMenu):
            view_menu.insertMenu(win.panels_menu.menuAction(), self.theme_menu)
        dark_action = getattr(win, "dark_action", None)
        if dark_action is not None:  # the window's own "Dark theme" toggle is an override too
            dark_action.toggled.connect(self._on_dark_toggled)
        help_menu = win.menuBar().addMenu("&Help")
        self.about_action = QAction("About bpeinspect", win)
        self.about_action.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.about_action.triggered.connect(self.show_about)
        help_menu.addAction(self.about_action)
        self.clear_recent_action = QAction("Clear recent files", win)
        self.clear_recent_action.triggered.connect(self.prefs.clear_recent)
        help_menu.addAction(self.clear_recent_action)

    def _fill_recent_texts(self) -> None:
        menu = self.recent_texts_menu
        menu.clear()
        paths = self.prefs.recent_texts()
        if not paths:
            menu.addAction("(none yet)").setEnabled(False)
        for p in paths:
            menu.addAction(p).triggered.connect(lambda _=False, p=p: self.win.open_text_file(p))

    def show_about(self) -> AboutDialog:
        """Show the About box (not modal: the window stays usable)."""
        if self.about is None:
            self.about = AboutDialog(self.win)
        self.about.show()
        self.about.raise_()
        return self.about

    # -- theme ------------------------------------------------------------------------------------

    def set_theme(self, theme: str) -> None:
        """``"system"``, ``"light"`` or ``"dark"``; stored at once."""
        self.prefs.theme = theme
        self.apply_theme()

    def apply_theme(self) -> None:
        theme = self.prefs.theme
        dark = system_is_dark() if theme == "system" else theme == "dark"
        self.theme_actions[theme].setChecked(True)
        self._applying_theme = True
        try:
            dark_action = getattr(self.win, "dark_action", None)
            if dark_action is not None and dark_action.isChecked() != dark:
                dark_action.setChecked(dark)  # its slot calls win.set_dark
            if self.win.dark != dark:
                self.win.set_dark(dark)
        finally:
            self._applying_theme = False

    def _on_dark_toggled(self, on: bool) -> None:
        if not self._applying_theme:
            self.set_theme("dark" if on else "light")

    def _on_system_scheme(self, *_args: object) -> None:
        if self.prefs.theme == "system":
            self.apply_theme()

    # -- text size --------------------------------------------------------------------------------

    def set_font_size(self, size: float) -> None:
        """The text's point size in every pane (what View ▸ Zoom changes step by step)."""
        size = min(max(size, FONT_RANGE[0]), FONT_RANGE[1])
        font = self.win.document.defaultFont()
        font.setPointSizeF(size)
        for pane in self.win.panes.values():
            pane.view.setFont(font)
        self.win.document.setDefaultFont(font)
        self._font_size = size

    def _on_tokenizer_added(self, _tok: object) -> None:
        # The window sets its default size when the first pane opens; put the user's back.
        if len(self.win.panes) == 1 and self._font_size is not None:
            self.set_font_size(self._font_size)

    def _on_tokenizer_removed(self, _tok: object) -> None:
        if not self.win.panes:
            self._font_size = self.win.document.defaultFont().pointSizeF()

    # -- files and docks --------------------------------------------------------------------------

    def _on_text_opened(self, path: str) -> None:
        self.prefs.remember_text(path)

    def save(self) -> None:
        self.prefs.save_window(self.win)
        if not self.win.panes and self._font_size is not None:
            self.prefs.font_size = self._font_size  # no pane open: the document's size is not the user's
            self.prefs.settings.sync()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.win and event.type() == QEvent.Type.Close:
            self.save()
        return False


def attach(win: MainWindow, settings: QSettings | None = None) -> WindowSettings:
    """Restore ``win`` from ``settings`` (default: the window's own) and save it when it closes."""
    return WindowSettings(win, Preferences(settings or win.settings, win))
