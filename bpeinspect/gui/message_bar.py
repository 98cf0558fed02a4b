"""Messages in the window's own colours: a dismissable strip (errors never open a modal box)
and a label whose text takes a tone of the theme.

>>> bar = MessageBar(); bar.show_message("Could not open x.tiktoken", error=True); bar.text()
'Could not open x.tiktoken'
>>> bar.clear(); bar.text()
''
>>> label = ToneLabel("Part of: not computed", tone="error"); "color" in label.styleSheet()
True
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from bpeinspect.gui.overlay.palette import app_colors

MAX_LINES = 5
TONES = {"error": "error_text", "note": "note_text", "muted": ""}  # tone -> field of UiColors ("": the palette's mid)


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
        sheet = f"#messageBar {{ background:{bg}; border:1px solid {fg}; border-radius:4px }} QLabel {{ color:{fg} }}"
        if sheet != self.styleSheet():  # a new style sheet sends another palette change
            self.setStyleSheet(sheet)

    def changeEvent(self, event: QEvent) -> None:
        # a change of theme reaches every widget as a palette change
        if event.type() == QEvent.Type.PaletteChange and self._lines:
            self._style()
        super().changeEvent(event)


class ToneLabel(QLabel):
    """A label in a tone of the theme (``"error"``, ``"note"``, ``"muted"``, or ``None`` for the usual text)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *, tone: str | None = None) -> None:
        super().__init__(text, parent)
        self.tone: str | None = None
        self.set_tone(tone)

    def set_tone(self, tone: str | None) -> None:
        if tone is not None and tone not in TONES:
            raise ValueError(f"tone must be one of {', '.join(TONES)} or None, not {tone!r}")
        self.tone = tone
        field = TONES.get(tone or "")
        color = "palette(mid)" if field == "" else getattr(app_colors(), field) if field else None
        sheet = "" if color is None else f"color: {color}"
        if sheet != self.styleSheet():  # a new style sheet sends another palette change
            self.setStyleSheet(sheet)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.tone is not None:
            self.set_tone(self.tone)
        super().changeEvent(event)
