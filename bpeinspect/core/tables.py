"""A tokenizer's parts as data, and back: the one way a tokenizer is rebuilt from its tables.

A tokenizer is made by one constructor call (``Tokenizer(...)``, ``Tokenizer.from_merges(...)``
or ``SentencePieceBPE(...)``) from plain tables: ranks or pieces, merges as id pairs, the ids
they make, special and added tokens, the split rule, the normalizers, flags and names. This
module writes such a call as data and reads it back: a JSON header (the factory's name, each
argument's small values, and where each large table sits) followed by byte strings (joined
token bytes and texts, ``array('q')`` of ids, ``array('d')`` of scores). Nothing is pickled.

Reading rebuilds each argument from a fixed list, by name, with every field checked: a
normalizer or split rule is one of bpeinspect's own, made from checked strings, flags and
numbers, never a class or function named by the data. Damaged, truncated or hostile data
raises :class:`TablesError` (at worst: data that a hand-made file could hold anyway).

The load cache (``core/io/load_cache.py``) and the child processes that count text
(``core/analysis/shipping.py``) both use it.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("r50k_base")
>>> again = build(loads(dumps(parts_of(tok))))
>>> again is not tok and again.encode("hello world") == tok.encode("hello world")
True
"""

from __future__ import annotations

import copyreg
import dataclasses
import functools
import json
import struct
import time
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from bpeinspect.core import normalize
from bpeinspect.core.errors import Cancelled, TablesError
from bpeinspect.core.sentencepiece import SentencePieceBPE, SqueezeSpaces
from bpeinspect.core.split.patterns import QWEN2_PATTERN
from bpeinspect.core.split.rules import BEHAVIORS, NO_SPLIT, PRESETS, Split, SplitRule, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo
from bpeinspect.core.word_marks import WordMarks

MAGIC = b"bpeinspect tables\n"
VERSION = 1
_HEAD = struct.Struct("<II")  # version, length of the JSON header
MAX_HEADER = 64 << 20  # bytes of JSON (the added tokens' flags and the training settings live there)
MAX_POOL = 1 << 23  # ids below this are read back as one shared int object each, as a parse makes them
_STEP = 1 << 16  # items converted at a time, the interpreter let go (and ``should_stop`` asked) in between
_DEPTH = 16  # normalizers nested at most this deep

ShouldStop = Callable[[], bool]


@dataclass
class Parts:
    """A constructor call: the factory's name (a key of :data:`FACTORIES`) and its arguments by name."""

    factory: str
    args: dict[str, Any] = field(default_factory=dict)


# -- the factories and their arguments -------------------------------------------------------------

# name -> (the callable, its positional parameters in order)
FACTORIES: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "Tokenizer": (Tokenizer, ("ranks",)),
    "Tokenizer.from_merges": (Tokenizer.from_merges, ("merges",)),
    "SentencePieceBPE": (SentencePieceBPE, ("pieces", "kinds")),
}
_FACTORY_NAMES = {id(f): name for name, (f, _) in FACTORIES.items()}
# what a factory is asked at the time of a call, never stored as a part of the tokenizer
CALL_ONLY = frozenset({"should_stop"})
# the kind of every argument any factory takes (an argument not listed here is not stored)
KINDS: dict[str, str] = {
    "ranks": "bytes_ids",
    "special_tokens": "str_ids",
    "added_tokens": "str_ids",
    "piece_ids": "str_ids",
    "merges": "pairs",
    "merge_results": "ints",
    "kinds": "ints",
    "pieces": "strs",
    "scores": "floats",
    "pattern": "rule",
    "normalizer": "normalizer",
    "first_normalizer": "normalizer",
    "added_normalizer": "normalizer",
    "added_options": "options",
    "assumed": "str_strs",
    "inferred": "str_strs",
    "training": "training",
    "name": "str",
    "source": "str",
    "unk_id": "int",
    "ignore_merges": "bool",
    "byte_barriers": "bool",
    "byte_fallback": "bool",
    "fuse_unk": "bool",
    "strip_leading_space": "bool",
    "user_defined_in_text": "bool",
    "split_before_space": "bool",
    "newline_words": "bool",
    "word_marks": "word_marks",
    "duplicate_merges": "choice",
    "flavour": "choice",
}
_CHOICES = {"duplicate_merges": ("first", "last"), "flavour": ("sentencepiece", "llama.cpp", "huggingface")}


