"""The chat panel: messages rendered by the tokenizer's template into the token sequence shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

from bpeinspect.core import load_tokenizer
from bpeinspect.core.chat import chat_format, encode_chat, render_chat, templates_for
from bpeinspect.gui.panels.chat import EXAMPLE, NO_TEMPLATE, ChatView
from tests.gui.conftest import stand_in_fonts, wait_idle, wait_jobs


def core(tok, messages, generation=True, template_index=0):
    found = templates_for(tok)
    fmt = chat_format(tok, found[template_index] if found else None)
    return encode_chat(fmt, render_chat(fmt, messages, add_generation_prompt=generation))


def settle(qtbot, view: ChatView) -> None:
    """Until the edits are rendered: the view's ``rendered`` or ``failed`` once it is busy."""
    if view.is_busy():
        with qtbot.waitSignal(view.rendered, timeout=10000) as blocker:
            blocker.connect(view.failed)
    wait_jobs(qtbot, view.jobs)


def make(qtbot, spec: str) -> ChatView:
    view = ChatView()
    qtbot.addWidget(view)
    view.set_tokenizer(load_tokenizer(spec), spec)
    settle(qtbot, view)
    return view


def test_the_example_is_shown_as_the_model_reads_it(qtbot):
    view = make(qtbot, "o200k_base")
    want = core(view.tok, list(EXAMPLE))
    assert view.template_box.currentText() == "ChatML (gpt-4o)"
    assert view.template_box.itemText(view.template_box.count() - 1) == NO_TEMPLATE
    assert view.result is not None and list(view.result.encoding.ids) == list(want.encoding.ids)
    assert view.token_view.text() == want.rendered.text
    assert view.token_view.enc is view.result.encoding
    assert view.token_view.tok.token_bytes(200264) == b"<|im_start|>"  # the reader knows ChatML's tokens
    assert [r.count_label.text() for r in view.rows()] == [f"{n:,} tokens" for n in want.count.per_message]
    assert view.total_label.text() == f"{want.count.total:,} tokens"
    assert f"template {want.count.overhead:,}" in view.breakdown.text()


def test_editing_adding_and_removing_messages_renders_again(qtbot):
    view = make(qtbot, "cl100k_base")
    rows = view.rows()
    rows[1].editor.setPlainText("Count this: tokenization tokenization")
    settle(qtbot, view)
    new = view.add_message()
    assert new.role_box.currentText() == "user"  # after the assistant's
    new.editor.setPlainText("And this?")
    rows[0].remove_button.click()
    settle(qtbot, view)
    messages = view.messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    want = core(view.tok, messages)
    assert list(view.result.encoding.ids) == list(want.encoding.ids)
    assert view.rows()[2].count_label.text() == f"{want.count.per_message[2]:,} tokens"
    view.generation_box.setChecked(False)
    settle(qtbot, view)
    assert view.token_view.text() == core(view.tok, messages, generation=False).rendered.text
    assert not view.token_view.text().endswith("<|im_start|>assistant<|im_sep|>")
    view.template_box.setCurrentIndex(1)  # gpt-3.5-turbo's form
    settle(qtbot, view)
    assert view.token_view.text() == core(view.tok, messages, generation=False, template_index=1).rendered.text


def test_a_tokenizer_without_template_joins_the_messages_and_says_so(qtbot):
    view = make(qtbot, "gpt2")
    assert view.template_box.count() == 1 and view.template_box.currentText() == NO_TEMPLATE
    assert "no chat template" in view.status.text()
    assert view.token_view.text() == "\n".join(m["content"] for m in EXAMPLE)
    c = view.result.count
    assert c.total == len(view.tok.encode(view.token_view.text()))


def test_the_template_choice_shows_whole_in_a_narrow_dock(qtbot):
    view = make(qtbot, "gpt2")
    view.resize(410, 600)
    view.show()
    qtbot.waitExposed(view)
    box = view.template_box
    opt = QStyleOptionComboBox()
    box.initStyleOption(opt)
    field = box.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, box
    )
    assert box.fontMetrics().horizontalAdvance(box.currentText()) <= field.width()  # not "no template (messag"
    assert "newlines" in box.itemData(box.currentIndex(), Qt.ItemDataRole.ToolTipRole)


