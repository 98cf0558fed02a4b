"""The status line: only the current tokenizer's figures."""

from __future__ import annotations

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
