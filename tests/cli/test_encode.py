"""``bpeinspect-cli encode`` and ``decode``: ids, special-token modes, JSON and colour output, against the core."""

from __future__ import annotations

import json

from bpeinspect.cli import commands as cli
from bpeinspect.core import load_tokenizer
from tests.cli.conftest import TEXT, run

# -- subprocess ---------------------------------------------------------------------------------------


def test_encode_subprocess_stdin_matches_core():
    r = run("encode", "-t", "cl100k_base", stdin=TEXT)
    assert r.returncode == 0, r.stderr
    assert list(map(int, r.stdout.split())) == load_tokenizer("cl100k_base").encode_ordinary(TEXT)


def test_decode_subprocess_round_trip():
    ids = load_tokenizer("o200k_base").encode_ordinary(TEXT)
    r = run("decode", "-t", "o200k_base", *map(str, ids))
    assert r.returncode == 0 and r.stdout == TEXT
    r = run("decode", "-t", "o200k_base", "-", stdin=" ".join(map(str, ids)))
    assert r.stdout == TEXT


def test_encode_special_modes(text_file, capsys):
    tok = load_tokenizer("gpt2")
    assert cli.main(["encode", "-t", "gpt2", str(text_file)]) == 0
    assert list(map(int, capsys.readouterr().out.split())) == tok.encode_ordinary(TEXT)
    assert cli.main(["encode", "-t", "gpt2", "--special", "all", str(text_file)]) == 0
    ids = list(map(int, capsys.readouterr().out.split()))
    assert ids == tok.encode(TEXT, allowed_special="all") and 50256 in ids
    assert cli.main(["encode", "-t", "gpt2", "--special", "raise", str(text_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpeinspect-cli: error: ") and "<|endoftext|>" in err and err.count("\n") == 1


def test_encode_json_output(text_file, capsys):
    assert cli.main(["encode", "-t", "cl100k_base", "--output", "json", "--special", "all", str(text_file)]) == 0
    out = json.loads(capsys.readouterr().out)
    tok = load_tokenizer("cl100k_base")
    assert out["ids"] == tok.encode(TEXT, allowed_special="all")
    assert [t["id"] for t in out["tokens"]] == out["ids"]
    assert b"".join(bytes.fromhex(t["bytes"]) for t in out["tokens"]) == TEXT.encode()
    assert [t["special"] for t in out["tokens"]].count(True) == 1


def test_encode_color_output(text_file, capsys):
    assert cli.main(["encode", "-t", "gpt2", "--output", "color", str(text_file)]) == 0
    out = capsys.readouterr().out
    import re

    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert plain == TEXT  # the text itself, only decorated
    assert out.count("\x1b[48;5;") >= len(load_tokenizer("gpt2").encode_ordinary(TEXT)) - 3  # ~one colour per token
    # the emoji's bytes span several tokens but are coloured as one group: never cut mid-character
    assert "👍🏽" in plain
