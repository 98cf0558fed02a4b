"""CLIP, from open_clip's merge file: the file read directly and the tokenizer.json Hugging Face
writes for it both encode exactly as ``tokenizers`` does, and decode as transformers does."""

from __future__ import annotations

import warnings

import pytest

from bpeinspect.core import load_tokenizer
from tests.conformance.clip import clip_hf, transformers_decode
from tests.conformance.conftest import vocab_file
from tests.conformance.corpus import conformance_texts
from tests.conformance.sources import VOCABS

pytestmark = pytest.mark.slow

CLIP = next(v for v in VOCABS if v.id == "clip")


@pytest.mark.parametrize("hub_layout", [False, True], ids=["converter", "hub-layout"])
def test_the_tokenizer_json_hugging_face_writes_for_clip_is_exact(tmp_path, hub_layout):
    hf = clip_hf(vocab_file(CLIP), hub_layout)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = load_tokenizer(path)
    failures = [t[:60] for t in conformance_texts()
                if tok.encode(t, allowed_special="all") != hf.encode(t, add_special_tokens=False).ids]
    assert not failures, f"{len(failures)} texts differ, e.g. {failures[:3]}"


def test_clip_decodes_as_transformers_does():
    path = vocab_file(CLIP)
    hf, tok = clip_hf(path), load_tokenizer(path)
    texts = [t for t in conformance_texts() if "<|" not in t]
    for text in texts:
        ids = tok.encode(text)
        # transformers strips what Python calls whitespace at either end (U+001C..U+001F too)
        assert tok.decode(ids).strip() == transformers_decode(hf, ids), text[:60]


def test_clip_tokens_hold_their_text_and_end_words():
    tok = load_tokenizer(vocab_file(CLIP))
    assert tok.n_vocab == 49408 and tok.special_tokens == {"<|startoftext|>": 49406, "<|endoftext|>": 49407}
    ids = tok.encode("A photo of a cat.")
    assert [tok.token_bytes(i) for i in ids] == [b"a", b"photo", b"of", b"a", b"cat", b"."]
    assert all(tok.token_marks(i) == (False, True) for i in ids)
    enc = tok.encode_with_offsets("A photo of a cat.")
    assert [(a, b) for a, b in zip(enc.char_starts, enc.char_ends)] == [(0, 1), (2, 7), (8, 10), (11, 12), (13, 16), (16, 17)]


def test_clips_vocab_json_and_merges_txt_open_as_clip(tmp_path):
    """transformers' slow CLIPTokenizer files: the same tokenizer as the merge file."""
    import json

    hf = clip_hf(vocab_file(CLIP))
    model = json.loads(hf.to_str())["model"]
    (tmp_path / "vocab.json").write_text(json.dumps(model["vocab"]), encoding="utf-8")
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    (tmp_path / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    tok, ref = load_tokenizer(tmp_path / "merges.txt"), load_tokenizer(vocab_file(CLIP))
    assert tok.word_marks == ref.word_marks and tok.special_tokens == ref.special_tokens
    for text in conformance_texts()[:60]:
        assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
