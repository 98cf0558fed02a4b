"""Counting corpora, premiums and fairness summaries: exact against tiktoken on the whole UDHR."""

from __future__ import annotations

import csv
import io

import pytest

from bpeinspect.core import Cancelled, load_tokenizer
from bpeinspect.core.analysis.corpus import Corpus, CorpusText, Language, udhr_corpus, udhr_texts
from bpeinspect.core.analysis.fairness import (
    CorpusStats,
    count_corpus,
    percentile,
    summarize,
)
from bpeinspect.core.analysis.samples import Sample
from bpeinspect.core.analysis.stats import CSV_COLUMNS, TextStats
from tests.reference import BUILTIN_NAMES, tiktoken_encoding


@pytest.mark.slow
def test_udhr_counts_are_tiktokens_on_every_language():
    corpus = udhr_corpus(stages=None)
    assert len(corpus) == 532
    stats = count_corpus([(n, load_tokenizer(n)) for n in BUILTIN_NAMES], corpus)
    texts = udhr_texts()
    wrong = []
    for name in BUILTIN_NAMES:
        enc = tiktoken_encoding(name)
        english = len(enc.encode_ordinary(texts["eng"]))
        for code, text in texts.items():
            s = stats.stats(name, code)
            want = len(enc.encode_ordinary(text))
            if (s.tokens, s.bytes, s.chars) != (want, len(text.encode("utf-8")), len(text)):
                wrong.append((name, code, s.tokens, want))
            assert s.premium == pytest.approx(want / english)
    assert not wrong, wrong[:10]


# -- summaries on known inputs ---------------------------------------------------------------------


def test_percentile_matches_linear_interpolation():
    xs = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(xs, 0) == 1.0 and percentile(xs, 100) == 5.0
    assert percentile(xs, 50) == 3.0
    assert percentile(xs, 90) == pytest.approx(4.6)
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summary_of_known_premiums():
    premiums = {"a": 0.5, "b": 1.5, "c": 2.0, "d": 2.5, "e": 4.0, "f": 4.5, "g": 9.0}
    s = summarize("t", premiums, top=3)
    assert (s.tokenizer, s.languages) == ("t", 7)
    assert s.median == 2.5
    assert s.p90 == pytest.approx(4.5 + 0.4 * 4.5)
    assert s.max == 9.0
    assert s.over_2 == pytest.approx(4 / 7)  # strictly above: 2.0 does not count
    assert s.over_4 == pytest.approx(2 / 7)
    assert s.most_costly == (("g", 9.0), ("f", 4.5), ("e", 4.0))
    assert s.least_costly == (("a", 0.5), ("b", 1.5), ("c", 2.0))
    assert summarize("t", {}) is None
    d = s.as_dict()
    assert d["most_costly"][0] == ["g", 9.0] and d["over_4"] == round(2 / 7, 4)


def _toy() -> CorpusStats:
    """Three languages and English under two tokenizers, with made-up counts."""

    def lang(code, script, lat=None, lon=None):
        return CorpusText(Language(code, code.upper(), script, latitude=lat, longitude=lon), Sample(code, text=code))

    texts = (lang("en", "Latin", 51, 0), lang("de", "Latin", 52, 13), lang("ru", "Cyrillic", 55, 37), lang("xx", "Thai"))
    corpus = Corpus("fable", "toy", texts, texts[0])
    tokens = {"a": {"en": 10, "de": 15, "ru": 40, "xx": 50}, "b": {"en": 20, "de": 20, "ru": 30, "xx": 100}}
    counts = {(t, c): TextStats(t, c, n, 4 * n, 3 * n) for t, row in tokens.items() for c, n in row.items()}
    return CorpusStats(corpus, ("a", "b"), counts, "en")


