"""Two to four vocabularies side by side: which tokens (by their bytes) each holds, which ids
they agree on, what the tokens are made of, and which merges they share.

Special and added tokens are kept apart: they are names for control sequences, not pieces of
text that merging makes, so they are compared as their own list (``specials``).

>>> from bpeinspect.core import Tokenizer
>>> a = Tokenizer.from_merges([(104, 105), (256, 33)], pattern=None)  # hi, hi!
>>> b = Tokenizer.from_merges([(104, 105), (111, 107)], pattern=None)  # hi, ok
>>> d = compare_vocabularies([("a", a), ("b", b)])
>>> d.shared_count(0, 1), d.only_count(0), d.only_count(1), d.same_id(0, 1), d.id_prefix(0, 1)
(257, 1, 1, 257, 257)
>>> d.only_tokens(0), d.exclusive_counts()
([b'hi!'], {1: 1, 2: 1, 3: 257})
"""

from __future__ import annotations

import itertools
import operator
import threading
import weakref
from collections import ChainMap, Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from bpeinspect.core.analysis.token_categories import (
    CATEGORIES_FIRST,
    CATEGORIES_LAST,
    sort_into_categories,
    token_category,
)
from bpeinspect.core.analysis.token_categories import CHECK_EVERY as _CHECK_EVERY
from bpeinspect.core.errors import Cancelled, UnknownTokenError
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.pool import ProcessPool

if TYPE_CHECKING:
    from bpeinspect.core.tokenizer import Tokenizer

ShouldStop = Callable[[], bool] | None
T = TypeVar("T")
Progress = Callable[[int, int], None] | None

MAX_SIDES = 4


@dataclass(frozen=True)
class VocabSide:
    """One vocabulary's part of a comparison."""

    name: str
    n_vocab: int  # the full vocabulary size, specials included
    tokens: int  # tokens compared (special and added ones left out)
    specials: tuple[str, ...]  # special and added tokens, by their text
    composition: dict[str, int]  # token_category -> how many tokens
    lengths: dict[int, int]  # byte length -> how many tokens

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "n_vocab": self.n_vocab,
            "tokens": self.tokens,
            "specials": len(self.specials),
            "composition": self.composition,
            "lengths": {str(k): v for k, v in sorted(self.lengths.items())},
        }