def factory_name(factory: Any) -> str | None:
    """The name under which ``factory`` is stored, or ``None`` for one this module does not make."""
    name = _FACTORY_NAMES.get(id(factory))
    if (
        name is None
        and getattr(factory, "__self__", None) is Tokenizer
        and getattr(factory, "__name__", "") == "from_merges"
    ):
        return "Tokenizer.from_merges"  # a bound class method is a new object at each access
    return name


def parts_from_call(factory: Any, args: tuple, kwargs: Mapping[str, Any]) -> Parts:
    """The :class:`Parts` of a constructor call as a loader makes it; :class:`TablesError` for a
    call this module cannot store."""
    name = factory_name(factory)
    if name is None:
        raise TablesError(f"{factory!r} is not a tokenizer factory")
    positional = FACTORIES[name][1]
    if len(args) > len(positional):
        raise TablesError(f"{name} takes {len(positional)} positional arguments")
    out = dict(zip(positional, args))
    for key, value in kwargs.items():
        if key not in KINDS or key in out:
            raise TablesError(f"{name}: argument {key!r} cannot be stored")
        out[key] = value
    return Parts(name, out)


def parts_of(tok: Tokenizer) -> Parts:
    """The parts ``tok`` is built again from (see :func:`can_rebuild`): a byte-level
    :class:`Tokenizer`'s from its tables, another's as they were given to its constructor."""
    if not can_rebuild(tok):
        raise TypeError(f"{type(tok).__name__} {tok.name!r} cannot be built again from its tables")
    given = _given(tok)
    if given is not None:
        return Parts(given.factory, {**given.args, "name": tok.name, "source": tok.source})
    args: dict[str, Any] = {"ranks": tok.ranks}
    if not tok.uses_rank_rule:
        merges, made = tok.merges, tok.merge_result
        args["merges"] = merges
        args["merge_results"] = [made(a, b) for a, b in merges]
    args.update(
        pattern=tok.split_rule,
        special_tokens=tok.special_tokens,
        added_tokens=tok.added_tokens,
        added_options=tok.added_options,
        normalizer=tok.normalizer,
        ignore_merges=tok.ignore_merges,
        byte_barriers=tok.byte_barriers,
        name=tok.name,
        source=tok.source,
        assumed=tok.assumed,
        inferred=tok.inferred,
    )
    if tok.word_marks is not None:
        args.update(word_marks=tok.word_marks, unk_id=tok.unk_id)
    return Parts("Tokenizer", args)


# A SentencePiece-style tokenizer keeps the parts it was made from (lists of pointers: a few MB
# for 262k pieces), since its tables are not the constructor's arguments.
_GIVEN = "_tables_parts"


def remember(tok: Any, parts: Parts) -> None:
    """Keep ``parts`` with ``tok`` (made from them) where its tables alone would not make it again."""
    if parts.factory == "SentencePieceBPE" and isinstance(tok, Tokenizer):
        setattr(tok, _GIVEN, parts)


def _given(tok: Any) -> Parts | None:
    """The parts ``tok`` was made from, if it kept them and still is what they make (a copy
    with more special tokens is not)."""
    parts = getattr(tok, _GIVEN, None)
    if type(parts) is not Parts:
        return None
    same = all(getattr(tok, k) == dict(parts.args.get(k) or {}) for k in ("special_tokens", "added_tokens"))
    return parts if same else None


def can_rebuild(tok: Tokenizer) -> bool:
    """Whether :func:`parts_of` knows ``tok``'s parts: a byte-level model (rank or merge list)
    behind a plain pre-tokenizer, with one normalizer for every segment; or a tokenizer that
    kept the parts it was made from."""
    if _given(tok) is not None:
        return True
    return tok.byte_level and tok.rest_normalizer is tok.normalizer and not tok.pre_tokenizer.tiles


