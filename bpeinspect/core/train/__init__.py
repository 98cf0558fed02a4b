"""Training: count pre-tokens, merge pairs incrementally, report progress, stop when asked; the
plan of a training of several sizes, and what the training window and ``train`` set it up with.

>>> from bpeinspect.core.train import train_tokenizer
>>> train_tokenizer("ab ab ab", 257, pattern=None).merges
[(97, 98)]
"""

from typing import TYPE_CHECKING

from bpeinspect.core.faces import lazy_names
from bpeinspect.core.train.corpus import (
    BINARY,
    FILTERED,
    IGNORED,
    CorpusError,
    CorpusScan,
    corpus_files,
    iter_corpus,
    scan_corpus,
    skipped_counts,
    skipped_note,
)
from bpeinspect.core.train.counts import count_pretokens, write_counts_tsv
from bpeinspect.core.train.filefilter import DEFAULT_INCLUDE, FileFilter, parse_patterns
from bpeinspect.core.train.plan import TrainingJob, TrainingOutcome, TrainingPlan, check_sizes, size_label
from bpeinspect.core.train.run import (
    TrainedMerge,
    TrainingProgress,
    TrainingRun,
    initial_token_bytes,
    train_tokenizer,
)
from bpeinspect.core.train.setup import (
    CorpusEntry,
    format_merge,
    parse_sizes,
    parse_special_tokens,
    preview_split,
    summarize_path,
)

if TYPE_CHECKING:
    from bpeinspect.core.train.distributed import count_with_dask

__all__ = [
    "BINARY",
    "FILTERED",
    "IGNORED",
    "CorpusScan",
    "skipped_counts",
    "DEFAULT_INCLUDE",
    "CorpusEntry",
    "CorpusError",
    "TrainedMerge",
    "TrainingJob",
    "TrainingOutcome",
    "TrainingPlan",
    "TrainingProgress",
    "TrainingRun",
    "check_sizes",
    "corpus_files",
    "count_with_dask",
    "count_pretokens",
    "FileFilter",
    "format_merge",
    "initial_token_bytes",
    "iter_corpus",
    "scan_corpus",
    "skipped_note",
    "parse_patterns",
    "parse_sizes",
    "parse_special_tokens",
    "preview_split",
    "size_label",
    "summarize_path",
    "train_tokenizer",
    "write_counts_tsv",
]

# dask is optional: its module loads when asked for, not with the package
__getattr__ = lazy_names(__name__, {"distributed": "count_with_dask"})
