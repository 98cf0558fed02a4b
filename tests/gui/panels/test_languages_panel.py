"""View ▸ Languages… opens the languages plot for the open tokenizers and follows them."""

from __future__ import annotations

from bpeinspect.core.io.builtins import resources_dir
from tests.gui.conftest import wait_idle


def test_languages_panel_follows_the_open_tokenizers(qtbot, panel_window):
    window = panel_window
    assert window.panels.view("languages") is None  # made (with pyqtgraph) on first use
    window.open_tokenizer("r50k_base")
    wait_idle(qtbot, window)
    window.commands["panels.languages"].trigger()
    view = window.panels.view("languages")
    assert window.panels.docks["languages"].isVisible()
    tables = []
    view.statsReady.connect(tables.append)
    qtbot.waitUntil(lambda: bool(tables), timeout=60000)
    table = tables[-1]
    r50k = window.registry.tokenizers()[0]
    name = table.tokenizers[0]
    ko = next(r for r in table.rows if r.tokenizer == name and r.source.startswith("ko"))
    en = next(r for r in table.rows if r.tokenizer == name and r.source.startswith("en"))
    korean = (resources_dir() / "samples" / "ko.txt").read_text(encoding="utf-8")
    assert ko.tokens == len(r50k.encode_ordinary(korean))
    assert ko.tokens > 3 * en.tokens  # why Korean costs GPT-2 so much more
    # a second tokenizer joins the plot
    window.open_tokenizer("o200k_base")
    qtbot.waitUntil(lambda: len(tables[-1].tokenizers) == 2, timeout=60000)
    o200k = tables[-1].tokenizers[1]
    assert tables[-1].get(o200k, ko.source).tokens < ko.tokens
