"""What a vocabulary spends on a corpus (bpeinspect.core.analysis.vocab_use), against tiktoken's
own encoding of the same texts."""

from __future__ import annotations

from collections import Counter

import pytest

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.token_categories import token_category
from bpeinspect.core.analysis.vocab import unreachable_tokens
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


def _pid(_tok, _item) -> int:
    import os

    return os.getpid()


def test_a_counting_pool_runs_a_call_in_a_child_that_holds_the_tokenizer() -> None:
    import os

    from bpeinspect.core.analysis.corpus_count import CountingPool
    from bpeinspect.core.pool import can_spawn

    if not can_spawn():
        pytest.skip("no child process can start here")
    tok = Tokenizer.from_merges([(97, 98), (98, 99)], pattern=None)
    with CountingPool(1) as pool:
        assert pool.call(tok, _pid, None) == os.getpid()  # no child started: here
        pool.start()
        there = pool.call(tok, _pid, None)
        assert there != os.getpid() and pool.call(tok, _pid, None) == there  # the child that holds it
        with pytest.raises(Cancelled):
            pool.call(tok, _pid, None, should_stop=lambda: True)


def test_the_use_of_a_vocabulary_is_the_same_worked_out_by_a_child(texts, monkeypatch) -> None:
    """With a counting pool, the unreachable tokens and the unused tokens' categories come from
    a child (in the Languages view, seconds of Python a worker thread ran next to the window)."""
    from bpeinspect.core.analysis import token_categories, vocab_use
    from bpeinspect.core.analysis.corpus_count import CountingPool
    from bpeinspect.core.pool import can_spawn

    if not can_spawn():
        pytest.skip("no child process can start here")
    tok = load_tokenizer("r50k_base")
    here = vocabulary_use(tok, texts, unreachable=True, processes=1)
    with CountingPool(1) as pool:
        pool.start()

        def not_here(*_args):
            raise AssertionError("worked out in this process")

        monkeypatch.setattr(vocab_use, "unreachable_tokens", not_here)
        monkeypatch.setattr(token_categories, "token_category", not_here)
        far = vocabulary_use(tok, texts, unreachable=True, processes=1, pool=pool)
        toy = Tokenizer.from_merges([(97, 98), (98, 99), (97, 257)], pattern=None)  # "abc" unreachable
        toy_use = vocabulary_use(toy, ["abc abc bc"], unreachable=True, processes=1, pool=pool)
    assert far == here
    assert far.unreachable is not None and far.categories == here.categories
    assert toy_use.unreachable == {258}


def test_a_call_between_two_tokenizers_of_a_count_leaves_the_count_its_answers(texts) -> None:
    """The Languages view's token use: each tokenizer's unused tokens are looked at by a child
    as soon as it is counted, while the count of the others goes on. The call waits for its
    own answer only: the count's answers that come meanwhile are its own still, and it ends
    with the right figures (it used to wait for them for ever)."""
    import time

    from bpeinspect.core.analysis.corpus_count import CountingPool
    from bpeinspect.core.analysis.vocab_use import _unused_facts
    from bpeinspect.core.pool import can_spawn

    if not can_spawn():
        pytest.skip("no child process can start here")
    toks = [load_tokenizer(n) for n in ("r50k_base", "cl100k_base", "o200k_base")]
    want = count_ids(toks, texts, processes=1)
    deadline = time.monotonic() + 120
    with CountingPool(2) as pool:
        got = {}
        for k, per_text in pool.count(toks, texts * 4, what="ids", should_stop=lambda: time.monotonic() > deadline):
            got[k] = sum(per_text[: len(texts)], Counter())
            dead, labels, codes = pool.call(toks[k], _unused_facts, ([256, 257], False))
            assert dead is None and len(codes) == 2
    assert [got[k] for k in range(3)] == want
