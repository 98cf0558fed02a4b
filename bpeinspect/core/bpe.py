"""Byte pair merging of one pre-token.

Two merge rules exist in the wild and both are here:

* **rank rule** (tiktoken): two adjacent parts may merge when their concatenated bytes are a
  token; the pair whose result has the lowest rank merges first, leftmost on ties.
* **pair rule** (Hugging Face, minbpe, llama.cpp): only the listed merges ``(left, right)``
  apply, in the order of the merge list, leftmost on ties.

Short pieces use a simple quadratic scan (fast for the usual 1-20 bytes); long pieces use a
heap over a linked list so that ``"x" * 1_000_000`` stays near-linear. Long pieces that repeat
a few symbols (runs of one character, rows of ZWJ emoji) are first merged a whole rank at a
time with ``str.replace`` (:func:`_merge_levels`), for as long as that provably does what the
heap would do.

>>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abab": 3}
>>> [bytes(p) for p in rank_parts(b"abab", ranks)]
[b'abab']
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, compress
from typing import Any, Protocol, cast, overload

import numpy as np

_INF = 1 << 62
LARGE_PIECE = 96  # bytes; above this the heap version wins
BULK_PIECE = 256  # symbols; from here on a repetitive piece is merged a rank at a time first
_LEVEL_WORK = 32  # level-wise merging scans at most this many times the piece's length
LONG_PIECE = 256  # characters; longer pre-tokens are cached apart, within LONG_BUDGET
LONG_BUDGET = 1 << 22  # characters of long pre-tokens kept
_SHIFT = 21  # symbol codes are below 0x110000 < 2**21: a pair is (left << _SHIFT) | right
_LOW = (1 << _SHIFT) - 1
_BYTES = [bytes([b]) for b in range(256)]


class RankLookup(Protocol):
    """What merging by rank reads of a rank table: ``get`` (a dict, or a view leaving a key out)."""

    @overload
    def get(self, key: Any, /) -> int | None: ...

    @overload
    def get(self, key: Any, default: int, /) -> int: ...


def rank_bounds(piece: bytes | str, ranks: RankLookup, max_rank: int = _INF) -> list[int]:
    """Cut positions (``[0, ..., len(piece)]``) after merging ``piece`` by the rank rule
    (bytes; or characters, with a table of piece texts, for SentencePiece-style models).

    Merges whose result has rank ``>= max_rank`` are not applied (used to recover a token's
    parents from the ranks alone).
    """
    n = len(piece)
    if n <= 1:
        return [0, n] if n else [0]
    if n > LARGE_PIECE:
        if n >= BULK_PIECE:
            state, payload, done = _rank_levels(piece, ranks, max_rank)
            starts = list(accumulate(map(len, map(payload.__getitem__, map(ord, state))), initial=0))
            if done:
                return starts
            return _rank_bounds_heap(piece, ranks, max_rank, starts[:-1])
        return _rank_bounds_heap(piece, ranks, max_rank)
    get = ranks.get
    bounds = list(range(n + 1))
    # pair_ranks[i] is the rank of merging part i with part i + 1
    pair_ranks = [get(piece[i : i + 2], _INF) for i in range(n - 1)]
    if max_rank < _INF:
        pair_ranks = [r if r < max_rank else _INF for r in pair_ranks]
    while True:
        best = min(pair_ranks) if pair_ranks else _INF
        if best == _INF:
            break
        i = pair_ranks.index(best)
        # merge part i and part i + 1: drop boundary i + 1
        del bounds[i + 1]
        del pair_ranks[i]
        if i < len(pair_ranks):
            r = get(piece[bounds[i] : bounds[i + 2]], _INF)
            pair_ranks[i] = r if r < max_rank else _INF
        if i > 0:
            r = get(piece[bounds[i - 1] : bounds[i + 1]], _INF)
            pair_ranks[i - 1] = r if r < max_rank else _INF
    return bounds


def _rank_bounds_heap(
    piece: bytes | str, ranks: RankLookup, max_rank: int, starts: Sequence[int] | None = None
) -> list[int]:
    # Parts are named by their start offset and linked through nxt/prv. The heap holds plain
    # ints ``rank * (n + 1) + start`` (cheaper to compare than tuples); an entry is live only
    # while cur[start] still holds it. Equal keys always mean the same pair: extents only grow,
    # so the bytes of the pair at one start, and hence their rank, never repeat.
    # ``starts``: where the parts begin when some merging is already done (else every symbol).
    n = len(piece)
    size = n + 1
    get = ranks.get
    cur = [-1] * n
    heap: list[int] = []
    if starts is None:
        starts = range(n)
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
    else:
        nxt = [n] * n
        prv = [-1] * n
        for a, b in zip(starts, starts[1:]):
            nxt[a] = b
            prv[b] = a
    for a in starts:
        b = nxt[a]
        if b < n:
            r = get(piece[a : nxt[b]])
            if r is not None and r < max_rank:
                cur[a] = k = r * size + a
                heap.append(k)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        k = pop(heap)
        a = k % size
        if cur[a] != k:
            continue
        b = nxt[a]
        end = nxt[b]
        nxt[a] = end
        if end < n:
            prv[end] = a
        cur[a] = cur[b] = -1
        p = prv[a]
        if p >= 0:
            r = get(piece[p:end])
            if r is not None and r < max_rank:
                cur[p] = k = r * size + p
                push(heap, k)
            else:
                cur[p] = -1
        if end < n:
            r = get(piece[a : nxt[end]])
            if r is not None and r < max_rank:
                cur[a] = k = r * size + a
                push(heap, k)
    bounds = [0]
    i = 0
    while i < n:
        i = nxt[i]
        bounds.append(i)
    return bounds


def rank_parts(piece: bytes, ranks: Mapping[bytes, int]) -> list[bytes]:
    """The parts of ``piece`` after rank-rule merging."""
    b = rank_bounds(piece, ranks)
    return [piece[b[i] : b[i + 1]] for i in range(len(b) - 1)]


def rank_encode(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Token ids of ``piece`` by the rank rule (the rank of a token is its id).

    >>> rank_encode(b"abab", {b"a": 0, b"b": 1, b"ab": 2})
    [2, 2]
    """
    if len(piece) >= BULK_PIECE:
        state, payload, done = _rank_levels(piece, ranks, _INF)
        if done:
            table = np.array([ranks.get(p, -1) for p in payload], dtype=np.int64)[_codes(state)]
            if len(table) and table.min() >= 0:  # else a byte without a token: KeyError below
                return table.tolist()
    b = rank_bounds(piece, ranks)
    return [ranks[piece[b[i] : b[i + 1]]] for i in range(len(b) - 1)]


