"""GGUF model files (llama.cpp) whose ``tokenizer.ggml.model`` is ``gpt2`` (byte-level BPE) or
``llama`` (SentencePiece-style BPE, loaded by :func:`.sentencepiece.from_gguf`).

Only the key/value metadata at the front of the file is read, with a small streaming
parser (``gguf``'s ``GGUFReader`` also indexes every tensor and builds numpy views of every
string, which takes seconds for a large vocabulary); tensor data is never touched, so a
multi-GB model opens as fast as a small one. The value type and token type codes are the
GGUF specification's (tests check them against the ``gguf`` package, which is not imported
here: with mistral_common installed, importing it is slow and takes much memory).

Tokens are in GPT-2's byte alphabet; control tokens become special tokens and user-defined
ones added tokens (llama.cpp matches them before BPE even with special parsing off);
``tokenizer.ggml.pre`` picks the split rule (see :mod:`.gguf_pre`).
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable
from enum import IntEnum
from itertools import chain, compress
from operator import add, methodcaller
from pathlib import Path
from typing import IO, Any

import numpy as np

from bpeinspect.core import limits
from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.formats._common import (
    ByteVocabulary,
    all_found,
    check_count,
    cut_at_spaces,
    expect,
    merge_ids,
    open_binary,
    tokens_to_bytes,
)
from bpeinspect.core.io.formats.gguf_pre import CONTROL_LOOKING, promote_control_looking, rule_for_pre
from bpeinspect.core.io.naming import file_stem, name_for
from bpeinspect.core.split.rules import SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer


class GGUFValueType(IntEnum):
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


class TokenType(IntEnum):
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


GGUF_MAGIC = 0x46554747
MAGIC = struct.pack("<I", GGUF_MAGIC)  # b"GGUF"
_SCALARS: dict[int, str] = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}
_MAX_KEY = 1 << 16
_CHUNK = 1 << 20
_BULK = 1 << 20  # bytes of strings found at a time
# Keys whose string arrays we decode; other arrays are skipped without building them.
WANTED_ARRAYS = {"tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"}


def looks_like(head: bytes) -> bool:
    return head[:4] == MAGIC


class _Stream:
    """Sequential reads from a file, refusing any length that runs past its end."""

    def __init__(self, f: IO[bytes], size: int, path: Path) -> None:
        self.f, self.size, self.path = f, size, path
        self.buf = b""
        self.pos = 0  # position in buf
        self.base = 0  # file offset of buf[0]

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def ensure(self, n: int) -> None:
        """Make ``buf[pos:pos + n]`` available, reading more of the file if needed."""
        if n < 0 or self.offset + n > self.size:
            raise VocabularyError(
                f"{self.path}: the GGUF metadata is truncated or claims more data than the file holds"
            )
        if self.pos + n > len(self.buf):
            rest = self.buf[self.pos :]
            self.base += self.pos
            self.buf = rest + self.f.read(max(n - len(rest), _CHUNK))
            self.pos = 0
            if n > len(self.buf):
                raise VocabularyError(f"{self.path}: the GGUF file is truncated")

    def take(self, n: int) -> bytes:
        self.ensure(n)
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def strings(self, count: int, unpack_len: Any, keep: bool = True) -> list[bytes]:
        """``count`` length-prefixed strings (the hot loop for vocabularies and merges); with
        ``keep=False`` they are only stepped over. Little-endian ones are found a block at a
        time where they can be (:meth:`_strings_in_bulk`), the rest one by one."""
        if not keep or unpack_len(b"\1" + bytes(7), 0)[0] != 1:
            return self._strings_each(count, unpack_len, keep)
        out: list[bytes] = []
        while len(out) < count:
            got = self._strings_in_bulk(count - len(out))
            out += got
            if not got:  # not found so (a long string, a run of empty ones): the next few one by one
                out += self._strings_each(min(count - len(out), 64), unpack_len, keep)
        return out

    def _strings_in_bulk(self, most: int) -> list[bytes]:
        """Up to ``most`` strings from here, found together in the next block of the file: every
        place whose next 7 bytes are zero may hold a length under 256; from here, each string
        must end where such a place starts, and the strings up to the first that does not are
        taken (every one checked: a chain of true lengths from a true start)."""
        self.ensure(min(_BULK, self.size - self.offset))
        block = np.frombuffer(self.buf, dtype=np.uint8, offset=self.pos)
        if len(block) < 16:
            return []
        zero = block == 0
        high = zero[1:-7].copy()  # bytes 1-7 of a length all zero
        for k in range(2, 8):
            high &= zero[k : len(block) - 8 + k]
        cand = np.flatnonzero(high)
        if not len(cand) or cand[0] != 0:
            return []
        nxt = cand + 8 + block[cand]
        chain = np.append(nxt[:-1] == cand[1:], False)  # each string ends where the next length is
        n = min(int(np.argmin(chain)) + 1, most)  # up to the first break (the last one may overrun)
        if nxt[n - 1] > len(block):
            n -= 1
        if n <= 0:
            return []
        base, buf = self.pos, self.buf
        ends = (nxt[:n] + base).tolist()
        out = [buf[s:e] for s, e in zip((cand[:n] + (base + 8)).tolist(), ends)]
        self.pos = ends[-1]
        return out

    def _strings_each(self, count: int, unpack_len: Any, keep: bool = True) -> list[bytes]:
        out: list[bytes] = []
        append = out.append if keep else len
        buf, pos = self.buf, self.pos
        blen = len(buf)
        longest = 2 * limits.MAX_TOKEN_BYTES + 1  # a merge is two tokens and a space
        for _ in range(count):
            if pos + 8 > blen:
                self.pos = pos
                self.ensure(8)
                buf, pos, blen = self.buf, self.pos, len(self.buf)
            (n,) = unpack_len(buf, pos)
            pos += 8
            if n > longest:
                raise VocabularyError(
                    f"{self.path}: a string of {n:,} bytes in the GGUF metadata; tokens are at most "
                    f"{limits.MAX_TOKEN_BYTES:,} bytes"
                )
            if pos + n > blen:
                self.pos = pos
                self.ensure(n)
                buf, pos, blen = self.buf, self.pos, len(self.buf)
            append(buf[pos : pos + n])
            pos += n
        self.pos = pos
        return out


def read_metadata(
    f: IO[bytes], path: Path, size: int | None = None, wanted: frozenset[str] | set[str] = WANTED_ARRAYS
) -> dict[str, Any]:
    """The key/value metadata of a GGUF stream, reading nothing past it.

    Arrays outside ``wanted`` (default :data:`WANTED_ARRAYS`) come back as ``None`` (skipped).
    """
    if size is None:
        size = os.fstat(f.fileno()).st_size
    s = _Stream(f, size, path)
    if s.size < 4 or s.take(4) != MAGIC:
        raise VocabularyError(f"{path}: not a GGUF file (no 'GGUF' magic)")
    end = "<"
    (version,) = struct.unpack("<I", s.take(4))
    if version > 0xFFFF:  # written on a big-endian machine
        end, version = ">", struct.unpack(">I", struct.pack("<I", version))[0]
    expect(version in (2, 3), path, f"GGUF version {version} is not supported (2 and 3 are)")
    _n_tensors, n_kv = struct.unpack(end + "QQ", s.take(16))
    expect(n_kv <= (size - s.offset) // 13, path, f"claims {n_kv} metadata entries, more than the file can hold")

    def string() -> bytes:
        (n,) = struct.unpack(end + "Q", s.take(8))
        return s.take(n)

    def cap(count: int, key: str) -> None:
        # before reading: a sparse file of zeros holds as many (empty) strings as it claims
        if count > limits.MAX_METADATA_ITEMS:
            raise VocabularyError(
                f"{path}: {key or 'an array'} claims {count:,} entries; bpeinspect reads at most {limits.MAX_METADATA_ITEMS:,}"
            )
        if key == "tokenizer.ggml.tokens":
            check_count(count, path)

    def value(vtype: int, key: str) -> Any:
        if vtype in _SCALARS:
            fmt = end + _SCALARS[vtype]
            return struct.unpack(fmt, s.take(struct.calcsize(fmt)))[0]
        if vtype == GGUFValueType.STRING:
            return string()
        if vtype == GGUFValueType.ARRAY:
            etype, count = struct.unpack(end + "IQ", s.take(12))
            if etype in _SCALARS:
                width = struct.calcsize(_SCALARS[etype])
                if count * width > size - s.offset:
                    s.ensure(-1)  # refused: claims more than the file holds
                cap(count, key)
                raw = s.take(count * width)
                if key not in wanted:
                    return None
                arr = array(_SCALARS[etype] if _SCALARS[etype] != "?" else "B")
                expect(arr.itemsize == width, path, "unexpected integer width on this machine")
                arr.frombytes(raw)
                if end == ">":
                    arr.byteswap()
                return arr
            if etype == GGUFValueType.STRING:
                expect(
                    count <= (size - s.offset) // 8, path, f"{key}: claims {count} strings, more than the file holds"
                )
                cap(count, key)
                items = s.strings(count, struct.Struct(end + "Q").unpack_from, keep=key in wanted)
                return items if key in wanted else None
            if etype == GGUFValueType.ARRAY:
                expect(
                    count <= (size - s.offset) // 12, path, f"{key}: claims {count} arrays, more than the file holds"
                )
                cap(count, key)
                for _ in range(count):
                    value(GGUFValueType.ARRAY, "")
                return None
            raise VocabularyError(f"{path}: {key}: unknown array element type {etype}")
        raise VocabularyError(f"{path}: {key}: unknown value type {vtype}")

    meta: dict[str, Any] = {}
    for _ in range(n_kv):
        (klen,) = struct.unpack(end + "Q", s.take(8))
        expect(klen <= _MAX_KEY, path, "a metadata key is implausibly long")
        key = s.take(klen).decode("utf-8", errors="replace")
        (vtype,) = struct.unpack(end + "I", s.take(4))
        meta[key] = value(vtype, key)
    return meta


def _text(v: Any) -> str | None:
    return v.decode("utf-8", errors="replace") if isinstance(v, bytes) else None


def load(
    path: Path, *, pattern: str | SplitRule | None = None, should_stop: Callable[[], bool] | None = None, **_: Any
) -> Tokenizer:
    """The tokenizer stored in a GGUF file's metadata; ``pattern`` replaces the split rule its
    pre-tokenizer name implies (needed for a name bpeinspect does not know)."""
    try:
        f, size = open_binary(path)
        with f:
            meta = read_metadata(f, path, size)
    except FileNotFoundError:
        raise VocabularyError(f"{path}: no such file") from None
    except OSError as exc:
        raise VocabularyError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except RecursionError:  # arrays of arrays nested thousands deep (found by tests/robustness)
        raise VocabularyError(f"{path}: the GGUF metadata nests arrays too deeply") from None
    return from_metadata(meta, path, pattern=pattern, should_stop=should_stop)


def from_metadata(
    meta: dict[str, Any],
    path: Path,
    *,
    pattern: str | SplitRule | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    model = _text(meta.get("tokenizer.ggml.model"))
    if model is None:
        raise VocabularyError(f"{path}: the GGUF file has no tokenizer (no tokenizer.ggml.model)")
    if model in ("llama", "gemma4"):
        from bpeinspect.core.io.formats.sentencepiece import from_gguf, from_gguf_gemma4

        return from_gguf(meta, path) if model == "llama" else from_gguf_gemma4(meta, path)
    if model != "gpt2":
        kind = {
            "bert": "WordPiece (bert), not BPE",
            "t5": "Unigram (t5), not BPE",
            "rwkv": "RWKV's greedy vocabulary, not BPE",
            "plamo2": "PLaMo-2's Aho-Corasick vocabulary, not BPE",
        }.get(model, model)
        raise UnsupportedTokenizerError(
            f"{path}: the tokenizer is {kind}; only BPE tokenizers ('gpt2' and 'llama') are supported"
        )
    tokens = meta.get("tokenizer.ggml.tokens")
    merges_raw = meta.get("tokenizer.ggml.merges")
    if not isinstance(tokens, list) or not tokens:
        raise VocabularyError(f"{path}: tokenizer.ggml.tokens is missing or not a list of strings")
    if not isinstance(merges_raw, list):
        raise VocabularyError(f"{path}: tokenizer.ggml.merges is missing or not a list of strings")
    types = meta.get("tokenizer.ggml.token_type")
    if types is not None and not (isinstance(types, array) and len(types) == len(tokens)):
        raise VocabularyError(f"{path}: token_type does not match the tokens")
    # raw token text (UTF-8) -> its first id (built in reverse so the lowest id wins)
    index: dict[bytes, int] = dict(zip(reversed(tokens), range(len(tokens) - 1, -1, -1)))
    specials: dict[str, int] = {}
    added: dict[str, int] = {}
    cut = (TokenType.CONTROL, TokenType.USER_DEFINED)
    texts = _decode_all(tokens)
    if types is None:
        normal: range | list[int] = range(len(tokens))
    else:
        kinds = np.frombuffer(types, dtype=np.dtype(types.typecode)) if len(types) else np.zeros(0, np.int64)
        is_cut = np.isin(kinds, cut)
        normal = np.flatnonzero(~is_cut).tolist()
        for i in np.flatnonzero(is_cut).tolist():
            text = texts[i]
            if text and text not in specials and text not in added:
                (specials if types[i] == TokenType.CONTROL else added)[text] = i
    # (a token decodes to one of these texts exactly when it is its UTF-8: none holds U+FFFD)
    looking = [(i, texts[i]) for i in compress(range(len(tokens)), map(_LOOKING_BYTES.__contains__, tokens))]
    if looking:  # llama.cpp makes these control tokens whatever their type
        texts_by_id = [""] * (looking[-1][0] + 1)
        for i, t in looking:
            texts_by_id[i] = t
        promote_control_looking(texts_by_id, specials, added)
    # in bulk: one decode and one charmap call for the whole vocabulary; the first id of a
    # token wins (built in reverse); entries outside the byte alphabet are unused/odd ones
    # that byte-level BPE can never produce
    blobs = tokens_to_bytes(texts if isinstance(normal, range) else list(map(texts.__getitem__, normal)))
    if all_found(blobs):
        ranks: dict[bytes, int] = dict(zip(reversed(blobs), reversed(normal)))
    else:
        ranks = dict(reversed([(b, i) for b, i in zip(blobs, normal) if b is not None]))
    merges, parsed_made = _parse_merges(merges_raw, index, path)
    # None where a merge makes a token that is not a normal one
    made = parsed_made if set(parsed_made) <= set(ranks.values()) else None
    if len(set(merges)) != len(merges):  # llama.cpp keeps the last rank of a repeated pair
        last = {p: n for n, p in enumerate(merges)}
        keep = [last[p] == n for n, p in enumerate(merges)]
        merges = [p for p, k in zip(merges, keep) if k]
        made = None if made is None else [m for m, k in zip(made, keep) if k]
    pre = _text(meta.get("tokenizer.ggml.pre"))
    inferred: dict[str, str] = {}
    assumed: dict[str, str] = {}
    if pattern is not None:
        rule, ignore_merges = resolve_rule(pattern), False
        assumed["pattern"] = f"chosen by the user (the file names the pre-tokenizer {pre or 'none'!r})"
    else:
        rule, ignore_merges = rule_for_pre(pre, str(path))
        if pre:
            inferred["pattern"] = f"llama.cpp's split rule for the pre-tokenizer {pre!r} (tokenizer.ggml.pre)"
        else:
            assumed["pattern"] = (
                "llama.cpp's 'default' split rule: the file names no pre-tokenizer (tokenizer.ggml.pre)"
            )
    name = name_for(path, _text(meta.get("general.name")), file_stem(path))
    return ByteVocabulary(ranks, specials, added, merges, made).tokenizer(
        path,
        rule,
        should_stop=should_stop,
        ignore_merges=ignore_merges,
        byte_barriers=True,  # llama.cpp drops a byte without a token after merging
        name=name,
        source=f"{path} (GGUF, pre-tokenizer {pre or 'unset'})",
        assumed=assumed,
        inferred=inferred,
    )


_LOOKING_BYTES = frozenset(t.encode("utf-8") for t in CONTROL_LOOKING)


def _decode_all(tokens: list[bytes]) -> list[str]:
    r"""Each token's text (invalid UTF-8 replaced), decoded in one call where no token holds a
    NUL to keep them apart (``replace`` works on maximal bad subsequences, which a NUL ends, so
    the result is the same as decoding one by one).

    >>> tokens = [b"a\xe2\x80", b"\x9fb", b"", b"\xf0"]
    >>> _decode_all(tokens) == [t.decode("utf-8", errors="replace") for t in tokens]
    True
    """
    joined = b"\0".join(tokens)
    if joined.count(b"\0") == len(tokens) - 1:
        return joined.decode("utf-8", errors="replace").split("\0") if tokens else []
    return [t.decode("utf-8", errors="replace") for t in tokens]


def _parse_merges(raw: list[bytes], index: dict[bytes, int], path: Path) -> tuple[list[tuple[int, int]], list[int]]:
    """The merges as id pairs and the id each makes, mapped in C (``map``), not one by one: cut
    all at once where every merge holds exactly one space (n spaces in all, each holding one;
    NUL keeps them apart in the joined bytes), else split one by one.

    >>> _parse_merges([b"a b", b"ab c"], {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4}, Path("x"))
    ([(0, 1), (3, 2)], [3, 4])
    """
    cut = cut_at_spaces(raw, b" ", b"\0")
    if cut is not None:
        flat, whole = cut
    else:
        split = list(map(methodcaller("split", b" "), raw))
        if split and set(map(len, split)) != {2}:
            k = next(k for k, parts in enumerate(split) if len(parts) != 2)
            raise VocabularyError(f"{path}: merge {k} is not 'left right'")
        flat = list(chain.from_iterable(split))
        whole = list(map(add, flat[0::2], flat[1::2]))
    found = merge_ids(flat, whole, index)
    if found is None:
        k = next(k for k in range(len(raw)) if not all(t in index for t in (flat[2 * k], flat[2 * k + 1], whole[k])))
        raise VocabularyError(f"{path}: merge {k} uses or makes a token not in the vocabulary")
    return found
