"""The corpus list of the training workspace: files and folders with their size and scripts.

Entries are added with :meth:`CorpusList.add_paths` (the buttons, or dropping files on the
list); each is summarized (files, bytes, scripts, the first non-UTF-8 file) in a worker.

>>> corpus = CorpusList(); corpus.add_paths(["data/"])   # doctest: +SKIP
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import human_size
from bpeinspect.core.train import BINARY, FILTERED, IGNORED, CorpusEntry, FileFilter, summarize_path
from bpeinspect.gui.concurrency import Jobs
from bpeinspect.gui.overlay.palette import app_colors

COLUMNS = ("File or folder", "Files", "Size", "Scripts")
# a folder's files left out, as the list counts them
SHORT_REASONS = {BINARY: "binary", IGNORED: "ignored", FILTERED: "filtered out"}


def skipped_text(counts: dict[str, int]) -> str:
    """``{"binary": 2, "ignored by .gitignore": 5}`` -> ``"2 binary, 5 ignored"``."""
    return ", ".join(f"{n:,} {SHORT_REASONS.get(kind, kind)}" for kind, n in counts.items() if n)


class _Tree(QTreeWidget):
    """A tree that takes dropped files and folders."""

    dropped = Signal(list)

    placeholder = "Drop text files or folders here, or use the buttons below."

    def __init__(self) -> None:
        super().__init__()
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)

    def paintEvent(self, e) -> None:
        super().paintEvent(e)
        if self.topLevelItemCount() == 0:
            p = QPainter(self.viewport())
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            p.drawText(
                self.viewport().rect().adjusted(8, 8, -8, -8),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                self.placeholder,
            )
            p.end()

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dragMoveEvent(self, e) -> None:
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in e.mimeData().urls() if u.toLocalFile()]
        if paths:
            self.dropped.emit(paths)
        e.acceptProposedAction()


class CorpusList(QWidget):
    """The corpus files and folders, summarized."""

    changed = Signal()
    problem = Signal(str)  # a path that cannot be added

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries: dict[Path, CorpusEntry | None] = {}  # None while being summarized
        self.file_filter = FileFilter()  # which files of a folder count
        self.jobs = Jobs(self, QThreadPool(self))
        self.tree = _Tree()
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.dropped.connect(self.add_paths)
        self.add_files_button = QPushButton("Add files…")
        self.add_files_button.clicked.connect(self._ask_files)
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.clicked.connect(self._ask_folder)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(self.remove_selected)
        self.total = QLabel()
        self.total.setWordWrap(True)  # the skipped counts make a long line: it wraps below the buttons
        self.total.setMinimumWidth(1)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for b in (self.add_files_button, self.add_folder_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.tree, 1)
        lay.addLayout(buttons)
        lay.addWidget(self.total)
        self.tree.setMinimumHeight(90)
        self._refresh_total()

    # -- public -----------------------------------------------------------------------------------

    def paths(self) -> list[Path]:
        return list(self.entries)

    def is_summarizing(self) -> bool:
        return self.jobs.is_busy()

    def total_size(self) -> int:
        return sum(e.size for e in self.entries.values() if e is not None)

    def problems(self) -> list[str]:
        return [e.problem for e in self.entries.values() if e is not None and e.problem]

    def add_paths(self, paths: list[str] | list[Path]) -> None:
        """Add files or folders; each is summarized in a worker."""
        for raw in paths:
            path = Path(raw).resolve()
            if path in self.entries:
                continue
            if not path.exists():
                self.problem.emit(f"{path}: no such file or folder")
                continue
            item = QTreeWidgetItem([str(path), "…", "…", "reading…"])
            item.setToolTip(0, str(path))
            item.setData(0, 256, str(path))
            self.tree.addTopLevelItem(item)
            self._summarize(path)
        self._refresh_total()
        self.changed.emit()

    def set_file_filter(self, wanted: FileFilter) -> None:
        """Count the folders' files with ``wanted`` from now on (they are summarized again)."""
        if wanted == self.file_filter:
            return
        self.file_filter = wanted
        folders = [path for path, entry in self.entries.items() if entry is None or entry.is_dir]
        for path in folders:
            item = self._item(path)
            if item is not None:
                item.setText(1, "…")
            self._summarize(path)
        if folders:
            self._refresh_total()
            self.changed.emit()

    def _summarize(self, path: Path) -> None:
        self.entries[path] = None
        wanted = self.file_filter
        self.jobs.submit(
            ("summary", path),
            partial(summarize_path, path, file_filter=wanted),
            on_returned=partial(self._on_summary, path, wanted),
            on_errored=partial(self._on_failed, path),
        )

    def remove_selected(self) -> None:
        for item in self.tree.selectedItems():
            self.remove_path(Path(item.data(0, 256)))

    def remove_path(self, path: Path) -> None:
        self.jobs.cancel(("summary", path))
        self.entries.pop(path, None)
        item = self._item(path)
        if item is not None:
            self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(item))
        self._refresh_total()
        self.changed.emit()

    def set_editable(self, on: bool) -> None:
        for w in (self.add_files_button, self.add_folder_button, self.remove_button):
            w.setEnabled(on)
        self.tree.setAcceptDrops(on)

    # -- internals --------------------------------------------------------------------------------

    def _item(self, path: Path) -> QTreeWidgetItem | None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None and item.data(0, 256) == str(path):
                return item
        return None

    def _on_summary(self, path: Path, wanted: FileFilter, entry: CorpusEntry) -> None:
        if path not in self.entries or wanted != self.file_filter:
            return  # removed, or counted with a filter since changed
        self.entries[path] = entry
        item = self._item(path)
        if item is None:
            return
        name = path.name + ("/" if path.is_dir() else "")
        item.setText(0, name)
        item.setText(1, f"{entry.files:,}")
        item.setText(2, human_size(entry.size))
        item.setText(3, entry.scripts_text())
        tip = [str(path), f"{entry.files:,} file(s), {entry.size:,} bytes", f"scripts: {entry.scripts_text()}"]
        if entry.skipped:
            tip.append(
                f"skipped: {skipped_text(entry.skipped_by)} (a folder left out counts once);"
                " hidden folders and __pycache__ are not searched"
            )
            item.setText(1, f"{entry.files:,} (+{entry.skipped:,} skipped)")
        tip.extend(f"⚠ {note}" for note in entry.notes)
        if entry.problem:
            tip.append(f"⚠ {entry.problem}")
            item.setText(3, f"⚠ {entry.problem}")
            for col in range(len(COLUMNS)):
                item.setForeground(col, QColor(app_colors().error_text))
        for col in range(len(COLUMNS)):
            item.setToolTip(col, "\n".join(tip))
        self._refresh_total()
        self.changed.emit()

    def _on_failed(self, path: Path, exc: BaseException) -> None:
        self.remove_path(path)
        self.problem.emit(str(exc))

    def _refresh_total(self) -> None:
        n = sum(e.files for e in self.entries.values() if e is not None)
        if not self.entries:
            self.total.setText("no corpus yet")
        else:
            pending = " (reading…)" if any(e is None for e in self.entries.values()) else ""
            counts: dict[str, int] = {}
            for e in self.entries.values():
                for kind, k in (e.skipped_by if e is not None else {}).items():
                    counts[kind] = counts.get(kind, 0) + k
            left_out = f" · skipped {skipped_text(counts)}" if counts else ""
            self.total.setText(
                f"{n:,} file{'' if n == 1 else 's'} · {human_size(self.total_size())}{left_out}{pending}"
            )

    def _ask_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Add corpus files", "", "Text files (*.txt *.md *.jsonl *.csv);;All files (*)"
        )
        if paths:
            self.add_paths(paths)

    def _ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add a corpus folder")
        if path:
            self.add_paths([path])
