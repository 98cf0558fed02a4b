"""How fair is a tokenizer across languages: token counts of a corpus, premiums, summaries.

:func:`count_corpus` measures every text of a :class:`~bpeinspect.core.analysis.corpus.Corpus`
under each tokenizer (with progress and cancel between texts) and returns
:class:`CorpusStats`, from which everything else is derived without counting again: the
premium of each language against English, the per-tokenizer :class:`FairnessSummary`, and the
data of the rank plot, the per-script groups and the world map.

>>> from bpeinspect.core import load_tokenizer
>>> from bpeinspect.core.analysis.corpus import fable_corpus
>>> fable = fable_corpus().filter(codes={"en", "fr", "ko", "hi"})
>>> stats = count_corpus({"r50k": load_tokenizer("r50k_base")}, fable)
>>> round(stats.premium("r50k", "ko"), 2), stats.premium("r50k", "en")
(5.2, 1.0)
>>> s = stats.summary("r50k")
>>> s.languages, s.most_costly[0][0], s.least_costly[0][0]
(3, 'hi', 'fr')

The summaries leave the baseline language out (its premium is 1 by definition).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bpeinspect.core.analysis.corpus import Corpus, CorpusText, Language
from bpeinspect.core.analysis.measures import TextMeasures
from bpeinspect.core.analysis.stats import (
    CSV_COLUMNS,
    Progress,
    ShouldStop,
    StatsTable,
    TextStats,
    compute_stats,
)
from bpeinspect.core.pool import ProcessPool
from bpeinspect.core.tokenizer import Tokenizer

TOP = 5
LANGUAGE_COLUMNS = ("language", "script", "code")
# the figures a language has under a tokenizer, as the rank plot offers them: key -> label
METRICS: dict[str, str] = {
    "premium": "premium",
    "fertility": "fertility (tokens per word)",
    "renyi": "Rényi efficiency (α = 2.5)",
    "utilization": "utilization (distinct ids / vocabulary)",
    "chars_per_token": "characters per token",
}


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile with linear interpolation (numpy's default).

    >>> percentile([1, 2, 3, 4], 50), percentile([1, 2, 3, 4], 90), percentile([7], 90)
    (2.5, 3.7, 7)
    """
    xs = sorted(values)
    if not xs:
        raise ValueError("percentile of no values")
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo) if hi != lo else xs[lo]


@dataclass(frozen=True)
class FairnessSummary:
    """One tokenizer's premiums against the baseline over a corpus' other languages."""

    tokenizer: str
    languages: int
    median: float
    p90: float
    max: float
    over_2: float  # share of the languages whose premium is above 2
    over_4: float
    most_costly: tuple[tuple[str, float], ...]  # (code, premium), the highest first
    least_costly: tuple[tuple[str, float], ...]  # the lowest first

    def as_dict(self) -> dict[str, object]:
        return {
            "tokenizer": self.tokenizer,
            "languages": self.languages,
            "median": round(self.median, 4),
            "p90": round(self.p90, 4),
            "max": round(self.max, 4),
            "over_2": round(self.over_2, 4),
            "over_4": round(self.over_4, 4),
            "most_costly": [[c, round(p, 4)] for c, p in self.most_costly],
            "least_costly": [[c, round(p, 4)] for c, p in self.least_costly],
        }


