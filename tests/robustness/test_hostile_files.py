"""Hostile and careless vocabulary files.

Each refusal is a :class:`VocabularyError` naming the file; nothing takes long or much memory
(the limits are made small with monkeypatch, big files are sparse).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import struct
import sys
import threading
from pathlib import Path

import pytest

from bpeinspect.core import Tokenizer, limits, load_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io import discover
from bpeinspect.core.io.formats import load_path, save
from bpeinspect.core.merges import iter_tree

from .seeds import small_tokenizer

pytestmark = pytest.mark.timeout(60)


def rank_lines(n_extra: int = 0, *, extra: dict[bytes, int] | None = None) -> bytes:
    """A .tiktoken file: the 256 bytes, ``n_extra`` two-byte tokens, then ``extra``."""
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]
    for k in range(n_extra):
        lines.append(base64.b64encode(bytes([65 + k // 256 % 26, k % 256, 97 + k // 6656])) + b" %d" % (256 + k))
    for tok, rank in (extra or {}).items():
        lines.append(base64.b64encode(tok) + b" %d" % rank)
    return b"\n".join(lines) + b"\n"


def refused(path: Path, *words: str) -> str:
    with pytest.raises(VocabularyError) as info:
        load_path(path)
    message = str(info.value)
    assert str(path) in message, f"the error does not name the file: {message}"
    for w in words:
        assert w in message, message
    assert "\n" not in message
    return message


# -- a .tiktoken(.gz) with too many tokens, or huge ones ------------------------------------------


def test_rank_file_with_more_tokens_than_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_IDS", 1000)
    p = tmp_path / "bomb.tiktoken.gz"
    p.write_bytes(gzip.compress(rank_lines(1200)))
    refused(p, "1,000")


def test_rank_file_with_a_huge_token(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_TOKEN_BYTES", 64)
    p = tmp_path / "long.tiktoken"
    p.write_bytes(rank_lines(extra={b"x" * 100: 256}))
    refused(p, "100 bytes", "64")


def test_out_of_memory_is_a_one_line_error_naming_the_file(tmp_path, monkeypatch):
    from bpeinspect.core.io.formats import tiktoken

    def no_memory(*_a, **_k):
        raise MemoryError

    p = tmp_path / "r.tiktoken"
    p.write_bytes(rank_lines())
    monkeypatch.setattr(tiktoken, "parse_tiktoken_ranks", no_memory)
    refused(p, "memory")


# -- a GGUF whose token count matches its (sparse) size --------------------------------------------


def gguf_claiming(path: Path, count: int, size: int, key: str = "tokenizer.ggml.tokens") -> Path:
    """A GGUF header whose string array ``key`` claims ``count`` entries; the file is made
    ``size`` bytes long without writing them (a sparse file of zeros: empty strings)."""

    def s(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 2)
    head += s("tokenizer.ggml.model") + struct.pack("<I", 8) + s("gpt2")
    head += s(key) + struct.pack("<I", 9) + struct.pack("<IQ", 8, count)
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def test_gguf_claiming_more_tokens_than_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_IDS", 1000)
    p = gguf_claiming(tmp_path / "sparse.gguf", 2_000_000, 16_001_000)
    refused(p, "2,000,000", "1,000")


def test_gguf_array_longer_than_any_real_one(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_METADATA_ITEMS", 1000)
    p = gguf_claiming(tmp_path / "sparse.gguf", 2_000_000, 16_001_000, key="general.junk")
    refused(p, "2,000,000", "1,000")


# -- ranks far beyond the token count ----------------------------------------------------------------


@pytest.mark.parametrize("rank", [10**12, 3_000_000])
def test_rank_far_beyond_the_vocabulary_is_refused_at_load(tmp_path, rank):
    p = tmp_path / "far.tiktoken"
    p.write_bytes(rank_lines(extra={b"far": rank}))
    refused(p, f"{rank:,}", f"{limits.MAX_IDS:,}")


def test_the_tokenizer_refuses_negative_and_huge_ids():
    ranks = {bytes([b]): b for b in range(256)}
    for bad in (-1, limits.MAX_IDS, 10**12):
        with pytest.raises(ValueError, match="id"):
            Tokenizer({**ranks, b"ab": bad}, pattern=None)
        with pytest.raises(ValueError, match="id"):
            Tokenizer(ranks, pattern=None, special_tokens={"<s>": bad})


# -- a FIFO or a process substitution is read once ---------------------------------------------------


def feed(write_end, data: bytes) -> threading.Thread:
    def run() -> None:
        with open(write_end, "wb") as f:
            f.write(data)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.timeout(20)
def test_fifo_as_vocabulary(tmp_path):
    fifo = tmp_path / "vocab.fifo"
    os.mkfifo(fifo)
    data = rank_lines(300)
    t = feed(fifo, data)
    tok = load_path(fifo)
    t.join(5)
    assert tok.n_vocab == 556


@pytest.mark.timeout(20)
def test_process_substitution_is_read_once(tmp_path):
    data = rank_lines(900)
    assert len(data) > 8192  # more than the head that detection looks at
    r, w = os.pipe()
    try:
        t = feed(w, data)
        tok = load_tokenizer(f"/dev/fd/{r}")
        t.join(5)
    finally:
        os.close(r)
    assert tok.n_vocab == 1156


# -- every member of a multi-member .gz --------------------------------------------------------------


def test_multi_member_gzip(tmp_path):
    data = rank_lines(100)
    cut = data.index(b"\n", len(data) // 2) + 1
    p = tmp_path / "two.tiktoken.gz"
    p.write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    assert load_path(p).n_vocab == 356


# -- an empty special token, a special id of -1 ------------------------------------------------------


def native_with_specials(tmp_path: Path, specials: dict) -> Path:
    p = tmp_path / "small.json"
    save(small_tokenizer(), p)
    obj = json.loads(p.read_text(encoding="utf-8"))
    obj["special_tokens"] = specials
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


@pytest.mark.parametrize("specials", [{"": 400}, {"<|x|>": -1}])
def test_native_file_with_an_empty_special_or_negative_id(tmp_path, specials):
    refused(native_with_specials(tmp_path, specials))


def test_the_tokenizer_refuses_empty_special_and_added_tokens():
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(ValueError, match="empty"):
        Tokenizer(ranks, pattern=None, special_tokens={"": 300})
    with pytest.raises(ValueError, match="empty"):
        Tokenizer(ranks, pattern=None, added_tokens={"": 300})


# -- every walk of a merge tree is iterative --------------------------------------------------------


def chain_tokenizer(depth: int) -> Tokenizer:
    """Tokens a, aa, aaa, ...: each merge adds one 'a' to the one before (a chain ``depth`` deep)."""
    merges = [(97, 97)] + [(256 + k, 97) for k in range(depth - 1)]
    return Tokenizer.from_merges(merges, pattern=None)


def test_a_merge_chain_deeper_than_the_recursion_limit():
    from bpeinspect.cli.tokenizers import tree_lines

    depth = sys.getrecursionlimit() + 500
    tok = chain_tokenizer(depth)
    top = tok.token_id(b"a" * (depth + 1))
    node = tok.merge_graph.tree(top)
    assert node.depth() == depth
    assert node.leaves() == [97] * (depth + 1)
    assert len(list(iter_tree(node))) == 2 * depth + 1
    assert len(tree_lines(node, max_depth=depth)) == 2 * depth + 1
    lines = tree_lines(node)
    assert len(lines) < 500 and any("more levels not drawn" in line for line in lines)
    assert repr(node)  # no recursive repr
    assert node != tok.merge_graph.tree(top) and hash(node) is not None  # identity: no deep comparison


def test_a_merge_that_refers_to_itself():
    from bpeinspect.cli.tokenizers import tree_lines

    # the empty token (HF, GPT-2 and GGUF files can hold one): "" + "a" makes "a" again
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b""] = 256
    ranks[b"ab"] = 257
    tok = Tokenizer(ranks, pattern=None, merges=[(256, 97), (97, 98)])
    node = tok.merge_graph.tree(97)
    assert node.depth() <= 2
    assert list(iter_tree(node))
    assert any("itself" in line or "above" in line for line in tree_lines(node))
    assert tok.merge_graph.tree(257).leaves()[-1] == 98


def test_special_and_added_tokens_longer_than_the_recursion_limit():
    # the literal matcher's trie is as deep as the longest token, and as nested as the longest
    # chain of tokens each a prefix of the next: both were walked recursively
    depth = sys.getrecursionlimit() + 500
    long = "<" + "x" * depth + ">"
    ranks = {bytes([b]): b for b in range(256)}
    tok = Tokenizer(ranks, pattern=None, special_tokens={long: 256}, added_tokens={"b" * k: 256 + k for k in range(1, depth)})
    assert tok.encode("a" + long + "b" * (depth + 3), allowed_special="all") == [97, 256, 256 + depth - 1, 256 + 4]
    assert tok.encode(long[:-1]) == [60] + [120] * depth


# -- errors name the file ----------------------------------------------------------------------------


def test_a_normalizer_nested_deeper_than_python_recurses(tmp_path):
    # valid JSON (json parses it), but the normalizer's steps are read recursively
    p = tmp_path / "tokenizer.json"
    save(small_tokenizer(), p)
    obj = json.loads(p.read_text(encoding="utf-8"))
    norm: dict = {"type": "NFC"}
    for _ in range(sys.getrecursionlimit() // 2 - 50):
        norm = {"type": "Sequence", "normalizers": [norm]}
    obj["normalizer"] = norm
    p.write_text(json.dumps(obj), encoding="utf-8")
    message = refused(p, "nested too deeply")
    assert "RecursionError" not in message and "recursion" not in message


def test_a_5000_digit_id_in_a_tokenizer_json(tmp_path):
    p = tmp_path / "tokenizer.json"
    save(small_tokenizer(), p)
    text = p.read_text(encoding="utf-8")
    p.write_text(text.replace(": 300", ": " + "9" * 5000, 1), encoding="utf-8")
    refused(p)


def test_a_superscript_digit_in_a_minbpe_model(tmp_path):
    p = tmp_path / "small.model"
    save(small_tokenizer(), p)
    lines = p.read_text(encoding="utf-8").split("\n")
    lines[-2] = lines[-2].split()[0] + " ²"
    p.write_text("\n".join(lines), encoding="utf-8")
    refused(p)


# -- the catalog and links ---------------------------------------------------------------------------


@pytest.fixture
def catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    return tmp_path


@pytest.mark.parametrize("content", ["{}", '{"model": []}', '{"model": {"vocab": 3}}', "[]", '{"model": {"type": 5}}'])
def test_list_skips_odd_tokenizer_json_in_the_hf_cache(catalog, content):
    snap = catalog / "hub" / "models--x--y" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "tokenizer.json").write_text(content, encoding="utf-8")
    assert not [e for e in discover.discover() if e.source == "Hugging Face cache"]


def test_list_survives_a_deeply_nested_recent_json(catalog):
    cfg = catalog / "cfg"
    cfg.mkdir()
    (cfg / "recent.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert [e.source for e in discover.discover(include_caches=False)].count("recent") == 0


def test_dangling_link_and_link_loop(tmp_path):
    dangling = tmp_path / "gone.tiktoken"
    dangling.symlink_to(tmp_path / "nowhere.tiktoken")
    loop = tmp_path / "loop.tiktoken"
    loop.symlink_to(loop)
    for path, words in ((dangling, ("link", "nowhere.tiktoken")), (loop, ("link", "loop"))):
        with pytest.raises(VocabularyError) as info:
            load_tokenizer(str(path))
        message = str(info.value)
        assert str(path) in message and "no built-in" not in message, message
        for w in words:
            assert w in message, message


# -- corpus files (the app's training reads them itself) ------------------------------------


def test_corpus_devices_are_refused_and_whole_reads_capped(tmp_path, monkeypatch):
    from bpeinspect.core.train.corpus import CorpusError, iter_corpus

    if os.path.exists("/dev/zero"):
        link = tmp_path / "zero.txt"
        link.symlink_to("/dev/zero")
        with pytest.raises(CorpusError, match="not a regular file"):
            list(iter_corpus([link], "gpt4"))
    monkeypatch.setattr(limits, "MAX_INPUT", 1000)
    big = tmp_path / "big.txt"
    big.write_text("word " * 1000, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"big\.txt: more than 1,000 bytes"):
        list(iter_corpus([big], r"\w+|\s+"))  # a custom pattern: read whole
    assert "".join(iter_corpus([big], "gpt4")) == "word " * 1000  # a preset: read in blocks, no cap


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_dataset_that_never_ends_is_refused(tmp_path):
    from bpeinspect.core.dataset.records import DatasetError, read_records

    link = tmp_path / "zero.jsonl"  # dropped on the window, it goes to the dataset panel
    link.symlink_to("/dev/zero")
    with pytest.raises(DatasetError, match="zero.jsonl: not a regular file"):
        read_records(link)
