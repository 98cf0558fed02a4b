"""The status line: only the current tokenizer's figures."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from bpeinspect.core import load_tokenizer, tables
from tests.gui.conftest import wait_idle


def test_status_bar_shows_only_the_current_tokenizers_figures(qtbot, window):
    window.open_tokenizer("o200k_base")
    window.open_tokenizer("cl100k_base")
    window.set_text("Hello there, general Kenobi")
    wait_idle(qtbot, window)
    o200k = window.registry.find("o200k_base")
    cl100k = window.registry.find("cl100k_base")
    window.encoder.last = window.registry.result(cl100k)  # another tokenizer's encode is the latest of all
    window.registry.set_current(cl100k)
    window.registry.set_current(o200k)
    status = window.status_line.text()
    assert status.startswith("o200k_base:") and "cl100k_base" not in status
    r = window.registry.result(o200k)
    assert f"{r.seconds * 1000:.1f} ms" in status


def test_a_long_tokenizer_name_is_shortened_in_the_ids_title_and_does_not_widen_the_text(qtbot, window):
    """A 40-character name made the ids box ask for 541 of the text area's 687 px at 1024x700."""
    window.resize(1024, 700)
    window.show()
    qtbot.waitExposed(window)
    # a copy of its own: renaming the shared built-in would rename it for every later caller
    tok = tables.build(tables.parts_of(load_tokenizer("cl100k_base")))
    tok.name = "small"
    window.registry.add(tok, "trained:small", shown=True)
    window.registry.set_current(tok)
    window.set_text("hello world")
    wait_idle(qtbot, window)
    short = window.ids.minimumSizeHint().width()
    long_name = "a-rather-long-organisation/tokenizer-v2x"
    assert len(long_name) == 40
    window.registry.rename(tok, long_name)
    window.set_text("hello world again")
    wait_idle(qtbot, window)
    qtbot.wait(20)
    title = window.ids.title
    assert window.ids.minimumSizeHint().width() <= short + 20  # the name does not widen it
    assert long_name in title.toolTip() and long_name in title.text()  # whole in the tooltip
    shown = QLabel.text(title)  # what is drawn: shortened in the middle when it does not fit
    assert title.fontMetrics().horizontalAdvance(shown) <= title.width()


def test_the_ids_title_follows_a_rename_at_once(qtbot, window):
    """A renamed tokenizer's ids title showed its old name until the text was encoded again."""
    tok = tables.build(tables.parts_of(load_tokenizer("gpt2")))  # a copy: the built-in keeps its name
    tok.name = "before"
    window.registry.add(tok, "trained:before", shown=True)
    window.registry.set_current(tok)
    window.set_text("hello world")
    wait_idle(qtbot, window)
    assert "before" in window.ids.title.toolTip() + window.ids.title.text()
    window.registry.rename(tok, "after the rename")
    assert "after the rename" in window.ids.title.text() and "before" not in window.ids.title.text()
