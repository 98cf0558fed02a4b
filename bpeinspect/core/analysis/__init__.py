"""Analysis over encodings: statistics across texts and languages, the vocabulary index, bundled
samples. The app and the command line import from this package; each module loads when one of its
names is first asked for (see :mod:`bpeinspect.core.faces`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bpeinspect.core.faces import lazy_names

if TYPE_CHECKING:
    from bpeinspect.core.analysis.compare import (
        BoundaryAgreement,
        OffsetSet,
        boundaries_of_ends,
        compare_boundaries,
        compare_boundary_arrays,
        interior_boundaries,
    )
    from bpeinspect.core.analysis.corpus import (
        REGIONS,
        Corpus,
        CorpusText,
        Language,
        load_corpus,
        udhr_corpus,
    )
    from bpeinspect.core.analysis.fairness import (
        METRICS,
        TOP,
        CorpusStats,
        FairnessSummary,
        count_corpus,
        percentile,
    )
    from bpeinspect.core.analysis.languages import CountCache, CountingPool
    from bpeinspect.core.analysis.measures import CSV_COLUMNS, Measures, measure_sample, with_premiums
    from bpeinspect.core.analysis.samples import Sample, code_samples, expand_paths, load_samples, read_text
    from bpeinspect.core.analysis.stats import Progress, StatsTable, TextStats, compute_stats
    from bpeinspect.core.analysis.vocab import (
        BYTES,
        COMMON,
        KINDS,
        SCRIPTS,
        TokenQuery,
        VocabIndex,
        positions,
        token_scripts,
    )
    from bpeinspect.core.analysis.vocab_diff import (
        MAX_SIDES,
        MergeOverlap,
        VocabDiff,
        compare_vocabularies,
        composition_rows,
        length_buckets,
        list_tokens,
        merges_in_common,
        sorted_already,
    )
    from bpeinspect.core.analysis.vocab_use import VocabularyUse, count_ids, vocabulary_use
    from bpeinspect.core.analysis.worldmap import coastline_xy

__all__ = [
    "BYTES",
    "COMMON",
    "CSV_COLUMNS",
    "KINDS",
    "MAX_SIDES",
    "METRICS",
    "REGIONS",
    "SCRIPTS",
    "TOP",
    "BoundaryAgreement",
    "Corpus",
    "CountCache",
    "CountingPool",
    "CorpusStats",
    "CorpusText",
    "FairnessSummary",
    "Language",
    "Measures",
    "MergeOverlap",
    "OffsetSet",
    "Progress",
    "Sample",
    "StatsTable",
    "TextStats",
    "TokenQuery",
    "VocabDiff",
    "VocabIndex",
    "VocabularyUse",
    "coastline_xy",
    "code_samples",
    "boundaries_of_ends",
    "compare_boundaries",
    "compare_boundary_arrays",
    "compare_vocabularies",
    "composition_rows",
    "compute_stats",
    "count_corpus",
    "count_ids",
    "expand_paths",
    "interior_boundaries",
    "length_buckets",
    "list_tokens",
    "load_corpus",
    "load_samples",
    "measure_sample",
    "merges_in_common",
    "percentile",
    "positions",
    "read_text",
    "sorted_already",
    "token_scripts",
    "udhr_corpus",
    "vocabulary_use",
    "with_premiums",
]

__getattr__ = lazy_names(
    __name__,
    {
        "compare": "BoundaryAgreement OffsetSet boundaries_of_ends compare_boundaries compare_boundary_arrays interior_boundaries",
        "corpus": "REGIONS Corpus CorpusText Language load_corpus udhr_corpus",
        "fairness": "METRICS TOP CorpusStats FairnessSummary count_corpus percentile",
        "languages": "CountCache CountingPool",
        "measures": "CSV_COLUMNS Measures measure_sample with_premiums",
        "samples": "Sample code_samples expand_paths load_samples read_text",
        "stats": "Progress StatsTable TextStats compute_stats",
        "vocab": "BYTES COMMON KINDS SCRIPTS TokenQuery VocabIndex positions token_scripts",
        "vocab_diff": "MAX_SIDES MergeOverlap VocabDiff compare_vocabularies composition_rows length_buckets list_tokens merges_in_common sorted_already",
        "vocab_use": "VocabularyUse count_ids vocabulary_use",
        "worldmap": "coastline_xy",
    },
)
