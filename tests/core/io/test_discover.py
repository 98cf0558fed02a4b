"""The machine catalog: built-ins, tiktoken cache, HF hub cache, recent files."""

from __future__ import annotations

import json

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.io import discover as d
from bpeinspect.core.io.formats import save


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path


def test_builtins_listed_with_sizes(isolated):
    entries = {e.name: e for e in d.discover()}
    for name in ("r50k_base", "cl100k_base", "o200k_base"):
        assert entries[name].source == "built-in"
        assert entries[name].vocab_size == load_tokenizer(name).n_vocab


def test_recent_files_round_trip(isolated):
    a = isolated / "a.tiktoken"
    save(load_tokenizer("gpt2"), a)
    b = isolated / "b.json"
    b.write_text("{}")
    d.add_recent(a, "gpt2-copy", 50257)
    d.add_recent(b)
    d.add_recent(a, "gpt2-copy", 50257)  # moves to the top, no duplicate
    recent = d.recent_files()
    assert [e.spec for e in recent] == [str(a.resolve()), str(b.resolve())]
    assert recent[0].vocab_size == 50257 and recent[0].source == "recent"
    b.unlink()  # vanished files drop out
    assert [e.name for e in d.recent_files()] == ["gpt2-copy"]
    assert (isolated / "cfg" / "recent.json").is_file()


def test_recent_list_is_capped_and_survives_damage(isolated):
    for i in range(d.RECENT_LIMIT + 5):
        p = isolated / f"f{i}"
        p.write_text("x")
        d.add_recent(p)
    assert len(d.recent_files()) == d.RECENT_LIMIT
    (isolated / "cfg" / "recent.json").write_text("{not json")
    assert d.recent_files() == []


def test_tiktoken_cache_is_scanned(isolated):
    cache = isolated / "tt"
    cache.mkdir()
    save(load_tokenizer("gpt2"), cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4", fmt="tiktoken")
    (cache / "junk").write_bytes(b"\x00\x01 not a rank file")
    entries = [e for e in d.discover() if e.source == "tiktoken cache"]
    assert [(e.name, e.vocab_size) for e in entries] == [("r50k_base", 50257)]
    assert load_tokenizer(entries[0].spec).encode("hi") == [5303]


def test_hf_cache_lists_byte_level_bpe_only(isolated, vocabs_dir):
    snap = isolated / "hub" / "models--openai-community--gpt2" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "tokenizer.json").write_bytes((vocabs_dir / "gpt2" / "tokenizer.json").read_bytes())
    wp = isolated / "hub" / "models--bert--base" / "snapshots" / "def"
    wp.mkdir(parents=True)
    (wp / "tokenizer.json").write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {"a": 0}}}))
    entries = [e for e in d.discover() if e.source == "Hugging Face cache"]
    assert [(e.name, e.vocab_size) for e in entries] == [("openai-community/gpt2", 50257)]


@pytest.fixture
def vocabs_dir():
    from tests.core.io.formats.conftest import VOCABS

    if not VOCABS.is_dir():
        pytest.skip("shared vocabularies not available")
    return VOCABS
