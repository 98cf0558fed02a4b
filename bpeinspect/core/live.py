"""Live encoding: the one place that decides how a changed text is re-encoded.

:func:`plan_encode` looks at the tokenizer, the new text and the previous encoding (and an
optional hint of where the edit lies) and picks one of three strategies:

- ``incremental``: re-encode only the lines around the edit and splice them in;
- ``chunked``: encode a long text a chunk at a time (each chunk a short call, so other
  threads get the interpreter often, and the first chunk can be shown early);
- ``full``: one encode.

It also says whether the work is ``cheap`` (a few lines of a modest text: a few ms, fine to
run right where it is asked, with no thread hand-over). The returned :class:`EncodePlan`
runs it. Every strategy gives exactly ``tok.encode_with_offsets(text)``.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> plan = plan_encode(tok, "ab\\ncd\\n", tok.encode_with_offsets("ab\\nc\\n"))
>>> plan.mode, plan.cheap
('incremental', True)
>>> plan.run().enc.ids == tok.encode("ab\\ncd\\n")
True

Chunks and edits rest on the cut points of :mod:`bpeinspect.core.split.cuts`: where
:func:`~bpeinspect.core.split.cuts.can_cut` allows it, the text can be cut there, the parts
encoded on their own and the results joined, giving exactly the full encoding. Other
tokenizers (a custom regex, a normalizer) make no such promise; for them these functions
fall back to one full encode.

>>> tok = load_tokenizer("cl100k_base")
>>> old = tok.encode_with_offsets("one\\ntwo\\nthree\\n")
>>> new = reencode_edit(tok, old, "one\\ntwo!\\nthree\\n", *find_edit(old.text, "one\\ntwo!\\nthree\\n"))
>>> new.ids == tok.encode_with_offsets("one\\ntwo!\\nthree\\n").ids
True
"""

from __future__ import annotations

import bisect
import functools
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np

from bpeinspect.core.encoding import Encoding
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.specials import literal_regex
from bpeinspect.core.split.cuts import can_cut, last_cut, next_cut
from bpeinspect.core.text import utf16_len
from bpeinspect.core.tokenizer import Tokenizer

_CHUNK = 1 << 14  # characters per chunk of a chunked encode
BIG_TEXT = 1 << 20  # characters: building an encoding this big holds the garbage collector off
CHEAP_TEXT_LIMIT = 250_000  # characters: edits in texts up to this size can be cheap
CHEAP_EDIT_LIMIT = 2_000  # characters changed
_COLUMNS = ("byte_starts", "byte_ends", "char_starts", "char_ends", "utf16_starts", "utf16_ends")


class NoSync(Exception):
    """The window did not end on a pre-token boundary; the caller falls back to a full encode."""


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
    """Encode ``text[a:b]`` as it is encoded inside ``text``; offsets relative to ``a``."""
    # the regex looks one character past b, unless a special or added token starts there: the
    # text before it is then cut off and split on its own
    stop = b + 1 if b < len(text) and not _cut_token_at(tok, text, b) else b
    enc = tok.encode_with_offsets(text[a:stop], should_stop=should_stop)
    if enc.text != text[a:stop]:
        raise NoSync("surrogates changed the text")
    if stop == b:
        return enc
    spans = enc.piece_spans
    k = bisect.bisect_left(spans, (b - a, -1))  # the first pre-token starting at or after b
    if k >= len(spans) or spans[k][0] != b - a:
        raise NoSync(f"no pre-token starts at {b}")
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


def encode_chunked(
    tok: Tokenizer,
    text: str,
    *,
    chunk: int = _CHUNK,
    should_stop: Callable[[], bool] | None = None,
    on_first: Callable[[Encoding], None] | None = None,
) -> Encoding:
    """``tok.encode_with_offsets(text)`` computed a chunk at a time.

    Each chunk is one short call, so a worker thread running this hands the interpreter
    back to the GUI thread often (one regex call over 5 MB would hold it for long).
    ``on_first`` receives the encoding of the first chunk as soon as it is done (a true
    encoding of a prefix of ``text``), so a view can colour the top of a long text early.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("gpt2")
    >>> encode_chunked(tok, "a\\nb\\n" * 10, chunk=4).ids == tok.encode_with_offsets("a\\nb\\n" * 10).ids
    True
    """
    if len(text) <= chunk or not can_cut(tok):
        return tok.encode_with_offsets(text, should_stop=should_stop)
    parts = []
    a = bpos = upos = 0
    try:
        while a < len(text):
            if should_stop is not None and should_stop():
                raise Cancelled()
            b = cut_after(text, a + chunk)
            enc = encode_window(tok, text, a, b, should_stop)
            parts.append((enc, 0, len(enc.ids), a, bpos, upos))
            if on_first is not None and a == 0:
                on_first(enc)
            del enc
            piece = text[a:b]
            bpos += len(piece.encode("utf-8", "surrogatepass"))
            upos += utf16_len(piece)
            a = b
    except NoSync:
        return tok.encode_with_offsets(text, should_stop=should_stop)
    return join_ranges(tok, text, parts)


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
        return encode_chunked(tok, new_text, should_stop=should_stop)

    if not can_cut(tok):
        return whole()
    delta = new_end - old_end
    a = cut_before(new_text, start)
    b = cut_after(new_text, new_end)
    try:
        window = encode_window(tok, new_text + follow if b == len(new_text) else new_text, a, b, should_stop)
    except NoSync:
        return whole()
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


