"""Cut points: parts cut there split, encode and count exactly as the whole text."""

from __future__ import annotations

import random
import re
from itertools import accumulate

import pytest

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.split.cuts import (
    bmp_class_body,
    can_cut,
    cut_spans,
    cut_text,
    is_cut,
    last_cut,
    next_cut,
    rule_can_cut,
    stream_cut,
)
from bpeinspect.core.split.patterns import QWEN2_PATTERN
from bpeinspect.core.split.rules import PRESETS, Split, SplitRule, resolve_rule
from tests.core.corpus import ADVERSARIAL, NEW_IN_UNICODE_17, PROSE, all_texts, code_samples

LETTER_OR_DIGIT_NEWLINE = re.compile("(?<=[" + bmp_class_body(("Lu", "Lt", "Ll", "Lm", "Lo", "N")) + "])\n")


def test_cut_points_lie_at_newlines() -> None:
    text = "ab\n).\nx\n\n9\né\n𝐀\nend\n \nq\n/x"
    after_letter = [m.start() for m in LETTER_OR_DIGIT_NEWLINE.finditer(text)]
    assert after_letter == [2, 7, 10, 12, 18, 22]  # not after ")." or "\n", nor after an astral letter
    between_solid = [3, 6, 11, 13, 15]  # not after "\n\n" or " \n", nor before "/"
    cuts = sorted(after_letter + between_solid)
    assert [q for q in range(len(text) + 1) if is_cut(text, q)] == cuts
    with_lookahead = sorted([*cuts, 9, 21])  # ... but before a solid character whatever precedes
    assert [q for q in range(len(text) + 1) if is_cut(text, q, lookahead=True)] == with_lookahead
    for lookahead, want in ((False, cuts), (True, with_lookahead)):
        forward, pos = [], 0
        while (k := next_cut(text, pos, lookahead=lookahead)) >= 0:
            forward.append(k)
            pos = k + 1
        assert forward == want
        backward, end = [], len(text)
        while (k := last_cut(text, 0, end, lookahead=lookahead)) >= 0:
            backward.append(k)
            end = k
        assert backward == want[::-1]
    assert last_cut(text, 0, 7) == 6
    assert next_cut(text, 4, 6) == -1
    assert next_cut("\n\n") == last_cut("\n") == -1
    assert next_cut("\nab\n") == 3  # a newline at the start is looked past, not an end


ATOMS = ["word", " ", "\n", "x\n", "9\n", ").\n", "\n\n", "  \n", "é\n", "𝐀\n", "🙂", "\ud800", "\t", "/", "\r\n",
         "'s", "\u058b", "\u3000", "\x85", "\u200b", "\u0301", "12345", "<|endoftext|>", "...", "; "]  # fmt: skip


@pytest.mark.parametrize("name", [*sorted(PRESETS), "qwen2"])
def test_every_cut_point_splits_as_the_whole(name: str) -> None:
    rule = resolve_rule(QWEN2_PATTERN) if name == "qwen2" else PRESETS[name]
    rng = random.Random(name)
    for _ in range(300):
        text = "".join(rng.choices(ATOMS, k=rng.randrange(2, 40)))
        whole = rule.pieces(text)
        for q in range(1, len(text)):
            if is_cut(text, q):
                assert rule.pieces(text[:q]) + rule.pieces(text[q:]) == whole, (text, q)
            if is_cut(text, q, lookahead=True):  # a pre-token starts at q, given the character after it
                left = rule.pieces(text[: q + 1])
                assert sum(map(len, left[:-1])) == q, (text, q)
                assert left[:-1] + rule.pieces(text[q:]) == whole, (text, q)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_cutting_long_texts_splits_them_as_a_whole(name: str) -> None:
    rule = PRESETS[name]
    texts = all_texts() + ["\n".join(PROSE + ADVERSARIAL), NEW_IN_UNICODE_17]
    for text in texts:
        parts = cut_text(text, 40)
        assert "".join(parts) == text
        assert [p for part in parts for p in rule.pieces(part)] == rule.pieces(text)


def test_no_cut_after_a_character_tiktoken_does_not_know() -> None:
    # U+058B is a letter to the regex module (Unicode 17) but not to tiktoken and Hugging Face
    # (15.1), whose patterns take the newline after it into the same piece
    text = "word\u058b\n next " * 100
    assert cut_text(text, 10) == [text]
    for name in ("cl100k", "o200k"):
        assert "\u058b\n" in PRESETS[name].pieces(text)


def test_cut_text_sizes() -> None:
    text = "\n".join(["word"] * 1000)
    parts = cut_text(text, 100)
    assert len(parts) > 40
    assert all(len(p) <= 105 for p in parts)
    assert cut_text("no newline" * 50, 10) == ["no newline" * 50]
    spans = list(cut_spans(text, 100))
    assert [text[a:b] for a, b in spans] == parts
    assert all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))


@pytest.mark.parametrize("seed", range(6))
def test_streamed_parts_are_the_text_cut_at_cut_points(seed: int) -> None:
    rng = random.Random(seed)
    text = "\n".join(PROSE + ADVERSARIAL) + code_samples(20_000)[0] + NEW_IN_UNICODE_17
    bounds = sorted(rng.sample(range(1, len(text)), rng.randrange(1, 400)))
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    size = rng.choice((0, 1, 50, 5000))
    parts = list(stream_cut(chunks, size=size))
    assert "".join(parts) == text
    assert all(parts)
    ends = list(accumulate(map(len, parts)))
    assert all(is_cut(text, q) for q in ends[:-1])
    for name in ("cl100k", "gpt2"):
        rule = PRESETS[name]
        assert [p for part in parts for p in rule.pieces(part)] == rule.pieces(text)


def test_streamed_parts_reach_their_size_before_a_cut() -> None:
    chunks = ["ab\n" * 10] * 10
    parts = list(stream_cut(chunks, size=70))
    assert all(len(p) >= 70 for p in parts[:-1])
    assert len(parts) > 2
    assert list(stream_cut(chunks, cuts=False)) == ["".join(chunks)]
    assert list(stream_cut(["", "x", ""])) == ["x"]
    assert list(stream_cut([])) == []


def test_which_rules_and_tokenizers_may_be_cut() -> None:
    for rule in PRESETS.values():
        assert rule_can_cut(rule)
    assert rule_can_cut(SplitRule.from_pattern(PRESETS["gpt2"].pattern))  # however it was given
    assert not rule_can_cut(resolve_rule(r"\S+\s*"))
    assert not rule_can_cut(SplitRule((), name="none"))
    # llama.cpp's Unicode tables may class a letter otherwise
    assert not rule_can_cut(SplitRule((Split(PRESETS["gpt2"].pattern),), unicode="llama"))
    base = load_tokenizer("cl100k_base")
    assert can_cut(base)
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*")
    assert not can_cut(custom)
    newline_special = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, special_tokens={"a\nb": base.n_vocab})
    assert not can_cut(newline_special)
    added = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, added_tokens={"<tool call>": base.n_vocab})
    assert can_cut(added)
