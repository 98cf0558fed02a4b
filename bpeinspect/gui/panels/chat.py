"""Chat mode: a conversation (system, user, assistant... messages, editable) rendered by the
current tokenizer's chat template into the exact token sequence the model reads.

The messages are edited in a list of rows (role, text, its token count, a remove button); the
rendered conversation is shown below in a :class:`TokenView` with every token of it, the
template's control tokens included, and its count per message and for the template. The
template is looked up (files beside the vocabulary may be read) and the conversation rendered
and encoded on the worker, never in a slot.

>>> view = ChatView(); view.set_tokenizer(tok, "o200k_base")   # doctest: +SKIP
>>> view.set_messages([{"role": "user", "content": "Hi"}])      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPaintEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import Tokenizer
from bpeinspect.core.chat import (
    ChatTemplate,
    EncodedChat,
    chat_format,
    conversation_of,
    encode_chat,
    message_texts,
    parse_variables,
    prepare_engine,
    render_chat,
    templates_for,
)
from bpeinspect.gui.concurrency import Jobs, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.overlay.glyphs import FONTS_PER_TURN, learn_glyphs_opening
from bpeinspect.gui.overlay.palette import TokenPalette, app_colors
from bpeinspect.gui.overlay.token_view import TokenView
from bpeinspect.gui.turns import later

if TYPE_CHECKING:
    from bpeinspect.gui.panels.context import PanelContext

ROLES = ("system", "user", "assistant", "tool")
EXAMPLE = (
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "How many tokens is “tokenization”? 東京 🎉"},
    {"role": "assistant", "content": "Two in cl100k_base: “token” and “ization”."},
)
NO_TEMPLATE = "no template"  # its tooltip says the messages are joined by newlines
EDIT_DELAY_MS = 120  # edits within this are rendered once
MAX_ROWS = 24  # a longer conversation (a dataset record) lists only its first messages as rows


def render_and_encode(
    tok: Tokenizer,
    template: ChatTemplate | None,
    messages: list[dict[str, Any]],
    generation_prompt: bool,
    variables: Mapping[str, Any] | None = None,
) -> tuple[str, Tokenizer, EncodedChat]:
    """What the worker does for each change: the chat format's label, the tokenizer that reads
    the rendered text (with the template's control tokens) and the encoded chat; ``variables``
    reach the template (``enable_thinking=False``, ``tools=[...]``...)."""
    fmt = chat_format(tok, template)
    rendered = render_chat(fmt, messages, add_generation_prompt=generation_prompt, **dict(variables or {}))
    return fmt.label, fmt.tokenizer, encode_chat(fmt, rendered)


class MessageRow(QFrame):
    """One message: its role, its text, its token count and a remove button."""

    changed = Signal()
    removeRequested = Signal(object)  # this row

    def __init__(self, role: str, content: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.extra: dict[str, Any] = {}  # the message's other keys (a record's name, tool calls...)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.role_box = QComboBox()
        self.role_box.setEditable(True)  # any role a template knows ("ipython", "developer"...)
        self.role_box.addItems(ROLES)
        self.role_box.setCurrentText(role)
        self.role_box.currentTextChanged.connect(self.changed)
        self.count_label = QLabel("")
        self.count_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.count_label.setMinimumWidth(80)
        self.remove_button = QToolButton()
        self.remove_button.setText("✕")
        self.remove_button.setToolTip("Remove this message")
        self.remove_button.clicked.connect(lambda: self.removeRequested.emit(self))
        self.editor = QPlainTextEdit(content)
        self.editor.setTabChangesFocus(True)
        self.editor.setMaximumHeight(78)
        self.editor.textChanged.connect(self.changed)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.role_box)
        head.addStretch(1)
        head.addWidget(self.count_label)
        head.addWidget(self.remove_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 4, 6, 6)
        lay.setSpacing(3)
        lay.addLayout(head)
        lay.addWidget(self.editor)

    def message(self) -> dict[str, Any]:
        return {
            **self.extra,
            "role": self.role_box.currentText().strip() or "user",
            "content": self.editor.toPlainText(),
        }

    def set_count(self, n: int | None, missing: bool = False) -> None:
        if n is None:
            self.count_label.setText("")
        else:
            self.count_label.setText(f"{n:,} token{'s' if n != 1 else ''}" + (" (not shown)" if missing else ""))
        self.count_label.setToolTip("The template did not write this message's text as given" if missing else "")


class ChatView(QWidget):
    """The chat panel (see the module docstring)."""

    rendered = Signal(object)  # the EncodedChat shown, after each render
    failed = Signal(str)  # why the conversation could not be rendered (bad variables, a template that refuses it)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tok: Tokenizer | None = None
        self.spec = ""
        self.templates: list[ChatTemplate] = []
        self.result: EncodedChat | None = None
        self.jobs = Jobs(self)
        self._rows: list[MessageRow] = []
        self._templates_of: Tokenizer | None = None  # whose templates the box lists
        self._note = ""  # said while nothing is wrong (e.g. that there is no template)
        self._timer = QTimer(self, singleShot=True, interval=EDIT_DELAY_MS)
        self._timer.timeout.connect(self.render_conversation)
        self._pending: tuple[str, Tokenizer, EncodedChat] | None = None  # rendered, waiting for the fonts
        self._glyphs = QTimer(self, singleShot=True, interval=0)
        self._glyphs.timeout.connect(self._show_pending)
        self._rest: list[dict[str, Any]] = []  # messages of a long conversation past MAX_ROWS (no rows)
        self._after_first_paint: Callable[[], object] | None = None
        self._build()
        self.set_messages(EXAMPLE)

    # -- construction ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.template_box = QComboBox()
        self.template_box.setToolTip("The chat template the conversation is rendered with")
        self.template_box.currentIndexChanged.connect(self._changed)
        self.generation_box = QCheckBox("Reply header")
        self.generation_box.setChecked(True)
        self.generation_box.setToolTip(
            "End with the header of the assistant's reply (add_generation_prompt), "
            "as the model reads it before answering"
        )
        self.generation_box.toggled.connect(self._changed)
        self.variables_edit = QLineEdit()
        self.variables_edit.setPlaceholderText(
            'template variables, e.g. enable_thinking=false  tools=[{"type": "function", ...}]'
        )
        self.variables_edit.setToolTip(
            "Variables the chat template reads, as NAME=VALUE pairs (a value is read as JSON "
            "if it is JSON, else as a word) or one JSON object"
        )
        self.variables_edit.setClearButtonEnabled(True)
        self.variables_edit.textChanged.connect(self._changed)
        self.add_button = QPushButton("Add message")
        self.add_button.clicked.connect(lambda _checked=False: self.add_message())  # not add_message(checked)
        self.total_label = QLabel("")
        font = QFont(self.total_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.total_label.setFont(font)
        self.breakdown = QLabel("")
        self.breakdown.setWordWrap(True)
        self.status = ToneLabel()
        self.status.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(QLabel("Template"))
        top.addWidget(self.template_box, 1)
        top.addWidget(self.generation_box)
        top.addWidget(self.add_button)
        variables = QHBoxLayout()
        variables.addWidget(QLabel("Variables"))
        variables.addWidget(self.variables_edit, 1)

        self.rows_box = QWidget()
        self.rows_layout = QVBoxLayout(self.rows_box)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.rows_layout.setSpacing(4)
        self.rest_label = QLabel("")
        self.rest_label.setWordWrap(True)
        self.rest_label.hide()
        self.rows_layout.addWidget(self.rest_label)
        self.rows_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.rows_box)

        self.token_view = TokenView()
        self.token_view.setReadOnly(True)
        self.token_view.set_token_palette(TokenPalette(dark=app_colors().dark))  # the window gives its own
        self.token_view.setToolTip("")
        counts = QVBoxLayout()
        counts.setSpacing(0)
        counts.addWidget(self.total_label)
        counts.addWidget(self.breakdown)
        bottom = QWidget()
        blay = QVBoxLayout(bottom)
        blay.setContentsMargins(0, 0, 0, 0)
        blay.addLayout(counts)
        blay.addWidget(self.token_view, 1)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(scroll)
        split.addWidget(bottom)
        split.setSizes([360, 300])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(variables)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)
        self.status.hide()

    def after_first_paint(self, fn: Callable[[], object]) -> None:
        """Call ``fn()`` in a turn after the panel's first paint (its first render, whose worker
        ran Python beside the window painting the new panel, held the paint up for the
        interpreter: 50-60 ms)."""
        self._after_first_paint = fn

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        super().paintEvent(event)
        if self._after_first_paint is not None:
            later(self._first_painted)

    def _first_painted(self) -> None:
        fn, self._after_first_paint = self._after_first_paint, None
        if fn is not None:
            fn()

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizer(self, tok: Tokenizer | None, spec: str = "") -> None:
        """Render with ``tok`` and its templates (looked up on the worker)."""
        if tok is self.tok:
            return
        self.tok, self.spec = tok, spec
        self.templates = []
        self.jobs.cancel("render")
        if tok is None:
            self._fill_templates([])
            return
        self.jobs.submit(
            "templates",
            templates_for,
            tok,
            spec or None,
            on_returned=lambda found: self._fill_templates(found, tok),
            on_errored=lambda exc: self._template_lookup_failed(exc, tok),
        )

    def set_messages(self, messages: Sequence[Mapping[str, Any]] | Any, *, reply_header: bool | None = None) -> None:
        """Replace the conversation (a list of messages, or a record holding one); ``reply_header``
        sets "Reply header" too (a dataset's record is counted without one)."""
        if reply_header is not None:
            self.generation_box.blockSignals(True)  # one rendering, below
            self.generation_box.setChecked(reply_header)
            self.generation_box.blockSignals(False)
        msgs = conversation_of(messages) if not isinstance(messages, (list, tuple)) else list(messages)
        for row in list(self._rows):
            self._remove(row, render=False)
        given = [dict(m) for m in msgs or []]
        self._rest = given[MAX_ROWS:]
        for m in given[:MAX_ROWS]:
            content = m.pop("content", None)
            text = content if isinstance(content, str) else "\n".join(message_texts({"content": content}))
            row = self.add_message(str(m.pop("role", "user")), text, render=False)
            row.extra = m  # what else the message holds (name, tool calls...) goes to the template too
        self._show_rest()
        self._changed()

    def messages(self) -> list[dict[str, Any]]:
        return [row.message() for row in self._rows] + [dict(m) for m in self._rest]

    def _show_rest(self) -> None:
        n = len(self._rest)
        self.rest_label.setText(
            f"… and {n:,} more message{'s' if n != 1 else ''}: counted and shown in the tokens below, not listed here"
            if n
            else ""
        )
        self.rest_label.setVisible(bool(n))
        self.add_button.setEnabled(not n)  # a new message would go after the ones not listed
        self.add_button.setToolTip("Open a shorter conversation to add messages" if n else "Add a message at the end")

    def add_message(self, role: str | None = None, content: str = "", *, render: bool = True) -> MessageRow:
        if role is None:  # alternate after the last one
            last = self._rows[-1].message()["role"] if self._rows else "assistant"
            role = "assistant" if last in ("user", "tool") else "user"
        row = MessageRow(role, content)
        row.changed.connect(self._changed)
        row.removeRequested.connect(self._remove)
        self.rows_layout.insertWidget(len(self._rows), row)
        self._rows.append(row)
        if render:
            self._changed()
            row.editor.setFocus()
        return row

    def rows(self) -> list[MessageRow]:
        return list(self._rows)

    def template(self) -> ChatTemplate | None:
        i = self.template_box.currentIndex()
        return self.templates[i] if 0 <= i < len(self.templates) else None

    def is_busy(self) -> bool:
        return self.jobs.pending() or self._timer.isActive() or self._pending is not None

    # -- rendering -------------------------------------------------------------------------------

    def _fill_templates(self, templates: list[ChatTemplate], tok: Tokenizer | None = None) -> None:
        self.templates = list(templates)
        self._templates_of = tok
        self.template_box.blockSignals(True)
        self.template_box.clear()
        for t in self.templates:
            name = t.name or "chat template"
            self.template_box.addItem(
                name if not t.origin or t.origin.startswith("built in") else f"{name} ({t.origin})"
            )
            self.template_box.setItemData(self.template_box.count() - 1, t.origin, Qt.ItemDataRole.ToolTipRole)
        self.template_box.addItem(NO_TEMPLATE)
        self.template_box.setItemData(
            self.template_box.count() - 1, "The messages joined by newlines", Qt.ItemDataRole.ToolTipRole
        )
        self.template_box.setCurrentIndex(0)
        self.template_box.blockSignals(False)
        self._note = ""
        if not self.templates and self.tok is not None:
            self._note = (
                f"{self.tok.name or 'This tokenizer'} has no chat template (none beside or inside its "
                "file): the messages are joined by newlines."
            )
        self._say(self._note, "note" if self._note else None)
        self.render_conversation()

    def _template_lookup_failed(self, exc: BaseException, tok: Tokenizer) -> None:
        self._fill_templates([], tok)
        self._say(f"Could not look for a chat template: {describe_error(exc)}", "error")

    def _changed(self) -> None:
        self._timer.start()

    def _remove(self, row: MessageRow, render: bool = True) -> None:
        if row in self._rows:
            self._rows.remove(row)
            row.setParent(None)
            row.deleteLater()
            if render:
                self._changed()

    def render_conversation(self) -> None:
        """Render and encode the conversation on the worker (the newest edit wins)."""
        self._timer.stop()
        if self.tok is None or self._templates_of is not self.tok:
            return  # its templates are being looked up; rendered when they come
        try:
            variables = parse_variables(self.variables_edit.text())
        except ValueError as exc:
            self.jobs.cancel("render")
            self._say(f"Template variables: {exc}", "error")
            self.failed.emit(f"Template variables: {exc}")
            return
        self.jobs.submit(
            "render",
            render_and_encode,
            self.tok,
            self.template(),
            self.messages(),
            self.generation_box.isChecked(),
            variables,
            on_returned=self._show,
            on_errored=self._render_failed,
        )

    def _render_failed(self, exc: BaseException) -> None:
        self._say(f"The template refuses this conversation: {describe_error(exc)}", "error")
        self.failed.emit(describe_error(exc))

    def _show(self, got: tuple[str, Tokenizer, EncodedChat]) -> None:
        self._pending = got
        # from the timer, as each next few fonts are: started here and fired in the same turn,
        # it looked two turns' worth of fonts up in one
        self._glyphs.start()

    def _show_pending(self) -> None:
        """Show the newest rendering once the fonts know its characters: a few fonts are looked
        up per event-loop turn (the example's emoji sent the first paint of the tokens through
        every font of the system in one turn)."""
        got = self._pending
        if got is None:
            return
        font = self.token_view.document().defaultFont()
        if not learn_glyphs_opening(got[2].rendered.text, font, opens=FONTS_PER_TURN):
            self._glyphs.start()
            return
        self._pending = None
        label, reader, e = got
        self.result = e
        c = e.count
        self._say(self._note, "note" if self._note else None)
        for i, row in enumerate(self._rows):
            row.set_count(c.per_message[i] if i < len(c.per_message) else None, i in c.missing)
        self.total_label.setText(f"{c.total:,} tokens")
        parts = [f"{role} {n:,}" for role, n in c.by_role().items()]
        self.breakdown.setText(
            f"{label} · " + " · ".join([*parts, f"template {c.overhead:,}"]) + f" · {len(e.rendered.text):,} characters"
        )
        view = self.token_view
        if view.text() != e.rendered.text:
            view.setPlainText(e.rendered.text)
        view.set_encoding(reader, e.encoding)
        self.rendered.emit(e)

    def _say(self, text: str, tone: str | None) -> None:
        self.status.setText(text)
        self.status.set_tone(tone)
        self.status.setVisible(bool(text))


def warm_up() -> None:
    """Import the template engine ahead of the panel's first open (the window's start-up worker
    calls it): imported by the first render, it held the interpreter beside the panel's first paint."""
    prepare_engine()


def make_panel(host: PanelContext) -> ChatView:
    """The view the window docks (the first time it is shown): on the window's current tokenizer,
    in the window's token colours and layers (not its font)."""
    reg, look = host.window.registry, host.window.appearance
    view = ChatView()

    def follow(tok: Tokenizer | None) -> None:
        view.set_tokenizer(tok, reg.spec_of(tok) if tok is not None else "")

    def style() -> None:
        view.token_view.set_layers(look.layers)
        view.token_view.set_token_palette(look.token_palette)

    reg.currentChanged.connect(follow)
    view.after_first_paint(lambda: follow(reg.current()))
    look.changed.connect(style)
    style()
    view.token_view.tokenClicked.connect(lambda i: view.token_view.select_token(i, scroll=False))
    return view
