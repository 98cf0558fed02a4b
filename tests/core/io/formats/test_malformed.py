"""Bad input of every format: a VocabularyError (a ValueError) naming the file, never a crash.

The cases here are made by hand; random and mutated files of every format are fuzzed in
tests/robustness/test_fuzz_loaders.py."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import pytest

from bpeinspect.core import Tokenizer, VocabularyError
from bpeinspect.core.io.formats import _common, load_path, save
from bpeinspect.core.io.formats._common import bytes_to_token

from .test_roundtrip import minbpe_reference


def _write_gguf(tok: Tokenizer, path: Path) -> Path:
    gguf = pytest.importorskip("gguf")
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    tokens = [bytes_to_token(tok.token_bytes(i)) if not tok.is_special(i) else tok.token_bytes(i).decode() for i in tok.ids()]
    w.add_token_list(tokens)
    w.add_token_types([3 if tok.is_special(i) else 1 for i in tok.ids()])
    w.add_token_merges([f"{bytes_to_token(tok.token_bytes(a))} {bytes_to_token(tok.token_bytes(b))}" for a, b in tok.merges])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, tuple[Path, bytes]]:
    """One small valid file per format (a 1024-token minbpe vocabulary), with its bytes."""
    folder = tmp_path_factory.mktemp("small")
    tok = minbpe_reference()
    paths = {
        "tiktoken": save(tok, folder / "small.tiktoken"),
        "huggingface": save(tok, folder / "tokenizer.json"),
        "minbpe": save(tok, folder / "small.model"),
        "native": save(tok, folder / "small.json"),
        "gguf": _write_gguf(tok, folder / "small.gguf"),
    }
    gpt2_dir = folder / "gpt2"
    gpt2_dir.mkdir()
    save(tok, gpt2_dir / "encoder.json")
    paths["gpt2-encoder"] = gpt2_dir / "encoder.json"
    paths["gpt2-merges"] = gpt2_dir / "vocab.bpe"
    for p in paths.values():
        load_path(p)  # they are valid to begin with
    return {k: (p, p.read_bytes()) for k, p in paths.items()}


@pytest.mark.parametrize("name", ["x.tiktoken", "tokenizer.json", "x.model", "x.json", "x.gguf", "vocab.bpe"])
def test_empty_file(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(b"")
    with pytest.raises(VocabularyError, match="empty") as info:
        load_path(p)
    assert str(p) in str(info.value)


def test_missing_file_and_bare_folder(tmp_path):
    with pytest.raises(VocabularyError, match="no such file"):
        load_path(tmp_path / "nope.tiktoken")
    with pytest.raises(VocabularyError, match="folder"):
        load_path(tmp_path)


def test_gpt2_pair_needs_its_sibling(small_files, tmp_path):
    path, data = small_files["gpt2-encoder"]
    (tmp_path / "encoder.json").write_bytes(data)
    with pytest.raises(VocabularyError, match="vocab.bpe"):
        load_path(tmp_path / "encoder.json")


def test_wrong_kind_json_is_named(tmp_path):
    p = tmp_path / "package.json"
    p.write_text('{"name": "left-pad", "version": "1.0.0"}', encoding="utf-8")
    with pytest.raises(VocabularyError, match=r"a JSON file, but not a .*tokenizer\.json"):
        load_path(p)


def test_deeply_nested_json(tmp_path):
    p = tmp_path / "tokenizer.json"
    p.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(VocabularyError):
        load_path(p)


def test_gzip_bomb_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "MAX_TEXT_FILE", 1 << 20)
    p = tmp_path / "bomb.tiktoken"
    p.write_bytes(gzip.compress(b"\0" * (8 << 20)))
    assert p.stat().st_size < 64 << 10
    with pytest.raises(VocabularyError, match="decompresses to more than"):
        _common.read_bytes_limited(p, _common.MAX_TEXT_FILE)


def test_oversized_file_is_refused_without_reading_it(tmp_path):
    p = tmp_path / "huge.tiktoken"
    with open(p, "wb") as f:
        f.write(b"YQ== 0\n")
        f.truncate(_common.MAX_TEXT_FILE + 1)  # sparse
    with pytest.raises(VocabularyError, match="larger than any vocabulary file"):
        load_path(p)


def test_gzipped_tiktoken_file_loads(tmp_path, vocabs):
    p = tmp_path / "gpt2.tiktoken.gz"
    p.write_bytes(gzip.compress((vocabs / "gpt2.tiktoken").read_bytes()))
    tok = load_path(p)
    assert tok.name == "gpt2" and "r50k_base" in tok.source


def test_truncated_gzip(tmp_path, vocabs):
    p = tmp_path / "gpt2.tiktoken.gz"
    p.write_bytes(gzip.compress((vocabs / "gpt2.tiktoken").read_bytes())[:5000])
    with pytest.raises(VocabularyError, match="truncated"):
        load_path(p)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bad.model", "minbpe v1\n(unclosed\n0\n104 105\n"),
        ("bad.json", '{"format": "bpeinspect", "version": 1, "rule": "ranks", "tokens": [], '
         '"pattern": {"splits": [{"pattern": "(unclosed"}]}}'),
    ],
)
def test_bad_split_patterns_are_vocabulary_errors(tmp_path, name, content):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(VocabularyError, match="does not compile"):
        load_path(p)


def test_a_truncated_merges_file_is_a_load_note_not_a_warning(vocabs, tmp_path):
    (tmp_path / "encoder.json").write_bytes((vocabs / "gpt2" / "encoder.json").read_bytes())
    lines = (vocabs / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "vocab.bpe").write_text("".join(lines[:1001]), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing goes through the process-wide warnings machinery
        tok = load_path(tmp_path)
    (note,) = tok.load_notes
    assert note.startswith(str(tmp_path / "vocab.bpe")) and "49000 tokens of encoder.json are made by no merge" in note
    assert load_path(vocabs / "gpt2").load_notes == ()
    assert len(tok.merges) == 1000