def build(parts: Parts, should_stop: Callable[[], bool] | None = None) -> Any:
    """The tokenizer ``parts`` describe; ``should_stop`` is asked while a byte-level one builds
    its tables (:class:`Cancelled` if it says so)."""
    factory, positional = FACTORIES[parts.factory]
    args = [parts.args[k] for k in positional if k in parts.args]
    kwargs = {k: v for k, v in parts.args.items() if k not in positional}
    if should_stop is not None and parts.factory != "SentencePieceBPE":
        kwargs["should_stop"] = should_stop
    tok = factory(*args, **kwargs)
    remember(tok, parts)
    return tok


# -- writing ---------------------------------------------------------------------------------------


class _Out:
    """The byte strings being written, with the interpreter let go between steps."""

    def __init__(self, should_stop: ShouldStop | None) -> None:
        self.blobs: list[bytes] = []
        self.should_stop = should_stop

    def pause(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled()
        time.sleep(0)  # let another thread (the GUI's) run

    def add(self, data: bytes) -> int:
        self.blobs.append(data)
        self.pause()
        return len(self.blobs) - 1

    def ints(self, values: Any) -> int:
        values = values if isinstance(values, list) else list(values)
        out = array("q")
        for k in range(0, len(values), _STEP):
            out.extend(values[k : k + _STEP])  # (TypeError or OverflowError for anything but an int)
            self.pause()
        return self.add(out.tobytes())

    def texts(self, values: list) -> tuple[int, int]:
        """Strings (or ``None``) as one UTF-8 text and their lengths in code points (-1: ``None``)."""
        if not all(v is None or type(v) is str for v in values):
            raise TablesError("not a list of strings")
        lens = [-1 if v is None else len(v) for v in values]
        text = "".join(v for v in values if v is not None)
        return self.add(text.encode("utf-8", "surrogatepass")), self.ints(lens)


def _encode_value(kind: str, key: str, value: Any, out: _Out) -> Any:  # noqa: PLR0911
    """The JSON for one argument (large tables go to ``out``)."""
    if value is None:
        return None
    if kind == "bytes_ids":
        keys = list(value)
        if not all(type(k) is bytes for k in keys):
            raise TablesError(f"{key}: keys are not bytes")
        return {"blob": out.add(b"".join(keys)), "lens": out.ints(map(len, keys)), "ids": out.ints(value.values())}
    if kind == "str_ids":
        keys = list(value)
        text, lens = out.texts(keys)
        return {"text": text, "lens": lens, "ids": out.ints(value.values())}
    if kind == "strs":
        text, lens = out.texts(list(value))
        return {"text": text, "lens": lens}
    if kind == "ints":
        return {"ids": out.ints(value)}
    if kind == "pairs":
        pairs = value if isinstance(value, list) else list(value)
        if not all(type(p) is tuple and len(p) == 2 for p in pairs):  # (lists are pairs too for a loader)
            pairs = [tuple(p) for p in pairs]
            if set(map(len, pairs)) - {2}:
                raise TablesError(f"{key}: not pairs")
        return {"pairs": out.ints(chain.from_iterable(pairs))}
    if kind == "floats":
        return {"floats": out.add(array("d", value).tobytes())}
    if kind in ("str", "choice"):
        if type(value) is not str:
            raise TablesError(f"{key}: not a string")
        return value
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    if kind == "str_strs":
        return {str(k): str(v) for k, v in value.items()}
    if kind == "options":
        return [[w, [bool(x) for x in o]] for w, o in value.items()]
    if kind == "normalizer":
        return _normalizer_json(value, 0)
    if kind == "rule":
        return _rule_json(value)
    if kind == "word_marks":
        return {"suffix": value.suffix, "prefix": value.prefix}
    if kind == "training":
        json.dumps(value.settings)  # TypeError for settings that are not JSON
        return {"settings": value.settings, "counts": out.ints(value.counts)}
    raise TablesError(f"{key}: unknown kind {kind}")


_PLAIN_NORMALIZERS: dict[str, type[normalize.Normalizer]] = {
    "Lowercase": normalize.Lowercase,
    "StripAccents": normalize.StripAccents,
    "SqueezeSpaces": SqueezeSpaces,
}


def _normalizer_json(norm: normalize.Normalizer, depth: int) -> dict:
    if depth > _DEPTH:
        raise TablesError("normalizers nested too deeply")
    kind = type(norm)
    if kind is normalize.Sequence:
        assert isinstance(norm, normalize.Sequence)
        return {"type": "Sequence", "steps": [_normalizer_json(s, depth + 1) for s in norm.steps]}
    if kind is normalize.Unicode:
        assert isinstance(norm, normalize.Unicode)
        return {"type": "Unicode", "form": norm.form, "tables": norm.tables}
    if kind is normalize.Replace:
        assert isinstance(norm, normalize.Replace)
        return {"type": "Replace", "pattern": norm.pattern, "content": norm.content, "is_regex": norm.is_regex}
    if kind is normalize.Prepend:
        assert isinstance(norm, normalize.Prepend)
        return {"type": "Prepend", "prefix": norm.prefix}
    if kind is normalize.Strip:
        assert isinstance(norm, normalize.Strip)
        return {"type": "Strip", "left": norm.left, "right": norm.right}
    for name, plain in _PLAIN_NORMALIZERS.items():
        if kind is plain:
            return {"type": name}
    raise TablesError(f"the normalizer {norm!r} cannot be stored")


def _rule_json(rule: SplitRule | str) -> dict:
    if isinstance(rule, str):
        return {"given": rule}  # a preset's name or a pattern: resolved again the same way
    if type(rule) is not SplitRule:
        raise TablesError("not a split rule")
    steps = [[s.pattern, s.behavior, s.invert] for s in rule.splits]
    return {"steps": steps, "name": rule.name, "unicode": rule.unicode, "fast": rule.fast is not None}


def dumps(parts: Parts, should_stop: ShouldStop | None = None) -> bytes:
    """``parts`` as data (see the module docstring); ``should_stop`` is asked between steps
    (:class:`Cancelled`). :class:`TablesError` (or ``TypeError``/``OverflowError``) for parts
    this module cannot store."""
    return b"".join(chunks(parts, should_stop))


def chunks(parts: Parts, should_stop: ShouldStop | None = None) -> list[bytes]:
    """:func:`dumps` as a list of byte strings, to be written one after another."""
    if parts.factory not in FACTORIES:
        raise TablesError(f"unknown factory {parts.factory!r}")
    out = _Out(should_stop)
    args = {}
    for key, value in parts.args.items():
        if key not in KINDS:
            raise TablesError(f"argument {key!r} cannot be stored")
        args[key] = _encode_value(KINDS[key], key, value, out)
    header = {"factory": parts.factory, "args": args, "blobs": [len(b) for b in out.blobs]}
    head = json.dumps(header, separators=(",", ":")).encode("ascii")
    return [MAGIC, _HEAD.pack(VERSION, len(head)), head, *out.blobs]


# -- reading ---------------------------------------------------------------------------------------


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise TablesError(what)


class _In:
    """The byte strings of data being read, each taken at most once, and the pool of ints."""

    def __init__(self, blobs: list[memoryview]) -> None:
        self.blobs = blobs
        self.taken: set[int] = set()
        self.pool = np.arange(256).astype(object)  # id -> one shared int object
        self.first_texts: list[str | None] | None = None
        self.known: dict[str | None, str | None] | None = None  # text -> one shared str object

    def blob(self, ref: Any) -> memoryview:
        _check(type(ref) is int and 0 <= ref < len(self.blobs) and ref not in self.taken, "a bad table reference")
        self.taken.add(ref)
        return self.blobs[ref]

    def array(self, ref: Any) -> np.ndarray:
        data = self.blob(ref)
        _check(len(data) % 8 == 0, "a table of ids of a bad length")
        return np.frombuffer(data, dtype="<i8")

    def pooled(self, arr: np.ndarray) -> np.ndarray:
        """``arr`` as an array of int objects, each id one shared object (as a parse makes them:
        a table's ids are the vocabulary's), made in C."""
        if not len(arr) or int(arr.min()) < 0 or int(arr.max()) >= MAX_POOL:
            return arr.astype(object)
        top = int(arr.max()) + 1
        if top > len(self.pool):
            self.pool = np.concatenate((self.pool, np.arange(len(self.pool), top).astype(object)))
        time.sleep(0)
        return self.pool[arr]

    def ints(self, ref: Any) -> list[int]:
        return self.pooled(self.array(ref)).tolist()

    def pairs(self, ref: Any) -> list[tuple[int, int]]:
        flat = self.pooled(self.array(ref))
        _check(len(flat) % 2 == 0, "an odd number of ids in pairs")
        return list(zip(flat[0::2].tolist(), flat[1::2].tolist()))

    def cuts(self, ref: Any, total: int, gaps: bool = False) -> list[int]:
        """Where each of the items whose lengths ``ref`` holds starts, and where the last ends
        (``gaps``: a length of -1 is an item that is not there, taking no room)."""
        lens = self.array(ref)
        _check(not len(lens) or int(lens.min()) >= (-1 if gaps else 0), "items of bad lengths")
        ends = np.cumsum(np.maximum(lens, 0)) if gaps else np.cumsum(lens)
        _check(int(ends[-1]) == total if len(ends) else total == 0, "items of lengths that do not add up")
        return [0, *ends.tolist()]

    def texts(self, text_ref: Any, lens_ref: Any) -> list[str | None]:
        text = str(self.blob(text_ref), "utf-8", "surrogatepass")
        lens = self.blobs[lens_ref] if type(lens_ref) is int and 0 <= lens_ref < len(self.blobs) else b""
        missing = len(lens) % 8 == 0 and bool((np.frombuffer(lens, dtype="<i8") < 0).any())
        at = self.cuts(lens_ref, len(text), gaps=True)
        got: list[str | None] = list(map(text.__getitem__, map(slice, at, at[1:])))
        if missing:
            for k in np.nonzero(np.frombuffer(lens, dtype="<i8") < 0)[0].tolist():
                got[k] = None
        # one object for a text in two tables (a piece and its key in the piece index), as a
        # parse makes them: a second copy of 262k pieces would be ~20 MB
        if self.first_texts is None:
            self.first_texts = got
            return got
        if self.known is None:
            self.known = dict(zip(self.first_texts, self.first_texts))
        return list(map(self.known.get, got, got))


def _is_obj(value: Any, keys: set[str]) -> bool:
    return type(value) is dict and set(value) == keys


def _decode_value(kind: str, key: str, value: Any, tables: _In) -> Any:  # noqa: PLR0911, PLR0912
    """One argument from its JSON (and its tables), every field checked."""
    if value is None:
        _check(kind not in ("str", "bool", "choice"), f"{key}: missing")
        return None
    if kind in ("bytes_ids", "str_ids"):
        _check(_is_obj(value, {"blob" if kind == "bytes_ids" else "text", "lens", "ids"}), f"{key}: bad fields")
        ids = tables.ints(value["ids"])
        if kind == "str_ids":
            keys: list = tables.texts(value["text"], value["lens"])
            _check(None not in keys, f"{key}: a missing text")
        else:
            blob = bytes(tables.blob(value["blob"]))
            at = tables.cuts(value["lens"], len(blob))
            keys = list(map(blob.__getitem__, map(slice, at, at[1:])))
        _check(len(keys) == len(ids), f"{key}: keys and ids differ in number")
        out = dict(zip(keys, ids))
        _check(len(out) == len(keys), f"{key}: a key twice")
        return out
    if kind == "strs":
        _check(_is_obj(value, {"text", "lens"}), f"{key}: bad fields")
        return tables.texts(value["text"], value["lens"])
    if kind == "ints":
        _check(_is_obj(value, {"ids"}), f"{key}: bad fields")
        return tables.ints(value["ids"])
    if kind == "pairs":
        _check(_is_obj(value, {"pairs"}), f"{key}: bad fields")
        return tables.pairs(value["pairs"])
    if kind == "floats":
        _check(_is_obj(value, {"floats"}), f"{key}: bad fields")
        data = tables.blob(value["floats"])
        _check(len(data) % 8 == 0, f"{key}: a table of bad length")
        return np.frombuffer(data, dtype="<f8").tolist()
    if kind == "str":
        _check(type(value) is str, f"{key}: not a string")
        return value
    if kind == "choice":
        _check(value in _CHOICES[key], f"{key}: not one of {_CHOICES[key]}")
        return value
    if kind == "bool":
        _check(type(value) is bool, f"{key}: not true or false")
        return value
    if kind == "int":
        _check(type(value) is int, f"{key}: not an integer")
        return value
    if kind == "str_strs":
        _check(type(value) is dict and all(type(v) is str for v in value.values()), f"{key}: not text to text")
        return value
    if kind == "options":
        _check(type(value) is list, f"{key}: not a list")
        got = {}
        for item in value:
            _check(type(item) is list and len(item) == 2 and type(item[0]) is str, f"{key}: a bad entry")
            flags = item[1]
            _check(type(flags) is list and len(flags) == 4 and all(type(x) is bool for x in flags), f"{key}: bad flags")
            got[item[0]] = tuple(flags)
        return got
    if kind == "normalizer":
        return _normalizer_from(value, 0)
    if kind == "rule":
        return _rule_from(value)
    if kind == "word_marks":
        _check(
            _is_obj(value, {"suffix", "prefix"}) and all(type(v) is str for v in value.values()), f"{key}: bad marks"
        )
        return WordMarks(value["suffix"], value["prefix"])
    if kind == "training":
        _check(_is_obj(value, {"settings", "counts"}) and type(value["settings"]) is dict, f"{key}: bad fields")
        return TrainingInfo(value["settings"], tables.ints(value["counts"]))
    raise TablesError(f"{key}: unknown kind")


def _normalizer_from(obj: Any, depth: int) -> normalize.Normalizer:  # noqa: PLR0911
    _check(depth <= _DEPTH and type(obj) is dict, "a bad normalizer")
    kind = obj.get("type")
    if kind == "Sequence":
        _check(_is_obj(obj, {"type", "steps"}) and type(obj["steps"]) is list, "a bad Sequence")
        return normalize.Sequence(tuple(_normalizer_from(s, depth + 1) for s in obj["steps"]))
    if kind == "Unicode":
        _check(_is_obj(obj, {"type", "form", "tables"}), "a bad Unicode normalizer")
        _check(obj["form"] in ("NFC", "NFD", "NFKC", "NFKD") and obj["tables"] in ("", "hf"), "a bad Unicode form")
        return normalize.Unicode(obj["form"], tables=obj["tables"])
    if kind == "Replace":
        _check(_is_obj(obj, {"type", "pattern", "content", "is_regex"}), "a bad Replace")
        _check(
            type(obj["pattern"]) is str and type(obj["content"]) is str and type(obj["is_regex"]) is bool,
            "a bad Replace",
        )
        return normalize.Replace(obj["pattern"], obj["content"], is_regex=obj["is_regex"])
    if kind == "Prepend":
        _check(_is_obj(obj, {"type", "prefix"}) and type(obj["prefix"]) is str, "a bad Prepend")
        return normalize.Prepend(obj["prefix"])
    if kind == "Strip":
        _check(_is_obj(obj, {"type", "left", "right"}), "a bad Strip")
        _check(type(obj["left"]) is bool and type(obj["right"]) is bool, "a bad Strip")
        return normalize.Strip(obj["left"], obj["right"])
    _check(_is_obj(obj, {"type"}) and kind in _PLAIN_NORMALIZERS, f"an unknown normalizer {kind!r}")
    return _PLAIN_NORMALIZERS[kind]()


def _rule_from(obj: Any) -> SplitRule | str:
    if _is_obj(obj, {"given"}):
        _check(type(obj["given"]) is str, "a bad split rule")
        return obj["given"]
    _check(_is_obj(obj, {"steps", "name", "unicode", "fast"}), "a bad split rule")
    _check(
        type(obj["name"]) is str and obj["unicode"] in ("", "hf", "llama") and type(obj["fast"]) is bool,
        "a bad split rule",
    )
    _check(type(obj["steps"]) is list, "a bad split rule")
    steps = []
    for step in obj["steps"]:
        _check(type(step) is list and len(step) == 3, "a bad split step")
        pattern, behavior, invert = step
        _check(type(pattern) is str and behavior in BEHAVIORS and type(invert) is bool, "a bad split step")
        steps.append(Split(pattern, behavior, invert))
    rule = SplitRule(tuple(steps), name=obj["name"], unicode=obj["unicode"])
    for known in _known_rules():  # a built-in rule is that rule (with its fast engine, if it has one)
        if known == rule and (known.fast is not None) == obj["fast"]:
            return known
    if obj["fast"]:  # a built-in pattern's fast engine, under another name
        engine = next((k for k in _known_rules() if k.fast is not None and k.splits == rule.splits), None)
        _check(engine is not None, "a fast split rule that is not built in")
        assert engine is not None
        rule = dataclasses.replace(rule, fast=engine.fast)
    return rule


@functools.cache
def _known_rules() -> tuple[SplitRule, ...]:
    return (*PRESETS.values(), resolve_rule(QWEN2_PATTERN), NO_SPLIT)


def _split(data: bytes | memoryview) -> tuple[dict, list[memoryview]]:
    view = memoryview(data).cast("B")
    _check(bytes(view[: len(MAGIC)]) == MAGIC, "not tables written by bpeinspect")
    _check(len(view) >= len(MAGIC) + _HEAD.size, "truncated")
    version, n = _HEAD.unpack_from(view, len(MAGIC))
    _check(version == VERSION, f"tables of another version ({version})")
    at = len(MAGIC) + _HEAD.size
    _check(n <= MAX_HEADER and at + n <= len(view), "a bad header length")
    try:
        header = json.loads(str(view[at : at + n], "ascii"))
    except (ValueError, RecursionError) as exc:
        raise TablesError(f"a header that is not JSON ({type(exc).__name__})") from None
    _check(_is_obj(header, {"factory", "args", "blobs"}), "a header with bad fields")
    _check(header["factory"] in FACTORIES and type(header["args"]) is dict, "an unknown factory")
    sizes = header["blobs"]
    _check(type(sizes) is list and all(type(s) is int and s >= 0 for s in sizes), "bad table sizes")
    at += n
    _check(at + sum(sizes) == len(view), "tables of another length than the data (truncated or padded)")
    blobs = []
    for size in sizes:
        blobs.append(view[at : at + size])
        at += size
    return header, blobs


def loads(data: bytes | memoryview) -> Parts:
    """The :class:`Parts` that :func:`dumps` wrote; :class:`TablesError` for anything else."""
    header, blobs = _split(data)
    tables = _In(blobs)
    args = {}
    for key, value in header["args"].items():
        _check(key in KINDS, f"an unknown argument {key!r}")
        args[key] = _decode_value(KINDS[key], key, value, tables)
        time.sleep(0)
    _check(len(tables.taken) == len(blobs), "tables that no argument uses")
    return Parts(header["factory"], args)


def _pickle(tok: Tokenizer) -> tuple[Callable[..., Tokenizer], tuple[bytes, dict[str, int]]]:
    """How ``pickle`` stores a tokenizer: as its tables (``copyreg`` calls this), so that a
    tokenizer pickles as tiktoken's ``Encoding`` does, and unpickling runs no stored code."""
    if not can_rebuild(tok):
        raise TypeError(
            f"tokenizer {tok.name!r} cannot be pickled: only byte-level BPE tokenizers are stored as tables"
        )
    parts = parts_of(tok)
    if tok.training is not None:
        parts.args["training"] = tok.training
    # a second name of a special token (its text is not what its id decodes to) is added back after
    named: dict[str, int] = {}
    aliases: dict[str, int] = {}
    for text, i in tok.special_tokens.items():
        (named if tok.token_bytes(i) == text.encode("utf-8") else aliases)[text] = i
    parts.args["special_tokens"] = named
    return _unpickle, (dumps(parts), aliases)


def _unpickle(data: bytes, aliases: dict[str, int]) -> Tokenizer:
    tok = rebuild(data)
    return tok.with_special_tokens(aliases) if aliases else tok


copyreg.pickle(Tokenizer, _pickle)


def rebuild(data: bytes | memoryview) -> Any:
    """The tokenizer data written by :func:`dumps` makes: :class:`TablesError` for data that does
    not describe one, or for tables its constructor refuses."""
    try:
        return build(loads(data))
    except TablesError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError) as exc:
        raise TablesError(f"tables that make no tokenizer ({type(exc).__name__}: {exc})") from None


__all__ = [
    "FACTORIES",
    "KINDS",
    "MAGIC",
    "VERSION",
    "Parts",
    "TablesError",
    "build",
    "can_rebuild",
    "chunks",
    "dumps",
    "factory_name",
    "loads",
    "parts_from_call",
    "parts_of",
    "rebuild",
    "remember",
]
