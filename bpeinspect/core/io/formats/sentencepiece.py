"""SentencePiece ``.model`` files (a ``ModelProto`` protobuf), read with a small pure-Python reader.

Only BPE models are loaded (Llama 1/2, Mistral v1-v3, Gemma, Phi-3, Baichuan...); Unigram
(T5, XLM-R, ...), word and character models are refused with a message naming them. The
pieces, their scores and types, ``byte_fallback`` and the normalizer settings
(``add_dummy_prefix``, ``remove_extra_whitespaces``, ``escape_whitespaces``) become a
:class:`~bpeinspect.core.sentencepiece.SentencePieceBPE` that encodes as ``sentencepiece``
does: merges by score, byte fallback for characters without a piece.

The protobuf fields used (from sentencepiece's ``sentencepiece_model.proto``):
``ModelProto.pieces = 1 {piece = 1, score = 2, type = 3}``, ``trainer_spec = 2
{model_type = 3, treat_whitespace_as_suffix = 24, byte_fallback = 35}``, ``normalizer_spec
= 3 {name = 1, precompiled_charsmap = 2, add_dummy_prefix = 3, remove_extra_whitespaces =
4, escape_whitespaces = 5}``.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass, field
from operator import methodcaller
from pathlib import Path
from typing import Any

import numpy as np

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.formats import bytemerges
from bpeinspect.core.io.formats._common import PieceVocabulary, expect, map_merges, read_bytes_limited
from bpeinspect.core.io.formats.gguf_pre import promote_control_looking, rstrip_tokens
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.normalize import Prepend, Replace, sequence
from bpeinspect.core.sentencepiece import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SqueezeSpaces
from bpeinspect.core.tokenizer import Tokenizer

MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "word", 4: "character"}
_PIECE_TYPES = {1, 2, 3, 4, 5, 6}
_MAX_PIECES = 4_000_000


class _Truncated(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise _Truncated
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("a varint longer than 64 bits")


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """The ``(field number, wire type, value)`` of a protobuf message, in order.

    Varints come back as ints, 32/64-bit fields as their raw bytes, length-delimited fields
    as bytes (sub-messages are parsed by the caller).

    >>> fields(b"\\x08\\x96\\x01\\x12\\x02hi")
    [(1, 0, 150), (2, 2, b'hi')]
    """
    out: list[tuple[int, int, Any]] = []
    pos = 0
    n = len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        num, wire = key >> 3, key & 7
        val: int | bytes
        if wire == 0:
            val, pos = _varint(data, pos)
        elif wire == 1:
            val, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            ln, pos = _varint(data, pos)
            val, pos = data[pos : pos + ln], pos + ln
        elif wire == 5:
            val, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > n:
            raise _Truncated
        out.append((num, wire, val))
    return out


@dataclass
class ModelProto:
    pieces: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    types: list[int] = field(default_factory=list)
    model_type: int = 1
    byte_fallback: bool = False
    treat_whitespace_as_suffix: bool = False
    normalizer_name: str = ""
    charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True


_F32 = struct.Struct("<f").unpack_from


def _piece_fields(sub: bytes) -> tuple[bytes, float, int]:
    piece, score, kind = b"", 0.0, NORMAL
    for n2, w2, v2 in fields(sub):
        if n2 == 1 and w2 == 2:
            piece = v2
        elif n2 == 2 and w2 == 5:
            (score,) = struct.unpack("<f", v2)
        elif n2 == 3 and w2 == 0:
            kind = v2
    return piece, score, kind


def _read_pieces(data: bytes, pos: int, m: ModelProto, raw: list[bytes]) -> int:
    """Read consecutive ``pieces`` records from ``pos``; returns where they end.

    One Python step per record finds where it lies; the usual layout (``0A plen piece 15
    score [18 type]``) is then taken apart for all records at once with numpy, and only
    records laid out otherwise go through the general field reader. A 256k vocabulary takes
    ~0.2 s.
    """
    n = len(data)
    starts: list[int] = []
    stops: list[int] = []
    while pos < n and data[pos] == 0x0A:
        ln = data[pos + 1] if pos + 1 < n else 0
        if ln < 0x80:
            start = pos + 2
        else:
            ln, start = _varint(data, pos + 1)
        pos = start + ln
        starts.append(start)
        stops.append(pos)
    if pos > n:
        raise _Truncated
    if not starts:
        return pos
    buf = np.frombuffer(data, dtype=np.uint8)
    st = np.array(starts, dtype=np.int64)
    sp = np.array(stops, dtype=np.int64)
    plen = buf[np.minimum(st + 1, n - 1)].astype(np.int64)
    spos = st + 2 + plen  # where the score field starts
    safe = np.minimum(spos, n - 5)
    ok = (sp - st >= 2) & (buf[st] == 0x0A) & (plen < 0x80) & (spos + 5 <= sp) & (buf[safe] == 0x15)
    has_kind = ok & (spos + 7 == sp)
    kpos = np.minimum(spos + 5, n - 2)
    has_kind &= (buf[kpos] == 0x18) & (buf[np.minimum(kpos + 1, n - 1)] < 0x80)
    ok &= (spos + 5 == sp) | has_kind
    gather = safe[:, None] + np.arange(1, 5)
    scores = buf[gather].copy().view("<f4").reshape(-1).astype(np.float64)
    kinds = np.where(has_kind, buf[np.minimum(kpos + 1, n - 1)], NORMAL).astype(np.int64)
    piece_lo = (st + 2).tolist()
    piece_hi = (st + 2 + plen).tolist()
    good = ok.tolist()
    sc, kd = scores.tolist(), kinds.tolist()
    for k, (a, b, g) in enumerate(zip(piece_lo, piece_hi, good)):
        if g:
            raw.append(data[a:b])
        else:
            piece, sc[k], kd[k] = _piece_fields(data[starts[k] : stops[k]])
            raw.append(piece)
    m.scores.extend(sc)
    m.types.extend(kd)
    return pos


def parse_model(data: bytes, path: Path | str = "<model>") -> ModelProto:
    """The parts of a SentencePiece ``ModelProto`` that tokenizing needs."""
    m = ModelProto()
    raw: list[bytes] = []
    pos = 0
    try:
        while pos < len(data):
            if data[pos] == 0x0A:  # field 1, length-delimited: a run of pieces
                pos = _read_pieces(data, pos, m, raw)
                if len(raw) > _MAX_PIECES:
                    raise VocabularyError(f"{path}: more than {_MAX_PIECES:,} pieces; refusing it")
                continue
            key, pos = _varint(data, pos)
            num, wire = key >> 3, key & 7
            if wire == 0:
                _, pos = _varint(data, pos)
                continue
            if wire in (1, 5):
                pos += 8 if wire == 1 else 4
                continue
            if wire != 2:
                raise ValueError(f"unsupported protobuf wire type {wire}")
            ln, pos = _varint(data, pos)
            val = data[pos : pos + ln]
            pos += ln
            if pos > len(data):
                raise _Truncated
            if num == 2:
                for n2, w2, v2 in fields(val):
                    if w2 != 0:
                        continue
                    if n2 == 3:
                        m.model_type = v2
                    elif n2 == 24:
                        m.treat_whitespace_as_suffix = bool(v2)
                    elif n2 == 35:
                        m.byte_fallback = bool(v2)
            elif num == 3:
                for n2, w2, v2 in fields(val):
                    if n2 == 1 and w2 == 2:
                        m.normalizer_name = v2.decode("utf-8", "replace")
                    elif n2 == 2 and w2 == 2:
                        m.charsmap = v2
                    elif n2 == 3 and w2 == 0:
                        m.add_dummy_prefix = bool(v2)
                    elif n2 == 4 and w2 == 0:
                        m.remove_extra_whitespaces = bool(v2)
                    elif n2 == 5 and w2 == 0:
                        m.escape_whitespaces = bool(v2)
        m.pieces = [b.decode("utf-8") for b in raw]
    except _Truncated:
        raise VocabularyError(f"{path}: the SentencePiece model is truncated") from None
    except VocabularyError:
        raise
    except (ValueError, UnicodeDecodeError, struct.error, IndexError) as exc:
        raise VocabularyError(f"{path}: not a SentencePiece model ({type(exc).__name__}: {exc})") from None
    return m


def looks_like(head: bytes) -> bool:
    """True if ``head`` starts like a ``ModelProto``: a first piece record ``<unk>``/``<pad>``/``<s>``...

    Every SentencePiece model starts with field 1 (a piece) whose own field 1 is a short string.
    """
    if len(head) < 6 or head[0] != 0x0A:
        return False
    try:
        ln, pos = _varint(head, 1)
        if not 2 <= ln <= 512 or head[pos] != 0x0A:
            return False
        sub = fields(head[pos : pos + ln])
    except (_Truncated, ValueError, IndexError):
        return False
    return bool(sub) and sub[0][0] == 1 and sub[0][1] == 2 and all(n in (1, 2, 3) for n, _, _ in sub)


def load(path: Path, **_: Any) -> Tokenizer:
    """A tokenizer from a SentencePiece ``.model`` file; only BPE models are accepted."""
    return from_model(parse_model(read_bytes_limited(path), path), path)


def from_model(m: ModelProto, path: Path | str) -> Tokenizer:
    expect(bool(m.pieces), path, "the SentencePiece model has no pieces")
    if m.model_type != 2:
        kind = MODEL_TYPES.get(m.model_type, f"type {m.model_type}")
        raise UnsupportedTokenizerError(
            f"{path}: a SentencePiece {kind} model; only BPE models are supported (Unigram models such as T5's "
            "and XLM-R's choose pieces by likelihood, not by merges)"
        )
    bad = next((k for k in m.types if k not in _PIECE_TYPES), None)
    expect(bad is None, path, f"a piece has an unknown type {bad}")
    if m.charsmap:
        raise UnsupportedTokenizerError(
            f"{path}: the model normalizes text with precompiled rules ({m.normalizer_name or 'a charsmap'}); "
            "only models without them ('identity', as Llama, Mistral and Gemma use) are supported"
        )
    if m.treat_whitespace_as_suffix:
        raise UnsupportedTokenizerError(f"{path}: treat_whitespace_as_suffix models are not supported")
    steps = [
        SqueezeSpaces() if m.remove_extra_whitespaces else None,
        Prepend(" ") if m.add_dummy_prefix else None,
        Replace(" ", "▁") if m.escape_whitespaces else None,
    ]
    types = np.array(m.types, dtype=np.int64)
    special_ids = np.nonzero(np.isin(types, (CONTROL, UNKNOWN)))[0].tolist()
    specials = {m.pieces[i]: i for i in special_ids if m.pieces[i]}
    unk = next((i for i in special_ids if m.types[i] == UNKNOWN), None)
    name = name_for(path, file_stem(path))
    return PieceVocabulary(m.pieces, m.types, scores=m.scores).tokenizer(
        path,
        normalizer=sequence(steps),
        special_tokens=specials,
        byte_fallback=m.byte_fallback,
        unk_id=unk,
        flavour="sentencepiece",
        strip_leading_space=m.add_dummy_prefix,
        name=name,
        source=f"{path} (SentencePiece BPE model)",
    )


def _gguf_vocab(meta: dict[str, Any], path: Path) -> tuple[list[str], list[int], dict[str, int], dict[str, int], str]:
    """Pieces, their types, the special ones (control, unknown), the added ones (user-defined,
    which llama.cpp always cuts out of the text) and the model's name."""
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not tokens:
        raise VocabularyError(f"{path}: tokenizer.ggml.tokens is missing or not a list of strings")
    types = meta.get("tokenizer.ggml.token_type")
    expect(types is None or len(types) == len(tokens), path, "token_type does not match the tokens")
    pieces = _decode_all(tokens)
    if types is not None:  # in bulk: a quarter of a million types
        arr = (
            np.asarray(types)
            if isinstance(types, array) and types.typecode in "bBhHiIlLqQ"
            else np.array([k if type(k) is int else -1 for k in types], dtype=np.int64)
        )
        kinds = np.where(np.isin(arr, list(_PIECE_TYPES)), arr, NORMAL).tolist()
        marked = np.nonzero(np.isin(arr, (CONTROL, UNKNOWN, USER_DEFINED)))[0].tolist()
    else:
        kinds, marked = [NORMAL] * len(pieces), []
    specials: dict[str, int] = {}
    added: dict[str, int] = {}
    for i in marked:
        p, k = pieces[i], kinds[i]
        if p and p not in specials and p not in added:
            (added if k == USER_DEFINED else specials)[p] = i
    promote_control_looking(pieces, specials, added)  # as llama.cpp does, whatever their type
    own = meta.get("general.name")
    own = own.decode("utf-8", "replace") if isinstance(own, bytes) else own if isinstance(own, str) else None
    name = name_for(path, own, file_stem(path))
    return pieces, kinds, specials, added, name


