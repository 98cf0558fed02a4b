"""What the window does with files: the open, save and export dialogs, and dropped files.

>>> files = FileCommands(window); files.export_html("overlay.html")   # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from bpeinspect.core.dataset import is_dataset_name
from bpeinspect.core.io.atomic import atomic_path, atomic_write
from bpeinspect.core.io.formats import is_vocabulary_name, open_patterns
from bpeinspect.gui.overlay.export import overlay_html

VOCAB_FILTER = f"Vocabularies ({' '.join(open_patterns())});;All files (*)"


class FileCommands(QObject):
    """File ▸ Open/Save/Export and drag and drop, through the public API of one main window."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window

    # -- dialogs ------------------------------------------------------------------------------------

    def ask_open_text(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open text")
        if path:
            self.window.open_text_file(path)

    def ask_open_tokenizer(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open tokenizer", "", VOCAB_FILTER)
        if path:
            self.window.open_tokenizer(path)

    def ask_save_text(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save text as", "", "Text (*.txt)")
        if path:
            try:
                atomic_write(path, self.window.text())
            except (OSError, ValueError) as exc:
                self.window.show_error(f"Could not save {path}: {exc}")

    def ask_export_html(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export overlay as HTML", "overlay.html", "HTML (*.html)")
        if path:
            self.export_html(path)

    def ask_export_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Export overlay as PNG", "overlay.png", "PNG (*.png)")
        if path:
            self.export_png(path)

    # -- exports ------------------------------------------------------------------------------------

    def export_html(self, path: str) -> None:
        """Write the overlay of every open tokenizer as one HTML page (built in a worker)."""
        win = self.window
        pairs = [(e.tok, e.result.enc) for e in win.registry.entries() if e.result is not None]
        palette = win.appearance.token_palette
        win.jobs.submit(
            "export-html",
            lambda: atomic_write(path, overlay_html(pairs, palette)),
            on_returned=lambda _: win.show_message(f"Exported the overlay to {path}"),
            on_errored=lambda exc: win.show_error(f"Could not export {path}: {exc}"),
        )

    def export_png(self, path: str) -> bool:
        """Save a picture of the tokenizer panes (atomically, as every file is written)."""
        try:
            save_png(self.window.panes.grab(), path)
        except OSError as exc:
            self.window.show_error(f"Could not write {path}: {exc}")
            return False
        return True

    # -- drops --------------------------------------------------------------------------------------

    def open_dropped(self, paths: list[str]) -> None:
        """Vocabulary files and folders open as tokenizers, datasets (``.jsonl``, ``.json``) in the
        dataset panel, anything else as the text."""
        for path in paths:
            if Path(path).is_dir() or is_vocabulary_name(Path(path).name):
                self.window.open_tokenizer(path)
            elif is_dataset_name(Path(path).name) and "dataset" in self.window.panels.specs:
                self.window.panels.show("dataset").open_file(path)
            else:
                self.window.open_text_file(path)


def save_png(picture: Any, path: str | os.PathLike[str]) -> None:
    """Write ``picture`` (a ``QPixmap`` or ``QImage``) to ``path`` as PNG, atomically."""
    with atomic_path(path, suffix=".png") as tmp:
        if not picture.save(str(tmp), "PNG"):
            raise OSError("the PNG could not be written")