def test_a_record_opens_as_messages(qtbot):
    view = make(qtbot, "o200k_base")
    view.set_messages({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]})
    settle(qtbot, view)
    assert view.messages() == [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert view.result.count.per_message == (1, 1)
    named = [
        {"role": "user", "name": "bob", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "you"}]}
    ]
    view.set_messages(named)
    settle(qtbot, view)
    assert view.messages() == [{"role": "user", "name": "bob", "content": "hi\nyou"}]
    assert view.token_view.text().startswith("<|im_start|>bob<|im_sep|>hi\nyou")  # the name stands in for the role


def test_the_panel_follows_the_current_tokenizer(qtbot, panel_window):
    win = panel_window
    win.open_tokenizer("o200k_base")
    win.open_tokenizer("cl100k_base")
    wait_idle(qtbot, win)
    view = win.panels.show("chat")
    qtbot.waitUntil(lambda: view.tok is not None, timeout=5000)  # (from its first paint on)
    settle(qtbot, view)
    assert view.tok is win.registry.current()
    toks = {t.name: t for t in (win.registry.find("o200k_base"), win.registry.find("cl100k_base"))}
    for name, label in (("cl100k_base", "ChatML (gpt-4)"), ("o200k_base", "ChatML (gpt-4o)")):
        win.registry.set_current(toks[name])
        settle(qtbot, view)
        assert view.tok is toks[name] and view.template_box.currentText() == label
        assert list(view.result.encoding.ids) == list(core(toks[name], view.messages()).encoding.ids)


def test_the_panel_starts_its_first_render_only_after_its_first_paint(qtbot, panel_window):
    """The first render's worker ran Python beside the window painting the new panel, which
    waited for the interpreter: 50-60 ms with a 10 MB text. It starts in a turn after that paint."""
    from PySide6.QtCore import QEvent, QObject

    from bpeinspect.gui.turns import pending

    win = panel_window
    win.open_tokenizer("o200k_base")
    wait_idle(qtbot, win)
    at_paint = []

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint and not at_paint:
                at_paint.append((view.tok, view.jobs.is_busy()))
            return False

    watcher = Paints()
    view = win.panels.show("chat")
    view.installEventFilter(watcher)
    assert view.tok is None and not view.jobs.is_busy()  # nothing started as it was made
    qtbot.waitUntil(lambda: bool(at_paint) and not pending(), timeout=5000)
    assert at_paint[0] == (None, False)  # nor before its first paint
    settle(qtbot, view)
    assert view.tok is win.registry.current() and view.result is not None


def test_a_long_conversation_lists_its_first_messages_and_counts_all(qtbot):
    from bpeinspect.gui.panels.chat import MAX_ROWS

    view = make(qtbot, "o200k_base")
    long = [{"role": ("user", "assistant")[i % 2], "content": f"message {i}"} for i in range(MAX_ROWS + 30)]
    view.set_messages(long)
    settle(qtbot, view)
    assert len(view.rows()) == MAX_ROWS and view.messages() == long
    assert "30 more messages" in view.rest_label.text() and not view.add_button.isEnabled()
    assert list(view.result.encoding.ids) == list(core(view.tok, long).encoding.ids)
    view.set_messages(long[:3])
    settle(qtbot, view)
    assert len(view.rows()) == 3 and view.add_button.isEnabled() and not view.rest_label.isVisibleTo(view)


def test_rendering_and_encoding_run_on_the_worker(qtbot, monkeypatch):
    import threading

    from bpeinspect.gui.panels import chat as chat_module

    threads = []
    real = chat_module.render_and_encode

    def spy(*args):
        threads.append(threading.current_thread())
        return real(*args)

    monkeypatch.setattr(chat_module, "render_and_encode", spy)
    view = make(qtbot, "o200k_base")
    view.rows()[0].editor.setPlainText("edited")
    settle(qtbot, view)
    assert threads and all(t is not threading.main_thread() for t in threads)