def from_gguf_gemma4(meta: dict[str, Any], path: Path) -> Tokenizer:
    """A tokenizer from GGUF metadata with ``tokenizer.ggml.model = gemma4`` (llama.cpp's BPE over
    ``▁`` pieces): the file's merges in order, spaces as ``▁`` and no prefix, runs of newlines
    apart (looked up whole), ``<0xXX>`` tokens for what no token covers."""
    pieces, kinds, specials, added, name = _gguf_vocab(meta, path)
    # taken out of the metadata, to be freed as soon as they are mapped (a third of the peak)
    merges_raw = meta.pop("tokenizer.ggml.merges", None)
    expect(isinstance(merges_raw, list), path, "tokenizer.ggml.merges is missing or not a list of strings")
    index = dict(zip(pieces, range(len(pieces))))  # llama.cpp's token_to_id: the last listing wins
    bulk = _merges_from_bytes(meta.get("tokenizer.ggml.tokens"), merges_raw, pieces, index)
    if bulk is not None:
        merges, made = bulk
    else:
        merges, made = [], []
        for at in range(0, len(merges_raw), _MERGES_AT_ONCE):  # decoded and mapped a slice at a time
            got = _gguf_merges(_decode_all(merges_raw[at : at + _MERGES_AT_ONCE]), index)
            merges += got[0]
            made += got[1]
    del merges_raw
    return PieceVocabulary(pieces, kinds, merges=merges, made=made).tokenizer(
        path,
        normalizer=Replace(" ", "▁"),
        special_tokens=specials,
        added_tokens=added,
        byte_fallback=True,
        flavour="llama.cpp",
        newline_words=True,
        piece_ids=index,
        name=name,
        source=f"{path} (GGUF, SentencePiece-style BPE with merges 'gemma4')",
    )


