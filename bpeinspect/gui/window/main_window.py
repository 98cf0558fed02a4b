"""The main window: the text with one overlay pane per open tokenizer, the ids, the status.

Other panels dock in with :meth:`MainWindow.add_panel` and follow
:attr:`MainWindow.registry` and the ``tokenActivated``/``pieceActivated`` signals.

>>> win = MainWindow(); win.open_tokenizer("o200k_base"); win.set_text("hello")  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import (
    QGuiApplication,
    QIcon,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextDocumentLayout,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import BUILTINS, Encoding, Tokenizer
from bpeinspect.core.io.builtins import resources_dir
from bpeinspect.core.live import EncodeResult, plan_encode
from bpeinspect.gui.concurrency import Jobs, load_quietly, release_encoding
from bpeinspect.gui.overlay.ids_view import IdsView, ids_as_json, ids_as_list
from bpeinspect.gui.overlay.palette import TokenPalette
from bpeinspect.gui.overlay.token_view import Layers, document_text
from bpeinspect.gui.registry import TokenizerRegistry, remember_tokenizer
from bpeinspect.gui.window.actions import WindowActions
from bpeinspect.gui.window.panes import MessageBar, TokenizerPane
from bpeinspect.gui.window.theme import Appearance

FEED_SLICE = 1 << 16  # characters put into the document per event-loop turn


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


class MainWindow(WindowActions, Appearance, QMainWindow):
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
        self.jobs = Jobs(self)
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
        self._feeding: list | None = None  # [text, position] while a big text goes in
        self._feed_timer = QTimer(self, singleShot=True, interval=0)
        self._feed_timer.timeout.connect(self._feed)
        self._graveyard: list[Encoding] = []  # old encodings being freed a slice at a time
        self._free_timer = QTimer(self, singleShot=True, interval=0)
        self._free_timer.timeout.connect(self._free_some)
        self._build_ui()
        self._build_menus()
        self._apply_font()
        self.registry.added.connect(self._on_added)
        self.registry.removed.connect(self._on_removed)
        self.registry.currentChanged.connect(self._on_current_changed)
        self.setAcceptDrops(True)
        self.resize(1400, 860)
        from bpeinspect.gui.window.settings import attach  # persistence: restores now, saves on close

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
        self.jobs.busyChanged.connect(lambda b: self.busy_label.setText("working…" if b else ""))

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
        """Replace the text (the document starts afresh, without undo history).

        A big text goes in a slice per event-loop turn (``setPlainText`` of 1 MB would hold
        the loop for 100 ms or more); the panes are read-only and nothing is encoded until
        the last slice is in."""
        self._stop_feeding()
        if len(text) <= FEED_SLICE:
            self.document.setPlainText(text)
            # what QTextDocument makes of it: every line break becomes a block separator
            self._text_cache = (self.revision, normalize_newlines(text))
            return
        self._feeding = [text, 0]
        self.document.setUndoRedoEnabled(False)
        for pane in self.panes.values():
            pane.view.setReadOnly(True)
        self.document.setPlainText("")
        self._feed_timer.start()

    def _feed(self) -> None:
        text, pos = self._feeding
        # cut after a newline so that no slice ends inside a \r\n pair or a surrogate pair
        end = text.find("\n", pos + FEED_SLICE)
        end = len(text) if end < 0 else end + 1
        cur = QTextCursor(self.document)
        cur.movePosition(QTextCursor.MoveOperation.End)
        cur.insertText(text[pos:end])
        self._feeding[1] = end
        if end >= len(text):
            self._stop_feeding()
            self._text_cache = (self.revision, normalize_newlines(text))
            self._encode_timer.start()
        else:
            self._feed_timer.start()

    def _stop_feeding(self) -> None:
        if self._feeding is None:
            return
        self._feed_timer.stop()
        self._feeding = None
        self.document.setUndoRedoEnabled(True)
        for pane in self.panes.values():
            pane.view.setReadOnly(False)

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

        self.jobs.submit(("load", spec), load_quietly, spec, on_returned=done, on_errored=failed)

    def open_text_file(self, path: str) -> None:
        """Read a text file in a worker and show it; errors keep the current text."""
        from bpeinspect.gui.overlay.paste_guard import file_too_big  # a 50 MB text would freeze the editor

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

        self.jobs.submit(
            "open-text",
            read_text_file,
            path,
            on_returned=done,
            on_errored=lambda exc: self.show_error(f"Could not open {path}: {exc}"),
        )

    def show_error(self, text: str) -> None:
        self.message.show_message(text, error=True)

    def show_message(self, text: str) -> None:
        self.message.show_message(text, error=False)

    def is_idle(self) -> bool:
        """True when nothing is loading or encoding and every pane shows the current text."""
        if self.jobs.is_busy() or self.pending_loads or self._encode_timer.isActive() or self._feeding:
            return False
        return all(self.result_revision.get(key) == self.revision for key in self.panes)

    def current_pane(self) -> TokenizerPane | None:
        tok = self.registry.current()
        return None if tok is None else self.panes.get(id(tok))

    def copy_ids_list(self) -> None:
        QGuiApplication.clipboard().setText(ids_as_list(self._current_ids()))

    def copy_ids_json(self) -> None:
        QGuiApplication.clipboard().setText(ids_as_json(self._current_ids()))

    # -- tokenizers -------------------------------------------------------------------------------

    def _on_added(self, tok: Tokenizer) -> None:
        if self.placeholder.parent() is not None:
            self.placeholder.setParent(None)
        pane = TokenizerPane(tok, self.document)
        pane.view.setReadOnly(self._feeding is not None)
        pane.view.set_layers(self.layers)
        pane.view.set_token_palette(self.token_palette)
        pane.view.setFont(self.document.defaultFont())
        pane.view.text_scale = 2 / 3 if self.layers.ids else 1.0
        pane.view.tokenClicked.connect(lambda i, p=pane: self._on_token_clicked(p, i))
        pane.closeRequested.connect(self.registry.remove)
        pane.view.zoomRequested.connect(self.zoom)
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
        if self.last_result is not None and self.last_result.tok is tok:
            self.last_result = None
        self.jobs.cancel(("encode", id(tok)))
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
        if self._feeding is None:
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

        plan = plan_encode(tok, text, base)
        if plan.cheap:
            # a keystroke in a modest text: a few lines re-encoded in a few ms, right here
            key = ("encode", id(tok))
            # updating the shown encoding in place is safe unless a worker may still read it
            # (an encode of this tokenizer, or an export reading every encoding)
            in_place = not self.jobs.is_busy()
            self.jobs.cancel(key)
            try:
                result = plan.run(in_place=in_place)
            except (ValueError, RecursionError, BufferError) as exc:
                failed(exc)
            else:
                self._on_encoded(result, revision)
            return

        self.jobs.submit(
            ("encode", id(tok)),
            lambda should_stop, report: plan.run(should_stop=should_stop, on_first=report),
            on_returned=lambda r: self._on_encoded(r, revision),
            on_errored=failed,
            on_yielded=lambda partial: self._on_partial(tok, partial),
        )

    def _on_partial(self, tok: Tokenizer, enc: Encoding) -> None:
        """The first chunk of a long text is encoded: colour the top while the rest runs."""
        pane = self.panes.get(id(tok))
        if pane is not None:
            pane.view.set_encoding(tok, enc)
            pane.count.setText(f"  encoding… ({len(enc.text):,} of {len(self.text()):,} characters so far)")

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
            # freeing a million-token encoding at once takes tens of ms: free it a slice
            # per event-loop turn instead
            self._graveyard.append(old.enc)
            self._free_timer.start()

    def _free_some(self) -> None:
        if self._graveyard and not release_encoding(self._graveyard[-1], budget=1):
            self._graveyard.pop()
        if self._graveyard:
            self._free_timer.start()

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
