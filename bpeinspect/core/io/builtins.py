"""The built-in vocabularies.

OpenAI's vocabularies ship inside the package (gzipped ``.tiktoken`` rank files) and are
checked against the sha256 that tiktoken publishes for them, so a fresh install works offline
and a damaged install is reported instead of silently mis-encoding. tiktoken's other encodings
are :data:`VARIANTS` of these: the same ranks under another name, with more special tokens.

>>> load_builtin("gpt2").n_vocab
50257
>>> load_builtin("p50k_edit").encode("<|fim_middle|>", allowed_special="all")
[50282]
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bpeinspect.core import limits
from bpeinspect.core.errors import Cancelled, VocabularyError
from bpeinspect.core.split.rules import PRESETS
from bpeinspect.core.tokenizer import Tokenizer


@dataclass(frozen=True)
class BuiltinSpec:
    name: str
    filename: str
    sha256: str
    pattern: str
    special_tokens: dict[str, int]
    description: str


BUILTINS: dict[str, BuiltinSpec] = {
    "r50k_base": BuiltinSpec(
        "r50k_base",
        "r50k_base.tiktoken.gz",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "r50k",
        {"<|endoftext|>": 50256},
        "GPT-2 / GPT-3 (50k)",
    ),
    "cl100k_base": BuiltinSpec(
        "cl100k_base",
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "cl100k",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
        "GPT-3.5 / GPT-4 (100k)",
    ),
    "o200k_base": BuiltinSpec(
        "o200k_base",
        "o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "o200k",
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        "GPT-4o (200k)",
    ),
    "p50k_base": BuiltinSpec(
        "p50k_base",
        "p50k_base.tiktoken.gz",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        "r50k",
        {"<|endoftext|>": 50256},
        "Codex / GPT-3.5 text (p50k)",
    ),
}
ALIASES = {"r50k": "r50k_base", "p50k": "p50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}


@dataclass(frozen=True)
class Variant:
    """A built-in that shares another's ranks and pre-token cache, under its own name and with
    more special tokens (tiktoken's encodings of the same names)."""

    base: str
    special_tokens: dict[str, int]
    description: str


_HARMONY = {
    "<|startoftext|>": 199998,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
}
VARIANTS: dict[str, Variant] = {
    "gpt2": Variant("r50k_base", {}, "GPT-2 (r50k_base under GPT-2's name)"),
    "p50k_edit": Variant(
        "p50k_base",
        {"<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283},
        "Codex edit (p50k with fill-in-the-middle tokens)",
    ),
    # <|reserved_200018|> is a second name for o200k's <|endofprompt|>, as in tiktoken
    "o200k_harmony": Variant(
        "o200k_base",
        {**_HARMONY, **{f"<|reserved_{i}|>": i for i in range(200013, 201088)}},
        "gpt-oss (o200k with the harmony chat format's tokens)",
    ),
}

_MAX_RANK_FILE = 64 << 20  # decompressed bytes; the largest real one is under 4 MB


def resources_dir() -> Path:
    """The ``resources`` folder: inside the installed package, or beside it in a checkout."""
    here = Path(__file__).resolve().parents[2]  # bpeinspect/
    for candidate in (here / "resources", here.parent / "resources"):
        if (candidate / "vocabs").is_dir():
            return candidate
    raise VocabularyError(f"bpeinspect's resources folder is missing (looked in {here} and {here.parent})")


# Bytes a single C call of the parser goes through: one ``splitlines()`` (or ``count``) over a
# 4 MB file holds the interpreter for frames, which the window's GUI thread waits out whole when
# the file is loaded on a worker; slices of 64 KB are short.
_SLICE = 1 << 16
_READ_SLICE = 1 << 18  # decompressed bytes read at a time (a small part of a frame)


def _lines(data: bytes) -> Iterator[bytes]:
    """``data.splitlines()``, a slice (cut after a line break) at a time.

    >>> list(_lines(b"a\\r\\nb\\n\\nc")) == b"a\\r\\nb\\n\\nc".splitlines()
    True
    """
    start, n = 0, len(data)
    while start < n:
        end = data.find(b"\n", min(start + _SLICE, n) - 1)
        end = n if end < 0 else end + 1
        yield from data[start:end].splitlines()
        start = end


def parse_tiktoken_ranks(
    data: bytes, source: str = "<data>", should_stop: Callable[[], bool] | None = None
) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` rank file: one ``base64-token rank`` pair per line.

    ``should_stop`` is asked every thousand lines (a millisecond or so), :class:`Cancelled` if
    it says so: a GUI's loading worker gives way there.

    >>> parse_tiktoken_ranks(b"YQ== 0\\nYg== 1\\n")
    {b'a': 0, b'b': 1}
    """
    lines = sum(data.count(b"\n", i, i + _SLICE) for i in range(0, len(data), _SLICE)) + 1
    if lines > limits.MAX_IDS:  # before the work: memory, not the file's size, is the cost
        raise VocabularyError(
            f"{source}: {lines:,} lines, more tokens than bpeinspect opens (at most {limits.MAX_IDS:,})"
        )
    longest = limits.MAX_TOKEN_BYTES
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(_lines(data), 1):
        if not lineno & 1023 and should_stop is not None and should_stop():
            raise Cancelled()
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise VocabularyError(f"{source}: line {lineno} is not 'base64-token rank'")
        try:
            # a token written as "=" is the empty token (Whisper's multilingual file has one at
            # 50256; tiktoken's loader accepts it)
            token = base64.b64decode(parts[0], validate=True) if parts[0].strip(b"=") else b""
            rank = int(parts[1])
        except ValueError:
            raise VocabularyError(f"{source}: line {lineno} has a bad token or rank") from None
        if rank < 0:
            raise VocabularyError(f"{source}: line {lineno} has a negative rank")
        if len(token) > longest:
            raise VocabularyError(
                f"{source}: line {lineno} holds a token of {len(token):,} bytes; bpeinspect opens tokens of up to {longest:,} bytes"
            )
        if token in ranks:
            raise VocabularyError(f"{source}: line {lineno} repeats a token")
        ranks[token] = rank
    if not ranks:
        raise VocabularyError(f"{source}: no tokens in the file")
    return ranks


def _read_gzip_limited(path: Path, should_stop: Callable[[], bool] | None) -> bytes:
    """The file decompressed, 256 KB at a time with a check between (see :func:`parse_tiktoken_ranks`)."""
    parts, size = [], 0
    with gzip.open(path, "rb") as f:
        while size <= _MAX_RANK_FILE and (part := f.read(_READ_SLICE)):
            if should_stop is not None and should_stop():
                raise Cancelled()
            parts.append(part)
            size += len(part)
    if size > _MAX_RANK_FILE:
        raise VocabularyError(f"{path}: decompresses to more than {limits.human_size(_MAX_RANK_FILE)}; refusing it")
    return b"".join(parts)


def _sha256(data: bytes, should_stop: Callable[[], bool] | None) -> str:
    """``data``'s sha256, 1 MB at a time with a check between."""
    h, view = hashlib.sha256(), memoryview(data)
    for k in range(0, len(data), 1 << 20):
        if should_stop is not None and should_stop():
            raise Cancelled()
        h.update(view[k : k + (1 << 20)])
    return h.hexdigest()


BUILTIN_SOURCE = "built-in"  # how a shipped vocabulary's Tokenizer.source begins


def is_builtin(name: str) -> bool:
    """Whether ``name`` names a built-in (a shipped vocabulary, an alias or a variant)."""
    return ALIASES.get(name, name) in BUILTINS or name in VARIANTS


_LOADED: OrderedDict[str, Tokenizer] = OrderedDict()  # the last few built-ins loaded, by name
_KEEP = 8
_LOADED_LOCK = threading.Lock()


def load_builtin(name: str, *, should_stop: Callable[[], bool] | None = None) -> Tokenizer:
    """One of the shipped vocabularies, verified against its published sha256, or a variant.

    The last few loaded are kept (the same object comes back). ``should_stop`` is asked in the
    long loops of reading, checking and building it (:class:`Cancelled` if it says so)."""
    with _LOADED_LOCK:
        tok = _LOADED.get(name)
        if tok is not None:
            _LOADED.move_to_end(name)
            return tok
    tok = _load_builtin(name, should_stop)  # unlocked: another thread may load another meanwhile
    with _LOADED_LOCK:
        tok = _LOADED.setdefault(name, tok)
        while len(_LOADED) > _KEEP:
            _LOADED.popitem(last=False)
    return tok


def forget_builtins() -> None:
    """Drop the built-ins :func:`load_builtin` keeps: the next load reads the file again."""
    with _LOADED_LOCK:
        _LOADED.clear()


def _load_builtin(name: str, should_stop: Callable[[], bool] | None) -> Tokenizer:
    if name in VARIANTS:
        variant = VARIANTS[name]
        tok = load_builtin(variant.base, should_stop=should_stop).with_special_tokens(variant.special_tokens)
        tok.name, tok.source = name, f"{BUILTIN_SOURCE} ({variant.description})"
        return tok
    spec = BUILTINS[ALIASES.get(name, name)]
    path = resources_dir() / "vocabs" / spec.filename
    try:
        data = _read_gzip_limited(path, should_stop)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise VocabularyError(f"{path}: cannot read the built-in vocabulary: {exc}") from None
    digest = _sha256(data, should_stop)
    if digest != spec.sha256:
        raise VocabularyError(f"{path}: sha256 {digest} is not the published {spec.sha256}; reinstall bpeinspect")
    return Tokenizer(
        parse_tiktoken_ranks(data, str(path), should_stop),
        pattern=PRESETS[spec.pattern],
        special_tokens=spec.special_tokens,
        name=spec.name,
        source=f"{BUILTIN_SOURCE} ({spec.description})",
        should_stop=should_stop,
    )
