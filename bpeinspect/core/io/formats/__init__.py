"""Vocabulary file formats: recognise a file by its content, load it, save to any format.

Each format is one :class:`Format` record in :data:`FORMATS`; everything else here (and the
CLI's and GUI's lists of formats) is derived from those records.

>>> from bpeinspect.core import load_tokenizer
>>> import tempfile
>>> out = Path(tempfile.mkdtemp()) / "gpt2.tiktoken"
>>> _ = save(load_tokenizer("gpt2"), out)
>>> load_path(out).encode("hello world")
[31373, 995]
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import UnsupportedTokenizerError, VocabularyError
from bpeinspect.core.io import load_cache
from bpeinspect.core.io.atomic import writes_through
from bpeinspect.core.io.formats import (
    clip,
    gguf,
    gpt2,
    huggingface,
    minbpe,
    native,
    sentencepiece,
    tekken,
    tiktoken,
    tiktoken_json,
)
from bpeinspect.core.io.formats._common import (
    gunzipped,
    is_gunzipped,
    is_stream,
    parse_json,
    read_bytes_limited,
    read_head,
    read_once,
)
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.split.rules import SplitRule
from bpeinspect.core.tokenizer import Tokenizer

__all__ = [
    "FORMATS",
    "Format",
    "check_target",
    "UnsupportedTokenizerError",
    "detect_format",
    "first_free_id",
    "format_for_path",
    "is_vocabulary_name",
    "load_with",
    "load_path",
    "open_patterns",
    "Saved",
    "save",
    "save_noted",
    "saveable",
    "special_tokens_from",
    "with_settings",
]

_HEAD = 4096  # bytes of a file its format is judged by


@dataclass(frozen=True)
class Format:
    """One vocabulary file format: how to recognise, load and save it.

    Every table of formats (detection order, loaders, savers, the names :func:`save` picks a
    format by, the CLI's choices, the GUI's file-dialog filters) is derived from
    :data:`FORMATS`, the records below.
    """

    name: str
    description: str  # one line: what the file is
    keeps: str  # what of a tokenizer the file holds
    patterns: tuple[str, ...]  # file names it goes by (lower-case globs), the name save() writes first
    suffix: str  # what a save dialog adds to a bare name ("" for GPT-2's folder of two files)
    load: Callable[..., Tokenizer]
    save: Callable[[Tokenizer, Path], list[str]] | None = None  # returns notes on what the file does not keep
    looks_like: Callable[[Path, bytes], bool] | None = None  # from the first 4 KB of the file
    looks_like_json: Callable[[Any], bool] | None = None  # from the parsed JSON
    from_json: Callable[..., Tokenizer] | None = None  # (json, path, should_stop): from JSON detection parsed already
    settings: tuple[str, ...] = ()  # of pattern/special_tokens, those load() applies itself
    in_folder: Callable[[Path], Path | None] | None = None  # the path to load for a folder
    written: Callable[[Path], Path] = Path  # the path save() reports for a target name
    also_opens: tuple[str, ...] = ()  # other names it is found under, never written as

    def matches(self, name: str) -> bool:
        """True if a file called ``name`` goes by one of this format's patterns."""
        return any(fnmatch.fnmatchcase(name.lower(), pat) for pat in self.patterns)

    def opens(self, name: str) -> bool:
        """True if a file called ``name`` may be of this format, plain or gzip-compressed."""
        plain = name.lower().removesuffix(".gz")
        return any(
            fnmatch.fnmatchcase(n, pat) for n in {name.lower(), plain} for pat in self.patterns + self.also_opens
        )


def _json_head(head: bytes) -> bool:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def _gpt2_folder(folder: Path) -> Path | None:
    return folder if gpt2.has_pair(folder) else None


def _hf_folder(folder: Path) -> Path | None:
    return folder / "tokenizer.json" if (folder / "tokenizer.json").is_file() else None


