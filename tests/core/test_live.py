"""Chunked and incremental encodes must equal one full encode, column for column."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.live import (
    CHEAP_EDIT_LIMIT,
    CHEAP_TEXT_LIMIT,
    encode_chunked,
    find_edit,
    plan_encode,
    reencode_edit,
)
from bpeinspect.core.split.cuts import can_cut

COLUMNS = ("ids", "byte_starts", "byte_ends", "char_starts", "char_ends", "utf16_starts", "utf16_ends", "pieces_of")

SAMPLE = (
    "Hello world!\n  indented line\n\n\nfoo(bar) = 42;\r\nGrüße aus Köln\n"
    "Привет, мир\n😀👩‍👩‍👧 emoji\n日本語のテキスト\n\t\ttabs\n   \n1234567 numbers\n"
    "<|endoftext|> special\n'll 've contractions\n"
)
ALPHABET = list("ab ZK1.\n\n\t'\r") + ["ü", "Я", "日", "😀", "\u200d", "  ", "\n  ", "<|endoftext|>"]


def columns(enc):
    return {c: list(getattr(enc, c)) for c in COLUMNS} | {"flags": bytes(enc.flags), "piece_spans": enc.piece_spans}


def assert_same(got, want):
    assert got.text == want.text
    g, w = columns(got), columns(want)
    for key in w:
        assert g[key] == w[key], key


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base", "o200k_base", "gpt4", "gpt2"])
def tok(request):
    if request.param in ("gpt4", "gpt2"):  # minbpe-style patterns run by the regex module
        base = load_tokenizer("r50k_base")
        return Tokenizer(base.mergeable_ranks, pattern=request.param, special_tokens=base.special_tokens)
    return load_tokenizer(request.param)


def test_presets_support_cutting(tok):
    assert can_cut(tok)


def test_custom_pattern_is_not_cut():
    base = load_tokenizer("r50k_base")
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*")
    assert not can_cut(custom)
    text = "ab cd\nef\n" * 50
    assert_same(encode_chunked(custom, text, chunk=8), custom.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_chunked_equals_full(tok, chunk):
    text = SAMPLE * 5
    assert_same(encode_chunked(tok, text, chunk=chunk), tok.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_a_cut_before_a_special_token(tok, chunk):
    # the text before a special token is split on its own: "\n\n" then ends the text for
    # the split rule (one pre-token under GPT-2's rule), so a cut there may not look past it
    text = "ab\n\n<|endoftext|>x\n  \n<|endoftext|>\n" * 3
    assert_same(encode_chunked(tok, text, chunk=chunk), tok.encode_with_offsets(text))


@pytest.mark.parametrize("chunk", [1, 3, 16])
def test_lines_starting_with_a_slash_are_cut_without_falling_back(tok, chunk, monkeypatch):
    # o200k's punctuation pre-token runs on over newlines and slashes (";\n/" is one piece),
    # so a newline before "/" is no hard boundary; a cut there would fail to sync and the
    # whole text would be encoded again in one piece
    text = "a;\n/b\nc//\n/d;\n//e\n" * 20
    encoded = []
    full = tok.encode_with_offsets

    def spy(window, **kw):
        encoded.append(len(window))
        return full(window, **kw)

    want = full(text)
    monkeypatch.setattr(tok, "encode_with_offsets", spy)
    assert_same(encode_chunked(tok, text, chunk=chunk), want)
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


def test_first_chunk_is_a_true_prefix_encoding():
    tok100 = load_tokenizer("cl100k_base")
    text = "a line of text, 日本 😀 and\n" * 3000
    firsts = []
    full = encode_chunked(tok100, text, chunk=4096, on_first=firsts.append)
    assert len(firsts) == 1
    first = firsts[0]
    assert 4096 <= len(first.text) < len(text) and text.startswith(first.text)
    assert first.ids == full.ids[: len(first.ids)]
    assert list(first.utf16_starts) == list(full.utf16_starts[: len(first.ids)])


def test_plan_incremental_matches_full():
    tok = load_tokenizer("cl100k_base")
    text = "line one\nline two 😀\nline three\n" * 600
    base = tok.encode_with_offsets(text)
    new = text[:3000] + "inserted 日本 " + text[3000:]
    plan = plan_encode(tok, new, base)
    assert plan.mode == "incremental" and plan.cheap
    r = plan.run()
    assert_same(r.enc, tok.encode_with_offsets(new))
    at = len(new[:3000].encode("utf-16-le")) // 2  # the edit, in UTF-16 units
    assert r.changed is not None and r.changed[0] <= at < r.changed[1]
    fresh = plan_encode(tok, new)
    assert fresh.mode == "chunked" and not fresh.cheap
    assert_same(fresh.run().enc, r.enc)


def test_plan_modes_and_cheapness(tok):
    base = tok.encode_with_offsets("a\nb\n")
    assert plan_encode(tok, "a\nbc\n", base).cheap  # one character in a short text
    assert plan_encode(tok, "xyz", base).mode == "full"  # most of the text changed
    assert plan_encode(tok, "xyz", base).cheap  # ...but it is short
    long_edit = "a\nb\n" + "w " * CHEAP_EDIT_LIMIT
    assert plan_encode(tok, long_edit, tok.encode_with_offsets(long_edit[:-2])).cheap
    assert not plan_encode(tok, long_edit + "\n", base).cheap
    big = "line\n" * (CHEAP_TEXT_LIMIT // 5 + 1)
    plan = plan_encode(tok, big + "x", tok.encode_with_offsets(big))
    assert not plan.cheap and "edit" not in vars(plan)  # no comparing of long texts yet
    assert plan.mode == "incremental"


def test_plan_uses_a_consistent_edit_hint():
    tok = load_tokenizer("cl100k_base")
    base = tok.encode_with_offsets("one\ntwo\n")
    plan = plan_encode(tok, "one\ntwo!\n", base, edit=(7, 7, 8))
    assert plan.edit == (7, 7, 8)
    assert_same(plan.run().enc, tok.encode_with_offsets("one\ntwo!\n"))
    wrong = plan_encode(tok, "one\ntwo!\n", base, edit=(0, 0, 5))  # lengths disagree: ignored
    assert wrong.edit == (7, 7, 8)


def test_plan_without_cutting_is_full():
    base = load_tokenizer("r50k_base")
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*")
    plan = plan_encode(custom, "ab cd\n" * 5000, custom.encode_with_offsets("ab cd\n"))
    assert plan.mode == "full" and not plan.cheap and plan.edit is None
    assert_same(plan.run().enc, custom.encode_with_offsets("ab cd\n" * 5000))


def test_plan_can_be_cancelled():
    from bpeinspect.core import Cancelled

    tok = load_tokenizer("cl100k_base")
    with pytest.raises(Cancelled):
        plan_encode(tok, "word\n" * 50_000).run(should_stop=lambda: True)
