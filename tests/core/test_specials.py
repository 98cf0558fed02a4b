"""Added tokens that are not special, and byte-level vocabularies without every single byte,
checked against Hugging Face ``tokenizers`` on the shared repro files."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.encoding import ADDED, SPECIAL, build_encoding
from bpeinspect.core.tokenizer import Tokenizer
from tests.paths import SHARED

REPROS = SHARED / "vocabs" / "repros"
tokenizers = pytest.importorskip("tokenizers")

TEXTS = ["hi there", "hi there  x", "a\x03b \x00\x7f  \t\n", "  indented\n    more   \n", "é 🎉 日本 x\x03\x03y"]


@pytest.mark.parametrize("name", ["no-invalid-utf8-bytes", "nonspecial-added"])
def test_repros_match_hugging_face(name: str) -> None:
    path = REPROS / f"{name}.tokenizer.json"
    tok = load_tokenizer(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in TEXTS:
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, repr(text)


def test_a_missing_byte_is_dropped_and_added_tokens_match_before_bpe() -> None:
    assert load_tokenizer(REPROS / "no-invalid-utf8-bytes.tokenizer.json").encode("hi there") == [243, 32, 116, 104, 101, 114, 101]
    added = load_tokenizer(REPROS / "nonspecial-added.tokenizer.json")
    assert added.encode("hi there  x") == [256, 32, 116, 104, 101, 114, 101, 257, 120]


def _falcon_like(pattern: str | None = "gpt2") -> Tokenizer:
    ranks = {bytes([b]): b for b in range(256) if b not in (0x03, 0xC0, 0xFF)}
    ranks[b"ab"] = 300
    return Tokenizer(ranks, pattern=pattern, special_tokens={"<s>": 400}, added_tokens={"  ": 401})


def test_missing_bytes_are_listed_and_dropped() -> None:
    tok = _falcon_like(pattern=None)
    assert tok.missing_bytes == (0x03, 0xC0, 0xFF)
    # the dropped byte's neighbours become adjacent and merge, as in Hugging Face
    assert tok.encode("a\x03b") == [300]
    assert tok.decode(tok.encode("x\x03y")) == "xy"
    assert tok.dropped_bytes("a\x03b\x03") == [(1, 2), (3, 4)]


def test_offsets_skip_dropped_bytes() -> None:
    tok = _falcon_like()
    text = "é\x03z ab\x03 q  r"
    enc = tok.encode_with_offsets(text)
    assert enc.ids == tok.encode(text)
    assert enc.dropped == [(1, 2), (6, 7)]
    for t in enc:
        assert text.encode()[t.byte_span[0] : t.byte_span[1]] == t.text_bytes
        if not t.splits_char:
            assert text[t.char_span[0] : t.char_span[1]].encode() == t.text_bytes
    slow = build_encoding(tok, text, tok._segments(text, frozenset(tok.special_tokens)))
    assert (slow.ids, list(slow.byte_starts), slow.dropped) == (enc.ids, list(enc.byte_starts), enc.dropped)


def test_added_and_special_are_kept_apart() -> None:
    tok = _falcon_like()
    assert tok.encode("x  y<s>", disallowed_special=()) == [120, 401, 121, 60, 115, 62]
    assert tok.encode("x  y<s>", allowed_special="all") == [120, 401, 121, 400]
    assert (tok.is_added(401), tok.is_special(401), tok.is_special(400), tok.token_kind(120)) == (True, False, True, "normal")
    text = "x  y<s>"
    for enc in (tok.encode_with_offsets(text), build_encoding(tok, text, tok._segments(text, frozenset({"<s>"})))):
        assert [enc.flags[i] & (ADDED | SPECIAL) for i in range(len(enc))] == [0, ADDED, 0, SPECIAL]
        assert enc.is_added(1) and not enc.is_special(1) and enc.is_special(3)


def test_too_many_missing_bytes_is_not_byte_level() -> None:
    with pytest.raises(ValueError, match="not a byte-level vocabulary"):
        Tokenizer({bytes([b]): b for b in range(100)})


def test_many_added_tokens_are_found_fast() -> None:
    added = {f"<unused{i}>": 1000 + i for i in range(6000)}
    tok = Tokenizer({bytes([b]): b for b in range(256)}, pattern="gpt2", added_tokens=added)
    text = "hello <unused12> world <unused5999><unused1>x " * 2000
    ids = tok.encode(text)
    assert ids.count(1012) == ids.count(1000 + 5999) == ids.count(1001) == 2000


@pytest.mark.parametrize(
    "text",
    ["plain text", "<|a|>", "x<|a|>x<|ab|>", "<|ab|><|a|>", "<|a", "a|>b", "<|abc|>", "ü<|ü|>", "<<|ab|>>", "é"],
)
def test_disallowed_specials_are_found_as_the_alternation_finds_them(text: str) -> None:
    # a check that builds no regex when no special can start in the text, and a trie otherwise:
    # the same token named (the longest at the leftmost place) as the plain alternation names
    import regex

    from bpeinspect.core.errors import DisallowedSpecialError
    from bpeinspect.core.specials import check_disallowed

    disallowed = {"<|a|>", "<|ab|>", "<|a|>x", "<|ü|>", "é"}
    alternation = regex.compile("|".join(regex.escape(s) for s in sorted(disallowed, key=lambda s: (-len(s), s))))
    expected = alternation.search(text)
    if expected is None:
        check_disallowed(text, disallowed)
    else:
        with pytest.raises(DisallowedSpecialError, match=f"special token {regex.escape(repr(expected.group()))}"):
            check_disallowed(text, disallowed)
    with pytest.raises(DisallowedSpecialError, match="token ''"):
        check_disallowed(text, {""})  # the empty string is everywhere


def test_a_missing_byte_parts_its_neighbours_as_in_llama_cpp() -> None:
    ranks = {bytes([b]): b for b in range(256) if b != 0x03}
    ranks[b"ab"] = 300
    hf = Tokenizer(ranks, pattern=None, merges=[(97, 98)])
    llama = Tokenizer(ranks, pattern=None, merges=[(97, 98)], byte_barriers=True)
    assert hf.encode("a\x03b") == [300]  # Hugging Face drops the byte, then merges
    assert llama.encode("a\x03b") == [97, 98]  # llama.cpp merges around it, then drops it
    assert llama.encode("ab\x03\x03ab\x03") == [300, 300]
    enc = llama.encode_with_offsets("a\x03b")
    assert (enc.ids, enc.dropped) == ([97, 98], [(1, 2)])


def test_the_rank_tables_ask_should_stop_between_slices_and_a_stop_cancels() -> None:
    from bpeinspect.core import Cancelled
    from bpeinspect.core.specials import _TABLE_SLICE, rank_tables

    ranks = {i.to_bytes(3, "big"): i for i in range(3 * _TABLE_SLICE + 5)}
    asked: list[bool] = []
    copy, decoder, low, high = rank_tables(ranks, lambda: asked.append(True) or False)
    assert copy == ranks and decoder == {i: t for t, i in ranks.items()} and (low, high) == (0, len(ranks) - 1)
    assert len(asked) == 1 + 4  # once before the copy, once before each slice of the inverse
    with pytest.raises(Cancelled):
        rank_tables(ranks, lambda: True)
    late = iter([False, False, True])
    with pytest.raises(Cancelled):
        rank_tables(ranks, lambda: next(late))  # a stop asked between two slices
