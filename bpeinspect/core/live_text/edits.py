"""Re-encoding an edited text: the lines around the edit are encoded again and spliced in.

Edits rest on the cut points of :mod:`bpeinspect.core.split.cuts` (with one character of
lookahead: a window of the text is encoded with the character after it): where
:func:`~bpeinspect.core.split.cuts.can_cut` allows it, the text can be cut there, the parts
encoded on their own and the results joined, giving exactly the full encoding. Other
tokenizers (a custom regex, a normalizer) make no such promise; for them
:func:`reencode_edit` encodes the whole text. Texts hold no lone surrogates
(:func:`~bpeinspect.core.text.fix_surrogates`; :class:`~bpeinspect.core.live_text.LiveText`
fixes them as they come).

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("cl100k_base")
>>> old = tok.encode_with_offsets("one\\ntwo\\nthree\\n")
>>> new = reencode_edit(tok, old, "one\\ntwo!\\nthree\\n", *find_edit(old.text, "one\\ntwo!\\nthree\\n"))
>>> new.ids == tok.encode_with_offsets("one\\ntwo!\\nthree\\n").ids
True
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable

import numpy as np

from bpeinspect.core.encoding import Encoding
from bpeinspect.core.specials import literal_regex
from bpeinspect.core.split.cuts import can_cut, last_cut, next_cut
from bpeinspect.core.text import utf16_len
from bpeinspect.core.tokenizer import Tokenizer

_COLUMNS = ("byte_starts", "byte_ends", "char_starts", "char_ends", "utf16_starts", "utf16_ends")


def cut_before(text: str, limit: int) -> int:
    """The last cut point ``q`` with ``q < limit`` (0 if there is none; the parts are encoded
    with the character after them, see :func:`encode_window`): an edit at ``limit`` changes
    neither it nor what lies before it."""
    return max(last_cut(text, 0, limit, lookahead=True), 0)


def cut_after(text: str, pos: int) -> int:
    """The first cut point ``q`` with ``q > pos`` (``len(text)`` if there is none)."""
    q = next_cut(text, pos + 1, lookahead=True)
    return len(text) if q < 0 else q


def encode_window(tok: Tokenizer, text: str, a: int, b: int, should_stop: Callable[[], bool] | None) -> Encoding:
    """Encode ``text[a:b]`` as it is encoded inside ``text``; offsets relative to ``a``. ``b``
    is a cut point of ``text`` or its end (see the module docstring)."""
    # the regex looks one character past b, unless a special or added token starts there: the
    # text before it is then cut off and split on its own
    stop = b + 1 if b < len(text) and not _cut_token_at(tok, text, b) else b
    enc = tok.encode_with_offsets(text[a:stop], should_stop=should_stop)
    assert len(enc.text) == stop - a, "the text holds lone surrogates"
    if stop == b:
        return enc
    spans = enc.piece_spans
    k = bisect.bisect_left(spans, (b - a, -1))  # the first pre-token starting at or after b
    assert k < len(spans) and spans[k][0] == b - a, f"no pre-token starts at the cut point {b}"
    n = bisect.bisect_left(enc.pieces_of, k)
    out = Encoding(text=text[a:b], token_bytes_of=enc.token_bytes_of)
    out.ids = enc.ids[:n]
    for col in (*_COLUMNS, "pieces_of"):
        setattr(out, col, getattr(enc, col)[:n])
    out.flags = enc.flags[:n]
    out.piece_spans = spans[:k]
    return out


def _cut_token_at(tok: Tokenizer, text: str, pos: int) -> bool:
    words = frozenset(tok.special_tokens).union(tok.added_tokens)
    return bool(words) and literal_regex(words).match(text, pos) is not None


_SLICE = 1 << 15  # tokens copied per step: small C calls let other threads run in between


def join_ranges(tok: Tokenizer, text: str, parts: list[tuple[Encoding, int, int, int, int, int]]) -> Encoding:
    """Concatenate token ranges of encodings.

    ``parts`` holds ``(enc, first_token, end_token, char_delta, byte_delta, utf16_delta)``;
    piece indices are renumbered so they stay dense. The copying goes in slices of
    ``_SLICE`` tokens so that a worker thread running this never holds the interpreter long,
    and ``parts`` is emptied as it goes, so each part is freed on its own (freeing them
    all at once would be one long pause).
    """
    out = Encoding(text=text, token_bytes_of=tok.token_bytes)
    deltas = {"byte_starts": 1, "byte_ends": 1, "char_starts": 0, "char_ends": 0, "utf16_starts": 2, "utf16_ends": 2}
    parts.reverse()
    while parts:
        enc, lo, hi, _dc, _db, _du = parts.pop()
        if hi <= lo:
            continue
        p0, p1 = enc.pieces_of[lo], enc.pieces_of[hi - 1] + 1
        pdelta = len(out.piece_spans) - p0
        for s0 in range(lo, hi, _SLICE):
            s1 = min(hi, s0 + _SLICE)
            out.ids.extend(enc.ids[s0:s1])
            out.flags += enc.flags[s0:s1]
            for col, k in deltas.items():
                d = (_dc, _db, _du)[k]
                _append_shifted(getattr(out, col), getattr(enc, col), s0, s1, d)
            _append_shifted(out.pieces_of, enc.pieces_of, s0, s1, pdelta)
        for q0 in range(p0, p1, _SLICE):
            spans = enc.piece_spans[q0 : min(p1, q0 + _SLICE)]
            out.piece_spans.extend([(a + _dc, b + _dc) for a, b in spans] if _dc else spans)
        del enc
    return out


def _append_shifted(dst: array, src: array, lo: int, hi: int, delta: int) -> None:
    if not delta:
        dst.extend(src[lo:hi])
        return
    a = np.frombuffer(src, dtype=np.int64)[lo:hi] + delta
    dst.frombytes(a.tobytes())


def find_edit(old: str, new: str) -> tuple[int, int, int]:
    """``(start, old_end, new_end)``: ``old[start:old_end]`` became ``new[start:new_end]``.

    >>> find_edit("hello world", "hello, world")
    (5, 5, 6)
    """
    n = min(len(old), len(new))
    lo, hi = 0, n  # common prefix length by bisection: slice comparisons run at C speed
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    lo, hi = 0, n - start
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return start, len(old) - lo, len(new) - lo


def reencode_edit(  # noqa: PLR0917 (the edit is passed as *find_edit(...))
    tok: Tokenizer,
    old: Encoding,
    new_text: str,
    start: int,
    old_end: int,
    new_end: int,
    *,
    should_stop: Callable[[], bool] | None = None,
    in_place: bool = False,
    follow: str = "",
) -> Encoding:
    """The encoding of ``new_text``, re-encoding only the lines around an edit.

    ``old`` is the encoding of the text before the edit, and ``old.text[start:old_end]`` was
    replaced by ``new_text[start:new_end]`` (code points, see :func:`find_edit`). The result
    equals ``tok.encode_with_offsets(new_text)``. With ``in_place=True`` ``old`` itself is
    updated and returned: the tokens after the edit are then shifted where they lie instead
    of being copied, which is what makes a keystroke in a long text cheap. ``follow``: the
    texts are followed by this in a longer one (whose cut points they end at), and are
    encoded as they are there.
    """

    def whole() -> Encoding:
        if follow:
            return encode_window(tok, new_text + follow, 0, len(new_text), should_stop)
        return tok.encode_with_offsets(new_text, should_stop=should_stop)

    if not can_cut(tok):
        return whole()
    delta = new_end - old_end
    a = cut_before(new_text, start)
    b = cut_after(new_text, new_end)
    window = encode_window(tok, new_text + follow if b == len(new_text) else new_text, a, b, should_stop)
    spans = old.piece_spans
    pa = bisect.bisect_left(spans, (a, -1))  # the first pre-token starting at or after a
    if a and (pa >= len(spans) or spans[pa][0] != a):
        return whole()
    ta = bisect.bisect_left(old.pieces_of, pa)
    byte_a = old.byte_starts[ta] if ta < len(old.ids) else old.n_bytes
    u16_a = old.utf16_starts[ta] if ta < len(old.ids) else (old.utf16_ends[-1] if old.ids else 0)
    parts = [(old, 0, ta, 0, 0, 0), (window, 0, len(window.ids), a, byte_a, u16_a)]
    if b < len(new_text):
        pb = bisect.bisect_left(spans, (b - delta, -1))
        if pb >= len(spans) or spans[pb][0] != b - delta:
            return whole()
        tb = bisect.bisect_left(old.pieces_of, pb)
        mid = new_text[a:b]
        byte_b = byte_a + len(mid.encode("utf-8", "surrogatepass"))
        u16_b = u16_a + utf16_len(mid)
        parts.append((old, tb, len(old.ids), delta, byte_b - old.byte_starts[tb], u16_b - old.utf16_starts[tb]))
    else:
        pb, tb = len(spans), len(old.ids)
    if in_place:
        suffix = parts[2][3:] if len(parts) == 3 else (0, 0, 0)
        _splice(old, new_text, window, (ta, tb), (pa, pb), (a, byte_a, u16_a), suffix)
        return old
    return join_ranges(tok, new_text, parts)


def _splice(  # noqa: PLR0917
    enc: Encoding,
    text: str,
    window: Encoding,
    tokens: tuple[int, int],
    pieces: tuple[int, int],
    base: tuple[int, int, int],
    suffix: tuple[int, int, int],
) -> None:
    """Replace tokens ``[ta, tb)`` (pre-tokens ``[pa, pb)``) of ``enc`` by ``window``'s, in place."""
    ta, tb = tokens
    pa, pb = pieces
    nw = len(window.ids)
    enc.text = text
    enc.ids[ta:tb] = window.ids
    enc.flags[ta:tb] = window.flags
    deltas = {"char": (base[0], suffix[0]), "byte": (base[1], suffix[1]), "utf16": (base[2], suffix[2])}
    for unit, (d_win, d_suf) in deltas.items():
        for side in ("starts", "ends"):
            col = getattr(enc, f"{unit}_{side}")
            win = np.frombuffer(getattr(window, f"{unit}_{side}"), dtype=np.int64) + d_win
            col[ta:tb] = array("q", win.tobytes())
            if d_suf:
                view = np.frombuffer(col, dtype=np.int64)
                view[ta + nw :] += d_suf
                del view  # an array with a live buffer export cannot be resized later
    win = np.frombuffer(window.pieces_of, dtype=np.int64) + pa
    enc.pieces_of[ta:tb] = array("q", win.tobytes())
    d_piece = len(window.piece_spans) - (pb - pa)
    if d_piece:
        view = np.frombuffer(enc.pieces_of, dtype=np.int64)
        view[ta + nw :] += d_piece
        del view
    c0 = base[0]
    enc.piece_spans[pa:pb] = [(s + c0, e + c0) for s, e in window.piece_spans]
    dc = suffix[0]
    k = pa + len(window.piece_spans)
    if dc and k < len(enc.piece_spans):
        enc.piece_spans[k:] = [(s + dc, e + dc) for s, e in enc.piece_spans[k:]]
