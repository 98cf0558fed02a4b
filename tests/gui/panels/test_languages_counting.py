"""The languages view's counting on its pool gives the same figures as counting in one process."""

from __future__ import annotations

import pytest

from bpeinspect.core import load_tokenizer
from bpeinspect.core.analysis.corpus import udhr_corpus
from bpeinspect.gui.panels.languages import counting
from bpeinspect.gui.panels.languages.counting import CountingPool, count_each


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
    import pytest

    from bpeinspect.core import Cancelled
    from bpeinspect.core.analysis import corpus as corpus_module
    from bpeinspect.gui.panels.languages.counting import count_job

    corpus_module.udhr_texts.cache_clear()
    try:
        with pytest.raises(Cancelled):
            next(count_job("udhr", None, [], 1, progress=lambda *_: None, should_stop=lambda: True))
    finally:
        corpus_module.udhr_texts.cache_clear()
