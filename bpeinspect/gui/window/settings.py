"""What bpeinspect remembers between runs, in QSettings: persistence and nothing else.

:class:`Preferences` gives typed access to each stored value; :class:`WindowState` is what a
window hands in when it closes and gets back when it opens (it builds and applies it itself).

>>> from PySide6.QtCore import QSettings
>>> import tempfile, os
>>> prefs = Preferences(QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.Format.IniFormat))
>>> prefs.theme = "dark"; prefs.theme
'dark'
>>> prefs.save_window(WindowState(palette="colour-blind safe", layers={"ids": True}, font_size=15.0))
>>> state = prefs.load_window(); state.palette, state.layers, state.font_size
('colour-blind safe', {'ids': True}, 15.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from PySide6.QtCore import QByteArray, QSettings

from bpeinspect.core.io import CatalogEntry, add_recent, clear_recent, recent_files
from bpeinspect.gui.window.theme import FONT_RANGE, LAYERS, THEMES

RECENT_LIMIT = 10
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
    if not isinstance(value, Iterable):
        return []
    return [str(v) for v in value]


def _as_bytes(value: object) -> QByteArray | None:
    return value if isinstance(value, QByteArray) and not value.isEmpty() else None


@dataclass
class WindowState:
    """A window's size and layout, and the look of its text."""

    geometry: QByteArray | None = None
    docks: QByteArray | None = None  # QMainWindow.saveState: toolbars and docks
    split: QByteArray | None = None  # the text/ids splitter
    palette: str | None = None
    layers: dict[str, bool] = field(default_factory=dict)
    font_size: float | None = None


class Preferences:
    """Typed access to the stored settings."""

    def __init__(self, settings: QSettings | None = None) -> None:
        self.settings = settings or QSettings("bpeinspect", "bpeinspect")

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
        try:
            size = float(self.settings.value("appearance/font_size"))
        except (TypeError, ValueError):
            return None
        return size if FONT_RANGE[0] <= size <= FONT_RANGE[1] else None

    @font_size.setter
    def font_size(self, value: float | None) -> None:
        if value is None:
            self.settings.remove("appearance/font_size")
        else:
            self.settings.setValue("appearance/font_size", float(min(max(value, FONT_RANGE[0]), FONT_RANGE[1])))

    # -- recent files -------------------------------------------------------------------------------

    def recent_texts(self) -> list[str]:
        """Text files opened lately, newest first."""
        return _as_list(self.settings.value("recent_texts"))[:RECENT_LIMIT]

    def remember_text(self, path: str) -> None:
        self._remember("recent_texts", path)

    def recent_tokenizers(self) -> list[str]:
        """Vocabulary files opened lately, by the app or the CLI, newest first: the one list the
        core keeps (``bpeinspect-cli list`` shows it too)."""
        return [e.spec for e in self.recent_tokenizer_entries()]

    def recent_tokenizer_entries(self) -> list[CatalogEntry]:
        self._move_old_recent()
        return recent_files()[:RECENT_LIMIT]

    def remember_tokenizer(self, path: str, name: str = "", vocab_size: int | None = None) -> None:
        self._move_old_recent()
        add_recent(path, name, vocab_size)

    def clear_recent(self) -> None:
        self.settings.remove("recent_texts")
        self.settings.remove("recent_tokenizers")
        clear_recent()

    def _move_old_recent(self) -> None:
        # the app once kept its own list of vocabulary files here: join it to the core's, once
        old = _as_list(self.settings.value("recent_tokenizers"))
        if old:
            self.settings.remove("recent_tokenizers")
            known = {e.spec for e in recent_files()}
            for path in reversed(old):
                if path not in known:
                    add_recent(path)

    def _remember(self, key: str, path: str) -> None:
        items = [p for p in _as_list(self.settings.value(key)) if p != path]
        self.settings.setValue(key, [path, *items][:RECENT_LIMIT])

    # -- the window ---------------------------------------------------------------------------------

    def save_window(self, state: WindowState) -> None:
        s = self.settings
        s.setValue("window/schema", SCHEMA)
        for key, value in (
            ("window/geometry", state.geometry),
            ("window/state", state.docks),
            ("window/main_split", state.split),
        ):
            if value is not None:
                s.setValue(key, value)
        if state.palette is not None:
            s.setValue("view/palette", state.palette)
        for name, on in state.layers.items():
            s.setValue(f"view/layers/{name}", on)
        self.font_size = state.font_size
        s.sync()

    def load_window(self) -> WindowState | None:
        """What :meth:`save_window` stored; None if nothing (usable) was stored."""
        s = self.settings
        stored = s.value("window/schema", 0)
        try:
            schema = int(stored) if isinstance(stored, (int, float, str)) else 0
        except ValueError:
            schema = 0
        if schema != SCHEMA:
            return None
        palette = s.value("view/palette")
        layers = {}
        for name in LAYERS:
            stored = s.value(f"view/layers/{name}")
            if stored is not None:
                layers[name] = _as_bool(stored, False)
        return WindowState(
            geometry=_as_bytes(s.value("window/geometry")),
            docks=_as_bytes(s.value("window/state")),
            split=_as_bytes(s.value("window/main_split")),
            palette=palette if isinstance(palette, str) else None,
            layers=layers,
            font_size=self.font_size,
        )
