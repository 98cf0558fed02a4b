"""The trainer's API: the trained tokenizer, progress, stopping and resuming, bad input."""

from __future__ import annotations

import pytest

from bpeinspect.core import PatternError, Tokenizer, TrainingProgress, TrainingRun, train_tokenizer
from bpeinspect.core.merges import iter_tree
from bpeinspect.core.train.engine import HFVocabulary
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples, taylorswift

TEXTS = PROSE + ADVERSARIAL + code_samples(60_000)


@pytest.fixture(scope="module", params=["first-seen", "hf"])
def trained(request: pytest.FixtureRequest) -> Tokenizer:
    return train_tokenizer(TEXTS, 1500, pattern="gpt4", tie_break=request.param, special_tokens=["<|endoftext|>"])


def _layout(tok: Tokenizer) -> tuple[list[int], int]:
    """Byte -> id, and the first merge's id: minbpe's (bytes, merges, then specials) or
    Hugging Face's (specials first, bytes in its alphabet's order, then merges)."""
    if tok.training.settings["tie_break"] == "hf":
        return list(HFVocabulary.of(["<|endoftext|>"]).byte_ids), 257
    return list(range(256)), 256


def test_ids_are_bytes_then_merges_then_specials(trained: Tokenizer) -> None:
    byte_ids, first = _layout(trained)
    assert len(trained) == trained.n_vocab == 1500
    assert [trained.token_bytes(byte_ids[b]) for b in range(256)] == [bytes([b]) for b in range(256)]
    for i, (a, b) in enumerate(trained.merges):
        assert max(a, b) < first + i  # built only from tokens that existed before
        assert trained.token_bytes(first + i) == trained.token_bytes(a) + trained.token_bytes(b)
        assert trained.merge_result(a, b) == first + i
        assert trained.merge_rank(a, b) == i
    assert trained.special_tokens == {"<|endoftext|>": 1499 if first == 256 else 0}
    assert trained.split_rule.name == "gpt4"


def test_round_trip_and_merge_trees(trained: Tokenizer) -> None:
    _, first = _layout(trained)
    for text in TEXTS:
        assert trained.decode(trained.encode(text, disallowed_special=())) == text
    graph = trained.merge_graph
    assert graph.unbuildable() == []
    for token_id in range(first, len(trained.merges) + first, 37):
        node = graph.tree(token_id)
        assert node.token == trained.token_bytes(token_id)
        assert (node.left.id, node.right.id) == trained.merges[token_id - first]
        leaves = [n.token for _, n in iter_tree(node) if n.left is None]
        assert b"".join(leaves) == node.token


def test_training_history(trained: Tokenizer) -> None:
    info = trained.training
    assert info is not None
    assert len(info.counts) == len(trained.merges) == 1500 - 257
    # A merge creates pairs no more frequent than itself, so the chosen counts never rise.
    assert all(a >= b for a, b in zip(info.counts, info.counts[1:]))
    assert info.settings["vocab_size"] == 1500
    assert info.settings["pattern"] == "gpt4"
    assert info.settings["special_tokens"] == ["<|endoftext|>"]
    assert info.settings["finished"] is True
    assert info.settings["documents"] == len(TEXTS)


def test_encoding_the_corpus_gives_the_reported_bytes_per_token() -> None:
    # Encoding replays training's merges, so the last report's ratio is the corpus's real one.
    texts = PROSE + [taylorswift()]
    reports: list[TrainingProgress] = []
    tok = train_tokenizer(texts, 700, pattern="gpt2", progress=reports.append)
    total_bytes = sum(len(t.encode("utf-8")) for t in texts)
    total_tokens = sum(len(tok.encode(t)) for t in texts)
    assert reports[-1].corpus_bytes == total_bytes
    assert reports[-1].bytes_per_token == pytest.approx(total_bytes / total_tokens)