@dataclass
class VocabDiff:
    """The comparison of 2-4 vocabularies by token bytes (see :func:`compare_vocabularies`).

    Sides are numbered in the order given; a *combination* is a bit mask of sides (bit ``k``:
    side ``k``), as in an UpSet chart.
    """

    sides: tuple[VocabSide, ...]
    _sets: tuple[set[bytes], ...] = field(repr=False)  # never changed
    _ids: tuple[dict[bytes, int], ...] = field(repr=False)
    _categories: Mapping[bytes, str] = field(repr=False)
    _exclusive: dict[int, int] = field(repr=False)
    _same_id: dict[tuple[int, int], int] = field(repr=False)
    _prefix: dict[tuple[int, int], int] = field(repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sides)

    def exclusive_counts(self) -> dict[int, int]:
        """Every combination (bit mask, 1 to 2**n - 1) -> tokens held by exactly those sides."""
        return dict(self._exclusive)

    def combinations(self) -> list[int]:
        """Every combination's mask, by how many sides it holds, then by side."""
        n = len(self.sides)
        return sorted(range(1, 1 << n), key=lambda m: (m.bit_count(), [-(m >> k & 1) for k in range(n)]))

    def inclusive_count(self, mask: int) -> int:
        """Tokens held by all the sides of ``mask`` (and maybe others)."""
        return sum(c for m, c in self._exclusive.items() if m & mask == mask)

    def shared_count(self, a: int, b: int) -> int:
        return self.inclusive_count(1 << a | 1 << b)

    def only_count(self, k: int) -> int:
        """Tokens that side ``k`` holds and no other side does."""
        return self._exclusive.get(1 << k, 0)

    def same_id(self, a: int, b: int) -> int:
        """Tokens of both sides ``a`` and ``b`` with the same id in both."""
        return self._same_id[min(a, b), max(a, b)]

    def id_prefix(self, a: int, b: int) -> int:
        """The longest run of ids from 0 on that are the same token in both sides ``a`` and ``b``:
        when one vocabulary extends another, the size of the one extended."""
        return self._prefix[min(a, b), max(a, b)]

    def tokens(self, mask: int, *, exact: bool = True) -> list[bytes]:
        """The tokens of one combination: held by exactly the sides of ``mask`` (``exact``) or by
        at least those; sorted by byte value."""
        return byte_order(self.members(mask, exact=exact))

    def members(self, mask: int, *, exact: bool = True, should_stop: ShouldStop = None) -> list[bytes]:
        """:meth:`tokens` in no particular order (see :func:`_members`)."""
        inside = [self._sets[k] for k in range(len(self.sides)) if mask >> k & 1]
        outside = [self._sets[k] for k in range(len(self.sides)) if not mask >> k & 1] if exact else []
        return _members(inside, outside, should_stop)

    def only_tokens(self, k: int) -> list[bytes]:
        return self.tokens(1 << k)

    def shared_tokens(self, a: int, b: int) -> list[bytes]:
        return self.tokens(1 << a | 1 << b, exact=False)

    def token_id(self, k: int, token: bytes) -> int | None:
        """The token's id in side ``k``, or ``None`` if that side does not hold it."""
        return self._ids[k].get(token)

    def ids_of(self, k: int) -> Mapping[bytes, int]:
        """Side ``k``'s tokens and their ids (read-only)."""
        return MappingProxyType(self._ids[k])

    def category(self, token: bytes) -> str:
        got = self._categories.get(token)
        return got if got is not None else token_category(token)

    def shared_specials(self, a: int, b: int) -> list[str]:
        return sorted(set(self.sides[a].specials) & set(self.sides[b].specials))

    def category_order(self) -> list[str]:
        """Every category any side has: the non-script ones first, then scripts by their total
        count, then mixed scripts and other symbols."""
        total: Counter[str] = Counter()
        for s in self.sides:
            total.update(s.composition)
        fixed = set(CATEGORIES_FIRST) | set(CATEGORIES_LAST)
        scripts = sorted((c for c in total if c not in fixed), key=lambda c: (-total[c], c))
        return [c for c in CATEGORIES_FIRST if c in total] + scripts + [c for c in CATEGORIES_LAST if c in total]

    def as_dict(self, a: int = 0, b: int = 1, *, lists: bool = False) -> dict:
        """The comparison of sides ``a`` and ``b`` as JSON-ready values; with ``lists``, the tokens
        of ``only_a``, ``only_b`` and ``shared`` as hex strings as well."""
        out: dict = {
            "a": self.sides[a].as_dict(),
            "b": self.sides[b].as_dict(),
            "shared": self.shared_count(a, b),
            "only_a": self.inclusive_count(1 << a) - self.shared_count(a, b),
            "only_b": self.inclusive_count(1 << b) - self.shared_count(a, b),
            "same_id": self.same_id(a, b),
            "id_prefix": self.id_prefix(a, b),
            "shared_specials": self.shared_specials(a, b),
        }
        if len(self.sides) > 2:
            out["combinations"] = [
                {
                    "sides": [self.sides[k].name for k in range(len(self.sides)) if m >> k & 1],
                    "tokens": self._exclusive[m],
                }
                for m in self.combinations()
            ]
        if lists:
            ab = 1 << a | 1 << b
            out["tokens"] = {
                "only_a": [t.hex() for t in self._pair_only(a, b)],
                "only_b": [t.hex() for t in self._pair_only(b, a)],
                "shared": [t.hex() for t in self.tokens(ab, exact=False)],
            }
        return out

    def _pair_only(self, a: int, b: int) -> list[bytes]:
        return byte_order(list(self._sets[a] - self._sets[b]))


