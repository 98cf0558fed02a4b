"""``bpeinspect-cli vocab-use``: its JSON and CSV against tiktoken's encoding of the same texts."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.samples import samples_dir
from tests.reference import tiktoken_encoding


def test_json_over_a_corpus_agrees_with_tiktoken(capsys) -> None:
    assert main(["vocab-use", "-t", "cl100k_base", "--corpus", "fable", "--json", "--rank-frequency", "-j", "2"]) == 0
    (got,) = json.loads(capsys.readouterr().out)
    enc = tiktoken_encoding("cl100k_base")
    counts = Counter(i for t in fable_corpus() for i in enc.encode_ordinary(t.sample.read()))
    assert got["tokens"] == counts.total() and got["used"] == len(counts)
    assert got["vocab"] == len(enc.token_byte_values())  # every token but the special ones
    assert got["unused"] == got["vocab"] - len(counts)
    assert got["rank_frequency"] == sorted(counts.values(), reverse=True)
    assert sum(r["unused"] for r in got["unused_by_category"]) == got["unused"]
    assert got["unreachable"] is None


def test_files_csv_and_table(capsys) -> None:
    files = [str(samples_dir() / "en.txt"), str(samples_dir() / "ko.txt")]
    assert main(["vocab-use", "-t", "r50k_base", "--csv", "--rank-frequency", "-j", "1", *files]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    enc = tiktoken_encoding("r50k_base")
    counts = Counter(i for f in files for i in enc.encode_ordinary(open(f, encoding="utf-8").read()))
    assert [int(r["count"]) for r in rows] == sorted(counts.values(), reverse=True)
    assert [int(r["rank"]) for r in rows] == list(range(1, len(counts) + 1))
    assert main(["vocab-use", "-t", "r50k_base", "-j", "1", *files]) == 0
    out = capsys.readouterr().out
    assert "never used under r50k_base" in out and f"{len(counts):,}" in out


def test_bad_input_is_one_line(capsys) -> None:
    assert main(["vocab-use", "-t", "r50k_base"]) == 2
    assert "nothing to count" in capsys.readouterr().err
    assert main(["vocab-use", "-t", "r50k_base", "--corpus", "fable", "x.txt"]) == 2
    assert "--corpus" in capsys.readouterr().err


@pytest.mark.parametrize(
    "value, says",
    [("0", "must be at least 1, not 0"), ("-3", "must be at least 1, not -3"), ("two", "not a whole number: 'two'")],
)
def test_a_bad_process_count_is_refused_as_stats_and_count_refuse_it(capsys, value, says) -> None:
    commands = (["vocab-use", "-t", "r50k_base", "--corpus", "fable"], ["stats", "--corpus", "fable"], ["count", "x/"])
    for command in commands:
        with pytest.raises(SystemExit) as stop:
            main([*command, "-j", value])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert f"argument -j/--processes: {says}" in err and "Traceback" not in err
