"""Offsets of every token: bytes, code points and UTF-16 units, checked against the text itself."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import Cancelled, Tokenizer, load_tokenizer
from bpeinspect.core.encoding import build_encoding
from bpeinspect.core.text import fix_surrogates
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples
from tests.core.live_text.test_edits import CUTTABLE, SAMPLE, assert_same, cuttable_tokenizer

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]


def check_encoding(tok, text: str) -> None:
    enc = tok.encode_with_offsets(text)
    assert enc.ids == tok.encode(text, allowed_special="all")
    data = text.encode("utf-8")
    # independent maps from each character to its byte and UTF-16 offsets
    byte_at, u16_at = [0], [0]
    for ch in text:
        byte_at.append(byte_at[-1] + len(ch.encode("utf-8")))
        u16_at.append(u16_at[-1] + len(ch.encode("utf-16-le")) // 2)
    char_of_byte = {b: i for i, b in enumerate(byte_at)}
    pos = 0
    for t in enc:
        b0, b1 = t.byte_span
        assert b0 == pos, "tokens tile the bytes"
        assert data[b0:b1] == t.text_bytes == tok.token_bytes(t.id)
        c0, c1 = t.char_span
        # the character span is the smallest one covering the bytes
        assert byte_at[c0] <= b0 < byte_at[c0 + 1]
        assert byte_at[c1 - 1] < b1 <= byte_at[c1]
        assert t.utf16_span == (u16_at[c0], u16_at[c1])
        assert t.splits_char == (b0 not in char_of_byte or b1 not in char_of_byte)
        assert t.special == (t.id in tok.special_tokens.values())
        ps = enc.piece_spans[t.piece]
        assert ps[0] <= c0 and c1 <= ps[1]
        pos = b1
    assert pos == len(data)


@pytest.mark.parametrize("name", NAMES)
def test_offsets_on_corpus(name: str) -> None:
    tok = load_tokenizer(name)
    for text in PROSE + ADVERSARIAL + code_samples(40_000):
        check_encoding(tok, text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_offsets_hypothesis(text: str) -> None:
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    for name in NAMES:
        check_encoding(load_tokenizer(name), text)


def test_hand_checked_emoji() -> None:
    enc = load_tokenizer("cl100k_base").encode_with_offsets("hi 🎉!")
    got = [(t.text_bytes, t.char_span, t.utf16_span, t.splits_char) for t in enc]
    assert got == [
        (b"hi", (0, 2), (0, 2), False),
        (b" \xf0\x9f", (2, 4), (2, 5), True),  # the space and the first half of the emoji
        (b"\x8e", (3, 4), (3, 5), True),
        (b"\x89", (3, 4), (3, 5), True),
        (b"!", (4, 5), (5, 6), False),
    ]
    # the three tokens holding the emoji form one group
    assert enc.char_groups() == [(0, 0), (1, 3), (4, 4)]
    assert enc.token_at_utf16(5) == 4
    assert enc.token_at_char(0) == 0
    assert enc.token_at_char(99) is None


def test_hand_checked_cjk_in_gpt2() -> None:
    tok = load_tokenizer("gpt2")
    enc = tok.encode_with_offsets("a日")
    spans = [(t.text_bytes, t.byte_span, t.char_span) for t in enc]
    assert b"".join(s[0] for s in spans) == "a日".encode()
    assert spans[0] == (b"a", (0, 1), (0, 1))
    assert all(s[2] == (1, 2) for s in spans[1:])


def test_special_tokens_marked() -> None:
    tok = load_tokenizer("cl100k_base")
    enc = tok.encode_with_offsets("x<|endoftext|>y")
    assert [t.special for t in enc] == [False, True, False]
    assert enc.token(1).char_span == (1, 14)
    assert enc.piece_spans == [(0, 1), (1, 14), (14, 15)]
    plain = tok.encode_with_offsets("x<|endoftext|>y", allowed_special=())
    assert not any(t.special for t in plain)


def test_surrogates_offsets_refer_to_fixed_text() -> None:
    enc = load_tokenizer("cl100k_base").encode_with_offsets("a\ud800b")
    assert enc.text == "a\ufffdb"


def test_cancel_stops_long_encode() -> None:
    tok = load_tokenizer("cl100k_base")
    with pytest.raises(Cancelled):
        tok.encode_with_offsets("word " * 10_000, should_stop=lambda: True)


def slow_encoding(tok: Tokenizer, text: str):
    """The token-by-token builder, with every special token recognised (the public default)."""
    text = fix_surrogates(text)
    specials = sorted(tok.special_tokens, key=lambda s: (-len(s), s))
    segments, pos = [], 0
    for m in regex.finditer("|".join(map(regex.escape, specials)) or r"(?!)", text):
        segments += [(text[pos : m.start()], None)] if m.start() > pos else []
        segments.append((m.group(), tok.special_tokens[m.group()]))
        pos = m.end()
    segments += [(text[pos:], None)] if pos < len(text) else []
    return build_encoding(tok, text, segments)


@pytest.fixture(scope="module", params=CUTTABLE)
def any_tok(request):
    return cuttable_tokenizer(request.param)


def test_public_offsets_equal_the_slow_builder_on_the_corpus(any_tok):
    texts = PROSE + ADVERSARIAL + code_samples(40_000)
    texts += [SAMPLE * 4, "", "x", "\ud83d lone surrogate", "<|endoftext|>", "a" * 3000 + "😀" * 50]
    for text in texts:
        assert_same(any_tok.encode_with_offsets(text), slow_encoding(any_tok, text))


@settings(max_examples=80, deadline=None)
@given(text=st.text(max_size=80))
def test_public_offsets_equal_the_slow_builder_o200k(text):
    tok = load_tokenizer("o200k_base")
    assert_same(tok.encode_with_offsets(text), slow_encoding(tok, text))


def test_the_first_encode_with_offsets_asks_should_stop_while_it_builds_the_token_lengths() -> None:
    from bpeinspect.core.encoding import token_lengths

    decoder = {i: b"x" * (i % 5) for i in range(3 * (1 << 14) + 1)}
    asked: list[bool] = []
    lens = token_lengths(decoder, len(decoder), lambda: asked.append(True) or False)
    assert len(asked) == 4 and [int(n) for n in lens[:6]] == [0, 1, 2, 3, 4, 0]
    with pytest.raises(Cancelled):
        token_lengths(decoder, len(decoder), lambda: True)
    tok = Tokenizer(load_tokenizer("r50k_base").mergeable_ranks, pattern="gpt2")  # no lengths built yet
    answers = iter([False, True])  # go on past the ids (one segment), stop in the lengths
    with pytest.raises(Cancelled):
        tok.encode_with_offsets("Hello", should_stop=lambda: next(answers))
    assert [t.id for t in tok.encode_with_offsets("Hello")] == [15496]


def test_the_offsets_of_a_long_text_are_converted_a_slice_at_a_time(monkeypatch) -> None:
    """Offsets built for a whole long text (a worker encoding 10 MB next to the window) turn
    ids, offsets and code points between lists and arrays a slice at a time: one conversion
    of 2.4M tokens held the interpreter, and the GUI thread with it, for 100-300 ms."""
    from bpeinspect.core import encoding
    from tests.c_calls import receiver_sizes

    monkeypatch.setattr(encoding, "_STEP", 256, raising=False)
    tok = load_tokenizer("o200k_base")
    text = " ".join(PROSE) * 20
    whole = tok.encode_with_offsets(text)
    assert len(whole) > 20 * 256
    calls = receiver_sizes(lambda: tok.encode_with_offsets(text), "encoding.py")
    conversions = ("tolist", "tobytes", "encode")  # Python objects from an array or a text
    big = [(name, size) for name, size in calls if name in conversions and size > 4 * 256]
    assert not big, big
    check_encoding(tok, text[:5000])


def test_a_long_texts_encode_asks_should_stop_between_slices_of_its_pre_tokens(monkeypatch) -> None:
    """A worker encoding a whole long text gives way (and hears a cancel) a slice of its
    pre-tokens at a time, not once per text: the ids of a 10 MB text's pre-tokens were looked
    up in one C call that held the interpreter for 100 ms."""
    from bpeinspect.core import encoding

    monkeypatch.setattr(encoding, "_STEP", 256, raising=False)
    tok = load_tokenizer("o200k_base")
    text = " ".join(PROSE) * 20
    whole = tok.encode_with_offsets(text)  # (the token lengths are built by now)
    asked: list[bool] = []
    again = tok.encode_with_offsets(text, should_stop=lambda: asked.append(True) or False)
    assert again.ids == whole.ids and len(asked) >= len(whole.piece_spans) // 256
    answers = iter([False] * 3 + [True])
    with pytest.raises(Cancelled):
        tok.encode_with_offsets(text, should_stop=lambda: next(answers))


def test_a_long_texts_offsets_are_built_without_full_collections_after_a_freeze() -> None:
    """After ``gc.freeze`` (the app and the command line freeze what they have loaded), the
    collector's oldest generation looks empty, so building a long text's encoding set off one
    full collection after another, each walking the encoding built so far."""
    import gc

    tok = load_tokenizer("cl100k_base")
    text = " ".join(PROSE) * 400
    full: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.freeze()
    gc.collect()  # (a full collection after the freeze leaves the oldest generation near empty)
    gc.callbacks.append(count)
    try:
        whole = tok.encode_with_offsets(text)
    finally:
        gc.callbacks.remove(count)
        gc.unfreeze()
    assert len(whole) > 100_000 and not full
