"""The set-up form of the training workspace: corpus, sizes, split pattern (with a live
preview), special tokens and tie-break. :meth:`TrainingForm.plan` turns it into a
:class:`TrainingPlan` or raises ``ValueError`` with a message for the user.

>>> form = TrainingForm(); form.corpus.add_paths(["corpus.txt"]); plan = form.plan()  # doctest: +SKIP
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import PRESETS, PatternError
from bpeinspect.core.text import display_text
from bpeinspect.core.train.setup import parse_sizes, parse_special_tokens, preview_split
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.glyphs import shown
from bpeinspect.gui.overlay.palette import app_colors
from bpeinspect.gui.training.corpus import CorpusList
from bpeinspect.gui.training.worker import TrainingPlan

SAMPLE_TEXT = "Hello world! It's 2026: naïve café, 12345 — Привет, 日本語 😀\n    indented  code()"
CUSTOM = "custom"
NO_SPLIT = "none"
TIE_BREAKS = {"first-seen": "first seen (minbpe)", "hf": "smaller ids (Hugging Face)"}
PREVIEW_TIMEOUT = 0.05  # seconds: the preview runs on the GUI thread
MAX_PREVIEW_PIECES = 200


def _visible(piece: str) -> str:
    return html.escape(shown(display_text(piece)))  # characters no font draws as code points


class TrainingForm(QWidget):
    """Everything a training needs before it starts."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.corpus = CorpusList()
        corpus_box = QGroupBox("Corpus")
        QVBoxLayout(corpus_box).addWidget(self.corpus)

        self.sizes_edit = QLineEdit("1k, 4k")
        self.sizes_edit.setPlaceholderText("e.g. 1k, 4k, 16k")
        self.sizes_edit.setToolTip(
            "One or more vocabulary sizes (special tokens included), e.g. 1000 or 1k, 4k, 16k.\n"
            "Training runs once to the largest; the smaller ones are its first merges."
        )
        self.pattern_combo = QComboBox()
        for name in PRESETS:
            self.pattern_combo.addItem(name, name)
        self.pattern_combo.addItem("no splitting", NO_SPLIT)
        self.pattern_combo.addItem("custom regex…", CUSTOM)
        self.pattern_combo.setCurrentIndex(self.pattern_combo.findData("gpt4"))
        self.pattern_edit = QLineEdit()
        self.pattern_edit.setFont(mono)
        self.pattern_edit.setPlaceholderText("a regex: each match and each gap is a pre-token")
        self.sample_edit = QLineEdit(SAMPLE_TEXT.replace("\n", "\\n"))
        self.sample_edit.setToolTip("Sample text for the preview (\\n is a newline)")
        self.sample_edit.setCursorPosition(0)
        self.preview = QLabel()
        self.preview.setWordWrap(True)
        self.preview.setTextFormat(Qt.TextFormat.RichText)
        self.preview.setFont(mono)
        # room for four lines: a word-wrapped label in a form does not always grow to fit
        self.preview.setMinimumHeight(4 * self.preview.fontMetrics().lineSpacing() + 4)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.pattern_message = ToneLabel()
        self.pattern_message.setWordWrap(True)
        self.specials_edit = QLineEdit()
        self.specials_edit.setPlaceholderText("e.g. <|endoftext|>, <|pad|>")
        self.specials_edit.setToolTip(
            "Special tokens, separated by spaces or commas: they take the last ids and count\n"
            "towards the vocabulary size (the corpus is trained as plain text, as minbpe does)."
        )
        self.tie_combo = QComboBox()
        for key, label in TIE_BREAKS.items():
            self.tie_combo.addItem(label, key)
        self.tie_combo.setToolTip("How pairs with equal counts are ordered: minbpe's or Hugging Face's rule")
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("named after the corpus")

        settings_box = QGroupBox("Settings")
        form = QFormLayout(settings_box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Vocabulary size(s)", self.sizes_edit)
        form.addRow("Split pattern", self.pattern_combo)
        form.addRow("", self.pattern_edit)
        form.addRow("Sample text", self.sample_edit)
        form.addRow("Pre-tokens", self.preview)
        form.addRow("", self.pattern_message)
        form.addRow("Special tokens", self.specials_edit)
        form.addRow("Tie-break", self.tie_combo)
        form.addRow("Name", self.name_edit)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(corpus_box, 1)
        lay.addWidget(settings_box)

        self.pattern_combo.currentIndexChanged.connect(self._on_preset)
        self.pattern_edit.textChanged.connect(self.update_preview)
        self.sample_edit.textChanged.connect(self.update_preview)
        for w in (self.sizes_edit, self.specials_edit, self.name_edit):
            w.textChanged.connect(self.changed)
        self.corpus.changed.connect(self.changed)
        self._on_preset()

    # -- the split pattern ------------------------------------------------------------------------

    def pattern(self) -> str | None:
        """The pattern to train with: a preset name, a custom regex, or ``None``."""
        key = self.pattern_combo.currentData()
        if key == NO_SPLIT:
            return None
        if key == CUSTOM:
            return self.pattern_edit.text()
        return key

    def set_custom_pattern(self, pattern: str) -> None:
        self.pattern_combo.setCurrentIndex(self.pattern_combo.findData(CUSTOM))
        self.pattern_edit.setText(pattern)

    def sample_text(self) -> str:
        return self.sample_edit.text().replace("\\n", "\n").replace("\\t", "\t")

    def _on_preset(self) -> None:
        key = self.pattern_combo.currentData()
        custom = key == CUSTOM
        self.pattern_edit.setReadOnly(not custom)
        if not custom:
            self.pattern_edit.blockSignals(True)
            self.pattern_edit.setText("" if key == NO_SPLIT else PRESETS[key].pattern or "")
            self.pattern_edit.blockSignals(False)
            self.pattern_edit.setCursorPosition(0)
        self.pattern_edit.setStyleSheet("" if custom else "QLineEdit { color: palette(mid) }")
        self.update_preview()
        self.changed.emit()

    def update_preview(self) -> bool:
        """Show how the pattern splits the sample; false (with the reason shown) if it cannot."""
        try:
            pieces = preview_split(self.pattern(), self.sample_text(), timeout=PREVIEW_TIMEOUT)
        except PatternError as exc:
            self.preview.setText("")
            self.pattern_message.set_tone("error")
            self.pattern_message.setText(f"⚠ {str(exc)[:1].upper()}{str(exc)[1:]}")
            self.changed.emit()
            return False
        preview = app_colors().preview
        spans = [
            f'<span style="background:{preview[i % 2]}">{_visible(p)}</span>'
            for i, p in enumerate(pieces[:MAX_PREVIEW_PIECES])
        ]
        more = f" … (+{len(pieces) - MAX_PREVIEW_PIECES})" if len(pieces) > MAX_PREVIEW_PIECES else ""
        self.preview.setText("".join(spans) + more)
        self.pattern_message.set_tone("muted")
        self.pattern_message.setText(f"{len(pieces)} pre-tokens; merges never cross their edges")
        self.changed.emit()
        return True

    # -- the plan ---------------------------------------------------------------------------------

    def set_editable(self, on: bool) -> None:
        self.corpus.set_editable(on)
        for w in (self.sizes_edit, self.pattern_combo, self.pattern_edit, self.specials_edit, self.tie_combo, self.name_edit):
            w.setEnabled(on)

    def default_name(self) -> str:
        paths = self.corpus.paths()
        if not paths:
            return "trained"
        first = paths[0].name if paths[0].is_dir() else paths[0].stem
        return first + (f"+{len(paths) - 1}" if len(paths) > 1 else "")

    def plan(self) -> TrainingPlan:
        """The plan the form describes; ``ValueError`` with a message for the user if it is
        incomplete or wrong."""
        paths = self.corpus.paths()
        if not paths:
            raise ValueError("Add a corpus first: text files or folders (the buttons, or drop them on the list).")
        problems = self.corpus.problems()
        if problems:
            raise ValueError(f"Cannot train on this corpus: {problems[0]}. Remove the file or fix its encoding.")
        try:
            sizes = parse_sizes(self.sizes_edit.text())
        except ValueError as exc:
            raise ValueError(f"Vocabulary size: {exc}") from None
        specials = parse_special_tokens(self.specials_edit.text())
        need = 256 + len(specials) + 1
        small = [s for s in sizes if s < need]
        if small:
            what = f"256 bytes and {len(specials)} special tokens" if specials else "256 bytes"
            raise ValueError(f"Vocabulary size {small[0]:,} is too small: {what} leave no room for a merge (need at least {need}).")
        pattern = self.pattern()
        if not self.update_preview():
            raise ValueError(f"Split pattern: {self.pattern_message.text().lstrip('⚠ ')}")
        return TrainingPlan(
            paths=paths, sizes=sizes, pattern=pattern, special_tokens=specials,
            tie_break=self.tie_combo.currentData(), name=self.name_edit.text().strip() or self.default_name(),
        )  # fmt: skip
