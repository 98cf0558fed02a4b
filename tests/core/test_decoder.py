"""The decoder: the tokens' bytes joined, with word marks and a dummy prefix undone."""

from __future__ import annotations

from bpeinspect.core.decoder import PLAIN_DECODER, Decoder
from bpeinspect.core.word_marks import WordMarks


def no_marks(_id: int) -> tuple[bool, bool]:
    return (False, False)


def test_the_plain_decoder_joins_the_bytes_as_they_are():
    parts = [b" hello", b"\xe4\xbd", b"\xa0", b" "]
    assert PLAIN_DECODER.join(parts, [1, 2, 3, 4], no_marks) == b"".join(parts)
    assert PLAIN_DECODER.finish(b" hello ") == b" hello "


def test_a_dummy_prefix_loses_exactly_one_leading_space():
    decoder = Decoder(strip_leading_space=True)
    assert decoder.finish(b" hello") == b"hello"
    assert decoder.finish(b"  two") == b" two"
    assert decoder.finish(b"none") == b"none"
    assert decoder.finish(b"") == b""


def test_word_marks_put_a_space_where_a_word_ends_and_none_inside_a_word():
    ends = {1: (False, False), 2: (False, True), 3: (False, True)}
    decoder = Decoder(word_marks=WordMarks("</w>"))
    joined = decoder.join([b"low", b"er", b"new"], [1, 2, 3], ends.__getitem__)
    assert joined.split() == [b"lower", b"new"]
    assert b"low er" not in joined


def test_decoders_with_the_same_settings_are_equal():
    assert Decoder() == PLAIN_DECODER
    assert Decoder(strip_leading_space=True) != PLAIN_DECODER
