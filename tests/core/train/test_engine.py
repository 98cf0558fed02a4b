"""tie_break="first-seen" against karpathy/minbpe: its own merges, and its algorithm run literally."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import regex

from bpeinspect.core import TrainingRun, train_tokenizer
from bpeinspect.core.split.rules import PRESETS
from tests.core.corpus import ADVERSARIAL, PROSE, SHARED, taylorswift

REFERENCE = SHARED / "reference" / "minbpe-taylorswift-merges.json"
REFERENCE_DIR = Path(__file__).parent / "reference"
SETTINGS = {  # reference entry -> our pattern
    "taylorswift_regex_gpt4_1024": "gpt4",
    "taylorswift_regex_gpt2_512": "gpt2",
    "taylorswift_basic_512": None,
}


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", SETTINGS)
def test_reproduces_minbpe_reference_merges(reference: dict, entry: str) -> None:
    ref = reference[entry]
    pattern = SETTINGS[entry]
    # minbpe's RegexTokenizer runs its pattern with the regex module; ours must be the same one
    assert (PRESETS[pattern].pattern if pattern else "") == ref["pattern"]
    tok = train_tokenizer(taylorswift(), ref["vocab_size"], pattern=pattern)
    got = [[a, b, 256 + i] for i, (a, b) in enumerate(tok.merges)]
    assert len(got) == len(ref["merges"]) == ref["vocab_size"] - 256
    assert got == ref["merges"]
    assert tok.n_vocab == ref["vocab_size"]


# -- minbpe's training loop, written out literally, as an oracle for any text -----------------

def _get_stats(ids: list[int], counts: dict) -> None:
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1


def _merge(ids: list[int], pair: tuple[int, int], idx: int) -> list[int]:
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def minbpe_train(texts: list[str], vocab_size: int, pattern: str | None) -> tuple[list[tuple[int, int]], list[int]]:
    """minbpe's RegexTokenizer/BasicTokenizer ``train`` (chunks of all texts, in order)."""
    chunks: list[str] = []
    for t in texts:
        chunks.extend(regex.findall(PRESETS[pattern].pattern, t) if pattern else ([t] if t else []))
    ids = [list(ch.encode("utf-8")) for ch in chunks]
    merges, counts = [], []
    for i in range(vocab_size - 256):
        stats: dict = {}
        for chunk in ids:
            _get_stats(chunk, stats)
        if not stats:
            break
        pair = max(stats, key=stats.get)
        merges.append(pair)
        counts.append(stats[pair])
        ids = [_merge(chunk, pair, 256 + i) for chunk in ids]
    return merges, counts


def _random_texts(seed: int) -> list[str]:
    rnd = random.Random(seed)
    alphabet = rnd.choice(["ab", "abc", "ab ", "aab\n", "xy z", "éa", "🎉a"])
    texts = []
    for _ in range(rnd.randint(1, 4)):
        n = rnd.choice([3, 40, 700, 1500])  # > 512 bytes exercises the segments of long words
        texts.append("".join(rnd.choice(alphabet) for _ in range(n)))
    return texts


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("pattern", [None, "gpt2"])
def test_matches_minbpe_algorithm_on_random_texts(seed: int, pattern: str | None) -> None:
    texts = _random_texts(seed)
    vocab = 256 + 60
    expected, counts = minbpe_train(texts, vocab, pattern)
    tok = train_tokenizer(texts, vocab, pattern=pattern)
    assert tok.merges[: len(expected)] == expected
    assert len(tok.merges) == len(expected)
    assert tok.training.counts == counts


@pytest.mark.parametrize("pattern", [None, "gpt4"])
def test_matches_minbpe_algorithm_on_prose_and_adversarial_text(pattern: str | None) -> None:
    texts = PROSE + ADVERSARIAL
    vocab = 256 + 150
    expected, counts = minbpe_train(texts, vocab, pattern)
    tok = train_tokenizer(texts, vocab, pattern=pattern)
    assert tok.merges == expected
    assert tok.training.counts == counts


