"""Cancelling training never corrupts anything.

Whenever a run is stopped (by ``should_stop``, by breaking out of its reports, or from another
thread), what it has learned is a prefix of the uninterrupted run's merges and a working
tokenizer; resuming finishes with exactly the uninterrupted result; and a file saved before
the cancel is untouched.
"""

from __future__ import annotations

import functools
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeinspect.core import train_tokenizer
from bpeinspect.core.io.formats import load_path, save
from bpeinspect.core.train.run import TrainingRun

from .seeds import SAMPLE, SHARED

pytestmark = pytest.mark.timeout(300)

VOCAB = 700
SPECIALS = ["<|endoftext|>"]


@functools.cache
def load_corpus() -> list[str]:
    path = SHARED / "corpora" / "taylorswift.txt"
    text = path.read_text(encoding="utf-8") if path.is_file() else SAMPLE * 200
    # several documents, so stops can also land between documents while counting
    return [text[i : i + 20_000] for i in range(0, len(text), 20_000)]


@functools.cache
def train_full():
    return train_tokenizer(load_corpus(), VOCAB, pattern="gpt4", special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return load_corpus()


@pytest.fixture(scope="module")
def full():
    return train_full()


def check_consistent(tok, full, corpus) -> None:
    """``tok`` is a prefix of ``full`` and a working tokenizer."""
    n = len(tok.merges)
    assert tok.merges == full.merges[:n]
    assert tok.n_vocab == 256 + n + len(SPECIALS)
    assert tok.special_tokens == {"<|endoftext|>": 256 + n}
    assert [tok.token_bytes(i) for i in range(256 + n)] == [full.token_bytes(i) for i in range(256 + n)]
    assert tok.training is not None and tok.training.counts == full.training.counts[:n]
    sample = corpus[0][:3000] + "<|endoftext|>" + corpus[-1][-2000:]
    ids = tok.encode(sample, allowed_special="all")
    assert tok.decode(ids) == sample
    assert max(ids) < tok.n_vocab


class StopAfter:
    """``should_stop`` that says yes on its ``n``-th call."""

    def __init__(self, n: int) -> None:
        self.n, self.calls = n, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.n


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stop_at=st.integers(1, VOCAB))
def test_stop_anywhere_gives_a_prefix_and_resume_finishes(stop_at):
    corpus, full = load_corpus(), train_full()  # not fixtures: hypothesis would print the corpus
    run = TrainingRun(corpus, VOCAB, pattern="gpt4", special_tokens=SPECIALS)
    stop = StopAfter(stop_at)
    last = list(run.reports(stop))[-1]
    assert last.phase == "done"
    partial = run.tokenizer()
    check_consistent(partial, full, corpus)
    if 0 < len(partial.merges) < len(full.merges):
        assert last.stopped and not run.finished
    # (a stop while counting ends the run with no merges, as TrainingRun documents)
    if partial.merges:  # merging had begun: iterating again resumes where it stopped
        list(run.reports())
        assert run.tokenizer().merges == full.merges
        assert run.finished


def test_breaking_out_of_the_reports_pauses(corpus, full):
    run = TrainingRun(corpus, VOCAB, pattern="gpt4", special_tokens=SPECIALS, interval=0)
    seen = 0
    for report in run.reports():
        seen += len(report.new_merges)
        if report.phase == "merging" and seen >= 100:
            break  # what a GUI does on Cancel
    check_consistent(run.tokenizer(), full, corpus)
    assert 100 <= len(run.tokenizer().merges) < len(full.merges)
    # a second cancel right away, then resume to the end
    for _ in run.reports(lambda: True):
        pass
    check_consistent(run.tokenizer(), full, corpus)
    list(run.reports())
    assert run.tokenizer().merges == full.merges


def test_cancel_from_another_thread(corpus, full):
    """The GUI's way: a worker thread trains, the GUI thread sets a flag."""
    cancel = threading.Event()
    started = threading.Event()
    result = {}

    def progress(report):
        if report.merges_done > 0:
            started.set()

    def work():
        result["tok"] = train_tokenizer(
            corpus, VOCAB, pattern="gpt4", special_tokens=SPECIALS, progress=progress, should_stop=cancel.is_set
        )

    t = threading.Thread(target=work)
    t.start()
    started.wait(60)
    cancel.set()
    t.join(60)
    assert not t.is_alive(), "training did not stop when asked"
    check_consistent(result["tok"], full, corpus)


def test_cancelled_training_never_touches_a_saved_file(tmp_path, corpus, full):
    good = tmp_path / "tok.json"
    save(full, good)
    before = good.read_bytes()
    run = TrainingRun(corpus, VOCAB, pattern="gpt4", special_tokens=SPECIALS)
    list(run.reports(StopAfter(50)))
    assert good.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok.json"]
    # the partial result saves and loads like any tokenizer, and says it is unfinished
    partial = tmp_path / "partial.json"
    save(run.tokenizer(), partial)
    back = load_path(partial)
    check_consistent(back, full, corpus)
    assert back.training.settings["finished"] is False
    assert load_path(good).merges == full.merges


def test_cancel_while_counting_leaves_an_empty_but_valid_run(corpus, full):
    run = TrainingRun(iter(corpus), VOCAB, pattern="gpt4", special_tokens=SPECIALS)
    last = list(run.reports(lambda: True))[-1]
    assert last.phase == "done" and last.stopped
    tok = run.tokenizer()
    assert tok.merges == [] or tok.merges == full.merges[: len(tok.merges)]
    check_consistent(tok, full, corpus)
