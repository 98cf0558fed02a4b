"""Merges mapped to ids by their bytes, in bulk with numpy: GGUF's merges.

Mapping a big vocabulary's merges as Python strings costs three dictionary lookups of new
strings a merge (1.5 million for Gemma 4's 515k merges), each hashing its string first, after
decoding and splitting them. Here no merge becomes a Python string: the bytes of every token and
every merge part are hashed all at once with a polynomial hash (so a merge's result hashes from
its two parts), looked up in buckets of the sorted key hashes, and then compared byte for byte
with the key found: a hash collision can never give a wrong id, only a merge left to the usual
path. (Tried on ``tokenizer.json`` too, found by their quotes: no faster there on a quiet
machine than the dictionary lookups, whose strings the JSON parser makes anyway.)
"""

from __future__ import annotations

import functools

import numpy as np

_U64 = np.uint64
_B = 0x5851F42D4C957F2D  # odd: invertible modulo 2**64
_WINDOW = 1 << 16  # bytes of text hashed at a time (its prefix sums stay in the cache)
_MERGES_AT_ONCE = 1 << 16  # merges mapped at a time (small arrays, used again)


@functools.lru_cache(maxsize=4)
def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``B**k`` and ``B**-k`` modulo 2**64 for ``k`` in ``0..n``."""
    pw = np.empty(n + 1, dtype=_U64)
    inv = np.empty(n + 1, dtype=_U64)
    pw[0] = inv[0] = 1
    pw[1:] = _B
    inv[1:] = _U64(pow(_B, -1, 1 << 64))
    with np.errstate(over="ignore"):
        np.cumprod(pw, out=pw)
        np.cumprod(inv, out=inv)
    return pw, inv


def _power_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    return _powers(max(1 << 17, 1 << max(n, 1).bit_length()))  # few sizes: cached


def hashes(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The polynomial hash ``sum(text[s + k] * B**k)`` (mod 2**64) of each span ``[s, e)`` of
    ``text``; ``starts`` ascending. A window of text at a time, in the same two small arrays."""
    out = np.empty(len(starts), dtype=_U64)
    if not len(starts):
        return out
    cuts = np.searchsorted(starts, np.arange(0, int(starts[-1]) + _WINDOW, _WINDOW)).tolist()
    cuts.append(len(starts))
    longest = int((ends - starts).max())
    pw, inv = _power_table(_WINDOW + longest)
    x = np.empty(_WINDOW + longest, dtype=_U64)
    sums = np.zeros(_WINDOW + longest + 1, dtype=_U64)
    for i0, i1 in zip(cuts[:-1], cuts[1:]):
        if i0 == i1:
            continue
        lo, hi = int(starts[i0]), int(ends[i0:i1].max())
        n = hi - lo
        np.multiply(text[lo:hi], pw[:n], out=x[:n])
        np.cumsum(x[:n], out=sums[1 : n + 1])
        s, e = starts[i0:i1] - lo, ends[i0:i1] - lo
        out[i0:i1] = (sums[e] - sums[s]) * inv[s]
    return out


def _mixed(h: np.ndarray) -> np.ndarray:
    """``h`` with every bit stirred into the top ones (a bijection: no new collisions); a short
    string's polynomial hash is small, and the buckets go by the top bits."""
    h = h ^ (h >> _U64(31))
    h *= _U64(0x7FB5D329728EA185)
    return h ^ (h >> _U64(27))


def words(text: np.ndarray) -> np.ndarray:
    """Every 8 bytes of ``text`` from each position, as little-endian integers (an overlapping
    view, no copy); ``text`` must end with 8 spare bytes."""
    return np.ndarray((len(text) - 7,), dtype="<u8", buffer=text, offset=0, strides=(1,))


