"""The token list follows every keystroke without starting over: an edit adds or
takes rows and says the rest changed, where a model reset would make the view start over;
and a paint reads a segment's tokens once, not once per cell and role."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from bpeinspect.core.live_text import LiveEncoding
from bpeinspect.gui.panels.token_list import COL_ID, COL_TOKEN, TokenListModel, token_text
from tests.gui.conftest import wait_idle

TEXT = "The quick brown fox jumps over the lazy dog. 中文 🎉\n" * 400


def _rows(model: TokenListModel) -> list[tuple[str, str]]:
    return [(model.index(r, COL_ID).data(), model.index(r, COL_TOKEN).data()) for r in range(model.rowCount())]


def test_a_keystroke_updates_the_token_list_in_place(qtbot, panel_window):
    win = panel_window
    win.panels.show("tokens")
    win.open_tokenizer("cl100k_base")
    win.set_text(TEXT)
    wait_idle(qtbot, win)
    view = win.panels.view("tokens")
    model = view.model
    qtbot.waitUntil(lambda: model.rowCount() == len(win.registry.result(win.registry.current()).enc), timeout=5000)
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    tok = win.registry.current()
    cur = win.panes.panes()[0].view.textCursor()
    for at, typed in ((9000, " x"), (9000, "yz"), (30, "\n")):
        cur.setPosition(at)
        cur.insertText(typed)
        wait_idle(qtbot, win)
        want = [(str(i), token_text(tok, i)) for i in tok.encode_with_offsets(win.text()).ids]
        qtbot.waitUntil(lambda want=want: _rows(model) == want, timeout=5000)
    cur.setPosition(9000)
    cur.setPosition(9004, cur.MoveMode.KeepAnchor)
    cur.removeSelectedText()  # fewer tokens
    wait_idle(qtbot, win)
    want = [(str(i), token_text(tok, i)) for i in tok.encode_with_offsets(win.text()).ids]
    qtbot.waitUntil(lambda: _rows(model) == want, timeout=5000)
    assert resets == []  # not once started over


def test_a_keystroke_reaches_the_token_list_after_the_panes(qtbot, panel_window):
    """The panes show a keystroke's colours in its own turn; the list's repaint (several ms of
    Qt's item painting) follows a frame later, so it does not hold the panes back."""
    win = panel_window
    win.panels.show("tokens")
    win.open_tokenizer("cl100k_base")
    win.set_text(TEXT)
    wait_idle(qtbot, win)
    model = win.panels.view("tokens").model
    qtbot.waitUntil(lambda: model.rowCount() == len(win.registry.result(win.registry.current()).enc), timeout=5000)
    before = model.rowCount()
    cur = win.panes.panes()[0].view.textCursor()
    cur.setPosition(9000)
    cur.insertText(" a b c")  # encoded in the change itself: more tokens
    now = len(win.registry.result(win.registry.current()).enc)
    assert now > before and model.rowCount() == before  # not in this turn
    qtbot.waitUntil(lambda: model.rowCount() == now, timeout=5000)


def test_a_screenful_of_cells_reads_each_segment_once(qtbot, panel_window, monkeypatch):
    win = panel_window
    win.open_tokenizer("cl100k_base")
    win.set_text(TEXT * 3)  # many segments
    wait_idle(qtbot, win)
    model = win.panels.view("tokens").model
    live = win.registry.result(win.registry.current()).enc
    assert isinstance(live, LiveEncoding) and live.n_parts() > 3
    looked_up = []
    real = LiveEncoding.part_of_token
    monkeypatch.setattr(LiveEncoding, "part_of_token", lambda self, i: looked_up.append(i) or real(self, i))
    first = live.part(2).token - 20  # a screenful across the start of a segment
    roles = [r.value for r in Qt.ItemDataRole if r.value < 20]
    for r in range(first, first + 40):
        for c in range(model.columnCount()):
            for role in roles:
                model.data(model.index(r, c), role)
    assert len(looked_up) <= 2  # one per segment the rows lie in


def test_a_long_tokenizer_name_does_not_widen_the_tokens_panel(qtbot, cl100k):
    """Its title was one line as wide as "Tokens — name (count)" beside three buttons: a
    Hub name widened the dock past a third of a 1024 px window."""
    from bpeinspect.gui.panels.token_list import TokenList
    from bpeinspect.gui.window.docks import dock_width

    w = TokenList()
    qtbot.addWidget(w)
    w.show()
    enc = cl100k.encode_with_offsets("hello world " * 2000)
    w.set_encoding(cl100k, enc, "cl100k_base")
    qtbot.wait(20)
    short = w.minimumSizeHint().width()
    assert short <= dock_width(1024)
    w.set_encoding(cl100k, enc, "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B · trained 52,060")
    qtbot.wait(20)  # the layout asks its widgets again
    assert w.minimumSizeHint().width() <= dock_width(1024)
    assert w.title.text() == f"deepseek-ai/DeepSeek-R1-Distill-Qwen-32B · trained 52,060 ({len(enc):,})"
    w.resize(dock_width(1024), 400)
    qtbot.wait(20)
    shown = QLabel.text(w.title)  # what it draws, in the room it has
    assert "…" in shown and shown.endswith(f"({len(enc):,})")  # the count stays in sight
    assert w.title.toolTip() == w.title.text()  # and the whole name in its tooltip
