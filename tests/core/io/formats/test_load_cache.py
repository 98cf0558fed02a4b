"""The cache of built tables (``core/io/load_cache.py``): a file opened again
makes the same tokenizer without being parsed; a damaged, stale or foreign entry is ignored."""

from __future__ import annotations

import pickle
import threading
import warnings
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.io import formats, load_cache
from bpeinspect.core.io.formats import huggingface, load_path, save
from bpeinspect.core.normalize import from_hf
from bpeinspect.core.tokenizer import Tokenizer

PLAIN_TYPES = (str, int, bool, float, list, dict, tuple, frozenset, bytes, type(None))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """The cache on, in a folder of its own, for files of any size."""
    monkeypatch.setenv(load_cache.ENV, "1")
    monkeypatch.setenv("BPEINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(load_cache, "MIN_SIZE", 0)
    yield tmp_path / "cache" / "loads"
    load_cache.wait()


def _entries(folder: Path) -> list[Path]:
    load_cache.wait()
    return sorted(folder.glob("*.pickle")) if folder.is_dir() else []


def _state(tok) -> dict:
    """A tokenizer's tables and settings, by value (caches and compiled patterns left out)."""
    out = {k: v for k, v in vars(tok).items() if type(v) in PLAIN_TYPES and k != "_cache"}
    out["rule"] = (tok.split_rule.name, tok.split_rule.pattern, [s.pattern for s in tok.split_rule.splits])
    out["normalizer"] = tok.normalizer.describe() if tok.normalizer is not None else None
    out["type"] = type(tok)
    return out


def _no_parse(monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("parsed again: the entry was not used")

    monkeypatch.setattr(formats, "_load", refuse)


def _same_again(path: Path, folder: Path, monkeypatch, texts: list[str]) -> None:
    first = load_path(path)
    assert len(_entries(folder)) == 1
    _no_parse(monkeypatch)
    again = load_path(path)
    assert again is not first and _state(again) == _state(first)
    for text in texts:
        assert again.encode(text, allowed_special="all") == first.encode(text, allowed_special="all"), text
        assert again.encode_with_offsets(text).ids == first.encode_with_offsets(text).ids
    assert again.merges == first.merges


def _byte_level_json(tmp_path: Path) -> Path:
    obj = huggingface.to_dict(load_tokenizer("r50k_base"))
    obj["normalizer"] = {"type": "NFC"}
    obj["added_tokens"].append({"id": 50257, "content": "<tool>", "single_word": False, "lstrip": True,
                                "rstrip": False, "normalized": False, "special": False})
    path = tmp_path / "tokenizer.json"
    path.write_bytes(huggingface.dumps(obj))
    return path


def test_a_tokenizer_json_opened_again_comes_from_the_cache(cache, tmp_path, monkeypatch, corpus):
    path = _byte_level_json(tmp_path)
    _same_again(path, cache, monkeypatch, [*corpus[:40], "x <tool> y<|endoftext|>"])


def test_rank_files_and_gguf_come_back_the_same(cache, tmp_path, monkeypatch, corpus, vocabs):
    from bpeinspect.core.io.formats import gguf as gguf_format
    from tests.core.io.formats.test_gguf import write_gguf

    rank_file = save(load_tokenizer("cl100k_base"), tmp_path / "cl100k_base.tiktoken")
    with open(vocabs / "gpt2.gguf", "rb") as f:
        meta = gguf_format.read_metadata(f, vocabs / "gpt2.gguf")
    model = write_gguf(tmp_path / "model.gguf", meta)
    for n, path in enumerate([rank_file, model], start=1):
        first = load_path(path)
        assert len(_entries(cache)) == n
        again = load_path(path)
        assert _state(again) == _state(first)
        assert [again.encode(t) for t in corpus[:30]] == [first.encode(t) for t in corpus[:30]]


def test_sentencepiece_files_come_back_the_same(cache, tmp_path, monkeypatch):
    pytest.importorskip("sentencepiece")
    pytest.importorskip("tokenizers")
    from tests.core.test_sentencepiece import GEMMA, TEXTS, _hf_sp_json, _train_spm

    model, _ = _train_spm(tmp_path, user_defined_symbols=["<ud>"])
    hf_json, _ = _hf_sp_json(tmp_path, *GEMMA)
    for n, path in enumerate([model, hf_json], start=1):
        first = load_path(path)
        assert len(_entries(cache)) == n
        again = load_path(path)
        assert type(again) is type(first) and _state(again) == _state(first)
        assert [again.encode(t, allowed_special="all") for t in TEXTS] == [first.encode(t, allowed_special="all") for t in TEXTS]
        assert again.merge_source == first.merge_source


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # cut short (a copy interrupted)
        lambda b: b[:-100] + bytes(100),  # zeros at the end
        lambda b: b"",
        lambda b: b"not an entry at all",
        lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:],  # one bit
    ],
    ids=["truncated", "zeroed", "empty", "garbage", "bit"],
)
def test_a_damaged_entry_is_ignored_and_written_again(cache, tmp_path, damage):
    path = _byte_level_json(tmp_path)
    first = load_path(path)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    again = load_path(path)  # no error: parsed again
    assert again.encode("hello world") == first.encode("hello world")
    assert _entries(cache) == [entry] and entry.read_bytes() == good


