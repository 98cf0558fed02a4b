"""One reference everywhere; panes that never grow the window past
the screen; training results in the picker, not the overlay; the merge tree and the selection
stay true when the tokenizer or the text changes."""

from __future__ import annotations

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.panels.compare import CompareView
from bpeinspect.gui.panels.merge_tree import MergeTreeBrowser
from tests.gui.conftest import wait_idle


def _open(qtbot, win, *names, text="Hello tokenization world, 日本語 🎉"):
    for name in names:
        win.open_tokenizer(name)
    win.set_text(text)
    wait_idle(qtbot, win)


def test_one_reference_for_panes_and_compare(qtbot, panel_window):
    win = panel_window
    _open(qtbot, win, "o200k_base", "cl100k_base", "r50k_base")
    reg = win.registry
    o200k, cl100k, r50k = (reg.find(n) for n in ("o200k_base", "cl100k_base", "r50k_base"))
    assert reg.reference() is o200k  # nothing pinned: the first row
    panes = {p.tok.name: p for p in win.panes.panes()}
    assert "vs o200k_base" in panes["cl100k_base"].count.text()
    panes["cl100k_base"].pin.click()  # the pin on a pane
    assert reg.reference() is cl100k and reg.is_pinned()
    assert "vs cl100k_base" in panes["o200k_base"].count.text()
    assert "vs cl100k_base" in panes["r50k_base"].count.text()
    assert "vs" not in panes["cl100k_base"].count.text()
    assert panes["cl100k_base"].pin.isChecked() and not panes["o200k_base"].pin.isChecked()
    compare: CompareView = win.panels.show("compare")
    assert compare.toks[0] is cl100k and compare.names[0] == "cl100k_base"
    win.registry.set_current(r50k)
    win.pin_current()  # Tokenizers ▸ Make current the reference
    assert compare.toks[0] is r50k and "vs r50k_base" in panes["o200k_base"].count.text()
    reg.remove(r50k)  # the pinned one closes: the first row is the reference again
    assert reg.reference() is o200k and compare.toks[0] is o200k


def test_many_panes_scroll_instead_of_growing_the_window(qtbot, window, tmp_path):
    from bpeinspect.core.io.formats import save

    window.resize(1000, 700)
    gpt2 = load_tokenizer("gpt2")
    for i in range(9):  # eleven tokenizers in all
        folder = tmp_path / f"v{i}"
        folder.mkdir()
        save(gpt2, folder / "ranks.tiktoken")
        window.open_tokenizer(str(folder / "ranks.tiktoken"))
    _open(qtbot, window, "o200k_base", "cl100k_base", text="line\n" * 50)
    assert len(window.panes.panes()) == 11
    qtbot.wait(50)
    screen = window.screen().availableGeometry().height()
    assert window.minimumSizeHint().height() < min(screen, 700)
    assert window.height() <= 700
    pane = window.panes.panes()[0]
    pane.set_collapsed(True)  # a pane folds to its header
    qtbot.wait(20)
    assert not pane.view.isVisible() and pane.height() < 40


def test_trained_tokenizers_join_the_picker_not_the_overlay(qtbot, window):
    window.open_tokenizer("o200k_base")
    wait_idle(qtbot, window)
    trained = load_tokenizer("gpt2")
    window.registry.add(trained, "trained:mine-1k", shown=False)
    wait_idle(qtbot, window)
    assert trained in window.registry and window.panes.pane_of(trained) is None
    assert window.toolbar.picker.count() == 2
    window.registry.set_current(trained)
    assert not window.commands["tokenizers.shown"].isChecked()
    window.commands["tokenizers.shown"].trigger()  # the user asks for a pane
    assert window.panes.pane_of(trained) is not None


def test_merge_tree_shows_the_query_again_under_another_tokenizer(qtbot):
    tree = MergeTreeBrowser()
    qtbot.addWidget(tree)
    tree.set_tokenizer(load_tokenizer("cl100k_base"))
    tree.entry.setText(" tokenization")
    tree._on_entry()
    assert tree.down.roots()
    tree.set_tokenizer(load_tokenizer("r50k_base"))
    r50k = load_tokenizer("r50k_base")
    assert tree.down.roots() == r50k.encode_piece(" tokenization") and tree.title.text()
    tree.show_token(r50k.encode(" hello")[0])  # a token picked elsewhere
    o200k = load_tokenizer("o200k_base")
    tree.set_tokenizer(o200k)
    assert tree.down.roots() == [o200k.token_id(b" hello")]
    tree.cancel_work()