def summarize(
    tokenizer: str, premiums: Mapping[str, float], *, top: int = TOP, not_extremes: Collection[str] = ()
) -> FairnessSummary | None:
    """The summary of ``code -> premium``; ``None`` when there is nothing to summarize. The
    codes in ``not_extremes`` (texts whose language has no code) count in the figures but
    are not named among the most and least costly.

    >>> s = summarize("t", {"a": 1.0, "b": 3.0, "c": 5.0, "d": 0.5})
    >>> (s.median, s.max, s.over_2, s.over_4, s.most_costly[0], s.least_costly[0])
    (2.0, 5.0, 0.5, 0.25, ('c', 5.0), ('d', 0.5))
    >>> summarize("t", {"a": 1.0, "b": 3.0, "c": 5.0, "d": 0.5}, not_extremes={"d"}).least_costly[0]
    ('a', 1.0)
    """
    if not premiums:
        return None
    values = list(premiums.values())
    named = {c: p for c, p in premiums.items() if c not in not_extremes}
    ranked = sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))
    n = len(values)
    return FairnessSummary(
        tokenizer,
        n,
        percentile(values, 50),
        percentile(values, 90),
        max(values),
        sum(v > 2 for v in values) / n,
        sum(v > 4 for v in values) / n,
        tuple(ranked[:top]),
        tuple(sorted(named.items(), key=lambda kv: (kv[1], kv[0]))[:top]),
    )


@dataclass(frozen=True)
class RankSeries:
    """One tokenizer's premiums sorted from the most costly language down (a rank plot's line)."""

    tokenizer: str
    codes: tuple[str, ...]
    premiums: tuple[float, ...]


@dataclass(frozen=True)
class ScriptGroup:
    """The premiums of the languages written in one script (a box or strip plot's column)."""

    script: str
    codes: tuple[str, ...]
    premiums: tuple[float, ...]
    median: float


@dataclass(frozen=True)
class MapPoint:
    """One located language on the world map with its figures under one tokenizer."""

    code: str
    name: str
    latitude: float
    longitude: float
    premium: float
    tokens: int


