"""Normalizers against Hugging Face's, and their alignments back into the input."""

from __future__ import annotations

import json
import unicodedata

import pytest

from bpeinspect.core.io.formats import load_path
from bpeinspect.core.normalize import (
    Lowercase,
    Prepend,
    Replace,
    Sequence,
    Strip,
    StripAccents,
    Unicode,
    UnsupportedNormalizer,
    badge,
    from_hf,
    to_hf,
)
from tests.core.corpus import ADVERSARIAL, PROSE
from tests.paths import SHARED

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers as hfn  # noqa: E402

TEXTS = PROSE + ADVERSARIAL + [unicodedata.normalize("NFD", t) for t in PROSE] + [
    "ﬁ ﬂ ① ㎏ Ⅻ ｶﾞ ｱｲｳ ＡＢＣ ΣΑΣ ὈΔΥΣΣΕΎΣ İı",
    "  two  spaces  ",
    "a\u0301\u0327 \u1100\u1161\u11a8 \u0b47\u0b3e",
]

CASES = [
    ({"type": "NFC"}, hfn.NFC()),
    ({"type": "NFD"}, hfn.NFD()),
    ({"type": "NFKC"}, hfn.NFKC()),
    ({"type": "NFKD"}, hfn.NFKD()),
    ({"type": "Lowercase"}, hfn.Lowercase()),
    ({"type": "Strip", "strip_left": True, "strip_right": True}, hfn.Strip(left=True, right=True)),
    ({"type": "Strip", "strip_left": False, "strip_right": True}, hfn.Strip(left=False, right=True)),
    ({"type": "Prepend", "prepend": "▁"}, hfn.Prepend("▁")),
    ({"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, hfn.Replace(" ", "▁")),
    ({"type": "Replace", "pattern": {"String": "  "}, "content": " "}, hfn.Replace("  ", " ")),
    ({"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]},
     hfn.Sequence([hfn.NFD(), hfn.StripAccents(), hfn.Lowercase()])),
    ({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                          {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
     hfn.Sequence([hfn.Prepend("▁"), hfn.Replace(" ", "▁")])),
]


@pytest.mark.parametrize(("spec", "hf"), CASES, ids=lambda x: json.dumps(x)[:60] if isinstance(x, dict) else "")
def test_normalizers_match_hugging_face(spec, hf):
    norm = from_hf(spec)
    assert norm is not None
    assert to_hf(norm) is not None
    for text in TEXTS:
        expected = hf.normalize_str(text)
        assert norm.normalize(text) == expected, text
        out, starts, ends = norm.normalize_aligned(text)
        assert out == expected, text
        if starts is None:
            assert ends is None and len(out) == len(text)
            continue
        assert len(starts) == len(ends) == len(out)
        assert all(0 <= a < b <= len(text) for a, b in zip(starts, ends))
        assert starts == sorted(starts)


def test_a_composed_character_points_at_what_it_was_made_of():
    out, starts, ends = Unicode("NFC").normalize_aligned("xe\u0301y")
    assert out == "xéy"
    assert (starts, ends) == ([0, 1, 3], [1, 3, 4])
    out, starts, ends = Unicode("NFKC").normalize_aligned("ﬁ!")
    assert out == "fi!" and (starts, ends) == ([0, 0, 1], [1, 1, 2])


def test_unchanged_text_has_identity_alignment():
    for norm in (Unicode("NFC"), Unicode("NFKC"), Lowercase(), Replace(" ", "▁"), Strip()):
        assert norm.normalize_aligned("plain ascii") [1:] == (None, None) or isinstance(norm, Lowercase)


def test_inserted_text_points_at_the_next_character():
    out, starts, ends = Sequence((Prepend("▁"), Replace(" ", "▁"))).normalize_aligned("a b")
    assert out == "▁a▁b"
    assert (starts, ends) == ([0, 0, 1, 2], [1, 1, 2, 3])


@pytest.mark.parametrize("kind", ["BertNormalizer", "Precompiled", "Nmt", "ByteLevel"])
def test_unsupported_normalizers_are_named(kind):
    with pytest.raises(UnsupportedNormalizer, match=kind):
        from_hf({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": kind}]})


def test_nfc_repro_encodes_like_hugging_face_and_maps_offsets_back():
    path = SHARED / "vocabs" / "repros" / "nfc.tokenizer.json"
    tok = load_path(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = "cafe\u0301 x\u0301 Å e\u0301\u0301"
    assert tok.encode("cafe\u0301") == [99, 97, 102, 195, 169]
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    enc = tok.encode_with_offsets(text)
    assert enc.ids == tok.encode(text)
    # the two tokens of "é" both cover the two characters "e" + U+0301 it was made of
    assert [(enc.char_starts[i], enc.char_ends[i]) for i in (3, 4)] == [(3, 5), (3, 5)]
    assert enc.splits_char(3) and enc.splits_char(4)
    assert enc.byte_ends[-1] == len(text.encode("utf-8"))
    assert enc.utf16_ends[-1] == len(text)
    assert badge(tok)[0] == "NFC"
    assert tok.pre_tokens("cafe\u0301") == ["café"]


def test_strip_drops_text_that_no_token_covers(tmp_path):
    obj = json.loads((SHARED / "vocabs" / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    obj["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": True,
                                                              "strip_right": True}, {"type": "Lowercase"}]}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    tok = load_path(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in TEXTS:
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
    enc = tok.encode_with_offsets("  Hello World  ", allowed_special=())
    assert enc.text == "  Hello World  "
    assert (enc.char_starts[0], enc.char_ends[-1]) == (2, 13)
    assert [enc.text[a:b] for a, b in zip(enc.char_starts, enc.char_ends)] == ["Hello", " World"]


def test_strip_accents_and_regex_replace():
    assert StripAccents().normalize(unicodedata.normalize("NFD", "café")) == "cafe"
    norm = Replace(r"\s+", " ", is_regex=True)
    assert norm.normalize_aligned("a \t b") == ("a b", [0, 1, 4], [1, 4, 5])


def test_a_normalizer_is_saved_only_where_it_can_be_stored(tmp_path):
    from bpeinspect.core import VocabularyError
    from bpeinspect.core.io.formats import save

    tok = load_path(SHARED / "vocabs" / "repros" / "nfc.tokenizer.json")
    with pytest.raises(VocabularyError, match="normalizer"):
        save(tok, tmp_path / "x.tiktoken")
    out = save(tok, tmp_path / "again.hf.json")
    again = load_path(out)
    assert again.normalizer == tok.normalizer
    assert again.encode("cafe\u0301") == tok.encode("cafe\u0301")
