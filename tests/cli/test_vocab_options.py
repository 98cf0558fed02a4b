"""``--pattern`` and ``--special-token`` on every command that loads a tokenizer, and a warning for a default."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.core.io.formats._common import bytes_to_token


def _odd_rank_file(tmp_path: Path) -> Path:
    src = tmp_path / "odd.tiktoken"
    ranks = [bytes([b]) for b in range(256)] + [b"hi", b" hi"]
    src.write_bytes(b"".join(__import__("base64").b64encode(t) + f" {i}\n".encode() for i, t in enumerate(ranks)))
    return src


@pytest.mark.parametrize("command", ["encode", "decode", "tree", "info", "stats"])
def test_every_tokenizer_command_takes_pattern_and_special_tokens(command, tmp_path, capsys):
    src = _odd_rank_file(tmp_path)
    text = tmp_path / "t.txt"
    text.write_text("hi<|end|> hi", encoding="utf-8")
    spec = ["-t", str(src)] if command != "info" else [str(src)]
    rest = {
        "encode": ["--special", "all", str(text)],
        "decode": ["104"],
        "tree": ["hi"],
        "info": [],
        "stats": [str(text)],
    }
    args = [command, *spec, "--pattern", "gpt2", "--special-token", "<|end|>", *rest[command]]
    assert cli.main(args) == 0, capsys.readouterr().err
    out, err = capsys.readouterr()
    assert "warning" not in err  # the user chose both settings
    if command == "encode":
        assert out.split() == ["256", "258", "257"]
    if command == "info":
        assert "chosen by the user" in out and "258  <|end|>" in out


def test_a_default_pattern_is_a_visible_warning(tmp_path, capsys):
    src = _odd_rank_file(tmp_path)
    assert cli.main(["decode", "-t", str(src), "104"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "cl100k" in err and "--pattern" in err


def test_a_load_note_is_a_warning_line_not_a_python_warning(tmp_path, capsys):
    encoder = {bytes_to_token(bytes([b])): b for b in range(256)} | {"hi": 256, "ho": 257}
    (tmp_path / "encoder.json").write_text(json.dumps(encoder), encoding="utf-8")
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\nh i\n", encoding="utf-8")  # nothing makes "ho"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning through the process-wide machinery would fail the command
        assert cli.main(["decode", "-t", str(tmp_path), "256"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "hi"
    assert f"bpeinspect-cli: warning: {tmp_path / 'vocab.bpe'}: 1 tokens of encoder.json are made by no merge" in err
