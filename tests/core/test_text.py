"""The one notation for bytes and whitespace, and the UTF-16 helpers."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpeinspect.core import BUILTINS, load_tokenizer
from bpeinspect.core.text import display_bytes, display_text, fix_surrogates, parse_display, utf16_len


@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (b" a\t\n\xe4\xbd", "␣a⇥↵<e4 bd>"),
        (b" hello", "␣hello"),
        (b"\n\n", "↵↵"),
        (b"\t\r\n", "⇥␍↵"),
        (b"\x00\x1b\x7f", "␀␛␡"),
        (b"\xe4\xb8", "<e4 b8>"),
        (b"a\xe4\xb8b\xff", "a<e4 b8>b<ff>"),
        (b" \xe4\xb8\xad", "␣中"),
        ("\u00a0x\u200b\u3000\u0085".encode(), "⍽x⟨U+200B⟩⟨U+3000⟩⟨U+0085⟩"),
        (b"<|endoftext|>", "<|endoftext|>"),
        (b"", ""),
    ],
)
def test_display_bytes(token: bytes, shown: str) -> None:
    assert display_bytes(token) == shown
    assert parse_display(shown) == token


def test_display_text_matches_display_bytes() -> None:
    text = "if x:\n\t 日本 😀\u200d\x00"
    assert display_text(text) == display_bytes(text.encode()) == "if␣x:↵⇥␣日本␣😀⟨U+200D⟩␀"
    assert display_text("a\ud800") == "a⟨U+D800⟩"  # a lone surrogate is shown, not dropped


@pytest.mark.parametrize("name", BUILTINS)
def test_every_token_of_a_real_vocabulary_is_visible_and_maps_back(name: str) -> None:
    tok = load_tokenizer(name)
    for i in tok.ids():
        bts = tok.token_bytes(i)
        shown = display_bytes(bts)
        assert shown and shown.strip() == shown
        outside_hex = re.sub(r"<[0-9a-f ]+>", "", shown)  # the hex of split characters is spaced
        assert not any(unicodedata.category(c) in {"Cc", "Cf", "Zs", "Zl", "Zp", "Cs"} for c in outside_hex), (i, shown)
        assert parse_display(shown) == bts, (i, shown)


_PLAIN = st.binary(max_size=12).filter(lambda b: not any(c in b.decode("utf-8", "replace") for c in "<⟨␀␣⇥↵␍␡⍽"))


@given(_PLAIN)
def test_round_trip(data: bytes) -> None:
    # text that itself looks like the notation (control pictures, "<e4>") is left out
    if any(0x2400 <= ord(c) <= 0x2421 for c in data.decode("utf-8", "replace")):
        return
    assert parse_display(display_bytes(data)) == data


def test_utf16_len_and_fix_surrogates() -> None:
    assert utf16_len("") == 0
    assert utf16_len("a😀é") == 4
    assert utf16_len("\ud800") == 1
    assert fix_surrogates("\ud83d\ude00") == "😀"
    assert fix_surrogates("a\udfff") == "a\ufffd"
