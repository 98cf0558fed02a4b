"""``bpeinspect-cli stats``: output formats against direct core counts."""

from __future__ import annotations

import argparse
import csv
import io
import json

import pytest

from bpeinspect.cli import stats as cli_stats
from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.samples import SampleError, samples_dir

SAMPLES = samples_dir()
CODE = SAMPLES / "code"


def run(argv: list[str]) -> int:
    """Parse with the subcommand registered on a bare parser, as cli.py does."""
    parser = argparse.ArgumentParser(prog="bpeinspect-cli")
    cli_stats.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def direct(spec: str, path) -> int:
    return len(load_tokenizer(spec).encode(path.read_text("utf-8"), disallowed_special=()))


def test_json_has_one_object_per_tokenizer_and_file(capsys):
    files = [SAMPLES / "en.txt", SAMPLES / "ko.txt"]
    assert run(["stats", "-t", "gpt2", "-t", "o200k_base", "--json", *map(str, files)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(o["source"], o["tokenizer"]) for o in out] == [
        (str(f), spec) for f in files for spec in ("gpt2", "o200k_base")
    ]
    for o in out:
        path = SAMPLES / o["source"].rsplit("/", 1)[-1]
        text = path.read_text("utf-8")
        assert o["tokens"] == direct(o["tokenizer"], path)
        assert (o["bytes"], o["chars"]) == (len(text.encode()), len(text))
        assert o["bytes_per_token"] == pytest.approx(o["bytes"] / o["tokens"], abs=1e-4)
        assert isinstance(o["tokens"], int)


def test_folder_expands_to_its_files(capsys):
    assert run(["stats", "-t", "cl100k_base", "--json", str(CODE)]) == 0
    out = json.loads(capsys.readouterr().out)
    files = sorted(p for p in CODE.iterdir() if p.is_file())
    assert [o["source"] for o in out] == [str(p) for p in files]
    assert all(o["tokens"] == direct("cl100k_base", p) for o, p in zip(out, files))
    by_name = {o["source"].rsplit("/", 1)[-1]: o["tokens"] for o in out}
    assert by_name["mills.yaml"] < by_name["mills.json"]


def test_default_tokenizers_and_baseline_premium(capsys):
    assert run(["stats", "--json", "--baseline", str(SAMPLES / "en.txt"), str(SAMPLES / "ko.txt")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["tokenizer"] for o in out] == list(cli_stats.DEFAULT_TOKENIZERS)
    for o in out:
        expected = direct(o["tokenizer"], SAMPLES / "ko.txt") / direct(o["tokenizer"], SAMPLES / "en.txt")
        assert o["premium"] == pytest.approx(expected, abs=1e-4)
    assert out[0]["premium"] > 4  # Korean costs GPT-2 several times the English


def test_csv(capsys):
    assert (
        run(["stats", "--csv", "-t", "r50k_base", "--baseline", str(SAMPLES / "en.txt"), str(SAMPLES / "en.txt")]) == 0
    )
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1
    assert rows[0]["tokenizer"] == "r50k_base"
    assert int(rows[0]["tokens"]) == direct("r50k_base", SAMPLES / "en.txt")
    assert float(rows[0]["premium"]) == 1.0


def test_readable_table(capsys):
    assert run(["stats", "-t", "gpt2", str(CODE / "mill.py"), str(CODE / "mill_tabs.py")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["source", "tokenizer", "tokens", "bytes", "chars", "bytes/tok", "chars/tok"]
    assert lines[1].split()[:3] == [str(CODE / "mill.py"), "gpt2", str(direct("gpt2", CODE / "mill.py"))]
    assert len(lines) == 3


def test_stdin_and_bundled_samples(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO("héllo wörld".encode())))  # read as bytes, capped
    assert run(["stats", "-t", "o200k_base", "--json", "--samples", "languages", "-"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out) == len([p for p in SAMPLES.glob("*.txt") if p.stem != "welcome"]) + 1
    assert out[-1]["source"] == "-"
    assert out[-1]["tokens"] == len(load_tokenizer("o200k_base").encode("héllo wörld"))
    assert (out[-1]["bytes"], out[-1]["chars"]) == (13, 11)


def test_user_errors_are_value_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe oops")
    with pytest.raises(SampleError, match="bad.txt: not UTF-8"):
        run(["stats", "-t", "gpt2", str(bad)])
    with pytest.raises(ValueError, match="missing.txt: no such file"):
        run(["stats", str(tmp_path / "missing.txt")])
    with pytest.raises(ValueError, match="nothing to measure"):
        run(["stats"])
    with pytest.raises(ValueError, match="no built-in tokenizer"):
        run(["stats", "-t", "no-such-tokenizer", str(SAMPLES / "en.txt")])
    with pytest.raises(ValueError, match="baseline is not a file"):
        run(["stats", "--baseline", str(tmp_path), str(SAMPLES / "en.txt")])


def test_json_and_csv_are_exclusive():
    with pytest.raises(SystemExit):
        run(["stats", "--json", "--csv", str(SAMPLES / "en.txt")])


def test_through_the_main_cli(capsys):
    from bpeinspect.cli import commands as cli

    try:
        status = cli.main(["stats", "-t", "gpt2", "--json", str(SAMPLES / "en.txt")])
    except SystemExit:  # argparse: invalid choice 'stats'
        pytest.skip("stats is not wired into bpeinspect.cli.commands yet")
    assert status == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["tokens"] == direct("gpt2", SAMPLES / "en.txt")
    assert cli.main(["stats", str(SAMPLES / "nope.txt")]) == 2
    assert "nope.txt" in capsys.readouterr().err
