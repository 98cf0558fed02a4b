"""Merges mapped to ids straight from a file's bytes, in bulk with numpy (issue 14 item 10).

Mapping a big vocabulary's merges as Python strings costs three dictionary lookups of new
strings a merge (1.7 million for Gemma 3's 515k merges), each hashing its string first, after
parsing and splitting them. Here no merge becomes a Python string: the bytes of every
vocabulary key and every merge part are found (by their quotes in a ``tokenizer.json``), hashed
all at once with a polynomial hash (so a merge's result hashes from its two parts), looked up
by binary search among the keys' hashes, and then compared byte for byte with the key found:
a hash collision can never give a wrong id, only the usual path.

A JSON string's bytes stand for its text: two equal byte strings are the same text, and a
merge part found among the keys' bytes is that key. The only escapes whose meaning depends on
their neighbours are surrogate pairs (``\\ud83d\\ude00``): a merge whose part ends half way
would join up in the bytes and not in the text, so merges with any surrogate escape are left to
the usual path, as is anything else this does not fit (irregular spacing between the merges, a
space spelled ``\\u0020``, a part spelled differently from its key): :func:`scan` or
:meth:`JsonMerges.map` then give ``None``, and the caller parses and maps the merges as
strings, naming whatever is wrong.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import numpy as np

_U64 = np.uint64
_B = 0x5851F42D4C957F2D  # odd: invertible modulo 2**64
_WINDOW = 1 << 16  # bytes of text hashed at a time (its prefix sums stay in the cache)
_WS = rb"[ \t\n\r]*"
_START = {b"[": re.compile(rb"\[" + _WS + rb"\[" + _WS), b'"': re.compile(rb"\[" + _WS)}
_GAPS = {
    b'"': [re.compile(_WS + b"," + _WS)],
    b"[": [re.compile(_WS + b"," + _WS), re.compile(_WS + rb"\]" + _WS + b"," + _WS + rb"\[" + _WS)],
}
_END = {b'"': re.compile(_WS + rb"\]"), b"[": re.compile(_WS + rb"\]" + _WS + rb"\]")}
_VOCAB = re.compile(rb'"vocab"' + _WS + b":" + _WS + rb"\{")
_VOCAB_END = re.compile(_WS + b":" + _WS + rb"-?[0-9]+" + _WS + rb"\}")
_SURROGATE = re.compile(rb"\\u[dD][89abAB]")


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


def same(w: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray) -> bool:
    """Whether every span ``[a, a + n)`` holds the same bytes as ``[b, b + n)`` (``w`` from
    :func:`words`)."""
    j = 0
    live = np.flatnonzero(n > 0)
    while live.size:
        left = n[live] - j
        diff = w[a[live] + j] ^ w[b[live] + j]
        short = left < 8
        if short.any():
            diff[short] &= (_U64(1) << (left[short] * 8).astype(_U64)) - _U64(1)
        if diff.any():
            return False
        j += 8
        live = live[left > 8]
    return True


def same_each(w: np.ndarray, a: np.ndarray, b: np.ndarray, n: np.ndarray) -> np.ndarray:
    """:func:`same` for each span apart."""
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

    def positions(self, h: np.ndarray) -> np.ndarray | None:
        """Where each of ``h`` is in :attr:`sorted_hashes`, or ``None`` if one is not."""
        sh = self.sorted_hashes
        if not len(sh):
            return None
        b = (h >> self.shift).astype(np.int64)
        pos, end = self.buckets[b], self.buckets[b + 1]
        live = np.arange(len(h))
        while live.size:
            p = pos[live]
            if (p >= end[live]).any():
                return None  # past its bucket: not there
            live = live[sh[p] != h[live]]
            pos[live] += 1
        return pos

    def find(self, h: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
        """Which keys (their places in the table) have the (:func:`hashes`) hashes ``h`` and the
        bytes of the concatenated ``parts`` (each ``(starts, lengths)`` in the same text), or
        ``None`` if any is missing."""
        pos = self.positions(_mixed(h))
        if pos is None:
            return None
        slot = self.slots[pos]
        at, total = self.starts[slot], self.lens[slot]
        if not np.array_equal(total, sum(n for _, n in parts)):
            return None
        w = words(self.text)
        for s, n in parts:
            if not same(w, s, at, n):
                return None
            at = at + n
        return slot

    def lookup(self, h: np.ndarray, parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """:meth:`find` for each apart: the key's place, or -1 where there is none."""
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


