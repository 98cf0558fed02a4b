"""Any supported format, gzip-compressed, is recognised by what it decompresses to."""

from __future__ import annotations

import gzip
import shutil

import pytest

from bpeinspect.core import limits
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats import detect_format, is_vocabulary_name, load_path

TEXT = "Hello world! It's 2024; naïve café 👍🏽 <|endoftext|>"


def gz(src, dst):
    dst.write_bytes(gzip.compress(src.read_bytes()))
    return dst


@pytest.mark.parametrize(
    ("member", "name", "fmt"),
    [
        ("gpt2/tokenizer.json", "tokenizer.json.gz", "huggingface"),
        ("gpt2.gguf", "gpt2.gguf.gz", "gguf"),
        ("gpt2.tiktoken", "gpt2.tiktoken.gz", "tiktoken"),
        ("gpt2.tiktoken", "ranks.gz", "tiktoken"),
    ],
)
def test_a_gzipped_file_opens_as_its_content(tmp_path, vocabs, member, name, fmt):
    plain = load_path(vocabs / member)
    p = gz(vocabs / member, tmp_path / name)
    assert detect_format(p) == fmt
    tok = load_path(p)
    assert tok.encode(TEXT, allowed_special="all") == plain.encode(TEXT, allowed_special="all")
    assert tok.n_vocab == plain.n_vocab


def test_gpt2_pair_gzipped_opens_from_either_file_or_the_folder(tmp_path, vocabs):
    plain = load_path(vocabs / "gpt2")
    gz(vocabs / "gpt2" / "encoder.json", tmp_path / "encoder.json.gz")
    gz(vocabs / "gpt2" / "vocab.bpe", tmp_path / "vocab.bpe.gz")
    for p in (tmp_path, tmp_path / "encoder.json.gz", tmp_path / "vocab.bpe.gz"):
        assert load_path(p).encode(TEXT, allowed_special="all") == plain.encode(TEXT, allowed_special="all")


def test_one_file_of_the_pair_gzipped_finds_the_other_plain(tmp_path, vocabs):
    gz(vocabs / "gpt2" / "encoder.json", tmp_path / "encoder.json.gz")
    shutil.copy(vocabs / "gpt2" / "vocab.bpe", tmp_path / "vocab.bpe")
    assert load_path(tmp_path / "vocab.bpe").encode("hello world") == [31373, 995]


def test_a_refused_gzip_file_is_named_by_its_content(tmp_path):
    p = tmp_path / "package.json.gz"
    p.write_bytes(gzip.compress(b'{"name": "left-pad", "version": "1.0.0"}'))
    with pytest.raises(VocabularyError, match=r"a gzip-compressed JSON file, but not a .*tokenizer\.json"):
        load_path(p)
    p = tmp_path / "notes.gz"
    p.write_bytes(gzip.compress(b"plain words, nothing else\n" * 10))
    with pytest.raises(VocabularyError, match="gzip-compressed text that is not a vocabulary file"):
        load_path(p)
    p.write_bytes(gzip.compress(bytes(range(256)) * 10))
    with pytest.raises(VocabularyError, match="gzip-compressed binary data that is not a vocabulary file"):
        load_path(p)


def test_a_gzipped_wordpiece_tokenizer_json_is_refused_as_wordpiece(tmp_path):
    p = tmp_path / "tokenizer.json.gz"
    p.write_bytes(gzip.compress(b'{"model": {"type": "WordPiece", "vocab": {"a": 0}}}'))
    with pytest.raises(VocabularyError, match="WordPiece"):
        load_path(p)


def test_a_gzip_bomb_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_VOCAB_FILE", 1 << 20)
    p = tmp_path / "tokenizer.json.gz"
    p.write_bytes(gzip.compress(b'{"model": {"vocab": {' + b" " * (8 << 20) + b"}}}"))
    assert p.stat().st_size < 64 << 10
    with pytest.raises(VocabularyError, match="decompresses to more than"):
        load_path(p)


def test_gzip_inside_gzip_is_refused(tmp_path, vocabs):
    p = tmp_path / "tokenizer.json.gz.gz"
    p.write_bytes(gzip.compress(gzip.compress((vocabs / "gpt2" / "tokenizer.json").read_bytes())))
    with pytest.raises(VocabularyError, match="gzip data inside gzip data"):
        load_path(p)


def test_damaged_gzip_names_the_damage(tmp_path, vocabs):
    p = tmp_path / "tokenizer.json.gz"
    p.write_bytes(gzip.compress((vocabs / "gpt2" / "tokenizer.json").read_bytes())[:4000])
    with pytest.raises(VocabularyError, match="truncated"):
        detect_format(p)


@pytest.mark.parametrize("name", ["tokenizer.json.gz", "encoder.json.gz", "vocab.bpe.gz", "x.gguf.gz", "a.model.gz"])
def test_gzipped_names_are_vocabulary_names(name):
    assert is_vocabulary_name(name)
