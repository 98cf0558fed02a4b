"""bpeinspect-cli end to end: in-process ``main([...])`` and real subprocesses."""

from __future__ import annotations

import json
import types

import pytest

from bpeinspect.cli import commands as cli
from bpeinspect.core.io.formats import load_path
from tests.cli.conftest import run
from tests.paths import SHARED

# -- subprocess ---------------------------------------------------------------------------------------


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


def test_train_wiring_with_a_stand_in_trainer(tmp_path, monkeypatch, capsys):
    """The command's plumbing (arguments, progress, saving by suffix) with a stand-in for the
    trainer; the real trainer is tested below."""
    calls = {}

    def train_tokenizer(texts, vocab_size, *, pattern, special_tokens, tie_break, progress, should_stop):
        from bpeinspect.core import Tokenizer

        calls.update(
            texts=list(texts), vocab_size=vocab_size, pattern=pattern, special_tokens=special_tokens, tie_break=tie_break
        )
        for i in range(3):
            progress(types.SimpleNamespace(phase="merging", fraction=(i + 1) / 3, merges_done=i + 1, merges_total=3))
        return Tokenizer.from_merges([(104, 105)], pattern=pattern, special_tokens={s: 257 for s in special_tokens})

    from bpeinspect.cli import train as cli_train

    monkeypatch.setattr(cli_train, "train_tokenizer", train_tokenizer)
    src = tmp_path / "a.txt"
    src.write_text("hi hi hi", encoding="utf-8")
    out = tmp_path / "t.model"
    rc = cli.main(
        [
            "train",
            str(src),
            "--vocab-size",
            "257",
            "--pattern",
            "gpt2",
            "--special-token",
            "<eos>",
            "--tie-break",
            "hf",
            "-o",
            str(out),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    assert calls == {
        "texts": ["hi hi hi"],
        "vocab_size": 257,
        "pattern": "gpt2",
        "special_tokens": ["<eos>"],
        "tie_break": "hf",
    }
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
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text())[
        "taylorswift_regex_gpt4_1024"
    ]
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
