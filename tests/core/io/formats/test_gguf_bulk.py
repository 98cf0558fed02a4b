"""GGUF strings found a block at a time and Gemma 4's merges mapped by their bytes
give exactly what reading and mapping them one by one gives."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest

from bpeinspect.core.io.formats import gguf, sentencepiece
from bpeinspect.core.io.formats.sentencepiece import _gguf_merges
from tests.conformance.sources import VOCABS


def _stream(strings: list[bytes], tail: bytes = b"\0" * 64) -> gguf._Stream:
    data = b"".join(struct.pack("<Q", len(s)) + s for s in strings) + tail
    return gguf._Stream(io.BytesIO(data), len(data), Path("t.gguf"))


def _one_by_one(strings: list[bytes]) -> list[bytes]:
    return _stream(strings)._strings_each(len(strings), struct.Struct("<Q").unpack_from)


@pytest.mark.parametrize(
    "strings",
    [
        [b"a", b"bc", b"\xe2\x96\x81the"] * 500,
        [b"x" * 300, b"a", b"b"] * 50,  # lengths of 256 and more: no zero high byte
        [b"", b"", b"a", b"", b"b"] * 100,  # runs of empty strings look like lengths everywhere
        [b"a\0\0\0\0\0\0\0\0b", b"\0" * 9, b"c"] * 100,  # zero bytes inside strings
        [bytes([n % 256]) * (n % 40) for n in range(3000)],
    ],
)
def test_strings_in_bulk_are_the_strings_one_by_one(strings, monkeypatch):
    monkeypatch.setattr(gguf, "_BULK", 200)  # many blocks, strings across their ends
    s = _stream(strings)
    got = s.strings(len(strings), struct.Struct("<Q").unpack_from)
    assert got == strings == _one_by_one(strings)
    assert s.offset == sum(8 + len(x) for x in strings)


def test_big_endian_and_skipped_strings_are_read_one_by_one():
    strings = [b"ab", b"c"] * 10
    data = b"".join(struct.pack(">Q", len(x)) + x for x in strings)
    s = gguf._Stream(io.BytesIO(data), len(data), Path("t.gguf"))
    assert s.strings(20, struct.Struct(">Q").unpack_from) == strings
    s = _stream(strings)
    assert s.strings(20, struct.Struct("<Q").unpack_from, keep=False) == []
    assert s.offset == sum(8 + len(x) for x in strings)


GGUFS = [v.id for v in VOCABS if v.id.startswith("gguf-")]


@pytest.mark.slow
@pytest.mark.parametrize("vid", GGUFS)
def test_real_gguf_metadata_is_the_same_either_way(vid, monkeypatch):
    from tests.conformance.conftest import vocab_file

    path = vocab_file(next(v for v in VOCABS if v.id == vid))
    with open(path, "rb") as f:
        bulk = gguf.read_metadata(f, path)
    monkeypatch.setattr(gguf._Stream, "_strings_in_bulk", lambda self, most: [])
    with open(path, "rb") as f:
        each = gguf.read_metadata(f, path)
    assert bulk == each


def _by_text(tokens: list[bytes], merges: list[bytes]):
    pieces = sentencepiece._decode_all(tokens)
    return _gguf_merges(sentencepiece._decode_all(merges), dict(zip(pieces, range(len(pieces)))))


def _by_bytes(tokens: list[bytes], merges: list[bytes]):
    pieces = sentencepiece._decode_all(tokens)
    return sentencepiece._merges_from_bytes(tokens, merges, pieces, dict(zip(pieces, range(len(pieces)))))


def test_gguf_merges_by_bytes_are_the_merges_by_text():
    tokens = [b"a", b"b", b"ab", b" ", b" a", b"\xe2\x96\x81", b"\xe2\x96\x81a", b"ab", b"\xef\xbf\xbd", b"\xef\xbf\xbda",
              b"", b"c", b"abc"]
    merges = [b"a b", b"  a", b"\xe2\x96\x81 a", b"a c", b"ab c", b"nospace", b"\xff a", b"\xef\xbf\xbd a", b"a  b",
              b" ", b"", b"a b"] * 3
    got = _by_bytes(tokens, merges)
    assert got == _by_text(tokens, merges)
    assert got[0][0] == (0, 1) and got[1][0] == 7  # "ab" listed twice: the last listing wins
    assert (8, 0) in got[0]  # a merge of a U+FFFD token; "\xff a" (not UTF-8) found as text, as llama.cpp reads it


def test_tokens_that_are_not_utf8_go_the_usual_way():
    assert _by_bytes([b"a", b"\xff", b"a\xff"], [b"a \xff"]) is None
    # as text, every bad byte is U+FFFD and the merge is found: the bytes alone could not say so
    assert _by_text([b"a", b"\xff", b"a\xff"], [b"a \xff"]) == ([(0, 1)], [2])


def test_many_random_merges_map_the_same():
    rng = np.random.default_rng(7)
    alphabet = [b"a", b"b", b"\xc3\xa9", b"\xe2\x96\x81", b" ", b"\0"]
    tokens = list(dict.fromkeys(b"".join(rng.choice(alphabet, k)) for k in rng.integers(1, 5, 3000)))
    merges = [tokens[i] + b" " + tokens[j] for i, j in rng.integers(0, len(tokens), (5000, 2))]
    assert _by_bytes(tokens, merges) == _by_text(tokens, merges)


@pytest.mark.slow
def test_gemma4_gguf_merges_by_bytes_are_the_merges_by_text():
    from tests.conformance.conftest import vocab_file

    path = vocab_file(next(v for v in VOCABS if v.id == "gguf-gemma-4"))
    with open(path, "rb") as f:
        meta = gguf.read_metadata(f, path)
    tokens, merges = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.merges"]
    got = _by_bytes(tokens, merges)
    assert got is not None and len(got[0]) > 500_000
    assert got == _by_text(tokens, merges)