def test_long_text_without_splitting_crosses_segments() -> None:
    # One long document of repetitive text: merges at and across every segment edge.
    rnd = random.Random(7)
    text = "".join(rnd.choice(["ab", "aa", "b", "aaa", "ba ", "\n"]) for _ in range(3000))
    expected, counts = minbpe_train([text], 256 + 80, None)
    tok = train_tokenizer(text, 256 + 80, pattern=None)
    assert tok.merges == expected
    assert tok.training.counts == counts
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("tie_break", ["first-seen", "hf"])
def test_tiny_segments_change_nothing(monkeypatch: pytest.MonkeyPatch, seed: int, tie_break: str) -> None:
    # Segments of 2-3 tokens: merges reach across edges and use up whole segments.
    from bpeinspect.core.train import engine as _train_engine

    texts = _random_texts(seed) + ["aaaaaaa", "abababab", "ab"]
    expected = train_tokenizer(texts, 256 + 70, pattern=None, tie_break=tie_break)
    monkeypatch.setattr(_train_engine, "LONG_WORD", 3)
    monkeypatch.setattr(_train_engine, "SEGMENT", 2 + seed % 2)
    got = train_tokenizer(texts, 256 + 70, pattern=None, tie_break=tie_break)
    assert got.merges == expected.merges
    assert got.training.counts == expected.training.counts
    if tie_break == "first-seen":
        assert got.merges == minbpe_train(texts, 256 + 70, None)[0]


# -- minbpe's own merges for edge cases: gaps, capture groups, new characters, run-out pairs ----
# (tests/core/train/reference/README.md says how the references were made)

EDGE_CASES = [
    *json.loads((SHARED / "reference" / "minbpe-edge-cases.json").read_text(encoding="utf-8"))["cases"],
    *json.loads((REFERENCE_DIR / "minbpe-exactness.json").read_text(encoding="utf-8"))["cases"],
]


@pytest.mark.parametrize("case", [c for c in EDGE_CASES if c.get("merges") is not None], ids=lambda c: c["name"])
def test_reproduces_minbpe_on_edge_cases(case: dict) -> None:
    # gaps between matches are dropped and a capture group is what counts (regex.findall), and
    # characters new in Unicode 16 and 17 are what the installed regex module says they are
    tok = train_tokenizer(case["text"], case["vocab_size"], pattern=case["pattern"])
    got = [[a, b, 256 + i] for i, (a, b) in enumerate(tok.merges)]
    assert got == case["merges"]


def test_edge_case_references_cover_gaps_groups_and_new_characters() -> None:
    names = {c["name"] for c in EDGE_CASES}
    assert {"gap-letters", "capture-group", "unicode17-o200k", "counts-abba-basic", "exhausted-basic"} <= names
    assert train_tokenizer("ab    ", 257, pattern=r"\p{L}+").merges == [(97, 98)]
    assert train_tokenizer("a\u058bb", 257, pattern="o200k").merges == [(97, 214)]


def test_zero_counts_are_not_in_the_corpus() -> None:
    # a count table line with 0 is text minbpe never sees: {"ba": 0, "abba": 1} is the text "abba"
    ref = next(c for c in EDGE_CASES if c["name"] == "counts-abba-basic")
    run = TrainingRun.from_counts({b"ba": 0, b"abba": 1}, ref["vocab_size"], pattern=None)
    list(run.reports())
    assert [[a, b, 256 + i] for i, (a, b) in enumerate(run.tokenizer().merges)] == ref["merges"]
    assert run.counts == {b"abba": 1}
    for bad in ({b"ab": -1}, {b"ab": 1.5}, {b"": 2}, {"ab": 2}):
        with pytest.raises(ValueError):
            TrainingRun.from_counts(bad, 300, pattern=None)


@pytest.mark.parametrize("case", [c for c in EDGE_CASES if c.get("error")], ids=lambda c: c["name"])
def test_running_out_of_pairs_is_reported(case: dict) -> None:
    # minbpe fails (max() of no pairs); we stop with fewer tokens, as Hugging Face does, and say so
    assert case["error"].startswith("ValueError")
    run = TrainingRun(case["text"], case["vocab_size"], pattern=case["pattern"])
    reports = list(run.reports())
    tok = run.tokenizer()
    assert reports[-1].phase == "done" and reports[-1].exhausted and not reports[-1].stopped
    assert run.exhausted and tok.training.settings["ran_out_of_pairs"] is True
    assert len(tok) < case["vocab_size"]
    full = train_tokenizer("ab ab ab", 257, pattern=None)
    assert full.training.settings["ran_out_of_pairs"] is False


def test_several_capture_groups_are_refused_for_minbpe_only() -> None:
    with pytest.raises(ValueError, match="2 capture groups"):
        TrainingRun("ab cd", 300, pattern=r"(\p{L})(\p{L})")
    TrainingRun("ab cd", 300, pattern=r"(\p{L})(\p{L})", tie_break="hf")  # Hugging Face splits on whole matches