def test_selection_does_not_outline_another_token_after_the_text_changes(qtbot, window):
    _open(qtbot, window, "cl100k_base", "r50k_base", text="alpha beta gamma delta")
    tok = window.registry.find("cl100k_base")
    window.select_token(tok, 2)
    pane = window.panes.pane_of(tok)
    assert pane.view.selected == 2 and window.ids.view.selected == 2
    window.set_text("completely different words here now")
    wait_idle(qtbot, window)
    assert pane.view.selected is None and window.ids.view.selected is None
    assert all(p.view.selected is None for p in window.panes.panes())
    window.select_token(tok, 1)
    window.registry.set_current(window.registry.find("r50k_base"))  # the ids follow the place, not the index
    r50k_enc = window.registry.result(window.registry.current()).enc
    assert window.ids.view.selected == r50k_enc.token_at_utf16(window.selection[1])


def test_namesakes_are_told_apart_and_compare_shows_no_paths(qtbot, panel_window):
    from tests.paths import SHARED

    win = panel_window
    vocabs = SHARED / "vocabs"
    _open(qtbot, win, str(vocabs / "gpt2" / "tokenizer.json"), str(vocabs / "gpt2" / "encoder.json"), "r50k_base")
    labels = [win.toolbar.picker.itemText(i) for i in range(win.toolbar.picker.count())]
    assert labels == ["gpt2 (tokenizer.json)", "gpt2 (encoder.json)", "r50k_base"]
    assert [p.title.text() for p in win.panes.panes()][:2] == ["<b>gpt2 (tokenizer.json)</b>", "<b>gpt2 (encoder.json)</b>"]
    compare = win.panels.show("compare")
    assert compare.names == labels and not any("/" in n for n in compare.names)
    win.registry.remove(win.registry.find("r50k_base"))
    win.registry.remove(win.registry.tokenizers()[1])  # the namesake goes: the plain name again
    assert win.toolbar.picker.itemText(0) == "gpt2" and compare.names == ["gpt2"]


def test_replay_of_a_normalizing_tokenizer_replays_the_normalized_pre_token(qtbot, panel_window):
    from bpeinspect.core import trace
    from tests.paths import SHARED

    win = panel_window
    _open(qtbot, win, str(SHARED / "vocabs" / "repros" / "nfc.tokenizer.json"), text="cafe\u0301 x")
    tok = win.registry.current()
    enc = win.registry.result(tok).enc
    pieces = []
    win.pieceActivated.connect(lambda t, p: pieces.append(p))
    win.select_token(tok, 3)  # the "é" made of e + U+0301
    assert pieces == ["café"]  # NFC, as the encoder saw it (not "cafe\u0301")
    replay = win.panels.view("replay")
    qtbot.waitUntil(lambda: not win.panels.inspector.pending() and not replay.busy and replay.trace is not None, timeout=10000)
    assert replay.trace.result == tuple(enc.ids[:5]) == trace(tok, "café").result


def test_compare_colours_tokens_as_the_overlay_and_neighbours_differ():
    import re

    from bpeinspect.gui.overlay.palette import TokenPalette
    from bpeinspect.gui.panels.compare import compare

    text = "the the the tokenization of many words, 日本語 and more words here"
    toks = [load_tokenizer("cl100k_base"), load_tokenizer("r50k_base")]
    palette = TokenPalette()
    result = compare(toks, text, palette=palette)
    allowed = {c.name() for c in palette.colors}
    for row in result.rows:
        colours = re.findall(r"background-color:(#[0-9a-f]{6})", row.html)
        plain = [c for c in colours if c in allowed]
        assert len(plain) > 0.7 * len(colours)  # the overlay's colours, not two pale alternating ones
        assert all(a != b for a, b in zip(colours, colours[1:], strict=False))  # every edge shows
        assert len(set(plain)) > 4
