"""The Languages view's Use page: what each vocabulary spends on the corpus shown, counted on the
counting processes, equals tiktoken's own encoding of the same texts."""

from __future__ import annotations

from collections import Counter

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.languages import run_job
from bpeinspect.gui.panels.languages import LanguagesView
from bpeinspect.gui.panels.languages.usage import RANK_POINTS, rank_points
from tests.gui.conftest import wait_jobs
from tests.reference import tiktoken_encoding

NAMES = ["r50k_base", "o200k_base"]


@pytest.fixture(scope="module")
def toks():
    return [load_tokenizer(n) for n in NAMES]


def test_the_use_job_counts_like_tiktoken_and_marks_the_unreachable(toks):
    corpus = fable_corpus()
    pairs = list(zip(NAMES, toks))
    job = run_job("use", "fable", corpus, pairs, processes=1, progress=lambda d, t: None, should_stop=lambda: False)
    got = {v[1]: v[2] for v in job}
    for k, name in enumerate(NAMES):
        enc = tiktoken_encoding(name)
        want = Counter(i for t in corpus for i in enc.encode_ordinary(t.sample.read()))
        assert got[k].counts == dict(want)
        assert got[k].unreachable is not None and set(got[k].unreachable) <= set(got[k].unused)
    assert len(got[1].unreachable) == 12  # o200k_base's unreachable tokens


@pytest.mark.parametrize("processes", [1, 2])
def test_the_use_page_counts_when_shown_and_reports_each_vocabulary(qtbot, toks, processes):
    view = LanguagesView(source="fable")
    view.processes = processes
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.show()
    with qtbot.waitSignal(view.statsReady, timeout=120000):
        view.set_tokenizers(toks)
    view.show_page("use")
    qtbot.waitUntil(lambda: view.page("use") is not None, timeout=20000)
    page = view.page("use")
    qtbot.waitUntil(lambda: set(page.uses) == set(NAMES) and not view.is_running(), timeout=120000)
    wait_jobs(qtbot, view.jobs, 60000)
    qtbot.waitUntil(lambda: not page.is_drawing(), timeout=20000)
    corpus = fable_corpus()
    for name in NAMES:
        enc = tiktoken_encoding(name)
        want = Counter(i for t in corpus for i in enc.encode_ordinary(t.sample.read()))
        assert page.uses[name].rank_frequency().tolist() == sorted(want.values(), reverse=True)
    # each line is drawn from the counts at its ranks, the first and the last among them
    lines = {item.name(): item for item in page.item.listDataItems()}
    assert set(lines) == set(NAMES)
    for name in NAMES:
        counts = page.uses[name].rank_frequency()
        xs, ys = lines[name].getOriginalDataset()
        assert len(xs) <= min(len(counts), RANK_POINTS) and xs[0] == 1 and xs[-1] == len(counts)
        assert ys.tolist() == counts[xs.astype(int) - 1].tolist()
    report = page.report.toPlainText()
    assert "Never used under" in report and f"{page.uses['o200k_base'].used:,} of 199,998" in report
    header, rows = page.csv_rows(view.corpus_stats())
    assert header == ["tokenizer", "category", "unused", "unreachable"]
    assert sum(r[2] for r in rows if r[0] == "r50k_base") == len(page.uses["r50k_base"].unused)
    # a filter shows other texts: their use is counted again
    view.set_filters(script="Latin")
    qtbot.waitUntil(lambda: not view.is_running() and not view.jobs.is_busy(), timeout=120000)
    latin = [t for t in view.corpus_stats().corpus]
    want = Counter(i for t in latin for i in tiktoken_encoding("r50k_base").encode_ordinary(t.sample.read()))
    qtbot.waitUntil(lambda: page.uses.get("r50k_base") is not None and page.uses["r50k_base"].counts == dict(want),
                    timeout=60000)  # fmt: skip


def test_a_long_rank_frequency_line_is_drawn_from_log_spaced_ranks():
    """A line of every rank (200k points for o200k_base on the UDHR) took 100 ms to paint."""
    import numpy as np

    counts = np.sort(np.random.default_rng(0).zipf(1.3, 200_000))[::-1]
    ranks, got = rank_points(counts)
    assert len(ranks) <= RANK_POINTS and ranks[0] == 1 and ranks[-1] == len(counts)
    assert np.all(np.diff(ranks) > 0) and got.tolist() == counts[ranks.astype(int) - 1].tolist()
    # every rank at first, then ranks evenly spaced on the log scale: no rank skipped over more
    # than a hundredth of a decade
    skipping = np.diff(ranks) > 1
    assert skipping.any() and np.diff(np.log10(ranks))[skipping].max() < 0.01
    small = np.array([5, 3, 1])
    assert rank_points(small)[0].tolist() == [1, 2, 3] and rank_points(small)[1].tolist() == [5, 3, 1]


def test_the_use_report_sorts_a_big_vocabularys_unused_tokens_a_part_per_step(qtbot, toks):
    """o200k_base leaves most of its 200k tokens unused on a small text: the report sorted them
    all into categories in one step of the drawing, which held the window."""
    from bpeinspect.gui.panels.languages.usage import SORT_CHUNK

    page, use, stats = _o200k_use_page(qtbot, toks)
    steps = sum(1 for _ in page.draw(stats, page_colors()))
    assert steps >= len(use.unused) // SORT_CHUNK > 5
    report = page.report.toPlainText()
    for category, unused, unreachable in use.unused_by_category():  # the figures of the core's own sort
        assert f"\n{category}\n{unused:,}\n{unreachable:,}\n" in report
    assert sum(unreachable for _, _, unreachable in use.unused_by_category()) == 12


def _o200k_use_page(qtbot, toks):
    """A Use page for o200k_base's use of the fable's texts: ``(page, use, stats)``."""
    from types import SimpleNamespace

    from bpeinspect.core.analysis.vocab_use import vocabulary_use
    from bpeinspect.gui.panels.languages.usage import UsePage

    o200k = toks[1]
    text = "\n".join(t.sample.read() for t in fable_corpus())
    use = vocabulary_use(o200k, [], name="o200k_base", unreachable=True, counts=Counter(o200k.encode_ordinary(text)))
    page = UsePage()
    qtbot.addWidget(page)
    page.uses, page.tokens_of, page.focus = {"o200k_base": use}, {"o200k_base": o200k.token_bytes}, "o200k_base"
    stats = SimpleNamespace(tokenizers=("o200k_base",), corpus=SimpleNamespace(title="the fable"))
    return page, use, stats


def page_colors():
    from bpeinspect.gui.overlay.palette import app_colors

    return app_colors()


def test_the_use_report_is_laid_out_a_row_per_step_before_it_is_shown(qtbot, toks):
    """The report's examples are tokens of many scripts: its first layout loaded the fonts of
    all of them in one turn. Each row is laid out in a step of its own first, and the report
    shown is the one made at once."""
    page, use, stats = _o200k_use_page(qtbot, toks)
    want = page.report_html(stats)
    rows = want.count("</tr>")
    assert rows > len(use.unused_by_category()) > 5
    html_of_each_step = [page.report.toHtml() for _ in page.draw(stats, page_colors())]
    empty = html_of_each_step[0]
    assert html_of_each_step[-rows:] == [empty] * rows  # the rows' steps come before the report is set
    shown = page.report.toHtml()
    page.report.setHtml(want)
    assert shown == page.report.toHtml() != empty