def _codes(state: str) -> np.ndarray:
    return np.frombuffer(state.encode("utf-32-le", "surrogatepass"), np.uint32)


def _merge_levels(
    s: str, rank_of: Callable[[int, int], int], made: Callable[[int, int], Any], code: Callable[[Any], int]
) -> tuple[str, bool]:
    """Merge ``s``, a string of symbol codes, a whole rank at a time while that is exact and
    pays; the state reached and whether no merge is left. ``rank_of(a, b)`` is the rank of
    merging codes ``a`` and ``b`` (``_INF``: none), ``made(a, b)`` what that makes, and
    ``code(made)`` gives a result its code.

    A step takes the lowest rank of any adjacent pair and merges every pair of that rank at
    once, leftmost first and without overlaps (``str.replace``; a regex alternation when
    several pairs make the same token), in C. The heap merges the same pairs in the same
    order, unless a pair formed by the step ranks no higher: the heap would merge that pair
    in between. Such a pair is either in the next state (its lowest rank is then not above
    the step's: go back one step) or was formed with a symbol that the step merged next
    (checked before the step). On those, when one rank makes two different tokens (equal
    SentencePiece scores), on pieces with many distinct pairs, and when the steps have
    scanned ``_LEVEL_WORK`` times the piece (steps that merge little, such as a word glued to
    a run), the caller's heap takes over from the last exact state.
    """
    memo: dict[int, int] = {}
    prev, prev_rank = s, -1
    work, budget = 0, _LEVEL_WORK * len(s)  # symbols scanned: a step costs ~30 ns a symbol, the heap ~1.5 us
    while len(s) > 1:
        c = _codes(s).astype(np.int64)
        keys = np.unique((c[:-1] << _SHIFT) | c[1:]).tolist()
        if len(keys) * 16 > len(s):
            return prev, False
        for k in keys:
            if k not in memo:
                memo[k] = rank_of(k >> _SHIFT, k & _LOW)
        found = list(map(memo.__getitem__, keys))
        r = min(found)
        if r <= prev_rank:
            return prev, False
        if r >= _INF:
            return s, True
        splits = [(k >> _SHIFT, k & _LOW) for k, q in zip(keys, found) if q == r]
        result = made(*splits[0])
        if any(made(a, b) != result for a, b in splits[1:]):
            return s, False
        t = code(result)
        if any(rank_of(t, a) <= r for a, _ in splits):
            return s, False
        work += len(s)
        if work > budget:
            return s, False
        pats = [chr(a) + chr(b) for a, b in splits]
        prev, prev_rank = s, r
        if len(pats) == 1:
            s = s.replace(pats[0], chr(t))
        else:
            s = re.sub("|".join(map(re.escape, pats)), chr(t).replace("\\", "\\\\"), s)
    return s, True