# In detection order: a file is the first format that recognises its head, else (for JSON)
# the first that recognises its parsed content; a folder is the first that finds its files.
# save() picks the saveable format whose pattern matches the target's name most specifically.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "gguf",
            "GGUF model file",
            "tokens, merges, token types (control = special, user-defined = added), pre-tokenizer name",
            ("*.gguf",),
            ".gguf",
            gguf.load,
            looks_like=lambda path, head: gguf.looks_like(head),
            settings=("pattern",),
        ),
        Format(
            "sentencepiece",
            "SentencePiece BPE .model",
            "pieces with scores and types (normal, control, user-defined, byte), normalizer rule, dummy prefix and "
            "whitespace settings; merges are recovered from the scores",
            ("*.model",),
            ".model",
            sentencepiece.load,
            looks_like=lambda path, head: sentencepiece.looks_like(head),
        ),
        Format(
            "minbpe",
            "minbpe .model and .vocab",
            "merges, split pattern, special tokens (the .vocab beside it is for reading)",
            ("*.model", "*.vocab"),
            ".model",
            minbpe.load,
            minbpe.save,
            looks_like=lambda path, head: (
                minbpe.looks_like(head) or (path.suffix == ".vocab" and path.with_suffix(".model").is_file())
            ),
            written=lambda path: path.with_suffix(".model"),
        ),
        Format(
            "gpt2",
            "GPT-2 encoder.json and vocab.bpe",
            "vocabulary, merges, special tokens in the encoder (GPT-2's split rule is implied)",
            (gpt2.ENCODER, gpt2.MERGES),
            "",
            gpt2.load,
            gpt2.save,
            looks_like=lambda path, head: gpt2.looks_like_merges(head),
            looks_like_json=gpt2.looks_like_encoder,
            in_folder=_gpt2_folder,
            also_opens=("*.bpe", "*.json"),
        ),
        Format(
            "clip",
            "CLIP bpe_simple_vocab merges",
            "merges only: the vocabulary, normalizer, split rule, </w> word ends and specials are CLIP's",
            ("bpe_simple_vocab*.txt",),
            ".txt",
            clip.load,
            looks_like=lambda path, head: clip.looks_like(head),
        ),
        Format(
            "tiktoken",
            "tiktoken rank file",
            "ranks only (no split rule, special tokens or normalizer: known files get theirs by sha256)",
            ("*.tiktoken", "*.tiktoken.gz"),
            ".tiktoken",
            tiktoken.load,
            tiktoken.save,
            looks_like=lambda path, head: tiktoken.looks_like(head),
            settings=("pattern", "special_tokens"),
        ),
        Format(
            "native",
            "bpeinspect JSON",
            "everything, including training settings and merge counts",
            ("*.bpeinspect.json", "*.json"),
            ".json",
            native.load,
            native.save,
            looks_like=lambda path, head: (
                _json_head(head) and (b'"format": "bpeinspect"' in head or b'"format":"bpeinspect"' in head)
            ),
            looks_like_json=native.looks_like,
            from_json=native.from_dict,
        ),
        Format(
            "huggingface",
            "Hugging Face tokenizer.json",
            "vocabulary, merges, special and added tokens, pre-tokenizer (split rule), normalizer",
            ("tokenizer.json", "*.hf.json", "*-tokenizer.json"),
            ".json",
            huggingface.load,
            huggingface.save,
            looks_like_json=huggingface.looks_like,
            from_json=huggingface.from_dict,
            in_folder=_hf_folder,
        ),
        Format(
            "tekken",
            "Mistral Tekken tekken_*.json",
            "ranks, split pattern, special tokens (ids shifted by their count)",
            ("tekken*.json",),
            ".json",
            tekken.load,
            looks_like_json=tekken.looks_like,
            from_json=tekken.from_dict,
        ),
        Format(
            "tiktoken-json",
            "tiktoken JSON encoder (npm tiktoken, js-tiktoken)",
            "ranks, split pattern, special tokens",
            ("*.json",),
            ".json",
            tiktoken_json.load,
            also_opens=("*.js", "*.cjs"),
            looks_like=lambda path, head: tiktoken_json.looks_like_module(head),
            looks_like_json=tiktoken_json.looks_like,
            from_json=tiktoken_json.from_dict,
        ),
    )
}


def saveable() -> list[Format]:
    """The formats :func:`save` can write, in :data:`FORMATS` order."""
    return [f for f in FORMATS.values() if f.save is not None]