def test_progress_reports() -> None:
    reports: list[TrainingProgress] = []
    tok = train_tokenizer([taylorswift()] * 3, 900, pattern="gpt4", progress=reports.append)
    phases = [r.phase for r in reports]
    assert phases[0] == "counting" and phases[-1] == "done"
    assert phases.count("done") == 1
    assert phases == sorted(phases, key=["counting", "merging", "done"].index)
    merging = [r for r in reports if r.phase != "counting"]
    assert [r.merges_done for r in merging] == sorted(r.merges_done for r in merging)
    # new_merges, joined, are every merge once, in order
    joined = [m for r in reports for m in r.new_merges]
    assert [(m.left, m.right) for m in joined] == tok.merges
    assert [m.rank for m in joined] == list(range(len(tok.merges)))
    assert [m.id for m in joined] == [256 + i for i in range(len(tok.merges))]
    assert all(m.token == tok.token_bytes(m.id) for m in joined)
    last = reports[-1]
    assert last.merges_done == last.merges_total == 900 - 256
    assert last.merge == joined[-1]
    assert last.fraction == 1.0 and not last.stopped
    assert last.merges_per_second > 0
    assert last.documents == 3 and last.distinct_pretokens > 1000
    ratios = [r.bytes_per_token for r in merging]
    assert ratios == sorted(ratios) and 1.0 < ratios[0] <= ratios[-1]


def test_reports_are_throttled() -> None:
    reports: list[TrainingProgress] = []
    train_tokenizer(TEXTS, 2000, pattern="gpt4", progress=reports.append)
    # 1744 merges in well under a few seconds: a handful of reports, not one per merge
    assert len([r for r in reports if r.phase == "merging"]) < 100


def test_should_stop_returns_the_partial_tokenizer() -> None:
    full = train_tokenizer(TEXTS, 800, pattern="gpt4")
    reports: list[TrainingProgress] = []
    calls = {"n": 0}

    def should_stop() -> bool:
        calls["n"] += 1
        return calls["n"] > 100

    partial = train_tokenizer(TEXTS, 800, pattern="gpt4", progress=reports.append, should_stop=should_stop)
    assert 0 < len(partial.merges) < len(full.merges)
    assert partial.merges == full.merges[: len(partial.merges)]
    assert reports[-1].phase == "done" and reports[-1].stopped
    assert partial.training.settings["finished"] is False
    assert len(partial) == 256 + len(partial.merges)
    for text in PROSE:
        assert partial.decode(partial.encode(text)) == text


def test_stop_while_counting_gives_a_byte_tokenizer() -> None:
    tok = train_tokenizer(TEXTS, 800, pattern="gpt4", should_stop=lambda: True, special_tokens=["<s>"])
    assert tok.merges == []
    assert tok.special_tokens == {"<s>": 256}
    assert tok.decode(tok.encode("héllo")) == "héllo"


def test_run_pauses_and_resumes() -> None:
    full = train_tokenizer(TEXTS, 900, pattern="gpt2", tie_break="hf")
    run = TrainingRun(TEXTS, 900, pattern="gpt2", tie_break="hf", interval=0.0)
    seen = 0
    for report in run.reports():
        if report.phase == "merging" and report.merges_done >= 50:
            seen = report.merges_done
            break
    middle = run.tokenizer()
    assert len(middle.merges) == seen
    assert middle.merges == full.merges[:seen]
    last = list(run.reports())[-1]
    assert last.phase == "done" and last.merges_done == 900 - 256
    assert run.tokenizer().merges == full.merges
    assert list(run.reports())[-1].merges_done == 900 - 256  # nothing left to do


def test_generator_as_a_worker_would_use_it() -> None:
    # The GUI's worker: iterate reports, forward them, stop on request, then take the result.
    run = TrainingRun([taylorswift()], 600, pattern="gpt4", interval=0.0)
    forwarded = []
    cancel_after = 3
    for report in run.reports():
        forwarded.append((report.phase, report.merges_done))
        if report.phase == "merging" and len(forwarded) >= cancel_after:
            break
    tok = run.tokenizer()
    assert 0 < len(tok.merges) < 600 - 256
    assert tok.training.counts == [m.count for m in run.merges]


def test_documents_are_split_on_their_own() -> None:
    # "ab" + "cd" as one document makes the pair (b, c); as two documents it cannot.
    one = train_tokenizer("ab cd" * 3, 300, pattern=None)
    two = train_tokenizer(["ab", "cd"] * 3, 300, pattern=None)
    assert (ord("b"), ord("c")) not in two.merges
    assert len(two.merges) == 2
    assert len(one.merges) > 2


def test_a_regex_string_pattern() -> None:
    tok = train_tokenizer(TEXTS, 400, pattern=r"\w+|\s+|[^\w\s]+")
    assert tok.split_rule.pattern == r"\w+|\s+|[^\w\s]+"
    assert tok.decode(tok.encode("hello, world")) == "hello, world"