def _mergeable(tok: Tokenizer) -> dict[bytes, int]:
    """Token bytes -> id, special and added tokens left out."""
    apart = {*tok.special_tokens.values(), *tok.added_tokens.values()}
    # a comprehension, not dict(): the interpreter can let the GUI thread run while it copies
    return {b: i for b, i in tok.ranks.items() if i not in apart}


@dataclass(frozen=True)
class _SideFacts:
    """What a comparison needs of one tokenizer alone, whatever it is compared with."""

    ranks: dict[bytes, int]  # never changed: shared by every comparison of the tokenizer
    tokens: set[bytes]
    categories: dict[bytes, str]
    composition: dict[str, int]
    lengths: dict[int, int]


# tokenizer -> its facts: a comparison made again (a tokenizer added, the reference changed) only
# works out the tokenizers it has not seen; a tokenizer's vocabulary never changes once loaded
_FACTS: weakref.WeakKeyDictionary[Tokenizer, _SideFacts] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


def sorted_already(tok: Tokenizer) -> bool:
    """Whether a comparison has sorted ``tok``'s tokens into categories already (comparisons of
    it compute no more than set operations: a pool for :func:`compare_vocabularies` is not needed)."""
    with _FACTS_LOCK:
        return tok in _FACTS


def _side_facts(tok: Tokenizer, should_stop: ShouldStop, pool: ProcessPool | None = None) -> _SideFacts:
    """``pool``: its child sorts the tokens into categories (see :func:`sort_into_categories`)."""
    with _FACTS_LOCK:
        got = _FACTS.get(tok)
    if got is not None:
        return got
    ranks = _mergeable(tok)
    if should_stop is not None and should_stop():
        raise Cancelled()
    categories, comp = sort_into_categories(list(ranks), should_stop, pool)
    lengths: Counter[int] = Counter()
    for chunk in _slices(ranks, _CHECK_EVERY):  # (one count of 200k lengths: 8 ms in one C call)
        lengths.update(map(len, chunk))
    facts = _SideFacts(ranks, _set_of(ranks), categories, dict(comp), dict(sorted(lengths.items())))
    with _FACTS_LOCK:
        return _FACTS.setdefault(tok, facts)


def _set_of(items: Iterable[T], step: int = _CHECK_EVERY, should_stop: ShouldStop = None) -> set[T]:
    """``set(items)`` built a slice at a time: one C call over 200k tokens would hold the
    interpreter for tens of ms; between slices another thread can run (``should_stop`` asked)."""
    out: set[T] = set()
    for chunk in _slices(items, step):
        _tick(0, should_stop)
        out.update(chunk)
    return out


def _tick(n: int, should_stop: ShouldStop) -> None:
    if should_stop is not None and not n % _CHECK_EVERY and should_stop():
        raise Cancelled()


def _id_prefix(a: dict[bytes, int], tok_a: Tokenizer, b: dict[bytes, int], should_stop: ShouldStop = None) -> int:
    """How many ids from 0 on map to the same bytes in ``a`` and ``b`` (``tok_a``: whose
    tokens ``a`` holds, looked up by id). A walk from 0, as far as they agree."""
    n = 0
    while True:
        _tick(n, should_stop)
        try:
            t = tok_a.token_bytes(n)
        except UnknownTokenError:
            return n
        if a.get(t) != n or b.get(t) != n:
            return n
        n += 1


def _same_ids(a: dict[bytes, int], b: dict[bytes, int], should_stop: ShouldStop) -> int:
    """How many tokens ``a`` and ``b`` give the same id (looked up by C loops, a slice at a time)."""
    small, big = (a, b) if len(a) <= len(b) else (b, a)
    holds = big.items().__contains__
    n = 0
    for pairs in _slices(small.items(), _CHECK_EVERY):
        _tick(0, should_stop)
        n += sum(map(holds, pairs))
    return n


