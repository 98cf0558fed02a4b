"""The languages view's first row: which corpus is counted, which of its texts are shown, and the baseline.

Choosing another corpus (``sourceChosen``) means counting; a filter or the baseline
(``changed``) only re-derives the figures. Only Qt here: the bar is made before the rest of
the view is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QWidget

from bpeinspect.gui.panels.languages.flow import FlowLayout

if TYPE_CHECKING:
    from bpeinspect.core.analysis import Corpus, Language

# the corpus box: source -> text ("folder:PATH" is the user's own folder)
SOURCES = {
    "udhr": "UDHR (Human Rights)",
    "fable": "Fable (27 languages)",
    "code": "Code & data samples",
}
FOLDER_PREFIX = "folder:"
SOURCE_CHARS = 22  # the corpus box shows this many characters of its name
COMPLETE_STAGE = 4  # the UDHR's complete translations (core.analysis.corpus.COMPLETE_STAGE)


def source_title(source: str) -> str:
    return SOURCES.get(source, source.removeprefix(FOLDER_PREFIX))


class FilterBar(QWidget):
    """Corpus, stage, script and region filters, and the baseline language."""

    sourceChosen = Signal(str)
    changed = Signal()

    def __init__(self, source: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source_box = QComboBox()
        for key, text in SOURCES.items():
            self.source_box.addItem(text, key)
        self.source_box.setItemData(0, "The Universal Declaration of Human Rights", Qt.ItemDataRole.ToolTipRole)
        self.source_box.addItem("Folder…", FOLDER_PREFIX)
        # as wide as the filters' row leaves it in a small window (its list shows whole names)
        self.source_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.source_box.setMinimumContentsLength(SOURCE_CHARS)
        self.source_box.activated.connect(self._on_source)
        self.stage_box = QComboBox()
        self.stage_box.addItem("Complete texts", COMPLETE_STAGE)
        self.stage_box.addItem("All texts, fragments too", None)
        self.stage_box.setToolTip("The UDHR's encoding stage: 4 is a complete translation, 1 and 3 are fragments")
        self.script_box, self.region_box, self.baseline_box = QComboBox(), QComboBox(), QComboBox()
        self.baseline_box.setToolTip(
            "premium = a language's tokens ÷ this language's tokens, for the same text under the same tokenizer"
        )
        for box, chars in ((self.script_box, 16), (self.region_box, 10), (self.baseline_box, 18)):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(chars)
        for box in (self.stage_box, self.script_box, self.region_box, self.baseline_box):
            box.currentIndexChanged.connect(self.changed)
        lay = FlowLayout(self)  # wraps onto a second row in a small window
        lay.setContentsMargins(0, 0, 0, 0)
        groups = (
            (QLabel("Corpus"), self.source_box, self.stage_box),
            (self.script_box, self.region_box),
            (QLabel("premium vs"), self.baseline_box),
        )
        for widgets in groups:  # a label stays beside its box
            lay.add_group(*widgets)
        self.show_source(source)

    def show_source(self, source: str) -> None:
        """Select ``source`` in the corpus box (a folder gets an entry of its own)."""
        self.current_source = source
        index = self.source_box.findData(source)
        if index < 0 and source.startswith(FOLDER_PREFIX):
            self.source_box.insertItem(self.source_box.count() - 1, source.removeprefix(FOLDER_PREFIX), source)
            index = self.source_box.findData(source)
        self.source_box.setCurrentIndex(max(0, index))

    def _on_source(self, index: int) -> None:
        data = self.source_box.itemData(index)
        if data != FOLDER_PREFIX:
            self.sourceChosen.emit(data)
            return
        folder = QFileDialog.getExistingDirectory(self, "Folder of texts (one file per language, named by its code)")
        if folder:
            self.sourceChosen.emit(FOLDER_PREFIX + os.fspath(folder))
        else:  # back to what was chosen before
            self.show_source(self.current_source)

    def fill(self, corpus: Corpus, name: Callable[[Language], str]) -> None:
        """The filters and baselines a new corpus offers (what was chosen stays where it still can)."""
        counts: dict[str, int] = {}
        for t in corpus:
            counts[t.language.script] = counts.get(t.language.script, 0) + 1
        langs = sorted((t.language for t in corpus), key=lambda g: g.name.lower())
        base = corpus.baseline.language if corpus.baseline is not None else None
        baselines = [("no baseline", None)] + ([(name(base), base.code)] if base is not None else [])
        baselines += [(name(g), g.code) for g in langs if base is None or g.code != base.code]
        fills = (
            (
                self.script_box,
                [("All scripts", None)] + [(f"{s or 'unknown'} ({counts[s]})", s) for s in corpus.scripts],
            ),
            (self.region_box, [("All regions", None)] + [(r, r) for r in corpus.regions]),
            (self.baseline_box, baselines),
        )
        for box, items in fills:
            keep = box.currentData()
            box.blockSignals(True)
            box.clear()
            for text, data in items:
                box.addItem(text, data)
            default = base.code if box is self.baseline_box and base is not None else None
            box.setCurrentIndex(max(0, box.findData(keep if box.findData(keep) > 0 else default)))
            box.blockSignals(False)
        self.stage_box.setEnabled(any(t.language.stage is not None for t in corpus))
        self.region_box.setEnabled(bool(corpus.regions))

    def set_filters(self, *, stage: int | None, script: str | None, region: str | None) -> None:
        for box, value in ((self.stage_box, stage), (self.script_box, script), (self.region_box, region)):
            box.blockSignals(True)
            box.setCurrentIndex(max(0, box.findData(value)))
            box.blockSignals(False)
        self.changed.emit()

    def set_baseline(self, code: str | None) -> None:
        self.baseline_box.setCurrentIndex(max(0, self.baseline_box.findData(code)))

    def baseline(self) -> str | None:
        return self.baseline_box.currentData()

    def apply(self, corpus: Corpus) -> Corpus:
        """The texts of ``corpus`` that pass the filters."""
        stage = self.stage_box.currentData() if self.stage_box.isEnabled() else None
        script, region = self.script_box.currentData(), self.region_box.currentData()
        return corpus.filter(
            stages=None if stage is None else {stage},
            scripts=None if script is None else {script},
            regions=None if region is None else {region},
        )


__all__ = ["COMPLETE_STAGE", "FOLDER_PREFIX", "SOURCES", "FilterBar", "source_title"]
