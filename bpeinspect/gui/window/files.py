"""What the window does with files: the open, save and export dialogs, and dropped files.

>>> files = FileCommands(window); files.export_html("overlay.html")   # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPoint
from PySide6.QtWidgets import QFileDialog, QMessageBox

from bpeinspect.core.dataset import is_dataset_name
from bpeinspect.core.io.atomic import atomic_path, atomic_write
from bpeinspect.core.io.formats import is_vocabulary_name, open_patterns
from bpeinspect.gui.overlay.export import HTML_LIMIT, OverlaySection, estimate_html_size, write_overlay_html
from bpeinspect.gui.overlay.paste_guard import describe_size

VOCAB_FILTER = f"Vocabularies ({' '.join(open_patterns())});;All files (*)"


class FileCommands(QObject):
    """File ▸ Open/Save/Export and drag and drop, through the public API of one main window."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        # (estimated size, a selection exists) -> "all", "visible", "selection" or "" (cancel);
        # asked when an HTML export would be bigger than HTML_LIMIT (replaceable, for tests)
        self.ask_html_scope: Callable[[int, bool], str] = self._ask_html_scope

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

    def html_ranges(self) -> dict[str, tuple[int, int | None]]:
        """The stretches of text an HTML export can take, as UTF-16 ranges: ``all``, ``visible``
        (the lines the current pane shows) and ``selection`` (if text is selected)."""
        ranges: dict[str, tuple[int, int | None]] = {"all": (0, None)}
        pane = self.window.panes.pane_of(self.window.registry.current()) if self.window.registry.current() else None
        panes = self.window.panes.panes()
        view = pane.view if pane is not None else (panes[0].view if panes else None)
        if view is None:
            return ranges
        rect = view.viewport().rect()
        first = view.cursorForPosition(QPoint(0, 0)).block().position()
        last = view.cursorForPosition(rect.bottomRight()).block()
        ranges["visible"] = (first, last.position() + last.length())
        cur = view.textCursor()
        if cur.hasSelection():
            ranges["selection"] = (cur.selectionStart(), cur.selectionEnd())
        return ranges

    def export_html(self, path: str, scope: str | None = None) -> bool:
        """Write the overlay of every open tokenizer as one HTML page, in a worker. ``scope``:
        ``all``, ``visible`` or ``selection``; None: all of it, unless the page would be bigger
        than :data:`HTML_LIMIT`, when the user is asked. False if nothing is exported."""
        win = self.window
        pairs = [(e.tok, e.result.enc) for e in win.registry.entries() if e.result is not None]
        if not pairs:
            win.show_error("Nothing to export: open a tokenizer first.")
            return False
        ranges = self.html_ranges()
        if scope is None:
            size = estimate_html_size([OverlaySection.of(tok, enc) for tok, enc in pairs])
            scope = "all" if size <= HTML_LIMIT else self.ask_html_scope(size, "selection" in ranges)
        if scope not in ranges:
            return False
        lo, hi = ranges[scope]
        sections = [OverlaySection.of(tok, enc, lo, hi) for tok, enc in pairs]
        what = {
            "all": "the overlay",
            "visible": "the visible part of the overlay",
            "selection": "the selection's overlay",
        }
        win.jobs.submit(
            "export-html",
            write_overlay_html,
            path,
            sections,
            win.appearance.token_palette,
            on_returned=lambda _: win.show_message(f"Exported {what[scope]} to {path}"),
            on_errored=lambda exc: win.show_error(f"Could not export {path}: {exc}"),
        )
        return True

    def _ask_html_scope(self, size: int, has_selection: bool) -> str:
        box = QMessageBox(self.window)
        box.setWindowTitle("Export overlay as HTML")
        box.setIcon(QMessageBox.Icon.Question)
        box.setText(
            f"The whole overlay would make a page of about {describe_size(size)}, more than a browser opens "
            "comfortably. Export a part of it?"
        )
        choices = {}
        if has_selection:
            choices[box.addButton("The selection", QMessageBox.ButtonRole.AcceptRole)] = "selection"
        choices[box.addButton("The visible part", QMessageBox.ButtonRole.AcceptRole)] = "visible"
        choices[box.addButton(f"All ({describe_size(size)})", QMessageBox.ButtonRole.DestructiveRole)] = "all"
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return choices.get(box.clickedButton(), "")

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
