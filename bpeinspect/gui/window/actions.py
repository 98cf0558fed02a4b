"""The main window's menus, toolbar (the tokenizer picker), file dialogs, export and drops.

A mixin of :class:`~bpeinspect.gui.window.main_window.MainWindow`, kept apart so the window's own
module holds the panes, the encoding and the selection.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QMenu, QToolButton

from bpeinspect.core import BUILTINS
from bpeinspect.core.io.atomic import atomic_write
from bpeinspect.core.io.formats import is_vocabulary_name, open_patterns
from bpeinspect.gui.overlay.export import overlay_html
from bpeinspect.gui.overlay.palette import PALETTES
from bpeinspect.gui.registry import recent_tokenizers


class WindowActions:
    """Menus, shortcuts, the toolbar, dialogs, export and drag and drop (mixed into MainWindow)."""

    def _action(self, menu: QMenu, text: str, slot, shortcut=None, checkable: bool = False, checked: bool = False):  # noqa: PLR0917
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if checkable:
            act.setCheckable(True)
            act.setChecked(checked)
            act.toggled.connect(slot)
        else:
            act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        mb = self.menuBar()
        f = mb.addMenu("&File")
        self._action(f, "Open text…", self._ask_open_text, QKeySequence.StandardKey.Open)
        self._action(f, "Open tokenizer…", self._ask_open_tokenizer, "Ctrl+Shift+O")
        self.recent_menu = f.addMenu("Recent tokenizers")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        f.addSeparator()
        self._action(f, "Save text as…", self._ask_save_text, QKeySequence.StandardKey.SaveAs)
        self._action(f, "Export overlay as HTML…", self._ask_export_html, "Ctrl+E")
        self._action(f, "Export overlay as PNG…", self._ask_export_png, "Ctrl+Shift+E")
        f.addSeparator()
        self._action(f, "Quit", self.close, QKeySequence.StandardKey.Quit)
        e = mb.addMenu("&Edit")
        self._action(e, "Copy token ids as list", self.copy_ids_list, "Ctrl+Shift+C")
        self._action(e, "Copy token ids as JSON", self.copy_ids_json, "Ctrl+Alt+C")
        t = mb.addMenu("&Tokenizers")
        for i, name in enumerate(BUILTINS):
            self._action(
                t,
                f"Add {name} ({BUILTINS[name].description})",
                lambda _=False, n=name: self.open_tokenizer(n),
                f"Alt+{i + 1}",
            )
        t.addSeparator()
        self._action(t, "Open tokenizer file…", self._ask_open_tokenizer)
        self._action(t, "Close current tokenizer", self._close_current, "Ctrl+W")
        v = mb.addMenu("&View")
        self.layer_actions = {
            "colors": self._action(v, "Token colours", lambda on: self._set_layer("colors", on), "Ctrl+1", True, True),
            "whitespace": self._action(
                v, "Visible whitespace", lambda on: self._set_layer("whitespace", on), "Ctrl+2", True, True
            ),
            "boundaries": self._action(
                v, "Pre-token boundaries", lambda on: self._set_layer("boundaries", on), "Ctrl+3", True, False
            ),
            "ids": self._action(v, "Token ids inline", lambda on: self._set_layer("ids", on), "Ctrl+4", True, False),
            "specials": self._action(
                v, "Mark special tokens", lambda on: self._set_layer("specials", on), "Ctrl+5", True, True
            ),
        }
        v.addSeparator()
        pal_menu = v.addMenu("Palette")
        for name in PALETTES:
            self._action(pal_menu, name, lambda _=False, n=name: self.set_palette(n))
        self.dark_action = self._action(v, "Dark theme", self.set_dark, "Ctrl+Shift+D", True, False)
        v.addSeparator()
        self._action(v, "Zoom in", lambda: self.zoom(1), QKeySequence.StandardKey.ZoomIn)
        self._action(v, "Zoom out", lambda: self.zoom(-1), QKeySequence.StandardKey.ZoomOut)
        self._action(v, "Reset zoom", lambda: self.zoom(0), "Ctrl+0")
        self.panels_menu = v.addMenu("Panels")
        self._build_toolbar()

    def _build_toolbar(self) -> None:
        """The tokenizer picker (current one, add built-in/recent/file) and the layer toggles."""
        bar = self.addToolBar("Tokenizers")
        bar.setObjectName("tokenizerBar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Tokenizer: "))
        self.picker = QComboBox()
        self.picker.setMinimumContentsLength(14)
        self.picker.setToolTip("The current tokenizer: its ids are listed below and other panels follow it")
        self.picker.activated.connect(self._on_picker)
        bar.addWidget(self.picker)
        add = QToolButton(text="Add ▾")
        add.setToolTip("Open another tokenizer: built-ins, recent files, or a vocabulary file")
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_menu = QMenu(add)
        self.add_menu.aboutToShow.connect(self._fill_add_menu)
        add.setMenu(self.add_menu)
        bar.addWidget(add)
        bar.addSeparator()
        for name in ("whitespace", "boundaries", "ids", "specials"):
            bar.addAction(self.layer_actions[name])
        self.registry.added.connect(self._refresh_picker)
        self.registry.removed.connect(self._refresh_picker)
        self.registry.currentChanged.connect(self._refresh_picker)

    def _refresh_picker(self, *_args) -> None:
        self.picker.blockSignals(True)
        self.picker.clear()
        for tok in self.registry.tokenizers():
            self.picker.addItem(tok.name or "tokenizer")
        cur = self.registry.current()
        toks = self.registry.tokenizers()
        index = next((i for i, t in enumerate(toks) if t is cur), -1)
        if index >= 0:
            self.picker.setCurrentIndex(index)
        self.picker.blockSignals(False)

    def _on_picker(self, index: int) -> None:
        toks = self.registry.tokenizers()
        if 0 <= index < len(toks):
            self.registry.set_current(toks[index])

    def _fill_add_menu(self) -> None:
        m = self.add_menu
        m.clear()
        for name, spec in BUILTINS.items():
            act = m.addAction(f"{name} — {spec.description}")
            act.setEnabled(self.registry.find(name) is None)
            act.triggered.connect(lambda _=False, n=name: self.open_tokenizer(n))
        recent = recent_tokenizers(self.settings)
        if recent:
            m.addSeparator()
            for path in recent:
                m.addAction(Path(path).name).triggered.connect(lambda _=False, p=path: self.open_tokenizer(p))
        m.addSeparator()
        m.addAction("Open tokenizer file…").triggered.connect(self._ask_open_tokenizer)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        paths = recent_tokenizers(self.settings)
        if not paths:
            self.recent_menu.addAction("(none yet)").setEnabled(False)
        for p in paths:
            self.recent_menu.addAction(p).triggered.connect(lambda _=False, p=p: self.open_tokenizer(p))

    def _ask_open_text(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open text")
        if path:
            self.open_text_file(path)

    def _ask_open_tokenizer(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open tokenizer", "", f"Vocabularies ({' '.join(open_patterns())});;All files (*)"
        )
        if path:
            self.open_tokenizer(path)

    def _ask_save_text(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save text as", "", "Text (*.txt)")
        if path:
            self._guard(lambda: atomic_write(path, self.text()), f"Could not save {path}")

    def _ask_export_html(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export overlay as HTML", "overlay.html", "HTML (*.html)")
        if path:
            self.export_html(path)

    def _ask_export_png(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export overlay as PNG", "overlay.png", "PNG (*.png)")
        if path:
            self.export_png(path)

    def export_html(self, path: str) -> None:
        """Write the overlay of every open tokenizer as one HTML page (built in a worker)."""
        pairs = [(r.tok, r.enc) for r in self.results.values()]
        palette = self.token_palette
        self.jobs.submit(
            "export-html",
            lambda: atomic_write(path, overlay_html(pairs, palette)),
            on_returned=lambda _: self.show_message(f"Exported the overlay to {path}"),
            on_errored=lambda exc: self.show_error(f"Could not export {path}: {exc}"),
        )

    def export_png(self, path: str) -> bool:
        """Save a picture of the tokenizer panes."""
        ok = self.stack.grab().save(path, "PNG")
        if not ok:
            self.show_error(f"Could not write {path}")
        return ok

    def _guard(self, fn, what: str) -> None:
        try:
            fn()
        except (OSError, ValueError) as exc:
            self.show_error(f"{what}: {exc}")

    def dragEnterEvent(self, e) -> None:
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:
        for url in e.mimeData().urls():
            path = url.toLocalFile()
            if not path:
                continue
            if Path(path).is_dir() or is_vocabulary_name(Path(path).name):
                self.open_tokenizer(path)
            else:
                self.open_text_file(path)
        e.acceptProposedAction()
