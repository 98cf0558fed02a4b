"""Choosing a split rule: a preset or one's own regex, with a live preview of how it splits a
sample text. The training form and the settings of an opened vocabulary file both use it.

>>> chooser = PatternChooser(default="gpt4"); chooser.pattern()   # doctest: +SKIP
'gpt4'
"""

from __future__ import annotations

import html

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QWidget

from bpeinspect.core import PRESETS, PatternError, display_text
from bpeinspect.core.train import preview_split
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.glyphs import FONTS_PER_TURN, learn_glyphs_opening, shown
from bpeinspect.gui.overlay.palette import app_colors

SAMPLE_TEXT = "Hello world! It's 2026: naïve café, 12345 — Привет, 日本語 😀\n    indented  code()"
CUSTOM = "custom"
NO_SPLIT = "none"
PREVIEW_TIMEOUT = 0.05  # seconds: the preview runs on the GUI thread
MAX_PREVIEW_PIECES = 200


def _visible(piece: str) -> str:
    return html.escape(shown(display_text(piece)))  # characters no font draws as code points


class PatternChooser(QObject):
    """The widgets of a split-rule choice; :meth:`rows` lays them out in a form."""

    changed = Signal()

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        default: str = "gpt4",
        allow_none: bool = True,
        sample: str = SAMPLE_TEXT,
    ) -> None:
        super().__init__(parent)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.combo = QComboBox()
        for name in PRESETS:
            self.combo.addItem(name, name)
        if allow_none:
            self.combo.addItem("no splitting", NO_SPLIT)
        self.combo.addItem("custom regex…", CUSTOM)
        self.edit = QLineEdit()
        self.edit.setFont(mono)
        self.edit.setPlaceholderText("a regex: each match and each gap is a pre-token")
        self.sample_edit = QLineEdit(sample.replace("\n", "\\n"))
        self.sample_edit.setToolTip("Sample text for the preview (\\n is a newline)")
        self.sample_edit.setCursorPosition(0)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        self.preview.setFont(mono)
        # room for four lines: a word-wrapped label in a form does not always grow to fit
        self.preview.setMinimumHeight(4 * self.preview.fontMetrics().lineSpacing() + 4)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message = ToneLabel()
        self.message.setWordWrap(True)
        self.combo.currentIndexChanged.connect(self._on_preset)
        self.edit.textChanged.connect(self.update_preview)
        self.sample_edit.textChanged.connect(self.update_preview)
        # the first preview is drawn in the next event-loop turn, not in the one that makes the
        # form (probing the fonts for its characters is most of a panel's first-show cost)
        self._first = True
        self.set_pattern(default)
        self._first = False
        QTimer.singleShot(0, self, self._first_preview)

    def _first_preview(self) -> None:
        """Draw the first preview once the fonts know the sample's characters: looking a few
        fonts up per event-loop turn (a character the family lacks sent the preview through
        every font of the system in one turn)."""
        sample = self.sample_text()
        if learn_glyphs_opening(sample, opens=FONTS_PER_TURN) and learn_glyphs_opening(
            display_text(sample), opens=FONTS_PER_TURN
        ):
            self.update_preview()
        else:
            QTimer.singleShot(0, self, self._first_preview)

    def rows(self) -> list[tuple[str, QWidget]]:
        """(label, widget) rows for a ``QFormLayout``."""
        return [
            ("Split pattern", self.combo),
            ("", self.edit),
            ("Sample text", self.sample_edit),
            ("Pre-tokens", self.preview),
            ("", self.message),
        ]

    def pattern(self) -> str | None:
        """A preset name, a custom regex, or ``None`` (no splitting)."""
        key = self.combo.currentData()
        if key == NO_SPLIT:
            return None
        if key == CUSTOM:
            return self.edit.text()
        return key

    def set_pattern(self, pattern: str | None) -> None:
        """A preset name or a regex (a preset's own regex selects the preset)."""
        key = next((name for name, rule in PRESETS.items() if pattern in (name, rule.pattern)), None)
        if pattern is None and self.combo.findData(NO_SPLIT) >= 0:
            key = NO_SPLIT
        if key is not None:
            index = self.combo.findData(key)
            if index != self.combo.currentIndex():
                self.combo.setCurrentIndex(index)  # its signal shows the preset
            else:
                self._on_preset()
        else:
            self.set_custom_pattern(pattern or "")

    def set_custom_pattern(self, pattern: str) -> None:
        self.combo.setCurrentIndex(self.combo.findData(CUSTOM))
        self.edit.setText(pattern)

    def sample_text(self) -> str:
        return self.sample_edit.text().replace("\\n", "\n").replace("\\t", "\t")

    def _on_preset(self) -> None:
        key = self.combo.currentData()
        custom = key == CUSTOM
        self.edit.setReadOnly(not custom)
        if not custom:
            self.edit.blockSignals(True)
            self.edit.setText("" if key == NO_SPLIT else PRESETS[key].pattern or "")
            self.edit.blockSignals(False)
            self.edit.setCursorPosition(0)
        self.edit.setStyleSheet("" if custom else "QLineEdit { color: palette(mid) }")
        if not self._first:
            self.update_preview()
        self.changed.emit()

    def update_preview(self) -> bool:
        """Show how the pattern splits the sample; false (with the reason shown) if it cannot."""
        try:
            pieces = preview_split(self.pattern(), self.sample_text(), timeout=PREVIEW_TIMEOUT)
        except PatternError as exc:
            self.preview.setText("")
            self.message.set_tone("error")
            self.message.setText(f"⚠ {str(exc)[:1].upper()}{str(exc)[1:]}")
            self.changed.emit()
            return False
        preview = app_colors().preview
        spans = [
            f'<span style="background:{preview[i % 2]}">{_visible(p)}</span>'
            for i, p in enumerate(pieces[:MAX_PREVIEW_PIECES])
        ]
        more = f" … (+{len(pieces) - MAX_PREVIEW_PIECES})" if len(pieces) > MAX_PREVIEW_PIECES else ""
        self.preview.setText("".join(spans) + more)
        self.message.set_tone("muted")
        self.message.setText(f"{len(pieces)} pre-tokens; merges never cross their edges")
        self.changed.emit()
        return True

    def error(self) -> str:
        """Why the pattern cannot be used ("" if it can)."""
        return "" if self.update_preview() else self.message.text().lstrip("⚠ ")
