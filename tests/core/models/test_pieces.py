"""SentencePiece pieces: byte pieces, the bytes the decoder writes, and squeezed spaces."""

from __future__ import annotations

import pytest

from bpeinspect.core.models.pieces import (
    BYTE,
    KIND_NAMES,
    NORMAL,
    USER_DEFINED,
    SqueezeSpaces,
    byte_of_piece,
    decoded_bytes,
)


@pytest.mark.parametrize(("piece", "byte"), [("<0x00>", 0), ("<0x41>", 65), ("<0xff>", 255), ("<0xFE>", 254)])
def test_a_byte_piece_stands_for_its_byte(piece, byte):
    assert byte_of_piece(piece) == byte
    assert decoded_bytes(piece, BYTE) == bytes([byte])


@pytest.mark.parametrize("piece", ["<0x4>", "<0x414>", "0x41", "<0xGG>", "a<0x41>", "▁"])
def test_anything_else_is_not_a_byte_piece(piece):
    assert byte_of_piece(piece) is None


def test_the_space_mark_decodes_as_a_space_and_a_byte_piece_of_another_kind_as_text():
    assert decoded_bytes("▁hello▁▁", NORMAL) == b" hello  "
    assert decoded_bytes("<0x41>", USER_DEFINED) == b"<0x41>"
    assert decoded_bytes("日本", NORMAL) == "日本".encode()


def test_every_kind_has_a_name():
    assert sorted(KIND_NAMES) == [1, 2, 3, 4, 5, 6]
    assert len(set(KIND_NAMES.values())) == 6


@pytest.mark.parametrize(
    ("text", "out"),
    [("  a   b  ", "a b"), ("a b", "a b"), ("   ", ""), ("", ""), ("x  \t  y", "x \t y"), ("\u3000a  b", "\u3000a b")],
)
def test_extra_spaces_go_and_other_whitespace_stays(text, out):
    assert SqueezeSpaces().normalize(text) == out


def test_squeezed_text_points_back_into_the_original():
    text = "  ab   cd "
    out, starts, ends = SqueezeSpaces().normalize_aligned(text)
    assert out == "ab cd"
    assert starts is not None and ends is not None
    for i, ch in enumerate(out):
        assert ch in text[starts[i] : ends[i]]
    assert SqueezeSpaces().normalize_aligned("a b") == ("a b", None, None)