def same_each(w: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Whether each span ``[a, a + n)`` holds the same bytes as ``[b, b + n)`` (``w`` from
    :func:`words`)."""
    ok = np.ones(len(n), dtype=bool)
    j = 0
    live = np.flatnonzero(n > 0)
    while live.size:
        left = n[live] - j
        diff = w[a[live] + j] ^ w[b[live] + j]
        short = left < 8
        if short.any():
            diff[short] &= (_U64(1) << (left[short] * 8).astype(_U64)) - _U64(1)
        bad = diff != 0
        ok[live[bad]] = False
        j += 8
        live = live[~bad & (left > 8)]
    return ok


class Keys:
    """Byte strings (spans of a text) with their ids, looked up by content; where two spans
    hold the same bytes the last one's id wins (GGUF's token_to_id; JSON keys are unique).

    The hashes are sorted and cut into buckets by their top bits (about one key a bucket), so a
    lookup reads a bucket's start and a key or two instead of a binary search's twenty steps."""

    def __init__(self, text: np.ndarray, starts: np.ndarray, ends: np.ndarray, ids: list[int]) -> None:
        # ids: the int objects themselves, handed out again (a new int for each of a million
        # merge parts would be ~50 MB more at the peak)
        self.text, self.starts, self.lens = text, starts, ends - starts
        self.ids = np.empty(len(ids), dtype=object)
        self.ids[:] = ids
        h = _mixed(hashes(text, starts, ends))
        order = np.argsort(h, kind="stable")
        sh = h[order]
        last = np.append(sh[1:] != sh[:-1], True)  # the last of each run of equal hashes
        self.sorted_hashes, self.slots = sh[last], order[last]
        bits = max(len(self.sorted_hashes).bit_length(), 1)
        self.shift = _U64(64 - bits)
        tops = np.arange(1, 1 << bits, dtype=_U64) << self.shift
        self.buckets = np.concatenate([[0], np.searchsorted(self.sorted_hashes, tops), [len(self.sorted_hashes)]])

    def lookup(self, h: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """Which key (its place in the table) has each of the (:func:`hashes`) hashes ``h`` and the
        bytes of the concatenated ``parts`` (each ``(starts, lengths)`` in the same text), or -1
        where none has."""
        sh = self.sorted_hashes
        slot = np.full(len(h), -1, dtype=np.int64)
        if not len(sh) or not len(h):
            return slot
        h = _mixed(h)
        b = (h >> self.shift).astype(np.int64)
        pos, end = self.buckets[b], self.buckets[b + 1]
        live = np.arange(len(h))
        while live.size:
            p = pos[live]
            live = live[p < end[live]]  # past its bucket: not there
            p = pos[live]
            hit = sh[p] == h[live]
            slot[live[hit]] = self.slots[p[hit]]
            live = live[~hit]
            pos[live] += 1
        ok = slot >= 0
        where = np.maximum(slot, 0)
        at, total = self.starts[where], self.lens[where]
        ok &= total == sum(n for _, n in parts)
        w = words(self.text)
        for s, n in parts:
            ok &= same_each(w, s, at, np.where(ok, n, 0))
            at = at + n
        slot[~ok] = -1
        return slot

    def id_list(self, slots: np.ndarray) -> list[int]:
        """The ids of the keys at ``slots``, as the int objects given."""
        return self.ids[slots].tolist()


def map_gguf(tokens: list[bytes], merges: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray, Keys]:
    """GGUF merges (``"a b"``, cut at the first space after the first character, as llama.cpp
    does) against the tokens (ids in order, the last listing of a text winning): the places of
    each merge's two parts and result among the tokens, -1 where a merge cannot be mapped so (no
    cut, or a part or its result is no token's bytes), and the table (its ``ids``)."""
    tlen = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    mlen = np.fromiter(map(len, merges), dtype=np.int64, count=len(merges))
    tblob = b"".join(tokens)
    text = np.frombuffer(tblob + b"".join(merges) + bytes(8), dtype=np.uint8)
    tstart = np.zeros(len(tokens), dtype=np.int64)
    np.cumsum(tlen[:-1], out=tstart[1:])
    table = Keys(text, tstart, tstart + tlen, list(range(len(tokens))))
    ia, ib, im = (np.full(len(merges), -1, dtype=np.int64) for _ in range(3))
    offset = len(tblob)
    for m0 in range(0, len(merges), _MERGES_AT_ONCE):
        n = mlen[m0 : m0 + _MERGES_AT_ONCE]
        ms = np.empty(len(n), dtype=np.int64)
        ms[0] = offset
        np.cumsum(n[:-1], out=ms[1:])
        ms[1:] += offset
        offset += int(n.sum())
        spaces = np.flatnonzero(text[int(ms[0]) : offset] == 0x20) + int(ms[0])
        k = np.searchsorted(spaces, ms + 1)
        cut = spaces[np.minimum(k, max(len(spaces) - 1, 0))] if len(spaces) else ms + n
        has = (k < len(spaces)) & (cut < ms + n)
        cut = np.where(has, cut, ms)
        a, b = (ms, cut - ms), (cut + 1, np.where(has, ms + n - cut - 1, 0))
        ha, hb = hashes(text, a[0], a[0] + a[1]), hashes(text, b[0], b[0] + b[1])
        pw, _ = _power_table(int(a[1].max(initial=0)))
        got = [table.lookup(ha, [a]), table.lookup(hb, [b]), table.lookup(ha + pw[a[1]] * hb, [a, b])]
        for out, g in zip((ia, ib, im), got):
            out[m0 : m0 + len(n)] = np.where(has, g, -1)
    return ia, ib, im, table
