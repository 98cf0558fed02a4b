"""Corpus measures (bpeinspect.core.analysis.measures) against tokenization-scorer and against a
direct computation from each tokenizer's own encoding."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.analysis import measures
from bpeinspect.core.analysis.measures import RENYI_ORDER, measure_sample, measure_text, renyi_efficiency
from bpeinspect.core.analysis.samples import Sample, load_samples, samples_dir
from tests.paths import SHARED

tokenization_scorer = pytest.importorskip("tokenization_scorer")

TOKENIZERS = ["r50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module", params=TOKENIZERS)
def tok(request) -> Tokenizer:
    return load_tokenizer(request.param)


def _texts() -> list[tuple[str, str]]:
    out = [(s.name, s.read()) for s in load_samples()]
    out.append(("taylorswift", (SHARED / "corpora" / "taylorswift.txt").read_text("utf-8")))
    return out


def _direct(tok: Tokenizer, text: str) -> dict[str, float]:
    """The measures from ``encode_ordinary``'s ids, with numpy."""
    ids = np.array(tok.encode_ordinary(text), dtype=np.int64)
    counts = np.bincount(ids)
    counts = counts[counts > 0]
    p = counts / counts.sum()
    renyi = math.log(float(np.sum(p**RENYI_ORDER))) / (1 - RENYI_ORDER) / math.log(tok.n_vocab)
    return {"tokens": len(ids), "distinct": len(counts), "renyi": renyi, "words": len(text.split())}


def test_renyi_efficiency_agrees_with_tokenization_scorer(tok) -> None:
    for name, text in _texts():
        ids = tok.encode_ordinary(text)
        want = tokenization_scorer.score(" ".join(map(str, ids)), metric="renyi", power=RENYI_ORDER, vocab=tok.n_vocab)
        got = measure_text(tok, text)
        assert got.renyi_efficiency == pytest.approx(want, abs=1e-4), name
        assert got.renyi_efficiency == pytest.approx(want, abs=1e-9), name  # the same formula, not just close


def test_measures_agree_with_direct_computation(tok) -> None:
    for name, text in _texts():
        want = _direct(tok, text)
        got = measure_text(tok, text, source=name)
        assert (got.tokens, got.distinct, got.words) == (want["tokens"], want["distinct"], want["words"]), name
        assert got.renyi_efficiency == pytest.approx(want["renyi"], abs=1e-9)
        assert got.utilization == pytest.approx(want["distinct"] / tok.n_vocab, abs=1e-12)
        if got.fertility is not None:
            assert got.fertility == pytest.approx(want["tokens"] / want["words"], abs=1e-12)


def test_fertility_is_not_defined_without_spaces_between_words() -> None:
    tok = load_tokenizer("o200k_base")
    by_name = {s.name: s.read() for s in load_samples()}
    for code in ("zh", "ja", "th"):
        m = measure_text(tok, by_name[code], source=code)
        assert m.fertility is None and not m.spaced
        assert "does not separate words by spaces" in m.fertility_note
        assert m.as_dict()["fertility"] is None and m.chars_per_token > 0
    for code in ("en", "de", "ko", "ar", "hi"):
        assert measure_text(tok, by_name[code]).fertility is not None, code


def test_a_file_read_in_parts_measures_as_the_whole_text(tmp_path, monkeypatch) -> None:
    text = "\n".join(s.read() for s in load_samples()) * 2
    path = tmp_path / "all.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(measures, "_CHUNK_CHARS", 3000)  # many parts, cut inside the text
    seen: list[int] = []
    for name in ("cl100k_base", "o200k_base"):
        tok = load_tokenizer(name)
        got = measure_sample(tok, Sample("all", path), progress=lambda d, t: seen.append(d))
        whole = measure_text(tok, text, source="all")
        assert got == whole
    assert len(seen) > 20


def test_words_split_across_parts_count_once() -> None:
    tally = measures._Tally(load_tokenizer("r50k_base"))
    for part in ("hello wor", "ld and", " more ", "words"):
        tally.text(part)
    assert tally.words == len("hello world and more words".split()) == 5


def test_renyi_efficiency_edge_cases() -> None:
    assert renyi_efficiency([], 100) == 0.0
    assert renyi_efficiency([5], 1) == 0.0
    assert renyi_efficiency([7], 100) == 0.0  # one id only: no entropy
    assert renyi_efficiency([2] * 64, 64) == pytest.approx(1.0)
    assert renyi_efficiency(Counter("aabbbc").values(), 10, order=1.0) == pytest.approx(
        -sum(p * math.log(p) for p in (2 / 6, 3 / 6, 1 / 6)) / math.log(10)
    )


def test_premiums_against_a_baseline_source() -> None:
    tok = load_tokenizer("cl100k_base")
    rows = [measure_text(tok, (samples_dir() / f"{c}.txt").read_text("utf-8"), source=c) for c in ("en", "ko")]
    with_p = measures.with_premiums(rows, "en")
    assert with_p[0].premium == 1.0 and with_p[1].premium == pytest.approx(rows[1].tokens / rows[0].tokens)
