"""bpeinspect's core: pure Python, no Qt. Everything the app and the CLI show comes from here.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("o200k_base")
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from bpeinspect.core.encoding import Encoding, TokenInfo
from bpeinspect.core.errors import (
    Cancelled,
    CorpusError,
    DisallowedSpecialError,
    PatternError,
    QueryError,
    SampleError,
    UnknownTokenError,
    UnsupportedTokenizerError,
    VocabularyError,
)
from bpeinspect.core.io.builtins import BUILTINS, load_builtin
from bpeinspect.core.io.load import load_tokenizer
from bpeinspect.core.merges import MergeGraph, MergeNode, MergeStep, Trace, trace
from bpeinspect.core.split.rules import PRESETS, Split, SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo

__all__ = [
    "BUILTINS",
    "PRESETS",
    "Cancelled",
    "CorpusError",
    "DisallowedSpecialError",
    "Encoding",
    "MergeGraph",
    "MergeNode",
    "MergeStep",
    "PatternError",
    "QueryError",
    "SampleError",
    "Split",
    "SplitRule",
    "TokenInfo",
    "Tokenizer",
    "Trace",
    "TrainingInfo",
    "UnknownTokenError",
    "UnsupportedTokenizerError",
    "VocabularyError",
    "load_builtin",
    "load_tokenizer",
    "resolve_rule",
    "trace",
]

from bpeinspect.core.train.run import TrainedMerge, TrainingProgress, TrainingRun, train_tokenizer  # noqa: E402

__all__ += ["TrainedMerge", "TrainingProgress", "TrainingRun", "train_tokenizer"]

# pickling a Tokenizer stores its tables (data only); the module registers that with copyreg
from bpeinspect.core import tables  # noqa: E402, F401
