"""Vocabulary file formats: recognise a file by its content, load it, save to any format.

>>> from bpeinspect.core import load_tokenizer
>>> import tempfile
>>> out = Path(tempfile.mkdtemp()) / "gpt2.tiktoken"
>>> _ = save(load_tokenizer("gpt2"), out)
>>> load_path(out).encode("hello world")
[31373, 995]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bpeinspect.core.io.builtins import VocabularyError
from bpeinspect.core.io.formats import gguf, gpt2, huggingface, minbpe, native, sentencepiece, tekken, tiktoken
from bpeinspect.core.io.formats._common import UnsupportedTokenizerError, parse_json, read_bytes_limited
from bpeinspect.core.split.rules import SplitRule
from bpeinspect.core.tokenizer import Tokenizer

__all__ = [
    "FORMATS", "FORMAT_KEEPS", "UnsupportedTokenizerError", "detect_format", "format_for_path", "load_path", "save", "with_settings"
]

# format name -> human description (the keys are what detect_format/format_for_path return)
FORMATS: dict[str, str] = {
    "tiktoken": "tiktoken rank file (.tiktoken)",
    "huggingface": "Hugging Face tokenizer.json",
    "gpt2": "GPT-2 encoder.json + vocab.bpe",
    "minbpe": "minbpe .model (+ .vocab)",
    "gguf": "GGUF model file (read only)",
    "tekken": "Mistral Tekken tekken_*.json (read only)",
    "sentencepiece": "SentencePiece .model (BPE, read only)",
    "native": "bpeinspect JSON (.bpeinspect.json)",
}
# what each format stores; anything else a tokenizer has was inferred or assumed (Tokenizer.inferred/.assumed)
FORMAT_KEEPS: dict[str, str] = {
    "tiktoken": "ranks only (no split rule, special tokens or normalizer: known files get theirs by sha256)",
    "huggingface": "vocabulary, merges, special and added tokens, pre-tokenizer (split rule), normalizer",
    "gpt2": "vocabulary, merges, special tokens in the encoder (GPT-2's split rule is implied)",
    "minbpe": "merges, split pattern, special tokens",
    "gguf": "tokens, merges, token types (control = special, user-defined = added), pre-tokenizer name",
    "tekken": "ranks, split pattern, special tokens (ids shifted by their count)",
    "sentencepiece": "pieces with scores and types (normal, control, user-defined, byte), normalizer rule, "
    "dummy prefix and whitespace settings; merges are recovered from the scores",
    "native": "everything, including training settings and merge counts",
}
_HEAD = 4096


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(_HEAD)
    except FileNotFoundError:
        raise VocabularyError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise VocabularyError(f"{path}: is a folder") from None
    except OSError as exc:
        raise VocabularyError(f"{path}: cannot read it: {exc.strerror or exc}") from None


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of the file or folder at ``path``, judged by its content.

    Raises :class:`VocabularyError` if it is none of :data:`FORMATS`.
    """
    return _detect(Path(path))[0]


def _detect(path: Path) -> tuple[str, Any]:
    """The format of ``path`` and, for a JSON file, its parsed content (parsed only once)."""
    if path.is_dir():
        if (path / gpt2.ENCODER).is_file() and (path / gpt2.MERGES).is_file():
            return "gpt2", None
        if (path / "tokenizer.json").is_file():
            return "huggingface", None
        raise VocabularyError(f"{path}: the folder holds no tokenizer.json and no encoder.json + vocab.bpe")
    head = _head(path)
    if not head:
        raise VocabularyError(f"{path}: the file is empty")
    if gguf.looks_like(head):
        return "gguf", None
    if minbpe.looks_like(head):
        return "minbpe", None
    if sentencepiece.looks_like(head):
        return "sentencepiece", None
    if gpt2.looks_like_merges(head):
        return "gpt2", None
    if path.suffix == ".vocab" and path.with_suffix(".model").is_file():
        return "minbpe", None
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _parse_json_vocab(path)
    if head[:2] == b"\x1f\x8b" or tiktoken.looks_like(head):
        return "tiktoken", None
    raise VocabularyError(f"{path}: not a vocabulary file bpeinspect knows ({', '.join(FORMATS.values())})")


def _parse_json_vocab(path: Path) -> tuple[str, Any]:
    """The format of a JSON vocabulary and its parsed content (so it is parsed only once)."""
    obj = parse_json(read_bytes_limited(path), path)
    for kind, looks in (
        ("native", native.looks_like),
        ("huggingface", huggingface.looks_like),
        ("tekken", tekken.looks_like),
        ("gpt2", gpt2.looks_like_encoder),
    ):
        if looks(obj):
            return kind, obj
    raise VocabularyError(f"{path}: a JSON file, but not a tokenizer.json, Tekken, encoder.json or bpeinspect file")


# JSON formats built straight from the parsed object
_FROM_JSON = {"native": native.from_dict, "huggingface": huggingface.from_dict, "tekken": tekken.from_dict}


_LOADERS = {
    "tiktoken": tiktoken.load,
    "huggingface": huggingface.load,
    "gpt2": gpt2.load,
    "minbpe": minbpe.load,
    "gguf": gguf.load,
    "sentencepiece": sentencepiece.load,
    "native": native.load,
    "tekken": tekken.load,
}