def compare_vocabularies(
    tokenizers: Sequence[tuple[str, Tokenizer]], *, should_stop: ShouldStop = None, pool: ProcessPool | None = None
) -> VocabDiff:
    """Compare 2-4 ``(name, tokenizer)`` by their tokens' bytes (special and added tokens apart).

    Set operations and one pass over the distinct tokens (to sort them into categories): two
    200k vocabularies take well under two seconds. ``should_stop`` is asked every few thousand
    tokens; a yes raises :class:`~bpeinspect.core.errors.Cancelled`. With a ``pool``, its
    children sort the tokens into categories: a window's thread then shares the interpreter
    with C loops only, not with a second of Python (start the pool early: a child takes a
    third of a second to start).
    """
    if not 2 <= len(tokenizers) <= MAX_SIDES:
        raise ValueError(f"compare 2 to {MAX_SIDES} vocabularies, not {len(tokenizers)}")
    # the collector held off (see quiet_gc): the sets and dicts of 200k tokens it builds set
    # off collections that walk them all, 20-30 ms each with every other thread locked out;
    # and then frozen where the program allows it, as a big encoding is: left young, the first
    # collection after (once anything else is frozen) walked them all, 180 ms in a window
    with quiet_gc():
        return _compare_vocabularies(tokenizers, should_stop, pool)


def _compare_vocabularies(
    tokenizers: Sequence[tuple[str, Tokenizer]], should_stop: ShouldStop, pool: ProcessPool | None
) -> VocabDiff:
    facts = [_side_facts(tok, should_stop, pool) for _, tok in tokenizers]
    ranks = tuple(f.ranks for f in facts)
    sets = tuple(f.tokens for f in facts)
    categories = ChainMap(*(f.categories for f in facts))  # no copy: each side's are shared
    sides = []
    for (name, tok), f in zip(tokenizers, facts):
        specials = tuple(sorted({*tok.special_tokens, *tok.added_tokens}))
        sides.append(VocabSide(name, tok.n_vocab, len(f.ranks), specials, dict(f.composition), dict(f.lengths)))
    diff_sides = tuple(sides)
    exclusive = _exclusive_counts(sets, should_stop)
    same_id: dict[tuple[int, int], int] = {}
    prefix: dict[tuple[int, int], int] = {}
    for a, b in itertools.combinations(range(len(ranks)), 2):
        if should_stop is not None and should_stop():
            raise Cancelled()
        same_id[a, b] = _same_ids(ranks[a], ranks[b], should_stop)
        prefix[a, b] = _id_prefix(ranks[a], tokenizers[a][1], ranks[b], should_stop)
    diff = VocabDiff(diff_sides, sets, ranks, categories, exclusive, same_id, prefix)
    order = diff.category_order()
    for side in diff_sides:  # one order for every side: non-script kinds, scripts by size, the rest
        ordered = {c: side.composition[c] for c in order if c in side.composition}
        side.composition.clear()
        side.composition.update(ordered)
    return diff


def _slices(items: Iterable[T], step: int = _CHECK_EVERY) -> Iterator[list[T]]:
    """``items`` a list of ``step`` at a time."""
    it = iter(items)
    while chunk := list(itertools.islice(it, step)):
        yield chunk


def _members(
    inside: Sequence[AbstractSet[T]], outside: Sequence[AbstractSet[T]] = (), should_stop: ShouldStop = None
) -> list[T]:
    """The items of every set of ``inside`` and of none of ``outside``, in no particular order.

    Tested an item at a time in Python, a slice at a time: set operations over 200k tokens
    are single C calls that hold the interpreter (and with it the GUI thread) for tens of ms.

    >>> sorted(_members([{1, 2, 3}, {2, 3, 4}], [{3}]))
    [2]
    """
    smallest = min(inside, key=len)
    others = [s for s in inside if s is not smallest]
    out: list[T] = []
    for chunk in _slices(smallest):
        _tick(0, should_stop)
        out.extend(t for t in chunk if all(t in s for s in others) and not any(t in s for s in outside))
    return out