# how an encoding was made; "segment": kept segment by segment (a live_text.LiveEncoding)
Mode = Literal["full", "chunked", "incremental", "segment"]


# what an EncodeResult holds: an Encoding here, or a reader of one kept in parts (the window's)
E = TypeVar("E")


@dataclass
class EncodeResult(Generic[E]):
    """An encoding and how it was made."""

    tok: Tokenizer
    enc: E
    seconds: float
    mode: Mode
    changed: tuple[int, int] | None = None  # UTF-16 range that was re-encoded (None: all of it)


class EncodePlan:
    """How to bring an encoding up to date with ``text``; made by :func:`plan_encode`.

    :attr:`cheap` is known at once. :attr:`mode` and :attr:`edit` may compare the old and
    new texts (time growing with their length), so for a long text they are worked out
    where :meth:`run` runs, not where the plan is made.
    """

    def __init__(self, tok: Tokenizer, text: str, previous: Encoding | None, edit: tuple[int, int, int] | None) -> None:
        self.tok = tok
        self.text = text
        self.previous = previous if previous is not None and can_cut(tok) else None
        if self.previous is not None and edit is not None and len(text) - len(self.previous.text) == edit[2] - edit[1]:
            self.edit = edit  # a consistent hint saves comparing the texts

    @functools.cached_property
    def edit(self) -> tuple[int, int, int] | None:
        """``(start, old_end, new_end)`` as :func:`find_edit` gives it (``None`` without a
        previous encoding to start from)."""
        return None if self.previous is None else find_edit(self.previous.text, self.text)

    def _changed(self) -> int:
        assert self.edit is not None  # called with a previous encoding only
        start, old_end, new_end = self.edit
        return (old_end - start) + (new_end - start)

    @property
    def cheap(self) -> bool:
        """True if the work takes a few ms (a small edit in a modest text): fine to run right
        where it is asked, without handing it to another thread."""
        # a small change to a modest text is cheap whichever way it is encoded
        return self.previous is not None and len(self.text) <= CHEAP_TEXT_LIMIT and self._changed() <= CHEAP_EDIT_LIMIT

    @functools.cached_property
    def mode(self) -> Mode:
        """``incremental`` if the edit touches less than half the text, else ``chunked`` for a
        long text the split rule lets us cut, else ``full``."""
        if self.previous is not None and self._changed() < max(len(self.text), 1) // 2:
            return "incremental"
        return "chunked" if len(self.text) > _CHUNK and can_cut(self.tok) else "full"

    def run(
        self,
        *,
        should_stop: Callable[[], bool] | None = None,
        on_first: Callable[[Encoding], None] | None = None,
        in_place: bool = False,
    ) -> EncodeResult[Encoding]:
        """Encode. ``should_stop`` is asked between steps (then :class:`Cancelled` is raised);
        ``on_first`` gets the encoding of the first chunk of a chunked encode as soon as it
        is done; ``in_place=True`` lets an incremental plan update ``previous`` itself (only
        safe when nothing else reads it meanwhile)."""
        if len(self.text) > BIG_TEXT:
            with quiet_gc():
                return self._run(should_stop, on_first, in_place)
        return self._run(should_stop, on_first, in_place)

    def _run(
        self, should_stop: Callable[[], bool] | None, on_first: Callable[[Encoding], None] | None, in_place: bool
    ) -> EncodeResult[Encoding]:
        t0 = time.perf_counter()
        tok, text = self.tok, self.text
        if self.mode == "incremental":
            assert self.edit is not None and self.previous is not None  # what "incremental" means
            start, old_end, new_end = self.edit
            enc = reencode_edit(
                tok, self.previous, text, start, old_end, new_end, should_stop=should_stop, in_place=in_place
            )
            a, b = cut_before(text, start), cut_after(text, new_end)
            changed = (_utf16_at(enc, a), _utf16_at(enc, b))
            return EncodeResult(tok, enc, time.perf_counter() - t0, "incremental", changed)
        enc = encode_chunked(tok, text, should_stop=should_stop, on_first=on_first)
        return EncodeResult(tok, enc, time.perf_counter() - t0, self.mode)


def plan_encode(
    tok: Tokenizer,
    text: str,
    previous: Encoding | None = None,
    *,
    edit: tuple[int, int, int] | None = None,
) -> EncodePlan:
    """Decide how to encode ``text`` with ``tok``, given the encoding of the text before.

    ``previous`` is the encoding of an earlier version of the text (or ``None``); ``edit``
    optionally says where they differ, as :func:`find_edit` would (``previous.text[start:
    old_end]`` became ``text[start:new_end]``, in code points), which saves comparing the
    two texts. An edit touching less than half the text is re-encoded incrementally; a long
    text is chunked; anything else is one full encode.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("cl100k_base")
    >>> plan_encode(tok, "x" * 100_000).mode
    'chunked'
    >>> plan_encode(tok, "short").mode
    'full'
    """
    return EncodePlan(tok, text, previous, edit)


def _utf16_at(enc: Encoding, char_pos: int) -> int:
    """The UTF-16 offset of code point ``char_pos`` (a pre-token boundary or the end)."""
    i = bisect.bisect_left(enc.char_starts, char_pos)
    if i < len(enc.ids):
        return enc.utf16_starts[i]
    return enc.utf16_ends[-1] if enc.ids else 0
