"""Statistics against direct core counts, streaming exactness, and the headline facts of the samples."""

from __future__ import annotations

import csv
import io
import json
import tomllib
import xml.etree.ElementTree as ET

import pytest

from bpeinspect.core import Cancelled, load_tokenizer
from bpeinspect.core.analysis.compare import (
    agreement,
    boundary_agreement,
    shared_tokens,
    token_boundaries,
    vocab_overlap,
)
from bpeinspect.core.analysis.samples import (
    LANGUAGES,
    Sample,
    SampleError,
    code_samples,
    expand_paths,
    load_samples,
    samples_dir,
)
from bpeinspect.core.analysis.stats import (
    CSV_COLUMNS,
    StatsTable,
    TextStats,
    compute_stats,
    iter_chunks,
    iter_counts,
    text_stats,
)
from tests.paths import SHARED

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]

TAYLOR = SHARED / "corpora" / "taylorswift.txt"


@pytest.fixture(scope="module")
def toks():
    return {n: load_tokenizer(n) for n in NAMES}


@pytest.fixture(scope="module")
def table(toks):
    return compute_stats(toks, load_samples(), baseline="en")


@pytest.fixture(scope="module")
def code_table(toks):
    return compute_stats(toks, code_samples())


def direct(tok, text):
    return len(tok.encode(text, disallowed_special=()))


# -- the samples themselves -----------------------------------------------------------------


def test_bundled_languages_cover_many_scripts():
    samples = load_samples()
    assert len(samples) >= 20
    assert all(s.name in LANGUAGES for s in samples)
    assert len({LANGUAGES[s.name][1] for s in samples}) >= 10
    assert "welcome" not in {s.name for s in samples}


def test_bundled_languages_are_parallel():
    """Every translation has the English passage's shape: a title and six paragraphs."""
    english = next(s for s in load_samples() if s.name == "en").read()
    shape = [p.count("\n") for p in english.strip().split("\n\n")]
    for s in load_samples():
        text = s.read()
        paragraphs = text.strip().split("\n\n")
        assert len(paragraphs) == 7, s.name
        assert [p.count("\n") for p in paragraphs] == shape, s.name
        assert 500 <= len(text.encode("utf-8")) <= 4000, s.name
        assert 250 <= len(text) <= 1300, s.name


def test_code_samples_hold_the_same_data():
    folder = samples_dir() / "code"
    data = json.loads((folder / "mills.json").read_text("utf-8"))
    assert json.loads((folder / "mills.min.json").read_text("utf-8")) == data
    assert tomllib.loads((folder / "mills.toml").read_text("utf-8")) == data
    rows = list(csv.DictReader(io.StringIO((folder / "mills.csv").read_text("utf-8"))))
    assert [r["name"] for r in rows] == [m["name"] for m in data["mills"]]
    assert [float(r["lat"]) for r in rows] == [m["location"]["lat"] for m in data["mills"]]
    root = ET.fromstring((folder / "mills.xml").read_bytes())
    assert [int(m.findtext("built")) for m in root] == [m["built"] for m in data["mills"]]
    assert [[p.text for p in m.iter("product")] for m in root] == [m["products"] for m in data["mills"]]
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load((folder / "mills.yaml").read_text("utf-8")) == data


def test_tab_and_space_programs_differ_only_in_indentation():
    folder = samples_dir() / "code"
    spaces = (folder / "mill.py").read_text("utf-8").splitlines()
    tabs = (folder / "mill_tabs.py").read_text("utf-8").splitlines()
    assert len(spaces) == len(tabs)
    deep = 0
    for s, t in zip(spaces, tabs):
        depth = len(t) - len(t.lstrip("\t"))
        assert s == " " * 4 * depth + t[depth:]
        deep = max(deep, depth)
    assert deep >= 4


# -- counts equal the core's own ------------------------------------------------------------


def test_table_equals_direct_counts(toks, table):
    samples = {s.name: s.read() for s in load_samples()}
    assert table.tokenizers == NAMES
    assert table.sources == list(samples)
    for name, tok in toks.items():
        base = direct(tok, samples["en"])
        for src, text in samples.items():
            row = table.get(name, src)
            assert (row.tokens, row.bytes, row.chars) == (direct(tok, text), len(text.encode()), len(text))
            assert row.premium == pytest.approx(row.tokens / base)
            assert row.bytes_per_token == pytest.approx(len(text.encode()) / row.tokens)
            assert row.chars_per_token == pytest.approx(len(text) / row.tokens)
            assert text_stats(tok, text, source=src) == type(row)(name, src, row.tokens, row.bytes, row.chars)


def test_code_table_equals_direct_counts(toks, code_table):
    for s in code_samples():
        for name, tok in toks.items():
            assert code_table.get(name, s.name).tokens == direct(tok, s.read())
            assert code_table.get(name, s.name).premium is None


