"""What a vocabulary file does not say, chosen by the user: its split rule and special tokens.

A rank file (``.tiktoken``, Llama's ``tokenizer.model``) that bpeinspect does not recognise
stores neither, and a GGUF file may name a pre-tokenizer bpeinspect does not know. The
dialog lets the user pick a preset split rule or write a regex (with a live preview on the
window's text) and list special tokens, one per line as ``TEXT`` or ``TEXT=ID``; the core
applies them (``formats.load_path(path, pattern=..., special_tokens=...)`` for a file that
would not open, ``formats.with_settings(tok, ...)`` for an open tokenizer).

>>> dialog = VocabSettingsDialog(parent, "x.tiktoken", tok=tok)   # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from bpeinspect.core import PRESETS, SplitRule, Tokenizer, resolve_rule
from bpeinspect.core.io import first_free_id, special_tokens_from, with_settings
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.training.pattern import SAMPLE_TEXT, PatternChooser

SAMPLE_CHARS = 300  # of the window's text, for the preview
SHOWN_SPECIALS = 300  # special tokens listed in the box (Llama 4 has 2,048)
SETTINGS = {"pattern": "split rule", "special_tokens": "special tokens"}  # what a user may choose


def rule_text(rule: SplitRule) -> str | None:
    """What the chooser shows for ``rule``: a preset's name, else its regex (None: no splitting)."""
    if rule.name in PRESETS:
        return rule.name
    return rule.pattern


class VocabSettingsDialog(QDialog):
    """Split rule and special tokens for one vocabulary file (open already, or not yet)."""

    def __init__(
        self,
        parent: QWidget | None,
        what: str,
        *,
        tok: Tokenizer | None = None,
        why: str = "",
        sample: str = "",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Split rule and special tokens — {what}")
        self.tok = tok
        intro = QLabel(
            why
            or "A rank file stores neither its split rule nor its special tokens: choose them as the model "
            "uses them, or the encodings differ from the model's own tokenizer."
        )
        intro.setWordWrap(True)
        default = rule_text(tok.split_rule) if tok is not None else "cl100k"
        self.chooser = PatternChooser(
            self, default=default or "cl100k", allow_none=False, sample=sample[:SAMPLE_CHARS] or SAMPLE_TEXT
        )
        self.specials_edit = QPlainTextEdit()
        self.specials_edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.specials_edit.setPlaceholderText("one per line: <|endoftext|> (the next free id) or <|endoftext|>=100257")
        self.specials_edit.setMaximumHeight(8 * self.specials_edit.fontMetrics().lineSpacing())
        if tok is not None:
            listed = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
            self.specials_edit.setPlainText("\n".join(f"{s}={i}" for s, i in listed[:SHOWN_SPECIALS]))
            self._more = listed[SHOWN_SPECIALS:]
        else:
            self._more = []
        note = ToneLabel(tone="muted")
        note.setWordWrap(True)
        free = first_free_id(tok) if tok is not None else None
        note.setText(
            (f"{len(self._more):,} more special tokens are kept as they are. " if self._more else "")
            + (
                f"Tokens without an id take {free:,} and up."
                if free is not None
                else "Tokens without an id follow the vocabulary."
            )
        )
        self.message = ToneLabel(tone="error")
        self.message.setWordWrap(True)
        self.message.hide()
        form = QFormLayout()
        for label, widget in self.chooser.rows():
            form.addRow(label, widget)
        form.addRow("Special tokens", self.specials_edit)
        form.addRow("", note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addLayout(form)
        lay.addWidget(self.message)
        lay.addWidget(buttons)
        self.resize(640, 460)

    def pattern(self) -> SplitRule:
        """The chosen rule (``PatternError`` if the regex does not compile)."""
        return resolve_rule(self.chooser.pattern())

    def special_lines(self) -> list[str]:
        return [line.strip() for line in self.specials_edit.toPlainText().splitlines() if line.strip()]

    def special_tokens(self, n_vocab: int) -> dict[str, int]:
        """The table the user listed (plus those not shown in the box); new ones from ``n_vocab``."""
        table = special_tokens_from(self.special_lines(), n_vocab) or {}
        table.update({s: i for s, i in self._more if s not in table})
        return table

    def accept(self) -> None:
        if why := self.chooser.error():
            self.message.setText(f"Split pattern: {why}")
            self.message.show()
            return
        super().accept()


class VocabSettings(QObject):
    """The window's ways to the dialog: for an open tokenizer (the pane's "default split" badge,
    Tokenizers ▸ Split rule and special tokens…) and for a file that would not open without."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: VocabSettingsDialog | None = None  # the one shown last (tests read it)

    def ask_for(self, tok: Tokenizer | None) -> VocabSettingsDialog | None:
        """Choose ``tok``'s split rule and special tokens; it is replaced by the result."""
        win = self.window
        if tok is None:
            return None
        label = win.registry.label(tok)
        if not tok.byte_level:
            win.show_error(f"{label}: a SentencePiece-style tokenizer merges its own way; it takes no other split rule")
            return None
        dialog = VocabSettingsDialog(win, label, tok=tok, sample=win.live_text().head(SAMPLE_CHARS))
        dialog.accepted.connect(lambda: self._apply(tok, dialog))
        return self._show(dialog)

    def ask_for_path(self, path: str, why: str) -> VocabSettingsDialog:
        """``path`` would not open as it is (``why``): choose what it lacks, then open it."""
        win = self.window
        dialog = VocabSettingsDialog(
            win,
            Path(path).name,
            why=f"{why}\n\nChoose a split rule to open it.",
            sample=win.live_text().head(SAMPLE_CHARS),
        )

        def open_it() -> None:
            win.open_tokenizer(path, pattern=dialog.pattern(), special_tokens=dialog.special_lines() or None)

        dialog.accepted.connect(open_it)
        return self._show(dialog)

    def tell_defaults(self, tok: Tokenizer) -> None:
        """A notice of what the load of a file noted (a part it left out), and when the file left its
        split rule or special tokens to a default."""
        notices = list(tok.load_notes)
        assumed = [k for k, why in tok.assumed.items() if why != "chosen by the user" and k in SETTINGS]
        if assumed and tok.byte_level:
            what = " and ".join(SETTINGS[k] for k in assumed)
            notices.append(
                f"{self.window.registry.label(tok)}: the file does not say its {what}; a default is used. "
                "To choose: click “default split” on its pane, or Tokenizers ▸ Split rule and special tokens…"
            )
        if notices:
            self.window.show_message("\n".join(notices))

    def _show(self, dialog: VocabSettingsDialog) -> VocabSettingsDialog:
        self.dialog = dialog
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()  # window-modal, and the event loop goes on
        return dialog

    def _apply(self, tok: Tokenizer, dialog: VocabSettingsDialog) -> None:
        win = self.window
        rule = dialog.pattern()
        specials = dialog.special_tokens(first_free_id(tok))
        settings: dict[str, Any] = {"pattern": rule}
        if specials != tok.special_tokens:
            settings["special_tokens"] = specials
        label = win.registry.label(tok)

        def done(new: Tokenizer) -> None:
            win.registry.replace(tok, new)
            win.show_message(
                f"{label}: split rule {rule.name or 'of your regex'}, {len(new.special_tokens):,} special tokens (your choice)."
            )

        win.jobs.submit(
            ("settings", id(tok)),
            with_settings,
            tok,
            **settings,
            on_returned=done,
            on_errored=lambda exc: win.show_error(f"{label}: {exc}"),
        )
