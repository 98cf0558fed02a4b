"""Helpers shared by the format modules: bounded reads, safe JSON, GPT-2's byte alphabet."""

from __future__ import annotations

import codecs
import functools
import json
import zlib
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.split.rules import PatternError, compile_pattern

# The largest real vocabulary files are tens of MB (a 256k-token tokenizer.json is ~35 MB).
MAX_TEXT_FILE = 256 << 20


def read_bytes_limited(path: Path, limit: int = MAX_TEXT_FILE) -> bytes:
    """The file's bytes, refusing empty files, folders and anything over ``limit``.

    A gzip file is decompressed, with the same limit on what it expands to.
    """
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise VocabularyError(f"{path}: is a folder, not a vocabulary file")
        if size > limit:
            raise VocabularyError(f"{path}: {size >> 20} MB is larger than any vocabulary file; refusing it")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise VocabularyError(f"{path}: no such file") from None
    except OSError as exc:
        raise VocabularyError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if not data:
        raise VocabularyError(f"{path}: the file is empty")
    if data[:2] == b"\x1f\x8b":
        data = gunzip_limited(data, path, limit)
    return data


def gunzip_limited(data: bytes, path: Path, limit: int = MAX_TEXT_FILE) -> bytes:
    """Decompress gzip ``data``; a stream that expands past ``limit`` is refused (a bomb)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as exc:
        raise VocabularyError(f"{path}: damaged gzip data: {exc}") from None
    if len(out) > limit or d.unconsumed_tail:
        raise VocabularyError(f"{path}: decompresses to more than {limit >> 20} MB; refusing it")
    if not d.eof:
        raise VocabularyError(f"{path}: the gzip data is truncated")
    if not out:
        raise VocabularyError(f"{path}: the file is empty")
    return out


def decode_text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None


def parse_json(data: bytes, path: Path) -> Any:
    """Parse JSON, reporting damage as :class:`VocabularyError` (never JSONDecodeError)."""
    text = decode_text(data, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise VocabularyError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise VocabularyError(f"{path}: the JSON is nested too deeply") from None


def expect(cond: bool, path: Path | str, message: str) -> None:
    if not cond:
        raise VocabularyError(f"{path}: {message}")


def build_tokenizer(path: Path | str, factory: Any, *args: Any, **kwargs: Any) -> Any:
    """Call the Tokenizer constructor, naming the file in any complaint it has."""
    try:
        tok = factory(*args, **kwargs)
        # Patterns compile lazily; a damaged one must fail here, naming the file, not at the
        # first encode (found by tests/robustness).
        for split in getattr(getattr(tok, "split_rule", None), "splits", ()):
            compile_pattern(split.pattern)
        return tok
    except VocabularyError:
        raise
    except (PatternError, ValueError, TypeError) as exc:
        raise VocabularyError(f"{path}: {exc}") from None


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
    every token is in the alphabet (each character is one byte, so lengths cut the result)."""
    try:
        blob = codecs.charmap_encode("".join(tokens), "strict", _charmap())[0]
    except UnicodeEncodeError:
        return [token_to_bytes(t) for t in tokens]
    out: list[bytes | None] = []
    pos = 0
    for n in map(len, tokens):
        out.append(blob[pos : pos + n])
        pos += n
    return out


def bytes_to_token(data: bytes) -> str:
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