def open_patterns() -> list[str]:
    """The file-name globs vocabulary files go by, none covered by another (an open
    dialog's filter).

    >>> open_patterns()
    ['*.bpe', '*.cjs', '*.gguf', '*.gz', '*.js', '*.json', '*.model', '*.tiktoken', '*.vocab', 'bpe_simple_vocab*.txt']
    """
    globs = {
        pat if "*" in pat else "*" + Path(pat).suffix for f in FORMATS.values() for pat in f.patterns + f.also_opens
    }
    globs.add("*.gz")  # any of them gzip-compressed
    return sorted(g for g in globs if not any(h != g and fnmatch.fnmatchcase(g, h) for h in globs))


def is_vocabulary_name(name: str) -> bool:
    """True if a file called ``name`` may hold a vocabulary (judged by the name alone).

    >>> is_vocabulary_name("o200k_base.tiktoken"), is_vocabulary_name("notes.txt")
    (True, False)
    """
    return any(f.opens(name) for f in FORMATS.values())


def _head(path: Path) -> bytes:
    try:
        return read_head(path, _HEAD)
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
    with read_once(Path(path)), gunzipped(Path(path)):
        return _detect(Path(path))[0].name


def _detect(path: Path) -> tuple[Format, Any]:
    """The format of ``path`` and, for a JSON file, its parsed content (parsed only once)."""
    if path.is_dir():
        for f in FORMATS.values():
            if f.in_folder is not None and f.in_folder(path) is not None:
                return f, None
        raise VocabularyError(f"{path}: the folder holds no tokenizer.json and no encoder.json + vocab.bpe")
    head = _head(path)
    if not head:
        raise VocabularyError(f"{path}: the file is empty")
    packed = "gzip-compressed " if is_gunzipped(path) else ""  # a refusal names what is inside
    for f in FORMATS.values():
        if f.looks_like is not None and f.looks_like(path, head):
            return f, None
    if _json_head(head):
        obj = parse_json(read_bytes_limited(path), path)
        for f in FORMATS.values():
            if f.looks_like_json is not None and f.looks_like_json(obj):
                return f, obj
        *first, last = [f.description for f in FORMATS.values() if f.looks_like_json is not None]
        raise VocabularyError(f"{path}: a {packed}JSON file, but not a {', '.join(first)} or {last}")
    known = ", ".join(f.description for f in FORMATS.values())
    if packed:
        what = "text" if _is_text(head) else "binary data"
        raise VocabularyError(
            f"{path}: gzip-compressed {what} that is not a vocabulary file bpeinspect knows ({known})"
        )
    raise VocabularyError(f"{path}: not a vocabulary file bpeinspect knows ({known})")


def _is_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # only a character cut at the end of the head
    return b"\0" not in head