def test_an_entry_that_would_make_anything_else_is_refused(cache, tmp_path):
    path = _byte_level_json(tmp_path)
    load_path(path)
    (entry,) = _entries(cache)
    ran = []
    # a well-formed entry (right header and CRC) whose pickle calls a function of the standard library
    body = pickle.dumps((threading.Thread, (), {"target": ran.append}))
    import zlib

    entry.write_bytes(load_cache._MAGIC + load_cache._HEADER.pack(zlib.crc32(body), len(body), 0, 0) + body)
    assert load_cache.read(entry.stem) is None
    evil = b"cos\nsystem\n(S'echo owned'\ntR."  # protocol 0: os.system("echo owned")
    entry.write_bytes(load_cache._MAGIC + load_cache._HEADER.pack(zlib.crc32(evil), len(evil), 0, 0) + evil)
    assert load_cache.read(entry.stem) is None
    assert load_path(path).encode("hello") == [31373]


def test_a_changed_file_or_changed_code_is_another_entry(cache, tmp_path, monkeypatch):
    path = _byte_level_json(tmp_path)
    key = load_cache.key_for(path)
    assert key is not None and load_cache.key_for(path) == key
    path.write_bytes(path.read_bytes().replace(b'"<tool>"', b'"<tools>"'))
    changed = load_cache.key_for(path)
    assert changed not in (None, key)
    assert load_cache.key_for(path, extra="another name") != changed
    monkeypatch.setattr(load_cache, "_code_fingerprint", lambda: b"other code")
    assert load_cache.key_for(path) not in (None, key, changed)


def test_not_cached_when_off_small_warned_or_unwritable(cache, tmp_path, monkeypatch):
    path = _byte_level_json(tmp_path)
    monkeypatch.setenv(load_cache.ENV, "0")
    load_path(path)
    assert _entries(cache) == []
    monkeypatch.setenv(load_cache.ENV, "1")
    monkeypatch.setattr(load_cache, "MIN_SIZE", path.stat().st_size + 1)
    load_path(path)
    assert _entries(cache) == []
    monkeypatch.setattr(load_cache, "MIN_SIZE", 0)
    # a vocabulary entry out of the byte-level alphabet: the load warns, and so must the next one
    obj = huggingface.to_dict(load_tokenizer("r50k_base"))
    obj["model"]["vocab"]["a b"] = 60000
    odd = tmp_path / "odd" / "tokenizer.json"
    odd.parent.mkdir()
    odd.write_bytes(huggingface.dumps(obj))
    for _ in range(2):
        with pytest.warns(UserWarning, match="not in the byte-level alphabet"):
            load_path(odd)
    assert _entries(cache) == []
    monkeypatch.setattr(load_cache, "atomic_open", lambda *_a: (_ for _ in ()).throw(OSError("read-only")))
    assert load_path(path).encode("hello") == [31373]  # a cache that cannot be written is only slower
    assert _entries(cache) == []


def test_settings_given_by_the_user_bypass_the_cache(cache, tmp_path):
    path = save(load_tokenizer("cl100k_base"), tmp_path / "ranks.tiktoken")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        load_path(path, pattern="r50k")
    assert _entries(cache) == []
    assert load_path(path).split_rule.name != load_path(path, pattern="r50k").split_rule.name


def test_only_the_newest_entries_are_kept(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(load_cache, "KEEP", 2)
    tok = Tokenizer.from_merges([(104, 105), (256, 104)], pattern="r50k", normalizer=from_hf({"type": "NFC"}))
    for k in range(4):
        p = tmp_path / f"v{k}" / "tokenizer.json"
        p.parent.mkdir()
        save(tok, p)
        load_path(p)
        load_cache.wait()
    assert len(_entries(cache)) == 2


def test_a_write_that_fails_half_way_leaves_nothing(cache, tmp_path, monkeypatch):
    path = _byte_level_json(tmp_path)
    real = load_cache._Writer.value
    seen = []

    def fail_late(self, value):
        seen.append(value)
        if len(seen) == 3:  # some tables already in the temporary file
            raise pickle.PicklingError("cannot pickle this")
        return real(self, value)

    monkeypatch.setattr(load_cache._Writer, "value", fail_late)
    assert load_path(path).encode("hello") == [31373]
    assert _entries(cache) == [] and len(seen) == 3
    assert [p.name for p in cache.iterdir()] == []  # no temporary file left either


@pytest.fixture
def fresh_fingerprint():
    load_cache._code_fingerprint.cache_clear()
    yield
    load_cache._code_fingerprint.cache_clear()


def test_an_app_bundle_or_another_version_never_reads_older_tables(cache, tmp_path, monkeypatch, fresh_fingerprint):
    import bpeinspect

    path = _byte_level_json(tmp_path)
    key = load_cache.key_for(path)
    assert key is not None
    load_cache._code_fingerprint.cache_clear()
    monkeypatch.setattr(bpeinspect, "__version__", "99.0")
    assert load_cache.key_for(path) not in (None, key)  # the version is part of the key
    load_cache._code_fingerprint.cache_clear()
    # a frozen app ships compiled modules, not sources: no key could tell one build from the next
    monkeypatch.setattr("sys.frozen", True, raising=False)
    assert load_cache.key_for(path) is None
    load_path(path)
    assert _entries(cache) == []
