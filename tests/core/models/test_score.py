"""ScoreBPE: SentencePiece-style merging of characters, by score or by a merge list."""

from __future__ import annotations

import pytest

from bpeinspect.core.models import ScoreBPE
from bpeinspect.core.models.pieces import BYTE, CONTROL, NORMAL, UNKNOWN

BYTE_PIECES = [f"<0x{b:02X}>" for b in range(256)]


def _model(**kw) -> ScoreBPE:
    pieces = ["<unk>", "<s>", "▁", "a", "b", "ab", "▁ab", *BYTE_PIECES]
    kinds = [UNKNOWN, CONTROL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL] + [BYTE] * 256
    scores = [0, 0, -5, -6, -6, -1, -2] + [0] * 256
    return ScoreBPE(pieces, kinds, scores=scores, unk_id=0, special_ids={1}, **kw)


def test_the_highest_score_merges_first() -> None:
    m = _model()
    assert m.encode_piece("▁ab") == [6] and m.encode_piece("abab") == [5, 5]
    assert m.merge_result(2, 5) == 6 and m.merge_rank(3, 4) == 0 and m.merge_result(3, 3) is None


def test_a_character_without_a_piece_falls_back_to_its_bytes_or_the_unknown_token() -> None:
    m = _model()
    assert m.encode_piece("a€") == [3, 7 + 0xE2, 7 + 0x82, 7 + 0xAC]
    assert _model(byte_fallback=False).encode_piece("a€€") == [3, 0]  # a run of unknowns is one
    assert m.decoder[7 + 0x41] == b"A" and m.decoder[6] == b" ab" and m.decoder[1] == b"<s>"


def test_a_merge_list_replaces_the_scores() -> None:
    pieces = ["<unk>", "a", "b", "c", "ab", "bc"]
    m = ScoreBPE(pieces, [UNKNOWN] + [NORMAL] * 5, merges=[(2, 3), (1, 2)], unk_id=0, flavour="huggingface")
    assert m.encode_piece("abc") == [1, 5] and m.merge_source == "the file's merge list"
    with pytest.raises(ValueError, match="not in the vocabulary"):
        ScoreBPE(pieces, None, merges=[(1, 3)], flavour="huggingface")


def test_a_pre_token_as_the_decoder_prints_it_is_escaped_like_the_text() -> None:
    assert _model(escape_spaces=True).piece_ids(" ab") == [6]
    assert _model().piece_ids(b"\xff") == [7 + 0xFF]  # bytes that are not UTF-8: their byte pieces


def test_leaves_are_labelled_by_their_kind() -> None:
    m = _model()
    assert [m.leaf_label(i, special=False) for i in (0, 3, 7, 6)] == ["special", "character", "byte fallback", "normal"]
    assert m.kind(1) == "control" and m.kind(10_000) == "control"


def test_scores_and_merges_are_one_or_the_other() -> None:
    with pytest.raises(ValueError, match="either scores or merges"):
        ScoreBPE(["a"], None)
    with pytest.raises(ValueError, match="differ in length"):
        ScoreBPE(["a", "b"], None, scores=[0.0])
