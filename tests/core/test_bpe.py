"""The merge loops: the heap versions for long pieces agree with the simple ones."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import bpe


def _vocab(merge_pairs: list[tuple[int, int]]) -> tuple[dict[bytes, int], dict[tuple[int, int], tuple[int, int]]]:
    vocab = {i: bytes([i]) for i in range(256)}
    pair_merges: dict[tuple[int, int], tuple[int, int]] = {}
    for a, b in merge_pairs:
        if a in vocab and b in vocab:
            new = vocab[a] + vocab[b]
            if new in vocab.values():
                continue
            nid = 256 + len(pair_merges)
            vocab[nid] = new
            pair_merges[(a, b)] = (len(pair_merges), nid)
    return {v: k for k, v in vocab.items()}, pair_merges


_ALPHABET = st.sampled_from(b"abcab ")
_merges = st.lists(st.tuples(st.sampled_from([97, 98, 99, 32, 256, 257, 258, 259, 260]), st.sampled_from([97, 98, 99, 32, 256, 257, 258, 259, 260])), max_size=20)


@settings(max_examples=300, deadline=None)
@given(_merges, st.lists(_ALPHABET, min_size=0, max_size=300).map(bytes))
def test_heap_equals_simple(merge_pairs, piece: bytes) -> None:
    ranks, pair_merges = _vocab(merge_pairs)
    simple = bpe.LARGE_PIECE
    try:
        bpe.LARGE_PIECE = 10**9
        want_r = bpe.rank_bounds(piece, ranks)
        want_p = bpe.pair_encode(list(piece), pair_merges)
        bpe.LARGE_PIECE = 0
        got_r = bpe.rank_bounds(piece, ranks) if len(piece) > 1 else want_r
        got_p = bpe.pair_encode(list(piece), pair_merges)
    finally:
        bpe.LARGE_PIECE = simple
    assert got_r == want_r
    assert got_p == want_p


def test_rank_rule_prefers_lowest_rank_then_leftmost() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"aa": 256, b"aaa": 257})
    # "aaaa": the two leftmost a's merge first (tie on rank 256), then the next two
    assert bpe.rank_parts(b"aaaa", ranks) == [b"aa", b"aa"]
    assert bpe.rank_parts(b"aaa", ranks) == [b"aaa"]


def test_long_run_is_exact_and_complete() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"xx": 256, b"xxxx": 257, b"xxxxxxxx": 258})
    parts = bpe.rank_parts(b"x" * 100_003, ranks)
    assert b"".join(parts) == b"x" * 100_003
    assert parts[:3] == [b"xxxxxxxx"] * 3 and parts[-2:] == [b"xx", b"x"]


def _byte_ranks(extra: dict[bytes, int]) -> dict[bytes, int]:
    return {bytes([i]): i for i in range(256)} | extra


def test_pair_rule_constructor_keeps_the_first_listing_of_a_pair() -> None:
    from bpeinspect.core import Tokenizer

    a, b = ord("a"), ord("b")
    ranks = _byte_ranks({b"ab": 256, b"aba": 257})
    # (a, b) is listed at ranks 0 and 2; the first listing is the one that counts
    tok = Tokenizer(ranks, pattern=None, merges=[(a, b), (256, a), (a, b)])
    assert tok.merge_rank(a, b) == 0 and tok.merge_result(a, b) == 256
    assert tok.merge_rank(256, a) == 1 and tok.merge_result(256, a) == 257
    assert tok.encode("aba") == [257] and tok.encode("abab") == [256, 256]


def test_pair_rule_constructor_names_the_first_bad_merge() -> None:
    import pytest

    from bpeinspect.core import Tokenizer

    ranks = _byte_ranks({b"ab": 256})
    with pytest.raises(ValueError, match=r"merge 1 \(98, 99\) makes a token that is not in the vocabulary"):
        Tokenizer(ranks, pattern=None, merges=[(97, 98), (98, 99)])
    with pytest.raises(ValueError, match=r"merge 1 \(97, 999\) makes a token"):
        Tokenizer(ranks, pattern=None, merges=[(97, 98), (97, 999)])
