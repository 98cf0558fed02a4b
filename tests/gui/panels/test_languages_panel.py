"""View ▸ Languages… counts the corpus under the open tokenizers, follows them, and opens a language's text."""

from __future__ import annotations

from bpeinspect.core.analysis.corpus import fable_corpus, udhr_corpus
from tests.gui.conftest import wait_idle


def _open(qtbot, window, *names):
    for name in names:
        window.open_tokenizer(name)
    wait_idle(qtbot, window)
    assert window.panels.view("languages") is None  # made (with pyqtgraph) on first use
    window.commands["panels.languages"].trigger()
    view = window.panels.view("languages")
    assert window.panels.docks["languages"].isVisible()
    return view


def test_languages_panel_follows_the_open_tokenizers(qtbot, panel_window):
    window = panel_window
    view = _open(qtbot, window, "r50k_base")
    with qtbot.waitSignal(view.statsReady, timeout=60000) as blocker:
        view.set_source("fable")  # before the view has loaded: nothing of the UDHR is counted
    stats = blocker.args[0]
    r50k = window.registry.tokenizers()[0]
    name = stats.tokenizers[0]
    korean = fable_corpus().text("ko")
    assert stats.counts[name, "ko"].tokens == len(r50k.encode_ordinary(korean))
    assert stats.premium(name, "ko") > 3  # why Korean costs GPT-2 so much more
    with qtbot.waitSignal(view.statsReady, timeout=60000, check_params_cb=lambda s: len(s.tokenizers) == 2) as b:
        window.open_tokenizer("o200k_base")  # a second tokenizer joins the view
    stats = b.args[0]
    assert stats.counts[stats.tokenizers[1], "ko"].tokens < stats.counts[name, "ko"].tokens


def test_a_language_opens_in_the_text_view_right_to_left_when_it_is_written_so(qtbot, panel_window):
    window = panel_window
    view = _open(qtbot, window, "cl100k_base")
    with qtbot.waitSignal(view.statsReady, timeout=120000):
        pass  # the UDHR, by default
    udhr = udhr_corpus()
    view.page("summary").languageActivated.emit("arb")  # as a double-click on Arabic does
    wait_idle(qtbot, window)
    assert window.text() == udhr.text("arb") and window.live.right_to_left()
    view.page("summary").languageActivated.emit("fra")
    wait_idle(qtbot, window)
    assert window.text() == udhr.text("fra") and not window.live.right_to_left()


def test_add_tokenizer_opens_a_vocabulary_that_joins_the_summary(qtbot, panel_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from bpeinspect.core import train_tokenizer
    from bpeinspect.core.io.formats import save

    (tmp_path / "Tiny-7B").mkdir()
    path = save(train_tokenizer(fable_corpus().text("en") * 3, 300, pattern="gpt4"), tmp_path / "Tiny-7B" / "tokenizer.json")
    window = panel_window
    view = _open(qtbot, window, "r50k_base")
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.set_source("fable")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    with qtbot.waitSignal(view.statsReady, timeout=60000, check_params_cb=lambda s: len(s.tokenizers) == 2) as b:
        view.add_button.click()
    stats = b.args[0]
    tiny = window.registry.tokenizers()[1]
    assert tiny.source.startswith(str(path)) and stats.tokenizers == ("r50k_base", tiny.name)
    assert stats.summary(tiny.name).languages == len(fable_corpus()) - 1