def _rank_levels(piece: bytes | str, ranks: RankLookup, max_rank: int) -> tuple[str, list[Any], bool]:
    """:func:`_merge_levels` for the rank rule: the state, what each code stands for, done?"""
    payload: list[Any]
    if isinstance(piece, bytes):
        s, payload = piece.decode("latin-1"), list(_BYTES)
    else:  # SentencePiece-style: characters
        payload = list(set(piece))
        s = piece.translate({ord(ch): i for i, ch in enumerate(payload)})
    get = ranks.get

    def rank_of(a: int, b: int) -> int:
        r = get(payload[a] + payload[b], _INF)
        return r if r < max_rank else _INF

    def made(a: int, b: int) -> bytes:
        return payload[a] + payload[b]

    def code(part: bytes) -> int:
        payload.append(part)
        return len(payload) - 1

    s, done = _merge_levels(s, rank_of, made, code)
    return s, payload, done


PairMerges = Mapping[tuple[int, int], int]  # (left, right) -> merge rank
# merge rank -> id of the token it makes (no (rank, id) tuple per merge to build at load)
MergeResults = Sequence[int] | Mapping[int, int]


def minbpe_ranks(merges: Sequence[tuple[int, int]]) -> dict[bytes, int]:
    """A minbpe-style vocabulary: ids 0-255 are the bytes and merge ``i`` makes id ``256 + i``."""
    vocab = {i: bytes([i]) for i in range(256)}
    for i, (a, b) in enumerate(merges):
        if a not in vocab or b not in vocab:
            raise ValueError(f"merge {i} uses token {a if a not in vocab else b}, which does not exist yet")
        vocab[256 + i] = vocab[a] + vocab[b]
    ranks: dict[bytes, int] = {}
    for i, bts in vocab.items():
        ranks.setdefault(bts, i)
    if len(ranks) != len(vocab):
        raise ValueError("two merges make the same token")
    return ranks


