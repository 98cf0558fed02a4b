"""Encodes in segments and of edits must equal one full encode, column for column."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.live_text import LiveEncoding, LiveText, encode_segment, find_edit, reencode_edit
from bpeinspect.core.split.cuts import can_cut

COLUMNS = ("ids", "byte_starts", "byte_ends", "char_starts", "char_ends", "utf16_starts", "utf16_ends", "pieces_of")

SAMPLE = (
    "Hello world!\n  indented line\n\n\nfoo(bar) = 42;\r\nGrüße aus Köln\n"
    "Привет, мир\n😀👩‍👩‍👧 emoji\n日本語のテキスト\n\t\ttabs\n   \n1234567 numbers\n"
    "<|endoftext|> special\n'll 've contractions\n"
)
ALPHABET = list("ab ZK1.\n\n\t'\r") + ["ü", "Я", "日", "😀", "\u200d", "  ", "\n  ", "<|endoftext|>"]


def encode_in_segments(tok, text, chunk):
    """``text`` encoded in segments of about ``chunk`` code points, joined."""
    live = LiveEncoding(tok, LiveText(text, target=chunk))
    for seg, head in live.pending():
        assert live.put(seg, encode_segment(tok, seg.text, head), head)
    return live.encoding()


def columns(enc):
    return {c: list(getattr(enc, c)) for c in COLUMNS} | {"flags": bytes(enc.flags), "piece_spans": enc.piece_spans}


def assert_same(got, want):
    assert got.text == want.text
    g, w = columns(got), columns(want)
    for key in w:
        assert g[key] == w[key], key


CUTTABLE = ["r50k_base", "cl100k_base", "o200k_base", "gpt4", "gpt2"]


def cuttable_tokenizer(name: str) -> Tokenizer:
    """A built-in, or r50k's ranks under a minbpe-style preset pattern run by the regex module."""
    if name in ("gpt4", "gpt2"):
        base = load_tokenizer("r50k_base")
        return Tokenizer(base.mergeable_ranks, pattern=name, special_tokens=base.special_tokens)
    return load_tokenizer(name)


@pytest.fixture(scope="module", params=CUTTABLE)
def tok(request):
    return cuttable_tokenizer(request.param)


def test_presets_support_cutting(tok):
    assert can_cut(tok)


def test_custom_pattern_is_not_cut():
    base = load_tokenizer("r50k_base")
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*")
    assert not can_cut(custom)
    text = "ab cd\nef\n" * 50
    assert_same(encode_in_segments(custom, text, chunk=8), custom.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_segments_equal_full(tok, chunk):
    text = SAMPLE * 5
    assert_same(encode_in_segments(tok, text, chunk=chunk), tok.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_a_cut_before_a_special_token(tok, chunk):
    # the text before a special token is split on its own: "\n\n" then ends the text for
    # the split rule (one pre-token under GPT-2's rule), so a cut there may not look past it
    text = "ab\n\n<|endoftext|>x\n  \n<|endoftext|>\n" * 3
    assert_same(encode_in_segments(tok, text, chunk=chunk), tok.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 3, 16])
def test_lines_starting_with_a_slash_are_cut_without_falling_back(tok, chunk, monkeypatch):
    # o200k's punctuation pre-token runs on over newlines and slashes (";\n/" is one piece),
    # so a newline before "/" is no cut point; the text is cut elsewhere
    text = "a;\n/b\nc//\n/d;\n//e\n" * 20
    encoded = []
    full = tok.encode_with_offsets

    def spy(window, **kw):
        encoded.append(len(window))
        return full(window, **kw)

    want = full(text)
    monkeypatch.setattr(tok, "encode_with_offsets", spy)
    assert_same(encode_in_segments(tok, text, chunk=chunk), want)
    assert max(encoded) < len(text)


@pytest.mark.parametrize("in_place", [False, True])
def test_random_edits_equal_full(tok, in_place):
    rng = random.Random(5)
    text = SAMPLE * 3
    enc = tok.encode_with_offsets(text)
    for _ in range(150):
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.choice([0, 0, 1, 2, 5, 30]))
        ins = "".join(rng.choice(ALPHABET) for _ in range(rng.choice([0, 1, 1, 2, 4])))
        new = text[:i] + ins + text[j:]
        got = reencode_edit(tok, enc, new, *find_edit(text, new), in_place=in_place)
        assert (got is enc) == (in_place and can_cut(tok))
        assert_same(got, tok.encode_with_offsets(new))
        text, enc = new, got


@settings(max_examples=60, deadline=None)
@given(
    base=st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join),
    pos=st.integers(0, 200),
    cut=st.integers(0, 5),
    ins=st.lists(st.sampled_from(ALPHABET), max_size=3).map("".join),
)
def test_edit_property_cl100k(base, pos, cut, ins):
    tok = load_tokenizer("cl100k_base")
    pos = min(pos, len(base))
    new = base[:pos] + ins + base[pos + cut :]
    got = reencode_edit(tok, tok.encode_with_offsets(base), new, *find_edit(base, new))
    assert_same(got, tok.encode_with_offsets(new))
    got = reencode_edit(tok, tok.encode_with_offsets(base), new, *find_edit(base, new), in_place=True)
    assert_same(got, tok.encode_with_offsets(new))


def test_find_edit():
    assert find_edit("abc", "abc") == (3, 3, 3)
    assert find_edit("aaa", "aaaa") == (3, 3, 4)
    assert find_edit("xyz", "") == (0, 3, 0)
    assert find_edit("ab😀cd", "ab😀Xcd") == (3, 3, 4)


def test_encoding_a_segment_can_be_cancelled():
    from bpeinspect.core import Cancelled

    tok = load_tokenizer("cl100k_base")
    with pytest.raises(Cancelled):
        encode_segment(tok, "word\n" * 50_000, should_stop=lambda: True)