def load_path(
    path: str | os.PathLike[str],
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Tokenizer:
    """Load the tokenizer in a file or folder of any supported format.

    ``pattern`` and ``special_tokens`` are for files that do not store them: rank files
    (``.tiktoken``, Llama's ``tokenizer.model``; known ones are recognised by their sha256 and
    need none) and GGUF files whose pre-tokenizer bpeinspect does not know. For any other
    format they replace what the file says.
    """
    path = Path(path)
    kind, obj = _detect(path)
    if path.is_dir() and kind == "huggingface":
        path = path / "tokenizer.json"
    try:
        if kind == "tiktoken":
            return tiktoken.load(path, pattern=pattern, special_tokens=special_tokens, name=name)
        if kind == "gguf":
            tok = gguf.load(path, pattern=pattern)
            pattern = None
        elif obj is not None and kind in _FROM_JSON:
            tok = _FROM_JSON[kind](obj, path)
        else:
            tok = _LOADERS[kind](path)
        if pattern is not None or special_tokens is not None:
            tok = with_settings(tok, pattern=pattern, special_tokens=special_tokens)
    except (TypeError, AttributeError, KeyError, IndexError, RecursionError, UnicodeError, OverflowError) as exc:
        # The parsers check what they read; this net keeps the promise of a VocabularyError
        # for any structure they did not foresee.
        raise VocabularyError(f"{path}: malformed {FORMATS[kind]} ({type(exc).__name__}: {exc})") from None
    if name:
        tok.name = name
    return tok


def with_settings(
    tok: Tokenizer, *, pattern: str | SplitRule | None = None, special_tokens: Mapping[str, int] | None = None
) -> Tokenizer:
    """``tok`` with another split rule and/or special tokens (the user's choice)."""
    if type(tok) is not Tokenizer:
        raise VocabularyError(f"{tok.source or tok.name}: a {type(tok).__name__} takes no other split rule or specials")
    assumed = dict(tok.assumed)
    inferred = {k: v for k, v in tok.inferred.items() if not (k == "pattern" and pattern is not None)}
    if pattern is not None:
        assumed["pattern"] = "chosen by the user"
    if special_tokens is not None:
        assumed["special_tokens"] = "chosen by the user"
    return Tokenizer(
        tok.mergeable_ranks,
        pattern=tok.split_rule if pattern is None else pattern,
        special_tokens=tok.special_tokens if special_tokens is None else special_tokens,
        added_tokens=tok.added_tokens,
        merges=None if tok.uses_rank_rule else tok.merges,
        ignore_merges=tok.ignore_merges,
        name=tok.name,
        source=tok.source,
        training=tok.training,
        normalizer=tok.normalizer,
        assumed=assumed,
        inferred=inferred,
    )


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The format :func:`save` writes for ``path``, from its name.

    ``*.tiktoken`` -> tiktoken; ``tokenizer.json`` or ``*.hf.json`` -> huggingface;
    ``*.model``/``*.vocab`` -> minbpe; ``encoder.json``/``vocab.bpe`` or an existing folder
    -> gpt2; any other ``*.json`` -> native.
    """
    p = Path(path)
    name = p.name.lower()
    if p.is_dir() or name in (gpt2.ENCODER, gpt2.MERGES):
        return "gpt2"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name == "tokenizer.json" or name.endswith(".hf.json") or name.endswith("-tokenizer.json"):
        return "huggingface"
    if name.endswith((".model", ".vocab")):
        return "minbpe"
    if name.endswith(".json"):
        return "native"
    if name.endswith(".gguf"):
        raise VocabularyError(f"{p}: writing GGUF files is not supported (they hold a whole model)")
    raise VocabularyError(
        f"{p}: cannot tell the format from the name; use .tiktoken, tokenizer.json, .model, .json "
        "(bpeinspect's own) or a folder / encoder.json (GPT-2's)"
    )


_SAVERS: dict[str, Any] = {
    "tiktoken": tiktoken.save,
    "huggingface": huggingface.save,
    "gpt2": gpt2.save,
    "minbpe": minbpe.save,
    "native": native.save,
}


def save(tok: Tokenizer, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
    """Write ``tok`` to ``path`` atomically, in ``fmt`` or the format its name implies.

    Returns the path written (for minbpe, the ``.model``; its ``.vocab`` goes beside it).
    """
    p = Path(path)
    kind = fmt or format_for_path(p)
    if kind not in _SAVERS:
        raise VocabularyError(f"{p}: cannot write the {kind} format")
    if not p.parent.exists():
        raise VocabularyError(f"{p}: the folder {p.parent} does not exist")
    if not tok.byte_level:
        raise VocabularyError(
            f"{p}: {tok.name or 'this tokenizer'} is SentencePiece-style BPE (characters, ▁, byte fallback); "
            "bpeinspect writes byte-level formats only, so keep its original file"
        )
    if tok.normalizer is not None and kind != "huggingface":
        raise VocabularyError(
            f"{p}: the {FORMATS[kind]} format cannot store the normalizer ({tok.normalizer.describe()}); "
            "save it as a tokenizer.json"
        )
    try:
        _SAVERS[kind](tok, p)
    except OSError as exc:
        raise VocabularyError(f"{p}: cannot write it: {exc.strerror or exc}") from None
    return p.with_suffix(".model") if kind == "minbpe" else p
