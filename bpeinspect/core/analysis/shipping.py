"""Tokenizers sent to child processes, and how a child counts a text with one.

Both pools that count text on other cores, :func:`~bpeinspect.core.analysis.stats.compute_stats`'s
:class:`~bpeinspect.core.pool.ProcessPool` and the UDHR's
:class:`~bpeinspect.core.analysis.corpus_count.CountingPool`, send a tokenizer as a
:class:`Shipped`: the constructor call it is made by, as data (``core/tables.py``: the ranks as
one byte string and arrays of ids, the merges with the token each makes, so the child need not
look them up), built again in the child the way the load cache builds it. A pickle of the
tokenizer's objects would hold the interpreter for long for a big vocabulary (a frozen window
when the GUI's worker does it), and sending its file would make each child parse it again. Between
steps the interpreter is let go and ``should_stop`` is asked.

>>> import pickle
>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("r50k_base")
>>> back = pickle.loads(pickle.dumps(Shipped(tok)))
>>> back is not tok and back.encode("hello world") == tok.encode("hello world")
True
"""

from __future__ import annotations

from collections.abc import Callable

from bpeinspect.core import tables
from bpeinspect.core.tokenizer import Tokenizer

ShouldStop = Callable[[], bool]


def can_ship(tok: Tokenizer) -> bool:
    """Whether a child can build ``tok`` again from its tables: a plain byte-level BPE."""
    return tables.can_rebuild(tok)


def counts_pre_tokens(tok: Tokenizer) -> bool:
    """Whether ``tok``'s count of a text is the sum over its split rule's pre-tokens (through
    the pre-token cache); otherwise the text is encoded (``encode_ordinary``: a normalizer
    rewrites the text, added tokens are cut out of it first)."""
    return tok.normalizer is None and tok.byte_level and not tok.added_tokens


def count_text(tok: Tokenizer, text: str) -> int:
    """Tokens of ``text`` (lone surrogates already fixed) as the statistics count them:
    ``len(tok.encode_ordinary(text))``, special-token text counted as ordinary text.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("cl100k_base")
    >>> count_text(tok, "hello <|endoftext|>") == len(tok.encode_ordinary("hello <|endoftext|>"))
    True
    """
    if not counts_pre_tokens(tok):
        return len(tok.encode_ordinary(text))
    return tok.count_pieces(tok.split_rule.pieces(text))


class Shipped:
    """``tok`` (see :func:`can_ship`) as it travels to a child process: its parts as data
    (``core/tables.py``), built again there. Unpickled, it is a :class:`Tokenizer` equal to
    ``tok`` for encoding. ``tokenizer`` is ``tok`` itself, for the work done in this process, and
    ``should_stop`` is asked in that work (and while the parts are written)."""

    def __init__(self, tok: Tokenizer, should_stop: ShouldStop | None = None) -> None:
        if not can_ship(tok):
            raise TypeError(f"{type(tok).__name__} {tok.name!r} cannot be built again from its tables")
        self.tokenizer, self.should_stop = tok, should_stop
        self.data = tables.dumps(tables.parts_of(tok), should_stop)

    def __reduce__(self) -> tuple[Callable[..., Tokenizer], tuple]:
        return tables.rebuild, (self.data,)


__all__ = ["Shipped", "can_ship", "count_text", "counts_pre_tokens"]
