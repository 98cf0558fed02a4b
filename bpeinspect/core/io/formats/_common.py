"""Helpers shared by the format modules: bounded reads, safe JSON, GPT-2's byte alphabet."""

from __future__ import annotations

import codecs
import contextlib
import functools
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from operator import add, contains
from pathlib import Path
from typing import IO, Any, ParamSpec, TypeGuard, TypeVar

from bpeinspect.core import limits, tables
from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.sentencepiece import SentencePieceBPE
from bpeinspect.core.split.rules import PatternError, SplitRule, compile_pattern
from bpeinspect.core.tokenizer import Tokenizer

_T = TypeVar("_T")
_R = TypeVar("_R")
_P = ParamSpec("_P")
_K = TypeVar("_K", str, bytes)

# The largest real vocabulary files are tens of MB (a 256k-token tokenizer.json is ~35 MB).
MAX_TEXT_FILE = limits.MAX_VOCAB_FILE

# Files that can be read only once (a FIFO, ``<(zcat x.gz)``), by path, while load_path
# loads one: detection and the loader get the same bytes instead of reading the pipe twice.
_READ_ONCE: ContextVar[dict[str, bytes] | None] = ContextVar("read_once", default=None)


def is_stream(path: Path) -> bool:
    """True for a path that exists but is neither a regular file nor a folder (a FIFO, a
    character device, a process substitution's ``/dev/fd/N``)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def read_once(path: Path) -> Iterator[None]:
    """While the block runs, every read of ``path`` through this module gets the same bytes,
    read once, if ``path`` is a stream (:func:`is_stream`); a regular file is read as usual."""
    if not is_stream(path) or str(path) in (_READ_ONCE.get() or {}):
        yield
        return
    data = _read_raw(path, limits.MAX_VOCAB_FILE)
    token = _READ_ONCE.set({**(_READ_ONCE.get() or {}), str(path): data})
    try:
        yield
    finally:
        _READ_ONCE.reset(token)


GZIP_MAGIC = b"\x1f\x8b"
# Paths whose bytes, while a load runs, are what their gzip data decompresses to.
_GUNZIPPED: ContextVar[frozenset[str]] = ContextVar("gunzipped", default=frozenset())


@contextlib.contextmanager
def gunzipped(path: Path) -> Iterator[None]:
    """While the block runs, every read of ``path`` through this module gets its content
    decompressed if it is gzip data (a ``tokenizer.json.gz`` reads as its ``tokenizer.json``),
    with the bound of :func:`gunzip_limited`; anything else is read as usual."""
    if str(path) in _GUNZIPPED.get():
        yield
        return
    try:
        magic = read_head(path, 2)
    except OSError:  # the reader that comes next says what is wrong with the path
        magic = b""
    if magic != GZIP_MAGIC:
        yield
        return
    data = gunzip_limited(_read_raw(path, limits.MAX_VOCAB_FILE), path)
    if data[:2] == GZIP_MAGIC:
        raise VocabularyError(f"{path}: gzip data inside gzip data; decompress it once first")
    token = _READ_ONCE.set({**(_READ_ONCE.get() or {}), str(path): data})
    marked = _GUNZIPPED.set(_GUNZIPPED.get() | {str(path)})
    try:
        yield
    finally:
        _GUNZIPPED.reset(marked)
        _READ_ONCE.reset(token)


def is_gunzipped(path: Path) -> bool:
    """True while ``path`` is read decompressed (inside :func:`gunzipped`, for gzip data)."""
    return str(path) in _GUNZIPPED.get()


def read_head(path: Path, n: int) -> bytes:
    """The first ``n`` bytes of the file (of what was read once, for a stream)."""
    cached = (_READ_ONCE.get() or {}).get(str(path))
    if cached is not None:
        return cached[:n]
    _note_read(path)
    with open(path, "rb") as f:
        return f.read(n)


def open_binary(path: Path) -> tuple[IO[bytes], int]:
    """The file open for reading and its size (what was read once, for a stream)."""
    cached = (_READ_ONCE.get() or {}).get(str(path))
    if cached is not None:
        return io.BytesIO(cached), len(cached)
    _note_read(path)
    f = open(path, "rb")  # noqa: SIM115 - the caller closes it
    return f, os.fstat(f.fileno()).st_size


def _read_raw(path: Path, limit: int) -> bytes:
    cached = (_READ_ONCE.get() or {}).get(str(path))
    if cached is not None:
        return cached
    _note_read(path)
    try:
        if path.is_dir():
            raise VocabularyError(f"{path}: is a folder, not a vocabulary file")
        size = path.stat().st_size
        if size > limit:
            raise VocabularyError(f"{path}: {limits.human_size(size)} is larger than any vocabulary file; refusing it")
        with open(path, "rb") as f:
            data = limits.read_at_most(f, limit)
    except FileNotFoundError:
        raise VocabularyError(f"{path}: no such file") from None
    except OSError as exc:
        raise VocabularyError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise VocabularyError(
            f"{path}: more than {limits.human_size(limit)}, larger than any vocabulary file; refusing it"
        )
    return data


def read_bytes_limited(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes, refusing empty files, folders and anything over ``limit``
    (:data:`limits.MAX_VOCAB_FILE` by default).

    A gzip file is decompressed, with the same limit on what it expands to.
    """
    limit = limits.MAX_VOCAB_FILE if limit is None else limit
    data = _read_raw(path, limit)
    if not data:
        raise VocabularyError(f"{path}: the file is empty")
    if data[:2] == GZIP_MAGIC:
        data = gunzip_limited(data, path, limit)
    return data


