"""Encodings of normalized text, with every offset mapped back to the user's own text.

A tokenizer with a normalizer (NFC, SentencePiece's ``▁`` and dummy prefix, ...) splits and
merges a changed copy of the text. Here each non-special segment is normalized with its
alignment (:mod:`bpeinspect.core.normalize`), cut into pre-tokens and encoded; the tokens'
extents in the normalized copy (in its UTF-8 bytes) are then mapped, all at once with numpy,
to character, byte and UTF-16 spans of the original text.

A token that covers part of what one original character became (``f`` of ``ﬁ`` under NFKC,
a prepended ``▁``, one byte-fallback byte of ``€``) shares that character's span with its
neighbours and is flagged as splitting it, so the overlay groups them, as it does for tokens
that split a character's bytes.

>>> from bpeinspect.core.normalize import NFC
>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> enc = build_aligned_encoding(
...     tok, "cafe\\u0301", [("cafe\\u0301", False)], normalize_aligned=NFC().normalize_aligned,
...     pieces_of=tok.split_rule.spans, encode_piece=tok.encode_piece, token_nlen=lambda i: len(tok.token_bytes(i)))
>>> [(tok.token_bytes(i), s) for i, s in zip(enc.ids, zip(enc.char_starts, enc.char_ends))]
[(b'c', (0, 1)), (b'af', (1, 3)), (b'\\xc3\\xa9', (3, 5))]
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

import numpy as np

from bpeinspect.core.encoding import ADDED, SPECIAL, SPLITS_END, SPLITS_START, Encoding, TokenTable
from bpeinspect.core.errors import Cancelled

Aligned = tuple[str, "list[int] | None", "list[int] | None"]


def _char_tables(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Byte offset and UTF-16 offset where each character of ``text`` starts (plus the end)."""
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    char_byte = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(1 + (cp >= 0x80) + (cp >= 0x800) + (cp >= 0x10000), out=char_byte[1:])
    char_u16 = np.zeros(len(cp) + 1, dtype=np.int64)
    np.cumsum(1 + (cp >= 0x10000), out=char_u16[1:])
    return char_byte, char_u16


