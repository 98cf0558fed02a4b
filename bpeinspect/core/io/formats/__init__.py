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

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io.builtins import ALIASES, BUILTINS, load_builtin
from bpeinspect.core.io.formats import gguf, gpt2, huggingface, minbpe, native, sentencepiece, tiktoken
from bpeinspect.core.io.formats._common import parse_json, read_bytes_limited
from bpeinspect.core.split.rules import SplitRule
from bpeinspect.core.tokenizer import Tokenizer

__all__ = ["FORMATS", "UnsupportedTokenizerError", "detect_format", "format_for_path", "load_path", "load_tokenizer", "save"]

# format name -> human description (the keys are what detect_format/format_for_path return)
FORMATS: dict[str, str] = {
    "tiktoken": "tiktoken rank file (.tiktoken)",
    "huggingface": "Hugging Face tokenizer.json",
    "gpt2": "GPT-2 encoder.json + vocab.bpe",
    "minbpe": "minbpe .model (+ .vocab)",
    "gguf": "GGUF model file (read only)",
    "sentencepiece": "SentencePiece .model (BPE, read only)",
    "native": "bpeinspect JSON (.bpeinspect.json)",
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
    path = Path(path)
    if path.is_dir():
        if (path / gpt2.ENCODER).is_file() and (path / gpt2.MERGES).is_file():
            return "gpt2"
        if (path / "tokenizer.json").is_file():
            return "huggingface"
        raise VocabularyError(f"{path}: the folder holds no tokenizer.json and no encoder.json + vocab.bpe")
    head = _head(path)
    if not head:
        raise VocabularyError(f"{path}: the file is empty")
    if gguf.looks_like(head):
        return "gguf"
    if minbpe.looks_like(head):
        return "minbpe"
    if sentencepiece.looks_like(head):
        return "sentencepiece"
    if gpt2.looks_like_merges(head):
        return "gpt2"
    if path.suffix == ".vocab" and path.with_suffix(".model").is_file():
        return "minbpe"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return _detect_json(path)
    if head[:2] == b"\x1f\x8b" or tiktoken.looks_like(head):
        return "tiktoken"
    raise VocabularyError(f"{path}: not a vocabulary file bpeinspect knows ({', '.join(FORMATS.values())})")


def _detect_json(path: Path) -> str:
    # Cheap checks on the head first, so a big tokenizer.json is parsed only once (by its loader).
    head = _head(path)
    if b'"format": "bpeinspect"' in head or b'"format":"bpeinspect"' in head:
        return "native"
    obj = parse_json(read_bytes_limited(path), path)
    if native.looks_like(obj):
        return "native"
    if huggingface.looks_like(obj):
        return "huggingface"
    if gpt2.looks_like_encoder(obj):
        return "gpt2"
    raise VocabularyError(f"{path}: a JSON file, but not a tokenizer.json, encoder.json or bpeinspect file")


_LOADERS = {
    "tiktoken": tiktoken.load,
    "huggingface": huggingface.load,
    "gpt2": gpt2.load,
    "minbpe": minbpe.load,
    "gguf": gguf.load,
    "sentencepiece": sentencepiece.load,
    "native": native.load,
}


def load_tokenizer(spec: str | os.PathLike[str]) -> Tokenizer:
    """A tokenizer from a built-in name (``"r50k_base"``/``"gpt2"``, ``"cl100k_base"``,
    ``"o200k_base"``) or a path to a vocabulary file or folder."""
    if isinstance(spec, str) and ALIASES.get(spec, spec) in BUILTINS:
        return load_builtin(ALIASES.get(spec, spec))
    path = Path(spec)
    if path.exists():
        return load_path(path)
    known = ", ".join(list(BUILTINS) + list(ALIASES))
    raise VocabularyError(f"no built-in tokenizer or file named {str(spec)!r} (built-ins: {known})")


def load_path(
    path: str | os.PathLike[str],
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Tokenizer:
    """Load the tokenizer in a file or folder of any supported format.

    ``pattern``, ``special_tokens`` and ``name`` apply to ``.tiktoken`` files, which do not
    store them (known OpenAI files are recognised by their sha256 and need none).
    """
    path = Path(path)
    kind = detect_format(path)
    if path.is_dir() and kind == "huggingface":
        path = path / "tokenizer.json"
    try:
        if kind == "tiktoken":
            return tiktoken.load(path, pattern=pattern, special_tokens=special_tokens, name=name)
        tok = _LOADERS[kind](path)
    except (TypeError, AttributeError, KeyError, IndexError, RecursionError, UnicodeError, OverflowError) as exc:
        # The parsers check what they read; this net keeps the promise of a VocabularyError
        # for any structure they did not foresee.
        raise VocabularyError(f"{path}: malformed {FORMATS[kind]} ({type(exc).__name__}: {exc})") from None
    if name:
        tok.name = name
    return tok


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
    try:
        _SAVERS[kind](tok, p)
    except OSError as exc:
        raise VocabularyError(f"{p}: cannot write it: {exc.strerror or exc}") from None
    return p.with_suffix(".model") if kind == "minbpe" else p