_MERGES_AT_ONCE = 1 << 16


def _merges_from_bytes(
    tokens: Any, raw: list[bytes], pieces: list[str], index: dict[str, int]
) -> tuple[list[tuple[int, int]], list[int]] | None:
    """:func:`_gguf_merges` of all the merges, mapped by their bytes in bulk
    (:func:`.bytemerges.map_gguf`) when every token is valid UTF-8 (its bytes then stand for its
    text); the few merges that are not found so (not valid UTF-8, no space) are looked up as
    text, as before."""
    if not (
        isinstance(tokens, list)
        and len(tokens) == len(pieces)
        and all(map(bytes.__instancecheck__, tokens))
        and all(map(bytes.__instancecheck__, raw))
    ):
        return None
    try:  # each token valid UTF-8 (a NUL between them: none can borrow a neighbour's bytes)
        b"\0".join(tokens).decode("utf-8")
    except UnicodeDecodeError:
        return None
    ia, ib, im, table = bytemerges.map_gguf(tokens, raw)
    found = (ia >= 0) & (ib >= 0) & (im >= 0)
    get = index.get
    for k in np.flatnonzero(~found).tolist():  # cut and looked up as text, as _gguf_merges does
        m = raw[k].decode("utf-8", "replace")
        cut = m.find(" ", 1)
        a, b = (m[:cut], m[cut + 1 :]) if cut > 0 else ("", "")
        x, y, z = get(a), get(b), get(a + b)
        if x is not None and y is not None and z is not None:
            ia[k], ib[k], im[k] = x, y, z
            found[k] = True
    keep = np.flatnonzero(found)
    return list(zip(table.id_list(ia[keep]), table.id_list(ib[keep]))), table.id_list(im[keep])


