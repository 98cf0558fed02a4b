"""GPT-2 in four formats must load to one tokenizer: r50k_base's encodings, token for token."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.io.formats import detect_format, load_path

FILES = [
    ("gpt2.tiktoken", "tiktoken"),
    ("gpt2/tokenizer.json", "huggingface"),
    ("gpt2", "gpt2"),
    ("gpt2/encoder.json", "gpt2"),
    ("gpt2/vocab.bpe", "gpt2"),
    ("gpt2.gguf", "gguf"),
]


@pytest.mark.parametrize(("rel", "fmt"), FILES)
def test_gpt2_file_matches_r50k_base(vocabs, corpus, rel, fmt):
    path = vocabs / rel
    assert detect_format(path) == fmt
    tok = load_path(path)
    ref = load_tokenizer("r50k_base")
    assert tok.n_vocab == ref.n_vocab == 50257
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    for text in corpus:
        assert tok.encode_ordinary(text) == ref.encode_ordinary(text), text[:80]
        assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    for i in range(0, 50257, 97):
        assert tok.token_bytes(i) == ref.token_bytes(i)


def test_tiktoken_file_is_recognised_by_hash(vocabs):
    tok = load_path(vocabs / "gpt2.tiktoken")
    assert tok.name == "gpt2" and "r50k_base" in tok.source  # a built-in's copy goes by its own name
    assert tok.split_rule.name == "r50k"


def test_load_tokenizer_reaches_formats_for_paths(vocabs):
    assert load_tokenizer(str(vocabs / "gpt2.gguf")).encode("hello world") == [31373, 995]


@pytest.mark.parametrize("opened", ["vocab.json", "merges.txt"])
def test_the_pair_named_as_a_hugging_face_repository_names_it_opens(vocabs, tmp_path, opened):
    (tmp_path / "vocab.json").write_bytes((vocabs / "gpt2/encoder.json").read_bytes())
    (tmp_path / "merges.txt").write_bytes((vocabs / "gpt2/vocab.bpe").read_bytes())
    (tmp_path / "config.json").write_text("{}")  # another JSON file beside them is not taken for the encoder
    tok = load_path(tmp_path / opened)
    ref = load_tokenizer("r50k_base")
    assert tok.n_vocab == 50257
    assert tok.encode("hello world <|endoftext|>", allowed_special="all") == [31373, 995, 220, 50256]
    assert tok.encode("hello world") == ref.encode("hello world")
