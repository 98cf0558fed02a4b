"""GGUF: metadata-only reading, token types, llama.cpp pre-tokenizer names."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from bpeinspect.core import VocabularyError  # noqa: E402
from bpeinspect.core.errors import UnsupportedTokenizerError  # noqa: E402
from bpeinspect.core.io.formats import gguf as gguf_format  # noqa: E402
from bpeinspect.core.io.formats import load_path  # noqa: E402
from bpeinspect.core.io.formats.gguf_pre import KNOWN_PRE_NAMES, QWEN2, rule_for_pre  # noqa: E402


@pytest.fixture(scope="module")
def gpt2_meta(vocabs):
    path = vocabs / "gpt2.gguf"
    with open(path, "rb") as f:
        return gguf_format.read_metadata(f, path)


def write_gguf(path: Path, meta: dict, *, model: str = "gpt2", pre: str | None = "gpt-2", tensor_mb: int = 0,
               extra_types: dict[int, int] | None = None, extra_tokens: dict[str, int] | None = None) -> Path:
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_name("synthetic")
    w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    tokens = [t.decode("utf-8") for t in meta["tokenizer.ggml.tokens"]]
    types = list(meta["tokenizer.ggml.token_type"])
    for text, kind in (extra_tokens or {}).items():
        tokens.append(text)
        types.append(kind)
    w.add_token_list(tokens)
    for i, t in (extra_types or {}).items():
        types[i] = t
    w.add_token_types(types)
    w.add_token_merges([m.decode("utf-8") for m in meta["tokenizer.ggml.merges"]])
    if tensor_mb:
        w.add_tensor("weights", np.ones((tensor_mb, 1 << 18), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


class CountingFile:
    def __init__(self, f):
        self.f, self.read_bytes = f, 0

    def read(self, n=-1):
        data = self.f.read(n)
        self.read_bytes += len(data)
        return data

    def fileno(self):
        return self.f.fileno()


def test_tensor_data_is_never_read(gpt2_meta, tmp_path):
    path = write_gguf(tmp_path / "model.gguf", gpt2_meta, tensor_mb=16)  # 16 MB of weights after the metadata
    size = path.stat().st_size
    with open(path, "rb") as raw:
        counting = CountingFile(raw)
        meta = gguf_format.read_metadata(counting, path)
    assert meta["tokenizer.ggml.model"] == b"gpt2"
    assert size > 16 << 20
    # the metadata is ~1.7 MB; reading is buffered in 1 MB chunks, never the weights
    assert counting.read_bytes < 4 << 20


def test_multi_gigabyte_file_opens_from_its_metadata(gpt2_meta, tmp_path):
    path = write_gguf(tmp_path / "big.gguf", gpt2_meta, tensor_mb=1)
    with open(path, "r+b") as f:
        f.truncate(6 << 30)  # sparse: 6 GB without using the disk space
    tok = load_path(path)
    assert tok.encode("hello world") == [31373, 995]


def test_control_tokens_are_special_and_user_defined_ones_added(gpt2_meta, tmp_path):
    extra = {"<tool>": gguf.TokenType.USER_DEFINED, "<ctl>": gguf.TokenType.CONTROL, "<spare>": gguf.TokenType.NORMAL}
    path = write_gguf(tmp_path / "types.gguf", gpt2_meta, extra_types={50256: gguf.TokenType.CONTROL},
                      extra_tokens=extra)
    tok = load_path(path)
    assert tok.special_tokens == {"<|endoftext|>": 50256, "<ctl>": 50258}
    assert tok.added_tokens == {"<tool>": 50257}
    assert tok.token_id(b"<spare>") == 50259
    assert tok.encode("a<tool>b", allowed_special="all") == [64, 50257, 65]
    # llama.cpp matches user-defined tokens even with special parsing off
    assert tok.encode("a<tool>b") == tok.encode_ordinary("a<tool>b") == [64, 50257, 65]
    assert tok.encode("a<ctl>b", disallowed_special=()) != [64, 50258, 65]


def test_unknown_pre_is_refused_naming_it_and_loads_with_a_chosen_rule(gpt2_meta, tmp_path):
    path = write_gguf(tmp_path / "odd.gguf", gpt2_meta, pre="no-such-pre")
    with pytest.raises(VocabularyError, match="no-such-pre") as err:
        load_path(path)
    assert str(path) in str(err.value) and "--pattern" in str(err.value)
    tok = load_path(path, pattern="gpt4")
    assert tok.split_rule.name == "gpt4" and "pattern" in tok.assumed


def test_missing_pre_is_llama_cpps_default(gpt2_meta, tmp_path):
    meta = {k: v for k, v in gpt2_meta.items() if k != "tokenizer.ggml.pre"}
    tok = load_path(write_gguf(tmp_path / "nopre.gguf", meta, pre=None))
    assert tok.split_rule.name == "default" and "default" in tok.assumed["pattern"]
    # llama.cpp's default: punctuation runs, then GPT-2's split, digit runs, then digits by three
    assert tok.split_rule.pieces("a, b!! 12345") == ["a", ",", " b", "!!", " ", "123", "45"]


def test_not_byte_level_pre_is_refused(gpt2_meta, tmp_path):
    with pytest.raises(VocabularyError, match="not byte-level"):
        load_path(write_gguf(tmp_path / "ws.gguf", gpt2_meta, pre="whitespace"))


def test_empty_matches_cut_as_in_hugging_face():
    rule, _ = rule_for_pre("superbpe")
    assert rule.pieces("x 1234567 ab") == ["x ", "1", "234", "567", " ab"]
    rule, _ = rule_for_pre("afmoe")
    assert [p for p in rule.pieces("1234567") if p] == ["1", "234", "567"]


def test_non_bpe_gguf_is_refused(gpt2_meta, tmp_path):
    path = write_gguf(tmp_path / "t5.gguf", gpt2_meta, model="t5")
    with pytest.raises(UnsupportedTokenizerError, match="Unigram"):
        load_path(path)


def test_llama_gguf_without_scores_is_refused(gpt2_meta, tmp_path):
    path = write_gguf(tmp_path / "spm.gguf", gpt2_meta, model="llama")
    with pytest.raises(VocabularyError, match="scores"):
        load_path(path)


@pytest.mark.parametrize("name", KNOWN_PRE_NAMES)
def test_every_known_pre_name_compiles(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rule, _ = rule_for_pre(name)
    rule.validate()
    assert "".join(rule.pieces("Hello  world 123\n\n中文 it's")) in ("Hello  world 123\n\n中文 it's",)


def _hf_with_pre(vocabs, tmp_path, pre_tokenizer, ignore_merges=False):
    obj = json.loads((vocabs / "gpt2" / "tokenizer.json").read_text(encoding="utf-8"))
    obj["pre_tokenizer"] = pre_tokenizer
    obj["model"]["ignore_merges"] = ignore_merges
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _split(regex, behavior="Isolated"):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": False}


BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
BL_REGEX = {**BL, "use_regex": True}
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
# What each model's own tokenizer.json does, as Hugging Face pre-tokenizers.
HF_EQUIVALENTS = {
    "qwen2": ({"type": "Sequence", "pretokenizers": [_split(QWEN2), BL]}, False),
    "llama-bpe": ({"type": "Sequence", "pretokenizers": [_split(LLAMA3), BL]}, True),
    "starcoder": ({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": True}, BL_REGEX]}, False),
    "deepseek-coder": (
        {
            "type": "Sequence",
            "pretokenizers": [
                _split("[\r\n]"), _split(r"\s?\p{L}+"), _split(r"\s?\p{P}+"), _split("[一-龥ࠀ-一가-퟿]+"),
                _split(r"\p{N}"), BL,
            ],
        },
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(HF_EQUIVALENTS))
def test_pre_names_split_like_the_models_hf_tokenizer(gpt2_meta, vocabs, tmp_path, corpus, name):
    tokenizers = pytest.importorskip("tokenizers")
    pre, ignore = HF_EQUIVALENTS[name]
    hf = tokenizers.Tokenizer.from_file(str(_hf_with_pre(vocabs, tmp_path, pre, ignore)))
    tok = load_path(write_gguf(tmp_path / f"{name}.gguf", gpt2_meta, pre=name))
    assert tok.ignore_merges is ignore
    for text in corpus[1:]:
        if any("\ud800" <= c <= "\udfff" for c in text):
            continue
        if any(c in LLAMA_CPP_OWN_SPACES for c in text):
            continue  # llama.cpp, the reference for a GGUF file, splits these otherwise (see below)
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, text[:60]


# Non-ASCII whitespace that llama.cpp's split (a vertical tab to its std::regex) and Hugging
# Face's (Oniguruma) cut apart differently; tests/conformance/test_llama_cpp_vectors.py checks
# them against llama.cpp itself.
LLAMA_CPP_OWN_SPACES = "\u00a0\u2003"


def test_a_non_ascii_space_after_a_space_is_cut_as_llama_cpp_cuts_it(gpt2_meta, tmp_path):
    # ids from llama.cpp (0c1e570, vendored in llama-cpp-python 0.3.36) for this vocabulary with
    # the pre-tokenizer 'deepseek-coder': ' \xe2\x80' is one token, as llama.cpp's piece is " \u2003";
    # Hugging Face's split cuts ' ' and '\u2003' apart
    tok = load_path(write_gguf(tmp_path / "d.gguf", gpt2_meta, pre="deepseek-coder"))
    assert [tok.token_bytes(t) for t in tok.encode("}g \u2003\u0661")] == [b"}", b"g", b" \xe2\x80", b"\x83", b"\xd9", b"\xa1"]


def test_huge_claimed_counts_are_refused(tmp_path):
    import struct

    p = tmp_path / "bomb.gguf"
    key = b"tokenizer.ggml.tokens"
    p.write_bytes(
        b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
        + struct.pack("<IIQ", 9, 8, 1 << 60) + b"\0" * 64
    )
    with pytest.raises(VocabularyError, match="more than the file"):
        load_path(p)


def test_type_codes_match_the_gguf_package():
    assert gguf_format.GGUF_MAGIC == gguf.GGUF_MAGIC
    assert {t.name: int(t) for t in gguf_format.GGUFValueType} == {
        t.name: int(t) for t in gguf.GGUFValueType if t.name in gguf_format.GGUFValueType.__members__
    }
    assert {t.name: int(t) for t in gguf_format.TokenType} == {t.name: int(t) for t in gguf.TokenType}


def test_tokens_llama_cpp_makes_control_whatever_their_type(gpt2_meta, tmp_path):
    # llama.cpp makes "<|im_end|>" a control token though the file says normal (1), and
    # gpt-oss's "<|channel|>" a user-defined one though the file says control (3)
    path = write_gguf(tmp_path / "c.gguf", gpt2_meta, extra_tokens={"<|im_end|>": 1, "<|channel|>": 3})
    tok = load_path(path)
    n = len(gpt2_meta["tokenizer.ggml.tokens"])
    assert tok.special_tokens.get("<|im_end|>") == n and "<|im_end|>" not in tok.added_tokens
    assert tok.added_tokens.get("<|channel|>") == n + 1 and "<|channel|>" not in tok.special_tokens
    assert tok.encode("a<|im_end|>", allowed_special="all")[-1] == n
    assert tok.encode("a<|channel|>", disallowed_special=())[-1] == n + 1
