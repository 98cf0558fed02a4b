"""The pre-tokenizer: special and added tokens cut out, then the split rule."""

from __future__ import annotations

import pytest

from bpeinspect.core.pretokenizer import PreTokenizer
from bpeinspect.core.split.rules import SplitRule, resolve_rule


def test_added_tokens_are_cut_out_always_special_ones_only_when_allowed() -> None:
    pre = PreTokenizer(resolve_rule("gpt2"), special_tokens={"<s>": 1}, added_tokens={"<a>": 2})
    assert pre.segments("x<a>y<s>", frozenset()) == [("x", None), ("<a>", 2), ("y<s>", None)]
    assert pre.segments("x<a>y<s>", frozenset({"<s>"})) == [("x", None), ("<a>", 2), ("y", None), ("<s>", 1)]


def test_a_finder_that_tiles_the_text_gives_the_pieces_and_their_spans() -> None:
    rule = SplitRule.from_pattern(r"▁[^▁]*|[^▁]+")
    pre = PreTokenizer(rule, find=lambda text: [p for p in text.replace("▁", "\0▁").split("\0") if p])
    assert pre.pieces("ab▁c▁d") == ["ab", "▁c", "▁d"] and pre.spans("ab▁c▁d") == [(0, 2), (2, 4), (4, 6)]
    assert pre.tiles and not pre.sliceable


def test_without_a_finder_the_rule_splits() -> None:
    pre = PreTokenizer(resolve_rule("cl100k"))
    assert pre.pieces("hello world") == ["hello", " world"] and pre.spans("hello world") == [(0, 5), (5, 11)]
    assert not pre.tiles and pre.sliceable


def test_more_special_tokens_make_a_copy() -> None:
    pre = PreTokenizer(resolve_rule(None), special_tokens={"<s>": 1})
    more = pre.with_special_tokens({"<t>": 2})
    assert more.special_tokens == {"<s>": 1, "<t>": 2} and pre.special_tokens == {"<s>": 1}


def test_an_empty_special_token_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        PreTokenizer(resolve_rule(None), special_tokens={"": 1})
