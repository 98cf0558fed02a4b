"""Bad input of every format: a VocabularyError (a ValueError) naming the file, never a crash."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, VocabularyError
from bpeinspect.core.io.formats import _common, load_path, save
from bpeinspect.core.io.formats._common import bytes_to_token

from .test_roundtrip import minbpe_reference

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


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


def _load_outcome(path: Path) -> None:
    """Load ``path``; anything but success or a VocabularyError naming the file fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            load_path(path)
    except VocabularyError as exc:
        assert str(path.parent) in str(exc) or path.name in str(exc), str(exc)


def _mutations(data: bytes) -> st.SearchStrategy[bytes]:
    n = len(data)
    truncate = st.integers(0, n).map(lambda k: data[:k])
    flip = st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 255)), min_size=1, max_size=8).map(
        lambda edits: _apply(data, edits)
    )
    splice = st.tuples(st.integers(0, n), st.integers(0, 64), st.binary(max_size=64)).map(
        lambda t: data[: t[0]] + t[2] + data[t[0] + t[1] :]
    )
    head = st.tuples(st.integers(0, min(n, 4096)), st.binary(max_size=32)).map(lambda t: data[: t[0]] + t[1])
    return st.one_of(truncate, flip, splice, head)


def _apply(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    b = bytearray(data)
    for i, v in edits:
        b[i] = v
    return bytes(b)


KINDS = ["tiktoken", "huggingface", "minbpe", "native", "gguf", "gpt2-encoder", "gpt2-merges"]


@pytest.mark.parametrize("kind", KINDS)
def test_mutated_files_fail_cleanly(small_files, tmp_path_factory, kind):
    path, data = small_files[kind]
    folder = tmp_path_factory.mktemp(f"fuzz-{kind}")
    target = folder / path.name
    if kind.startswith("gpt2"):  # keep the sibling intact
        sibling = "vocab.bpe" if kind == "gpt2-encoder" else "encoder.json"
        (folder / sibling).write_bytes((path.parent / sibling).read_bytes())

    @FUZZ
    @given(_mutations(data))
    def check(mutated: bytes) -> None:
        target.write_bytes(mutated)
        _load_outcome(target)

    check()


@pytest.mark.parametrize("name", ["x.tiktoken", "tokenizer.json", "x.model", "x.json", "x.gguf", "x.bin", "encoder.json"])
def test_random_bytes_fail_cleanly(tmp_path_factory, name):
    folder = tmp_path_factory.mktemp("random")

    @FUZZ
    @given(st.one_of(st.binary(min_size=0, max_size=600), st.sampled_from([b"GGUF", b"minbpe v1\n", b"{", b"#version"]).flatmap(
        lambda prefix: st.binary(max_size=300).map(lambda rest: prefix + rest))))
    def check(data: bytes) -> None:
        p = folder / name
        p.write_bytes(data)
        _load_outcome(p)

    check()


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


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, (*prefix, i))


def _replace(obj, path, value):
    if not path:
        return value
    import copy

    obj = copy.deepcopy(obj)
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


@pytest.mark.parametrize("kind", ["huggingface", "native"])
def test_json_structure_fuzz(small_files, kind):
    """Any subtree of a valid file replaced by any JSON value: loads or a VocabularyError."""
    import json as json_module

    from bpeinspect.core.io.formats import huggingface, native

    path, data = small_files[kind]
    obj = json_module.loads(data)
    # Keep the big lists short so that each example is cheap.
    if kind == "huggingface":
        obj["model"]["merges"] = obj["model"]["merges"][:20]
        obj["model"]["vocab"] = {k: v for k, v in obj["model"]["vocab"].items() if v < 276 or v >= 1024}
    else:
        obj["merges"] = obj["merges"][:20]
        obj["tokens"] = obj["tokens"][:276]
    loader = huggingface.from_dict if kind == "huggingface" else native.from_dict
    loader(obj, path)  # the trimmed file is still valid
    spots = list(_paths(obj))

    @settings(FUZZ, max_examples=200)
    @given(st.sampled_from(spots), JSON_VALUES)
    def check(spot, value):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loader(_replace(obj, spot, value), path)
        except VocabularyError as exc:
            assert str(path) in str(exc)

    check()


@pytest.mark.parametrize("rel", ["gpt2.tiktoken", "gpt2/tokenizer.json", "gpt2/encoder.json", "gpt2/vocab.bpe", "gpt2.gguf"])
def test_truncated_real_gpt2_files(vocabs, tmp_path_factory, rel):
    src = vocabs / rel
    data = src.read_bytes()
    folder = tmp_path_factory.mktemp("real")
    for sibling in ("encoder.json", "vocab.bpe"):
        if src.parent.name == "gpt2":
            (folder / sibling).write_bytes((src.parent / sibling).read_bytes())
    target = folder / src.name

    @settings(FUZZ, max_examples=8)
    @given(st.integers(1, len(data) - 1))
    def check(cut: int) -> None:
        target.write_bytes(data[:cut])
        _load_outcome(target)

    check()


def test_truncated_merges_file_warns(vocabs, tmp_path):
    (tmp_path / "encoder.json").write_bytes((vocabs / "gpt2" / "encoder.json").read_bytes())
    lines = (vocabs / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "vocab.bpe").write_text("".join(lines[:1001]), encoding="utf-8")
    with pytest.warns(UserWarning, match="49000 tokens of encoder.json are made by no merge"):
        tok = load_path(tmp_path)
    assert len(tok.merges) == 1000