def test_template_variables_reach_the_template_and_bad_ones_are_said(qtbot):
    from bpeinspect.core.chat import ChatTemplate

    view = make(qtbot, "o200k_base")
    source = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
              "{% if add_generation_prompt %}<|im_start|>assistant\n{% if not enable_thinking %}<think>\n\n</think>\n\n"
              "{% endif %}{% endif %}{% if tools %}{{ tools | length }} tools{% endif %}")  # fmt: skip
    view._fill_templates([ChatTemplate(source, name="thinking")], view.tok)
    settle(qtbot, view)
    assert view.token_view.text().endswith("<think>\n\n</think>\n\n")
    view.variables_edit.setText('enable_thinking=true, tools=[{"type": "function"}, {"type": "function"}]')
    settle(qtbot, view)
    assert view.token_view.text().endswith("<|im_start|>assistant\n2 tools") and not view.status.isVisibleTo(view)
    fmt = chat_format(view.tok, view.template())
    want = render_chat(fmt, view.messages(), enable_thinking=True, tools=[{"type": "function"}] * 2)
    assert view.token_view.text() == want.text
    shown = view.result
    for bad, said in (
        ("enable_thinking", "give NAME=VALUE"),
        ("messages=[]", "set by the renderer"),
        ("1x=2", "not a variable name"),
    ):
        view.variables_edit.setText(bad)
        settle(qtbot, view)
        assert (
            view.status.isVisibleTo(view) and said in view.status.text() and "Template variables" in view.status.text()
        )
        assert view.result is shown  # the last good rendering stays
    view.variables_edit.clear()
    settle(qtbot, view)
    assert not view.status.isVisibleTo(view) and view.token_view.text().endswith("</think>\n\n")


def test_a_template_that_never_ends_is_stopped_and_said_in_one_line(qtbot, monkeypatch):
    from bpeinspect.core.chat import ChatTemplate, bounds

    monkeypatch.setattr(bounds, "TIME_LIMIT", 1.0)
    view = make(qtbot, "o200k_base")
    origin = "tokenizer_config.json beside the file"
    endless = "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}"
    for source, said in (("{{ 10**100000000 }}", "refused"), (endless, "ran longer than 1 s")):
        view._fill_templates([ChatTemplate(source, origin=origin, name="hostile")], view.tok)
        settle(qtbot, view)
        assert view.status.isVisibleTo(view), source
        assert origin in view.status.text() and said in view.status.text() and "\n" not in view.status.text()


def test_the_first_rendering_looks_its_characters_up_a_few_fonts_per_turn(qtbot, monkeypatch):
    """The example's emoji and Japanese sent the first paint of the tokens through every font of
    the system in one turn: the view now looks a few fonts up per turn before it shows the
    tokens, and shows the same ones."""
    import time

    from PySide6.QtWidgets import QApplication

    from bpeinspect.gui.panels import chat

    opened = stand_in_fonts(monkeypatch, 40)
    view = ChatView()
    qtbot.addWidget(view)
    view.resize(700, 800)
    view.show()
    view.set_tokenizer(load_tokenizer("o200k_base"), "o200k_base")
    per_turn = []
    end = time.monotonic() + 30
    while view.is_busy() and time.monotonic() < end:
        before = len(opened)
        QApplication.processEvents()
        per_turn.append(len(opened) - before)
        time.sleep(0.002)
    for _ in range(5):  # the paints after the text is in
        before = len(opened)
        QApplication.processEvents()
        per_turn.append(len(opened) - before)
    want = core(view.tok, list(EXAMPLE))
    assert view.token_view.text() == want.rendered.text
    assert list(view.result.encoding.ids) == list(want.encoding.ids)
    assert sorted(opened) == list(range(40))  # every font looked at once, in the end
    assert max(per_turn) <= chat.FONTS_PER_TURN
