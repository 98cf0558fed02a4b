"""GPT-2's original two files: ``encoder.json`` (token -> id) and ``vocab.bpe`` (the merges).

Tokens are written in GPT-2's byte alphabet; ``vocab.bpe`` starts with ``#version: 0.2``
and lists one ``left right`` merge per line in priority order. Either file, or the folder
holding both, loads the pair. ``<|...|>`` entries that no merge makes are special tokens.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load(Path("../shared/vocabs/gpt2")) if Path("../shared/vocabs/gpt2").is_dir() else load_tokenizer("gpt2")
>>> tok.decode(tok.encode("hello world"))
'hello world'
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.atomic import atomic_write_many, finish_interrupted, unfinished_saves
from bpeinspect.core.io.formats import clip
from bpeinspect.core.io.formats._common import (
    build_tokenizer,
    bytes_to_token,
    decode_text,
    expect,
    parse_json,
    read_bytes_limited,
    token_to_bytes,
)
from bpeinspect.core.io.naming import name_for
from bpeinspect.core.split.rules import PRESETS
from bpeinspect.core.tokenizer import Tokenizer

ENCODER = "encoder.json"
MERGES = "vocab.bpe"
HF_ENCODER, HF_MERGES = "vocab.json", "merges.txt"  # the names transformers' GPT2Tokenizer gives the pair


def pair_paths(path: Path) -> tuple[Path, Path]:
    """``(encoder.json, vocab.bpe)`` for a folder or either file of the pair (each may be
    gzip-compressed: ``encoder.json.gz``; or ``vocab.json`` and ``merges.txt``, as a Hugging Face
    repository names them)."""
    folder = path if path.is_dir() else path.parent
    enc, bpe = _named(folder, ENCODER), _named(folder, MERGES)
    if path.is_file():
        plain = path.name.removesuffix(".gz")
        if plain == ENCODER:
            enc = path
        elif plain == MERGES:
            bpe = path
        elif plain in (HF_ENCODER, HF_MERGES) and (folder / HF_ENCODER).is_file() and (folder / HF_MERGES).is_file():
            enc, bpe = folder / HF_ENCODER, folder / HF_MERGES
        # Renamed files: pair "x.json" with the one ".bpe" beside it (or the reverse).
        elif plain.endswith(".json"):
            enc, bpe = path, _only(folder, ("*.bpe", "*.bpe.gz"), path)
        else:
            enc, bpe = _only(folder, ("*.json", "*.json.gz"), path), path
    for p in (enc, bpe):
        if not p.is_file():
            raise VocabularyError(f"{path}: GPT-2's format needs both {ENCODER} and {MERGES}; {p} is missing")
    return enc, bpe


def _named(folder: Path, name: str) -> Path:
    """``folder/name``, or its gzip-compressed ``name.gz`` when only that is there."""
    plain, packed = folder / name, folder / (name + ".gz")
    return packed if packed.is_file() and not plain.is_file() else plain


def has_pair(folder: Path) -> bool:
    """True if ``folder`` holds an ``encoder.json`` and a ``vocab.bpe`` (plain or gzip-compressed)."""
    return _named(folder, ENCODER).is_file() and _named(folder, MERGES).is_file()


def _only(folder: Path, globs: tuple[str, ...], path: Path) -> Path:
    found = sorted({p for g in globs for p in folder.glob(g)})
    if len(found) != 1:
        raise VocabularyError(f"{path}: cannot tell which {globs[0]} file in {folder} belongs with it")
    return found[0]


def looks_like_merges(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf").startswith(b"#version")


def looks_like_encoder(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(type(v) is int for v in list(obj.values())[:50])


def load(path: Path, *, should_stop: Callable[[], bool] | None = None, **_: Any) -> Tokenizer:
    """The tokenizer in an ``encoder.json`` + ``vocab.bpe`` pair (GPT-2's split rule)."""
    folder = path if path.is_dir() else path.parent
    finish_interrupted(folder, (ENCODER, MERGES))  # a save killed between its two renames
    if unfinished_saves(folder, (ENCODER, MERGES)):  # one that could not be finished: never load half of it
        raise VocabularyError(
            f"{folder}: a save of {ENCODER} + {MERGES} is between its two renames (still running, or killed and "
            f"not finished because the folder cannot be written here); they may not belong together"
        )
    enc_path, bpe_path = pair_paths(path)
    encoder = parse_json(read_bytes_limited(enc_path), enc_path)
    expect(looks_like_encoder(encoder), enc_path, "not a GPT-2 encoder.json (an object of token -> id)")
    lines = decode_text(read_bytes_limited(bpe_path), bpe_path).splitlines()
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    if any(t.endswith(clip.SUFFIX) for t in list(encoder)[:1000]):
        return _with_word_ends(encoder, lines, enc_path, bpe_path, should_stop)
    merges: list[tuple[int, int]] = []
    made: set[str] = set()
    for n, line in enumerate(lines, 2):
        if not line.strip():
            continue
        parts = line.split(" ")
        expect(len(parts) == 2, bpe_path, f"line {n} is not 'left right'")
        a, b = encoder.get(parts[0]), encoder.get(parts[1])
        expect(a is not None and b is not None, bpe_path, f"line {n} uses a token that {enc_path.name} lacks")
        expect(parts[0] + parts[1] in encoder, bpe_path, f"line {n} makes a token that {enc_path.name} lacks")
        merges.append((a, b))
        made.add(parts[0] + parts[1])
    ranks: dict[bytes, int] = {}
    specials: dict[str, int] = {}
    for text, i in encoder.items():
        expect(type(i) is int and i >= 0, enc_path, f"token {text!r} has a bad id {i!r}")
        if text.startswith("<|") and text.endswith("|>") and len(text) > 4 and text not in made:
            specials[text] = i
            continue
        b = token_to_bytes(text)
        if b is None:
            raise VocabularyError(f"{enc_path}: token {text!r} is not in GPT-2's byte alphabet")
        expect(b not in ranks, enc_path, f"token {text!r} appears twice")
        ranks[b] = i
    last = {p: n for n, p in enumerate(merges)}
    merges = [p for n, p in enumerate(merges) if last[p] == n]
    orphans = sum(1 for t in encoder if t not in made and t not in specials and len(t) > 1)
    notes: tuple[str, ...] = ()
    if orphans:
        notes = (
            f"{bpe_path}: {orphans} tokens of {enc_path.name} are made by no merge (is {bpe_path.name} truncated?)",
        )
    folder = enc_path.parent
    tok = build_tokenizer(
        path,
        Tokenizer,
        ranks,
        should_stop=should_stop,
        pattern=PRESETS["r50k"],
        special_tokens=specials,
        merges=merges,
        name=name_for(folder),
        source=f"{folder} (GPT-2 encoder.json + vocab.bpe)",
    )
    if notes:
        tok.load_notes = notes
    return tok


def _with_word_ends(
    encoder: dict, lines: list[str], enc_path: Path, bpe_path: Path, should_stop: Callable[[], bool] | None
) -> Tokenizer:
    """A pair whose tokens end words with ``</w>``: CLIP's (``vocab.json`` + ``merges.txt``, as
    transformers' CLIPTokenizer reads them), or refused: no other model's split rule and
    normalizer can be told from these files."""
    specials = {s: encoder[s] for s in clip.SPECIALS if s in encoder}
    if len(specials) != len(clip.SPECIALS):
        raise UnsupportedTokenizerError(
            f"{bpe_path}: tokens end words with '</w>' (as GPT-1's, XLM's or FlauBERT's do), and these files do not "
            "say the model's split rule and normalizer; open its tokenizer.json"
        )
    return clip.build(encoder, clip.merge_parts(lines, bpe_path, first_line=2), specials, bpe_path, should_stop)


def save(tok: Tokenizer, path: Path) -> list[str]:
    """Write ``encoder.json`` and ``vocab.bpe`` into the folder ``path`` (or beside ``path``
    if it names one of the two files). The split rule is not stored: GPT-2's is implied (a
    note returned says so when ``tok``'s is another)."""
    folder = path if path.is_dir() or path.name not in (ENCODER, MERGES) else path.parent
    if folder.exists() and not folder.is_dir():
        raise VocabularyError(f"{path}: GPT-2's encoder.json and vocab.bpe go into a folder, and this is not one")
    if not folder.exists() and folder.suffix:  # ``x.txt``: a file's name, not a folder to make
        raise VocabularyError(
            f"{path}: GPT-2's encoder.json and vocab.bpe go into a folder; give a folder (made if missing) "
            "or a path ending in encoder.json"
        )
    folder.mkdir(parents=True, exist_ok=True)
    notes = []
    if tok.split_rule.pattern not in (PRESETS["r50k"].pattern, PRESETS["gpt2"].pattern):
        notes.append(
            f"{folder}: GPT-2's files cannot store a split rule; readers will use GPT-2's, not "
            f"{tok.split_rule.name or 'this tokenizer'}'s"
        )
    ranks = tok.mergeable_ranks
    dec = {i: b for b, i in ranks.items()}
    encoder = {bytes_to_token(b): i for b, i in sorted(ranks.items(), key=lambda x: x[1])}
    for s, i in tok.special_tokens.items():
        encoder[s] = i
    lines = ["#version: 0.2"] + [f"{bytes_to_token(dec[a])} {bytes_to_token(dec[b])}" for a, b in tok.merges]
    # both or neither: a new encoder.json beside an old vocab.bpe is a broken pair
    atomic_write_many(
        {folder / ENCODER: json.dumps(encoder, ensure_ascii=False), folder / MERGES: "\n".join(lines) + "\n"}
    )
    return notes
