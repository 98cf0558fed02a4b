"""``bpeinspect-cli stats --metrics``: fertility, Rényi efficiency and utilization against
tokenization-scorer and a direct computation."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bpeinspect.cli.commands import main
from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.corpus import fable_corpus
from bpeinspect.core.analysis.measures import measure_text
from bpeinspect.core.analysis.samples import load_samples, samples_dir

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


def test_metrics_over_a_corpus_agree_with_the_core_and_take_premiums_against_english(capsys) -> None:
    assert main(["stats", "--metrics", "--corpus", "fable", "-t", "o200k_base", "--json"]) == 0
    rows = {r["source"]: r for r in json.loads(capsys.readouterr().out)}
    tok = load_tokenizer("o200k_base")
    texts = {s.name: s.read() for s in load_samples()}
    assert sorted(rows) == sorted(fable_corpus().codes) and len(rows) == 27
    for code, r in rows.items():
        want = measure_text(tok, texts[code])
        assert (r["tokens"], r["words"], r["distinct_tokens"]) == (want.tokens, want.words, want.distinct)
        assert r["renyi_efficiency"] == pytest.approx(want.renyi_efficiency, abs=1e-6)
        assert r["premium"] == pytest.approx(want.tokens / rows["en"]["tokens"], abs=1e-4)
    assert rows["zh"]["fertility"] is None and rows["th"]["fertility"] is None and rows["ja"]["fertility"] is None
    assert rows["de"]["fertility"] == pytest.approx(rows["de"]["tokens"] / rows["de"]["words"], abs=1e-6)
    assert main(["stats", "--metrics", "--corpus", "fable", "-t", "r50k_base", "--baseline", "xx"]) == 2
    assert "--baseline xx" in capsys.readouterr().err


def test_metrics_refuse_a_dataset_and_a_summary(capsys, tmp_path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "hi"}\n', encoding="utf-8")
    assert main(["stats", "--metrics", "--jsonl", str(data)]) == 2
    assert "--metrics" in capsys.readouterr().err
    assert main(["stats", "--metrics", "--corpus", "fable", "--summary"]) == 2
    assert "--summary" in capsys.readouterr().err
