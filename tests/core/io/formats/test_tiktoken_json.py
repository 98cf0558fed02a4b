"""tiktoken's JSON encoders (npm ``tiktoken``, js-tiktoken): read exactly as tiktoken encodes."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats import detect_format, load_path
from bpeinspect.core.io.formats.tiktoken_json import parse_bpe_ranks
from tests.core.corpus import ADVERSARIAL, LONG_RUNS, PROSE, code_samples
from tests.reference import tiktoken_encoding


def encoder_object(name: str, per_line: int = 5000, **extra) -> dict:
    """The JSON encoder of a built-in, laid out as npm tiktoken's files are (lines of ranks)."""
    enc = tiktoken_encoding(name)
    tokens = [base64.b64encode(t).decode() for t, _ in sorted(enc._mergeable_ranks.items(), key=lambda x: x[1])]
    lines = [f"! {k} " + " ".join(tokens[k : k + per_line]) for k in range(0, len(tokens), per_line)]
    return {"pat_str": enc._pat_str, "special_tokens": enc._special_tokens, "bpe_ranks": "\n".join(lines), **extra}


def texts() -> list[str]:
    return PROSE + ADVERSARIAL + LONG_RUNS + code_samples(60_000) + ["<|endoftext|> a <|endofprompt|>"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_a_json_encoder_encodes_as_tiktoken_does(tmp_path, name):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(encoder_object(name)), encoding="utf-8")
    assert detect_format(p) == "tiktoken-json"
    tok, ref = load_path(p), tiktoken_encoding(name)
    assert tok.name == name and tok.special_tokens == ref._special_tokens
    for text in texts():
        assert tok.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all"), text[:60]


@pytest.mark.parametrize(
    ("wrapper", "suffix"),
    [("export default {};\n", ".js"), ("module.exports = {};", ".cjs"), ("  export default {}", ".js")],
)
def test_js_tiktoken_ranks_modules_load_as_their_object(tmp_path, wrapper, suffix):
    obj = encoder_object("cl100k_base")
    body = json.dumps(obj)
    p = tmp_path / f"cl100k_base{suffix}"
    p.write_text(wrapper.replace("{}", body), encoding="utf-8")
    assert detect_format(p) == "tiktoken-json"
    ref = tiktoken_encoding("cl100k_base")
    text = "Hello world, it's 2024!  \n\t<|endoftext|>"
    assert load_path(p).encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


def test_explicit_n_vocab_is_checked(tmp_path):
    p = tmp_path / "r50k_base.json"
    obj = encoder_object("r50k_base", explicit_n_vocab=50257)
    p.write_text(json.dumps(obj), encoding="utf-8")
    assert load_path(p).n_vocab == 50257
    p.write_text(json.dumps({**obj, "explicit_n_vocab": 50300}), encoding="utf-8")
    with pytest.raises(VocabularyError, match="explicit_n_vocab is 50300, but the file holds 50257 tokens"):
        load_path(p)


def test_rank_lines_start_where_they_say():
    assert parse_bpe_ranks("x 0 YQ== Yg==\n\ny 7 Yw==\n") == {b"a": 0, b"b": 1, b"c": 7}


@pytest.mark.parametrize(
    ("bpe_ranks", "message"),
    [
        ("! 0 YQ== not*base64", "line 1 holds 'not\\*base64', not base64"),
        ("! zero YQ==", "line 1 does not start '<x> <rank>'"),
        ("! 0 YQ== YQ==", "line 1 repeats the token"),
        ("", "holds no token"),
    ],
)
def test_damaged_rank_tables_are_refused_naming_the_line(tmp_path, bpe_ranks, message):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"pat_str": r"\S+", "special_tokens": {}, "bpe_ranks": bpe_ranks}), encoding="utf-8")
    with pytest.raises(VocabularyError, match=message) as err:
        load_path(p)
    assert str(p) in str(err.value)


def test_a_bad_pattern_is_refused_naming_the_file(tmp_path):
    obj = encoder_object("r50k_base", per_line=60000)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({**obj, "pat_str": "(unclosed"}), encoding="utf-8")
    with pytest.raises(VocabularyError, match="bad.json"):
        load_path(p)


def test_a_gzipped_encoder_opens(tmp_path):
    p = tmp_path / "cl100k_base.json.gz"
    p.write_bytes(gzip.compress(json.dumps(encoder_object("cl100k_base")).encode()))
    assert load_path(p).encode("hello world") == load_tokenizer("cl100k_base").encode("hello world")


def test_a_plain_object_that_merely_has_ranks_is_not_taken_for_one(tmp_path):
    p = Path(tmp_path) / "x.js"
    p.write_text("export default function () {}\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match="not a vocabulary file"):
        load_path(p)
