"""Training input: pre-token counting (fast splitters, cutting, processes), TSV tables, corpus files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import regex

from bpeinspect.core import TrainingRun, train_tokenizer
from bpeinspect.core.split.regex_tables import RegexTablesSplitter
from bpeinspect.core.split.rules import PRESETS, is_preset_pattern, resolve_rule
from bpeinspect.core.train.counts import (
    CountsFileError,
    count_pretokens,
    counting_splitter,
    escape_pretoken,
    iter_count_pretokens,
    read_counts_tsv,
    unescape_pretoken,
    write_counts_tsv,
)
from tests.core.corpus import ADVERSARIAL, NEW_IN_UNICODE_17, PROSE, code_samples, taylorswift

# -- counting -------------------------------------------------------------------------------------

def test_counts_are_in_first_seen_order() -> None:
    counts = count_pretokens(["b a b", "c a"], "gpt2")
    assert counts == {b"b": 1, b" a": 2, b" b": 1, b"c": 1}
    assert list(counts) == [b"b", b" a", b" b", b"c"]


def test_no_pattern_counts_documents() -> None:
    assert count_pretokens(["x y", "x y", ""], None) == {b"x y": 2}


def test_lone_surrogates_are_fixed_as_in_encoding() -> None:
    assert count_pretokens(["a\ud800b"], None) == {"a\ufffdb".encode(): 1}


def test_counting_in_processes_equals_counting_here(monkeypatch: pytest.MonkeyPatch) -> None:
    from bpeinspect.core.train import counts as pretoken_counts

    monkeypatch.setattr(pretoken_counts, "BATCH_CHARS", 50_000)  # many batches from a small corpus
    texts = code_samples(400_000) + [taylorswift()] + PROSE * 50
    here = count_pretokens(texts, "gpt4", processes=1)
    parallel = count_pretokens(texts, "gpt4", processes=2)
    assert parallel == here
    assert list(parallel) == list(here)  # same first-seen order
    custom = r"\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]+"
    assert count_pretokens(texts, custom, processes=3) == count_pretokens(texts, custom, processes=1)


@pytest.mark.parametrize("tie_break", ["first-seen", "hf"])
@pytest.mark.parametrize(
    "pattern",
    [*sorted(PRESETS), *(PRESETS[name].pattern for name in sorted(PRESETS)), r"\p{L}+", r"(\p{L}\p{L})\p{L}*",
     r"(?m)^\p{L}+|\d", r"[\p{L}\p{M}]+|\p{N}{1,3}| ?[\p{P}\p{S}]+|\s+", None],
)  # fmt: skip
def test_counting_document_by_document_anywhere_equals_counting_here(pattern, tie_break) -> None:
    # docs/cli.md's recipe for counting elsewhere (a Spark or Ray map over documents, then a sum)
    texts = [*PROSE, *ADVERSARIAL, NEW_IN_UNICODE_17, "ab    cd  12"]
    split = counting_splitter(pattern, tie_break)
    anywhere: dict[bytes, int] = {}
    for doc in texts:
        for piece in split(doc):
            anywhere[piece.encode("utf-8")] = anywhere.get(piece.encode("utf-8"), 0) + 1
    assert list(anywhere.items()) == list(count_pretokens(texts, pattern, tie_break=tie_break).items())


@pytest.mark.parametrize(
    "pattern",
    [*(PRESETS[name].pattern for name in sorted(PRESETS)), r"\p{L}+", r"(\p{L}\p{L})\p{L}*", r"(?m)^\p{L}+|\d",
     r"[\p{L}\p{M}]+|\p{N}{1,3}| ?[\p{P}\p{S}]+|\s+"],
)  # fmt: skip
def test_counting_splitter_is_minbpes_findall_and_hugging_faces_split(pattern: str) -> None:
    # the references themselves: minbpe counts regex.findall's strings (an empty one adds no pair),
    # Hugging Face's BpeTrainer the pieces of an isolated Split, run by its own engine
    tokenizers = pytest.importorskip("tokenizers")
    hf_split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    for doc in [*PROSE, *ADVERSARIAL, NEW_IN_UNICODE_17, "ab    cd  12"]:
        assert counting_splitter(pattern, "first-seen")(doc) == [p for p in regex.findall(pattern, doc) if p]
        if pattern != PRESETS["cl100k"].pattern:  # (see the next test)
            assert counting_splitter(pattern, "hf")(doc) == [p for p, _ in hf_split.pre_tokenize_str(doc)]


def test_cl100k_is_cut_as_tiktoken_cuts_it_in_both_modes() -> None:
    # the one preset Hugging Face's engine reads otherwise: Oniguruma takes \p{N}{1,3}+ as "one to
    # three digits, repeated", not as possessive; so it keeps a digit run whole, tiktoken does not
    tokenizers = pytest.importorskip("tokenizers")
    pattern = PRESETS["cl100k"].pattern
    hf_split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    assert [p for p, _ in hf_split.pre_tokenize_str("year 2024")] == ["year", " ", "2024"]
    assert counting_splitter(pattern, "hf")("year 2024") == counting_splitter("cl100k", "hf")("year 2024")
    assert counting_splitter("cl100k", "hf")("year 2024") == ["year", " ", "202", "4"]


def test_counting_follows_the_trainer() -> None:
    # minbpe's regex.findall drops what lies between matches; Hugging Face keeps it as pieces
    assert count_pretokens("ab    cd!", r"\p{L}+") == {b"ab": 1, b"cd": 1}
    assert count_pretokens("ab    cd!", r"\p{L}+", tie_break="hf") == {b"ab": 1, b"    ": 1, b"cd": 1, b"!": 1}
    assert count_pretokens("xyc xyd", r"(\p{L}\p{L})\p{L}*") == {b"xy": 2}
    # and the Unicode tables: U+058B is a letter to the regex module, unassigned to Hugging Face
    assert count_pretokens("a\u058bb", "o200k") == {"a\u058bb".encode(): 1}
    assert count_pretokens("a\u058bb", "o200k", tie_break="hf") == {b"a": 1, "\u058bb".encode(): 1}


def test_a_preset_pattern_given_as_a_string_splits_fast() -> None:
    from bpeinspect.core.split.fast import TiktokenSplitter

    for pattern in [PRESETS[name].pattern for name in PRESETS]:
        assert isinstance(counting_splitter(pattern, "hf").__self__, TiktokenSplitter)
        assert isinstance(counting_splitter(pattern, "first-seen").__self__, RegexTablesSplitter)
        assert is_preset_pattern(resolve_rule(pattern))


def test_a_worker_that_dies_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from bpeinspect.core.train import counts as pretoken_counts

    real_popen = subprocess.Popen

    def dying(args, **kwargs):
        return real_popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read(10); sys.exit(3)"], **kwargs)

    monkeypatch.setattr(subprocess, "Popen", dying)
    monkeypatch.setattr(pretoken_counts, "BATCH_CHARS", 20_000)
    texts = [taylorswift()] * 2 + PROSE
    assert list(count_pretokens(texts, "gpt4", processes=2).items()) == list(
        count_pretokens(texts, "gpt4", processes=1).items()
    )


def test_counting_reports_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    from bpeinspect.core.train import counts as pretoken_counts

    monkeypatch.setattr(pretoken_counts, "BATCH_CHARS", 20_000)
    items = list(iter_count_pretokens([taylorswift()] * 2, "gpt4", processes=1, interval=0.0))
    *reports, table = items
    assert isinstance(table, dict)
    assert reports[-1].documents == 2
    assert reports[-1].corpus_bytes == 2 * len(taylorswift().encode("utf-8"))
    sizes = [r.corpus_bytes for r in reports]
    assert sizes == sorted(sizes) and len(reports) > 3


# -- TSV ------------------------------------------------------------------------------------------

TRICKY = [b"plain", b"tab\there", b"new\nline\r\n", b"back\\slash", b"\\x41 literal", b"\x00\x1f\x7f",
          "Ünïcode 日本 🎉".encode(), b"\xff\xfe invalid", b"\xe6\x97", b"#hash", b" ", b"\\"]


def test_escaping_round_trips() -> None:
    for tok in TRICKY:
        field = escape_pretoken(tok)
        assert "\t" not in field and "\n" not in field and "\r" not in field
        assert unescape_pretoken(field) == tok
    assert escape_pretoken("日本".encode()) == "日本"  # readable


def test_tsv_round_trip(tmp_path: Path) -> None:
    counts = {tok: i + 1 for i, tok in enumerate(TRICKY)}
    path = tmp_path / "counts.tsv"
    write_counts_tsv(counts, path, comment="pattern gpt4")
    back = read_counts_tsv(path)
    assert back == counts and list(back) == list(counts)
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_tsv_lines_survive_any_line_splitting(tmp_path: Path) -> None:
    # str.splitlines also breaks at U+0085, U+2028 and U+2029 (and \v \f \x1c-\x1e)
    counts = {"a\u0085b".encode(): 1, "c\u2028d".encode(): 2, "e\u2029f".encode(): 3, b"\x0b\x0c\x1c\x1d\x1e": 4,
              "\u0080\u009f ok \u00a0".encode(): 5}  # fmt: skip
    path = tmp_path / "counts.tsv"
    write_counts_tsv(counts, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(counts)
    assert [unescape_pretoken(line.split("\t")[1]) for line in lines[1:]] == list(counts)
    assert read_counts_tsv(path) == counts
    assert escape_pretoken("a\u2028b".encode()) == "a\\u2028b"


def test_tsv_zero_counts_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "counts.tsv"
    path.write_text("0\tba\n1\tabba\n00\tzz\n", encoding="utf-8")
    assert read_counts_tsv(path) == {b"abba": 1}


def test_tsv_shards_add_up(tmp_path: Path) -> None:
    table = count_pretokens(PROSE + [taylorswift()], "gpt4")
    items = list(table.items())
    (tmp_path / "shards").mkdir()
    write_counts_tsv(dict(items[::2]), tmp_path / "shards" / "part-0000.tsv")
    write_counts_tsv(dict(items[1::2]), tmp_path / "shards" / "part-0001.tsv")
    write_counts_tsv({b" the": 5}, tmp_path / "shards" / "part-0002.tsv")
    back = read_counts_tsv(tmp_path / "shards")
    expected = dict(table)
    expected[b" the"] += 5
    assert back == expected


def test_training_from_a_tsv_equals_training_from_texts(tmp_path: Path) -> None:
    texts = PROSE + ADVERSARIAL + [taylorswift()]
    path = tmp_path / "counts.tsv"
    write_counts_tsv(count_pretokens(texts, "gpt4"), path)
    for tie_break in ("first-seen", "hf"):
        run = TrainingRun.from_counts(read_counts_tsv(path), 800, pattern="gpt4", tie_break=tie_break)
        list(run.reports())
        assert run.tokenizer().merges == train_tokenizer(texts, 800, pattern="gpt4", tie_break=tie_break).merges


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("12 no tab\n", "line 1: expected a count, a tab"),
        ("# ok\nx\tword\n", "line 2: expected a count"),
        ("3\t\n", "line 1: the pre-token is empty"),
        ("3\tbad\\q\n", "line 1: a backslash"),
    ],
)
def test_malformed_tsv(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CountsFileError, match=message) as info:
        read_counts_tsv(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_tsv_that_is_not_utf8_or_missing(tmp_path: Path) -> None:
    path = tmp_path / "latin1.tsv"
    path.write_bytes(b"3\tcaf\xe9\n")
    with pytest.raises(CountsFileError, match="not UTF-8"):
        read_counts_tsv(path)
    with pytest.raises(CountsFileError, match="cannot read"):
        read_counts_tsv(tmp_path / "missing.tsv")


def test_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "counts.tsv"
    write_counts_tsv({b"old": 1}, path)
    with pytest.raises(AttributeError):
        write_counts_tsv({b"new": 1, "not bytes": 2}, path)  # type: ignore[dict-item]
    assert read_counts_tsv(path) == {b"old": 1}
    assert sorted(os.listdir(tmp_path)) == ["counts.tsv"]
