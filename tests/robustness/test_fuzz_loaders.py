"""Fuzz every file loader: random bytes, truncated and mutated real files.

A loader may refuse a file only with its documented error (a ValueError subclass naming the
file): :class:`VocabularyError` for vocabularies, :class:`CountsFileError` for pre-token count
tables, :class:`CorpusError` for corpora. Anything else (IndexError, KeyError, struct.error,
RecursionError, MemoryError, a hang...) is a bug. pytest-timeout turns a hang into a failure.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats import detect_format, gguf, gpt2, huggingface, load_path, minbpe, native, tiktoken
from bpeinspect.core.train.corpus import CorpusError, iter_corpus
from bpeinspect.core.train.counts import CountsFileError, read_counts_tsv, write_counts_tsv

from .seeds import saved_files, shared_files, small_tokenizer

pytestmark = pytest.mark.timeout(int(os.environ.get("BPEINSPECT_FUZZ_TIMEOUT", "300")))

# CI runs a quick pass; BPEINSPECT_FUZZ_EXAMPLES=2000 digs deeper by hand.
EXAMPLES = int(os.environ.get("BPEINSPECT_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
FEW = settings(FUZZ, max_examples=max(12, EXAMPLES // 5))  # for the 1-4 MB GPT-2 files (a load takes up to a second)

# each format's own loader, besides the content-sniffing load_path
DIRECT = {
    "tiktoken": tiktoken.load,
    "huggingface": huggingface.load,
    "gpt2": gpt2.load,
    "minbpe": minbpe.load,
    "gguf": gguf.load,
    "native": native.load,
}
NAME_FORMAT = {
    "small.tiktoken": "tiktoken",
    "gpt2.tiktoken": "tiktoken",
    "tokenizer.json": "huggingface",
    "small.model": "minbpe",
    "small.json": "native",
    "encoder.json": "gpt2",
    "vocab.bpe": "gpt2",
    "small.gguf": "gguf",
    "gpt2.gguf": "gguf",
}


@functools.cache
def all_seeds() -> dict[str, bytes]:
    """name -> bytes of every real file we fuzz from."""
    folder = Path(tempfile.mkdtemp(prefix="bpe-seeds-"))
    files = {name: p for name, p in saved_files(folder).items()}
    out = {name: p.read_bytes() for name, p in files.items()}
    out["small.vocab"] = files["small.model"].with_suffix(".vocab").read_bytes()
    out["small-vocab.bpe"] = (files["encoder.json"].parent / "vocab.bpe").read_bytes()
    for name, p in shared_files().items():
        out[f"shared/{name}"] = p.read_bytes()
    shutil.rmtree(folder, ignore_errors=True)
    return out


class Seeds(dict):
    """The seed files, with a short repr: hypothesis prints a failing example's arguments."""

    def __repr__(self) -> str:
        return f"<{len(self)} seed files>"


@pytest.fixture(scope="module")
def seeds() -> dict[str, bytes]:
    return Seeds(all_seeds())