@dataclass(frozen=True)
class CorpusStats:
    """Raw counts for tokenizers × texts; premiums are derived against ``baseline`` (a code).

    ``counts`` also holds the baseline text's counts when a filter left it out of ``corpus``.
    """

    corpus: Corpus
    tokenizers: tuple[str, ...]
    counts: Mapping[tuple[str, str], TextStats]  # (tokenizer, code) -> counts without premium
    baseline: str | None = None
    _premiums: dict[str, dict[str, float]] = field(default_factory=dict, compare=False, repr=False)
    # (tokenizer, code) -> fertility, Rényi efficiency, utilization; empty until they are measured
    measures: Mapping[tuple[str, str], TextMeasures] = field(default_factory=dict, compare=False, repr=False)

    # -- premiums and rows -----------------------------------------------------------------------

    def premiums(self, tokenizer: str) -> dict[str, float]:
        """Code -> premium of every text of the corpus (baseline included, at 1.0)."""
        if tokenizer not in self._premiums:
            base = self.counts.get((tokenizer, self.baseline)) if self.baseline is not None else None
            out: dict[str, float] = {}
            if base is not None and base.tokens:
                for code in self.corpus.codes:
                    out[code] = self.counts[tokenizer, code].tokens / base.tokens
            self._premiums[tokenizer] = out
        return self._premiums[tokenizer]

    def premium(self, tokenizer: str, code: str) -> float | None:
        return self.premiums(tokenizer).get(code)

    def stats(self, tokenizer: str, code: str) -> TextStats:
        """The counts of one text with its premium."""
        r = self.counts[tokenizer, code]
        return TextStats(r.tokenizer, r.source, r.tokens, r.bytes, r.chars, self.premium(tokenizer, code))

    def rows(self) -> list[tuple[CorpusText, TextStats]]:
        """Every (text, counts) pair: by text in corpus order, then by tokenizer."""
        return [(t, self.stats(tok, t.code)) for t in self.corpus for tok in self.tokenizers]

    def table(self) -> StatsTable:
        """The same rows as a :class:`StatsTable` (sources named by language code)."""
        return StatsTable([s for _, s in self.rows()], self.baseline)

    def with_baseline(self, code: str | None) -> CorpusStats:
        """Premiums against another counted text (``None``: no premiums)."""
        if code is not None and (self.tokenizers[0], code) not in self.counts:
            raise KeyError(f"{code} was not counted")
        return CorpusStats(self.corpus, self.tokenizers, self.counts, code, measures=self.measures)

    def restrict(self, corpus: Corpus) -> CorpusStats:
        """The figures of a filtered corpus (e.g. ``stats.corpus.filter(scripts={...})``), without counting."""
        missing = [c for c in corpus.codes if (self.tokenizers[0], c) not in self.counts]
        if missing:
            raise KeyError(f"not counted: {', '.join(missing[:5])}")
        return CorpusStats(corpus, self.tokenizers, self.counts, self.baseline, measures=self.measures)

    # -- corpus measures ---------------------------------------------------------------------------

    def has_measures(self) -> bool:
        """Whether every tokenizer's fertility, Rényi efficiency and utilization are in."""
        return all((tok, t.code) in self.measures for tok in self.tokenizers for t in self.corpus)

    def metric(self, tokenizer: str, code: str, name: str) -> float | None:
        """One figure of :data:`METRICS` for one text (``None``: not defined or not measured)."""
        if name == "premium":
            return self.premium(tokenizer, code)
        if name == "chars_per_token":
            return self.counts[tokenizer, code].chars_per_token
        m = self.measures.get((tokenizer, code))
        if m is None:
            return None
        return {"fertility": m.fertility, "renyi": m.renyi_efficiency, "utilization": m.utilization}[name]

    def metric_series(self, tokenizer: str, name: str) -> RankSeries:
        """One tokenizer's figure ``name`` for every language that has one, the highest first
        (the baseline left out for premiums, where it is 1 by definition)."""
        if name == "premium":
            return self.rank_series(tokenizer)
        values = [(t.code, v) for t in self.corpus if (v := self.metric(tokenizer, t.code, name)) is not None]
        values.sort(key=lambda kv: (-kv[1], kv[0]))
        return RankSeries(tokenizer, tuple(c for c, _ in values), tuple(v for _, v in values))

    # -- summaries and plot data -------------------------------------------------------------------

    def _others(self, tokenizer: str) -> dict[str, float]:
        return {c: p for c, p in self.premiums(tokenizer).items() if c != self.baseline}

    def summary(self, tokenizer: str, *, top: int = TOP) -> FairnessSummary | None:
        """Median, 90th percentile, max, shares above 2× and 4×, the most and least costly."""
        others = self._others(tokenizer)
        no_code = {c for c in others if not self.corpus.language(c).has_code}
        return summarize(tokenizer, others, top=top, not_extremes=no_code)

    def summaries(self) -> list[FairnessSummary]:
        return [s for tok in self.tokenizers if (s := self.summary(tok)) is not None]

    def rank_series(self, tokenizer: str) -> RankSeries:
        ranked = sorted(self.premiums(tokenizer).items(), key=lambda kv: (-kv[1], kv[0]))
        return RankSeries(tokenizer, tuple(c for c, _ in ranked), tuple(p for _, p in ranked))

    def script_groups(self, tokenizer: str) -> list[ScriptGroup]:
        """Premiums grouped by script, the group with the highest median first."""
        groups: dict[str, list[tuple[str, float]]] = {}
        for code, p in self.premiums(tokenizer).items():
            groups.setdefault(self.corpus.language(code).script or "unknown", []).append((code, p))
        out = [
            ScriptGroup(s, tuple(c for c, _ in m), tuple(p for _, p in m), percentile((p for _, p in m), 50))
            for s, m in groups.items()
        ]
        return sorted(out, key=lambda g: (-g.median, g.script))

    def map_points(self, tokenizer: str) -> list[MapPoint]:
        """The languages with a location, with their premium (those without one are left out)."""
        out = []
        for code, p in self.premiums(tokenizer).items():
            lang = self.corpus.language(code)
            if lang.latitude is not None and lang.longitude is not None:
                tokens = self.counts[tokenizer, code].tokens
                out.append(MapPoint(code, lang.name, lang.latitude, lang.longitude, p, tokens))
        return out

    # -- export ------------------------------------------------------------------------------------

    def records(self, *, sources: Mapping[str, str] | None = None) -> list[dict[str, object]]:
        """One dict per text × tokenizer: ``stats --json``'s fields plus language, script (and code).

        ``sources`` maps codes to what the ``source`` field says (e.g. file paths); by default
        the code. ``code`` is present for bundled corpora only.
        """
        out = []
        for t, s in self.rows():
            rec = s.as_dict()
            if sources is not None:
                rec["source"] = sources[t.code]
            rec["language"] = t.language.name
            rec["script"] = t.language.script
            if self.corpus.bundled:
                rec["code"] = t.code
            out.append(rec)
        return out

    def to_csv(self, *, sources: Mapping[str, str] | None = None) -> str:
        """The records as CSV with a header row (empty cells where a field is missing)."""
        columns = CSV_COLUMNS + LANGUAGE_COLUMNS
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for rec in self.records(sources=sources):
            w.writerow({k: rec.get(k, "") for k in columns})
        return buf.getvalue()

    def language_table(self) -> tuple[list[str], list[list[object]]]:
        """A wide table, one row per language: its facts, then tokens and premium per tokenizer.

        For the searchable table and its CSV export.
        """
        head = ["code", "name", "script", "region", "bytes", "chars"]
        measured = bool(self.measures)
        for tok in self.tokenizers:
            head += [f"{tok} tokens", f"{tok} premium"]
            if measured:
                head += [f"{tok} fertility", f"{tok} rényi", f"{tok} utilization"]
        body: list[list[object]] = []
        for t in self.corpus:
            lang: Language = t.language
            first = self.counts[self.tokenizers[0], t.code]
            row: list[object] = [t.code, lang.name, lang.script, lang.region, first.bytes, first.chars]
            for tok in self.tokenizers:
                p = self.premium(tok, t.code)
                row += [self.counts[tok, t.code].tokens, None if p is None else round(p, 4)]
                if measured:
                    m = self.measures.get((tok, t.code))
                    row += (
                        [None, None, None]
                        if m is None
                        else [
                            None if m.fertility is None else round(m.fertility, 4),
                            round(m.renyi_efficiency, 4),
                            round(m.utilization, 6),
                        ]
                    )
            body.append(row)
        return head, body