def _decode_all(raw: list[bytes]) -> list[str]:
    """UTF-8 text of each of ``raw`` (bad bytes as U+FFFD, as llama.cpp's text shows them)."""
    try:
        return list(map(bytes.decode, raw))  # no methodcaller: twice as fast when all are valid
    except UnicodeDecodeError:
        return list(map(methodcaller("decode", "utf-8", "replace"), raw))


def _gguf_merges(texts: list[str], index: dict[str, int]) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges as id pairs (cut at the first space after the first character, as llama.cpp
    does) and the id each makes. A merge whose parts or result are no tokens can never apply
    to token symbols and is left out. In bulk when every merge holds one space, not first."""
    get = index.get
    if not any(map(methodcaller("startswith", " "), texts)):
        # cut at the first space, as Hugging Face's merges are: the same when none starts with one
        found = map_merges(texts, index)
        if found is not None:
            return found
    merges: list[tuple[int, int]] = []
    results: list[int] = []
    for m in texts:
        cut = m.find(" ", 1)
        a, b = (m[:cut], m[cut + 1 :]) if cut > 0 else ("", "")
        ia, ib, ab = get(a), get(b), get(a + b)
        if ia is not None and ib is not None and ab is not None:
            merges.append((ia, ib))
            results.append(ab)
    return merges, results


def from_gguf(meta: dict[str, Any], path: Path) -> Tokenizer:
    """A tokenizer from GGUF metadata with ``tokenizer.ggml.model = llama`` (llama.cpp's SPM).

    Encodes as llama.cpp's ``llm_tokenizer_spm``: merges by score over every token, a space
    before each stretch of text that starts the input or follows a special token
    (``tokenizer.ggml.add_space_prefix``, default on), byte tokens for the rest.
    """

    pieces, kinds, specials, added, name = _gguf_vocab(meta, path)
    scores = meta.get("tokenizer.ggml.scores")
    if not isinstance(scores, array) or len(scores) != len(pieces):
        raise VocabularyError(
            f"{path}: tokenizer.ggml.scores is missing or does not match the tokens (llama.cpp's SentencePiece "
            "needs them)"
        )
    prefix = meta.get("tokenizer.ggml.add_space_prefix", True)
    steps = [Prepend(" ") if prefix else None, Replace(" ", "▁")]
    unk = meta.get("tokenizer.ggml.unknown_token_id")
    own = meta.get("general.name")
    own = own.decode("utf-8", "replace") if isinstance(own, bytes) else own if isinstance(own, str) else ""
    rstrip = rstrip_tokens(own, specials, added)  # llama.cpp's attributes for Phi-3
    return PieceVocabulary(pieces, kinds, scores=list(scores)).tokenizer(
        path,
        normalizer=sequence(steps),
        special_tokens=specials,
        added_tokens=added,
        added_options={t: (False, True, False, False) for t in rstrip},
        byte_fallback=True,
        unk_id=unk if isinstance(unk, int) and 0 <= unk < len(pieces) else None,
        flavour="llama.cpp",
        strip_leading_space=bool(prefix),
        name=name,
        source=f"{path} (GGUF, SentencePiece-style BPE 'llama')",
    )


__all__ = ["BYTE", "ModelProto", "fields", "from_gguf", "from_model", "load", "looks_like", "parse_model"]