def gunzip_limited(data: bytes, path: Path, limit: int | None = None) -> bytes:
    """Decompress gzip ``data``, every member of it (``cat a.gz b.gz`` is one valid file);
    what expands past ``limit`` is refused (a bomb)."""
    limit = limits.MAX_VOCAB_FILE if limit is None else limit
    out: list[bytes] = []
    total = 0
    rest = data
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            chunk = d.decompress(rest, limit + 1 - total)
        except zlib.error as exc:
            raise VocabularyError(f"{path}: damaged gzip data: {exc}") from None
        total += len(chunk)
        out.append(chunk)
        if total > limit or d.unconsumed_tail:
            raise VocabularyError(f"{path}: decompresses to more than {limits.human_size(limit)}; refusing it")
        if not d.eof:
            raise VocabularyError(f"{path}: the gzip data is truncated")
        rest = d.unused_data.lstrip(b"\0")  # members may be padded with zeros, as gzip allows
        if not rest:
            break
    if not total:
        raise VocabularyError(f"{path}: the file is empty")
    return b"".join(out)


def check_count(n: int, path: Path | str, what: str = "tokens") -> None:
    """Refuse a file that holds (or claims) more than :data:`limits.MAX_IDS` tokens before
    they are read: memory, not the file's size, is what they would cost."""
    if n > limits.MAX_IDS:
        raise VocabularyError(f"{path}: {n:,} {what}, more than bpeinspect opens (at most {limits.MAX_IDS:,})")


def decode_text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None