def test_from_counts_equals_training_on_texts() -> None:
    from bpeinspect.core.train.counts import count_pretokens

    table = count_pretokens(TEXTS, "gpt4")
    for tie_break in ("first-seen", "hf"):
        direct = train_tokenizer(TEXTS, 700, pattern="gpt4", tie_break=tie_break)
        run = TrainingRun.from_counts(table, 700, pattern="gpt4", tie_break=tie_break)
        list(run.reports())
        assert run.tokenizer().merges == direct.merges


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("texts", ["", [], ["", ""], iter([])])
def test_empty_corpus(texts) -> None:
    with pytest.raises(ValueError, match="corpus is empty"):
        train_tokenizer(texts, 300)


@pytest.mark.parametrize(
    ("vocab_size", "specials", "message"),
    [
        (256, None, "too small"),
        (100, None, "too small"),
        (0, None, "too small"),
        (258, ["<a>", "<b>"], "too small.*2 special tokens"),
        (2**22, None, "too large"),
        (300.5, None, "integer"),
        ("300", None, "integer"),
        ("lots", None, "integer"),
    ],
)
def test_bad_vocab_size(vocab_size, specials, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train_tokenizer("hello world", vocab_size, special_tokens=specials)


def test_bad_settings() -> None:
    with pytest.raises(PatternError, match="does not compile"):
        train_tokenizer("hello", 300, pattern="(unclosed")
    with pytest.raises(ValueError, match="tie_break"):
        train_tokenizer("hello", 300, tie_break="lexical")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="listed twice"):
        train_tokenizer("hello", 300, special_tokens=["<a>", "<a>"])
    with pytest.raises(ValueError, match="non-empty string"):
        train_tokenizer("hello", 300, special_tokens=[""])
    with pytest.raises(ValueError, match="list of strings"):
        train_tokenizer("hello", 300, special_tokens="<a>")  # type: ignore[arg-type]


def test_settings_are_checked_before_the_corpus_is_read() -> None:
    def corpus():
        raise AssertionError("the corpus was read")
        yield ""

    with pytest.raises(ValueError):
        TrainingRun(corpus(), 10)


def test_non_string_documents() -> None:
    with pytest.raises(TypeError, match="strings"):
        train_tokenizer([b"bytes"], 300)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not bytes"):
        train_tokenizer(b"bytes", 300)  # type: ignore[arg-type]


def test_walking_away_while_counting_ends_the_run() -> None:
    docs = iter([taylorswift()] * 3)
    run = TrainingRun(docs, 600, pattern="gpt4")
    first = next(iter(run.reports()))
    assert first.phase == "counting"
    last = list(run.reports())[-1]  # resuming cannot recount a half-read iterator
    assert last.phase == "done" and last.merges_done == 0
    assert run.tokenizer().merges == []


def test_a_merge_that_remakes_a_token_keeps_its_id(monkeypatch: pytest.MonkeyPatch) -> None:
    # minbpe and Hugging Face can make the same bytes twice ("a"+"bc" after "ab"+"c"); the
    # tokenizer keeps one id per token and both merges point to it.
    from bpeinspect.core.train import run as train_module

    class Remaking:
        def __init__(self, *args) -> None:
            a, b, c = ord("a"), ord("b"), ord("c")
            self.token_bytes = [bytes([i]) for i in range(256)] + [b"ab", b"bc", b"abc", b"abc", b"abcabc"]
            self.plan = [(a, b, 256, 9), (b, c, 257, 8), (256, c, 258, 7), (a, 257, 259, 6), (259, 258, 260, 5)]
            self.corpus_bytes, self.tokens = 30, 10

        def step(self):
            return self.plan.pop(0) if self.plan else None

    monkeypatch.setattr(train_module, "MergeEngine", Remaking)
    run = TrainingRun.from_counts({b"abc": 10}, 300, pattern=None)
    list(run.reports())
    tok = run.tokenizer()
    a, b, c = ord("a"), ord("b"), ord("c")
    assert tok.merges == [(a, b), (b, c), (256, c), (a, 257), (258, 258)]
    assert [m.id for m in run.merges] == [256, 257, 258, 258, 259]
    assert len(tok) == 260
    assert tok.token_bytes(259) == b"abcabc"
    assert tok.encode("abcabc") == [259]
    assert tok.training.counts == [9, 8, 7, 6, 5]
