"""What a vocabulary spends on a corpus (bpeinspect.core.analysis.vocab_use), against tiktoken's
own encoding of the same texts."""

from __future__ import annotations

from collections import Counter

import pytest

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.vocab import unreachable_tokens
from bpeinspect.core.analysis.vocab_diff import token_category
from bpeinspect.core.analysis.vocab_use import count_ids, vocabulary_use
from tests.reference import tiktoken_encoding

NAMES = ["r50k_base", "o200k_base"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [t.sample.read() for t in fable_corpus()]


@pytest.fixture(scope="module")
def counted(texts):
    toks = [load_tokenizer(n) for n in NAMES]
    return toks, count_ids(toks, texts, processes=2), count_ids(toks, texts, processes=1)


def test_id_counts_are_tiktokens_on_every_core_and_here(counted, texts) -> None:
    toks, pooled, here = counted
    assert pooled == here
    for name, got in zip(NAMES, pooled):
        enc = tiktoken_encoding(name)
        want = Counter(i for t in texts for i in enc.encode_ordinary(t))
        assert got == want


def test_use_unused_and_rank_frequency(counted, texts) -> None:
    toks, pooled, _ = counted
    for name, tok, c in zip(NAMES, toks, pooled):
        use = vocabulary_use(tok, texts, name=name, counts=c)
        specials = set(tok.special_tokens.values())
        assert use.tokens == c.total() and use.used == len(c)
        assert set(use.unused) == set(tok.ids()) - specials - set(c) and use.unused == sorted(use.unused)
        assert use.vocab == len(tok.ids()) - len(specials)
        assert use.share_unused == pytest.approx(len(use.unused) / use.vocab)
        rf = use.rank_frequency().tolist()
        assert rf == sorted(c.values(), reverse=True) and sum(rf) == use.tokens
        rows = use.unused_by_category()
        assert sum(n for _, n, _ in rows) == len(use.unused)
        want = Counter(token_category(tok.token_bytes(i)) for i in use.unused)
        assert {cat: n for cat, n, _ in rows} == dict(want)
        assert use.unreachable is None and all(d == 0 for _, _, d in rows)


def test_unreachable_tokens_are_marked_among_the_unused() -> None:
    tok = Tokenizer.from_merges([(97, 98), (98, 99), (97, 257)], pattern=None)  # "abc" only as a+bc, but ab merges first
    use = vocabulary_use(tok, ["abc abc bc"], unreachable=True, processes=1)
    assert use.unreachable == {u.id for u in unreachable_tokens(tok)} == {258}
    assert 258 in use.unused
    assert [(c, d) for c, _, d in use.unused_by_category() if d] == [("Latin", 1)]
    assert use.as_dict()["unused_unreachable"] == 1


def test_cancel_stops_the_count(texts) -> None:
    with pytest.raises(Cancelled):
        count_ids([load_tokenizer("r50k_base")], texts, processes=1, should_stop=lambda: True)
