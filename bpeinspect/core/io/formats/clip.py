"""CLIP's merge file, ``bpe_simple_vocab_16e6.txt.gz``, as OpenAI's CLIP and open_clip ship it.

The file holds merges only: a first line naming it (``"bpe_simple_vocab_16e6.txt#version:
0.2``), then ``left right`` merges of GPT-2's byte alphabet, where ``</w>`` ends a word. CLIP
reads the first 48,894 of them and builds its vocabulary: the 256 bytes, the 256 bytes ending
a word, one token per merge, then ``<|startoftext|>`` and ``<|endoftext|>`` (49,408 ids).

It is built as Hugging Face's CLIP converter (``transformers``) builds ``CLIPTokenizerFast``:
NFC, every whitespace run as one space, lowercase; CLIP's split rule (words, single digits,
runs of other symbols; whitespace dropped); byte-level BPE whose last symbol in a word carries
``</w>`` (see :mod:`bpeinspect.core.word_marks`); ``<|endoftext|>`` is also the unknown token.

>>> import gzip
>>> lines = ["#version: 0.2", "h e", "l l", "ll o</w>", "he llo</w>"]
>>> tok = from_text("\\n".join(lines), "mini.txt")
>>> ids = tok.encode("Hello, HELLO!")
>>> [tok.token_bytes(i) for i in ids], [tok.token_marks(i)[1] for i in ids]
([b'hello', b',', b'hello', b'!'], [True, True, True, True])
>>> tok.decode(ids)
'hello , hello !'
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import VocabularyError
from bpeinspect.core.io.formats._common import (
    build_tokenizer,
    bytes_to_unicode,
    decode_text,
    expect,
    read_bytes_limited,
)
from bpeinspect.core.io.formats.huggingface import split_rule_from_pre_tokenizer
from bpeinspect.core.io.naming import name_for
from bpeinspect.core.normalize import from_hf
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.word_marks import WordMarks

SUFFIX = "</w>"
MARKS = WordMarks(suffix=SUFFIX)
MERGES_READ = 49152 - 256 - 2  # CLIP's vocabulary size, less the bytes and the two specials
SPECIALS = ("<|startoftext|>", "<|endoftext|>")
SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
# transformers' CLIPConverter: the normalizer and pre-tokenizer of CLIPTokenizerFast
NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "NFC"},
        {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
        {"type": "Lowercase"},
    ],
}
PRE_TOKENIZER = {
    "type": "Sequence",
    "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": SPLIT}, "behavior": "Removed", "invert": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    ],
}


def looks_like(head: bytes) -> bool:
    """True for CLIP's merge file: its first line names it before ``#version``."""
    first = head.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf")
    return b"#version:" in first and not first.startswith(b"#") and first.startswith((b'"', b"bpe_simple_vocab"))


def load(path: Path, *, should_stop: Callable[[], bool] | None = None, **_: Any) -> Tokenizer:
    """CLIP's tokenizer from its merge file (plain or gzip-compressed)."""
    return from_text(decode_text(read_bytes_limited(path), path), path, should_stop)


def from_text(text: str, path: Path | str, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    """CLIP's tokenizer from the text of its merge file (the first line is skipped)."""
    lines = text.split("\n")[1 : 1 + MERGES_READ]
    parts = merge_parts(lines, path, first_line=2)
    alphabet = list(bytes_to_unicode().values())  # CLIP's order: printable bytes first
    vocab = alphabet + [c + SUFFIX for c in alphabet] + [a + b for a, b in parts]
    ids = {token: i for i, token in enumerate(vocab)}  # a token listed twice: its last id, as CLIP's dict
    specials = {s: len(vocab) + k for k, s in enumerate(SPECIALS)}
    return build(ids, parts, specials, path, should_stop)


def merge_parts(lines: list[str], path: Path | str, first_line: int = 1) -> list[tuple[str, str]]:
    """The ``left right`` merges of ``lines`` (blank lines at the end left out)."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    parts: list[tuple[str, str]] = []
    for n, line in enumerate(lines, first_line):
        pair = line.split()
        expect(len(pair) == 2, path, f"line {n} is not 'left right'")
        parts.append((pair[0], pair[1]))
    return parts


def build(
    ids: dict[str, int],
    parts: list[tuple[str, str]],
    specials: dict[str, int],
    path: Path | str,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    """CLIP's tokenizer over the vocabulary ``ids`` (tokens spelled with ``</w>``) and merges."""
    merges: list[tuple[int, int]] = []
    made: list[int] = []
    for n, (a, b) in enumerate(parts, 1):
        left, right, new = ids.get(a), ids.get(b), ids.get(a + b)
        if left is None or right is None:
            raise VocabularyError(f"{path}: merge {n} ({a} {b}) uses a token not in the vocabulary")
        if new is None:
            raise VocabularyError(f"{path}: merge {n} ({a} {b}) makes a token not in the vocabulary")
        merges.append((left, right))
        made.append(new)
    ranks: dict[bytes, int] = {}
    for token, i in ids.items():
        if token in specials:
            continue
        core, continues, ends = MARKS.parse(token)
        if not all(c in _BYTE_OF for c in core):
            raise VocabularyError(f"{path}: token {token!r} is not in GPT-2's byte alphabet")
        ranks[MARKS.key(bytes(map(_BYTE_OF.__getitem__, core)), continues, ends)] = i
    expect("<|endoftext|>" in specials, path, "CLIP's vocabulary needs <|endoftext|>")
    return build_tokenizer(
        path,
        Tokenizer,
        ranks,
        should_stop=should_stop,
        pattern=split_rule_from_pre_tokenizer(PRE_TOKENIZER, path),
        special_tokens=specials,
        merges=merges,
        merge_results=made,
        duplicate_merges="last",
        normalizer=from_hf(NORMALIZER),
        word_marks=MARKS,
        unk_id=specials["<|endoftext|>"],
        name=name_for(Path(path), "clip"),
        source=f"{path} (CLIP merges, built as transformers' CLIP converter does)",
    )


_BYTE_OF = {c: b for b, c in bytes_to_unicode().items()}

__all__ = ["MARKS", "NORMALIZER", "PRE_TOKENIZER", "SPECIALS", "from_text", "load", "looks_like"]
