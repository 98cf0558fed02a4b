"""bpeinspect-cli end to end: in-process ``main([...])`` and real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.cli.common import ProgressBar
from bpeinspect.core import load_tokenizer
from bpeinspect.core.io.formats import load_path
from tests.paths import ROOT, SHARED

TEXT = "Hello world! It's <|endoftext|> 1234 naïve 中文 👍🏽\n"


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


def run(*args: str, stdin: str | None = None, env_dir: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "bpeinspect.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "in.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


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


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("encode", "-t", "no-such-tokenizer"), "no built-in tokenizer or file"),
        (("decode", "-t", "gpt2", "99999999"), "unknown token id"),
        (("decode", "-t", "gpt2", "12", "x"), "not a token id"),
        (("encode", "--bogus"), "unrecognized arguments"),
        (("encode", "-t", "gpt2", "/nonexistent/file.txt"), "No such file"),
        (("tree", "-t", "gpt2", ""), "encodes to no tokens"),
        (("convert", "gpt2", "/tmp/out.gguf"), "GGUF"),
        ((), "required"),
    ],
)
def test_errors_are_one_line_exit_2(args, fragment):
    r = run(*args, stdin="")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("bpeinspect-cli: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in r.stderr


def test_damaged_vocabulary_file_is_an_error_line(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "WordPiece"}}')
    r = run("info", str(bad))
    assert r.returncode == 2 and "WordPiece" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("command", ["list", "encode", "decode", "train", "convert", "tree", "info"])
def test_help_everywhere(command):
    r = run(command, "--help")
    assert r.returncode == 0 and "usage: bpeinspect-cli " + command in r.stdout


# -- in process ---------------------------------------------------------------------------------------


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


def test_tree_by_text_and_id(capsys):
    assert cli.main(["tree", "-t", "gpt2", " hello"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("23748 ␣hello")
    assert any("└── 78 o" in line for line in out)
    leaves = [line for line in out if "(rank" not in line]
    assert len(leaves) == len(" hello")  # every byte at the bottom
    assert cli.main(["tree", "-t", "gpt2", "23748"]) == 0
    assert capsys.readouterr().out.splitlines() == out
    assert cli.main(["tree", "-t", "gpt2", "␣hello"]) == 0
    assert capsys.readouterr().out.splitlines() == out


def test_info(vocabs_dir, capsys):
    assert cli.main(["info", str(vocabs_dir / "gpt2.gguf")]) == 0
    out = capsys.readouterr().out
    assert "50257 ids" in out and "<|endoftext|>" in out and "pair rule" in out
    assert "file format:    GGUF" in out
    hist = [line.split() for line in out.split("token lengths (bytes):\n")[1].splitlines()]
    assert sum(int(row[1]) for row in hist) == 50256
    assert hist[0][:2] == ["1", "256"]
    assert len(hist) <= 16  # bucketed, not one line per length


def test_tree_of_a_text_that_is_several_tokens(capsys):
    # the README's own example; " tokenization" is " token" + "ization"
    assert cli.main(["tree", "-t", "cl100k_base", " tokenization"]) == 0
    out = capsys.readouterr().out
    tok = load_tokenizer("cl100k_base")
    ids = tok.encode(" tokenization")
    assert len(ids) == 2 and out.startswith("␣tokenization is 2 tokens under cl100k_base: ␣token ization")
    for i in ids:
        assert any(line.startswith(f"{i} ") for line in out.splitlines())


def test_convert_every_format_and_list_remembers(vocabs_dir, tmp_path, capsys):
    ref = load_tokenizer("gpt2")
    text = (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")[:20000]
    for out in ("g.tiktoken", "tokenizer.json", "g.json", "encoder.json"):
        assert cli.main(["convert", str(vocabs_dir / "gpt2" / "tokenizer.json"), str(tmp_path / out)]) == 0
        assert load_path(tmp_path / out).encode_ordinary(text) == ref.encode_ordinary(text)
    capsys.readouterr()
    assert cli.main(["list", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["source"] for e in entries][:3] == ["built-in"] * 3
    recent = [e for e in entries if e["source"] == "recent"]
    assert recent and recent[0]["spec"] == str((vocabs_dir / "gpt2" / "tokenizer.json").resolve())
    assert cli.main(["list"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["NAME", "SOURCE", "VOCAB", "SPEC"] and "cl100k_base" in table[2]


def test_convert_with_pattern_for_unknown_tiktoken(tmp_path, capsys):
    src = tmp_path / "odd.tiktoken"
    src.write_bytes(b"".join(__import__("base64").b64encode(bytes([b])) + f" {b}\n".encode() for b in range(256)))
    assert cli.main(["convert", str(src), str(tmp_path / "o.json"), "--pattern", "gpt2"]) == 0
    assert load_path(tmp_path / "o.json").split_rule.name == "gpt2"
    assert cli.main(["convert", "gpt2", str(tmp_path / "plain.txt"), "--format", "tiktoken"]) == 0
    plain = load_path(tmp_path / "plain.txt")
    assert plain.name == "plain" and "r50k_base" in plain.source  # a built-in's copy goes by its own name


def test_train_wiring_with_a_stand_in_trainer(tmp_path, monkeypatch, capsys):
    """The command's plumbing (arguments, progress, saving by suffix) with a stand-in for the
    trainer; the real trainer is tested below."""
    calls = {}

    def train_tokenizer(texts, vocab_size, *, pattern, special_tokens, tie_break, progress, should_stop):
        from bpeinspect.core import Tokenizer

        calls.update(texts=texts, vocab_size=vocab_size, pattern=pattern, special_tokens=special_tokens,
                     tie_break=tie_break)
        for i in range(3):
            progress(types.SimpleNamespace(phase="merging", fraction=(i + 1) / 3, merges_done=i + 1, merges_total=3))
        return Tokenizer.from_merges([(104, 105)], pattern=pattern, special_tokens={s: 257 for s in special_tokens})

    from bpeinspect.cli import train as cli_train

    monkeypatch.setattr(cli_train, "train_tokenizer", train_tokenizer)
    src = tmp_path / "a.txt"
    src.write_text("hi hi hi", encoding="utf-8")
    out = tmp_path / "t.model"
    rc = cli.main(["train", str(src), "--vocab-size", "257", "--pattern", "gpt2", "--special-token", "<eos>",
                   "--tie-break", "hf", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert calls == {"texts": ["hi hi hi"], "vocab_size": 257, "pattern": "gpt2", "special_tokens": ["<eos>"],
                     "tie_break": "hf"}
    assert load_path(out).encode("hihi<eos>", allowed_special="all") == [256, 256, 257]
    assert (tmp_path / "t.vocab").is_file()
    assert cli.main(["train", str(src), "--vocab-size", "100", "-o", str(out)]) == 2
    assert cli.main(["train", str(src), "--vocab-size", "300", "-o", str(tmp_path / "t.gguf")]) == 2


def test_train_with_the_real_trainer(tmp_path, capsys):
    pytest.importorskip("bpeinspect.core.train.run", reason="the trainer (branch 'train') has not been merged yet")
    text = (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")
    src = tmp_path / "ts.txt"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "ts.json"
    assert cli.main(["train", str(src), "--vocab-size", "300", "-o", str(out)]) == 0
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text())["taylorswift_regex_gpt4_1024"]
    tok = load_path(out)
    assert tok.merges == [(a, b) for a, b, _ in ref["merges"][:44]]
    assert tok.training is not None
    assert "ran out of pairs" not in capsys.readouterr().err


def test_train_says_when_the_corpus_runs_out_of_pairs(tmp_path, capsys):
    src = tmp_path / "small.txt"
    src.write_text("abab cdcd abab", encoding="utf-8")
    out = tmp_path / "small.json"
    assert cli.main(["train", str(src), "--vocab-size", "1000", "-o", str(out)]) == 0
    n = load_path(out).n_vocab
    assert n < 1000
    assert f"the corpus ran out of pairs: {n} tokens, fewer than the 1000 asked for" in capsys.readouterr().err


def test_progress_bar_draws_on_a_terminal():
    import io

    buf = io.StringIO()
    bar = ProgressBar("training", stream=buf, force=True)
    for i in range(0, 11):
        bar(i, 10)
    bar.close()
    assert "100%" in buf.getvalue() and buf.getvalue().endswith("\n") and "\r" in buf.getvalue()
    buf = io.StringIO()
    bar = ProgressBar("training", stream=buf, force=True)
    bar(types.SimpleNamespace(phase="counting", fraction=1.0, merges_done=0, merges_total=8))
    bar(types.SimpleNamespace(phase="merging", fraction=0.5, merges_done=4, merges_total=8))
    bar.close()
    assert "training (counting)" in buf.getvalue() and " 50% 4/8 merges" in buf.getvalue()


@pytest.fixture
def vocabs_dir():
    p = SHARED / "vocabs"
    if not p.is_dir():
        pytest.skip("shared vocabularies not available")
    return p


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
    rest = {"encode": ["--special", "all", str(text)], "decode": ["104"], "tree": ["hi"], "info": [], "stats": [str(text)]}
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
