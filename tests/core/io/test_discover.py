"""The machine catalog: built-ins, tiktoken cache, HF hub cache, recent files."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
    from tests.core.io.conftest import VOCABS

    if not VOCABS.is_dir():
        pytest.skip("shared vocabularies not available")
    return VOCABS


# -- a hostile recent.json: never hangs, never grows memory, replaced on the next write --------------------


def _within(seconds: float, work):
    import threading

    got: list = []
    t = threading.Thread(target=lambda: got.append(work()), daemon=True)
    t.start()
    t.join(seconds)
    assert got, f"still running after {seconds} s"
    return got[0]


def test_a_named_pipe_as_recent_files_is_ignored_and_replaced(isolated, tmp_path):
    (isolated / "cfg").mkdir()
    recent = isolated / "cfg" / "recent.json"
    os.mkfifo(recent)
    assert _within(20, d.recent_files) == []
    vocab = tmp_path / "v.tiktoken"
    vocab.write_text("x")
    _within(20, lambda: d.add_recent(vocab))
    assert recent.is_file() and not recent.is_symlink()
    assert [e.spec for e in d.recent_files()] == [str(vocab.resolve())]


def test_a_link_to_an_endless_device_as_recent_files_is_ignored(isolated):
    (isolated / "cfg").mkdir()
    os.symlink("/dev/zero", isolated / "cfg" / "recent.json")
    assert _within(20, d.recent_files) == []


def test_a_huge_recent_files_list_shows_at_most_the_limit(isolated, tmp_path):
    import json

    vocab = tmp_path / "v.tiktoken"
    vocab.write_text("x")
    (isolated / "cfg").mkdir()
    entries = [{"name": f"n{i}", "spec": str(vocab)} for i in range(300_000)]
    (isolated / "cfg" / "recent.json").write_text(json.dumps(entries))
    assert len(d.recent_files()) <= d.RECENT_LIMIT


def test_two_processes_adding_recent_files_lose_none(isolated, tmp_path):
    import subprocess
    import sys

    files = []
    for i in range(d.RECENT_LIMIT):
        f = tmp_path / f"v{i}.tiktoken"
        f.write_text("x")
        files.append(str(f))
    script = (
        "import sys\nfrom bpeinspect.core.io.discover import add_recent\n"
        "for f in sys.argv[1:]:\n    add_recent(f)\n"
    )
    env = dict(os.environ, BPEINSPECT_CONFIG_DIR=str(isolated / "cfg"))
    half = d.RECENT_LIMIT // 2
    procs = [
        subprocess.Popen([sys.executable, "-c", script, *part], env=env)
        for part in (files[:half], files[half:])
    ]
    for p in procs:
        assert p.wait(120) == 0
    assert sorted(e.spec for e in d.recent_files()) == sorted(str(Path(f).resolve()) for f in files)
