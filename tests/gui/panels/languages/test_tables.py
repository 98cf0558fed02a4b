"""The languages tables: figures that say what they are (bytes in all, premiums to two decimals)."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_languages_says_what_its_figures_are(qtbot):
    from bpeinspect.core import human_size, load_tokenizer
    from bpeinspect.gui.panels.languages import LanguagesView

    view = LanguagesView(source="fable")
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.statsReady, timeout=60000) as counted:
        view.set_tokenizers([load_tokenizer("r50k_base"), load_tokenizer("o200k_base")])
    stats = counted.args[0]
    total = sum(stats.counts[stats.tokenizers[0], t.code].bytes for t in stats.corpus)
    status = view.status.text()
    assert f"({human_size(total)} in all)" in status and "each" not in status
    view.set_baseline("en")
    view.show_page("table")
    qtbot.waitUntil(lambda: view.page("table") is not None and view.page("table").model.rowCount() > 0)
    model = view.page("table").model
    heads = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    premiums = [c for c, h in enumerate(heads) if h.endswith("premium")]
    shown = [model.index(r, c).data() for r in range(model.rowCount()) for c in premiums]
    assert shown and all(len(t.rstrip("×").split(".")[1]) == 2 for t in shown if t)  # 1.00×, 1.70×, 1.77×
