"""Merges mapped from a file's bytes with numpy (:mod:`bpeinspect.core.io.formats._rawmerges`)
give exactly what mapping the parsed strings gives, and anything that path does not fit goes
the usual way (issue 14 item 10)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from bpeinspect.core import VocabularyError
from bpeinspect.core.io.formats import _common, _rawmerges, load_path
from tests.conformance.sources import VOCABS

BIG_JSON = ["gemma3", "gemini-json", "gpt-oss-json", "gpt4o-json", "qwen3", "deepseek-v3"]


def _raw(data: bytes):
    m = list(_common._MERGES_KEY.finditer(data))
    assert len(m) == 1
    return _common._parse_mapped_raw(data, m[0])


def _by_strings(data: bytes):
    plain = json.loads(data)
    return _common.map_merges(plain["model"]["merges"], plain["model"]["vocab"])


def _same_as_strings(data: bytes) -> bool:
    got = _raw(data)
    if got is None:
        return False
    merges = got["model"]["merges"]
    assert isinstance(merges, _common.MappedMerges)
    assert (merges.pairs, merges.made) == _by_strings(data)
    return True


@pytest.mark.slow
@pytest.mark.parametrize("vid", BIG_JSON)
def test_real_files_map_the_same_from_their_bytes(vid):
    from tests.conformance.conftest import vocab_file

    path = vocab_file(next(v for v in VOCABS if v.id == vid))
    assert _same_as_strings(path.read_bytes())


def _doc(merges, vocab, indent=None, ensure_ascii=False) -> bytes:
    model = {"type": "BPE", "byte_fallback": True, "vocab": vocab, "merges": merges}
    obj = {"version": "1.0", "model": model, "decoder": None}
    return json.dumps(obj, indent=indent, ensure_ascii=ensure_ascii).encode()


VOCAB = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, 'q"': 5, "\\": 6, 'q"\\': 7, "\n": 8, "\n\n": 9, "é": 10,
         "éa": 11, "▁": 12, "▁a": 13, "": 14, "bc": 15, "abcbc": 16, "▁▁": 17}
MERGES = [["a", "b"], ["ab", "c"], ['q"', "\\"], ["\n", "\n"], ["é", "a"], ["▁", "a"], ["b", "c"], ["abc", "bc"],
          ["▁", "▁"]]


@pytest.mark.parametrize("strings", [False, True])
@pytest.mark.parametrize("indent", [None, 0, 2])
def test_escapes_and_layouts_map_the_same(strings, indent):
    merges = [" ".join(m) for m in MERGES] if strings else MERGES
    assert _same_as_strings(_doc(merges * 3, VOCAB, indent))


def test_keys_written_with_escapes_everywhere_map_the_same():
    # ensure_ascii: "é" is \u00e9 in the keys and in the merges alike
    assert _same_as_strings(_doc(MERGES * 2, VOCAB, 1, ensure_ascii=True))


def test_hash_buckets_hold_every_key():
    # many one-byte and two-byte keys: their polynomial hashes are small numbers
    vocab = {chr(c): c for c in range(32, 127) if chr(c) not in '"\\ '}
    vocab.update({a + b: 1000 + 100 * i + j for i, a in enumerate("xyz") for j, b in enumerate("abcdefgh")})
    merges = [[a, b] for a in "xyz" for b in "abcdefgh"]
    assert _same_as_strings(_doc(merges, vocab, 2))


@pytest.mark.parametrize(
    "merges, why",
    [
        ([["a", "b"], ["a", "x"], ["ab", "c"]], "a part that is no key"),
        ([["a", "b"], ["b", "a"], ["ab", "c"]], "a result that is no key"),
        (["a b", "ab\\u0020c", "a b"], "a space written as an escape"),
        ([["a", "b"], ["\\ud83d", "\\ude00"], ["ab", "c"]], "a surrogate escape"),
    ],
)
def test_what_the_bytes_cannot_settle_goes_the_usual_way(merges, why):
    vocab = {**VOCAB, "😀": 40, chr(0xD83D): 41, chr(0xDE00): 42}
    text = _doc([["a", "b"]] * 3, vocab, 2, ensure_ascii=True).decode()
    doc = re.sub(r'"merges": \[.*\]', lambda _: '"merges": ' + json.dumps(merges).replace("\\\\", "\\"), text,
                 flags=re.S).encode()
    assert _raw(doc) is None, why


def test_irregular_spacing_goes_the_usual_way_and_still_loads(tmp_path, monkeypatch):
    text = _doc(MERGES * 3, VOCAB, 2).decode()
    text = text.replace('"ab",\n', '"ab"  ,\n', 1)
    assert _raw(text.encode()) is None
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    path = tmp_path / "tokenizer.json"
    path.write_text(text)
    assert load_path(path).merges[:2] == [(0, 1), (3, 2)]


def test_a_key_spelled_two_ways_goes_the_usual_way():
    # "é" as a key, "\u00e9" in a merge: the same text, other bytes
    text = _doc(MERGES, VOCAB, 1).decode()
    text = text.replace('"é",\n', '"\\u00e9",\n', 1)
    assert '"\\u00e9",' in text
    assert _raw(text.encode()) is None
    assert _by_strings(text.encode()) is not None


def test_a_second_vocab_object_goes_the_usual_way():
    obj = json.loads(_doc(MERGES, VOCAB, 1))
    obj["decoder"] = {"vocab": {"x": 1}}
    assert _raw(json.dumps(obj, indent=1, ensure_ascii=False).encode()) is None


def test_damage_after_the_merges_is_still_reported(tmp_path, monkeypatch):
    text = _doc(MERGES * 3, VOCAB, 2).decode()
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    path = tmp_path / "tokenizer.json"
    path.write_text(text[:-2] + ",}")
    with pytest.raises(VocabularyError, match="not valid JSON"):
        load_path(path)


def test_merges_that_are_not_pairs_of_strings_are_named(tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    path = tmp_path / "tokenizer.json"
    path.write_text(_doc(MERGES + [["a", "b", "c"]] + MERGES, VOCAB, 2).decode())
    with pytest.raises(VocabularyError, match=r"merge 9 .* is not 'left right'"):
        load_path(path)


def test_hashes_compose_and_spans_compare_exactly():
    rng = np.random.default_rng(5)
    text = rng.integers(0, 4, 300_000, dtype=np.uint8)  # few letters: many equal spans
    text = np.concatenate([text, np.zeros(8, dtype=np.uint8)])
    starts = np.sort(rng.choice(290_000, 2000, replace=False))
    lens = rng.integers(0, 40, 2000)
    h = _rawmerges.hashes(text, starts, starts + lens)
    for s, n, got in list(zip(starts.tolist(), lens.tolist(), h.tolist()))[:50]:
        assert got == sum(int(x) * pow(_rawmerges._B, k, 1 << 64) for k, x in enumerate(text[s : s + n].tolist())) % (1 << 64)
    a, b = starts[:-1], starts[1:]
    n = np.minimum(lens[:-1], lens[1:])
    w = _rawmerges.words(text)
    expected = all(bytes(text[x : x + k]) == bytes(text[y : y + k]) for x, y, k in zip(a, b, n))
    assert _rawmerges.same(w, a, b, n) == expected
    text[200_000:200_100] = text[100_000:100_100]  # equal spans at other offsets
    for k in (0, 1, 7, 8, 9, 17, 100):
        assert _rawmerges.same(w, np.array([100_000]), np.array([200_000]), np.array([k]))
        assert _rawmerges.hashes(text, np.array([100_000, 200_000]), np.array([100_000 + k, 200_000 + k]))[0] == _rawmerges.hashes(text, np.array([200_000]), np.array([200_000 + k]))[0]
    text[200_050] ^= 1
    assert not _rawmerges.same(w, np.array([100_000]), np.array([200_000]), np.array([51]))
    assert _rawmerges.same(w, np.array([100_000]), np.array([200_000]), np.array([50]))


def test_the_first_key_that_is_found_is_checked_byte_for_byte(monkeypatch):
    # every hash the same: lookups find some key with the hash, and the bytes decide
    monkeypatch.setattr(_rawmerges, "_mixed", lambda h: h * np.uint64(0))
    assert _raw(_doc(MERGES, VOCAB, 2)) is None


def test_a_big_file_loads_the_same_either_way(tmp_path, monkeypatch):
    path = tmp_path / "tokenizer.json"
    path.write_bytes(_doc([" ".join(m) for m in MERGES] * 5, VOCAB, 2))
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    fast = load_path(path)
    monkeypatch.setattr(_common, "_parse_mapped_raw", lambda *_: None)
    slow = load_path(path)
    assert fast.merges == slow.merges
    assert fast.encode("abcbc ▁a éa q\"\\") == slow.encode("abcbc ▁a éa q\"\\")
