""".tiktoken rank files: known files by sha256, caller-supplied settings for others."""

from __future__ import annotations

import pytest

from bpeinspect.core import PRESETS, load_tokenizer
from bpeinspect.core.io.formats import load_path, save, tiktoken


def test_known_hashes_cover_the_openai_and_open_model_files():
    names = {k.name for k in tiktoken.KNOWN.values()}
    assert names == {
        "r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3", "llama4", "qwen", "qwen3.5",
        "whisper-multilingual",
    }
    p50k = tiktoken.KNOWN["94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"]
    assert p50k.pattern == "r50k" and p50k.special_tokens(50281) == {"<|endoftext|>": 50256}
    llama4 = next(k for k in tiktoken.KNOWN.values() if k.name == "llama4").special_tokens(200000)
    assert len(llama4) == len(set(llama4.values())) == 2048 and llama4["<|eot|>"] == 200008
    whisper = next(k for k in tiktoken.KNOWN.values() if k.name == "whisper-multilingual").special_tokens(50257)
    assert whisper["<|startoftranscript|>"] == 50258 and whisper["<|0.00|>"] == 50364 and len(whisper) == 1608


def test_known_cl100k_file_gets_its_pattern_and_specials(tmp_path):
    ref = load_tokenizer("cl100k_base")
    p = save(ref, tmp_path / "anything.tiktoken")
    tok = load_path(p)
    assert tok.name == "anything" and "cl100k_base" in tok.source  # a built-in's copy goes by its own name
    assert tok.special_tokens == ref.special_tokens
    assert tok.split_rule is PRESETS["cl100k"]


def test_unknown_file_defaults_and_overrides(tmp_path):
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    p = tmp_path / "mine.tiktoken"
    p.write_bytes(b"".join(__import__("base64").b64encode(t) + f" {i}\n".encode() for t, i in ranks.items()))
    tok = load_path(p)
    assert tok.name == "mine" and tok.special_tokens == {}
    assert tok.split_rule is PRESETS[tiktoken.DEFAULT_PATTERN]
    assert "cl100k" in tok.assumed["pattern"] and "special_tokens" in tok.assumed
    assert tok.encode("abc abc") == [257, 32, 257]
    tok2 = load_path(p, pattern=None, special_tokens={"<eos>": 258}, name="x")
    assert tok2.name == "x" and tok2.special_tokens == {"<eos>": 258}
    tok3 = load_path(p, pattern=r"\S+|\s+")
    assert tok3.encode("abc abc") == [257, 32, 257]
    assert tok3.split_rule.pattern == r"\S+|\s+"


def test_bad_lines_name_the_line(tmp_path):
    p = tmp_path / "bad.tiktoken"
    p.write_bytes(b"YQ== 0\nYg== one\n")
    with pytest.raises(ValueError, match="line 2"):
        load_path(p)
    p.write_bytes(b"YQ== 0\n")
    with pytest.raises(ValueError, match="single bytes"):
        load_path(p)


def test_known_file_says_what_was_inferred(tmp_path):
    tok = load_path(save(load_tokenizer("cl100k_base"), tmp_path / "a.tiktoken"))
    assert not tok.assumed and "sha256" in tok.inferred["pattern"]


def test_empty_token_line_is_the_empty_token(tmp_path):
    # Whisper's multilingual.tiktoken writes an empty token as "=" (tiktoken accepts it)
    p = tmp_path / "w.tiktoken"
    lines = [__import__("base64").b64encode(bytes([b])) + f" {b}".encode() for b in range(256)]
    p.write_bytes(b"\n".join([*lines, b"= 256", b"YWI= 257"]) + b"\n")
    tok = load_path(p)
    assert tok.token_bytes(256) == b"" and tok.encode("ab") == [257] and tok.decode([256, 97]) == "a"
