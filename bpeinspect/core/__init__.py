"""bpeinspect's core: pure Python, no Qt. Everything the app and the CLI show comes from here.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("o200k_base")
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from bpeinspect.core.encoding import (
    SPECIAL,
    SPLITS_CHAR,
    Encoding,
    TokenInfo,
    byte_fractions,
    differing_span,
    group_around,
)
from bpeinspect.core.errors import (
    Cancelled,
    CorpusError,
    DisallowedSpecialError,
    PatternError,
    QueryError,
    SampleError,
    UnknownPreTokenizerError,
    UnknownTokenError,
    UnsupportedTokenizerError,
    VocabularyError,
)
from bpeinspect.core.io.builtins import BUILTINS, load_builtin
from bpeinspect.core.io.load import load_tokenizer
from bpeinspect.core.limits import MAX_INPUT, human_size, read_at_most
from bpeinspect.core.memory import allow_gc_freeze
from bpeinspect.core.merges import MergeGraph, MergeNode, MergeStep, Trace, trace
from bpeinspect.core.normalize import badge as normalizer_badge
from bpeinspect.core.split.rules import PRESET_ALIASES, PRESETS, Split, SplitRule, resolve_rule
from bpeinspect.core.text import (
    LEGEND,
    SYMBOLS,
    decode_utf8,
    display_bytes,
    display_label,
    display_terminal,
    display_text,
    hex_bytes,
    parse_display,
    utf16_len,
)
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo

__all__ = [
    "BUILTINS",
    "LEGEND",
    "MAX_INPUT",
    "PRESETS",
    "PRESET_ALIASES",
    "SPECIAL",
    "SPLITS_CHAR",
    "SYMBOLS",
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
    "UnknownPreTokenizerError",
    "UnknownTokenError",
    "UnsupportedTokenizerError",
    "VocabularyError",
    "byte_fractions",
    "differing_span",
    "decode_utf8",
    "display_bytes",
    "display_label",
    "display_terminal",
    "display_text",
    "group_around",
    "hex_bytes",
    "allow_gc_freeze",
    "human_size",
    "load_builtin",
    "load_tokenizer",
    "normalizer_badge",
    "parse_display",
    "read_at_most",
    "resolve_rule",
    "trace",
    "utf16_len",
]

from bpeinspect.core.train.run import TrainedMerge, TrainingProgress, TrainingRun, train_tokenizer  # noqa: E402

__all__ += ["TrainedMerge", "TrainingProgress", "TrainingRun", "train_tokenizer"]

# pickling a Tokenizer stores its tables (data only); the module registers that with copyreg
from bpeinspect.core import tables  # noqa: E402, F401
