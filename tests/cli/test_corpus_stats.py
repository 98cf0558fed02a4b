"""``bpeinspect-cli stats --corpus``: rows, sources that hold the counted text, filters, the summary."""

from __future__ import annotations

import csv
import io
import json
import socket
from pathlib import Path

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.cli.common import display_width
from bpeinspect.cli.corpus_stats import format_summary
from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.corpus import CACHE_ENV, fable_corpus, udhr_corpus
from bpeinspect.core.analysis.fairness import CorpusStats, FairnessSummary

OLD_FIELDS = {"tokenizer", "source", "tokens", "bytes", "chars"}


@pytest.fixture(autouse=True)
def cache_and_no_network(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))

    def refuse(*args, **kwargs):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return tmp_path / "cache"


def run_json(capsys, *argv: str) -> list[dict]:
    assert main(["stats", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_udhr_json_rows_have_the_old_fields_and_language_ones(capsys, cache_and_no_network):
    out = run_json(capsys, "--corpus", "udhr", "--script", "Ethiopic", "-t", "o200k_base", "-t", "gpt2")
    assert [(o["code"], o["tokenizer"]) for o in out] == [
        (c, t) for c in ("amh", "tir") for t in ("o200k_base", "gpt2")
    ]
    for o in out:
        assert OLD_FIELDS | {"language", "script", "premium", "code"} <= set(o)
        path = Path(o["source"])
        assert path.is_relative_to(cache_and_no_network)
        text = path.read_bytes().decode("utf-8")  # exactly the text counted
        assert o["tokens"] == len(load_tokenizer(o["tokenizer"]).encode_ordinary(text))
        assert (o["bytes"], o["chars"]) == (len(text.encode()), len(text))
        assert o["script"] == "Ethiopic" and isinstance(o["premium"], float)
    assert out[0]["language"] == "Amharic"


def test_default_udhr_is_every_complete_translation(capsys):
    out = run_json(capsys, "--corpus", "udhr", "-t", "cl100k_base")
    assert len(out) == 527
    eng = next(o for o in out if o["code"] == "eng")
    assert eng["premium"] == 1.0 and eng["language"] == "English"


def test_stage_and_region_filters(capsys):
    out = run_json(capsys, "--corpus", "udhr", "--stage", "1,3", "-t", "r50k_base")
    assert sorted(o["code"] for o in out) == sorted(t.code for t in udhr_corpus(stages={1, 3}))
    out = run_json(capsys, "--corpus", "udhr", "--region", "Oceania", "-t", "r50k_base")
    assert len(out) == 19 and all(o["premium"] for o in out)  # English filtered out, still the baseline


def test_fable_csv_has_language_columns(capsys):
    assert main(["stats", "--corpus", "fable", "-t", "o200k_base", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 27
    assert set(rows[0]) >= OLD_FIELDS | {"language", "script", "premium", "code"}
    ko = next(r for r in rows if r["code"] == "ko")
    assert (ko["language"], ko["script"], Path(ko["source"]).name) == ("Korean", "Hangul", "ko.txt")
    assert int(ko["tokens"]) == len(load_tokenizer("o200k_base").encode_ordinary(Path(ko["source"]).read_text("utf-8")))


def test_folder_corpus_has_no_code_field(capsys, tmp_path):
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "en.txt").write_text("one two three", "utf-8")
    (folder / "mine.txt").write_text("один два три", "utf-8")
    out = run_json(capsys, "--corpus", str(folder), "-t", "r50k_base")
    assert [(o["language"], o["script"], "code" in o) for o in out] == [("English", "Latin", False), ("mine", "Cyrillic", False)]
    assert out[1]["source"] == str(folder / "mine.txt") and out[0]["premium"] == 1.0


def test_baseline_code(capsys):
    out = run_json(capsys, "--corpus", "fable", "-t", "r50k_base", "--baseline", "de")
    assert next(o for o in out if o["code"] == "de")["premium"] == 1.0
    assert main(["stats", "--corpus", "fable", "--baseline", "zz"]) == 2
    assert "no such language code" in capsys.readouterr().err


def test_summary_table_json_and_csv(capsys):
    assert main(["stats", "--corpus", "fable", "--summary"]) == 0
    text = capsys.readouterr().out
    assert "median" in text and "most costly:" in text and "least costly:" in text
    assert "o200k_base" in text and "en (English)" in text
    out = run_json(capsys, "--corpus", "fable", "--summary", "-t", "cl100k_base")
    assert len(out) == 1 and out[0]["tokenizer"] == "cl100k_base" and out[0]["languages"] == 26
    assert set(out[0]) == {"tokenizer", "languages", "median", "p90", "max", "over_2", "over_4", "most_costly", "least_costly"}
    assert main(["stats", "--corpus", "fable", "--summary", "--csv", "-t", "gpt2"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["tokenizer"] == "gpt2" and rows[0]["most_costly"].startswith("ta:")


def test_table_output(capsys):
    assert main(["stats", "--corpus", "fable", "-t", "gpt2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["code", "language", "script", "tokenizer", "tokens", "bytes", "chars", "premium"]
    assert lines[-1].startswith("premium = tokens / tokens of en (English)")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--corpus", "fable", "x.txt"], "no PATHS"),
        (["--summary", "x.txt"], "go with --corpus"),
        (["--corpus", "fable", "--stage", "4"], "--corpus udhr only"),
        (["--corpus", "udhr", "--stage", "four"], "not a stage list"),
        (["--corpus", "udhr", "--script", "Klingon"], "no text in script Klingon"),
    ],
)
def test_usage_errors(capsys, argv, message):
    assert main(["stats", *argv]) == 2
    assert message in capsys.readouterr().err



def test_summary_csv_quotes_names_and_text_lines_up_wide_names():
    def summary(name: str) -> FairnessSummary:
        return FairnessSummary(name, 2, 1.5, 2.5, 3.0, 0.5, 0.0, (("ko", 3.0),), (("de", 1.1),))

    names = ['my,tok "v2"', "分词器", "gpt2"]
    summaries = [summary(n) for n in names]
    stats = CorpusStats(fable_corpus(), tuple(names), {}, baseline="en")
    rows = list(csv.reader(io.StringIO(format_summary(stats, summaries, csv_out=True))))
    assert [r[0] for r in rows] == ["tokenizer", *names] and all(len(r) == 9 for r in rows)
    assert rows[1][2:5] == ["1.5000", "2.5000", "3.0000"] and rows[1][7] == "ko:3.0000"
    lines = format_summary(stats, summaries).split("most costly:\n")[1].split("\n")[:3]
    assert all("Korean" in line and "3.00" in line for line in lines)
    # the languages start in one terminal column whatever the names' widths (CJK takes two columns)
    assert len({display_width(line[: line.index("ko")]) for line in lines}) == 1, lines
