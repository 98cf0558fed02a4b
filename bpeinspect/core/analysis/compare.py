"""Two tokenizers on one text or side by side: where their token boundaries agree, which
boundaries all of several segmentations share, which boundaries differ from a reference's
(:func:`compare_boundaries`, what the compare view marks), and how much of their
vocabularies overlap."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from bpeinspect.core.encoding import Encoding
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.tokenizer import Tokenizer


def token_boundaries(tok: Tokenizer, text: str) -> set[int]:
    """Byte offsets strictly inside ``text`` where one token ends and the next begins.

    >>> from bpeinspect.core import load_tokenizer
    >>> sorted(token_boundaries(load_tokenizer("r50k_base"), "hello world"))
    [5]
    """
    ids = tok.encode_ordinary(text)
    out: set[int] = set()
    pos = 0
    for i in ids[:-1]:
        pos += len(tok.token_bytes(i))
        out.add(pos)
    return out


@dataclass(frozen=True)
class BoundaryAgreement:
    """How two segmentations of one text agree, on the sets A and B of interior boundaries.

    ``jaccard`` = |A∩B| / |A∪B|; ``f1`` = 2|A∩B| / (|A|+|B|), i.e. the F1 of B's boundaries
    against A's as reference (``precision`` = |A∩B|/|B|, ``recall`` = |A∩B|/|A|). Two
    segmentations without interior boundaries agree fully (1.0).
    """

    shared: int
    only_a: int
    only_b: int

    @property
    def jaccard(self) -> float:
        union = self.shared + self.only_a + self.only_b
        return self.shared / union if union else 1.0

    @property
    def f1(self) -> float:
        both = 2 * self.shared + self.only_a + self.only_b
        return 2 * self.shared / both if both else 1.0

    @property
    def precision(self) -> float:
        b = self.shared + self.only_b
        return self.shared / b if b else 1.0

    @property
    def recall(self) -> float:
        a = self.shared + self.only_a
        return self.shared / a if a else 1.0


def agreement(a: set[int], b: set[int]) -> BoundaryAgreement:
    """Agreement of two boundary sets (see :class:`BoundaryAgreement`)."""
    shared = len(a & b)
    return BoundaryAgreement(shared, len(a) - shared, len(b) - shared)


def boundary_agreement(tok_a: Tokenizer, tok_b: Tokenizer, text: str) -> BoundaryAgreement:
    """Agreement of the token boundaries of ``tok_a`` and ``tok_b`` on ``text``.

    >>> from bpeinspect.core import load_tokenizer
    >>> ag = boundary_agreement(load_tokenizer("r50k_base"), load_tokenizer("cl100k_base"), "hello world")
    >>> (ag.shared, ag.f1)
    (1, 1.0)
    """
    return agreement(token_boundaries(tok_a, text), token_boundaries(tok_b, text))


def shared_spans(spans: Sequence[Sequence[tuple[int, int]]]) -> list[list[bool]]:
    """For each segmentation, whether each of its tokens (a byte span) occurs in every other one.

    >>> shared_spans([[(0, 2), (2, 5)], [(0, 2), (2, 3), (3, 5)]])
    [[True, False], [True, False, False]]
    """
    sets = [set(s) for s in spans]
    return [[all(sp in other for j, other in enumerate(sets) if j != i) for sp in s] for i, s in enumerate(spans)]


# -- several encodings of one text against the first ------------------------------------------


class OffsetSet(AbstractSet[int]):
    """Byte offsets kept as an ascending array of distinct ones, read as a set (``in``,
    ``len``, iteration, comparison with sets). A Python set of a 10 MB text's hundreds of
    thousands of offsets grew in steps, each rehash holding the interpreter lock for tens of
    milliseconds.

    >>> diff = OffsetSet(np.array([3, 8, 21]))
    >>> 8 in diff, 9 in diff, len(diff), diff == {3, 8, 21}, sorted(diff)
    (True, False, 3, True, [3, 8, 21])
    """

    __slots__ = ("offsets",)

    def __init__(self, offsets: np.ndarray) -> None:
        self.offsets = offsets

    def __contains__(self, x: object) -> bool:
        if not isinstance(x, (int, np.integer)):
            return False
        a = self.offsets
        i = bisect.bisect_left(a, x)
        return i < len(a) and a[i] == x

    def __len__(self) -> int:
        return len(self.offsets)

    def __iter__(self) -> Iterator[int]:
        return iter(self.offsets.tolist())

    def __repr__(self) -> str:
        return f"OffsetSet({self.offsets.tolist()!r})"


@dataclass
class BoundaryComparison:
    """One encoding's boundaries against the reference's (the first encoding of a comparison).

    ``boundaries`` are its interior boundaries' byte offsets (ascending); ``differing`` those
    the reference lacks (for the reference itself: those no other encoding has); ``agreement``
    its agreement with the reference."""

    boundaries: np.ndarray
    differing: OffsetSet
    agreement: BoundaryAgreement


def interior_boundaries(enc: Encoding) -> np.ndarray:
    """Byte offsets where one token of ``enc`` ends and the next begins, ascending.

    >>> from bpeinspect.core import load_tokenizer
    >>> interior_boundaries(load_tokenizer("r50k_base").encode_with_offsets("hello world")).tolist()
    [5]
    """
    return boundaries_of_ends(np.frombuffer(enc.byte_ends, dtype=np.int64))


def boundaries_of_ends(ends: np.ndarray) -> np.ndarray:
    """The interior boundaries of a text whose tokens end at byte offsets ``ends`` (in order):
    every end but the last, each offset once.

    >>> boundaries_of_ends(np.array([3, 3, 5, 9])).tolist()
    [3, 5]
    """
    ends = ends[:-1]
    keep = np.ones(len(ends), dtype=bool)  # a token of no bytes (some files hold one) repeats an offset
    np.not_equal(ends[1:], ends[:-1], out=keep[1:])
    return ends[keep]  # (not np.unique: it hashes, holding the interpreter lock for long)


def compare_boundaries(
    encs: Sequence[Encoding], should_stop: Callable[[], bool] | None = None
) -> list[BoundaryComparison]:
    """Each encoding of one text against the first's boundaries (see :class:`BoundaryComparison`).

    The boundaries are sorted arrays compared by binary searches: Python sets' unions and
    differences held the interpreter lock for long on a big text. ``should_stop`` is asked
    between the encodings (:class:`~bpeinspect.core.errors.Cancelled` ends it).

    >>> from bpeinspect.core import load_tokenizer
    >>> encs = [load_tokenizer(n).encode_with_offsets("naïve tokenization") for n in ("r50k_base", "o200k_base")]
    >>> [(sorted(c.differing), round(c.agreement.f1, 3)) for c in compare_boundaries(encs)]
    [([], 1.0), ([4], 0.857)]
    """
    return compare_boundary_arrays([interior_boundaries(e) for e in encs], should_stop)


def compare_boundary_arrays(
    bounds: Sequence[np.ndarray], should_stop: Callable[[], bool] | None = None
) -> list[BoundaryComparison]:
    """:func:`compare_boundaries` of the encodings whose interior boundaries are ``bounds``
    (each as :func:`interior_boundaries` gives them: ascending byte offsets).

    >>> [sorted(c.differing) for c in compare_boundary_arrays([np.array([2, 5]), np.array([2, 3, 5])])]
    [[], [3]]
    """
    if not bounds:
        return []
    out = []
    for i, b in enumerate(bounds):
        if should_stop is not None and should_stop():
            raise Cancelled("cancelled")
        if i == 0:  # in none of the others (each sorted already: no sort of them all together)
            found = np.zeros(len(b), dtype=bool)
            for other in bounds[1:]:
                found |= _within(b, other)
        else:
            found = _within(b, bounds[0])
        diff = b[~found]
        shared = int(np.count_nonzero(_within(b, bounds[0])))
        agree = BoundaryAgreement(shared, len(bounds[0]) - shared, len(b) - shared)
        out.append(BoundaryComparison(b, OffsetSet(diff), agree))
    return out


def _within(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Which offsets of ``a`` are in the sorted array ``b`` (a binary search, which releases the lock)."""
    i = np.searchsorted(b, a).clip(max=max(len(b) - 1, 0))
    return b[i] == a if len(b) else np.zeros(len(a), dtype=bool)