def _exclusive_counts(sets: Sequence[AbstractSet[T]], should_stop: ShouldStop = None) -> dict[int, int]:
    """Bit mask -> how many items exactly the sets of the mask hold, ``should_stop`` asked
    between slices.

    Each item is counted once, with the first set that holds it: a slice of that set at a
    time, the items an earlier set holds left out, the others' membership in the later sets
    looked up and the patterns counted, all in C loops.

    >>> _exclusive_counts([{1, 2}, {2, 3}])
    {1: 1, 2: 1, 3: 1}
    >>> _exclusive_counts([{1, 2, 3}, {2, 3, 4}, {3, 4, 5}])
    {1: 1, 2: 0, 3: 1, 4: 1, 5: 0, 6: 1, 7: 1}
    """
    counts: Counter[int] = Counter()
    for k, s in enumerate(sets):
        earlier = [sets[j].__contains__ for j in range(k)]
        later = [sets[j].__contains__ for j in range(k + 1, len(sets))]
        for chunk in _slices(s, _CHECK_EVERY):
            _tick(0, should_stop)
            for held in earlier:
                chunk = list(itertools.filterfalse(held, chunk))
            if not later:
                counts[1 << k] += len(chunk)
                continue
            for pattern, n in Counter(zip(*(map(held, chunk) for held in later))).items():
                counts[sum(1 << (k + 1 + j) for j, inside in enumerate(pattern) if inside) | 1 << k] += n
    return {mask: counts[mask] for mask in range(1, 1 << len(sets))}


# -- merges ----------------------------------------------------------------------------------------


def merge_pairs(
    tok: Tokenizer, *, progress: Progress = None, should_stop: ShouldStop = None
) -> list[tuple[bytes, bytes]]:
    """Every merge of ``tok`` as the bytes of its two parts, in priority order. A rank-rule
    vocabulary (tiktoken's) stores no merges: they are recovered from the ranks, which takes
    seconds for 200k tokens the first time (the tokenizer keeps them)."""
    if tok.uses_rank_rule:
        tok.merge_graph.compute_all(progress=progress, should_stop=should_stop)
    tb = tok.token_bytes
    out: list[tuple[bytes, bytes]] = []
    for chunk in _slices(tok.merges):  # (200k merges in one comprehension: 60 ms with no check)
        _tick(0, should_stop)
        out.extend([(tb(a), tb(b)) for a, b in chunk])
    return out


@dataclass(frozen=True)
class MergeOverlap:
    """Merges (as pairs of byte strings) held by each combination of sides, and how many merges
    have the same place in the merge order of two sides."""

    names: tuple[str, ...]
    totals: tuple[int, ...]
    exclusive: dict[int, int]
    same_rank: dict[tuple[int, int], int]

    def inclusive_count(self, mask: int) -> int:
        return sum(c for m, c in self.exclusive.items() if m & mask == mask)

    def as_dict(self, a: int = 0, b: int = 1) -> dict:
        both = self.inclusive_count(1 << a | 1 << b)
        return {
            "merges_a": self.totals[a],
            "merges_b": self.totals[b],
            "shared": both,
            "same_rank": self.same_rank[min(a, b), max(a, b)],
        }


# tokenizer -> its merges as pairs of bytes, and their set (see _FACTS)
_MERGES: weakref.WeakKeyDictionary[Tokenizer, tuple[list[tuple[bytes, bytes]], set[tuple[bytes, bytes]]]] = (
    weakref.WeakKeyDictionary()
)


def _merge_facts(
    tok: Tokenizer, progress: Progress, should_stop: ShouldStop
) -> tuple[list[tuple[bytes, bytes]], set[tuple[bytes, bytes]]]:
    with _FACTS_LOCK:
        got = _MERGES.get(tok)
    if got is not None:
        return got
    pairs = merge_pairs(tok, progress=progress, should_stop=should_stop)
    facts = (pairs, _set_of(pairs, should_stop=should_stop))
    with _FACTS_LOCK:
        return _MERGES.setdefault(tok, facts)


