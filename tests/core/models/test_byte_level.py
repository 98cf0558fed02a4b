"""The byte-level models: RankBPE (tiktoken's rank rule) and MergeListBPE (an explicit merge list)."""

from __future__ import annotations

import pytest

from bpeinspect.core.models import MergeListBPE, RankBPE

BYTES = {bytes([b]): b for b in range(256)}


def test_the_rank_rule_merges_the_lowest_id_first() -> None:
    # "abc": bc (256) ranks before ab (257), so it is a + bc, not ab + c
    model = RankBPE(BYTES | {b"bc": 256, b"ab": 257, b"abc": 258})
    assert model.encode_piece(b"abcx") == [258, 120]
    assert RankBPE(BYTES | {b"bc": 256, b"ab": 257}).encode_piece(b"abcx") == [97, 256, 120]
    assert model.merge_rank(98, 99) == 256 and model.merge_result(97, 256) == 258 and model.merge_rank(97, 120) is None


def test_the_rank_rule_looks_a_whole_piece_up_first() -> None:
    # no chain of merges makes "abc" (no "ab" or "bc"), yet the piece is one token
    model = RankBPE(BYTES | {b"abc": 256})
    assert model.encode_piece(b"abc") == [256] and model.encode_piece(b"abcabc") == [97, 98, 99, 97, 98, 99]


def test_a_merge_list_applies_only_its_pairs_in_list_order() -> None:
    model = MergeListBPE(BYTES | {b"ab": 256, b"bc": 257}, [(98, 99), (97, 98)])
    assert model.encode_piece(b"abc") == [97, 257] and model.explicit_merges == [(98, 99), (97, 98)]


def test_a_pair_listed_twice_keeps_the_listing_the_file_format_says() -> None:
    ranks = BYTES | {b"ab": 256, b"bc": 257}
    merges = [(97, 98), (98, 99), (97, 98)]
    assert MergeListBPE(ranks, merges).encode_piece(b"abc") == [256, 99]  # the first listing wins
    assert MergeListBPE(ranks, merges, duplicate_merges="last").encode_piece(b"abc") == [97, 257]


@pytest.mark.parametrize("kind", [RankBPE, MergeListBPE])
def test_a_byte_without_a_token_is_dropped_before_merging_or_parts_its_neighbours(kind) -> None:
    ranks = {b: i for b, i in BYTES.items() if b != b"\x03"} | {b"ab": 256}
    args = ([(97, 98)],) if kind is MergeListBPE else ()
    assert kind(ranks, *args).encode_piece(b"a\x03b") == [256]
    assert kind(ranks, *args, byte_barriers=True).encode_piece(b"a\x03b") == [97, 98]
    assert kind(ranks, *args).missing_bytes == (3,)


def test_special_tokens_join_the_models_id_table() -> None:
    model = RankBPE(BYTES)
    model.add_special_tokens({"<s>": 300}, {"<a>": 256})
    assert model.decoder[300] == b"<s>" and model.decoder[256] == b"<a>" and model.top_id == 300
    with pytest.raises(ValueError, match="already has"):
        RankBPE(BYTES).add_special_tokens({"<s>": 97}, {})


def test_two_tokens_with_one_id_are_refused() -> None:
    with pytest.raises(ValueError, match="share one id"):
        RankBPE(BYTES | {b"ab": 97})