class Workspace:
    """A scratch folder per test; each load gets the file (and the partner it needs) afresh."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bpe-fuzz-"))

    def place(self, name: str, data: bytes, partners: dict[str, bytes] | None = None) -> Path:
        folder = self.root / "case"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for pname, pdata in (partners or {}).items():
            (folder / pname).write_bytes(pdata)
        path = folder / name
        path.write_bytes(data)
        return path

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def ws():
    w = Workspace()
    yield w
    w.close()


def check_loads(path: Path, fmt: str | None = None) -> Tokenizer | None:
    """Load ``path`` every way a user can; only VocabularyError may come out. A tokenizer
    that does load must be usable: it encodes and decodes a short text."""
    result = None
    loaders = [load_path, lambda p: load_tokenizer(str(p)), detect_format]
    if fmt is not None:
        loaders.append(DIRECT[fmt])
    for load in loaders:
        try:
            got = load(path)
        except VocabularyError as exc:
            assert str(path.name) in str(exc) or str(path.parent) in str(exc), f"error does not name the file: {exc}"
            continue
        if isinstance(got, Tokenizer):
            result = got
            exercise(got)
    return result


def exercise(tok: Tokenizer) -> None:
    # a damaged-but-loadable vocabulary must still behave: encode, decode, offsets
    text = "hello wörld 12 日本 👩‍💻"
    ids = tok.encode(text, allowed_special=set(), disallowed_special=())
    assert all(0 <= i < max(tok.n_vocab, 1) or i in tok.special_tokens.values() for i in ids)
    tok.decode_bytes(ids)
    tok.encode_with_offsets(text)


def partners_for(name: str, seeds: dict[str, bytes]) -> dict[str, bytes]:
    """The other file of a two-file format, intact, so the damaged one is what is tested."""
    if name.endswith("encoder.json"):
        return {"vocab.bpe": seeds.get("shared/vocab.bpe", seeds["small-vocab.bpe"]) if "shared" in name else seeds["small-vocab.bpe"]}
    if name.endswith("vocab.bpe"):
        return {"encoder.json": seeds["shared/encoder.json"] if "shared" in name else seeds["encoder.json"]}
    if name == "small.model":
        return {"small.vocab": seeds["small.vocab"]}
    return {}


def target_name(name: str) -> str:
    base = name.removeprefix("shared/")
    return "vocab.bpe" if base == "small-vocab.bpe" else base


SMALL = ["small.tiktoken", "tokenizer.json", "small.model", "small.json", "encoder.json", "small-vocab.bpe", "small.gguf"]
BIG = ["shared/gpt2.tiktoken", "shared/tokenizer.json", "shared/encoder.json", "shared/vocab.bpe", "shared/gpt2.gguf"]


def fmt_of(name: str) -> str:
    return NAME_FORMAT[target_name(name)]


def need(seeds: dict[str, bytes], name: str) -> bytes:
    if name not in seeds:
        pytest.skip("shared/ test data not beside the repository")
    return seeds[name]


# -- random bytes ---------------------------------------------------------------------------------

FILE_NAMES = ["x.tiktoken", "tokenizer.json", "x.model", "x.json", "encoder.json", "vocab.bpe", "x.gguf", "x.vocab", "x.bin"]


@FUZZ
@given(name=st.sampled_from(FILE_NAMES), data=st.binary(min_size=0, max_size=2000))
@example(name="x.gguf", data=b"GGUF")
@example(name="x.tiktoken", data=b"\x1f\x8b")
@example(name="tokenizer.json", data=b"{" * 100_000)
@example(name="x.json", data=b"[" * 100_000)
def test_random_bytes(ws, name, data):
    check_loads(ws.place(name, data))


@FUZZ
@given(
    name=st.sampled_from(FILE_NAMES),
    head=st.sampled_from([b"GGUF\x03\x00\x00\x00", b"#version: 0.2\n", b"minbpe v1\n", b"{", b'{"format": "bpeinspect"', b"\x1f\x8b\x08\x00"]),
    data=st.binary(max_size=1000),
)
def test_random_bytes_after_a_real_header(ws, name, head, data):
    # most random bytes die at the first check; a real magic number gets them further in
    check_loads(ws.place(name, head + data))


# -- truncation and mutation of real files ---------------------------------------------------------


@FUZZ
@given(name=st.sampled_from(SMALL), cut=st.floats(0, 1))
def test_truncated_saved_files(ws, seeds, name, cut):
    data = seeds[name]
    check_loads(ws.place(target_name(name), data[: int(len(data) * cut)], partners_for(name, seeds)), fmt_of(name))


@FEW
@given(name=st.sampled_from(BIG), cut=st.floats(0, 1))
def test_truncated_shared_files(ws, seeds, name, cut):
    data = need(seeds, name)
    check_loads(ws.place(target_name(name), data[: int(len(data) * cut)], partners_for(name, seeds)), fmt_of(name))


def mutate(data: bytes, rnd: random.Random, n: int) -> bytes:
    """``n`` random edits: overwrite, insert or delete a byte, or copy a slice elsewhere."""
    buf = bytearray(data)
    for _ in range(n):
        if not buf:
            buf.append(rnd.randrange(256))
            continue
        pos = rnd.randrange(len(buf))
        op = rnd.randrange(5)
        if op == 0:
            buf[pos] = rnd.randrange(256)
        elif op == 1:
            buf.insert(pos, rnd.randrange(256))
        elif op == 2:
            del buf[pos]
        elif op == 3:
            buf[pos] = rnd.choice(b"0123456789 \n\t\"{}[]:,\\")  # characters the parsers care about
        else:
            a = rnd.randrange(len(buf))
            buf[pos:pos] = buf[a : a + rnd.randrange(1, 64)]
    return bytes(buf)


@FUZZ
@given(name=st.sampled_from(SMALL), seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 1, 1, 1, 2, 3, 6, 12]))
def test_mutated_saved_files(ws, seeds, name, seed, n):
    data = mutate(seeds[name], random.Random(seed), n)
    check_loads(ws.place(target_name(name), data, partners_for(name, seeds)), fmt_of(name))


@FEW
@given(name=st.sampled_from(BIG), seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 1, 2, 6]))
def test_mutated_shared_files(ws, seeds, name, seed, n):
    data = mutate(need(seeds, name), random.Random(seed), n)
    check_loads(ws.place(target_name(name), data, partners_for(name, seeds)), fmt_of(name))


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8))
def test_mutated_gguf_header(ws, seeds, seed, n):
    """Byte edits inside the GGUF header and metadata, where lengths and type codes live."""
    data = bytearray(seeds["small.gguf"])
    rnd = random.Random(seed)
    for _ in range(n):
        pos = rnd.randrange(min(len(data), 600))
        data[pos] = rnd.choice([0, 1, 2, 8, 9, 12, 0x7F, 0xFF, rnd.randrange(256)])
    check_loads(ws.place("small.gguf", bytes(data)), "gguf")


# -- structure-aware: JSON documents with one value replaced ---------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def json_paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in list(obj.items())[:50]:
            yield from json_paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            yield from json_paths(v, (*prefix, i))


def replace_at(obj, path, value):
    if not path:
        return value
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return obj


@FUZZ
@given(name=st.sampled_from(["tokenizer.json", "small.json", "encoder.json"]), data=st.data())
def test_json_with_a_value_replaced(ws, seeds, name, data):
    obj = json.loads(seeds[name])
    paths = list(json_paths(obj))
    path = data.draw(st.sampled_from(paths), label="path")
    how = data.draw(st.sampled_from(["replace", "delete"]), label="how")
    if how == "delete" and path:
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    else:
        obj = replace_at(obj, path, data.draw(JSON_VALUES, label="value"))
    raw = json.dumps(obj, ensure_ascii=data.draw(st.booleans())).encode("utf-8")
    check_loads(ws.place(name, raw, partners_for(name, seeds)), fmt_of(name))


# -- crafted: deep nesting and absurd sizes --------------------------------------------------------


def gguf_kv_file(entries: bytes, n_kv: int) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, n_kv) + entries


def test_gguf_deeply_nested_arrays(ws):
    # ARRAY of ARRAY of ARRAY... 200k levels deep would blow the stack of a recursive reader
    key = b"x"
    depth = 200_000
    body = struct.pack("<Q", len(key)) + key + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * depth
    body += struct.pack("<IQ", 4, 0)
    check_loads(ws.place("x.gguf", gguf_kv_file(body, 1)), "gguf")


def test_gguf_claims_huge_counts(ws):
    key = b"tokenizer.ggml.tokens"
    for etype, count in ((8, 2**62), (4, 2**62), (9, 2**40), (8, 2**64 - 1)):
        body = struct.pack("<Q", len(key)) + key + struct.pack("<I", 9) + struct.pack("<IQ", etype, count) + b"\0" * 64
        check_loads(ws.place("x.gguf", gguf_kv_file(body, 1)), "gguf")
    check_loads(ws.place("x.gguf", gguf_kv_file(b"", 2**63)), "gguf")
    body = struct.pack("<Q", 2**63) + b"k"
    check_loads(ws.place("x.gguf", gguf_kv_file(body, 1)), "gguf")


def test_gzip_bomb_is_refused(ws):
    import gzip

    bomb = gzip.compress(b"A" * (300 << 20), compresslevel=9)  # 300 MB of 'A' in ~300 KB
    with pytest.raises(VocabularyError, match="refusing"):
        load_path(ws.place("bomb.tiktoken", bomb))


def test_deeply_nested_json(ws):
    for name in ("tokenizer.json", "x.json", "encoder.json"):
        check_loads(ws.place(name, b'{"a":' * 50_000 + b"1" + b"}" * 50_000))
        check_loads(ws.place(name, b'{"model": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"))


# -- the other loaders: pre-token count tables and corpora ----------------------------------------


@pytest.fixture(scope="module")
def counts_tsv(tmp_path_factory) -> bytes:
    p = tmp_path_factory.mktemp("tsv") / "counts.tsv"
    counts = {b"hello": 3, b" world": 2, b"\x00\xff\\\t\n": 1, "日本".encode(): 7, b"\xe2\x80": 1}
    write_counts_tsv(counts, p, comment="fuzz seed")
    assert read_counts_tsv(p) == counts
    return p.read_bytes()


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 8), cut=st.floats(0, 1))
def test_counts_tsv(ws, counts_tsv, seed, n, cut):
    data = mutate(counts_tsv, random.Random(seed), n)
    path = ws.place("counts.tsv", data[: max(1, int(len(data) * cut))] if cut < 1 else data)
    try:
        counts = read_counts_tsv(path)
    except CountsFileError as exc:
        assert "counts.tsv" in str(exc)
        return
    assert all(isinstance(k, bytes) and k and isinstance(v, int) for k, v in counts.items())


@FUZZ
@given(
    data=st.binary(max_size=3000) | st.text(max_size=1000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    pattern=st.sampled_from([None, "gpt4", "o200k"]),
    block=st.sampled_from([1, 7, 1000]),
)
def test_corpus_files(ws, data, pattern, block):
    path = ws.place("corpus.txt", data)
    try:
        texts = list(iter_corpus(path, pattern, block_bytes=block))
    except CorpusError as exc:
        assert "corpus.txt" in str(exc)
        return
    assert "".join(texts).encode("utf-8") == data  # read in blocks, nothing lost or doubled


def test_small_tokenizer_seeds_are_valid(seeds, tmp_path):
    """The fuzz starts from files that do load (else it would only test error paths)."""
    tok = small_tokenizer()
    for name in SMALL:
        path = Workspace().place(target_name(name), seeds[name], partners_for(name, seeds))
        loaded = check_loads(path, fmt_of(name))
        assert loaded is not None and loaded.n_vocab >= 256 and len(loaded.merges) == len(tok.merges), name


def test_tokenizer_json_values_of_the_wrong_type(ws, seeds):
    """Found by the deep fuzz run: a null or list where a string is expected."""
    base = json.loads(seeds["tokenizer.json"])
    cases = []
    for path, value in (
        (("pre_tokenizer", "type"), None),
        (("pre_tokenizer", "type"), ["Sequence"]),
        (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{"type": None}, {"type": "ByteLevel"}]}),
        (("pre_tokenizer",), {"type": "Sequence", "pretokenizers": [{"type": "Split", "behavior": [1], "pattern": {"Regex": "a"}}, {"type": "ByteLevel"}]}),
        (("model", "merges"), [[1, 2], None]),
        (("model", "vocab"), ["a", "b"]),
        (("added_tokens",), [{"id": "x", "content": 5}]),
    ):
        obj = json.loads(json.dumps(base))
        cases.append(replace_at(obj, path, value))
    for obj in cases:
        check_loads(ws.place("tokenizer.json", json.dumps(obj).encode()), "huggingface")