def test_special_token_text_is_counted_as_text(toks):
    tok = toks["cl100k_base"]
    text = "before <|endoftext|> after"
    assert text_stats(tok, text).tokens == len(tok.encode_ordinary(text)) > 3


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunk", [1, 13, 1000])
def test_streaming_counts_are_exact(toks, name, chunk):
    tok = toks[name]
    text = "".join(s.read() for s in load_samples() + code_samples())
    if chunk == 1:
        text = text[:6000]
    chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    *_, last = iter_counts(tok, chunks)
    assert last == (len(tok.encode_ordinary(text)), len(text), len(text.encode()))


def test_streaming_a_file_with_tiny_reads_splits_utf8_safely(toks, tmp_path):
    text = "".join(s.read() for s in load_samples()) * 3
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    seen = []
    t = compute_stats(
        {"o": toks["o200k_base"]}, [Sample("big", path)], chunk_bytes=997, progress=lambda d, n: seen.append((d, n))
    )
    assert t.rows[0].tokens == len(toks["o200k_base"].encode_ordinary(text))
    assert t.rows[0].bytes == path.stat().st_size
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


@pytest.mark.skipif(not TAYLOR.exists(), reason="shared corpus not available")
def test_streaming_a_long_english_file(toks):
    text = TAYLOR.read_text("utf-8")
    t = compute_stats(toks, [Sample("taylor", TAYLOR)], chunk_bytes=20000)
    for name, tok in toks.items():
        assert t.get(name, "taylor").tokens == len(tok.encode_ordinary(text))