def pair_merge_table(
    ranks: Mapping[bytes, int],
    decoder: Mapping[int, bytes],
    merges: Sequence[tuple[int, int]],
    merge_results: Sequence[int] | None = None,
    keep: str = "first",
) -> tuple[list[tuple[int, int]], dict[tuple[int, int], int], list[int]]:
    """The merge list, the pair rule's table (pair -> rank) and the id each rank makes; a pair's
    first listing wins (``keep="last"``: its last). ``ValueError`` for a token not in ``ranks``."""
    if merge_results is not None:
        em = merges if isinstance(merges, list) else list(merges)
        news: list[int | None] = list(merge_results)
        if len(news) != len(em):
            raise ValueError("merge_results does not match the merges")
    else:
        em = [(int(a), int(b)) for a, b in merges]
        made = ranks.get
        try:
            news = [made(decoder[a] + decoder[b]) for a, b in em]
        except KeyError:
            news = [
                made(decoder.get(a, b"\0") + decoder.get(b, b"\0")) if a in decoder and b in decoder else None
                for a, b in em
            ]
    if None in news:
        rank = news.index(None)
        a, b = em[rank]
        raise ValueError(f"merge {rank} ({a}, {b}) makes a token that is not in the vocabulary")
    table = dict(zip(em, range(len(em))))
    if len(table) == len(em):  # no pair listed twice (the usual case): built once, forwards
        return em, table, cast("list[int]", news)  # no None left (checked above)
    if keep == "last":  # Hugging Face: a pair listed again replaces its earlier listing
        kept = [table[p] == r for r, p in enumerate(em)]
        em, news = list(compress(em, kept)), list(compress(news, kept))
        return em, dict(zip(em, range(len(em)))), cast("list[int]", news)
    # built from the end so that the first listing of a pair is written last
    return em, dict(zip(reversed(em), range(len(em) - 1, -1, -1))), cast("list[int]", news)


