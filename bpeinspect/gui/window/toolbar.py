"""The tokenizer bar: the picker (a combo box on the registry model), "Add ▾" and the layer toggles.

>>> bar = TokenizerBar(registry, prefs, open_tokenizer, ask_open_tokenizer)   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QMenu, QSizePolicy, QToolBar, QToolButton, QWidget

from bpeinspect.core import BUILTINS
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.settings import Preferences

# the layer toggles: a frame when off, the selection's colours when on (light and dark alike)
TOGGLE_STYLE = """
QToolButton#layerToggle { border: 1px solid palette(mid); border-radius: 3px; padding: 1px 3px; }
QToolButton#layerToggle:hover { border-color: palette(highlight); }
QToolButton#layerToggle:checked {
    background: palette(highlight); color: palette(highlighted-text); border-color: palette(highlight);
}
"""


PICKER_MAX = 280  # px


class TokenizerBar(QToolBar):
    """Which tokenizer is current (its ids are listed below and the panels follow it), and more to open."""

    def __init__(
        self,
        registry: TokenizerRegistry,
        prefs: Preferences,
        open_tokenizer: Callable[[str], None],
        ask_open_tokenizer: Callable[[], None],
        ask_hub: Callable[[], object] | None = None,
    ) -> None:
        super().__init__("Tokenizers")
        self.setObjectName("tokenizerBar")
        self.setMovable(False)
        self.registry, self.prefs = registry, prefs
        self._open, self._ask, self._ask_hub = open_tokenizer, ask_open_tokenizer, ask_hub
        self.addWidget(QLabel(" Tokenizer: "))
        self.picker = QComboBox()
        self.picker.setModel(registry)
        self.picker.setMinimumContentsLength(14)
        # as wide as the longest name ("json and 2 more · 300"), up to a bound that keeps the
        # bar within a 1024 px window
        self.picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.picker.setMaximumWidth(PICKER_MAX)
        self.picker.setToolTip("The current tokenizer: its ids are listed below and other panels follow it")
        self.picker.activated.connect(self._on_picked)
        self.addWidget(self.picker)
        add = QToolButton()
        add.setText("+ Add tokenizer")
        add.setObjectName("addTokenizer")
        add.setToolTip(
            "Open another tokenizer to compare: built-ins, recent files, a vocabulary file, or a model on Hugging Face"
        )
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(add)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        add.setMenu(self.add_menu)
        self.addWidget(add)
        self.addSeparator()
        # the combo box moves its own index when rows come and go: keep it on the current one
        for signal in (registry.currentChanged, registry.rowsInserted, registry.rowsRemoved):
            signal.connect(self._sync)

    def add_toggle(self, action: QAction) -> QToolButton:
        """A checkable ``action`` as a button that looks like one when off too (a flat tool
        button reads as a label), in the selection's colours when on."""
        self.addAction(action)
        button = cast(QToolButton, self.widgetForAction(action))
        button.setObjectName("layerToggle")
        button.setStyleSheet(TOGGLE_STYLE)
        return button

    def add_right(self, widget: QWidget) -> None:
        """Put ``widget`` at the bar's right end."""
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.addWidget(spacer)
        self.addWidget(widget)

    def _on_picked(self, row: int) -> None:
        toks = self.registry.tokenizers()
        if 0 <= row < len(toks):
            self.registry.set_current(toks[row])

    def _sync(self, *_args: object) -> None:
        row = self.registry.current_row()
        if self.picker.currentIndex() != row:
            blocked = self.picker.blockSignals(True)
            self.picker.setCurrentIndex(row)
            self.picker.blockSignals(blocked)

    def _fill_add_menu(self) -> None:
        m = self.add_menu
        m.clear()
        for name, spec in BUILTINS.items():
            act = m.addAction(f"{name} — {spec.description}")
            act.setEnabled(not self.registry.is_open(name))
            act.triggered.connect(lambda _=False, n=name: self._open(n))
        recent = self.prefs.recent_tokenizer_entries()
        if recent:
            m.addSeparator()
            for entry in recent:
                label = entry.name if entry.name == Path(entry.spec).name else f"{entry.name} — {Path(entry.spec).name}"
                act = m.addAction(label)
                act.setToolTip(entry.spec)
                act.setEnabled(not self.registry.is_open(entry.spec))
                act.triggered.connect(lambda _=False, p=entry.spec: self._open(p))
        m.addSeparator()
        m.addAction("Open tokenizer file…").triggered.connect(self._ask)
        if self._ask_hub is not None:
            m.addAction("Open from Hugging Face…").triggered.connect(self._ask_hub)
