"""The cache of built tables (``core/io/load_cache.py``): a file opened again
makes the same tokenizer without being parsed; a damaged, stale or foreign entry is ignored."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pickle
import struct
import threading
import time
import warnings
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    return sorted(folder.glob("*" + load_cache.SUFFIX)) if folder.is_dir() else []


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


@functools.cache
def _r50k_json() -> bytes:
    """r50k_base as a ``tokenizer.json``, written once (each test writes these bytes to its own file)."""
    return huggingface.dumps(huggingface.to_dict(load_tokenizer("r50k_base")))


@functools.cache
def _byte_level_json_bytes() -> bytes:
    obj = huggingface.to_dict(load_tokenizer("r50k_base"))
    obj["normalizer"] = {"type": "NFC"}
    obj["added_tokens"].append({"id": 50257, "content": "<tool>", "single_word": False, "lstrip": True,
                                "rstrip": False, "normalized": False, "special": False})
    return huggingface.dumps(obj)


def _byte_level_json(tmp_path: Path) -> Path:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(_byte_level_json_bytes())
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
    from tests.core.sentencepiece.test_model import GEMMA, TEXTS, _hf_sp_json, _train_spm

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


def _crafted_pickle(code: str) -> bytes:
    """A pickle that runs ``code`` when loaded, through names that a restricted unpickler
    allowing any type bound in a bpeinspect core module let through: ``methodcaller`` (bound in
    the GGUF loader) on ``re._compile`` reaches its globals, their builtins, and ``exec``."""

    def call(fn: bytes, *args: bytes) -> bytes:
        return fn + b"(" + b"".join(args) + b"tR"

    caller = b"cbpeinspect.core.io.formats.gguf\nmethodcaller\n"

    def text(s: str) -> bytes:
        return b"V" + s.encode("raw_unicode_escape") + b"\n"

    globals_ = call(call(caller, text("__getattribute__"), text("__globals__")), b"cre\n_compile\n")
    builtins_ = call(call(caller, text("__getitem__"), text("__builtins__")), globals_)
    exec_ = call(call(caller, text("__getitem__"), text("exec")), builtins_)
    return call(exec_, text(code)) + b"."


def test_a_tampered_entry_with_a_correct_crc_runs_no_code(cache, tmp_path):
    path = _byte_level_json(tmp_path)
    first = load_path(path)
    (entry,) = _entries(cache)
    key = entry.stem
    marker = tmp_path / "payload ran"
    payload = _crafted_pickle(f"open({str(marker)!r}, 'w').close()")
    pickle.loads(payload)  # the payload works: it runs when it is unpickled
    assert marker.exists()
    marker.unlink()
    # put in every place a version of this cache reads, each with a correct header and CRC
    old = b"bpeinspect load cache\n" + struct.pack("<IQQQ", zlib.crc32(payload), len(payload), 0, 0) + payload
    (cache / f"{key}.pickle").write_bytes(old)
    body = b"[]" + payload
    (cache / f"{key}{load_cache.SUFFIX}").write_bytes(
        load_cache._MAGIC + load_cache._HEADER.pack(zlib.crc32(body), len(body), 2) + body
    )
    again = load_path(path)
    assert not marker.exists()
    assert again.encode("hello <tool> world") == first.encode("hello <tool> world")
    load_cache.wait()
    assert load_cache.read(key) is not None  # the refused entry was written again, as data


def test_entries_naming_other_factories_or_classes_are_refused(cache, tmp_path):
    from bpeinspect.core import tables

    path = _byte_level_json(tmp_path)
    load_path(path)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    files_size = load_cache._HEADER.unpack_from(data, len(load_cache._MAGIC))[2]
    at = len(load_cache._MAGIC) + load_cache._HEADER.size + files_size
    good = tables.loads(data[at:])
    for factory, changes in [
        ("builtins.exec", {}),
        ("Tokenizer", {"normalizer": {"type": "os.system"}}),
        ("Tokenizer", {"pattern": {"steps": [], "name": "", "unicode": "", "fast": True, "extra": 1}}),
        ("Tokenizer", {"special_tokens": {"__reduce__": "exec"}}),
    ]:
        header, blobs = tables._split(tables.dumps(good))
        header = {**header, "factory": factory, "args": {**header["args"], **changes}}
        raw = json.dumps(header).encode("ascii")
        forged = tables.MAGIC + tables._HEAD.pack(tables.VERSION, len(raw)) + raw + b"".join(map(bytes, blobs))
        body = b"[]" + forged
        entry.write_bytes(load_cache._MAGIC + load_cache._HEADER.pack(zlib.crc32(body), len(body), 2) + body)
        assert load_cache.read(entry.stem) is None, factory


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
    # a vocabulary entry out of the byte-level alphabet: the load notes it, and so must the next one
    obj = huggingface.to_dict(load_tokenizer("r50k_base"))
    obj["model"]["vocab"]["a b"] = 60000
    odd = tmp_path / "odd" / "tokenizer.json"
    odd.parent.mkdir()
    odd.write_bytes(huggingface.dumps(obj))
    for _ in range(2):
        (note,) = load_path(odd).load_notes
        assert note.startswith(str(odd)) and "1 vocabulary entries are not in the byte-level alphabet" in note
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
    real = load_cache.atomic_open
    seen = []

    class Failing:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            seen.append(len(data))
            if len(seen) == 3:  # some tables already in the temporary file
                raise OSError("no space left on the device")
            return self.f.write(data)

    @contextlib.contextmanager
    def failing_open(*args, **kwargs):
        with real(*args, **kwargs) as f:
            yield Failing(f)

    monkeypatch.setattr(load_cache, "atomic_open", failing_open)
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


def test_a_gpt2_pair_is_parsed_again_when_its_merges_change_or_go(cache, tmp_path):
    from bpeinspect.core.errors import VocabularyError
    from bpeinspect.core.io.formats import gpt2

    folder = tmp_path / "gpt2"
    gpt2.save(load_tokenizer("r50k_base"), folder)
    encoder, merges = folder / gpt2.ENCODER, folder / gpt2.MERGES
    text = "hello world, the tokenizers"
    before = load_path(encoder).encode(text)
    assert len(_entries(cache)) == 1
    assert load_path(encoder).encode(text) == before  # from the entry
    head, *lines = merges.read_text("utf-8").splitlines()
    merges.write_text("\n".join([head, *reversed(lines)]) + "\n", "utf-8")  # the merge order reversed
    after = load_path(encoder).encode(text)
    assert after == gpt2.load(encoder).encode(text) and after != before
    merges.unlink()
    with pytest.raises(VocabularyError):
        load_path(encoder)


def _big_file(tmp_path: Path, monkeypatch) -> Path:
    """A ``tokenizer.json`` over the size hashed whole (made small for the test), with two ids
    that can be swapped in place past its first megabyte."""
    path = tmp_path / "big" / "tokenizer.json"
    path.parent.mkdir()
    path.write_bytes(_r50k_json())
    monkeypatch.setattr(load_cache, "HASHED_BYTES", 1 << 16)
    monkeypatch.setattr(load_cache, "HEAD_BYTES", 1 << 12)
    assert path.stat().st_size > load_cache.HASHED_BYTES
    return path


def test_a_big_file_changed_in_place_with_its_time_set_back_is_parsed_again(cache, tmp_path, monkeypatch):
    path = _big_file(tmp_path, monkeypatch)
    first = load_path(path)
    a, b = first.ranks[b"hello"], first.ranks[b"Hello"]
    data = path.read_bytes()
    old_a, old_b = f'"hello": {a}'.encode(), f'"Hello": {b}'.encode()
    assert data.count(old_a) == 1 and data.count(old_b) == 1 and len(str(a)) == len(str(b))
    assert min(data.index(old_a), data.index(old_b)) > load_cache.HEAD_BYTES
    st = path.stat()
    time.sleep(0.05)  # (a coarse clock of change would not move otherwise)
    swapped = data.replace(old_a, b"\0").replace(old_b, f'"Hello": {a}'.encode()).replace(b"\0", f'"hello": {b}'.encode())
    with open(path, "r+b") as f:  # in place, the same size, as rsync --inplace writes
        f.write(swapped)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p or rsync -t set it back
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    again = load_path(path)
    assert again.ranks[b"hello"] == b and again.ranks[b"Hello"] == a


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_fifo_or_a_link_to_dev_zero_in_place_of_an_entry_is_passed_over_and_replaced(cache, tmp_path):
    path = _byte_level_json(tmp_path)
    first = load_path(path)
    (entry,) = _entries(cache)
    for make in (os.mkfifo, lambda p: os.symlink("/dev/zero", p)):
        entry.unlink()
        make(entry)
        done: list = []
        reader = threading.Thread(target=lambda got=done: got.append(load_path(path)), daemon=True)
        reader.start()
        reader.join(60)  # (a hang would never end: a bound, not a timing)
        assert done and done[0].encode("hello world") == first.encode("hello world")
        load_cache.wait()
        assert entry.is_file() and not entry.is_symlink() and load_cache.read(entry.stem) is not None


def test_pruning_deletes_only_the_caches_own_entries(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(load_cache, "KEEP", 1)
    cache.mkdir(parents=True)
    mine = "0123456789abcdef0123456789abcdef01234567"
    users = {
        "notes.pickle": b"a user's pickle",
        f"{mine}.pickle": b"not written by the cache",
        f"{mine}.tables": b"not written by the cache either",
        "model.tables": load_cache._MAGIC + b"a user's file that starts like an entry",
    }
    for name, data in users.items():
        (cache / name).write_bytes(data)
        os.utime(cache / name, (1, 1))  # older than any entry
    older = cache / f"{'f' * 40}.pickle"
    older.write_bytes(b"bpeinspect load cache\n" + bytes(28))  # an entry of an older version
    os.utime(older, (1, 1))
    tok = Tokenizer.from_merges([(104, 105), (256, 104)], pattern="r50k")
    for k in range(3):
        p = tmp_path / f"v{k}" / "tokenizer.json"
        p.parent.mkdir()
        save(tok, p)
        load_path(p)
        load_cache.wait()
    assert len([p for p in _entries(cache) if load_cache.is_own(p)]) == 1 and not older.exists()
    for name, data in users.items():
        assert (cache / name).read_bytes() == data, name


def test_the_cache_is_a_service_off_in_library_use(cache, monkeypatch):
    from bpeinspect.cli.commands import main

    monkeypatch.delenv(load_cache.ENV)
    monkeypatch.setitem(load_cache._service, "on", False)
    assert not load_cache.enabled()
    main(["list"])
    assert load_cache.enabled()  # the command line turns it on
    monkeypatch.setenv(load_cache.ENV, "0")
    assert not load_cache.enabled()  # and the environment still wins
    monkeypatch.setenv(load_cache.ENV, "1")
    load_cache.turn_on(False)
    assert load_cache.enabled()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.data())
def test_a_random_or_damaged_entry_with_a_correct_crc_is_refused_or_makes_a_tokenizer(cache, tmp_path, data):
    path = tmp_path / "small" / "tokenizer.json"
    if not path.exists():
        path.parent.mkdir()
        save(Tokenizer.from_merges([(104, 105), (256, 104), (32, 257)], pattern="r50k", name="small"), path)
        load_path(path)
        load_cache.wait()
    (entry,) = [p for p in _entries(cache) if load_cache.is_own(p)]
    good = entry.read_bytes()
    body = good[len(load_cache._MAGIC) + load_cache._HEADER.size :]
    files_size = load_cache._HEADER.unpack_from(good, len(load_cache._MAGIC))[2]
    if data.draw(st.booleans()):
        bad = bytearray(body)
        for at in data.draw(st.lists(st.integers(0, len(body) - 1), min_size=1, max_size=6)):
            bad[at] = data.draw(st.integers(0, 255))
        body = bytes(bad)
    else:
        body = data.draw(st.binary(max_size=400))
        files_size = data.draw(st.integers(0, len(body)))
    try:
        entry.write_bytes(load_cache._MAGIC + load_cache._HEADER.pack(zlib.crc32(body), len(body), files_size) + body)
        tok = load_cache.read(entry.stem)
        assert tok is None or isinstance(tok, Tokenizer)
    finally:
        entry.write_bytes(good)


def test_a_load_from_the_cache_asks_the_should_stop_it_is_given(cache, tmp_path, monkeypatch):
    from bpeinspect.core import Cancelled

    path = save(load_tokenizer("r50k_base"), tmp_path / "r50k.tiktoken")
    first = load_path(path)
    assert len(_entries(cache)) == 1
    _no_parse(monkeypatch)  # from here on, only the entry builds the tokenizer
    asked: list[bool] = []
    again = load_path(path, should_stop=lambda: asked.append(True) or False)
    assert _state(again) == _state(first) and len(asked) >= 50256 // (1 << 14)
    with pytest.raises(Cancelled):
        load_path(path, should_stop=lambda: True)  # stopped, not taken for a damaged entry and parsed


def test_an_entry_holds_the_tables_of_the_tokenizer_handed_back_however_it_was_made(cache, tmp_path):
    path = tmp_path / "made.json"
    path.write_bytes(b"{}")  # the cache keys on the file; the load below makes its tokenizer itself
    first = Tokenizer.from_merges([(104, 105), (256, 104)], pattern="gpt2", name="made")
    assert load_cache.cached_load(path, lambda: first) is first
    assert len(_entries(cache)) == 1

    def refuse():
        raise AssertionError("loaded again: the entry was not used")

    again = load_cache.cached_load(path, refuse)
    assert again is not first and _state(again) == _state(first)
    assert again.encode("hihih hi") == first.encode("hihih hi")
