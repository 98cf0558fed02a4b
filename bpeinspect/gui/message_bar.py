"""Messages in the window's own colours (errors never open a modal box), and a label whose
text takes a tone of the theme.

A :class:`MessageBar` keeps errors apart from notices: errors pile up in a red strip that
stays until it is closed; a notice ("Exported the overlay to …") shows in a quiet strip of
its own and goes away by itself a few seconds later.

>>> bar = MessageBar(); bar.show_message("Could not open x.tiktoken", error=True); bar.text()
'Could not open x.tiktoken'
>>> bar.clear(); bar.text()
''
>>> label = ToneLabel("Part of: not computed", tone="error"); "color" in label.styleSheet()
True
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from bpeinspect.gui.overlay.palette import app_colors

MAX_LINES = 5
NOTICE_MS = 6000  # a notice goes away this long after it came (longer ones get more time)
NOTICE_MS_PER_CHAR = 40
THEME_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
TONES = {"error": "error_text", "note": "note_text", "muted": ""}  # tone -> field of UiColors ("": the palette's mid)


class MessageStrip(QFrame):
    """One strip of messages (the last :data:`MAX_LINES`) with a close button."""

    def __init__(self, kind: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind  # "error" or "notice"
        self.setObjectName(f"{kind}Strip")
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.clear)
        self.lines: list[str] = []
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 3, 4, 3)
        lay.addWidget(self.label, 1)
        lay.addWidget(close)
        self.hide()

    def add(self, text: str) -> None:
        self.lines = [*self.lines, text][-MAX_LINES:]
        self.label.setText("\n".join(self.lines))
        self.restyle()
        self.show()

    def clear(self) -> None:
        self.lines = []
        self.label.clear()
        self.hide()

    def restyle(self) -> None:
        c = app_colors()
        bg, fg = (c.error_bg, c.error_text) if self.kind == "error" else (c.info_bg, c.info_text)
        name = self.objectName()
        sheet = f"#{name} {{ background:{bg}; border:1px solid {fg}; border-radius:4px }} QLabel {{ color:{fg} }}"
        if sheet != self.styleSheet():  # a new style sheet sends another palette change
            self.setStyleSheet(sheet)

    def changeEvent(self, event: QEvent) -> None:
        # a change of theme reaches every widget as a palette change
        if event.type() in THEME_EVENTS and self.lines:
            self.restyle()
        super().changeEvent(event)


class MessageBar(QWidget):
    """Errors (red, until closed) above notices (quiet, gone after a few seconds); follows the theme."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.errors = MessageStrip("error")
        self.notices = MessageStrip("notice")
        self.notice_timer = QTimer(self, singleShot=True)
        self.notice_timer.timeout.connect(self.notices.clear)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.errors)
        lay.addWidget(self.notices)
        self.hide()
        for strip in (self.errors, self.notices):
            strip.installEventFilter(self)

    def show_message(self, text: str, *, error: bool = True) -> None:
        """An error joins the error strip; a notice shows for a few seconds."""
        if error:
            self.errors.add(text)
        else:
            self.notices.add(text)
            self.notice_timer.start(NOTICE_MS + NOTICE_MS_PER_CHAR * len(text))
        self.show()

    def clear(self) -> None:
        self.errors.clear()
        self.notices.clear()
        self.notice_timer.stop()

    def text(self) -> str:
        """What is shown: the errors, then the notices, one per line."""
        return "\n".join(line for s in (self.errors, self.notices) if s.isVisibleTo(self) for line in s.lines)

    def error_text(self) -> str:
        return "\n".join(self.errors.lines)

    def notice_text(self) -> str:
        return "\n".join(self.notices.lines)

    def changeEvent(self, event: QEvent) -> None:
        # a strip with a style sheet of its own hears no palette change: the bar tells it
        if event.type() in THEME_EVENTS:
            for strip in (self.errors, self.notices):
                if strip.lines:
                    strip.restyle()
        super().changeEvent(event)

    def eventFilter(self, obj: object, event: QEvent) -> bool:
        # the bar takes no room when both strips are closed
        if event.type() == QEvent.Type.Hide and obj in (self.errors, self.notices):
            if not self.errors.lines and not self.notices.lines:
                self.hide()
        return False


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
