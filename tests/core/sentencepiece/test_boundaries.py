"""Pre-tokens of SentencePiece-style BPE: cut before a ▁ no piece glues to the character before it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bpeinspect.core.sentencepiece.boundaries import boundary_rule


def test_a_space_mark_starts_a_new_pre_token():
    assert boundary_rule(["▁a", "b"], []).pieces("▁ab▁c▁d") == ["▁ab", "▁c", "▁d"]


def test_a_character_some_piece_holds_before_the_mark_keeps_the_mark_with_it():
    assert boundary_rule(["x▁"], []).pieces("▁ax▁b") == ["▁ax▁b"]
    assert boundary_rule(["y▁"], []).pieces("▁ax▁b") == ["▁ax", "▁b"]


def test_user_defined_pieces_stand_alone():
    assert boundary_rule(["▁a"], ["<mask>"]).pieces("▁a<mask>▁b") == ["▁a", "<mask>", "▁b"]


def test_newline_words_keep_runs_of_newlines_apart():
    assert boundary_rule(["▁a"], [], newline_words=True).pieces("▁a\n\n▁b") == ["▁a", "\n\n", "▁b"]
    assert boundary_rule(["▁a"], []).pieces("▁a\n\n▁b") == ["▁a\n\n", "▁b"]


@given(
    st.lists(st.text(alphabet="ab▁x\n", min_size=1, max_size=4), max_size=6),
    st.text(alphabet="ab▁x\n<>", max_size=40),
)
def test_the_pre_tokens_join_to_the_text(pieces, text):
    assert "".join(boundary_rule(pieces, ["<>"]).pieces(text)) == text
