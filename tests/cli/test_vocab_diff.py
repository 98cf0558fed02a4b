"""``bpeinspect-cli vocab-diff``: its JSON, CSV and lists against tiktoken's own tables."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.core.analysis.token_categories import token_category
from tests.paths import SHARED
from tests.reference import tiktoken_encoding


def _tables(a: str, b: str):
    ea, eb = tiktoken_encoding(a), tiktoken_encoding(b)
    return ea, eb, set(ea.token_byte_values()), set(eb.token_byte_values())


@pytest.mark.parametrize(("a", "b"), [("cl100k_base", "o200k_base"), ("r50k_base", "cl100k_base")])
def test_json_agrees_with_tiktoken_tables(a: str, b: str, capsys) -> None:
    assert main(["vocab-diff", a, b, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ea, eb, ta, tb = _tables(a, b)
    shared = ta & tb
    assert got["shared"] == len(shared)
    assert got["only_a"] == len(ta - tb) and got["only_b"] == len(tb - ta)
    assert got["same_id"] == sum(1 for t in shared if ea.encode_single_token(t) == eb.encode_single_token(t))
    for side, enc, tokens in (("a", ea, ta), ("b", eb, tb)):
        assert got[side]["tokens"] == len(tokens) and got[side]["n_vocab"] == enc.n_vocab
        assert got[side]["specials"] == len(enc.special_tokens_set)
        want: dict[str, int] = {}
        for t in tokens:
            want[token_category(t)] = want.get(token_category(t), 0) + 1
        assert got[side]["composition"] == want
    assert got["shared_specials"] == sorted(ea.special_tokens_set & eb.special_tokens_set)


def test_id_prefix_is_where_tiktokens_tables_first_differ(capsys) -> None:
    assert main(["vocab-diff", "cl100k_base", "o200k_base", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["id_prefix"]
    ea, eb = tiktoken_encoding("cl100k_base"), tiktoken_encoding("o200k_base")
    n = 0
    while ea.decode_single_token_bytes(n) == eb.decode_single_token_bytes(n):
        n += 1
    assert got == n


def test_r50k_and_gpt2s_tokenizer_json_are_one_vocabulary(capsys) -> None:
    gpt2_json = str(SHARED / "vocabs" / "gpt2" / "tokenizer.json")
    assert main(["vocab-diff", "r50k_base", gpt2_json, "--json", "--merges"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["id_prefix"] == got["same_id"] == got["shared"] == 50256
    assert got["only_a"] == got["only_b"] == 0
    assert got["merges"] == {"merges_a": 50000, "merges_b": 50000, "shared": 50000, "same_rank": 50000}


@pytest.mark.parametrize("which", ["only-a", "only-b", "shared"])
def test_csv_lists_are_tiktokens_sets_with_their_ids(which: str, capsys) -> None:
    assert main(["vocab-diff", "r50k_base", "cl100k_base", "--list", which, "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    ea, eb, ta, tb = _tables("r50k_base", "cl100k_base")
    want = {"only-a": ta - tb, "only-b": tb - ta, "shared": ta & tb}[which]
    got = {bytes.fromhex(r["hex"]) for r in rows}
    assert got == want and len(rows) == len(want)
    for r in rows[:: max(1, len(rows) // 500)]:
        t = bytes.fromhex(r["hex"])
        assert r["id_a"] == (str(ea.encode_single_token(t)) if t in ta else "")
        assert r["id_b"] == (str(eb.encode_single_token(t)) if t in tb else "")
        assert int(r["bytes"]) == len(t)


def test_json_list_and_table(capsys) -> None:
    assert main(["vocab-diff", "r50k_base", "cl100k_base", "--list", "only-a", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = [r["id_a"] for r in rows]
    assert ids == sorted(ids) and all(r["id_b"] is None for r in rows)
    assert main(["vocab-diff", "r50k_base", "cl100k_base"]) == 0
    out = capsys.readouterr().out
    assert "shared" in out and "composition" in out and "Latin" in out


def test_csv_composition_rows_sum_to_the_vocabulary(capsys) -> None:
    assert main(["vocab-diff", "r50k_base", "cl100k_base", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["category", "r50k_base", "cl100k_base"]
    assert sum(int(r[1]) for r in rows[1:]) == 50256
    assert sum(int(r[2]) for r in rows[1:]) == 100256


def test_bad_input_is_one_line(capsys) -> None:
    assert main(["vocab-diff", "r50k_base", "no-such-vocabulary"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-vocabulary" in err
    assert main(["vocab-diff", "r50k_base", "cl100k_base", "--list", "shared", "--merges"]) == 2
    assert "--merges" in capsys.readouterr().err