def parse_json(data: bytes, path: Path) -> Any:
    """Parse JSON, reporting damage as :class:`VocabularyError` (never JSONDecodeError)."""
    if len(data) >= _SPLIT_SIZE:
        obj = _parse_merges_apart(data)
        if obj is not None:
            return obj
    text = decode_text(data, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise VocabularyError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise VocabularyError(f"{path}: the JSON is nested too deeply") from None
    except ValueError as exc:  # a number of more than 4,300 digits
        raise VocabularyError(f"{path}: not valid JSON ({str(exc).split(';')[0]})") from None


# A big tokenizer.json's merges are parsed a slice at a time and mapped to ids at once (the
# parsed lists of strings were half a large vocabulary's peak memory), and never as one text:
# text with one emoji takes 4 bytes a character (a 31 MB Gemma file is a 118 MB str).
_SPLIT_SIZE = 4 << 20
_SLICE = 1 << 20
_MERGES_KEY = re.compile(rb'"merges"\s*:\s*(\[)\s*([\["])')
# between two merges: `"], ["` (pairs) or `", "` (strings); a cut inside a string (an escaped
# quote) leaves a slice that does not parse, and the file is then parsed whole
_BETWEEN = {b"[": re.compile(rb'"\s*\]\s*(,)\s*\[\s*"'), b'"': re.compile(rb'"\s*(,)\s*"')}
_PLACEHOLDER = "bpeinspect: the merges, parsed apart"


@dataclass
class MappedMerges:
    """A ``tokenizer.json``'s merges, already mapped by :func:`map_merges` while parsing."""

    pairs: list[tuple[int, int]]
    made: list[int]

    def __len__(self) -> int:
        return len(self.pairs)


def _merges_keys(data: bytes) -> list[re.Match]:
    """Every match of :data:`_MERGES_KEY` in ``data``: found with ``bytes.find`` (a fast scan),
    matched only there (a regex search crawls through a 30 MB file)."""
    out = []
    at = data.find(b'"merges"')
    while at >= 0:
        m = _MERGES_KEY.match(data, at)
        if m is not None:
            out.append(m)
        at = data.find(b'"merges"', at + 1)
    return out


def _parse_merges_apart(data: bytes) -> Any:
    """The parse of a ``tokenizer.json`` with its one ``"merges"`` array parsed a slice at a time
    and mapped against the vocabulary beside it (a :class:`MappedMerges` in its place), or
    ``None`` if the file is not laid out so or anything is amiss (the caller then parses it
    whole and reports any damage as usual)."""
    found = _merges_keys(data)
    if len(found) != 1 or _PLACEHOLDER.encode() in data or b'"vocab"' not in data:
        return None
    m = found[0]
    k = m.start()
    while k > 0 and data[k - 1] == 0x5C:  # backslashes: an odd number escapes the quote
        k -= 1
    if (m.start() - k) % 2:
        return None
    between = _BETWEEN[m.group(2)]
    cuts = [m.start(2)]  # where each slice of merges starts
    while (nxt := between.search(data, cuts[-1] + _SLICE)) is not None:
        cuts.append(nxt.start(1) + 1)
    start = 3 if data.startswith(codecs.BOM_UTF8) else 0
    view = memoryview(data)
    decoder = json.JSONDecoder()
    try:
        last, end = decoder.raw_decode("[" + str(view[cuts[-1] :], "utf-8"))
        rest = str(view[cuts[-1] :], "utf-8")[end - 1 :]
        obj = json.loads(str(view[start : m.start(1)], "utf-8") + json.dumps(_PLACEHOLDER) + rest)
        holders = [obj, *obj.values()] if isinstance(obj, dict) else []
        holders = [h for h in holders if isinstance(h, dict) and h.get("merges") == _PLACEHOLDER]
        if len(holders) != 1 or not isinstance(holders[0].get("vocab"), dict):
            return None
        vocab = holders[0]["vocab"]
        pairs: list[tuple[int, int]] = []
        made: list[int] = []
        for a, b in zip(cuts, cuts[1:]):
            got = map_merges(json.loads("[" + str(view[a : b - 1], "utf-8") + "]"), vocab)
            if got is None:
                return None
            pairs += got[0]
            made += got[1]
        got = map_merges(last, vocab)
        if got is None:
            return None
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    holders[0]["merges"] = MappedMerges(pairs + got[0], made + got[1])
    return obj


def expect(cond: object, path: Path | str, message: str) -> None:
    """Refuse the file, naming it, unless ``cond`` holds (is truthy)."""
    if not cond:
        raise VocabularyError(f"{path}: {message}")


def map_merges(items: list, vocab: dict[str, int]) -> tuple[list[tuple[int, int]], list[int]] | None:
    """A ``tokenizer.json``'s merges (``"a b"`` strings or ``[a, b]`` lists) as id pairs, and
    the id each one makes, when every one is well formed (the usual case); else ``None``, and
    the caller finds the first bad one to name it. Mapped in C (``map``, one flat list of
    parts), not merge by merge, a few thousand merges at a time: the new part strings are
    still in the processor's cache when they are looked up.

    >>> map_merges(["a b", "ab c"], {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4})
    ([(0, 1), (3, 2)], [3, 4])
    >>> map_merges([["a", "b"], ["a", "x"]], {"a": 0, "b": 1, "ab": 3}) is None
    True
    """
    if not items:
        return [], []
    if all(map(str.__instancecheck__, items)):
        strings = True
    elif all(map(list.__instancecheck__, items)):
        strings = False
    else:
        return None
    pairs: list[tuple[int, int]] = []
    made: list[int] = []
    for at in range(0, len(items), _MAP_AT_ONCE):
        got = _map_some(items[at : at + _MAP_AT_ONCE], vocab, strings)
        if got is None:
            return None
        pairs += got[0]
        made += got[1]
    return pairs, made


_MAP_AT_ONCE = 8192


def cut_at_spaces(items: list, space: Any, nul: Any) -> tuple[list, list] | None:
    r"""Merges written ``"left right"`` (``str`` or ``bytes`` items), cut all at once: (the halves
    in order, each item without its space), or None unless every item holds exactly one
    ``space``. With n spaces in all and one in each item, each holds exactly one; ``nul`` (never
    in these files) keeps the items apart in the joined text.

    >>> cut_at_spaces([b"a b", b"ab c"], b" ", b"\0")
    ([b'a', b'b', b'ab', b'c'], [b'ab', b'abc'])
    >>> cut_at_spaces(["a b c"], " ", "\0") is None
    True
    """
    n = len(items)
    joined = nul.join(items)
    if joined.count(space) != n or joined.count(nul) != n - 1 or not all(map(contains, items, repeat(space))):
        return None
    return joined.replace(space, nul).split(nul), joined.replace(space, space[:0]).split(nul)


def _map_some(items: list, vocab: dict[str, int], strings: bool) -> tuple[list[tuple[int, int]], list[int]] | None:
    if strings:
        cut = cut_at_spaces(items, " ", "\0")
        if cut is None:
            return None
        flat, whole = cut
    else:
        if set(map(len, items)) != {2}:
            return None
        flat = list(chain.from_iterable(items))
        if not all(map(str.__instancecheck__, flat)):
            return None
        whole = list(map(add, flat[0::2], flat[1::2]))
    return merge_ids(flat, whole, vocab)


def first_repeat(items: Iterable[_T]) -> _T:
    """The first item that was seen before (``ValueError`` when none repeats).

    >>> first_repeat([3, 1, 4, 1, 3])
    1
    """
    seen: set[_T] = set()
    for item in items:
        if item in seen:
            return item
        seen.add(item)
    raise ValueError("no item repeats")


def all_found(values: list[_T | None]) -> TypeGuard[list[_T]]:
    """Whether a list of look-ups found every one (holds no ``None``)."""
    return None not in values


def merge_ids(
    flat: list[_K], whole: list[_K], vocab: Mapping[_K, int]
) -> tuple[list[tuple[int, int]], list[int]] | None:
    """Merges given as their parts in order (``flat``, two a merge) and what each makes
    (``whole``), looked up in ``vocab``: (the id pairs, the ids made), or None unless every
    one is in it. Mapped in C (``map``), not merge by merge.

    >>> merge_ids([b"a", b"b", b"ab", b"c"], [b"ab", b"abc"], {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4})
    ([(0, 1), (3, 2)], [3, 4])
    >>> merge_ids(["a", "x"], ["ax"], {"a": 0}) is None
    True
    """
    get = vocab.get
    made = list(map(get, whole))
    if not all_found(made):
        return None
    ids = list(map(get, flat))
    if not all_found(ids):
        return None
    pairs = iter(ids)
    return list(zip(pairs, pairs)), made


# The files read while a file loads (its own and any beside it: a GPT-2 pair's other half), for
# core/io/load_cache.py, which checks them all before it uses an entry.
_FILES: ContextVar[list[Path] | None] = ContextVar("files_read", default=None)


def _note_read(path: Path) -> None:
    files = _FILES.get()
    if files is not None:
        files.append(Path(path))


@contextlib.contextmanager
def files_read() -> Iterator[list[Path]]:
    """Collect the paths of the files read through this module in the block."""
    files: list[Path] = []
    token = _FILES.set(files)
    try:
        yield files
    finally:
        _FILES.reset(token)


def build_tokenizer(path: Path | str, factory: Callable[_P, _R], /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """Call the Tokenizer constructor, naming the file in any complaint it has.

    A ``should_stop`` among ``kwargs`` goes to the constructor (it asks it while it builds its
    tables) but is not recorded as a part of the tokenizer."""
    try:
        tok = factory(*args, **kwargs)
        stored = {k: v for k, v in kwargs.items() if k not in tables.CALL_ONLY}
        if tables.factory_name(factory) == "SentencePieceBPE":  # (kept to send it to child processes)
            with contextlib.suppress(tables.TablesError):
                tables.remember(tok, tables.parts_from_call(factory, args, stored))
        # Patterns compile lazily; a damaged one must fail here, naming the file, not at the
        # first encode (found by tests/robustness).
        for split in getattr(getattr(tok, "split_rule", None), "splits", ()):
            compile_pattern(split.pattern)
        return tok
    except VocabularyError:
        raise
    except (PatternError, ValueError, TypeError) as exc:
        raise VocabularyError(f"{path}: {exc}") from None


@dataclass
class ByteVocabulary:
    """The tables a file of a byte-level model gives (Hugging Face, GGUF, Tekken, bpeinspect's own):
    each token's bytes and id (``ranks``), the special and added tokens, and for a merge list
    its merges (``None``: the rank rule) with the id each makes (``made``; ``None``: looked up)."""

    ranks: Mapping[bytes, int]
    specials: Mapping[str, int]
    added: Mapping[str, int]
    merges: Sequence[tuple[int, int]] | None = None
    made: Sequence[int] | None = None

    def tokenizer(self, path: Path | str, rule: SplitRule | str | None, **options: Any) -> Tokenizer:
        """The :class:`~bpeinspect.core.tokenizer.Tokenizer` of these tables with the split
        ``rule`` and the format's other ``options`` (its keywords), by :func:`build_tokenizer`."""
        return build_tokenizer(
            path,
            Tokenizer,
            self.ranks,
            pattern=rule,
            special_tokens=self.specials,
            added_tokens=self.added,
            merges=self.merges,
            merge_results=self.made,
            **options,
        )


@dataclass
class PieceVocabulary:
    """The tables a file of a SentencePiece-style model gives (``.model``, GGUF, Hugging Face):
    its pieces and their kinds, and either each piece's score or a merge list with the id each
    merge makes."""

    pieces: Sequence[str | None]
    kinds: Sequence[int] | None
    scores: Sequence[float] | None = None
    merges: Sequence[tuple[int, int]] | None = None
    made: Sequence[int] | None = None

    def tokenizer(self, path: Path | str, **options: Any) -> Tokenizer:
        """The :func:`~bpeinspect.core.sentencepiece.SentencePieceBPE` of these tables with the
        format's other ``options`` (its keywords), by :func:`build_tokenizer`."""
        return build_tokenizer(
            path,
            SentencePieceBPE,
            self.pieces,
            self.kinds,
            scores=self.scores,
            merges=self.merges,
            merge_results=self.made,
            **options,
        )


@functools.cache
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (also used by Hugging Face).

    >>> bytes_to_unicode()[ord(" ")], bytes_to_unicode()[ord("a")]
    ('Ġ', 'a')
    """
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    printable += list(range(ord("®"), ord("ÿ") + 1))
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


@functools.cache
def _charmap() -> Any:
    # A C-level encoding table: GPT-2's alphabet back to bytes in one call per token.
    return codecs.charmap_build("".join(bytes_to_unicode()[b] for b in range(256)))


def token_to_bytes(token: str) -> bytes | None:
    """Bytes of a token written in GPT-2's alphabet, or ``None`` if it has other characters.

    >>> token_to_bytes("Ġhi"), token_to_bytes("a b"), token_to_bytes("中")
    (b' hi', None, None)
    """
    try:
        return codecs.charmap_encode(token, "strict", _charmap())[0]
    except UnicodeEncodeError:
        return None


def tokens_to_bytes(tokens: list[str]) -> list[bytes | None]:
    """:func:`token_to_bytes` of many tokens at once: one C call for the whole vocabulary when
    every token is in the alphabet (each character is one byte, so lengths cut the result).

    >>> tokens_to_bytes(["Ġhi", "中", "a"])
    [b' hi', None, b'a']
    """
    try:
        blob = codecs.charmap_encode("".join(tokens), "strict", _charmap())[0]
    except UnicodeEncodeError:
        return [token_to_bytes(t) for t in tokens]
    at = list(accumulate(map(len, tokens), initial=0))
    return [blob[a:b] for a, b in zip(at, at[1:])]


def bytes_to_token(data: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)
