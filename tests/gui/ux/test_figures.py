"""Issue 16, bug 8: figures that say what they are."""

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


def test_languages_says_what_its_figures_are(qtbot):
    from bpeinspect.core import load_tokenizer
    from bpeinspect.core.analysis.samples import load_samples
    from bpeinspect.gui.panels.languages import LanguagesView

    view = LanguagesView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.set_tokenizers([load_tokenizer("r50k_base"), load_tokenizer("o200k_base")])
    total = sum(len(s.read().encode("utf-8")) for s in load_samples())
    status = view.status.text()
    assert f"{total:,} bytes in all" in status and "each" not in status
    view.set_metric("premium")
    view.set_baseline("en")
    heads = [view.table.horizontalHeaderItem(c).text() for c in range(view.table.columnCount())]
    premiums = [c for c, h in enumerate(heads) if h.endswith("premium")]
    shown = [view.table.item(r, c).text() for r in range(view.table.rowCount()) for c in premiums]
    assert shown and all(len(t.split(".")[1]) == 2 for t in shown if t)  # 1.00, 1.70, 1.77