def load_path(
    path: str | os.PathLike[str],
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: Mapping[str, int] | None = None,
    name: str | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    """Load the tokenizer in a file or folder of any supported format.

    ``pattern`` and ``special_tokens`` are for files that do not store them: rank files
    (``.tiktoken``, Llama's ``tokenizer.model``; known ones are recognised by their sha256 and
    need none) and GGUF files whose pre-tokenizer bpeinspect does not know. For any other
    format they replace what the file says. ``should_stop`` is asked in the long loops of
    building its tables (:class:`~bpeinspect.core.errors.Cancelled` if it says so).
    """
    path = Path(path)
    # Parsing builds millions of short-lived objects (a big tokenizer.json's merge lists),
    # which set off full collections over and over: a good part of a large vocabulary's load.
    with quiet_gc(freeze=False), read_once(path):
        if pattern is None and special_tokens is None and not is_stream(path):
            # a big file opened before: its tables from the cache, not parsed again
            tok = load_cache.cached_load(
                path, lambda: _load(path, None, None, name, should_stop), extra=repr(name), should_stop=should_stop
            )
        else:
            tok = _load(path, pattern, special_tokens, name, should_stop)
    if name:
        tok.name = name
    return tok


# What a parser may raise on a structure it did not foresee; load_path turns it into a
# VocabularyError naming the file.
_SURPRISES = (TypeError, AttributeError, KeyError, IndexError, RecursionError, UnicodeError, OverflowError, ValueError)


def _load(
    path: Path,
    pattern: str | SplitRule | None,
    special_tokens: Mapping[str, int] | None,
    name: str | None,
    should_stop: Callable[[], bool] | None,
) -> Tokenizer:
    with gunzipped(path):
        what = "vocabulary file"
        try:
            fmt, obj = _detect(path)
            what = fmt.description
            if path.is_dir() and fmt.in_folder is not None:
                path = fmt.in_folder(path) or path
            given = {"pattern": pattern, "special_tokens": special_tokens}
            if obj is not None and fmt.from_json is not None:
                tok = fmt.from_json(obj, path, should_stop)
            else:
                settings = {k: v for k, v in given.items() if k in fmt.settings}
                tok = fmt.load(path, **settings, name=name, should_stop=should_stop)
            # the settings the format does not apply itself
            rest_pattern = None if "pattern" in fmt.settings else pattern
            rest_specials = None if "special_tokens" in fmt.settings else special_tokens
            if rest_pattern is None and rest_specials is None:
                return tok
            return with_settings(tok, pattern=rest_pattern, special_tokens=rest_specials, should_stop=should_stop)
        except VocabularyError:
            raise
        except MemoryError:
            raise VocabularyError(f"{path}: not enough memory to load this {what}") from None
        except RecursionError:  # a structure (normalizers in normalizers...) nested deeper than Python recurses
            raise VocabularyError(f"{path}: malformed {what} (nested too deeply)") from None
        except _SURPRISES as exc:
            # The parsers check what they read; this net keeps the promise of a VocabularyError
            # naming the file for any structure they did not foresee.
            detail = str(exc).splitlines()[0] if str(exc).strip() else ""
            if isinstance(exc, ValueError) and not isinstance(exc, UnicodeError):
                raise VocabularyError(f"{path}: {detail or type(exc).__name__}") from None
            raise VocabularyError(f"{path}: malformed {what} ({type(exc).__name__}: {detail})") from None


def with_settings(
    tok: Tokenizer,
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: Mapping[str, int] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    """``tok`` with another split rule and/or special tokens (the user's choice); ``should_stop``
    as for :func:`load_path`."""
    if not tok.byte_level:
        raise VocabularyError(
            f"{tok.source or tok.name}: a SentencePiece-style tokenizer takes no other split rule or specials"
        )
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
        added_options=tok.added_options,
        merges=None if tok.uses_rank_rule else tok.merges,
        ignore_merges=tok.ignore_merges,
        byte_barriers=tok.byte_barriers,
        word_marks=tok.word_marks,
        unk_id=tok.unk_id,
        name=tok.name,
        source=tok.source,
        training=tok.training,
        normalizer=tok.normalizer,
        assumed=assumed,
        inferred=inferred,
        should_stop=should_stop,
    )


def special_tokens_from(values: list[str] | None, n_vocab: int) -> dict[str, int] | None:
    """``TEXT`` or ``TEXT=ID`` entries (the CLI's ``--special-token``, the app's settings) as a
    special-token table; entries without an id take the ids after ``n_vocab``.

    >>> special_tokens_from(["<|a|>", "<|b|>=7"], 100)
    {'<|a|>': 100, '<|b|>': 7}
    """
    if values is None:
        return None
    out: dict[str, int] = {}
    next_id = n_vocab
    for v in values:
        text, sep, num = v.rpartition("=")
        if sep and text and num.isdigit():
            out[text] = int(num)
        else:
            out[v] = next_id
            next_id += 1
    return out


def load_with(
    path: str | os.PathLike[str],
    *,
    pattern: str | SplitRule | None = None,
    special_tokens: list[str] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Tokenizer:
    """:func:`load_path` with the user's settings: ``special_tokens`` as ``TEXT`` or ``TEXT=ID``
    entries, those without an id taking the ids after the vocabulary."""
    base = load_path(path, pattern=pattern, should_stop=should_stop)
    if special_tokens is None:
        return base
    specials = special_tokens_from(special_tokens, first_free_id(base))
    return with_settings(base, special_tokens=specials, should_stop=should_stop)


def first_free_id(tok: Tokenizer) -> int:
    """The id after the last token that is not special (where new special tokens go)."""
    for i in reversed(tok.ids()):  # special tokens are usually the last few: a short walk
        if not tok.is_special(i):
            return i + 1
    return 0


def format_for_path(path: str | os.PathLike[str]) -> str:
    """The format :func:`save` writes for ``path``, from its name: an existing folder is
    GPT-2's pair, otherwise the saveable format with the most specific matching pattern.

    >>> [format_for_path(n) for n in ("a.tiktoken", "tokenizer.json", "a.model", "encoder.json", "a.json")]
    ['tiktoken', 'huggingface', 'minbpe', 'gpt2', 'native']
    """
    p = Path(path)
    if p.is_dir():
        return "gpt2"
    # the most specific pattern wins: "tokenizer.json" over "*.json"
    found = [
        (len(pat), -k, f)
        for k, f in enumerate(saveable())
        for pat in f.patterns
        if fnmatch.fnmatchcase(p.name.lower(), pat)
    ]
    if found:
        return max(found, key=lambda x: x[:2])[2].name
    for f in FORMATS.values():
        if f.matches(p.name):
            raise VocabularyError(f"{p}: writing a {f.description} is not supported")
    names = ", ".join(f"{f.patterns[0]} ({f.name})" for f in saveable())
    raise VocabularyError(f"{p}: cannot tell the format from the name; use one of {names} or a folder")


def check_target(path: str | os.PathLike[str]) -> None:
    """Refuse a path :func:`save` could not write, before any long work (a training): its
    folder is missing, is not a folder, or may not be written in."""
    p = Path(path)
    if writes_through(p):  # a device, a pipe, /dev/stdout: written into, not replaced
        if not os.access(p, os.W_OK):
            raise VocabularyError(f"{p}: cannot write it (permission denied)")
        return
    folder = p if p.is_dir() else (p.parent if str(p.parent) else Path("."))
    if not folder.exists():
        raise VocabularyError(f"{p}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise VocabularyError(f"{p}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise VocabularyError(f"{p}: cannot write in the folder {folder} (permission denied)")


@dataclass(frozen=True)
class Saved:
    """What :func:`save_noted` wrote: the path, and notes on what the file does not keep of the
    tokenizer (one line each, naming the file), for the user to read."""

    path: Path
    notes: tuple[str, ...] = ()


def save(tok: Tokenizer, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
    """Write ``tok`` to ``path`` atomically, in ``fmt`` or the format its name implies.

    Returns the path written (for minbpe, the ``.model``; its ``.vocab`` goes beside it).
    What the file does not keep of ``tok`` is said by :func:`save_noted`, which this is.
    """
    return save_noted(tok, path, fmt).path


def save_noted(tok: Tokenizer, path: str | os.PathLike[str], fmt: str | None = None) -> Saved:
    """:func:`save`, returning the path written and notes on what the format does not keep
    (a pair-rule tokenizer in a ``.tiktoken`` file, a split rule in GPT-2's pair).

    >>> import tempfile
    >>> from bpeinspect.core import load_tokenizer
    >>> folder = Path(tempfile.mkdtemp())
    >>> save_noted(load_tokenizer("gpt2"), folder / "gpt2.tiktoken").notes
    ()
    >>> [note.split(": ", 1)[1][:42] for note in save_noted(load_tokenizer("cl100k_base"), folder).notes]
    ["GPT-2's files cannot store a split rule; r"]
    """
    p = Path(path)
    kind = fmt or format_for_path(p)
    record = FORMATS.get(kind)
    if record is None or record.save is None:
        raise VocabularyError(f"{p}: cannot write the {kind} format")
    check_target(p)
    if not tok.byte_level:
        raise VocabularyError(
            f"{p}: {tok.name or 'this tokenizer'} is SentencePiece-style BPE (characters, ▁, byte fallback); "
            "bpeinspect writes byte-level formats only, so keep its original file"
        )
    if tok.word_marks is not None and kind != "huggingface":
        raise VocabularyError(
            f"{p}: the {FORMATS[kind].description} format cannot store word marks ({tok.word_marks.describe()}); "
            "save it as a tokenizer.json"
        )
    if tok.normalizer is not None and kind != "huggingface":
        raise VocabularyError(
            f"{p}: the {FORMATS[kind]} format cannot store the normalizer ({tok.normalizer.describe()}); "
            "save it as a tokenizer.json"
        )
    try:
        notes = record.save(tok, p)
    except BrokenPipeError:  # written through to a pipe its reader closed (| head): not the file's fault
        raise
    except OSError as exc:
        raise VocabularyError(f"{p}: cannot write it: {exc.strerror or exc}") from None
    return Saved(record.written(p), tuple(notes))