def map_pairs(keys: Keys, a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
              ha: np.ndarray, hb: np.ndarray) -> tuple[list[tuple[int, int]], list[int]] | None:
    """Merges of the spans ``a`` and ``b`` (``(starts, lengths)``, hashed ``ha``, ``hb``) as id
    pairs and the id each makes, or ``None`` if a part or a result is no key."""
    pw, _ = _power_table(int(a[1].max(initial=0)))
    ia = keys.find(ha, [a])
    ib = None if ia is None else keys.find(hb, [b])
    made = None if ib is None else keys.find(ha + pw[a[1]] * hb, [a, b])
    if made is None:
        return None
    return list(zip(keys.id_list(ia), keys.id_list(ib))), keys.id_list(made)


def _is_in(sorted_values: np.ndarray, x: int) -> bool:
    i = int(np.searchsorted(sorted_values, x))
    return i < len(sorted_values) and int(sorted_values[i]) == x


def _text(data: bytes, open_quote: int, close_quote: int) -> str | None:
    try:
        return json.loads(data[open_quote : close_quote + 1])
    except ValueError:
        return None


def _unescaped_quotes(data: bytes, arr: np.ndarray) -> np.ndarray:
    """Where the text's quotes are that no backslash escapes (an odd run of them before)."""
    q = np.concatenate([np.flatnonzero(arr[i : i + (1 << 20)] == 0x22) + i for i in range(0, len(arr), 1 << 20)])
    after = np.flatnonzero(arr[np.maximum(q - 1, 0)] == 0x5C)  # quotes after a backslash: count the run
    if not after.size:
        return q
    keep = np.ones(len(q), dtype=bool)
    for i in after.tolist():
        p = k = int(q[i])
        while k > 0 and data[k - 1] == 0x5C:
            k -= 1
        keep[i] = (p - k) % 2 == 0
    return q[keep]


def _bodies(arr: np.ndarray, opens: np.ndarray, closes: np.ndarray) -> np.ndarray:
    """The bytes between each pair of quotes, one after another."""
    lo, hi = int(opens[0]), int(closes[-1])
    counts = np.empty(2 * len(opens), dtype=np.int64)
    counts[0] = 1
    counts[1::2] = closes - opens - 1
    counts[2::2] = opens[1:] - closes[:-1] + 1
    keep = np.zeros(len(counts), dtype=bool)
    keep[1::2] = True
    return arr[lo:hi][np.repeat(keep, counts)]


