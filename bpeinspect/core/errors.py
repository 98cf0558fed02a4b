"""Every error the core raises on purpose, in one leaf module that imports nothing.

Callers catch these by name; each is also importable from the module that raises it.
Bad input is a ``ValueError`` (so a caller can catch all of it at once), a stop that was
asked for is :class:`Cancelled`.

>>> issubclass(UnsupportedTokenizerError, VocabularyError), issubclass(VocabularyError, ValueError)
(True, True)
"""

from __future__ import annotations


class Cancelled(Exception):
    """Raised when a ``should_stop`` callback asked a long computation to stop."""


class VocabularyError(ValueError):
    """A vocabulary file that is missing, damaged or of the wrong kind."""


class UnsupportedTokenizerError(VocabularyError):
    """A well-formed file describing a tokenizer that bpeinspect cannot represent exactly."""


class PatternError(ValueError):
    """A split pattern that does not compile."""


class DisallowedSpecialError(ValueError):
    """Text contains a special token that the caller did not allow."""


class UnknownTokenError(ValueError, KeyError):
    """A token id that is not in the vocabulary."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class CorpusError(ValueError):
    """A corpus file or folder that cannot be read as UTF-8 text."""


class CountsFileError(ValueError):
    """A pre-token count file that cannot be read."""


class TrainingProcessError(RuntimeError):
    """The training process failed in a way that is not the input's fault."""


class SampleError(ValueError):
    """A sample file or folder that cannot be used (missing, empty, not UTF-8)."""


class QueryError(ValueError):
    """A search the user typed that cannot be run (bad regex, bad hex, bad id range)."""


class ChatTemplateError(ValueError):
    """A chat template that does not compile, or that refuses the messages it is given."""


class DatasetError(ValueError):
    """A dataset file (JSON Lines or JSON records) that cannot be read, or a record of no known shape."""


__all__ = [
    "Cancelled",
    "ChatTemplateError",
    "CorpusError",
    "CountsFileError",
    "DatasetError",
    "DisallowedSpecialError",
    "PatternError",
    "QueryError",
    "SampleError",
    "TrainingProcessError",
    "UnknownTokenError",
    "UnsupportedTokenizerError",
    "VocabularyError",
]
