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


def _split(pair_merges: dict[tuple[int, int], tuple[int, int]]) -> tuple[dict[tuple[int, int], int], dict[int, int]]:
    """``(left, right) -> (rank, new id)`` as pair_encode takes it: pair -> rank, rank -> new id."""
    return {p: r for p, (r, _) in pair_merges.items()}, dict(pair_merges.values())


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
        want_p = bpe.pair_encode(list(piece), *_split(pair_merges))
        bpe.LARGE_PIECE = 0
        got_r = bpe.rank_bounds(piece, ranks) if len(piece) > 1 else want_r
        got_p = bpe.pair_encode(list(piece), *_split(pair_merges))
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


# Level-wise merging (a whole rank at a time) must give what the one-merge-at-a-time loops
# give, also with vocabularies whose ranks are not in creation order (a token that ranks below
# one of its parts, so that a step can form a pair the heap would merge in between) and with
# ranks that several tokens share.
_SMALL = st.sampled_from([b"a", b"b", b"c"])


@st.composite
def _scrambled_vocab(draw) -> dict[bytes, int]:
    tokens = draw(st.lists(st.lists(_SMALL, min_size=2, max_size=5).map(b"".join), max_size=14, unique=True))
    unique = st.permutations(list(range(256, 256 + len(tokens))))
    # SentencePiece scores can be equal: several tokens share a rank, the leftmost pair merges first
    shared = st.lists(st.integers(256, 259), min_size=len(tokens), max_size=len(tokens))
    ranks = draw(st.one_of(unique, shared))
    return _byte_ranks(dict(zip(tokens, ranks)))


@st.composite
def _repetitive(draw) -> bytes:
    unit = draw(st.lists(_SMALL, min_size=1, max_size=4).map(b"".join))
    noise = draw(st.lists(st.tuples(st.integers(0, 400), _SMALL), max_size=3))
    piece = bytearray(unit * draw(st.integers(1, 150)))
    for pos, ch in noise:
        piece[pos % len(piece) : pos % len(piece)] = ch
    return bytes(piece)


@settings(max_examples=400, deadline=None)
@given(_scrambled_vocab(), _repetitive())
def test_levels_equal_simple_rank_rule(ranks, piece: bytes) -> None:
    large, bulk = bpe.LARGE_PIECE, bpe.BULK_PIECE
    try:
        bpe.LARGE_PIECE = 10**9
        want = bpe.rank_bounds(piece, ranks)
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 0, 2
        got = bpe.rank_bounds(piece, ranks) if len(piece) > 1 else want
        got_ids = bpe.rank_encode(piece, ranks)
        got_capped = bpe.rank_bounds(piece, ranks, max_rank=262) if len(piece) > 1 else None
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 10**9, 10**9
        want_capped = bpe.rank_bounds(piece, ranks, max_rank=262) if len(piece) > 1 else None
    finally:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = large, bulk
    assert got == want
    assert got_ids == [ranks[piece[a:b]] for a, b in zip(want, want[1:])]
    assert got_capped == want_capped


@settings(max_examples=400, deadline=None)
@given(_scrambled_vocab(), _repetitive())
def test_levels_equal_simple_pair_rule(ranks, piece: bytes) -> None:
    # a merge list in a scrambled order: every way to cut each token in two, ranked at random
    merges: dict[tuple[int, int], tuple[int, int]] = {}
    for t, r in ranks.items():
        for cut in range(1, len(t)):
            a, b = ranks.get(t[:cut]), ranks.get(t[cut:])
            if a is not None and b is not None:
                merges.setdefault((a, b), ((r * 31 + cut * 17) % 997 * 1000 + len(merges), r))
    ids = list(piece)
    large, bulk = bpe.LARGE_PIECE, bpe.BULK_PIECE
    try:
        bpe.LARGE_PIECE = 10**9
        want = bpe.pair_encode(ids, *_split(merges))
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 0, 2
        got = bpe.pair_encode(ids, *_split(merges))
    finally:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = large, bulk
    assert got == want


def test_levels_of_characters() -> None:
    """SentencePiece-style pieces are strings of characters, merged by their scores' ranks."""
    ranks = {"▁▁": 0, "▁▁▁▁": 1, "ab": 2, "▁a": 3, "abab": 4}
    piece = "▁" * 301 + "ab" * 200 + "▁a" * 130
    large, bulk = bpe.LARGE_PIECE, bpe.BULK_PIECE
    try:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 10**9, 10**9
        want = bpe.rank_bounds(piece, ranks)  # type: ignore[arg-type]
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 0, 2
        got = bpe.rank_bounds(piece, ranks)  # type: ignore[arg-type]
    finally:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = large, bulk
    assert got == want


def test_levels_leave_a_pair_formed_mid_step_to_the_heap() -> None:
    """"aba" ranks below its part "ab": the heap merges "ab"+"a" as soon as the first "ab" is
    made, before the next "ab" (whose "a" it takes). Merging every "ab" at once would not."""
    ranks = _byte_ranks({b"aba": 256, b"ab": 257})
    large, bulk = bpe.LARGE_PIECE, bpe.BULK_PIECE
    try:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 0, 2
        got = bpe.rank_parts(b"ab" * 300, ranks)
        got_pairs = bpe.pair_encode(list(b"ab" * 300), {(97, 98): 1, (257, 97): 0}, [256, 257])
    finally:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = large, bulk
    assert got == [b"aba", b"b"] * 150
    assert got_pairs == [256, 98] * 150


def test_levels_with_one_score_for_many_tokens() -> None:
    """As in Mistral's tokenizer.model: every run of ▁ up to 16 has the same score (12 here), so after the
    first ▁▁ is made the heap merges ▁▁+▁ (same rank, further left) before the next ▁▁."""
    ranks = {"▁" * k: 0 for k in range(2, 13)}
    large, bulk = bpe.LARGE_PIECE, bpe.BULK_PIECE
    try:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 10**9, 10**9
        want = bpe.rank_bounds("▁" * 1000, ranks)  # type: ignore[arg-type]
        bpe.LARGE_PIECE, bpe.BULK_PIECE = 0, 2
        got = bpe.rank_bounds("▁" * 1000, ranks)  # type: ignore[arg-type]
    finally:
        bpe.LARGE_PIECE, bpe.BULK_PIECE = large, bulk
    assert got == want and want[1] == 12
