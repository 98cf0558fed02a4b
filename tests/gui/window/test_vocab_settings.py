"""When a file's split rule or special tokens are unknown, the user chooses them in the app
(presets or an own regex, and special tokens)."""

from __future__ import annotations

import base64
import json

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QLabel

from bpeinspect.core.io.formats._common import bytes_to_token
from tests.gui.conftest import wait_idle, wait_jobs
from tests.paths import SHARED


def _unknown_rank_file(path):
    ranks = [bytes([b]) for b in range(256)] + [b"he", b"ll", b"hell", b"hello"]
    path.write_bytes(b"".join(base64.b64encode(t) + f" {i}\n".encode() for i, t in enumerate(ranks)))
    return path


def _click(widget):
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        QApplication.sendEvent(widget, QMouseEvent(kind, QPointF(2, 2), QPointF(2, 2), Qt.MouseButton.LeftButton,
                                                   Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))  # fmt: skip


def test_unknown_rank_file_gets_the_users_split_rule_and_specials(qtbot, window, tmp_path):
    path = _unknown_rank_file(tmp_path / "mine.tiktoken")
    window.open_tokenizer(str(path))
    window.set_text("hello world<|endoftext|>")
    wait_idle(qtbot, window)
    tok = window.registry.current()
    assert "assumed" not in tok.assumed.get("pattern", "chosen")  # loaded with a default ...
    assert "does not say its split rule and special tokens" in window.message.notice_text()  # ... and says so
    pane = window.panes.pane_of(tok)
    assert pane.settings_badge is not None and pane.settings_badge.text() == "default split"
    _click(pane.settings_badge)
    dialog = window.vocab_settings.dialog
    assert dialog is not None and dialog.isVisible()
    dialog.chooser.set_custom_pattern("(")  # a regex that does not compile is refused, with the reason
    dialog.accept()
    assert dialog.isVisible() and "Split pattern" in dialog.message.text()
    dialog.chooser.set_pattern("r50k")
    dialog.specials_edit.setPlainText("<|endoftext|>")
    dialog.accept()
    wait_jobs(qtbot, window.jobs)
    wait_idle(qtbot, window)
    new = window.registry.current()
    assert new is not tok and tok not in window.registry and len(window.registry) == 1
    assert new.split_rule.name == "r50k" and new.special_tokens == {"<|endoftext|>": 260}
    assert new.assumed == {"pattern": "chosen by the user", "special_tokens": "chosen by the user"}
    assert window.registry.result(new).enc.ids[-1] == 260  # the special token is cut out of the text
    assert window.panes.pane_of(new).settings_badge is None  # nothing left to a default


def test_gguf_with_unknown_pre_tokenizer_asks_for_a_split_rule(qtbot, window, tmp_path):
    from bpeinspect.core.io.formats import gguf as gguf_format
    from tests.core.io.formats.test_gguf import write_gguf

    src = SHARED / "vocabs" / "gpt2.gguf"
    with open(src, "rb") as f:
        meta = gguf_format.read_metadata(f, src)
    path = write_gguf(tmp_path / "odd.gguf", meta, pre="no-such-pre")
    window.set_text("hello world")
    window.open_tokenizer(str(path))
    qtbot.waitUntil(lambda: window.vocab_settings.dialog is not None, timeout=30000)
    assert "no-such-pre" in window.message.error_text() and len(window.registry) == 0
    dialog = window.vocab_settings.dialog
    assert any("no-such-pre" in label.text() for label in dialog.findChildren(QLabel))  # it says why
    dialog.chooser.set_pattern("r50k")
    dialog.accept()
    qtbot.waitUntil(lambda: len(window.registry) == 1, timeout=30000)
    wait_idle(qtbot, window)
    tok = window.registry.current()
    assert tok.split_rule.name == "r50k" and tok.encode("hello world") == [31373, 995]


def test_what_a_load_noted_is_shown_in_the_message_bar(qtbot, window, tmp_path):
    encoder = {bytes_to_token(bytes([b])): b for b in range(256)} | {"hi": 256, "ho": 257}
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\nh i\n", encoding="utf-8")  # nothing makes "ho"
    window.open_tokenizer(str(tmp_path))
    wait_idle(qtbot, window)
    assert window.registry.current().n_vocab == 258
    assert "1 tokens of encoder.json are made by no merge" in window.message.notice_text()
