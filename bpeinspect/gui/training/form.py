"""The set-up form of the training workspace: corpus, sizes, split pattern (with a live
preview), special tokens and tie-break. :meth:`TrainingForm.plan` turns it into a
:class:`TrainingPlan` or raises ``ValueError`` with a message for the user.

>>> form = TrainingForm(); form.corpus.add_paths(["corpus.txt"]); plan = form.plan()  # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core.train import (
    DEFAULT_INCLUDE,
    FileFilter,
    TrainingPlan,
    check_sizes,
    parse_patterns,
    parse_sizes,
    parse_special_tokens,
)
from bpeinspect.gui.training.corpus import CorpusList
from bpeinspect.gui.training.pattern import PatternChooser

TIE_BREAKS = {"first-seen": "first seen (minbpe)", "hf": "smaller ids (Hugging Face)"}
FILTER_DELAY_MS = 400  # a pattern being typed counts the folders again once typing pauses


class FolderFilter(QWidget):
    """Which files of the corpus folders are trained on: include and exclude patterns and the
    ``.gitignore`` switch, remembered in ``settings`` (when given) from one run to the next."""

    changed = Signal(object)  # FileFilter, once an edit has settled

    KEYS = ("training/include", "training/exclude", "training/gitignore")

    def __init__(self, settings: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.include_edit = QLineEdit()
        self.include_edit.setPlaceholderText("every text file")
        self.include_edit.setToolTip(
            "In folders, train on the files matching one of these patterns (any case), separated by commas:\n"
            "*.txt matches a name at any depth, docs/*.md one folder's files, ** any number of folders.\n"
            "Empty: every file that is text. Binary files are always skipped; files added one by one always count."
        )
        self.default_button = QPushButton("Default")
        self.default_button.setToolTip("Text files by name: " + ", ".join(DEFAULT_INCLUDE))
        self.default_button.clicked.connect(lambda: self.include_edit.setText(", ".join(DEFAULT_INCLUDE)))
        self.exclude_edit = QLineEdit()
        self.exclude_edit.setPlaceholderText("e.g. tests/, *.min.js")
        self.exclude_edit.setToolTip(
            "In folders, leave out the files and folders matching these patterns, as a .gitignore would\n"
            "(a trailing / matches folders only; ! takes a pattern back)."
        )
        self.gitignore_check = QCheckBox("Skip what .gitignore files ignore")
        self.gitignore_check.setToolTip(
            "Leave out what git would ignore in a folder: its .gitignore files (at its top and in its\n"
            "subfolders) and, in a git repository, those above it and the repository's .git/info/exclude."
        )
        include_row = QHBoxLayout()
        include_row.setContentsMargins(0, 0, 0, 0)
        include_row.addWidget(self.include_edit, 1)
        include_row.addWidget(self.default_button)
        lay = QFormLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        lay.addRow("Folder files", include_row)
        lay.addRow("Leave out", self.exclude_edit)
        lay.addRow("", self.gitignore_check)
        self._load()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FILTER_DELAY_MS)
        self._timer.timeout.connect(self._settled)
        self.include_edit.textChanged.connect(self._timer.start)
        self.exclude_edit.textChanged.connect(self._timer.start)
        self.gitignore_check.toggled.connect(self._settled)

    def file_filter(self) -> FileFilter:
        return FileFilter(
            parse_patterns(self.include_edit.text()),
            parse_patterns(self.exclude_edit.text()),
            self.gitignore_check.isChecked(),
        )

    def set_enabled(self, on: bool) -> None:
        for w in (self.include_edit, self.default_button, self.exclude_edit, self.gitignore_check):
            w.setEnabled(on)

    def _load(self) -> None:
        default = FileFilter()
        include, exclude, gitignore = ", ".join(default.include), "", default.gitignore
        s = self.settings
        if s is not None:
            include = str(s.value(self.KEYS[0], include))
            exclude = str(s.value(self.KEYS[1], exclude))
            stored = s.value(self.KEYS[2], gitignore)
            gitignore = stored.lower() == "true" if isinstance(stored, str) else bool(stored)
        self.include_edit.setText(include)
        self.exclude_edit.setText(exclude)
        self.gitignore_check.setChecked(gitignore)

    def _settled(self) -> None:
        self._timer.stop()
        s = self.settings
        if s is not None:
            s.setValue(self.KEYS[0], self.include_edit.text())
            s.setValue(self.KEYS[1], self.exclude_edit.text())
            s.setValue(self.KEYS[2], self.gitignore_check.isChecked())
        self.changed.emit(self.file_filter())


class TrainingForm(QWidget):
    """Everything a training needs before it starts."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None, *, settings: QSettings | None = None) -> None:
        super().__init__(parent)
        self.corpus = CorpusList()
        self.folder_filter = FolderFilter(settings)
        self.corpus.set_file_filter(self.folder_filter.file_filter())
        self.folder_filter.changed.connect(self.corpus.set_file_filter)
        corpus_box = QGroupBox("Corpus")
        corpus_lay = QVBoxLayout(corpus_box)
        corpus_lay.addWidget(self.corpus, 1)
        corpus_lay.addWidget(self.folder_filter)

        self.sizes_edit = QLineEdit("1k, 4k")
        self.sizes_edit.setPlaceholderText("e.g. 1k, 4k, 16k")
        self.sizes_edit.setToolTip(
            "One or more vocabulary sizes (special tokens included), e.g. 1000 or 1k, 4k, 16k (k is 1,000).\n"
            "Separate sizes with spaces or a comma and a space: a comma between digits groups thousands\n"
            "(100,000 is one size, and so is 256,512).\n"
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
        self.folder_filter.set_enabled(on)
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
        """The corpus' name as a person would say it: ``taylorswift``, ``taylorswift and docs``,
        ``taylorswift and 2 more`` (the Name field replaces it)."""
        paths = self.corpus.paths()
        if not paths:
            return "trained"
        names = [p.name if p.is_dir() else p.stem for p in paths]
        if len(names) == 1:
            return names[0]
        return f"{names[0]} and {names[1]}" if len(names) == 2 else f"{names[0]} and {len(names) - 1} more"

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
            file_filter=self.corpus.file_filter,
        )