def test_premiums_and_summaries_of_a_toy_corpus():
    stats = _toy()
    assert stats.premiums("a") == {"en": 1.0, "de": 1.5, "ru": 4.0, "xx": 5.0}
    s = stats.summary("a")
    assert (s.languages, s.median, s.max, s.over_2, s.over_4) == (3, 4.0, 5.0, pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert [x.tokenizer for x in stats.summaries()] == ["a", "b"]
    assert stats.summary("b").most_costly[0] == ("xx", 5.0)


def test_plot_data_of_a_toy_corpus():
    stats = _toy()
    rank = stats.rank_series("a")
    assert rank.codes == ("xx", "ru", "de", "en") and rank.premiums == (5.0, 4.0, 1.5, 1.0)
    groups = stats.script_groups("a")
    assert [(g.script, g.codes, g.median) for g in groups] == [
        ("Thai", ("xx",), 5.0),
        ("Cyrillic", ("ru",), 4.0),
        ("Latin", ("en", "de"), 1.25),
    ]
    points = stats.map_points("b")
    assert [(p.code, p.latitude, p.longitude, p.premium, p.tokens) for p in points] == [
        ("en", 51, 0, 1.0, 20),
        ("de", 52, 13, 1.0, 20),
        ("ru", 55, 37, 1.5, 30),
    ]  # xx has no location


def test_baseline_and_restriction_need_no_recount():
    stats = _toy()
    de = stats.with_baseline("de")
    assert de.premium("a", "en") == pytest.approx(10 / 15) and de.summary("a").languages == 3
    assert stats.with_baseline(None).premiums("a") == {}
    with pytest.raises(KeyError):
        stats.with_baseline("zz")
    only_ru = stats.restrict(stats.corpus.filter(codes={"ru"}))
    assert only_ru.corpus.codes == ["ru"] and only_ru.premiums("a") == {"ru": 4.0}  # still against en
    assert only_ru.summary("a").languages == 1


def test_records_csv_and_wide_table():
    stats = _toy()
    recs = stats.records(sources={"en": "/x/en.txt", "de": "/x/de.txt", "ru": "/x/ru.txt", "xx": "/x/xx.txt"})
    assert len(recs) == 8
    first = recs[0]
    assert {"tokenizer", "source", "tokens", "bytes", "chars", "premium", "language", "script", "code"} <= set(first)
    assert (first["tokenizer"], first["source"], first["language"], first["code"]) == ("a", "/x/en.txt", "EN", "en")
    rows = list(csv.DictReader(io.StringIO(stats.to_csv())))
    assert list(rows[0]) == [*CSV_COLUMNS, "language", "script", "code"]
    assert rows[5]["premium"] == "1.5" and rows[5]["source"] == "ru"
    head, body = stats.language_table()
    assert head == ["code", "name", "script", "region", "bytes", "chars", "a tokens", "a premium", "b tokens", "b premium"]
    assert body[2] == ["ru", "RU", "Cyrillic", "", 160, 120, 40, 4.0, 30, 1.5]


# -- counting ----------------------------------------------------------------------------------------


def test_count_corpus_counts_the_baseline_even_when_filtered_out():
    tok = load_tokenizer("cl100k_base")
    corpus = udhr_corpus().filter(codes={"fra", "kor"})
    stats = count_corpus({"cl": tok}, corpus)
    assert [t.code for t, _ in stats.rows()] == ["fra", "kor"]
    english = len(tok.encode_ordinary(udhr_texts()["eng"]))
    assert stats.premium("cl", "kor") == pytest.approx(len(tok.encode_ordinary(udhr_texts()["kor"])) / english)
    assert stats.table().baseline == "eng" and len(stats.table().rows) == 2


def test_count_corpus_reports_progress_and_cancels_between_texts():
    tok = load_tokenizer("r50k_base")
    corpus = udhr_corpus().filter(codes={"eng", "deu_1996", "fra", "spa"})
    seen = []
    count_corpus({"r": tok}, corpus, progress=lambda done, total: seen.append((done, total)))
    total = sum(len(t.sample.read().encode()) for t in corpus)
    assert seen[-1] == (total, total) and len(seen) >= 4
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        count_corpus({"r": tok}, corpus, should_stop=stop)
    assert len(calls) == 3


def test_count_corpus_needs_a_tokenizer():
    with pytest.raises(ValueError):
        count_corpus({}, udhr_corpus().filter(codes={"eng"}))


def test_udhr_texts_without_a_language_code_are_named_so_and_left_out_of_the_extremes():
    from bpeinspect.core.analysis.corpus import udhr_languages

    no_code = [lang for lang in udhr_languages() if not lang.has_code]
    assert no_code and all(lang.name.endswith(", no language code") for lang in no_code)
    assert not any(lang.name.startswith("(") for lang in no_code)
    jinan = next(lang for lang in no_code if lang.code == "023")
    assert jinan.name == "Jinan, no language code"


def test_a_text_without_a_language_code_counts_but_is_not_named_among_the_extremes():
    def lang(code, bcp47=""):
        return CorpusText(Language(code, code.upper(), "Latin", bcp47=bcp47), Sample(code, text=code))

    texts = (lang("en"), lang("de"), lang("ru"), lang("023", "und"))
    corpus = Corpus("udhr", "toy", texts, texts[0])
    tokens = {"en": 10, "de": 15, "ru": 40, "023": 5}
    counts = {("a", c): TextStats("a", c, n, 4 * n, 3 * n) for c, n in tokens.items()}
    s = CorpusStats(corpus, ("a",), counts, "en").summary("a")
    assert s.languages == 3 and s.median == 1.5  # counted: 0.5, 1.5, 4.0
    assert s.least_costly[0] == ("de", 1.5) and "023" not in dict(s.most_costly)
