"""``bpeinspect-cli convert``: every format written loads back, and a rank file takes the split rule given."""

from __future__ import annotations

import json

from bpeinspect.cli import commands as cli
from bpeinspect.core import load_tokenizer
from bpeinspect.core.io.formats import load_path
from tests.paths import SHARED


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


def test_convert_prints_what_the_file_does_not_keep_as_a_warning_line(tmp_path, capsys):
    from bpeinspect.core import Tokenizer
    from bpeinspect.core.io.formats import save

    src = save(Tokenizer.from_merges([(104, 105)], pattern="gpt4", name="tiny"), tmp_path / "tiny.model")
    capsys.readouterr()
    assert cli.main(["convert", str(src), str(tmp_path / "tiny.tiktoken")]) == 0
    warning, done = capsys.readouterr().err.splitlines()
    assert warning.startswith(f"bpeinspect-cli: warning: {tmp_path / 'tiny.tiktoken'}: ") and "rank rule" in warning
    assert done.startswith("wrote ") and "tiny.tiktoken" in done
    assert cli.main(["convert", str(src), str(tmp_path / "tiny.json")]) == 0
    assert "warning" not in capsys.readouterr().err  # bpeinspect JSON keeps everything
