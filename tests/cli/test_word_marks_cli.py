"""bpeinspect-cli on a model with word marks (CLIP's merge file): the mark is said, never printed as text."""

from __future__ import annotations

import json

import pytest

from bpeinspect.cli import commands as cli

MERGES = ["#version: 0.2", "h e", "l l", "ll o</w>", "he llo</w>", "c a", "ca t</w>"]


@pytest.fixture
def clip_file(tmp_path, monkeypatch):
    monkeypatch.setenv("BPEINSPECT_CONFIG_DIR", str(tmp_path / "cfg"))
    p = tmp_path / "bpe_simple_vocab_mini.txt"
    p.write_text('"bpe_simple_vocab_mini.txt' + "\n".join(MERGES) + "\n", encoding="utf-8")
    return p


def test_encode_json_says_which_tokens_end_a_word(clip_file, tmp_path, capsys):
    text = tmp_path / "t.txt"
    text.write_text("Hello cats", encoding="utf-8")
    assert cli.main(["encode", "-t", str(clip_file), "--output", "json", str(text)]) == 0
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    # "ca t</w>" needs t to end the word: in "cats" it does not
    assert [(t["text"], t["ends_word"]) for t in tokens] == [("hello", True), ("ca", False), ("t", False), ("s", True)]
    assert not any("</w>" in t["text"] for t in tokens)


def test_tree_and_info_show_the_marks(clip_file, capsys):
    assert cli.main(["tree", "-t", str(clip_file), "hello</w>"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[1] == "hello⌋" and "llo⌋" in out and "</w>" not in out
    assert cli.main(["info", str(clip_file)]) == 0
    out = capsys.readouterr().out
    assert "end-of-word suffix '</w>'" in out and "CLIP bpe_simple_vocab merges" in out