def _to_array(a: np.ndarray) -> array:
    out = array("q")
    out.frombytes(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return out


def build_aligned_encoding(  # noqa: PLR0914 (one pass over several parallel columns)
    tok: TokenTable,
    text: str,
    segments: list[tuple[str, bool]] | list[tuple[str, int | None]],
    *,
    normalize_aligned: Callable[[str], Aligned],
    pieces_of: Callable[[str], list[tuple[int, int]]],
    encode_piece: Callable[[str], list[int]],
    token_nlen: Callable[[int], int],
    should_stop: Callable[[], bool] | None = None,
) -> Encoding:
    """Encode ``segments`` of ``text`` (special or not) with offsets into ``text``.

    ``normalize_aligned`` gives a segment's normalized copy and alignment, ``pieces_of`` the
    pre-token spans of a normalized copy, ``encode_piece`` the ids of one pre-token and
    ``token_nlen`` how many bytes of the normalized copy a token stands for.
    """
    normalized: list[str] = []
    a_start: list[np.ndarray] = []
    a_end: list[np.ndarray] = []
    ids: list[int] = []
    pof: list[int] = []
    special_flag: list[int] = []
    piece_nchar: list[tuple[int, int]] = []  # pre-token spans in the normalized text
    ncpos = 0  # characters of normalized text so far
    opos = 0  # characters of the original text so far
    checked = 0
    for segment, cut in segments:
        # ``cut``: the id of a special or added token (or True: a special token, by its text)
        if cut is not None and cut is not False:
            n = len(segment)
            tid = tok.special_tokens[segment] if cut is True else cut
            own = tok.token_bytes(tid).decode("utf-8", "surrogatepass")
            if own == segment:
                normalized.append(segment)
                r = np.arange(opos, opos + n, dtype=np.int64)
                a_start.append(r)
                a_end.append(r + 1)
            else:  # it took whitespace beside it (lstrip/rstrip) or matched once normalized
                normalized.append(own)
                a_start.append(np.full(len(own), opos, dtype=np.int64))
                a_end.append(np.full(len(own), opos + n, dtype=np.int64))
            ids.append(tid)
            pof.append(len(piece_nchar))
            special_flag.append(SPECIAL if tok.is_special(tid) else ADDED)
            piece_nchar.append((ncpos, ncpos + len(own)))
            ncpos += len(own)
            opos += n
            continue
        out, starts, ends = normalize_aligned(segment)
        normalized.append(out)
        if starts is None or ends is None:
            r = np.arange(opos, opos + len(out), dtype=np.int64)
            a_start.append(r)
            a_end.append(r + 1)
        else:
            a_start.append(np.array(starts, dtype=np.int64) + opos)
            a_end.append(np.array(ends, dtype=np.int64) + opos)
        for a, b in pieces_of(out):
            if b <= a:
                continue
            checked += 1
            if should_stop is not None and not checked & 1023 and should_stop():
                raise Cancelled()
            piece_ids = encode_piece(out[a:b])
            k = len(piece_nchar)
            piece_nchar.append((ncpos + a, ncpos + b))
            ids.extend(piece_ids)
            pof.extend([k] * len(piece_ids))
            special_flag.extend([0] * len(piece_ids))
        ncpos += len(out)
        opos += len(segment)

    enc = Encoding(text=text, token_bytes_of=tok.token_bytes)
    enc.ids = ids
    o_byte, o_u16 = _char_tables(text)
    if not piece_nchar:
        return enc
    ntext = "".join(normalized)
    n_byte, _ = _char_tables(ntext)
    s_arr = np.concatenate(a_start) if a_start else np.zeros(0, dtype=np.int64)
    e_arr = np.concatenate(a_end) if a_end else np.zeros(0, dtype=np.int64)
    pn = np.array(piece_nchar, dtype=np.int64).reshape(-1, 2)
    # pre-token spans in the original text
    p_lo = s_arr[pn[:, 0]]
    p_hi = e_arr[pn[:, 1] - 1]
    enc.piece_spans = list(zip(p_lo.tolist(), p_hi.tolist()))
    if not ids:
        return enc
    id_arr = np.array(ids, dtype=np.int64)
    pof_arr = np.array(pof, dtype=np.int64)
    lens = np.fromiter(map(token_nlen, ids), dtype=np.int64, count=len(ids))
    excl = np.cumsum(lens) - lens  # bytes before each token, counted over all tokens
    first = np.searchsorted(pof_arr, pof_arr, side="left")  # first token of each token's piece
    b0 = n_byte[pn[pof_arr, 0]] + (excl - excl[first])
    b1 = b0 + lens
    last = len(ntext)
    c0 = np.clip(np.searchsorted(n_byte, b0, side="right") - 1, 0, max(last - 1, 0))
    c1 = np.clip(np.searchsorted(n_byte, b1, side="left"), 1, last)
    flags = np.where(n_byte[c0] != b0, SPLITS_START, 0) | np.where(n_byte[c1] != b1, SPLITS_END, 0)
    # a token that starts or ends inside what one original span became (a composed character,
    # a prepended ▁) splits that span too
    prev = np.maximum(c0 - 1, 0)
    flags |= np.where((c0 > 0) & (s_arr[c0] == s_arr[prev]) & (e_arr[c0] == e_arr[prev]), SPLITS_START, 0)
    nxt = np.minimum(c1, last - 1)
    flags |= np.where((c1 < last) & (s_arr[nxt] == s_arr[c1 - 1]) & (e_arr[nxt] == e_arr[c1 - 1]), SPLITS_END, 0)
    spec = np.array(special_flag, dtype=np.int64)
    flags = np.where(spec != 0, spec, flags)
    os_ = s_arr[c0]
    oe_ = e_arr[c1 - 1]
    # bytes: exact inside a character whose UTF-8 length did not change, clamped otherwise
    ob0 = o_byte[os_]
    k0 = b0 - n_byte[c0]
    olen0 = o_byte[e_arr[c0]] - o_byte[s_arr[c0]]
    ob0 = ob0 + np.minimum(k0, olen0)
    ob1 = o_byte[oe_]
    cl = c1 - 1
    k1 = b1 - n_byte[cl]
    olen1 = o_byte[e_arr[cl]] - o_byte[s_arr[cl]]
    inside = n_byte[c1] != b1
    ob1 = np.where(inside, o_byte[s_arr[cl]] + np.minimum(k1, olen1), ob1)
    ob1 = np.maximum(ob1, ob0)
    enc.byte_starts, enc.byte_ends = _to_array(ob0), _to_array(ob1)
    enc.char_starts, enc.char_ends = _to_array(os_), _to_array(oe_)
    enc.utf16_starts, enc.utf16_ends = _to_array(o_u16[os_]), _to_array(o_u16[oe_])
    enc.pieces_of = _to_array(pof_arr)
    enc.flags = bytearray(flags.astype(np.uint8).tobytes())
    del id_arr
    return enc
