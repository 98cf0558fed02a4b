"""The corpus measures in the Languages view: fertility, Rényi efficiency and utilization per
language and tokenizer, as table columns and a choice of the rank plot, equal the core's own
measures (checked against tokenization-scorer in tests/core/analysis/test_measures.py)."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.corpus_count import CountingPool
from bpeinspect.core.analysis.languages import run_job
from bpeinspect.core.analysis.measures import TextMeasures, measure_text, text_profile
from bpeinspect.gui.panels.languages import LanguagesView
from tests.gui.conftest import wait_jobs

NAMES = ["r50k_base", "o200k_base"]


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in NAMES]


def _want(tok, code: str) -> TextMeasures:
    m = measure_text(tok, fable_corpus().text(code))
    return TextMeasures(m.fertility, m.renyi_efficiency, m.utilization)


def _measured(corpus, pairs, **where) -> dict:
    job = run_job("measure", "fable", corpus, pairs, progress=lambda d, t: None, should_stop=lambda: False, **where)
    return {v[1]: v[2] for v in job}


def test_the_measure_job_here_and_on_a_pool_agrees_with_measure_text(toks):
    corpus = fable_corpus()
    pairs = list(zip(NAMES, toks))
    here = _measured(corpus, pairs, processes=1)
    with CountingPool(2) as pool:
        there = _measured(corpus, pairs, processes=2, pool=pool)
    assert here == there
    for k, tok in enumerate(toks):
        for code in ("en", "de", "ko", "zh", "th", "ja"):
            got, want = here[k][code], _want(tok, code)
            assert got.fertility == (None if want.fertility is None else pytest.approx(want.fertility, abs=1e-12))
            assert got.renyi_efficiency == pytest.approx(want.renyi_efficiency, abs=1e-9)
            assert got.utilization == pytest.approx(want.utilization, abs=1e-12)
    assert here[0]["zh"].fertility is None and here[0]["en"].fertility is not None


def test_a_pool_sends_profiles_equal_to_this_process(toks):
    texts = [t.sample.read() for t in fable_corpus()]
    with CountingPool(2) as pool:
        got = dict(pool.count(toks, texts, what="profile"))
    for k, tok in enumerate(toks):
        assert got[k] == [text_profile(tok, t) for t in texts]


def _page_drawn(qtbot, page):
    qtbot.waitUntil(lambda: not page.is_drawing(), timeout=20000)


def test_the_view_measures_when_asked_and_shows_columns_and_rank_choices(qtbot, toks):
    view = LanguagesView(source="fable")
    view.processes = 1
    qtbot.addWidget(view)
    view.resize(1100, 650)
    view.show()
    with qtbot.waitSignal(view.statsReady, timeout=120000):
        view.set_tokenizers(toks)
    assert not view.corpus_stats().measures  # not measured until asked
    view.show_page("rank")
    qtbot.waitUntil(lambda: view.page("rank") is not None, timeout=20000)
    rank = view.page("rank")
    with qtbot.waitSignal(view.statsReady, timeout=120000, check_params_cb=lambda s: s.has_measures()):
        rank.set_metric("renyi")  # choosing a measure turns the measuring on
    assert view.measures_box.isChecked()
    wait_jobs(qtbot, view.jobs, 60000)
    stats = view.corpus_stats()
    view.show_page("rank")
    _page_drawn(qtbot, rank)
    for k, name in enumerate(NAMES):
        codes, values = rank.ranked(name)
        assert values == sorted(values, reverse=True) and len(codes) == len(fable_corpus())
        assert values[codes.index("ko")] == pytest.approx(_want(toks[k], "ko").renyi_efficiency, abs=1e-9)
    rank.set_metric("fertility")
    _page_drawn(qtbot, rank)
    codes, values = rank.ranked("r50k_base")
    assert "zh" not in codes and "ja" not in codes and "en" in codes  # no fertility without spaces
    head, rows = stats.language_table()
    col = head.index("o200k_base fertility")
    by_code = {r[0]: r for r in rows}
    assert by_code["zh"][col] is None
    assert by_code["de"][col] == pytest.approx(round(_want(toks[1], "de").fertility, 4))
    assert by_code["de"][head.index("o200k_base utilization")] == pytest.approx(
        round(_want(toks[1], "de").utilization, 6)
    )
    header, csv_rows = rank.csv_rows(stats)
    assert header[-1] == "fertility" and len(csv_rows) == sum(len(rank.ranked(n)[0]) for n in NAMES)
    rank.set_metric("premium")
    _page_drawn(qtbot, rank)
    assert "ko" in rank.ranked("r50k_base")[0] and "en" not in rank.ranked("r50k_base")[0]
