"""The languages view holds the core's numbers in its plot and exports them."""

from __future__ import annotations

import csv
import io

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.samples import load_samples
from bpeinspect.gui.panels.languages import LanguagesView

NAMES = ["r50k_base", "cl100k_base"]


@pytest.fixture
def view(qtbot):
    v = LanguagesView()
    qtbot.addWidget(v)
    with qtbot.waitSignal(v.statsReady, timeout=60000):
        v.set_tokenizers([load_tokenizer(n) for n in NAMES])
    return v


def test_plot_holds_direct_counts(view):
    texts = {s.name: s.read() for s in load_samples()}
    series = view.series()
    assert list(series) == NAMES
    order = view.categories()
    assert sorted(order) == sorted(texts)
    for name in NAMES:
        tok = load_tokenizer(name)
        xs, hs = series[name]
        assert hs == [float(len(tok.encode_ordinary(texts[src]))) for src in order]
        assert len(xs) == len(order)
    assert series["r50k_base"][1] == sorted(series["r50k_base"][1])  # sorted by the first tokenizer


def test_premium_and_tooltip(view):
    view.set_metric("premium")
    view.set_baseline("en")
    xs, hs = view.series()["r50k_base"]
    order = view.categories()
    assert hs[order.index("en")] == 1.0
    assert hs[order.index("ko")] >= 4
    hit = view.bar_at(xs[order.index("ko")], 1.0)
    assert hit == ("r50k_base", "ko")
    assert "Korean" in view.tooltip_for(*hit)


def test_exports(view, tmp_path):
    view.export_csv(tmp_path / "t.csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text("utf-8"))))
    assert len(rows) == 2 * len(load_samples())
    view.export_png(tmp_path / "p.png")
    view.export_svg(tmp_path / "p.svg")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (tmp_path / "p.svg").read_bytes()
