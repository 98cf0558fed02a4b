"""The main window: the text with one overlay pane per open tokenizer, the ids, the status.

Other panels dock in with :meth:`MainWindow.add_panel` and follow
:attr:`MainWindow.registry` and the ``tokenActivated``/``pieceActivated`` signals.

>>> win = MainWindow(); win.open_tokenizer("o200k_base"); win.set_text("hello")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QGuiApplication,
    QIcon,
    QKeySequence,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMenu,
    QPlainTextDocumentLayout,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import BUILTINS, Tokenizer, load_tokenizer
from bpeinspect.core.catalog import resources_dir

from .export import overlay_html, write_atomic
from .ids_view import IdsView, ids_as_json, ids_as_list
from .palette import PALETTES, TokenPalette
from .panes import MessageBar, TokenizerPane
from .token_view import Layers, document_text
from .tokenizers import TokenizerRegistry, recent_tokenizers, remember_tokenizer
from .workers import EncodeResult, TaskRunner, encode_text, is_small_edit

IDS_SCALE = 1.5  # see MainWindow._apply_font
IDS_RAISE = 40.0  # percent of the font height the text is raised by when ids are shown
VOCAB_SUFFIXES = {".tiktoken", ".model", ".gguf", ".bpe", ".vocab", ".json", ".gz"}


def read_text_file(path: str) -> str:
    """A text file's content; a clear ``ValueError`` if it is not UTF-8 text."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1].hex()})"
        ) from None