# -- vocabulary overlap ----------------------------------------------------------------------


@dataclass(frozen=True)
class VocabOverlap:
    """Ordinary tokens (byte strings) two vocabularies share; special tokens are left out."""

    size_a: int
    size_b: int
    shared: int

    @property
    def only_a(self) -> int:
        return self.size_a - self.shared

    @property
    def only_b(self) -> int:
        return self.size_b - self.shared

    @property
    def jaccard(self) -> float:
        union = self.size_a + self.size_b - self.shared
        return self.shared / union if union else 1.0

    @property
    def fraction_of_a(self) -> float:
        """Share of A's tokens that B also has."""
        return self.shared / self.size_a if self.size_a else 1.0

    @property
    def fraction_of_b(self) -> float:
        return self.shared / self.size_b if self.size_b else 1.0


def vocab_overlap(tok_a: Tokenizer, tok_b: Tokenizer) -> VocabOverlap:
    """Shared token byte strings of two tokenizers.

    >>> from bpeinspect.core import load_tokenizer
    >>> ov = vocab_overlap(load_tokenizer("r50k_base"), load_tokenizer("r50k_base"))
    >>> (ov.shared, ov.jaccard)
    (50256, 1.0)
    """
    a = tok_a.mergeable_ranks.keys()
    b = tok_b.mergeable_ranks.keys()
    return VocabOverlap(len(a), len(b), len(a & b))


def shared_tokens(tok_a: Tokenizer, tok_b: Tokenizer) -> list[bytes]:
    """The shared ordinary tokens, in ``tok_a``'s id order."""
    b = tok_b.mergeable_ranks
    return [t for t, _ in sorted(tok_a.mergeable_ranks.items(), key=lambda kv: kv[1]) if t in b]


__all__ = [
    "BoundaryAgreement",
    "BoundaryComparison",
    "OffsetSet",
    "VocabOverlap",
    "agreement",
    "boundary_agreement",
    "compare_boundaries",
    "interior_boundaries",
    "shared_spans",
    "shared_tokens",
    "token_boundaries",
    "vocab_overlap",
]
