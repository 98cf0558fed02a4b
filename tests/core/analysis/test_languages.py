"""Counting tokenizers across a corpus's languages: on a pool the same figures as in one process,
the children started once, and the sources named as the view and the CLI name them."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis import languages as counting
from bpeinspect.core.analysis.corpus import fable_corpus, load_corpus, udhr_corpus
from bpeinspect.core.analysis.languages import CountingPool, count_each, load_source


def test_count_each_on_the_pool_gives_the_same_stats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counting, "POOL_MIN_BYTES", 0)  # a few texts only
    used: list[int] = []
    real = CountingPool.count

    def count(self, *args, **kwargs):
        used.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(CountingPool, "count", count)
    pairs = [(n, load_tokenizer(n)) for n in ("r50k_base", "cl100k_base", "o200k_base")]
    corpus = udhr_corpus().filter(codes={"deu_1996", "kor", "amh", "cmn_hans", "arb"})  # the baseline comes along
    here = dict(count_each(pairs, corpus, processes=1))
    assert not used
    done: list[tuple[int, int]] = []
    with CountingPool(2) as pool:
        there = dict(count_each(pairs, corpus, processes=None, pool=pool, progress=lambda d, t: done.append((d, t))))
    assert used and there == here and sorted(here[0]) == ["amh", "arb", "cmn_hans", "deu_1996", "eng", "kor"]
    assert done[-1][0] == done[-1][1] and [d for d, _ in done] == sorted(d for d, _ in done)


def test_the_count_job_loads_its_corpus_asking_should_stop() -> None:
    """The corpus is loaded under the job's ``should_stop`` (the UDHR's unpacking asks it, and
    the worker gives way to the window there)."""
    from bpeinspect.core import Cancelled
    from bpeinspect.core.analysis import corpus as corpus_module
    from bpeinspect.core.analysis.languages import run_job

    corpus_module.forget_udhr_texts()
    try:
        with pytest.raises(Cancelled):
            next(run_job("count", "udhr", None, [], processes=1, progress=lambda *_: None, should_stop=lambda: True))
        asked: list[bool] = []
        kind, corpus = next(
            run_job(
                "count", "udhr", None, [], processes=1, progress=lambda *_: None, should_stop=lambda: asked.append(True) or False
            )
        )
        assert kind == "corpus" and len(corpus) > 500 and len(asked) > len(corpus)
    finally:
        corpus_module.forget_udhr_texts()


def test_counting_several_tokenizers_starts_the_children_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from bpeinspect.core import pool
    from bpeinspect.core.analysis import stats as analysis_stats
    from bpeinspect.core.analysis.languages import count_each

    monkeypatch.setattr(analysis_stats, "POOL_MIN_BYTES", 0)  # the fable is small
    started: list[int] = []
    real = pool.Child.__init__

    def init(self, *args):
        started.append(1)
        real(self, *args)

    monkeypatch.setattr(pool.Child, "__init__", init)
    pairs = [(n, load_tokenizer(n)) for n in ("r50k_base", "cl100k_base", "o200k_base")]
    corpus = fable_corpus()
    here = [c for _, c in count_each(pairs, corpus, processes=1)]
    assert [c for _, c in count_each(pairs, corpus, processes=2)] == here
    assert len(started) == 1


def test_a_source_is_the_corpus_of_that_name_the_udhr_with_its_fragments() -> None:
    assert load_source("udhr").codes == udhr_corpus(stages=None).codes == load_corpus("udhr-all").codes
    assert load_corpus("udhr").codes == udhr_corpus().codes
    assert len(load_source("udhr")) > len(load_corpus("udhr"))
    assert load_source("fable").codes == load_corpus("fable").codes == fable_corpus().codes


def test_a_folder_source_and_the_code_samples_are_named_alike_in_the_view_and_the_cli(tmp_path) -> None:
    (tmp_path / "en.txt").write_text("The cat sat.", encoding="utf-8")
    (tmp_path / "de.txt").write_text("Die Katze saß.", encoding="utf-8")
    assert load_source(f"folder:{tmp_path}").codes == load_corpus(str(tmp_path)).codes == ["de", "en"]
    code = load_source("code")
    assert code.title == "Code & data samples" and len(code) > 0 and code.codes == load_corpus("code").codes
