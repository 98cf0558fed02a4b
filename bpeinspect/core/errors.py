"""Every error the core raises on purpose, in one leaf module that imports nothing of the core.

Callers catch these by name; each is also importable from the module that raises it.
Bad input is a ``ValueError`` (so a caller can catch all of it at once), a stop that was
asked for is :class:`Cancelled`.

>>> issubclass(UnsupportedTokenizerError, VocabularyError), issubclass(VocabularyError, ValueError)
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence


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


class ShapeUnclear(DatasetError):
    """No known shape fits the records: the caller must name the fields to count."""

    def __init__(self, message: str, fields: Sequence[str]) -> None:
        super().__init__(message)
        self.fields = tuple(fields)


class UnknownPreTokenizerError(VocabularyError):
    """A ``tokenizer.ggml.pre`` name whose split rule bpeinspect does not know."""


class UnsupportedNormalizer(ValueError):
    """A normalizer bpeinspect cannot apply exactly (named in the message)."""


class TablesError(ValueError):
    """Data that does not describe a tokenizer the tables make (damaged, foreign or hostile)."""


class TooLong(BaseException):
    """Raised in a chat template's rendering thread past its time limit (a BaseException: no
    template code or ``except Exception`` on the way swallows it)."""


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
    "ShapeUnclear",
    "TablesError",
    "TooLong",
    "TrainingProcessError",
    "UnknownPreTokenizerError",
    "UnknownTokenError",
    "UnsupportedNormalizer",
    "UnsupportedTokenizerError",
    "VocabularyError",
]
