"""An :class:`Encoding`: token ids plus where every token and pre-token lies in the text.

Offsets are computed once here in three units, so views never recount: UTF-8 bytes, Python
code points, and UTF-16 code units (what Qt counts). A token whose bytes start or end inside
a multi-byte character *splits* that character; its character span then covers the whole
character(s) it touches, so the overlay can group such tokens instead of printing "�".

>>> from bpeinspect.core import load_tokenizer
>>> enc = load_tokenizer("cl100k_base").encode_with_offsets("hi 🎉")
>>> [(t.text_bytes, t.char_span, t.utf16_span) for t in enc]
[(b'hi', (0, 2), (0, 2)), (b' \\xf0\\x9f', (2, 4), (2, 5)), (b'\\x8e', (3, 4), (3, 5)), (b'\\x89', (3, 4), (3, 5))]
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import TYPE_CHECKING, NamedTuple, Protocol

from bpeinspect.core.errors import Cancelled
from bpeinspect.core.text import utf16_len

if TYPE_CHECKING:
    import numpy as np

    from bpeinspect.core.split.rules import SplitRule

# bits of Encoding.flags, one byte per token
SPECIAL = 1
SPLITS_START = 2  # the token starts inside a character
SPLITS_END = 4  # the token ends inside a character
SPLITS_CHAR = SPLITS_START | SPLITS_END
ADDED = 8  # an added token that is not special (matched before BPE in any encoding)


class TokenTable(Protocol):
    """What building an encoding reads from a tokenizer (a
    :class:`~bpeinspect.core.tokenizer.Tokenizer` is one)."""

    @property
    def special_tokens(self) -> Mapping[str, int]: ...

    @property
    def split_rule(self) -> SplitRule: ...

    @property
    def missing_bytes(self) -> tuple[int, ...]: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def is_special(self, token_id: int) -> bool: ...

    def encode_piece(self, piece: str | bytes) -> list[int]: ...

    def dropped_bytes(self, text: str) -> list[tuple[int, int]]: ...


class TokenInfo(NamedTuple):
    index: int  # type: ignore[assignment]  # the token's position: a public field name that shadows tuple.index
    id: int
    text_bytes: bytes
    byte_span: tuple[int, int]
    char_span: tuple[int, int]
    utf16_span: tuple[int, int]
    piece: int
    special: bool
    splits_char: bool


@dataclass
class Encoding:
    """Token ids of ``text`` with per-token spans, stored column-wise to stay small."""

    text: str
    ids: list[int] = field(default_factory=list)
    byte_starts: array = field(default_factory=lambda: array("q"))
    byte_ends: array = field(default_factory=lambda: array("q"))
    char_starts: array = field(default_factory=lambda: array("q"))
    char_ends: array = field(default_factory=lambda: array("q"))
    utf16_starts: array = field(default_factory=lambda: array("q"))
    utf16_ends: array = field(default_factory=lambda: array("q"))
    pieces_of: array = field(default_factory=lambda: array("q"))
    flags: bytearray = field(default_factory=bytearray)
    # pre-tokens (special tokens included) as code point spans
    piece_spans: list[tuple[int, int]] = field(default_factory=list)
    # code point spans of characters holding a byte that has no token (dropped, no token covers them)
    dropped: list[tuple[int, int]] = field(default_factory=list)
    token_bytes_of: Callable[[int], bytes] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[TokenInfo]:
        return (self.token(i) for i in range(len(self.ids)))

    def token(self, i: int) -> TokenInfo:
        """Everything known about token ``i``."""
        f = self.flags[i]
        tb = self.token_bytes_of(self.ids[i]) if self.token_bytes_of else b""
        return TokenInfo(
            i,
            self.ids[i],
            tb,
            (self.byte_starts[i], self.byte_ends[i]),
            (self.char_starts[i], self.char_ends[i]),
            (self.utf16_starts[i], self.utf16_ends[i]),
            self.pieces_of[i],
            bool(f & SPECIAL),
            bool(f & SPLITS_CHAR),
        )

    def is_special(self, i: int) -> bool:
        return bool(self.flags[i] & SPECIAL)

    def is_added(self, i: int) -> bool:
        """True for an added token that is not special (see :meth:`Tokenizer.is_added`)."""
        return bool(self.flags[i] & ADDED)

    def splits_char(self, i: int) -> bool:
        return bool(self.flags[i] & SPLITS_CHAR)

    @property
    def n_bytes(self) -> int:
        return self.byte_ends[-1] if self.ids else 0

    def byte_ends_array(self) -> np.ndarray:
        """The byte ends as a numpy array (of 64-bit integers)."""
        import numpy as np  # see encoding_from_ids

        return np.frombuffer(self.byte_ends, dtype=np.int64)

    def token_at_char(self, pos: int) -> int | None:
        """Index of the (first) token covering code point ``pos``."""
        return _find(self.char_starts, self.char_ends, pos)

    def token_at_utf16(self, pos: int) -> int | None:
        """Index of the (first) token covering UTF-16 unit ``pos``."""
        return _find(self.utf16_starts, self.utf16_ends, pos)

    def char_groups(self) -> list[tuple[int, int]]:
        """Runs of token indices ``[first, last]`` that share characters.

        A token that splits a character is grouped with its neighbours that hold the rest
        of it; every other token is a group of its own.
        """
        groups: list[tuple[int, int]] = []
        for i in range(len(self.ids)):
            if groups and self.char_starts[i] < self.char_ends[groups[-1][1]]:
                groups[-1] = (groups[-1][0], i)
            else:
                groups.append((i, i))
        return groups


def _find(starts: array, ends: array, pos: int) -> int | None:
    i = bisect.bisect_right(starts, pos) - 1
    if i < 0 or ends[i] <= pos:
        return None
    # tokens splitting one character share its span; report the first of them
    while i > 0 and starts[i - 1] == starts[i]:
        i -= 1
    return i


def tiled_ids(
    segments: list[tuple[str, int | None]],
    find: Callable[[str], list[str]],
    lookup: Callable[[str], Sequence[int]],
    should_stop: Callable[[], bool] | None = None,
) -> tuple[list[int], list[int]]:
    """The ids of ``segments`` (text, or a cut-out token's id) and the length of every
    pre-token in code points: ``find`` splits text into pre-tokens, ``lookup`` maps one to ids."""
    ids: list[int] = []
    piece_lens: list[int] = []
    for segment, cut in segments:
        if should_stop is not None and should_stop():
            raise Cancelled()
        if cut is not None:
            ids.append(cut)
            piece_lens.append(len(segment))
        else:
            pieces = find(segment)
            # the per-piece loop stays in C, a slice of a long text's pieces per call (one call
            # over a 10 MB text's held the interpreter for 100 ms), should_stop asked between
            for k in range(0, len(pieces), _STEP):
                if k and should_stop is not None and should_stop():
                    raise Cancelled()
                ids.extend(chain.from_iterable(map(lookup, pieces[k : k + _STEP])))
                piece_lens.extend(map(len, pieces[k : k + _STEP]))
    return ids, piece_lens


def token_lengths(
    decoder: Mapping[int, bytes], n_vocab: int, should_stop: Callable[[], bool] | None = None
) -> np.ndarray:
    """Byte length of every id below ``n_vocab`` (0 for ids ``decoder`` does not have);
    ``should_stop`` is asked between slices (:class:`Cancelled` if it says so)."""
    import numpy as np  # see encoding_from_ids

    lens = np.zeros(n_vocab, dtype=np.int64)
    # a slice at a time: one fromiter over 200k ids holds the interpreter (twice), which a
    # GUI thread waits out whole when a worker loads a tokenizer
    keys, sizes = iter(decoder.keys()), map(len, decoder.values())
    for start in range(0, len(decoder), 1 << 14):
        if should_stop is not None and should_stop():  # a loading worker's warm-up encode gives way here
            raise Cancelled()
        k = min(1 << 14, len(decoder) - start)
        lens[np.fromiter(islice(keys, k), dtype=np.int64, count=k)] = np.fromiter(
            islice(sizes, k), dtype=np.int64, count=k
        )
    return lens


def encoding_from_ids(
    text: str,
    ids: list[int],
    piece_lens: list[int],
    *,
    token_lengths: np.ndarray,
    special_ids: Collection[int],
    token_bytes_of: Callable[[int], bytes],
    added_ids: Collection[int] = (),
) -> Encoding:
    """The :class:`Encoding` of ``text`` from its ids and the lengths of its pre-tokens.

    For split rules whose pre-tokens tile the text (no character dropped). Every offset is
    derived at once with array arithmetic: token byte ends are the running sum of token
    lengths (``token_lengths[id]``, in bytes); a table of where each character starts (in
    bytes and in UTF-16 units) turns byte offsets into character and UTF-16 offsets by
    binary search; pre-token spans are the running sum of ``piece_lens`` (code points).
    About 30 times faster than walking token by token (:func:`build_encoding`).
    """
    import numpy as np  # here, not at the top: importing numpy would slow the CLI's start

    enc = Encoding(text=text, token_bytes_of=token_bytes_of)
    enc.ids = ids
    if not ids:
        return enc
    cp = _code_points(text)
    char_byte = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000), out=char_byte[1:])
    char_u16 = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(1 + (cp >= 0x10000), out=char_u16[1:])
    id_arr = _int64_array(ids)
    lens = token_lengths[id_arr]
    byte_ends = np.cumsum(lens)
    byte_starts = byte_ends - lens
    c0 = np.searchsorted(char_byte, byte_starts, side="right") - 1
    c1 = np.searchsorted(char_byte, byte_ends, side="left")
    flags = np.where(char_byte[c0] != byte_starts, SPLITS_START, 0) | np.where(
        char_byte[c1] != byte_ends, SPLITS_END, 0
    )
    if special_ids:
        specials = np.array(sorted(special_ids), dtype=np.int64)
        flags |= np.where(np.isin(id_arr, specials), SPECIAL, 0)
    if added_ids:
        flags |= np.where(np.isin(id_arr, np.array(sorted(added_ids), dtype=np.int64)), ADDED, 0)
    piece_len_arr = _int64_array(piece_lens)
    piece_ends = np.cumsum(piece_len_arr)
    piece_starts = piece_ends - piece_len_arr
    pieces_of = np.searchsorted(char_byte[piece_starts], byte_starts, side="right") - 1

    enc.byte_starts, enc.byte_ends = _column(byte_starts), _column(byte_ends)
    enc.char_starts, enc.char_ends = _column(c0), _column(c1)
    enc.utf16_starts, enc.utf16_ends = _column(char_u16[c0]), _column(char_u16[c1])
    enc.pieces_of = _column(pieces_of)
    flag_bytes = flags.astype(np.uint8)
    enc.flags = bytearray()
    for k in range(0, len(flag_bytes), _STEP):
        enc.flags += flag_bytes[k : k + _STEP].tobytes()
    spans: list[tuple[int, int]] = []
    for k in range(0, len(piece_starts), _STEP):
        spans.extend(zip(piece_starts[k : k + _STEP].tolist(), piece_ends[k : k + _STEP].tolist()))
    enc.piece_spans = spans
    return enc


# Elements converted between Python objects and arrays per C call in encoding_from_ids: one
# conversion of a 10 MB text's 2.4M tokens held the interpreter for 100-300 ms, and with it
# every other thread (the GUI thread, when a worker encodes a whole text); a slice takes a few ms.
_STEP = 1 << 15


def _code_points(text: str) -> np.ndarray:
    """``text``'s code points as an array, encoded a slice at a time (see :data:`_STEP`)."""
    import numpy as np  # see encoding_from_ids

    out = np.empty(len(text), dtype=np.uint32)
    for k in range(0, len(text), 4 * _STEP):
        out[k : k + 4 * _STEP] = np.frombuffer(text[k : k + 4 * _STEP].encode("utf-32-le"), dtype=np.uint32)
    return out


def _int64_array(values: list[int]) -> np.ndarray:
    """``np.array(values, dtype=np.int64)``, filled a slice at a time (see :data:`_STEP`)."""
    import numpy as np  # see encoding_from_ids

    out = np.empty(len(values), dtype=np.int64)
    for k in range(0, len(values), _STEP):
        out[k : k + _STEP] = values[k : k + _STEP]
    return out


def _column(a: np.ndarray) -> array:
    """An offsets column (``array("q")``) of ``a``, copied a slice at a time (see :data:`_STEP`)."""
    import numpy as np  # see encoding_from_ids

    out = array("q")
    a = np.ascontiguousarray(a, dtype=np.int64)
    for k in range(0, len(a), _STEP):
        out.frombytes(a[k : k + _STEP].tobytes())
    return out


def build_encoding(
    tok: TokenTable,
    text: str,
    segments: list[tuple[str, int | None]],
    *,
    should_stop: Callable[[], bool] | None = None,
) -> Encoding:
    """Encode ``segments`` (pieces of ``text`` with the id of the special or added token they
    are, or ``None`` for ordinary text) with full offsets, token by token: the general builder,
    for any split rule (one that drops text too) and for text holding bytes without a token."""
    enc = Encoding(text=text, token_bytes_of=tok.token_bytes)
    ids = enc.ids
    bs, be, cs, ce, us, ue = (
        enc.byte_starts,
        enc.byte_ends,
        enc.char_starts,
        enc.char_ends,
        enc.utf16_starts,
        enc.utf16_ends,
    )
    pof, flags, piece_spans = enc.pieces_of, enc.flags, enc.piece_spans
    token_len: dict[int, int] = {}
    encode_piece = tok.encode_piece
    rule = tok.split_rule
    cpos = bpos = upos = 0
    checked = 0
    dropping = tok.dropped_bytes if tok.missing_bytes else None
    for segment, cut in segments:
        if cut is not None:
            nb = len(segment.encode("utf-8"))
            nu = utf16_len(segment)
            ids.append(cut)
            bs.append(bpos)
            be.append(bpos + nb)
            cs.append(cpos)
            ce.append(cpos + len(segment))
            us.append(upos)
            ue.append(upos + nu)
            pof.append(len(piece_spans))
            flags.append(SPECIAL if tok.is_special(cut) else ADDED)
            piece_spans.append((cpos, cpos + len(segment)))
            cpos += len(segment)
            bpos += nb
            upos += nu
            continue
        last = 0
        for a, b in rule.spans(segment):
            if a > last:  # text the split rule dropped: it has no tokens, only width
                gap = segment[last:a]
                cpos += len(gap)
                bpos += len(gap.encode("utf-8"))
                upos += utf16_len(gap)
            last = b
            checked += 1
            if should_stop is not None and not checked & 1023 and should_stop():
                raise Cancelled()
            piece = segment[a:b]
            piece_ids = encode_piece(piece)
            pidx = len(piece_spans)
            piece_spans.append((cpos, cpos + len(piece)))
            gaps = dropping(piece) if dropping is not None else None
            if gaps:
                _add_dropping_piece(enc, tok, piece, piece_ids, pidx=pidx, gaps=gaps, bpos=bpos, cpos=cpos, upos=upos)
                bpos += len(piece.encode("utf-8"))
                cpos += len(piece)
                upos += utf16_len(piece)
                continue
            if piece.isascii():
                off = 0
                for t in piece_ids:
                    n = token_len.get(t)
                    if n is None:
                        n = token_len[t] = len(tok.token_bytes(t))
                    ids.append(t)
                    bs.append(bpos + off)
                    be.append(bpos + off + n)
                    cs.append(cpos + off)
                    ce.append(cpos + off + n)
                    us.append(upos + off)
                    ue.append(upos + off + n)
                    pof.append(pidx)
                    flags.append(0)
                    off += n
                bpos += off
                cpos += off
                upos += off
                continue
            # non-ASCII piece: map byte offsets to characters
            char_byte = [0]  # byte offset where each character starts (+ the end)
            char_u16 = [0]
            for ch in piece:
                o = ord(ch)
                char_byte.append(char_byte[-1] + (1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4))
                char_u16.append(char_u16[-1] + (2 if o >= 0x10000 else 1))
            off = 0
            for t in piece_ids:
                n = token_len.get(t)
                if n is None:
                    n = token_len[t] = len(tok.token_bytes(t))
                b0, b1 = off, off + n
                c0 = bisect.bisect_right(char_byte, b0) - 1
                c1 = bisect.bisect_left(char_byte, b1)
                f = (0 if char_byte[c0] == b0 else SPLITS_START) | (0 if char_byte[c1] == b1 else SPLITS_END)
                ids.append(t)
                bs.append(bpos + b0)
                be.append(bpos + b1)
                cs.append(cpos + c0)
                ce.append(cpos + c1)
                us.append(upos + char_u16[c0])
                ue.append(upos + char_u16[c1])
                pof.append(pidx)
                flags.append(f)
                off = b1
            bpos += char_byte[-1]
            cpos += len(piece)
            upos += char_u16[-1]
        if last < len(segment):
            gap = segment[last:]
            cpos += len(gap)
            bpos += len(gap.encode("utf-8"))
            upos += utf16_len(gap)
    return enc


def _add_dropping_piece(
    enc: Encoding,
    tok: TokenTable,
    piece: str,
    piece_ids: list[int],
    *,
    pidx: int,
    gaps: list[tuple[int, int]],
    bpos: int,
    cpos: int,
    upos: int,
) -> None:
    """Offsets of a pre-token that holds bytes without a token: each token lies after the
    dropped bytes before it (tokens never hold a dropped byte)."""
    data = piece.encode("utf-8")
    char_byte = [0]
    char_u16 = [0]
    for ch in piece:
        char_byte.append(char_byte[-1] + len(ch.encode("utf-8", "surrogatepass")))
        char_u16.append(char_u16[-1] + (2 if ord(ch) >= 0x10000 else 1))
    drop = set(tok.missing_bytes)
    off = 0
    for t in piece_ids:
        tb = tok.token_bytes(t)
        while off < len(data) and data[off] in drop and not data.startswith(tb, off):
            off += 1
        b0, b1 = off, off + len(tb)
        c0 = bisect.bisect_right(char_byte, b0) - 1
        c1 = bisect.bisect_left(char_byte, b1)
        f = (0 if char_byte[c0] == b0 else SPLITS_START) | (0 if char_byte[c1] == b1 else SPLITS_END)
        enc.ids.append(t)
        enc.byte_starts.append(bpos + b0)
        enc.byte_ends.append(bpos + b1)
        enc.char_starts.append(cpos + c0)
        enc.char_ends.append(cpos + c1)
        enc.utf16_starts.append(upos + char_u16[c0])
        enc.utf16_ends.append(upos + char_u16[c1])
        enc.pieces_of.append(pidx)
        enc.flags.append(f)
        off = b1
    enc.dropped.extend((cpos + a, cpos + b) for a, b in gaps)


def differing_span(old: Encoding | None, new: Encoding) -> tuple[int, int] | None:
    """The UTF-16 range of ``new`` (a segment's encoding after an edit) whose tokens differ
    from ``old`` (its encoding before): tokens the same from either end look the same.
    ``None`` if nothing differs; all of ``new`` without ``old``.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("cl100k_base")
    >>> differing_span(tok.encode_with_offsets("one two three"), tok.encode_with_offsets("one twos three"))
    (3, 8)
    """
    end = new.utf16_ends[-1] if new.ids else 0
    if old is None:
        return 0, end
    a, b = old.ids, new.ids
    n = min(len(a), len(b))
    lo, hi = 0, n  # the common prefix, by bisection: slice comparisons run in C
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid - 1)
    p = lo
    lo, hi = 0, n - p
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if a[len(a) - mid :] == b[len(b) - mid :] else (lo, mid - 1)
    last = len(b) - lo - 1  # the last token of new that differs
    if last < p:
        if len(a) == len(b):
            return None
        at = new.utf16_starts[p] if p < len(b) else end
        return at, at  # tokens went: the line they were on
    return new.utf16_starts[p], new.utf16_ends[last]