def merges_in_common(
    tokenizers: Sequence[tuple[str, Tokenizer]], *, progress: Progress = None, should_stop: ShouldStop = None
) -> MergeOverlap:
    """Which merges (left bytes + right bytes) the vocabularies share (the collector held off,
    and what it builds frozen, as in :func:`compare_vocabularies`)."""
    with quiet_gc():
        return _merges_in_common(tokenizers, progress, should_stop)


def _merges_in_common(
    tokenizers: Sequence[tuple[str, Tokenizer]], progress: Progress, should_stop: ShouldStop
) -> MergeOverlap:
    lists = []
    sets = []
    for k, (_, tok) in enumerate(tokenizers):
        each = None if progress is None else (lambda d, t, k=k: progress(k * t + d, len(tokenizers) * t))
        pairs, pair_set = _merge_facts(tok, each, should_stop)
        lists.append(pairs)
        sets.append(pair_set)
    same_rank = {}
    for a, b in itertools.combinations(range(len(lists)), 2):
        same_rank[a, b] = _same_pairs(lists[a], lists[b], should_stop)
    return MergeOverlap(
        tuple(n for n, _ in tokenizers),
        tuple(len(m) for m in lists),
        _exclusive_counts(sets, should_stop),
        same_rank,
    )


def _same_pairs(a: list[T], b: list[T], should_stop: ShouldStop) -> int:
    """How many positions ``a`` and ``b`` hold the same item at, ``should_stop`` asked between slices."""
    same = 0
    for start in range(0, min(len(a), len(b)), _CHECK_EVERY):
        _tick(0, should_stop)
        end = start + _CHECK_EVERY
        same += sum(map(operator.eq, a[start:end], b[start:end]))
    return same


def composition_rows(diff: VocabDiff) -> Iterable[list[str]]:
    """CSV rows of every side's composition: ``category, side1, side2...``."""
    yield ["category", *diff.names]
    for c in diff.category_order():
        yield [c, *(str(s.composition.get(c, 0)) for s in diff.sides)]


# token lengths in bytes, bucketed: one bucket each up to 8, then ever wider ranges
LENGTH_BUCKETS: tuple[tuple[int, int], ...] = (
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 4),
    (5, 5),
    (6, 6),
    (7, 7),
    (8, 8),
    (9, 12),
    (13, 16),
    (17, 24),
    (25, 32),
    (33, 64),
    (65, 128),
    (129, 256),
    (257, 1 << 62),
)


def length_buckets(hists: Sequence[Mapping[int, int]]) -> tuple[list[str], list[list[int]]]:
    """The labels of :data:`LENGTH_BUCKETS` and, per bucket, the count of each histogram
    (token length in bytes -> tokens), leaving out the empty buckets past the last filled one.

    >>> labels, rows = length_buckets([{1: 256, 3: 10, 10: 3, 11: 1}, {300: 1}])
    >>> list(zip(labels, rows))[::3]
    [('1', [256, 0]), ('4', [0, 0]), ('7', [0, 0]), ('13-16', [0, 0]), ('33-64', [0, 0]), ('257+', [0, 1])]
    >>> length_buckets([{2: 5}])
    (['1', '2'], [[0], [5]])
    """
    last = LENGTH_BUCKETS[-1][1]
    labels = [str(lo) if lo == hi else f"{lo}+" if hi == last else f"{lo}-{hi}" for lo, hi in LENGTH_BUCKETS]
    rows = [[sum(c for n, c in h.items() if lo <= n <= hi) for h in hists] for lo, hi in LENGTH_BUCKETS]
    while rows and not any(rows[-1]):
        rows.pop()
        labels.pop()
    return labels, rows


# -- lists ----------------------------------------------------------------------------------------


