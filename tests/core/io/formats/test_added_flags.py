"""Hugging Face added tokens with ``lstrip``/``rstrip``/``single_word``/``normalized``, encoded
exactly as ``tokenizers`` does: on small files built here (byte-level and SentencePiece-style)
and on real ones whose added tokens are normalized (OLMo-1 with NFC, DeepSeek)."""

from __future__ import annotations

import itertools
import json
import random

import pytest

tokenizers = pytest.importorskip("tokenizers")

from bpeinspect.core.io.formats import huggingface, load_path, save  # noqa: E402
from tests.paths import SHARED  # noqa: E402

# (content, special, lstrip, rstrip, single_word, normalized)
ADDED = [
    ("<mask>", True, True, True, False, False),
    ("<sep>", True, False, True, False, False),
    ("<eot>", True, True, False, False, False),
    ("qzw", False, False, False, True, False),
    ("QZX", False, False, False, True, True),  # under Lowercase only "qzx" in the text matches
    ("<|x|>", False, True, False, True, True),
    ("  ", False, False, False, False, True),  # a whitespace run, as OLMo-1 and GPT-NeoX have
    ("Ω", False, False, True, False, True),  # NFC makes it from the ohm sign U+2126
    ("e\u0301", False, False, False, False, False),  # matched before normalizing, so NFC hides it
]

PARTS = ["<mask>", "<sep>", "<eot>", "qzw", "qzws", "QZX", "qzx", "Qzx", "<|x|>", "<|X|>", "  ", "   ", " ",
         "\t", "\n", "\u3000", "Ω", "\u2126", "e\u0301", "é", "x", "ab", "9", "_", "-", "ü", "\u0301", "\u200d"]


def _texts(n: int = 400) -> list[str]:
    rnd = random.Random(14)
    out = ["".join(p) for p in itertools.product(["x", " ", "a"], PARTS, [" ", "b", ""])]
    out += ["".join(rnd.choice(PARTS) for _ in range(rnd.randint(1, 9))) for _ in range(n)]
    return out


NORMALIZERS = {
    "none": None,
    "nfc": {"type": "NFC"},
    "lowercase": {"type": "Lowercase"},
    "nfkc+lower": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
}


def _with_added(obj: dict, normalizer: dict | None) -> dict:
    obj["normalizer"] = normalizer
    vocab = obj["model"]["vocab"]
    nxt = max(vocab.values()) + 1
    obj["added_tokens"] = [a for a in obj.get("added_tokens") or [] if a["special"]]
    for content, special, lstrip, rstrip, single, norm in ADDED:
        obj["added_tokens"].append({"id": nxt, "content": content, "single_word": single, "lstrip": lstrip,
                                    "rstrip": rstrip, "normalized": norm, "special": special})
        nxt += 1
    return obj


def _check(tmp_path, obj: dict) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = load_path(path)
    added = {a["id"] for a in obj["added_tokens"]}
    overlapping = 0
    for text in _texts():
        got = hf.encode(text, add_special_tokens=False)
        cut = [o for i, o in zip(got.ids, got.offsets) if i in added]  # the added tokens' spans
        if any(b[0] < a[1] for a, b in zip(cut, cut[1:])):
            # a token inside the whitespace an rstrip token took: tokenizers encodes that text
            # twice, which offsets into the text cannot say (see core.specials.cut_with_options)
            overlapping += 1
            continue
        want = got.ids
        assert tok.encode(text, allowed_special="all") == want, repr(text)
        enc = tok.encode_with_offsets(text)
        assert enc.ids == want, repr(text)
        assert not want or enc.char_ends[-1] == len(text)
    assert overlapping < len(_texts()) // 20, overlapping


@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=list(NORMALIZERS))
def test_byte_level_added_token_flags_match_tokenizers(tmp_path, normalizer):
    obj = json.loads((SHARED / "vocabs" / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    _check(tmp_path, _with_added(obj, NORMALIZERS[normalizer]))


@pytest.mark.parametrize("normalizer", ["none", "nfc"])
def test_sentencepiece_style_added_token_flags_match_tokenizers(tmp_path, normalizer):
    from tests.core.sentencepiece.test_model import GEMMA, _hf_sp_json

    path, _ = _hf_sp_json(tmp_path, *GEMMA)
    obj = json.loads(path.read_text(encoding="utf-8"))
    steps = [s for s in [NORMALIZERS[normalizer], GEMMA[0]] if s]
    _check(tmp_path, _with_added(obj, {"type": "Sequence", "normalizers": steps}))


def test_flags_are_kept_when_written_back(tmp_path):
    obj = json.loads((SHARED / "vocabs" / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    path = tmp_path / "in.tokenizer.json"
    path.write_text(json.dumps(_with_added(obj, {"type": "NFC"}), ensure_ascii=False), encoding="utf-8")
    tok = load_path(path)
    assert tok.added_options["<mask>"] == (True, True, False, False)
    assert tok.added_options["QZX"] == (False, False, True, True)
    assert "e\u0301" not in tok.added_options  # no flag set
    written = huggingface.to_dict(tok)
    flags = {a["content"]: (a["lstrip"], a["rstrip"], a["single_word"], a["normalized"]) for a in written["added_tokens"]}
    assert flags["<mask>"] == (True, True, False, False) and flags["<|x|>"] == (True, False, True, True)
    again = tmp_path / "tokenizer.json"
    save(tok, again)
    assert load_path(again).added_options == tok.added_options


def test_no_warning_about_the_flags(tmp_path, recwarn):
    obj = json.loads((SHARED / "vocabs" / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_with_added(obj, None), ensure_ascii=False), encoding="utf-8")
    load_path(path)
    assert not [w for w in recwarn if "lstrip" in str(w.message)]