def pair_encode(ids: list[int], merges: PairMerges, made: MergeResults) -> list[int]:
    """Apply merges (pair -> rank; ``made[rank]``: the id made) in rank order, leftmost first.

    >>> pair_encode([97, 98, 97, 98], {(97, 98): 0, (256, 256): 1}, [256, 257])
    [257]
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    if n > LARGE_PIECE:
        if n >= BULK_PIECE and min(ids) >= 0:
            # codes are the ids themselves: the pair rule looks at nothing else
            get_merge = merges.get

            def rank_of(a: int, b: int) -> int:
                return get_merge((a, b), _INF)

            state, done = _merge_levels("".join(map(chr, ids)), rank_of, lambda a, b: made[merges[(a, b)]], int)
            ids = _codes(state).tolist()
            if done:
                return ids
        return _pair_encode_heap(ids, merges, made)
    get = merges.get
    parts = list(ids)
    none = _INF
    cand = [get((parts[i], parts[i + 1]), none) for i in range(n - 1)]
    while cand:
        best = min(cand)
        if best == _INF:
            break
        i = cand.index(best)
        new = made[best]
        parts[i] = new
        del parts[i + 1]
        del cand[i]
        if i < len(cand):
            cand[i] = get((new, parts[i + 1]), none)
        if i > 0:
            cand[i - 1] = get((parts[i - 1], new), none)
    return parts


def _pair_encode_heap(ids: list[int], merges: PairMerges, made: MergeResults) -> list[int]:
    # Same layout as _rank_bounds_heap: int keys ``rank * (n + 1) + position``; a given rank
    # names one (left, right) pair, so a key that is still current is still a valid merge.
    n = len(ids)
    size = n + 1
    get = merges.get
    val = list(ids)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    cur = [-1] * n
    heap: list[int] = []
    for i in range(n - 1):
        m = get((val[i], val[i + 1]))
        if m is not None:
            cur[i] = k = m * size + i
            heap.append(k)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        k = pop(heap)
        a = k % size
        if cur[a] != k:
            continue
        b = nxt[a]
        new = made[k // size]
        val[a] = new
        end = nxt[a] = nxt[b]
        if end < n:
            prv[end] = a
        cur[a] = cur[b] = -1
        p = prv[a]
        if p >= 0:
            m = get((val[p], new))
            if m is not None:
                cur[p] = k = m * size + p
                push(heap, k)
            else:
                cur[p] = -1
        if end < n:
            m = get((new, val[end]))
            if m is not None:
                cur[a] = k = m * size + a
                push(heap, k)
    out = []
    i = 0
    while i < n:
        out.append(val[i])
        i = nxt[i]
    return out


def make_piece_encoder(
    ranks: Mapping[bytes, int],
    pair_merges: PairMerges | None,
    byte_ids: list[int] | None,
    ignore_merges: bool,
    *,
    drop: bytes = b"",
    barriers: bool = False,
    made: MergeResults = (),
) -> Callable[[bytes], list[int]]:
    """The function that turns one pre-token's bytes into ids for a tokenizer's merge rule.

    Bytes in ``drop`` have no token: they are removed before merging, so their neighbours
    become adjacent (what Hugging Face ``tokenizers`` does with a symbol missing from the
    vocabulary when there is no unknown token). With ``barriers`` they are dropped after
    merging, as llama.cpp does: the bytes on either side of one are never merged together.

    >>> enc = make_piece_encoder({b"a": 0, b"b": 1, b"ab": 2}, None, None, False, drop=b"\x03")
    >>> enc(b"a\x03b"), enc(b"\x03")
    ([2], [])
    """
    if pair_merges is None:

        def encode_rank(piece: bytes) -> list[int]:
            t = ranks.get(piece)
            if t is not None:
                return [t]
            return rank_encode(piece, ranks)

        encode = encode_rank
    else:
        assert byte_ids is not None

        def encode_pairs(piece: bytes) -> list[int]:
            if ignore_merges:
                t = ranks.get(piece)
                if t is not None:
                    return [t]
            return pair_encode([byte_ids[b] for b in piece], pair_merges, made)

        encode = encode_pairs
    if not drop:
        return encode
    pair_ids = byte_ids if byte_ids is not None else []  # set whenever pair_merges is

    def encode_dropping(piece: bytes) -> list[int]:
        kept = piece.translate(None, drop)
        if len(kept) == len(piece):
            return encode(piece)
        if not kept:
            return []
        if barriers:  # each run between dropped bytes merges on its own
            runs = piece.translate(bytes.maketrans(drop, drop[:1] * len(drop))).split(drop[:1])
            if pair_merges is None:
                return [t for run in runs if run for t in rank_encode(run, ranks)]
            return [t for run in runs if run for t in pair_encode([pair_ids[b] for b in run], pair_merges, made)]
        if pair_merges is None:
            return rank_encode(kept, ranks)
        # as in Hugging Face: the whole piece (with its dropped byte) is no token, so merge
        return pair_encode([pair_ids[b] for b in kept], pair_merges, made)

    return encode_dropping


class PieceCache(dict):
    """Pre-token text -> token ids (a tuple); a miss runs ``encode_piece`` and remembers the result.

    ``encode_piece`` takes the pre-token's UTF-8 bytes, or with ``as_text`` the text itself
    (SentencePiece-style tokenizers merge characters). A pre-token that is a whole token
    costs its piece encoder one dict lookup on its first miss; the cache is not seeded with
    every token's text, which cost more (time and memory for a 200k vocabulary) than the
    misses it saved on a 2 MB text.

    Pre-tokens of :data:`LONG_PIECE` characters or more (runs of spaces, a row of emoji, a
    line of ``=``) are kept apart, the most recent ones up to :data:`LONG_BUDGET` characters
    in all, so that a long run that comes back costs one hash instead of a merge.
    """

    def __init__(self, encode_piece: Callable[[Any], list[int]], *, as_text: bool = False) -> None:
        super().__init__()
        self._encode_piece = encode_piece
        self._as_text = as_text
        self._long: dict[str, tuple[int, ...]] = {}
        self._long_chars = 0

    def _encode(self, piece: str) -> tuple[int, ...]:
        return tuple(self._encode_piece(piece if self._as_text else piece.encode("utf-8")))

    def __missing__(self, piece: str) -> tuple[int, ...]:
        if len(piece) < LONG_PIECE:
            ids = self[piece] = self._encode(piece)
            return ids
        long = self._long
        got = long.get(piece)
        if got is None:
            got = long[piece] = self._encode(piece)
            self._long_chars += len(piece)
            while self._long_chars > LONG_BUDGET:  # the oldest go first
                old = next(iter(long))
                self._long_chars -= len(old)
                del long[old]
        return got
