"""Training in a child process gives what training here gives, stops, resumes and fails cleanly."""

from __future__ import annotations

import pytest

from bpeinspect.core import PatternError, TrainingRun, train_tokenizer
from bpeinspect.core.train.corpus import CorpusError, iter_corpus
from bpeinspect.core.train.process import ProcessTrainingRun
from tests.core.corpus import PROSE, SHARED

TAYLOR = SHARED / "corpora" / "taylorswift.txt"


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "prose.txt").write_text("\n".join(PROSE), encoding="utf-8")
    return [TAYLOR, tmp_path / "prose.txt"]


@pytest.mark.parametrize(("tie_break", "specials"), [("first-seen", []), ("hf", ["<|endoftext|>"])])
def test_same_merges_reports_and_settings_as_here(corpus, tie_break, specials):
    run = ProcessTrainingRun(corpus, 1500, pattern="gpt4", special_tokens=specials, tie_break=tie_break)
    reports = list(run.reports())
    run.close()
    here = TrainingRun(iter_corpus(corpus, "gpt4"), 1500, pattern="gpt4", special_tokens=specials, tie_break=tie_break)
    list(here.reports())
    tok, ref = run.tokenizer(), here.tokenizer()
    assert tok.merges == ref.merges and tok.mergeable_ranks == ref.mergeable_ranks
    assert tok.special_tokens == ref.special_tokens
    assert tok.training.counts == ref.training.counts
    skip = {"seconds"}
    assert {k: v for k, v in tok.training.settings.items() if k not in skip} == {
        k: v for k, v in ref.training.settings.items() if k not in skip
    }
    assert reports[-1].phase == "done" and run.finished
    assert [m for r in reports for m in r.new_merges] == here.merges


def test_stop_then_resume_is_one_whole_run(corpus):
    run = ProcessTrainingRun(corpus, 2000, pattern="gpt2", interval=0.0)
    seen = []
    for r in run.reports(lambda: len(run.merges) >= 300):
        seen.append(r)
    assert seen[-1].stopped and not run.finished
    partial = run.tokenizer()
    assert len(partial.merges) >= 300 and partial.training.settings["finished"] is False
    assert partial.merges == train_tokenizer(iter_corpus(corpus, "gpt2"), 256 + len(partial.merges), pattern="gpt2").merges
    list(run.reports())  # resume
    run.close()
    assert run.finished
    assert run.tokenizer().merges == train_tokenizer(iter_corpus(corpus, "gpt2"), 2000, pattern="gpt2").merges


def test_bad_settings_raise_here_at_once(corpus):
    with pytest.raises(ValueError, match="too small"):
        ProcessTrainingRun(corpus, 100)
    with pytest.raises(PatternError):
        ProcessTrainingRun(corpus, 300, pattern="(")
    with pytest.raises(ValueError, match="tie_break"):
        ProcessTrainingRun(corpus, 300, tie_break="random")


def test_corpus_errors_come_back_with_their_type(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff")
    run = ProcessTrainingRun([bad], 300)
    with pytest.raises(CorpusError, match=r"bad.txt: not UTF-8 text \(byte 0xff at offset 3"):
        list(run.reports())
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="the corpus is empty"):
        list(ProcessTrainingRun([empty], 300).reports())


def test_leaving_the_reports_early_pauses_the_child_and_keeps_its_merges(corpus):
    run = ProcessTrainingRun(corpus, 2000, pattern="gpt2", interval=0.0)
    for report in run.reports():
        if report.merges_done >= 200:
            break  # the consumer walks away: the child pauses after its merge at hand
    assert len(run.merges) >= 200 and not run.finished
    assert run.state["settings"]["merges"] == len(run.merges)  # the child's state came back
    list(run.reports())  # resume
    run.close()
    assert run.finished
    assert run.tokenizer().merges == train_tokenizer(iter_corpus(corpus, "gpt2"), 2000, pattern="gpt2").merges


def test_stop_from_another_thread_pauses_the_child_and_close_ends_it(corpus):
    import threading

    run = ProcessTrainingRun(corpus, 5000, pattern="gpt2", interval=0.0)
    reports = []
    asked = False
    for report in run.reports():
        reports.append(report)
        if report.merges_done >= 100 and not asked:
            threading.Thread(target=run.stop).start()  # as the window's cancel button does
            asked = True
    assert reports[-1].phase == "done" and reports[-1].stopped and not run.finished
    assert len(run.merges) < run.merges_total
    proc = run._proc
    run.close()
    assert proc.poll() is not None and run._proc is None
