"""Byte pair merging of one pre-token.

Two merge rules exist in the wild and both are here:

* **rank rule** (tiktoken): two adjacent parts may merge when their concatenated bytes are a
  token; the pair whose result has the lowest rank merges first, leftmost on ties.
* **pair rule** (Hugging Face, minbpe, llama.cpp): only the listed merges ``(left, right)``
  apply, in the order of the merge list, leftmost on ties.

Short pieces use a simple quadratic scan (fast for the usual 1-20 bytes); long pieces use a
heap over a linked list so that ``"x" * 1_000_000`` stays near-linear.

>>> ranks = {b"a": 0, b"b": 1, b"ab": 2, b"abab": 3}
>>> [bytes(p) for p in rank_parts(b"abab", ranks)]
[b'abab']
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from itertools import islice

_INF = 1 << 62
LARGE_PIECE = 96  # bytes; above this the heap version wins


def rank_bounds(piece: bytes, ranks: Mapping[bytes, int], max_rank: int = _INF) -> list[int]:
    """Cut positions (``[0, ..., len(piece)]``) after merging ``piece`` by the rank rule.

    Merges whose result has rank ``>= max_rank`` are not applied (used to recover a token's
    parents from the ranks alone).
    """
    n = len(piece)
    if n <= 1:
        return [0, n] if n else [0]
    if n > LARGE_PIECE:
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


def _rank_bounds_heap(piece: bytes, ranks: Mapping[bytes, int], max_rank: int) -> list[int]:
    # Parts are named by their start offset and linked through nxt/prv. The heap holds plain
    # ints ``rank * (n + 1) + start`` (cheaper to compare than tuples); an entry is live only
    # while cur[start] still holds it. Equal keys always mean the same pair: extents only grow,
    # so the bytes of the pair at one start, and hence their rank, never repeat.
    n = len(piece)
    size = n + 1
    get = ranks.get
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    cur = [-1] * n
    heap: list[int] = []
    for i in range(n - 1):
        r = get(piece[i : i + 2])
        if r is not None and r < max_rank:
            cur[i] = k = r * size + i
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
    b = rank_bounds(piece, ranks)
    return [ranks[piece[b[i] : b[i + 1]]] for i in range(len(b) - 1)]


PairMerges = Mapping[tuple[int, int], tuple[int, int]]  # (left, right) -> (merge rank, new id)


def pair_encode(ids: list[int], merges: PairMerges) -> list[int]:
    """Apply listed merges to ``ids`` in merge-rank order, leftmost first on ties.

    >>> pair_encode([97, 98, 97, 98], {(97, 98): (0, 256), (256, 256): (1, 257)})
    [257]
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    if n > LARGE_PIECE:
        return _pair_encode_heap(ids, merges)
    get = merges.get
    parts = list(ids)
    none = (_INF, -1)
    cand = [get((parts[i], parts[i + 1]), none) for i in range(n - 1)]
    while cand:
        best = min(cand)
        if best[0] == _INF:
            break
        i = cand.index(best)
        new = best[1]
        parts[i] = new
        del parts[i + 1]
        del cand[i]
        if i < len(cand):
            cand[i] = get((new, parts[i + 1]), none)
        if i > 0:
            cand[i - 1] = get((parts[i - 1], new), none)
    return parts


def _pair_encode_heap(ids: list[int], merges: PairMerges) -> list[int]:
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
            cur[i] = k = m[0] * size + i
            heap.append(k)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        k = pop(heap)
        a = k % size
        if cur[a] != k:
            continue
        b = nxt[a]
        new = merges[(val[a], val[b])][1]
        val[a] = new
        end = nxt[a] = nxt[b]
        if end < n:
            prv[end] = a
        cur[a] = cur[b] = -1
        p = prv[a]
        if p >= 0:
            m = get((val[p], new))
            if m is not None:
                cur[p] = k = m[0] * size + p
                push(heap, k)
            else:
                cur[p] = -1
        if end < n:
            m = get((new, val[end]))
            if m is not None:
                cur[a] = k = m[0] * size + a
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
    drop: bytes = b"",
) -> Callable[[bytes], list[int]]:
    """The function that turns one pre-token's bytes into ids for a tokenizer's merge rule.

    Bytes in ``drop`` have no token: they are removed before merging, so their neighbours
    become adjacent (what Hugging Face ``tokenizers`` does with a symbol missing from the
    vocabulary when there is no unknown token).

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
            return pair_encode([byte_ids[b] for b in piece], pair_merges)

        encode = encode_pairs
    if not drop:
        return encode

    def encode_dropping(piece: bytes) -> list[int]:
        kept = piece.translate(None, drop)
        if len(kept) == len(piece):
            return encode(piece)
        if not kept:
            return []
        if pair_merges is None:
            return rank_encode(kept, ranks)
        # as in Hugging Face: the whole piece (with its dropped byte) is no token, so merge
        return pair_encode([byte_ids[b] for b in kept], pair_merges)  # type: ignore[index]

    return encode_dropping


class PieceCache(dict):
    """Pre-token text -> token ids (a tuple); a miss runs BPE and remembers the result.

    ``whole`` maps the text of every token that is its own encoding to its id: those
    pre-tokens (most of them) never reach BPE. The cache starts as a copy of it.
    """

    def __init__(self, encode_piece: Callable[[bytes], list[int]], whole: Mapping[bytes, int] | None) -> None:
        super().__init__()
        self._encode_piece = encode_piece
        self._whole = whole
        self._seeded = False  # seeded at the first miss, so that opening a vocabulary stays cheap

    def reset(self) -> None:
        self.clear()
        self._seeded = True
        if self._whole:
            # Texts of tokens that are not valid UTF-8 become keys with lone surrogates, which
            # no pre-token has (they are replaced before encoding). In slices: one C-level
            # update of 200k entries would hold the GIL (and a GUI thread) for ~50 ms.
            items = iter(self._whole.items())
            while chunk := list(islice(items, 8192)):
                self.update([(b.decode("utf-8", "surrogateescape"), (i,)) for b, i in chunk])

    def __missing__(self, piece: str) -> tuple[int, ...]:
        if not self._seeded:
            self.reset()
            if piece in self:
                return self[piece]
        ids = tuple(self._encode_piece(piece.encode("utf-8")))
        if len(piece) < 256:  # huge one-off pieces would only bloat the cache
            self[piece] = ids
        return ids
