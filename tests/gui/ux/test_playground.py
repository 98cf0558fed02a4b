"""What playground users expect: a big token count and one character count, a token
list with each token's text next to its id (copied as text, ids or JSON pairs), and a calm
first screen."""

from __future__ import annotations

import json

from PySide6.QtGui import QGuiApplication

from bpeinspect.gui.app import DEFAULT_TOKENIZERS
from bpeinspect.gui.window.main_window import LAYER_ACTIONS
from tests.gui.conftest import wait_idle


def test_big_token_count_and_one_character_count(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.open_tokenizer("r50k_base")
    window.set_text("hello world 🎉")
    wait_idle(qtbot, window)
    badge = window.count_badge
    assert badge.tokens.text() == "5 tokens" and badge.chars.text() == "13 characters"
    assert badge.tokens.font().pointSizeF() > window.status_line.font().pointSizeF() * 1.4
    window.registry.set_current(window.registry.find("r50k_base"))
    r50k = len(window.registry.current().encode("hello world 🎉"))
    assert badge.tokens.text() == f"{r50k} tokens"


def test_token_list_shows_text_next_to_id_and_copies(qtbot, panel_window):
    win = panel_window
    win.open_tokenizer("cl100k_base")
    win.set_text("hello world 🎉")
    wait_idle(qtbot, win)
    view = win.panels.view("tokens")
    model = view.model
    qtbot.waitUntil(lambda: model.rowCount() == 5, timeout=5000)  # a frame after the panes
    rows = [(model.index(r, 1).data(), model.index(r, 2).data()) for r in range(model.rowCount())]
    assert rows == [("15339", "hello"), ("1917", "␣world"), ("11410", "␣<f0 9f>"), ("236", "<8e>"), ("231", "<89>")]
    def copied(copy) -> str:
        with qtbot.waitSignal(view.copier.done, timeout=10000):
            copy()
        return QGuiApplication.clipboard().text()

    assert copied(view.copy_ids) == "15339, 1917, 11410, 236, 231"
    assert copied(view.copy_text).splitlines()[:2] == ["hello", "␣world"]
    pairs = json.loads(copied(view.copy_pairs))
    assert pairs[:2] == [{"id": 15339, "token": "hello"}, {"id": 1917, "token": " world"}]
    view.select(1)
    # the selected rows only
    assert json.loads(copied(view.copy_pairs)) == [{"id": 1917, "token": " world"}]
    view.tokenClicked.emit(0)  # a click in the list selects the token everywhere
    assert win.panes.panes()[0].view.selected == 0 and win.ids.view.selected == 0
    win.select_token(win.registry.current(), 1)  # and a click elsewhere selects it in the list
    qtbot.waitUntil(lambda: view.selected_rows() == [1], timeout=5000)  # in the turn after the click's


def test_a_calm_first_screen(qtbot, panel_window):
    assert DEFAULT_TOKENIZERS == ["o200k_base"]  # one pane
    assert next(on for name, _t, _k, on, _b in LAYER_ACTIONS if name == "whitespace") is False
    win = panel_window
    assert not win.appearance.layers.whitespace
    add = win.toolbar.findChild(object, "addTokenizer")
    assert add is not None and add.isVisible() and "Add tokenizer" in add.text()  # one click away
    win.open_tokenizer("o200k_base")
    wait_idle(qtbot, win)
    pane = win.panes.panes()[0]
    assert not pane.pin.isVisible()  # alone, it compares with nothing
    win.open_tokenizer("cl100k_base")
    wait_idle(qtbot, win)
    assert all(p.pin.isVisible() for p in win.panes.panes())
    assert win.panels.views["tokens"].isVisible()  # the token list is the panel in front


def test_a_keystroke_joins_no_whole_encoding(qtbot, panel_window, monkeypatch):
    """The count, the status bar, the token list and the ids read the window's encoding a
    segment at a time: a keystroke in a long text never joins the whole encoding."""
    from bpeinspect.core.live_text import LiveEncoding

    win = panel_window
    win.panels.show("tokens")
    win.open_tokenizer("o200k_base")
    win.open_tokenizer("r50k_base")
    win.set_text("The quick brown fox jumps over the lazy dog. 中文 🎉\n" * 2000)  # ~100k characters
    wait_idle(qtbot, win)
    o200k = win.registry.find("o200k_base")
    win.select_token(o200k, 5)
    joined = []
    real = LiveEncoding.encoding
    monkeypatch.setattr(LiveEncoding, "encoding", lambda self: joined.append(self.tok.name) or real(self))
    cur = win.panes.panes()[0].view.textCursor()
    cur.setPosition(60_000)
    cur.insertText("x")
    wait_idle(qtbot, win)
    qtbot.wait(50)  # the timers that show what changed
    r = win.registry.result(o200k)
    assert win.count_badge.tokens.text() == f"{len(r.enc):,} tokens"
    assert win.panels.view("tokens").model.rowCount() == len(r.enc)
    assert joined == []
