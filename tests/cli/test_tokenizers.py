"""``bpeinspect-cli tree`` and ``info``: the merge tree of a token or a text, and what a vocabulary holds."""

from __future__ import annotations

from bpeinspect.cli import commands as cli
from bpeinspect.core import load_tokenizer


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
