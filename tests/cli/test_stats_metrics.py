"""``bpeinspect-cli stats --metrics``: fertility, Rényi efficiency and utilization against
tokenization-scorer and a direct computation."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.samples import samples_dir

tokenization_scorer = pytest.importorskip("tokenization_scorer")
SAMPLES = samples_dir()


def test_json_metrics_agree_with_tokenization_scorer(capsys) -> None:
    files = [SAMPLES / f"{c}.txt" for c in ("en", "ru", "zh", "hi")]
    assert main(["stats", "--metrics", "-t", "cl100k_base", "-t", "o200k_base", "--json", *map(str, files)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 8
    for r in rows:
        tok = load_tokenizer(r["tokenizer"])
        text = (SAMPLES / r["source"].rsplit("/", 1)[-1]).read_text("utf-8")
        ids = tok.encode_ordinary(text)
        want = tokenization_scorer.score(" ".join(map(str, ids)), metric="renyi", power=2.5, vocab=tok.n_vocab)
        assert r["renyi_efficiency"] == pytest.approx(want, abs=1e-4)
        assert r["utilization"] == pytest.approx(len(set(ids)) / tok.n_vocab, abs=1e-4)
        assert r["tokens"] == len(ids) and r["n_vocab"] == tok.n_vocab
        if r["source"].endswith("zh.txt"):
            assert r["fertility"] is None and "spaces" in r["fertility_note"]
        else:
            assert r["fertility"] == pytest.approx(len(ids) / len(text.split()), abs=1e-4)


def test_csv_and_table_with_a_baseline(capsys) -> None:
    en, ja = str(SAMPLES / "en.txt"), str(SAMPLES / "ja.txt")
    assert main(["stats", "--metrics", "-t", "r50k_base", "--csv", "--baseline", en, en, ja]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["source"] for r in rows] == [en, ja]
    assert rows[0]["premium"] == "1.0" and float(rows[1]["premium"]) > 1
    assert rows[1]["fertility"] == "" and float(rows[0]["fertility"]) > 1
    assert main(["stats", "--metrics", "-t", "r50k_base", en, ja]) == 0
    out = capsys.readouterr().out
    assert "rényi 2.5" in out and "fertility is not defined" in out


def test_metrics_refuse_a_corpus(capsys) -> None:
    assert main(["stats", "--metrics", "--corpus", "fable"]) == 2
    assert "--metrics" in capsys.readouterr().err
