"""What makes large vocabularies open fast and small keeps them exact:
merges parsed a slice at a time, mapped in bulk, the collector held off while loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeinspect.core import VocabularyError
from bpeinspect.core.io.formats import _common, huggingface, load_path
from bpeinspect.core.io.formats.sentencepiece import _gguf_merges
from bpeinspect.core.tokenizer import Tokenizer


@pytest.fixture
def small_slices(monkeypatch):
    """Parse merges apart from files of any size, a few hundred bytes a slice."""
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    monkeypatch.setattr(_common, "_SLICE", 200)


MERGES = [(104, 101), (108, 108), (256, 257), (258, 111), (32, 119), (260, 111), (119, 111)]


def _byte_level_json(strings: bool) -> dict:
    from bpeinspect.core.io.formats import huggingface

    obj = huggingface.to_dict(Tokenizer.from_merges(MERGES, pattern="r50k"))
    if strings:
        obj["model"]["merges"] = [" ".join(m) for m in obj["model"]["merges"]]
    return obj


@pytest.mark.parametrize("strings", [True, False])
@pytest.mark.parametrize("indent", [None, 2])
def test_merges_parsed_apart_give_the_same_tokenizer(tmp_path, monkeypatch, strings, indent):
    obj = _byte_level_json(strings)
    obj["model"]["merges"] = obj["model"]["merges"] * 40  # many slices (Hugging Face keeps the last listing)
    data = json.dumps(obj, ensure_ascii=False, indent=indent).encode()
    path = tmp_path / "tokenizer.json"
    path.write_bytes(data)
    whole = load_path(path)
    monkeypatch.setattr(_common, "_SPLIT_SIZE", 0)
    monkeypatch.setattr(_common, "_SLICE", 200)
    parsed = _common._parse_merges_apart(data)
    assert isinstance(parsed["model"]["merges"], _common.MappedMerges)
    plain = json.loads(data)
    mapped = _common.map_merges(plain["model"]["merges"], plain["model"]["vocab"])
    assert (parsed["model"]["merges"].pairs, parsed["model"]["merges"].made) == mapped
    apart = load_path(path)
    assert apart.merges == whole.merges == Tokenizer.from_merges(MERGES, pattern="r50k").merges
    assert apart.encode("hello hellow world wow") == whole.encode("hello hellow world wow")


def test_a_cut_inside_a_string_falls_back_to_the_whole_parse(small_slices):
    # the merge 'q" ,' is written "q\" ," in JSON: the `" ,"` in it looks like the place
    # between two merges; the slice cut there does not parse, so the file is parsed whole
    vocab = {'q"': 0, ",": 1, 'q",': 2}
    obj = {"model": {"type": "BPE", "vocab": vocab, "merges": ['q" ,'] * 100}}
    data = json.dumps(obj).encode()
    assert _common._parse_merges_apart(data) is None
    assert _common.parse_json(data, Path("t.json")) == json.loads(data)


def test_a_bad_merge_is_still_named(tmp_path, small_slices):
    obj = _byte_level_json(True)
    obj["model"]["merges"] = obj["model"]["merges"] * 30 + ["h zz"]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj, indent=1))
    with pytest.raises(VocabularyError, match=r"merge \d+ \('h zz'\) uses a token not in the vocabulary"):
        load_path(path)


def test_damaged_json_is_reported_with_its_place(tmp_path, small_slices):
    obj = _byte_level_json(False)
    obj["model"]["merges"] = obj["model"]["merges"] * 30
    text = json.dumps(obj, indent=1)
    path = tmp_path / "tokenizer.json"
    path.write_text(text[: len(text) // 2] + "}" + text[len(text) // 2 :])
    with pytest.raises(VocabularyError, match="not valid JSON"):
        load_path(path)


def test_map_merges_refuses_what_it_cannot_map_in_bulk():
    vocab = {"a": 0, "b": 1, "ab": 2}
    assert _common.map_merges(["a b"], vocab) == ([(0, 1)], [2])
    assert _common.map_merges([["a", "b"]], vocab) == ([(0, 1)], [2])
    assert _common.map_merges(["ab", ["a", "b"]], vocab) is None  # a string among pairs
    assert _common.map_merges(["a b c"], vocab) is None
    assert _common.map_merges([["a", 1]], vocab) is None
    assert _common.map_merges(["b a"], vocab) is None  # makes "ba", not a token


def test_gguf_merges_in_bulk_match_one_at_a_time():
    index = {"▁": 0, "a": 1, "▁a": 2, "b": 3, "ab": 4, " ": 5, " a": 6}
    texts = ["▁ a", "a b", "a c", "b a"]
    assert _gguf_merges(texts, index) == ([(0, 1), (1, 3)], [2, 4])
    # a merge that starts with a space is cut after its first character, as llama.cpp does
    assert _gguf_merges(["  a", "a b"], index) == ([(5, 1), (1, 3)], [6, 4])


def test_map_merges_in_bulk_refuses_a_merge_without_a_space_beside_one_with_two(monkeypatch):
    # two parts per merge in all, but cut in the wrong places: "ab" + "a b c" must not pass
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    assert _common.map_merges(["ab", "a b c"], vocab) is None
    assert _common.map_merges(["a bc", "ab c"], vocab) == ([(0, 4), (3, 2)], [5, 5])
    monkeypatch.setattr(_common, "_MAP_AT_ONCE", 2)  # mapped a few at a time, the same result
    merges = ["a b", "ab c", "b c", "a bc"] * 3
    assert _common.map_merges(merges, vocab) == ([(0, 1), (3, 2), (1, 2), (0, 4)] * 3, [3, 5, 4, 5] * 3)
    assert _common.map_merges(merges + ["a b c"], vocab) is None


def _piece_index_built_by_the_model(tok) -> dict[str, int]:
    P = tok.model.pieces
    present = [i for i, p in enumerate(P) if p is not None]
    return dict(zip(map(P.__getitem__, reversed(present)), reversed(present)))  # the first listing wins


def test_a_sentencepiece_json_reuses_its_vocabulary_as_the_piece_index(tmp_path):
    # added tokens beyond the vocabulary, in a gap of it, and one whose text the vocabulary
    # also lists at a higher id: the index is the one the model would build from its pieces
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "▁": 4, "<x>": 6, "▁ab": 7}
    added = [
        {"id": i, "content": c, "special": sp, "normalized": False}
        for i, c, sp in [(5, "<gap>", True), (8, "<after>", True), (9, "ab", False), (10, "<x>", True)]
    ]
    obj = {
        "model": {"type": "BPE", "byte_fallback": True, "vocab": vocab, "merges": ["a b", "▁ ab"]},
        "added_tokens": added,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁"},
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj))
    tok = load_path(path)
    assert tok.model.piece_id == _piece_index_built_by_the_model(tok)
    assert tok.model.piece_id["<gap>"] == 5 and tok.model.piece_id["<x>"] == 6 and tok.model.piece_id["ab"] == 3


@pytest.mark.slow
@pytest.mark.parametrize("vid", ["gemma3", "gemini-json", "llama2-json"])
def test_real_sentencepiece_json_piece_index_is_the_models_own(vid):
    from tests.conformance.conftest import vocab_file
    from tests.conformance.sources import VOCABS

    tok = load_path(vocab_file(next(v for v in VOCABS if v.id == vid)))
    assert tok.model.piece_id == _piece_index_built_by_the_model(tok)


def test_a_pair_listed_twice_keeps_its_last_listing(tmp_path):
    # Hugging Face: [a b, b c, a b] ranks "b c" before "a b" (the later listing replaces the
    # earlier one), so "abc" is a + bc; the earlier listing leaves the merge list
    ranks = {**{bytes([b]): b for b in range(256)}, b"ab": 256, b"bc": 257}
    obj = huggingface.to_dict(Tokenizer(ranks, pattern="r50k"))
    obj["model"]["merges"] = ["a b", "b c", "a b"]
    obj["model"]["ignore_merges"] = False
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj))
    tok = load_path(path)
    assert tok.merges == [(98, 99), (97, 98)]
    assert tok.encode("abc") == [97, 257]
    assert tok.merge_rank(97, 98) == 1
