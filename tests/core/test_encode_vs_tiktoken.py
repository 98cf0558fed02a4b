"""Token-for-token equality with tiktoken for the three built-in vocabularies."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeinspect.core import DisallowedSpecialError, load_tokenizer
from tests.core.corpus import ADVERSARIAL, PROSE, all_texts
from tests.reference import BUILTIN_NAMES, tiktoken_encoding

# Every assigned code point, and a sample of the unassigned and private-use ones (their class
# tables are checked one by one in test_unicode_tables).
ALL_CODE_POINTS = "".join(
    chr(c)
    for c in range(0x110000)
    if not 0xD800 <= c < 0xE000 and (unicodedata.category(chr(c)) not in ("Cn", "Co") or c % 37 == 0)
)


@pytest.fixture(scope="module", params=BUILTIN_NAMES)
def pair(request):
    return load_tokenizer(request.param), tiktoken_encoding(request.param)


def test_broad_corpus_ordinary(pair) -> None:
    ours, ref = pair
    for text in all_texts():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), text[:80]


def test_broad_corpus_with_specials(pair) -> None:
    ours, ref = pair
    for text in PROSE + ADVERSARIAL:
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all"), text[:80]
        assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())


def test_every_code_point_in_every_context(pair) -> None:
    """Each character in a run of its neighbours, after a space, after an apostrophe, before a digit."""
    ours, ref = pair
    for start in range(0, len(ALL_CODE_POINTS), 4096):
        chunk = ALL_CODE_POINTS[start : start + 4096]
        for ctx in ("{}", " {}", "'{}", "{}7"):
            text = "".join(ctx.format(c) for c in chunk)
            assert ours.encode_ordinary(text) == ref.encode_ordinary(text), (start, ctx)


def test_disallowed_special_raises_like_tiktoken(pair) -> None:
    ours, ref = pair
    text = "hello <|endoftext|> world"
    with pytest.raises(ValueError):
        ref.encode(text)
    with pytest.raises(DisallowedSpecialError):
        ours.encode(text)
    # explicitly disallowing only one token, allowing none
    assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert ours.encode(text, allowed_special={"<|endoftext|>"}) == ref.encode(text, allowed_special={"<|endoftext|>"})


def test_lone_surrogates_become_replacement(pair) -> None:
    ours, ref = pair
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d", "ok \udc00\ud800 end"]:
        assert ours.encode(text) == ref.encode(text)
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def test_decode_round_trip(pair) -> None:
    ours, ref = pair
    for text in all_texts():
        ids = ours.encode(text, disallowed_special=())
        assert ours.decode(ids) == text
        assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
    valid = [i for i in range(0, ours.n_vocab, 997) if _has(ref, i)]
    assert ours.decode(valid) == ref.decode(valid)


def _has(ref, i: int) -> bool:
    try:
        ref.decode_single_token_bytes(i)
        return True
    except KeyError:
        return False


def test_token_bytes_match(pair) -> None:
    ours, ref = pair
    for i in range(ours.n_vocab):
        if _has(ref, i):
            assert ours.token_bytes(i) == ref.decode_single_token_bytes(i)


# Text built from the pieces that trip tokenizers up, in random combinations.
_ATOMS = st.sampled_from(
    [" ", "  ", "\n", "\r\n", "\t", "\u00a0", "'s", "'S", "'ll", "'LL", "'", "’", "a", "Z", "é", "ß", "İ", "ſ",
     "1", "23", "4567", "٣", "½", "日本", "한", "🎉", "👨‍👩‍👧", "\u0301", "\u200d", "!", "?!", "...", "/", "\\",
     "<|endoftext|>", "<|fim_prefix|>", "\x00", "\x1c", "\ud800", "\U0001f600", "ǅ", "ʰ", "ab", "The", " the"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ATOMS, max_size=40).map("".join))
def test_hypothesis_atoms(text: str) -> None:
    for name in BUILTIN_NAMES:
        ours, ref = load_tokenizer(name), tiktoken_encoding(name)
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60))
def test_hypothesis_arbitrary_unicode(text: str) -> None:
    for name in BUILTIN_NAMES:
        ours, ref = load_tokenizer(name), tiktoken_encoding(name)
        ids = ours.encode_ordinary(text)
        assert ids == ref.encode_ordinary(text)
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert ours.decode(ids) == fixed


def test_pathological_long_piece_is_exact(pair) -> None:
    ours, ref = pair
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    texts = ["x" * 100_000, "ab" * 20_000 + "c", "🎉" * 5000, " " * 50_000 + "x", "1" * 30_000,
             "\n" * 20_000, "é" * 20_000, "=" * 20_001, family * 2000, "的" * 10_000, "\t" * 9999 + "x",
             "word" + "é" * 5000 + "word" + "ö" * 3000]
    for text in texts + texts:  # the second time from the long-piece cache
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), text[:20]
    # long runs between ordinary text, each coming back several times
    mixed = "".join(f"line {i}: {t[: 300 + 97 * i]}\n" for i, t in enumerate(texts * 3))
    assert ours.encode_ordinary(mixed) == ref.encode_ordinary(mixed)


@pytest.mark.parametrize("slice_chars", [1, 5, 64, 256])
def test_long_texts_encoded_a_slice_at_a_time(pair, monkeypatch, slice_chars) -> None:
    """Texts over four slices are split a slice at a time; the ids must not change."""
    import bpeinspect.core.tokenizer as tokenizer_module

    ours, ref = pair
    monkeypatch.setattr(tokenizer_module, "_SLICE", slice_chars)
    parts_seen = []

    def cut_text(text, size):
        parts = tokenizer_module.cut_text.__wrapped__(text, size)
        parts_seen.append(len(parts))
        return parts

    cut_text.__wrapped__ = tokenizer_module.cut_text
    monkeypatch.setattr(tokenizer_module, "cut_text", cut_text)
    # Cuts land next to ";\n/" (o200k runs punctuation over newlines and slashes),
    # whitespace runs, astral characters, CRLF, digits and contractions.
    texts = [
        "".join(all_texts()[:40]),
        "a;\n/b\n\n x\n😀\n'S\r\n1\n//c;\n/\nz9\n" * 300,
        "\n".join(PROSE + ADVERSARIAL),
        # letters new in Unicode 16/17 (the regex module's) are no letters to tiktoken: no cut after them
        "x\u058b\ny\u0295\nA\ua7ce\nb\ua7cf\n1\U00011de0\n\U000323b0\nz\n" * 200,
    ]
    for text in texts:
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text), text[:80]
    assert len(parts_seen) == len(texts) and min(parts_seen) > 1  # every text went in slices
