"""A dismissable message strip at the top of a window or panel (errors never open a modal box).

>>> bar = MessageBar(); bar.show_message("Could not open x.tiktoken", error=True)  # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from bpeinspect.gui.overlay.palette import app_colors

MAX_LINES = 5


class MessageBar(QFrame):
    """Messages pile up (the last :data:`MAX_LINES`) until the bar is closed; it stays red
    while it holds an error, and follows the theme."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.clear)
        self._lines: list[str] = []
        self._has_error = False
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 4, 4)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.hide()

    def show_message(self, text: str, *, error: bool = True) -> None:
        """Show ``text`` below the messages already shown."""
        self._has_error = self._has_error or error
        self._lines = [*self._lines, text][-MAX_LINES:]
        self.label.setText("\n".join(self._lines))
        self._style()
        self.show()

    def clear(self) -> None:
        self._lines = []
        self._has_error = False
        self.hide()

    def text(self) -> str:
        return self.label.text() if self.isVisible() else ""

    def _style(self) -> None:
        c = app_colors()
        bg, fg = (c.error_bg, c.error_text) if self._has_error else (c.info_bg, c.info_text)
        self.setStyleSheet(
            f"#messageBar {{ background:{bg}; border:1px solid {fg}; border-radius:4px }} QLabel {{ color:{fg} }}"
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.ApplicationPaletteChange and self._lines:
            self._style()
        super().changeEvent(event)