# -- runs of tokens that share a character -------------------------------------------------------

# every flag byte with a split bit set, whatever other bits it has
_SPLIT_FLAGS = re.compile(b"[" + b"".join(re.escape(bytes([f])) for f in range(256) if f & SPLITS_CHAR) + b"]")


def split_groups(enc: Encoding) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of more than one token that share characters.

    >>> from bpeinspect.core import load_tokenizer
    >>> split_groups(load_tokenizer("cl100k_base").encode_with_offsets("hi 🎉"))
    [(1, 3)]
    """
    out: list[tuple[int, int]] = []
    for m in _SPLIT_FLAGS.finditer(enc.flags):
        i = m.start()
        if out and out[-1][1] >= i:
            continue
        group = group_around(enc, i)
        if group is not None:
            out.append(group)
    return out


def group_around(enc: Encoding, i: int) -> tuple[int, int] | None:
    """The run ``(first, last)`` of more than one token sharing characters with token ``i``."""
    cs, ce, n = enc.char_starts, enc.char_ends, len(enc.ids)
    k = i
    while k > 0 and cs[k] < ce[k - 1]:
        k -= 1
    j = i
    while j + 1 < n and cs[j + 1] < ce[j]:
        j += 1
    return (k, j) if j > k else None


def byte_fractions(enc: Encoding, i: int, group_first: int) -> tuple[float, float]:
    """Where token ``i``'s bytes lie inside the characters it touches, as fractions 0..1.

    The first token of a group starts on a character boundary (else it would share that
    character with the token before it), so its byte offset anchors the group's characters.
    """
    cs, ce = enc.char_starts[i], enc.char_ends[i]
    g_char, g_byte = enc.char_starts[group_first], enc.byte_starts[group_first]
    start = g_byte + len(enc.text[g_char:cs].encode("utf-8", "surrogatepass"))
    total = len(enc.text[cs:ce].encode("utf-8", "surrogatepass"))
    if total <= 0:
        return 0.0, 1.0
    return (enc.byte_starts[i] - start) / total, (enc.byte_ends[i] - start) / total
