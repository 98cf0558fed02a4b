"""A tokenizer added to a long open text colours what the panes show first, not the text from its top."""

from __future__ import annotations

from tests.gui.conftest import wait_idle


def _visible_range(view) -> tuple[int, int]:
    """The UTF-16 positions of the first and last character the view shows."""
    top = view.cursorForPosition(view.viewport().rect().topLeft()).position()
    bottom = view.cursorForPosition(view.viewport().rect().bottomRight()).position()
    return top, bottom


def test_a_new_tokenizer_colours_the_visible_part_of_a_long_text_first(qtbot, window):
    from bpeinspect.gui.window.encoder import BATCH

    window.resize(1024, 700)
    window.open_tokenizer("cl100k_base")
    wait_idle(qtbot, window)
    line = "the line {} of a long text, with words and numbers 12345 and ünïcödé\n"
    text = "".join(line.format(i) for i in range(4 * BATCH // len(line)))  # several batches of the encoder
    window.set_text(text)
    wait_idle(qtbot, window, timeout=120_000)
    first = window.panes.panes()[0].view
    bar = first.verticalScrollBar()
    bar.setValue(bar.maximum() * 3 // 4)  # well past the first batch
    qtbot.wait(50)

    shown: list[tuple[bool, bool, int]] = []

    def on_encoded(tok, result) -> None:
        if tok.name != "r50k_base" or shown:
            return
        pane = window.panes.pane_of(tok)
        view = pane.view
        top, bottom = _visible_range(view)
        parts = view.parts
        covered = parts is not None and parts.part_at_u16(top) is not None and parts.part_at_u16(bottom) is not None
        shown.append((covered, view.verticalScrollBar().value() == bar.value(), top))

    window.encoder.encoded.connect(on_encoded)
    window.open_tokenizer("r50k_base")
    qtbot.waitUntil(lambda: bool(shown), timeout=120_000)
    covered, same_place, top = shown[0]
    assert top > BATCH  # the viewport is far from the text's top
    assert same_place  # the new pane shows the same place as the others
    assert covered  # and its first colours are there
    wait_idle(qtbot, window, timeout=120_000)
    view = window.panes.pane_of(window.registry.find("r50k_base")).view
    assert view.enc.ids == window.registry.find("r50k_base").encode(text, allowed_special="all")
