"""The main window: the text with one overlay pane per open tokenizer, the ids, the status.

The window is put together from parts, each with one job: a :class:`LiveDocument` (the text),
the :class:`TokenizerRegistry` (the open tokenizers, the picker's model), an :class:`Encoder`
(keeps their encodings current), an :class:`Appearance` (layers, palette, theme, text size),
a :class:`PaneStack`, an :class:`ActionRegistry` (``commands``: actions and menus by key), :class:`FileCommands`, and a
:class:`PanelHost` that docks the panels of :data:`~bpeinspect.gui.panels.specs.PANELS`.
What it remembers goes through :class:`Preferences`.

>>> win = MainWindow(); win.open_tokenizer("o200k_base"); win.set_text("hello")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import BUILTINS, Tokenizer, UnknownPreTokenizerError
from bpeinspect.core.io import resources_dir
from bpeinspect.core.live_text import LiveEncoding, LiveText
from bpeinspect.gui.concurrency import Jobs
from bpeinspect.gui.message_bar import MessageBar
from bpeinspect.gui.overlay.glyphs import glyph_notices
from bpeinspect.gui.overlay.palette import PALETTES
from bpeinspect.gui.overlay.paste_guard import file_too_big
from bpeinspect.gui.panels.specs import PANELS, PanelSpec
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.about import AboutDialog
from bpeinspect.gui.window.actions import ActionRegistry, ActionSpec
from bpeinspect.gui.window.docks import PanelHost, in_sight
from bpeinspect.gui.window.document import LiveDocument, read_text_parts
from bpeinspect.gui.window.encoder import Encoder, load_quietly
from bpeinspect.gui.window.files import FileCommands
from bpeinspect.gui.window.hub_dialog import HubDialog
from bpeinspect.gui.window.panes import PaneStack
from bpeinspect.gui.window.readouts import CountBadge, IdsBox, StatusLine
from bpeinspect.gui.window.settings import SCHEMA, Preferences, WindowState
from bpeinspect.gui.window.theme import LAYERS, Appearance
from bpeinspect.gui.window.toolbar import TokenizerBar
from bpeinspect.gui.window.vocab_settings import VocabSettings

# (layer, menu text, shortcut, on at first, its toolbar button's text or None: short, for a
# 1024 px window's bar to hold them beside the picker and the count)
LAYER_ACTIONS = (
    ("colors", "Token colours", "Ctrl+1", True, None),
    ("whitespace", "Visible whitespace", "Ctrl+2", False, "Whitespace"),  # a calm first screen: off until asked for
    ("boundaries", "Pre-token boundaries", "Ctrl+3", False, "Pre-tokens"),
    ("ids", "Token ids inline", "Ctrl+4", False, "Ids inline"),
    ("specials", "Mark special tokens", "Ctrl+5", True, "Specials"),
)
FOCUS_CHAIN_MOST = 1000  # widgets Tab passes over at most, looking for one in sight
THEME_ACTIONS = (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark"))


class MainWindow(QMainWindow):
    """bpeinspect's main window."""

    tokenActivated = Signal(object, int)  # (Tokenizer, token id)
    pieceActivated = Signal(object, str)  # (Tokenizer, pre-token text)
    textFileOpened = Signal(str)  # path of a text file shown
    idle = Signal()  # something ended and is_idle() is true
    selectionChanged = Signal()  # a token was outlined, or the outline went (see ``selection``)

    def __init__(self, settings: QSettings | None = None, panels: Sequence[PanelSpec] = PANELS) -> None:
        super().__init__()
        self.setWindowTitle("bpeinspect")
        icon = resources_dir() / "icons" / "bpeinspect.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.prefs = Preferences(settings)
        self.registry = TokenizerRegistry(self)
        self.jobs = Jobs(self)
        self.live = LiveDocument(self)
        self.document = self.live.document
        self.typing = self.live.typing  # the background work of panels pauses while the user types
        self.appearance = Appearance(self.document, self, format_lines=self.live.set_line_format)
        self.encoder = Encoder(self.live, self.registry, self.jobs)
        self.panes = PaneStack(self.registry, self.document, self.appearance)
        self.panes.insert_text = self.live.insert_text
        self.panes.insert_data = self.live.paste_data
        self.live.below_view = self.panes.below_view
        self.files = FileCommands(self)
        self.vocab_settings = VocabSettings(self)
        self.commands = ActionRegistry(self)
        self.about: AboutDialog | None = None
        self.hub_dialog: HubDialog | None = None
        # the token outlined: (its tokenizer, its UTF-16 start and end, its index)
        self.selection: tuple[Tokenizer, int, int, int] | None = None
        self._build_ui()
        self._build_menus()
        self._connect()
        self.setAcceptDrops(True)
        self.resize(1400, 860)
        self._restore()
        self.panels = PanelHost(self, panels)

    # -- building ---------------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.message = MessageBar()
        self.ids = IdsBox(self.registry, self.appearance)
        self.main_split = QSplitter(Qt.Orientation.Vertical)
        self.main_split.addWidget(self.panes)
        self.main_split.addWidget(self.ids)
        self.main_split.setStretchFactor(0, 4)
        self.main_split.setStretchFactor(1, 1)
        self.main_split.setSizes([640, 140])
        central = QWidget()
        clay = QVBoxLayout(central)
        clay.setContentsMargins(4, 4, 4, 0)
        clay.addWidget(self.message)
        clay.addWidget(self.main_split, 1)
        self.setCentralWidget(central)
        self.status_line = StatusLine(self.registry, self.encoder)
        self.statusBar().addWidget(self.status_line, 1)
        self.busy_label = QLabel()
        self.statusBar().addPermanentWidget(self.busy_label)
        self.toolbar = TokenizerBar(
            self.registry, self.prefs, self.open_tokenizer, self.files.ask_open_tokenizer, self.show_hub_dialog
        )
        self.addToolBar(self.toolbar)

    def _build_menus(self) -> None:
        a, f, look = self.commands, self.files, self.appearance
        a.add(ActionSpec("file.open_text", "file", "Open text…", QKeySequence.StandardKey.Open), f.ask_open_text)
        a.add(ActionSpec("file.open_tokenizer", "file", "Open tokenizer…", "Ctrl+Shift+O"), f.ask_open_tokenizer)
        a.menu("file/recent_texts").aboutToShow.connect(self._fill_recent_texts)
        a.menu("file/recent_tokenizers").aboutToShow.connect(self._fill_recent_tokenizers)
        a.separator("file")
        a.add(ActionSpec("file.save_text", "file", "Save text as…", QKeySequence.StandardKey.SaveAs), f.ask_save_text)
        a.add(ActionSpec("file.export_html", "file", "Export overlay as HTML…", "Ctrl+E"), f.ask_export_html)
        a.add(ActionSpec("file.export_png", "file", "Export overlay as PNG…", "Ctrl+Shift+E"), f.ask_export_png)
        a.separator("file")
        a.add(ActionSpec("file.quit", "file", "Quit", QKeySequence.StandardKey.Quit), self.close)
        a.add(ActionSpec("edit.copy_ids", "edit", "Copy token ids as list", "Ctrl+Shift+C"), self.ids.copy_list)
        a.add(ActionSpec("edit.copy_ids_json", "edit", "Copy token ids as JSON", "Ctrl+Alt+C"), self.ids.copy_json)
        for i, (name, spec) in enumerate(BUILTINS.items()):
            a.add(
                ActionSpec(f"tokenizers.add.{name}", "tokenizers", f"Add {name} ({spec.description})", f"Alt+{i + 1}"),
                lambda n=name: self.open_tokenizer(n),
            )
        a.separator("tokenizers")
        a.add(ActionSpec("tokenizers.open", "tokenizers", "Open tokenizer file…"), f.ask_open_tokenizer)
        hub_action = ActionSpec("tokenizers.open_hub", "tokenizers", "Open from Hugging Face…", "Ctrl+Shift+H")
        a.add(hub_action, self.show_hub_dialog)
        a.add(ActionSpec("tokenizers.close", "tokenizers", "Close current tokenizer", "Ctrl+W"), self.close_current)
        a.add(
            ActionSpec("tokenizers.settings", "tokenizers", "Split rule and special tokens…"),
            lambda: self.vocab_settings.ask_for(self.registry.current()),
        )
        a.add(
            ActionSpec("tokenizers.reference", "tokenizers", "Make current the reference", "Ctrl+R"), self.pin_current
        )
        a.add(
            ActionSpec("tokenizers.shown", "tokenizers", "Show current as a pane", checkable=True, checked=True),
            self.show_current_pane,
        )
        for name, text, key, on, on_bar in LAYER_ACTIONS:
            act = a.add(
                ActionSpec(f"view.layer.{name}", "view", text, key, checkable=True, checked=on),
                lambda checked, n=name: look.set_layer(n, checked),
            )
            look.set_layer(name, on)
            if on_bar:
                act.setIconText(on_bar)
                act.setToolTip(f"{text} ({key})")
                self.toolbar.add_toggle(act)
        self.count_badge = CountBadge(self.registry, self.encoder)
        self.toolbar.add_right(self.count_badge)
        a.separator("view")
        for name in PALETTES:
            a.add(ActionSpec(f"view.palette.{name}", "view/palette", name), lambda n=name: look.set_palette(n))
        a.add(
            ActionSpec("view.dark", "view", "Dark theme", "Ctrl+Shift+D", checkable=True),
            lambda on: self.set_theme("dark" if on else "light"),
        )
        a.separator("view")
        a.add(ActionSpec("view.zoom_in", "view", "Zoom in", QKeySequence.StandardKey.ZoomIn), lambda: look.zoom(1))
        a.add(ActionSpec("view.zoom_out", "view", "Zoom out", QKeySequence.StandardKey.ZoomOut), lambda: look.zoom(-1))
        a.add(ActionSpec("view.zoom_reset", "view", "Reset zoom", "Ctrl+0"), lambda: look.zoom(0))
        for name, text in THEME_ACTIONS:
            a.add(
                ActionSpec(f"view.theme.{name}", "view/theme", text, checkable=True, group="theme"),
                lambda on, n=name: self.set_theme(n) if on else None,
            )
        a.menu("view/panels")
        a.add(
            ActionSpec(
                "help.about",
                "help",
                "About bpeinspect",
                QKeySequence.StandardKey.HelpContents,
                role=QAction.MenuRole.AboutRole,
            ),
            self.show_about,
        )
        a.add(ActionSpec("help.clear_recent", "help", "Clear recent files"), self.prefs.clear_recent)

    def _connect(self) -> None:
        self.live.feedingChanged.connect(self.panes.set_read_only)
        self.panes.progress = self.encoder.progress
        self.encoder.encoded.connect(self.panes.show_result)
        self.encoder.partial.connect(
            lambda tok, live: self.panes.show_partial(tok, live, len(self.live) + self.live.feed_left())
        )
        self.encoder.failed.connect(self.show_error)
        self.panes.tokenClicked.connect(self._on_token_clicked)
        # what the panes show is encoded first (a new tokenizer, a long text)
        self.panes.scrolled.connect(lambda position: setattr(self.encoder, "focus", position))
        self.live.top_shown = lambda: self.encoder.focus  # and formatted first
        self.panes.settingsRequested.connect(self.vocab_settings.ask_for)
        self.ids.tokenClicked.connect(self._on_ids_clicked)
        self.appearance.themeChanged.connect(self._show_theme)
        self.document.contentsChange.connect(self._on_contents_change)
        for signal in (self.registry.currentChanged, self.registry.shownChanged):
            signal.connect(self._sync_tokenizer_actions)
        for signal in (self.registry.added, self.registry.removed, self.registry.loadingChanged):
            signal.connect(self._sync_add_actions)
        self.registry.currentChanged.connect(self._select_in_ids)
        glyph_notices().found.connect(self.show_glyph_notice)
        self.jobs.busyChanged.connect(lambda busy: self.busy_label.setText("working…" if busy else ""))
        signals = (self.encoder.encoded, self.encoder.settled, self.jobs.ended, self.registry.rowsRemoved)
        for signal in (*signals, self.live.formatted):
            signal.connect(self._check_idle)

    def show_glyph_notice(self, message: str) -> None:
        """Characters no installed font draws were found (said once per character)."""
        self.statusBar().showMessage(message, 30_000)
        self.statusBar().setToolTip(message)  # a long message is cut at the window's edge

    # -- what is remembered -----------------------------------------------------------------------

    def _restore(self) -> None:
        prefs = self.prefs
        state = prefs.load_window()
        self.restored_docks = state is not None and state.docks is not None  # the docks' widths are the user's
        if state is not None:
            for value, restore in (
                (state.geometry, self.restoreGeometry),
                (state.docks, lambda v: self.restoreState(v, SCHEMA)),
                (state.split, self.main_split.restoreState),
            ):
                if value is not None:
                    restore(value)
            if state.palette in PALETTES:
                self.appearance.set_palette(state.palette)
            for name, on in state.layers.items():
                self.commands[f"view.layer.{name}"].setChecked(on)  # its slot sets the layer
        if prefs.font_size is not None:
            self.appearance.set_text_size(prefs.font_size)
        self.set_theme(prefs.theme, remember=False)

    def window_state(self) -> WindowState:
        look = self.appearance
        return WindowState(
            geometry=self.saveGeometry(),
            docks=self.saveState(SCHEMA),
            split=self.main_split.saveState(),
            palette=look.palette_name,
            layers={name: getattr(look.layers, name) for name in LAYERS},
            font_size=look.text_size,
        )

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802, A002 (Qt's names)
        """Tab and Shift+Tab pass over the docks tabbed behind others: the focus goes only
        where the user can see it."""
        for _ in range(FOCUS_CHAIN_MOST):
            if not super().focusNextPrevChild(next):
                return False
            focus = QApplication.focusWidget()
            if focus is None or in_sight(focus):
                break
        return True

    def closeEvent(self, event: QCloseEvent) -> None:
        self.prefs.save_window(self.window_state())
        super().closeEvent(event)

    # -- public API -------------------------------------------------------------------------------

    @property
    def settings(self) -> QSettings:
        """Where the window and its panels remember the user's choices."""
        return self.prefs.settings

    def add_panel(
        self, title: str, widget: QWidget, area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea
    ) -> QDockWidget:
        """Dock ``widget`` (a vocabulary browser, merge tree...) and list it under View ▸ Panels."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"panel:{title}")
        dock.setWidget(widget)
        restored = self.restoreDockWidget(dock)  # where it was last time (the state restored at start)
        if not restored:
            self.addDockWidget(area, dock)
        dock.setProperty("restored", restored)
        self.commands.add_action(f"view.panels.{title}", "view/panels", dock.toggleViewAction())
        return dock

    def text(self) -> str:
        return self.live.text()

    def live_text(self) -> LiveText:
        """The text in segments, as the window keeps it (one object for the window's life)."""
        return self.live.live_text

    def live_encoding(self, tok: Tokenizer) -> LiveEncoding | None:
        """``tok``'s encoding of the text as the window keeps it up to date (read it on the GUI
        thread: it is of the whole current text once ``complete``); ``None`` if ``tok`` is not
        open here or could not encode this text."""
        live = self.encoder.live(tok)
        entry = self.registry.entry(tok)
        if live is None or entry is None:
            return None
        failed = entry.revision == self.live.revision and not self.live.is_feeding() and not live.complete
        return None if failed else live

    def set_text(self, text: str, *, right_to_left: bool = False) -> None:
        """Replace the text (a big one goes in a slice per event-loop turn), laid out right to left if asked."""
        self.live.set_text(text, right_to_left=right_to_left)

    def open_tokenizer(self, spec: str, **settings: Any) -> None:
        """Load a built-in name or a vocabulary path in a worker; errors go to the message bar.
        ``settings`` (``pattern``, ``special_tokens``) are the user's choice for what the file
        does not say; a file that names a pre-tokenizer bpeinspect does not know asks for them."""
        if self.registry.is_open(spec):  # the same file under another spelling too
            return
        self.registry.expect(spec)

        def done(tok: Tokenizer) -> None:
            if spec not in BUILTINS and Path(spec).exists():
                self.prefs.remember_tokenizer(str(Path(spec).resolve()), tok.name, tok.n_vocab)
            self.registry.add(tok, spec)
            self.vocab_settings.tell_defaults(tok)

        def failed(exc: BaseException) -> None:
            self.registry.forget(spec)
            msg = str(exc)
            self.show_error(msg if spec in msg else f"Could not open tokenizer {spec}: {msg}")
            if isinstance(exc, UnknownPreTokenizerError):
                self.vocab_settings.ask_for_path(spec, msg)

        self.jobs.submit(
            ("load", spec),
            load_quietly,
            spec,
            **settings,
            on_returned=done,
            on_errored=failed,
            on_aborted=lambda: self.registry.forget(spec),
        )  # cancelled (at quit)

    def open_text_file(self, path: str, *, right_to_left: bool = False) -> None:
        """Read a text file in a worker and show it (right to left if asked); errors keep the current text."""
        if (why := file_too_big(path)) is not None:  # a 50 MB text would freeze the editor
            self.show_error(why)
            return

        def done(result: tuple[list[str], bool]) -> None:
            text, had_cr = result
            self.live.set_text(text, normalized=True, right_to_left=right_to_left)
            self.setWindowTitle(f"{Path(path).name} — bpeinspect")
            self.prefs.remember_text(path)
            self.textFileOpened.emit(path)
            if had_cr:
                self.show_message(
                    "Note: the editor shows line breaks as \\n; the file's \\r\\n line endings are tokenized as \\n."
                )

        self.jobs.submit(
            "open-text",
            read_text_parts,
            path,
            on_returned=done,
            on_errored=lambda exc: self.show_error(f"Could not open {path}: {exc}"),
        )

    def close_current(self) -> None:
        tok = self.registry.current()
        if tok is not None:
            self.registry.remove(tok)

    def pin_current(self) -> None:
        """The current tokenizer becomes the reference the others are compared with."""
        tok = self.registry.current()
        if tok is not None:
            self.registry.set_reference(tok)

    def show_current_pane(self, shown: bool = True) -> None:
        """Give the current tokenizer a pane in the overlay (or keep it in the picker only)."""
        tok = self.registry.current()
        if tok is not None:
            self.registry.set_shown(tok, shown)

    def set_theme(self, theme: str, *, remember: bool = True) -> None:
        """``"system"``, ``"light"`` or ``"dark"`` (stored unless ``remember`` is false)."""
        if remember:
            self.prefs.theme = theme
        self.appearance.set_theme(theme)

    def show_hub_dialog(self) -> HubDialog:
        """Tokenizers ▸ Open from Hugging Face… (not modal; one at a time)."""
        if self.hub_dialog is None or not self.hub_dialog.isVisible():
            self.hub_dialog = HubDialog(self)
            self.hub_dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.hub_dialog.destroyed.connect(lambda *_: setattr(self, "hub_dialog", None))
        self.hub_dialog.show()
        self.hub_dialog.raise_()
        self.hub_dialog.search.setFocus()
        return self.hub_dialog

    def show_about(self) -> AboutDialog:
        """Show the About box (not modal: the window stays usable)."""
        if self.about is None:
            self.about = AboutDialog(self)
        self.about.show()
        self.about.raise_()
        return self.about

    def show_error(self, text: str) -> None:
        self.message.show_message(text, error=True)

    def show_message(self, text: str) -> None:
        self.message.show_message(text, error=False)

    def is_idle(self) -> bool:
        """True when nothing is loading or encoding and every pane shows the current text
        (after each encode, job and close, ``idle`` says so when it is)."""
        busy = self.jobs.pending() or self.registry.loading() or self.live.is_formatting()
        return not busy and self.encoder.is_idle()

    def _check_idle(self, *_args: object) -> None:
        if self.is_idle():
            self.idle.emit()

    def select_token(self, tok: Tokenizer, index: int) -> None:
        """Select token ``index`` of ``tok``'s encoding in every view and tell other panels."""
        r = self.registry.result(tok)
        if r is None or not 0 <= index < len(r.enc):
            return
        enc = r.enc
        self.selection = (tok, *enc.utf16_span(index), index)
        self.panes.select_token(tok, index)
        self.ids.view.select(self.selected_index(self.registry.current()))
        self.selectionChanged.emit()
        piece = enc.piece_text(index)
        if tok.byte_level and tok.normalizer is not None:
            # the span is the user's text; the encoder split and merged its normalized form (NFC...)
            piece = tok.normalizer.normalize(piece)
        self.tokenActivated.emit(tok, enc.id_at(index))
        self.pieceActivated.emit(tok, piece)

    # -- Qt events --------------------------------------------------------------------------------

    def dragEnterEvent(self, e: QDragEnterEvent) -> None:
        if e.mimeData().hasUrls():
            e.acceptProposedAction()

    def dropEvent(self, e: QDropEvent) -> None:
        self.files.open_dropped([p for p in (url.toLocalFile() for url in e.mimeData().urls()) if p])
        e.acceptProposedAction()

    # -- reacting -----------------------------------------------------------------------------------

    def _on_token_clicked(self, tok: Tokenizer, index: int) -> None:
        self.registry.set_current(tok)
        self.select_token(tok, index)

    def _on_ids_clicked(self, index: int) -> None:
        tok = self.registry.current()
        if tok is not None:
            self.select_token(tok, index)

    def clear_selection(self) -> None:
        """No token outlined (in any pane, nor in the ids)."""
        if self.selection is not None:
            self.panes.select_token(self.selection[0], None)
            self.ids.view.select(None)
            self.selection = None
            self.selectionChanged.emit()

    def selected_index(self, tok: Tokenizer | None) -> int | None:
        """The index in ``tok``'s encoding of the token at the selected place (None: none)."""
        r = self.registry.result(tok) if tok is not None else None
        if self.selection is None or r is None:
            return None
        sel_tok, start, _end, index = self.selection
        if sel_tok is tok:
            return index if index < len(r.enc) and r.enc.utf16_span(index)[0] == start else None
        return r.enc.token_at_utf16(start)

    def _on_contents_change(self, position: int, _removed: int, _added: int) -> None:
        # an edit at or before the selected token (a new text: position 0) moves the tokens
        # under it: its index would outline another token
        if self.selection is not None and position <= self.selection[2]:
            self.clear_selection()

    def _select_in_ids(self, tok: Tokenizer | None) -> None:
        # the ids list the current tokenizer's tokens: outline the one at the selected place
        self.ids.view.select(self.selected_index(tok))

    def _sync_add_actions(self, *_args: object) -> None:
        """Tokenizers ▸ Add NAME is offered only while NAME is neither open nor loading."""
        for name in BUILTINS:
            self.commands[f"tokenizers.add.{name}"].setEnabled(not self.registry.is_open(name))

    def _sync_tokenizer_actions(self, *_args: object) -> None:
        tok = self.registry.current()
        self.commands.set_checked("tokenizers.shown", tok is not None and self.registry.is_shown(tok))

    def _show_theme(self, theme: str) -> None:
        self.commands.set_checked(f"view.theme.{theme}", True)
        self.commands.set_checked("view.dark", self.appearance.dark)

    def _fill_recent_texts(self) -> None:
        self._fill_recent("file/recent_texts", self.prefs.recent_texts(), self.open_text_file)

    def _fill_recent_tokenizers(self) -> None:
        self._fill_recent("file/recent_tokenizers", self.prefs.recent_tokenizers(), self.open_tokenizer)
        for act in self.commands.menu("file/recent_tokenizers").actions():  # those open: not offered again
            if act.isEnabled() and self.registry.is_open(act.text()):
                act.setEnabled(False)
                act.setToolTip("Open already")

    def _fill_recent(self, key: str, paths: list[str], open_: Callable[[str], object]) -> None:
        menu = self.commands.menu(key)
        menu.clear()
        if not paths:
            menu.addAction("(none yet)").setEnabled(False)
        for p in paths:
            menu.addAction(p).triggered.connect(lambda _=False, p=p: open_(p))