def test_cancel_stops_between_chunks(toks, tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("word " * 50000, encoding="utf-8")
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(Cancelled):
        compute_stats({"r": toks["r50k_base"]}, [Sample("x", path)], chunk_bytes=1000, should_stop=stop)
    assert len(calls) == 3


def test_bad_input_is_a_clear_error(toks, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 ok".encode("latin-1"))
    with pytest.raises(SampleError, match=r"latin1\.txt: not UTF-8"):
        compute_stats({"r": toks["r50k_base"]}, [Sample("latin1", bad)])
    with pytest.raises(SampleError, match="not one of the samples"):
        compute_stats({"r": toks["r50k_base"]}, load_samples(), baseline="xx")
    with pytest.raises(SampleError, match="no such file"):
        expand_paths([tmp_path / "missing.txt"])


def test_csv_and_records(table):
    rows = list(csv.DictReader(io.StringIO(table.to_csv())))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == len(table.rows)
    for rec, row in zip(rows, table.rows):
        assert (rec["tokenizer"], rec["source"], int(rec["tokens"])) == (row.tokenizer, row.source, row.tokens)
        assert float(rec["premium"]) == pytest.approx(row.premium, abs=1e-4)
    bare = StatsTable([TextStats("t", "s", 2, 6, 6)])
    assert bare.to_csv().splitlines()[1] == "t,s,2,6,6,3.0,3.0,"  # no premium without a baseline


# -- the facts users come to see ------------------------------------------------------------


def test_korean_costs_gpt2_several_times_english(table):
    ko, en = table.get("r50k_base", "ko"), table.get("r50k_base", "en")
    assert ko.tokens >= 4 * en.tokens
    assert ko.premium >= 4
    # newer vocabularies narrow the gap
    assert (
        table.get("r50k_base", "ko").premium
        > table.get("cl100k_base", "ko").premium
        > table.get("o200k_base", "ko").premium
    )


def test_english_is_the_cheapest_language_for_every_tokenizer(table):
    for name in NAMES:
        rows = [r for r in table.rows if r.tokenizer == name]
        assert min(rows, key=lambda r: r.tokens).source == "en"
        assert all(r.premium >= 1 for r in rows)


def test_yaml_costs_fewer_tokens_than_json(code_table):
    for name in NAMES:
        assert code_table.get(name, "mills.yaml").tokens < code_table.get(name, "mills.json").tokens
        assert code_table.get(name, "mills.min.json").tokens < code_table.get(name, "mills.json").tokens


def test_gpt4_handles_python_indentation_better_than_gpt2(code_table):
    def space_cost(name):
        spaces, tabs = code_table.get(name, "mill.py").tokens, code_table.get(name, "mill_tabs.py").tokens
        return spaces / tabs

    assert code_table.get("cl100k_base", "mill.py").tokens < code_table.get("r50k_base", "mill.py").tokens
    assert space_cost("r50k_base") > 1.2  # GPT-2 pays a token per space of indentation
    assert space_cost("cl100k_base") < 1.05  # runs of spaces are single tokens


# -- agreement and overlap --------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ko", "zh", "hi"])
def test_token_boundaries_match_the_encoding_offsets(toks, lang):
    text = next(s for s in load_samples() if s.name == lang).read()
    for tok in toks.values():
        enc = tok.encode_with_offsets(text, allowed_special=())
        assert token_boundaries(tok, text) == set(enc.byte_ends[:-1])


def test_agreement_definitions():
    ag = agreement({1, 2, 3, 4}, {3, 4, 5})
    assert (ag.shared, ag.only_a, ag.only_b) == (2, 2, 1)
    assert ag.jaccard == pytest.approx(2 / 5)
    assert ag.f1 == pytest.approx(4 / 7)
    assert ag.precision == pytest.approx(2 / 3)
    assert ag.recall == pytest.approx(2 / 4)
    assert agreement(set(), set()).f1 == 1.0


def test_boundary_agreement_on_samples(toks):
    en = next(s for s in load_samples() if s.name == "en").read()
    assert boundary_agreement(toks["r50k_base"], toks["r50k_base"], en).f1 == 1.0
    ko = next(s for s in load_samples() if s.name == "ko").read()
    en_ag = boundary_agreement(toks["r50k_base"], toks["o200k_base"], en)
    ko_ag = boundary_agreement(toks["r50k_base"], toks["o200k_base"], ko)
    assert en_ag.f1 > 0.9  # English words are single tokens in both
    assert ko_ag.f1 < en_ag.f1
    swapped = boundary_agreement(toks["o200k_base"], toks["r50k_base"], ko)
    assert (swapped.only_a, swapped.only_b, swapped.f1) == (ko_ag.only_b, ko_ag.only_a, ko_ag.f1)


def test_vocab_overlap(toks):
    r50, cl100 = toks["r50k_base"], toks["cl100k_base"]
    ov = vocab_overlap(r50, cl100)
    assert ov.size_a == sum(not r50.is_special(i) for i in r50.ids())
    assert ov.size_b == sum(not cl100.is_special(i) for i in cl100.ids())
    assert vocab_overlap(cl100, r50).shared == ov.shared
    shared = shared_tokens(r50, cl100)
    assert len(shared) == ov.shared
    assert all(
        cl100.token_id(t) is not None and r50.token_id(t) is not None for t in shared[:: max(1, len(shared) // 500)]
    )
    assert all(bytes([b]) in shared for b in range(256))
    assert 0 < ov.jaccard < 1 and ov.fraction_of_a > ov.fraction_of_b


# -- user folders -----------------------------------------------------------------------------


def test_user_folder(tmp_path):
    (tmp_path / "b.txt").write_text("zwei", encoding="utf-8")
    (tmp_path / "a.md").write_text("one", encoding="utf-8")
    (tmp_path / ".hidden").write_text("x", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    samples = load_samples(tmp_path)
    assert [(s.name, s.read()) for s in samples] == [("a", "one"), ("b", "zwei")]
    assert [p.name for p in expand_paths([tmp_path, tmp_path / "b.txt"])] == ["a.md", "b.txt", "b.txt"]
    with pytest.raises(SampleError, match="not a folder"):
        load_samples(tmp_path / "b.txt")
    with pytest.raises(SampleError, match="no sample files"):
        load_samples(tmp_path / "sub")


def test_a_builtin_goes_to_a_pool_child_packed():
    """A child gets a shipped vocabulary's ranks as flat bytes, not a pickled dict (which would
    hold the GIL ~80 ms here): a pickle of a few objects, whatever the vocabulary's size."""
    import pickle
    import pickletools

    from bpeinspect.core import train_tokenizer
    from bpeinspect.core.analysis.shipping import Shipped

    tok = load_tokenizer("o200k_base")
    data = pickle.dumps(Shipped(tok))
    assert sum(1 for _ in pickletools.genops(data)) < 100
    assert pickle.loads(data).mergeable_ranks == tok.mergeable_ranks
    with pytest.raises(Cancelled):
        Shipped(tok, should_stop=lambda: True)
    trained = train_tokenizer("a tiny corpus, a tiny vocabulary " * 20, 270, pattern="gpt4")
    assert pickle.loads(pickle.dumps(Shipped(trained))).mergeable_ranks == trained.mergeable_ranks


def test_added_tokens_are_counted_as_encode_ordinary_cuts_them_out() -> None:
    from bpeinspect.core.analysis.samples import Sample
    from bpeinspect.core.analysis.stats import compute_stats, iter_counts
    from bpeinspect.core.tokenizer import Tokenizer

    base = load_tokenizer("cl100k_base")
    tok = Tokenizer(base.mergeable_ranks, pattern=base.split_rule, added_tokens={"<tool call>": base.n_vocab + 5})
    text = "call <tool call> now\n" * 400
    want = len(tok.encode_ordinary(text))
    assert want < len(base.encode_ordinary(text))  # "<tool call>" is one token, not five
    assert list(iter_counts(tok, [text[:1000], text[1000:]]))[-1][0] == want
    assert compute_stats({"t": tok}, [Sample("s", text=text)]).rows[0].tokens == want


def test_a_sample_that_is_not_utf8_names_the_exact_offset_of_the_bad_byte(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes("é".encode() * 3000 + b"\xff tail")  # the bad byte comes after characters cut by reads
    with pytest.raises(SampleError, match=r"bad\.txt: not UTF-8 text \(byte 0xff at offset 6000\)"):
        list(iter_chunks(Sample("bad", path), 7))
