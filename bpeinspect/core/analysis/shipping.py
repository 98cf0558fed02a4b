"""Tokenizers sent to child processes, and how a child counts a text with one.

Both pools that count text on other cores, :func:`~bpeinspect.core.analysis.stats.compute_stats`'s
:class:`~bpeinspect.core.pool.ProcessPool` and the UDHR's
:class:`~bpeinspect.core.analysis.corpus_count.CountingPool`, send a tokenizer as a
:class:`Shipped`: what it is made of, pickled here a step at a time, built again in the child.
A pickle of the tokenizer itself would hold the interpreter 80-250 ms for a big vocabulary (a
frozen window when the GUI's worker does it), and sending its file would make each child parse
it again. The ranks travel packed, as one byte string and two arrays (~20 ms here for o200k,
~0.05 s to build the dict there); merges, with the token each makes (so the child need not look
them up), travel a slice at a time. Between steps the interpreter is let go and
``should_stop`` is asked.

>>> import pickle
>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("r50k_base")
>>> back = pickle.loads(pickle.dumps(Shipped(tok)))
>>> back is not tok and back.encode("hello world") == tok.encode("hello world")
True
"""

from __future__ import annotations

import pickle
import time
from array import array
from collections.abc import Callable, Sequence
from itertools import accumulate, chain

from bpeinspect.core.errors import Cancelled
from bpeinspect.core.split.rules import PRESETS
from bpeinspect.core.tokenizer import Tokenizer

ShouldStop = Callable[[], bool]

# merges travel this many at a time, the interpreter let go in between
MERGES_SLICE = 1 << 14


def can_ship(tok: Tokenizer) -> bool:
    """Whether a child can build ``tok`` again from its tables: a plain byte-level BPE."""
    return type(tok) is Tokenizer and tok.byte_level


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
    """``tok`` (see :func:`can_ship`) as it travels to a child process: unpickled, it is a
    :class:`Tokenizer` equal to ``tok`` for encoding. ``tokenizer`` is ``tok`` itself, for
    the work done in this process."""

    def __init__(self, tok: Tokenizer, should_stop: ShouldStop | None = None) -> None:
        if not can_ship(tok):
            raise TypeError(f"{type(tok).__name__} {tok.name!r} cannot be built again from its tables")
        self.tokenizer = tok
        ranks = tok.ranks
        steps = (lambda: b"".join(ranks), lambda: array("q", map(len, ranks)).tobytes(),
                 lambda: array("q", ranks.values()).tobytes())  # fmt: skip
        self._ranks = tuple(pickled_slices(steps, should_stop, call=True))
        self._merges: list[bytes] | None = None
        if not tok.uses_rank_rule:
            merges, made = tok.merges, tok.merge_result
            parts = [merges[k : k + MERGES_SLICE] for k in range(0, len(merges), MERGES_SLICE)]
            self._merges = pickled_slices(
                [lambda p=p: pickle.dumps((p, [made(a, b) for a, b in p]), pickle.HIGHEST_PROTOCOL) for p in parts],
                should_stop,
                call=True,
            )
        rule = tok.split_rule
        spec: object = rule  # by name or pattern if it has one, so that the child finds the fast engine
        if PRESETS.get(rule.name) == rule:
            spec = rule.name
        elif rule.pattern is not None and not rule.unicode:  # (a tokenizer.json's travels whole)
            spec = rule.pattern
        self._kwargs = {"pattern": spec, "special_tokens": tok.special_tokens, "ignore_merges": tok.ignore_merges,
                        "normalizer": tok.normalizer, "name": tok.name, "source": tok.source,
                        "added_tokens": tok.added_tokens, "added_options": tok.added_options,
                        "word_marks": tok.word_marks, "unk_id": tok.unk_id}  # fmt: skip

    def __reduce__(self) -> tuple[Callable[..., Tokenizer], tuple]:
        return _build, (self._ranks, self._merges, self._kwargs)


def pickled_slices(parts: Sequence, should_stop: ShouldStop | None, call: bool = False) -> list[bytes]:
    """Each part pickled (with ``call``: each part called), the interpreter let go in between."""
    out = []
    for part in parts:
        if should_stop is not None and should_stop():
            raise Cancelled()
        out.append(part() if call else pickle.dumps(part, pickle.HIGHEST_PROTOCOL))
        time.sleep(0)  # let another thread (the GUI's) run
    return out


def _build(packed: tuple[bytes, bytes, bytes], merges: list[bytes] | None, kwargs: dict) -> Tokenizer:
    """The tokenizer a :class:`Shipped` describes (in the child)."""
    blob, lens, ids = packed[0], array("q"), array("q")
    lens.frombytes(packed[1])
    ids.frombytes(packed[2])
    ends = list(accumulate(lens))
    ranks = dict(zip(map(blob.__getitem__, map(slice, chain((0,), ends), ends)), ids))
    merge_list = results = None
    if merges is not None:
        merge_list, results = [], []
        for part in merges:
            pairs, made = pickle.loads(part)
            merge_list += pairs
            results += made
    return Tokenizer(ranks, merges=merge_list, merge_results=results, **kwargs)


__all__ = ["MERGES_SLICE", "Shipped", "can_ship", "count_text", "counts_pre_tokens", "pickled_slices"]