def count_corpus(
    tokenizers: Mapping[str, Tokenizer] | Sequence[tuple[str, Tokenizer]],
    corpus: Corpus,
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    processes: int | None = 1,
    pool: ProcessPool | None = None,
) -> CorpusStats:
    """Count every text of ``corpus`` (and its baseline) under each tokenizer.

    ``progress(done, total)`` counts bytes and is called after each text; ``should_stop()``
    is checked before each text and raises :class:`~bpeinspect.core.encoding.Cancelled`.
    With ``processes=1`` the texts are counted one after another through each tokenizer's
    pre-token cache; more (``None``: one per CPU) share them out (see :func:`compute_stats`,
    which also takes an open ``pool`` to use instead).
    """
    pairs = list(tokenizers.items()) if isinstance(tokenizers, Mapping) else list(tokenizers)
    if not pairs:
        raise ValueError("no tokenizer to count with")
    samples = corpus.samples()
    if corpus.baseline is not None and corpus.baseline.code not in corpus.codes:
        samples.append(corpus.baseline.sample)
    table = compute_stats(pairs, samples, progress=progress, should_stop=should_stop, processes=processes, pool=pool)
    counts = {(r.tokenizer, r.source): r for r in table.rows}
    base = corpus.baseline.code if corpus.baseline is not None else None
    return CorpusStats(corpus, tuple(label for label, _ in pairs), counts, base)


__all__ = [
    "LANGUAGE_COLUMNS",
    "METRICS",
    "CorpusStats",
    "FairnessSummary",
    "MapPoint",
    "RankSeries",
    "ScriptGroup",
    "count_corpus",
    "percentile",
    "summarize",
]