def byte_order(tokens: list[bytes], should_stop: ShouldStop = None) -> list[bytes]:
    """``sorted(tokens)``, sorted by numpy (which lets other threads run; ``sorted`` of 100k
    byte strings holds the interpreter for tens of ms): fixed-width bytes ignore trailing NULs,
    so the length breaks those ties.

    >>> byte_order([b"b", b"a\\x00", b"a", b""])
    [b'', b'a', b'a\\x00', b'b']
    """
    import numpy as np

    if len(tokens) < 2:
        return list(tokens)
    if should_stop is not None and should_stop():
        raise Cancelled()
    # filled a slice at a time: one np.array() over 200k tokens holds the interpreter for 25 ms
    n, step = len(tokens), _CHECK_EVERY
    lengths = np.empty(n, dtype=np.int64)
    for k in range(0, n, step):
        lengths[k : k + step] = [len(t) for t in tokens[k : k + step]]
    arr = np.empty(n, dtype=f"S{max(1, int(lengths.max()))}")
    for k in range(0, n, step):
        _tick(0, should_stop)
        arr[k : k + step] = tokens[k : k + step]
    by = np.lexsort((lengths, arr))
    out: list[bytes] = []
    for k in range(0, n, step):
        out.extend([tokens[i] for i in by[k : k + step].tolist()])
    return out


SORT_KEYS = ("token", "length", "category")  # and "id:K" for side K's id


def list_tokens(
    diff: VocabDiff,
    mask: int,
    *,
    exact: bool = True,
    search: bytes = b"",
    sort: str = "id:0",
    descending: bool = False,
    should_stop: ShouldStop = None,
) -> list[bytes]:
    """The tokens of one combination (see :meth:`VocabDiff.tokens`) that hold ``search``, sorted
    by ``sort``: ``token`` (bytes), ``length``, ``category`` or ``id:K`` (side K's id; tokens it
    lacks last). Ties go by bytes. The keys are made a few thousand tokens at a time (asking
    ``should_stop`` between) and sorted by numpy, which lets other threads run.

    >>> from bpeinspect.core import Tokenizer
    >>> a = Tokenizer.from_merges([(104, 105), (256, 33)], pattern=None)
    >>> b = Tokenizer.from_merges([(104, 105), (111, 107)], pattern=None)
    >>> d = compare_vocabularies([("a", a), ("b", b)])
    >>> list_tokens(d, 1 | 2, exact=False, search=b"h", sort="length", descending=True)
    [b'hi', b'h']
    """
    import numpy as np

    tokens = byte_order(diff.members(mask, exact=exact, should_stop=should_stop), should_stop)
    if search:
        tokens = [t for t in tokens if search in t]
    if should_stop is not None and should_stop():
        raise Cancelled()
    if sort == "token" or not tokens:
        return tokens[::-1] if descending else tokens
    keys: list[int] = []
    if sort == "length":
        keys = [len(t) for t in tokens]
    elif sort == "category":
        names = sorted({diff.category(t) for t in tokens})
        code = {n: k for k, n in enumerate(names)}
        for k in range(0, len(tokens), _CHECK_EVERY):
            _tick(0, should_stop)
            keys.extend(code[diff.category(t)] for t in tokens[k : k + _CHECK_EVERY])
    elif sort.startswith("id:") and sort[3:].isdigit() and int(sort[3:]) < len(diff.sides):
        ranks = diff.ids_of(int(sort[3:]))
        missing = 1 << 62
        for k in range(0, len(tokens), _CHECK_EVERY):
            _tick(0, should_stop)
            keys.extend(ranks.get(t, missing) for t in tokens[k : k + _CHECK_EVERY])
    else:
        raise ValueError(f"cannot sort by {sort!r}")
    arr = np.empty(len(keys), dtype=np.int64)
    for k in range(0, len(keys), _CHECK_EVERY):  # a slice at a time, as in byte_order
        arr[k : k + _CHECK_EVERY] = keys[k : k + _CHECK_EVERY]
    by = np.argsort(arr, kind="stable")  # tokens are in byte order already: ties keep it
    if descending:
        by = by[::-1]
    out: list[bytes] = []
    for k in range(0, len(by), _CHECK_EVERY):
        out.extend([tokens[i] for i in by[k : k + _CHECK_EVERY].tolist()])
    return out
