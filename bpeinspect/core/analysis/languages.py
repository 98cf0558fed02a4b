"""Tokenizers measured across the languages of a parallel corpus, one tokenizer after the other,
and the counts kept: what the Languages view counts.

A corpus is named by a *source*, a name of :func:`~bpeinspect.core.analysis.corpus.load_corpus`
(``udhr``, ``fable``, ``code``, or ``folder:PATH``, the names ``stats --corpus`` takes too), and
loaded by :func:`load_source` (on a worker, in the window): the UDHR is decompressed once per
process, a folder is read. The counts of each tokenizer on each source are kept in a
:class:`CountCache` while that tokenizer stays open, so a second tokenizer, a filter, another
baseline or a return to an earlier corpus costs nothing but the tokenizers never counted on it.
:func:`count_each` yields each tokenizer's counts as soon as they are known, so a view fills in
while the rest is being counted.

>>> from bpeinspect.core import load_tokenizer
>>> corpus = load_source("fable").filter(codes={"en", "ko"})
>>> [(k, counts["ko"].tokens) for k, counts in count_each([("r50k", load_tokenizer("r50k_base"))], corpus)]
[(0, 1249)]
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

from bpeinspect.core.analysis.corpus import FOLDER_PREFIX, Corpus, CorpusText, load_corpus
from bpeinspect.core.analysis.corpus_count import CountingPool
from bpeinspect.core.analysis.fairness import CorpusStats, count_corpus
from bpeinspect.core.analysis.measures import TextMeasures, is_spaced, text_ids, text_profile
from bpeinspect.core.analysis.stats import POOL_MIN_BYTES, TextStats
from bpeinspect.core.analysis.vocab_use import vocabulary_use
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.pool import BACKGROUND_NICENESS, ProcessPool
from bpeinspect.core.text import fix_surrogates
from bpeinspect.core.tokenizer import Tokenizer

NICENESS = BACKGROUND_NICENESS  # the counting children's priority: below the window's

Counts = dict[str, TextStats]  # language code -> one tokenizer's counts


def load_source(source: str, should_stop: Callable[[], bool] | None = None) -> Corpus:
    """The whole corpus a source names, the UDHR with its fragments (a view filters the stages);
    ``should_stop`` is asked while the UDHR is unpacked (it is slow)."""
    return load_corpus(source, fragments=True, should_stop=should_stop)


def count_each(
    pairs: Sequence[tuple[str, Tokenizer]],
    corpus: Corpus,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    processes: int | None = 1,
    pool: CountingPool | None = None,
) -> Iterator[tuple[int, Counts]]:
    """Count ``corpus`` (and its baseline) under each tokenizer; yields ``(index, counts)`` as each is done
    (on a pool, not necessarily in their order).

    ``progress(done, total)`` runs over all the tokenizers together; ``should_stop`` is asked
    between texts (:class:`~bpeinspect.core.Cancelled` ends the run). With ``processes`` > 1
    (``None``: a process per CPU), a corpus held in memory of :data:`POOL_MIN_BYTES` or more is
    counted on a :class:`~bpeinspect.core.analysis.corpus_count.CountingPool` (``pool``: one
    kept open by the caller, else one of ``processes`` children made for this call); else by
    :func:`~bpeinspect.core.analysis.fairness.count_corpus` on the core's pool.
    """
    texts = list(corpus.texts)
    if corpus.baseline is not None and corpus.baseline.code not in corpus.codes:
        texts.append(corpus.baseline)
    if processes != 1 and all(t.sample.text is not None for t in texts):
        prepared = [fix_surrogates(t.sample.text or "") for t in texts]
        sizes = [(len(s.encode("utf-8")), len(s)) for s in prepared]
        if sum(b for b, _ in sizes) >= POOL_MIN_BYTES:
            own = pool is None
            pool = CountingPool(processes, niceness=NICENESS) if pool is None else pool
            try:
                with quiet_gc():  # tokenizers counted here (SentencePiece) fill their caches as below
                    toks = [tok for _, tok in pairs]
                    for k, counts in pool.count(toks, prepared, progress=progress, should_stop=should_stop):
                        label = pairs[k][0]
                        yield (
                            k,
                            {
                                t.code: TextStats(label, t.sample.name, n, *size)
                                for t, n, size in zip(texts, counts, sizes)
                            },
                        )
            finally:
                if own:
                    pool.close()
            return
    n = len(pairs)
    with ProcessPool(processes, niceness=NICENESS) as processes_pool:  # its children start once for all the tokenizers
        for k, pair in enumerate(pairs):

            def part(done: int, total: int, k: int = k) -> None:
                if progress is not None:
                    progress(k * total + done, n * total)

            with quiet_gc():  # the pre-token caches grow by the hundred thousand: no full collections meanwhile
                stats = count_corpus([pair], corpus, progress=part, should_stop=should_stop, pool=processes_pool)
            yield k, {code: r for (_, code), r in stats.counts.items()}


def run_job(
    job: str,
    source: str,
    corpus: Corpus | None,
    pairs: list[tuple[str, Tokenizer]],
    *,
    processes: int | None,
    pool: CountingPool | None = None,
    progress: Callable[[int, int], None],
    should_stop: Callable[[], bool],
) -> Iterator[tuple]:
    """The view's jobs on its worker. Each yields ``("corpus", corpus)`` if it had to load the
    corpus ``source`` names, then, per tokenizer of ``pairs`` (each counted on the pool's
    children when there is one and ``processes`` is not 1):

    - ``"count"``: ``("counts", index, counts)`` (see :func:`count_each`);
    - ``"measure"``: ``("measures", index, {code: TextMeasures})``, each text's profile counted
      and its words and script read here;
    - ``"use"``: ``("use", index, VocabularyUse)``, what the vocabulary spends on the corpus
      (its texts as filtered), the unreachable tokens marked.
    """
    if job not in ("count", "measure", "use"):
        raise ValueError(f"no job {job!r}")
    if corpus is None:
        corpus = load_source(source, should_stop)  # the worker gives way while the UDHR is unpacked
        yield "corpus", corpus
    if job == "count":
        for k, counts in count_each(
            pairs, corpus, progress=progress, should_stop=should_stop, processes=processes, pool=pool
        ):
            yield "counts", k, counts
        return
    texts = list(corpus.texts)
    if job == "measure" and corpus.baseline is not None and corpus.baseline.code not in corpus.codes:
        texts.append(corpus.baseline)
    prepared = [fix_surrogates(t.sample.read()) for t in texts]
    toks = [tok for _, tok in pairs]
    if processes != 1 and pool is not None:
        what = "profile" if job == "measure" else "ids"
        counted = pool.count(toks, prepared, progress=progress, should_stop=should_stop, what=what)
    else:
        counted = _count_here(toks, prepared, text_profile if job == "measure" else text_ids, progress, should_stop)
    if job == "measure":
        words = [len(s.split()) for s in prepared]
        spaced = [is_spaced(s) for s in prepared]
        yield from _measures(texts, words, spaced, toks, counted)
    else:
        yield from _uses(pairs, counted, should_stop, pool if processes != 1 else None)


def _count_here(
    toks: Sequence[Tokenizer],
    texts: Sequence[str],
    count: Callable[[Tokenizer, str], object],
    progress: Callable[[int, int], None],
    should_stop: Callable[[], bool],
) -> Iterator[tuple[int, list]]:
    """What ``count`` gives for each text under each tokenizer, in this process, as a counting
    pool yields it: ``(index, [per text])``."""
    total = sum(map(len, texts)) * len(toks)
    done = 0
    for k, tok in enumerate(toks):
        per_text = []
        for text in texts:
            if should_stop():
                raise Cancelled()
            per_text.append(count(tok, text))
            done += len(text)
            progress(done, total)
        yield k, per_text


def _measures(
    texts: Sequence[CorpusText],
    words: Sequence[int],
    spaced: Sequence[bool],
    toks: Sequence[Tokenizer],
    counted: Iterator[tuple[int, list]],
) -> Iterator[tuple]:
    """The measures job's results from each tokenizer's text profiles (``words`` and ``spaced``:
    each text's count of words and whether its writing spaces them)."""
    with quiet_gc():
        for k, profiles in counted:
            n_vocab = toks[k].n_vocab
            yield (
                "measures",
                k,
                {t.code: TextMeasures.of(p, w, sp, n_vocab) for t, p, w, sp in zip(texts, profiles, words, spaced)},
            )


def _uses(
    pairs: Sequence[tuple[str, Tokenizer]],
    counted: Iterator[tuple[int, list]],
    should_stop: Callable[[], bool],
    pool: CountingPool | None,
) -> Iterator[tuple]:
    """The use job's results from each tokenizer's id counts (the unreachable tokens looked for
    by the ``pool``'s children, if there is one)."""
    with quiet_gc():
        for k, per_text in counted:
            total: Counter[int] = Counter()
            for c in per_text:
                total.update(c)
            label, tok = pairs[k]
            yield (
                "use",
                k,
                vocabulary_use(tok, [], name=label, unreachable=True, counts=total, should_stop=should_stop, pool=pool),
            )


class CountCache:
    """Counts per (source, open tokenizer), dropped when the tokenizer is closed."""

    def __init__(self) -> None:
        self._toks: dict[int, Tokenizer] = {}  # id -> tokenizer: holding it keeps its id unique
        self._counts: dict[tuple[str, int], Counts] = {}
        self._measures: dict[tuple[str, int], dict[str, TextMeasures]] = {}

    def keep_only(self, toks: Sequence[Tokenizer]) -> None:
        """Forget the counts of every tokenizer not in ``toks``."""
        ids = {id(t) for t in toks}
        self._counts = {key: c for key, c in self._counts.items() if key[1] in ids}
        self._measures = {key: m for key, m in self._measures.items() if key[1] in ids}
        self._toks = {i: t for i, t in self._toks.items() if i in ids}

    def has(self, source: str, tok: Tokenizer) -> bool:
        return (source, id(tok)) in self._counts

    def has_measures(self, source: str, tok: Tokenizer) -> bool:
        return (source, id(tok)) in self._measures

    def put_measures(self, source: str, tok: Tokenizer, measures: dict[str, TextMeasures]) -> None:
        self._toks[id(tok)] = tok
        self._measures[source, id(tok)] = measures

    def put(self, source: str, tok: Tokenizer, counts: Counts) -> None:
        self._toks[id(tok)] = tok
        self._counts[source, id(tok)] = counts

    def stats(
        self, source: str, corpus: Corpus, toks: Sequence[Tokenizer], labels: Sequence[str]
    ) -> CorpusStats | None:
        """The tokenizers counted so far on ``source``, in their order, as one :class:`CorpusStats`."""
        done = [(t, label) for t, label in zip(toks, labels) if self.has(source, t)]
        if not done:
            return None
        merged: dict[tuple[str, str], TextStats] = {}
        for tok, label in done:
            for code, r in self._counts[source, id(tok)].items():
                merged[label, code] = r if r.tokenizer == label else dataclasses.replace(r, tokenizer=label)
        measures = {
            (label, code): m for tok, label in done for code, m in self._measures.get((source, id(tok)), {}).items()
        }
        base = corpus.baseline.code if corpus.baseline is not None else None
        return CorpusStats(corpus, tuple(label for _, label in done), merged, base, measures=measures)


__all__ = [
    "FOLDER_PREFIX",
    "NICENESS",
    "CountCache",
    "CountingPool",
    "count_each",
    "load_source",
    "run_job",
]