def _regular_gaps(arr: np.ndarray, closes: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """Whether each gap from ``closes[k]`` to ``opens[k]`` has the bytes of the first one."""
    start = closes + 1
    length = opens - start
    n0 = int(length[0])
    ok = length == n0
    ok &= start + n0 + 8 <= len(arr)
    idx = np.flatnonzero(ok)
    w = words(arr)
    j = 0
    first = int(start[0])
    while j < n0 and idx.size:
        diff = w[start[idx] + j] ^ w[first + j]
        if n0 - j < 8:
            diff &= _U64((1 << (8 * (n0 - j))) - 1)
        bad = diff != 0
        ok[idx[bad]] = False
        idx = idx[~bad]
        j += 8
    return ok


class JsonMerges:
    """Where a ``tokenizer.json``'s merges are, found by :func:`scan`; :meth:`map` maps them."""

    def __init__(self, data: bytes, arr: np.ndarray, quotes: np.ndarray, *, opens: np.ndarray,
                 closes: np.ndarray, strings: bool, end: int) -> None:
        self.data, self.arr, self.quotes = data, arr, quotes
        self.opens, self.closes, self.strings, self.end = opens, closes, strings, end

    def map(self, vocab: dict[str, Any]) -> tuple[list[tuple[int, int]], list[int]] | None:
        """The merges as id pairs and the id each makes, against the parsed ``vocab`` (which
        must be the file's one ``"vocab"`` object), or ``None``."""
        data, arr, q = self.data, self.arr, self.quotes
        found = [m for m in _VOCAB.finditer(data) if _is_in(q, m.start())]
        n = len(vocab)
        ids = list(vocab.values())
        if len(found) != 1 or not n or set(map(type, ids)) != {int}:
            return None
        at = found[0].end()
        if self.opens[0] <= at < self.end:
            return None
        k = int(np.searchsorted(q, at))
        keys = q[k : k + 2 * n]
        if len(keys) != 2 * n or not _VOCAB_END.match(data, int(keys[-1]) + 1):
            return None
        kopen, kclose = keys[0::2], keys[1::2]
        if kopen[0] < self.end and kclose[-1] > self.opens[0]:
            return None
        first, last = next(iter(vocab)), next(reversed(vocab))
        if (_text(data, kopen[0], kclose[0]), _text(data, kopen[-1], kclose[-1])) != (first, last):
            return None  # not the keys of this vocabulary (another "vocab" object?)
        # one text: the keys' bytes, then the merges', then 8 spare bytes for words()
        kb = _bodies(arr, kopen, kclose)
        text = np.concatenate([kb, _bodies(arr, self.opens, self.closes), np.zeros(8, dtype=np.uint8)])
        klen = kclose - kopen - 1
        kstart = np.zeros(n, dtype=np.int64)
        np.cumsum(klen[:-1], out=kstart[1:])
        table = Keys(text, kstart, kstart + klen, ids)
        del kstart, klen, keys, kopen, kclose
        step = 2 - self.strings  # strings a merge
        pairs: list[tuple[int, int]] = []
        made: list[int] = []
        offset = len(kb)
        for m0 in range(0, len(self.opens), _MERGES_AT_ONCE * step):  # small arrays, used again
            blen = self.closes[m0 : m0 + _MERGES_AT_ONCE * step] - self.opens[m0 : m0 + _MERGES_AT_ONCE * step] - 1
            bstart = np.empty(len(blen), dtype=np.int64)
            bstart[0] = offset
            np.cumsum(blen[:-1], out=bstart[1:])
            bstart[1:] += offset
            offset += int(blen.sum())
            if self.strings:  # "a b": one space in each, the only spaces in the merges' bytes
                lo, hi = int(bstart[0]), offset
                spaces = np.flatnonzero(text[lo:hi] == 0x20) + lo
                if len(spaces) != len(bstart) or not (np.all(spaces >= bstart) and np.all(spaces < bstart + blen)):
                    return None
                a = (bstart, spaces - bstart)
                b = (spaces + 1, bstart + blen - spaces - 1)
                ha, hb = hashes(text, a[0], a[0] + a[1]), hashes(text, b[0], b[0] + b[1])
            else:
                h = hashes(text, bstart, bstart + blen)
                a, b = (bstart[0::2], blen[0::2]), (bstart[1::2], blen[1::2])
                ha, hb = h[0::2], h[1::2]
            got = map_pairs(table, a, b, ha, hb)
            if got is None:
                return None
            pairs += got[0]
            made += got[1]
        return pairs, made


_MERGES_AT_ONCE = 1 << 16


def scan(data: bytes, at: int, kind: bytes) -> JsonMerges | None:
    """The merges array whose ``[`` is at ``at`` (``kind``: ``b'"'`` for ``"a b"`` strings,
    ``b"["`` for ``[a, b]`` pairs), if it is laid out regularly (the same bytes between every
    two merges) and holds no escape that this path leaves to the usual one; else ``None``."""
    arr = np.frombuffer(data, dtype=np.uint8)
    q = _unescaped_quotes(data, arr)
    mq = q[np.searchsorted(q, at) :]
    opens, closes = mq[0::2], mq[1::2]
    if len(closes) < 4 or not _START[kind].fullmatch(data, at, int(opens[0])):
        return None
    gaps = _GAPS[kind]
    step = len(gaps)
    ok = np.ones(len(closes) - 1, dtype=bool)
    for g, pat in enumerate(gaps):
        c, o = closes[g:-1:step], opens[g + 1 :: step][: len(closes[g:-1:step])]
        if not pat.fullmatch(data, int(c[0]) + 1, int(o[0])):
            return None
        ok[g::step] = _regular_gaps(arr, c, o)
    bad = np.flatnonzero(~ok)
    count = int(bad[0]) + 1 if bad.size else len(closes)  # strings up to the first other gap
    if count % step or count < 2 * step:
        return None
    opens, closes = opens[:count], closes[:count]
    end = _END[kind].match(data, int(closes[-1]) + 1)
    if end is None:
        return None
    stop = end.end()
    if data.find(b"\\u", at, stop) >= 0 and (data.find(b"\\u0020", at, stop) >= 0 or _SURROGATE.search(data, at, stop)):
        return None
    return JsonMerges(data, arr, q, opens=opens, closes=closes, strings=kind == b'"', end=stop)


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
