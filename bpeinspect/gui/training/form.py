"""The set-up form of the training workspace: corpus, sizes, split pattern (with a live
preview), special tokens and tie-break. :meth:`TrainingForm.plan` turns it into a
:class:`TrainingPlan` or raises ``ValueError`` with a message for the user.

>>> form = TrainingForm(); form.corpus.add_paths(["corpus.txt"]); plan = form.plan()  # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core.train import TrainingPlan, check_sizes, parse_sizes, parse_special_tokens
from bpeinspect.gui.training.corpus import CorpusList
from bpeinspect.gui.training.pattern import PatternChooser

TIE_BREAKS = {"first-seen": "first seen (minbpe)", "hf": "smaller ids (Hugging Face)"}


class TrainingForm(QWidget):
    """Everything a training needs before it starts."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.corpus = CorpusList()
        corpus_box = QGroupBox("Corpus")
        QVBoxLayout(corpus_box).addWidget(self.corpus)

        self.sizes_edit = QLineEdit("1k, 4k")
        self.sizes_edit.setPlaceholderText("e.g. 1k, 4k, 16k")
        self.sizes_edit.setToolTip(
            "One or more vocabulary sizes (special tokens included), e.g. 1000 or 1k, 4k, 16k (k is 1,000).\n"
            "Training runs once to the largest; the smaller ones are its first merges."
        )
        self.chooser = PatternChooser(self, default="gpt4")
        # the chooser's widgets, under the names the form has always had
        self.pattern_combo, self.pattern_edit = self.chooser.combo, self.chooser.edit
        self.sample_edit, self.preview, self.pattern_message = (
            self.chooser.sample_edit,
            self.chooser.preview,
            self.chooser.message,
        )
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
        for label, widget in self.chooser.rows():
            form.addRow(label, widget)
        form.addRow("Special tokens", self.specials_edit)
        form.addRow("Tie-break", self.tie_combo)
        form.addRow("Name", self.name_edit)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(corpus_box, 1)
        lay.addWidget(settings_box)

        self.chooser.changed.connect(self.changed)
        for w in (self.sizes_edit, self.specials_edit, self.name_edit):
            w.textChanged.connect(self.changed)
        self.corpus.changed.connect(self.changed)

    # -- the split pattern ------------------------------------------------------------------------

    def pattern(self) -> str | None:
        """The pattern to train with: a preset name, a custom regex, or ``None``."""
        return self.chooser.pattern()

    def set_custom_pattern(self, pattern: str) -> None:
        self.chooser.set_custom_pattern(pattern)

    def sample_text(self) -> str:
        return self.chooser.sample_text()

    def update_preview(self) -> bool:
        """Show how the pattern splits the sample; false (with the reason shown) if it cannot."""
        return self.chooser.update_preview()

    # -- the plan ---------------------------------------------------------------------------------

    def set_editable(self, on: bool) -> None:
        self.corpus.set_editable(on)
        for w in (
            self.sizes_edit,
            self.pattern_combo,
            self.pattern_edit,
            self.specials_edit,
            self.tie_combo,
            self.name_edit,
        ):
            w.setEnabled(on)

    def default_name(self) -> str:
        """The corpus' name as a person would say it: ``taylorswift``, ``taylorswift + docs``,
        ``taylorswift + 2 more`` (the Name field replaces it)."""
        paths = self.corpus.paths()
        if not paths:
            return "trained"
        names = [p.name if p.is_dir() else p.stem for p in paths]
        if len(names) == 1:
            return names[0]
        return f"{names[0]} + {names[1]}" if len(names) == 2 else f"{names[0]} + {len(names) - 1} more"

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
        check_sizes(sizes, specials)
        pattern = self.pattern()
        if why := self.chooser.error():
            raise ValueError(f"Split pattern: {why}")
        return TrainingPlan(
            paths=paths,
            sizes=sizes,
            pattern=pattern,
            special_tokens=specials,
            tie_break=self.tie_combo.currentData(),
            name=self.name_edit.text().strip() or self.default_name(),
        )