def normalize_newlines(text: str) -> str:
    """The text as a QTextDocument holds it: ``\\r\\n``, ``\\r`` and U+2029 become ``\\n``.

    >>> normalize_newlines("a\\r\\nb\\rc\\u2029d")
    'a\\nb\\nc\\nd'
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\u2029", "\n") if "\u2029" in text else text


class MainWindow(QMainWindow):
    """bpeinspect's main window."""

    tokenActivated = Signal(object, int)  # (Tokenizer, token id)
    pieceActivated = Signal(object, str)  # (Tokenizer, pre-token text)
    textFileOpened = Signal(str)  # path of a text file shown (settings: recent texts)

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.setWindowTitle("bpeinspect")
        icon = resources_dir() / "icons" / "bpeinspect.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.settings = settings or QSettings("bpeinspect", "bpeinspect")
        self.registry = TokenizerRegistry(self)
        self.runner = TaskRunner(self)
        self.layers = Layers()
        self.dark = False
        self.palette_name = "default"
        self.token_palette = TokenPalette()
        self.panes: dict[int, TokenizerPane] = {}
        self.results: dict[int, EncodeResult] = {}
        self.pending_loads: set[str] = set()
        self._order: list[str] = []  # specs in the order asked for: panes stack in this order
        self.last_result: EncodeResult | None = None
        self.document = QTextDocument(self)
        self.document.setDocumentLayout(QPlainTextDocumentLayout(self.document))
        self.revision = 0  # bumped on every edit; results remember the revision they encode
        self._text_cache: tuple[int, str] | None = None
        self.text_size = QApplication.font().pointSizeF() + 2
        self._ids_font_applied = False
        self.result_revision: dict[int, int] = {}
        self.document.contentsChanged.connect(self._schedule_encode)
        self._encode_timer = QTimer(self, singleShot=True, interval=0)
        self._encode_timer.timeout.connect(self._encode_all)
        self._build_ui()
        self._build_menus()
        self._apply_font()
        self.registry.added.connect(self._on_added)
        self.registry.removed.connect(self._on_removed)
        self.registry.currentChanged.connect(self._on_current_changed)
        self.setAcceptDrops(True)
        self.resize(1100, 800)
        from .settings import attach  # persistence (issue 9): restores now, saves on close

        self.prefs = attach(self)

    # -- layout -----------------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.message = MessageBar()
        self.stack = QSplitter(Qt.Orientation.Vertical)
        self.stack.setChildrenCollapsible(False)
        self.placeholder = QLabel("Open a tokenizer: Tokenizers ▸ built-ins, or File ▸ Open tokenizer…")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.placeholder)
        self.ids_view = IdsView()
        self.ids_view.tokenClicked.connect(self._on_ids_clicked)
        self.ids_title = QLabel("Token ids")
        copy_list = QToolButton(text="Copy list")
        copy_list.clicked.connect(self.copy_ids_list)
        copy_json = QToolButton(text="Copy JSON")
        copy_json.clicked.connect(self.copy_ids_json)
        ids_box = QWidget()
        head = QHBoxLayout()
        head.setContentsMargins(6, 0, 6, 0)
        head.addWidget(self.ids_title, 1)
        head.addWidget(copy_list)
        head.addWidget(copy_json)
        lay = QVBoxLayout(ids_box)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addLayout(head)
        lay.addWidget(self.ids_view, 1)
        self.main_split = QSplitter(Qt.Orientation.Vertical)
        self.main_split.addWidget(self.stack)
        self.main_split.addWidget(ids_box)
        self.main_split.setStretchFactor(0, 4)
        self.main_split.setStretchFactor(1, 1)
        self.main_split.setSizes([640, 140])
        central = QWidget()
        clay = QVBoxLayout(central)
        clay.setContentsMargins(4, 4, 4, 0)
        clay.addWidget(self.message)
        clay.addWidget(self.main_split, 1)
        self.setCentralWidget(central)
        self.status_label = QLabel()
        self.statusBar().addWidget(self.status_label, 1)
        self.busy_label = QLabel()
        self.statusBar().addPermanentWidget(self.busy_label)
        self.runner.busyChanged.connect(lambda b: self.busy_label.setText("working…" if b else ""))

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

    # -- public API -------------------------------------------------------------------------------

    def add_panel(
        self, title: str, widget: QWidget, area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea
    ) -> QDockWidget:
        """Dock ``widget`` (a vocabulary browser, merge tree...) and list it under View ▸ Panels."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"panel:{title}")
        dock.setWidget(widget)
        if not self.restoreDockWidget(dock):  # where it was last time (settings restored the state)
            self.addDockWidget(area, dock)
        self.panels_menu.addAction(dock.toggleViewAction())
        return dock

    def text(self) -> str:
        """The document's text (cached after :meth:`set_text`: reading 5 MB back from Qt costs ~40 ms)."""
        if self._text_cache is not None and self._text_cache[0] == self.revision:
            return self._text_cache[1]
        text = document_text(self.document)
        self._text_cache = (self.revision, text)
        return text

    def set_text(self, text: str) -> None:
        """Replace the text (one undo step is lost: the document starts afresh)."""
        self.document.setPlainText(text)
        # what QTextDocument makes of it: every line break becomes a block separator
        self._text_cache = (self.revision, normalize_newlines(text))

    def open_tokenizer(self, spec: str) -> None:
        """Load a built-in name or a vocabulary path in a worker; errors go to the message bar."""
        if self.registry.find(spec) is not None or spec in self.pending_loads:
            return
        self.pending_loads.add(spec)
        self._order.append(spec)

        def done(tok: Tokenizer) -> None:
            self.pending_loads.discard(spec)
            if spec not in BUILTINS and Path(spec).exists():
                remember_tokenizer(str(Path(spec).resolve()), self.settings)
            self.registry.add(tok, spec)

        def failed(exc: BaseException) -> None:
            self.pending_loads.discard(spec)
            msg = str(exc)
            self.show_error(msg if spec in msg else f"Could not open tokenizer {spec}: {msg}")

        self.runner.submit(f"load:{spec}", lambda stop: load_tokenizer(spec), done, failed)

    def open_text_file(self, path: str) -> None:
        """Read a text file in a worker and show it; errors keep the current text."""
        from .paste_guard import file_too_big  # issue 9: inserting 50 MB freezes the window

        if (why := file_too_big(path)) is not None:
            self.show_error(why)
            return

        def done(text: str) -> None:
            self.set_text(text)
            self.setWindowTitle(f"{Path(path).name} — bpeinspect")
            self.textFileOpened.emit(path)
            if "\r" in text:
                self.show_message(
                    "Note: the editor shows line breaks as \\n; the file's \\r\\n line endings are tokenized as \\n."
                )

        self.runner.submit(
            "open-text",
            lambda stop: read_text_file(path),
            done,
            lambda exc: self.show_error(f"Could not open {path}: {exc}"),
        )

    def show_error(self, text: str) -> None:
        self.message.show_message(text, error=True)

    def show_message(self, text: str) -> None:
        self.message.show_message(text, error=False)

    def is_idle(self) -> bool:
        """True when nothing is loading or encoding and every pane shows the current text."""
        if self.runner.is_busy() or self.pending_loads or self._encode_timer.isActive():
            return False
        return all(self.result_revision.get(key) == self.revision for key in self.panes)

    def current_pane(self) -> TokenizerPane | None:
        tok = self.registry.current()
        return None if tok is None else self.panes.get(id(tok))

    def copy_ids_list(self) -> None:
        QGuiApplication.clipboard().setText(ids_as_list(self._current_ids()))

    def copy_ids_json(self) -> None:
        QGuiApplication.clipboard().setText(ids_as_json(self._current_ids()))

    def set_palette(self, name: str) -> None:
        self.palette_name = name
        self._apply_palette()

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        app = QApplication.instance()
        if dark:
            pal = QPalette()
            for role, color in (
                (QPalette.ColorRole.Window, "#2b2b2b"),
                (QPalette.ColorRole.WindowText, "#e6e6e6"),
                (QPalette.ColorRole.Base, "#1e1e1e"),
                (QPalette.ColorRole.AlternateBase, "#2b2b2b"),
                (QPalette.ColorRole.Text, "#e6e6e6"),
                (QPalette.ColorRole.Button, "#353535"),
                (QPalette.ColorRole.ButtonText, "#e6e6e6"),
                (QPalette.ColorRole.Highlight, "#3d7bd9"),
                (QPalette.ColorRole.HighlightedText, "#ffffff"),
                (QPalette.ColorRole.ToolTipBase, "#353535"),
                (QPalette.ColorRole.ToolTipText, "#e6e6e6"),
            ):
                pal.setColor(role, QColor(color))
            app.setPalette(pal)
        else:
            app.setPalette(app.style().standardPalette())
        self._apply_palette()

    def zoom(self, step: int) -> None:
        """Text size one point up (1), down (-1) or back to the default (0), in every pane."""
        base = QApplication.font().pointSizeF() + 2
        self.text_size = base if step == 0 else max(6.0, min(48.0, self.text_size + step))
        self._apply_font()

    def _apply_font(self) -> None:
        """Set the text size; with inline ids the lines get room below the text for them.

        QPlainTextEdit has no line spacing setting, but a superscript line is taller: so the
        document font is made ``IDS_SCALE`` times larger and all text set as superscript,
        which Qt draws at 2/3 size, i.e. at the normal size, raised above free room."""
        font = self.document.defaultFont()
        ids = self.layers.ids
        font.setPointSizeF(self.text_size * (IDS_SCALE if ids else 1.0))
        self.document.setDefaultFont(font)
        fmt = QTextCharFormat()
        fmt.setVerticalAlignment(
            QTextCharFormat.VerticalAlignment.AlignSuperScript if ids else QTextCharFormat.VerticalAlignment.AlignNormal
        )
        if ids:
            fmt.setSuperScriptBaseline(IDS_RAISE)
        if ids or self._ids_font_applied:
            cur = QTextCursor(self.document)
            cur.select(QTextCursor.SelectionType.Document)
            cur.mergeCharFormat(fmt)
            self._ids_font_applied = ids
        for pane in self.panes.values():
            pane.view.setFont(font)
            pane.view.mergeCurrentCharFormat(fmt)
            pane.view.text_scale = 2 / 3 if ids else 1.0
            pane.view.viewport().update()

    # -- tokenizers -------------------------------------------------------------------------------

    def _on_added(self, tok: Tokenizer) -> None:
        if self.placeholder.parent() is not None:
            self.placeholder.setParent(None)
        pane = TokenizerPane(tok, self.document)
        pane.view.set_layers(self.layers)
        pane.view.set_token_palette(self.token_palette)
        pane.view.setFont(self.document.defaultFont())
        pane.view.text_scale = 2 / 3 if self.layers.ids else 1.0
        pane.view.tokenClicked.connect(lambda i, p=pane: self._on_token_clicked(p, i))
        pane.closeRequested.connect(self.registry.remove)
        pane.focused.connect(self.registry.set_current)
        pane.view.verticalScrollBar().valueChanged.connect(lambda v, p=pane: self._sync_scroll(p, v))
        self.panes[id(tok)] = pane
        spec = self.registry.spec_of(tok)
        rank = self._order.index(spec) if spec in self._order else len(self._order)
        before = sum(
            1
            for p in self.panes.values()
            if p is not pane
            and (
                self._order.index(self.registry.spec_of(p.tok))
                if self.registry.spec_of(p.tok) in self._order
                else len(self._order)
            )
            <= rank
        )
        self.stack.insertWidget(before, pane)
        if len(self.panes) == 1 or rank == 0:
            self.registry.set_current(tok)
        self._encode_one(tok)
        self._refresh_status()

    def _on_removed(self, tok: Tokenizer) -> None:
        pane = self.panes.pop(id(tok), None)
        self.results.pop(id(tok), None)
        self.result_revision.pop(id(tok), None)
        self.runner.cancel(f"encode:{id(tok)}")
        if pane is not None:
            pane.setParent(None)
            pane.deleteLater()
        if not self.panes:
            self.stack.addWidget(self.placeholder)
        self._refresh_counts()
        self._refresh_status()

    def _on_current_changed(self, tok: Tokenizer | None) -> None:
        for key, pane in self.panes.items():
            pane.set_current(tok is not None and key == id(tok))
        self._refresh_ids()
        self._refresh_status()

    def _close_current(self) -> None:
        tok = self.registry.current()
        if tok is not None:
            self.registry.remove(tok)

    # -- encoding ---------------------------------------------------------------------------------

    def _schedule_encode(self) -> None:
        self.revision += 1
        self._encode_timer.start()

    def _encode_all(self) -> None:
        text = self.text()
        for tok in self.registry.tokenizers():
            self._encode_one(tok, text)

    def _encode_one(self, tok: Tokenizer, text: str | None = None) -> None:
        if self.result_revision.get(id(tok)) == self.revision:
            return
        text = self.text() if text is None else text
        prev = self.results.get(id(tok))
        base = prev.enc if prev is not None else None
        revision = self.revision

        def failed(exc: BaseException) -> None:
            self.result_revision[id(tok)] = revision  # do not retry the same text forever
            self.show_error(f"{tok.name}: could not encode the text: {exc}")

        if is_small_edit(tok, base, text):
            # a keystroke in a modest text: a few lines re-encoded in a few ms, right here
            key = f"encode:{id(tok)}"
            # updating the shown encoding in place is safe unless a worker may still read it
            in_place = not self.runner.has_job(key)
            self.runner.cancel(key)
            try:
                result = encode_text(tok, text, base, in_place=in_place)
            except (ValueError, RecursionError, BufferError) as exc:
                failed(exc)
            else:
                self._on_encoded(result, revision)
            return

        self.runner.submit(
            f"encode:{id(tok)}",
            lambda stop: encode_text(tok, text, base, stop),
            lambda r: self._on_encoded(r, revision),
            failed,
        )

    def _on_encoded(self, result: EncodeResult, revision: int) -> None:
        pane = self.panes.get(id(result.tok))
        if pane is None:
            return
        old = self.results.get(id(result.tok))
        self.results[id(result.tok)] = result
        self.result_revision[id(result.tok)] = revision
        self.last_result = result
        pane.view.set_encoding(result.tok, result.enc, changed=result.changed)
        self._refresh_counts()
        if result.tok is self.registry.current():
            self._refresh_ids()
        self._refresh_status()
        if old is not None and old.enc is not result.enc and len(old.enc.ids) > 50_000:
            # freeing a million-token encoding takes tens of ms: let a worker do it
            graveyard = [old]
            del old
            self.runner.submit(f"free:{id(graveyard)}", lambda stop: graveyard.clear())

    def _refresh_counts(self) -> None:
        """Token counts in every pane header, the lower ones compared with the top pane's."""
        top = self.stack.widget(0)
        ref_result = self.results.get(id(top.tok)) if isinstance(top, TokenizerPane) else None
        for key, pane in self.panes.items():
            r = self.results.get(key)
            if r is None:
                continue
            reference = None
            if ref_result is not None and pane is not top and ref_result.enc.text == r.enc.text:
                reference = (ref_result.tok.name, len(ref_result.enc.ids))
            pane.set_count(len(r.enc.ids), len(r.enc.text), reference)

    def _current_ids(self) -> list[int]:
        tok = self.registry.current()
        r = self.results.get(id(tok)) if tok is not None else None
        return list(r.enc.ids) if r is not None else []

    def _refresh_ids(self) -> None:
        tok = self.registry.current()
        r = self.results.get(id(tok)) if tok is not None else None
        if r is None:
            self.ids_view.set_ids([], None, self.token_palette)
            self.ids_title.setText("Token ids")
            return
        self.ids_title.setText(f"Token ids — {tok.name} ({len(r.enc.ids):,})")
        self.ids_view.set_ids(r.enc.ids, r.enc.flags, self.token_palette, tok.n_vocab)

    def _refresh_status(self) -> None:
        tok = self.registry.current()
        r = self.results.get(id(tok)) if tok is not None else None
        if r is None:
            self.status_label.setText("no tokenizer" if tok is None else f"{tok.name}: encoding…")
            return
        enc = r.enc
        n, chars, nbytes = len(enc.ids), len(enc.text), enc.n_bytes
        bpt = nbytes / n if n else 0.0
        cpt = chars / n if n else 0.0
        last = self.last_result
        took = f"last encode {last.seconds * 1000:.1f} ms ({last.mode}, {last.tok.name})" if last else ""
        self.status_label.setText(
            f"{tok.name}:  {n:,} tokens · {chars:,} chars · {nbytes:,} bytes · "
            f"{bpt:.2f} bytes/token · {cpt:.2f} chars/token · {took}"
        )

    # -- selection --------------------------------------------------------------------------------

    def _on_token_clicked(self, pane: TokenizerPane, index: int) -> None:
        self.registry.set_current(pane.tok)
        self.select_token(pane.tok, index)

    def _on_ids_clicked(self, index: int) -> None:
        tok = self.registry.current()
        if tok is not None:
            self.select_token(tok, index)

    def select_token(self, tok: Tokenizer, index: int) -> None:
        """Select token ``index`` of ``tok``'s encoding in every view and tell other panels."""
        r = self.results.get(id(tok))
        if r is None or not 0 <= index < len(r.enc.ids):
            return
        enc = r.enc
        pos = enc.utf16_starts[index]
        for key, pane in self.panes.items():
            other = self.results.get(key)
            if other is None:
                continue
            j = index if key == id(tok) else other.enc.token_at_utf16(pos)
            pane.view.select_token(j, scroll=key == id(tok))
        self.ids_view.select(index if tok is self.registry.current() else None)
        piece = enc.pieces_of[index]
        a, b = enc.piece_spans[piece]
        self.tokenActivated.emit(tok, enc.ids[index])
        self.pieceActivated.emit(tok, enc.text[a:b])

    def _sync_scroll(self, source: TokenizerPane, value: int) -> None:
        for pane in self.panes.values():
            if pane is not source and pane.view.verticalScrollBar().value() != value:
                pane.view.verticalScrollBar().setValue(value)

    # -- layers and palette ---------------------------------------------------------------------

    def _set_layer(self, name: str, on: bool) -> None:
        setattr(self.layers, name, on)
        for pane in self.panes.values():
            pane.view.set_layers(self.layers)
        if name == "ids":
            self._apply_font()

    def _apply_palette(self) -> None:
        self.token_palette = TokenPalette(self.palette_name, dark=self.dark)
        for pane in self.panes.values():
            pane.view.set_token_palette(self.token_palette)
        self.ids_view.palette_ = self.token_palette
        self.ids_view.viewport().update()

    # -- files ------------------------------------------------------------------------------------

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
            self, "Open tokenizer", "", "Vocabularies (*.tiktoken *.json *.model *.gguf *.vocab *.bpe);;All files (*)"
        )
        if path:
            self.open_tokenizer(path)

    def _ask_save_text(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save text as", "", "Text (*.txt)")
        if path:
            self._guard(lambda: write_atomic(path, self.text().encode("utf-8")), f"Could not save {path}")

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
        self.runner.submit(
            "export-html",
            lambda stop: write_atomic(path, overlay_html(pairs, palette).encode("utf-8")),
            lambda _: self.show_message(f"Exported the overlay to {path}"),
            lambda exc: self.show_error(f"Could not export {path}: {exc}"),
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
            if Path(path).is_dir() or Path(path).suffix.lower() in VOCAB_SUFFIXES:
                self.open_tokenizer(path)
            else:
                self.open_text_file(path)
        e.acceptProposedAction()
