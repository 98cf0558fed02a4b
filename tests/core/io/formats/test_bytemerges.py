"""The bulk byte lookups behind GGUF merges (:mod:`bpeinspect.core.io.formats.bytemerges`):
hashes that compose, byte-for-byte checks, and a table that never returns a key with other
bytes."""

from __future__ import annotations

import numpy as np

from bpeinspect.core.io.formats import bytemerges


def _text(*parts: bytes) -> np.ndarray:
    return np.frombuffer(b"".join(parts) + bytes(8), dtype=np.uint8)


def test_hashes_compose_and_spans_compare_exactly():
    rng = np.random.default_rng(5)
    text = rng.integers(0, 4, 300_000, dtype=np.uint8)  # few letters: many equal spans
    text = np.concatenate([text, np.zeros(8, dtype=np.uint8)])
    starts = np.sort(rng.choice(290_000, 2000, replace=False))
    lens = rng.integers(0, 40, 2000)
    h = bytemerges.hashes(text, starts, starts + lens)
    for s, n, got in list(zip(starts.tolist(), lens.tolist(), h.tolist()))[:50]:
        assert got == sum(int(x) * pow(bytemerges._B, k, 1 << 64) for k, x in enumerate(text[s : s + n].tolist())) % (1 << 64)
    # a span's hash from its two halves: h(a + b) = h(a) + B**len(a) * h(b)
    pw, _ = bytemerges._power_table(40)
    half = lens // 2
    ha = bytemerges.hashes(text, starts, starts + half)
    hb = bytemerges.hashes(text, starts + half, starts + lens)
    assert np.array_equal(ha + pw[half] * hb, h)
    a, b = starts[:-1], starts[1:]
    n = np.minimum(lens[:-1], lens[1:])
    w = bytemerges.words(text)
    expected = [bytes(text[x : x + k]) == bytes(text[y : y + k]) for x, y, k in zip(a, b, n)]
    assert bytemerges.same_each(w, a, b, n).tolist() == expected
    text[200_000:200_100] = text[100_000:100_100]  # equal spans at other offsets
    for k in (0, 1, 7, 8, 9, 17, 100):
        assert bytemerges.same_each(w, np.array([100_000]), np.array([200_000]), np.array([k])).all()
        two = bytemerges.hashes(text, np.array([100_000, 200_000]), np.array([100_000 + k, 200_000 + k]))
        assert two[0] == two[1]
    text[200_050] ^= 1
    assert not bytemerges.same_each(w, np.array([100_000]), np.array([200_000]), np.array([51])).any()
    assert bytemerges.same_each(w, np.array([100_000]), np.array([200_000]), np.array([50])).all()


def _table(keys: list[bytes], queries: list[bytes]):
    text = _text(*keys, *queries)
    lens = np.array([len(k) for k in keys + queries], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    nk = len(keys)
    table = bytemerges.Keys(text, starts[:nk], starts[:nk] + lens[:nk], list(range(nk)))
    qs, ql = starts[nk:], lens[nk:]
    return table, bytemerges.hashes(text, qs, qs + ql), (qs, ql)


def test_lookups_find_each_key_and_the_last_listing_of_a_repeated_one():
    keys = [b"a", b"b", b"ab", b"", b"\xe2\x96\x81", b"ab", b"x" * 300]
    queries = [b"ab", b"b", b"zz", b"", b"x" * 300, b"x" * 299, b"\xe2\x96\x81"]
    table, h, parts = _table(keys, queries)
    assert table.lookup(h, [parts]).tolist() == [5, 1, -1, 3, 6, -1, 4]


def test_a_key_with_the_same_hash_and_other_bytes_is_never_returned(monkeypatch):
    # every hash the same: each lookup reaches some key with it, and the bytes decide
    monkeypatch.setattr(bytemerges, "_mixed", lambda h: h * np.uint64(0))
    table, h, parts = _table([b"a", b"b", b"cd"], [b"a", b"b", b"cd", b"e"])
    got = table.lookup(h, [parts]).tolist()
    assert got[3] == -1 and all(g in (-1, i) for i, g in enumerate(got[:3])) and got.count(-1) >= 3


def test_short_keys_spread_over_the_buckets():
    # one-byte keys have tiny polynomial hashes; mixed, they do not all share a bucket
    table, _, _ = _table([bytes([c]) for c in range(1, 256)], [])
    sizes = np.diff(table.buckets)
    assert sizes.max() <= 12
