"""A cache of large vocabularies' built tables, so that opening the same file again is fast
(issue 14 item 10).

Opening a big ``tokenizer.json`` or GGUF file mostly parses it and maps ~1 million merge parts
to ids; the tokenizer is then made by one constructor call (``Tokenizer(...)`` or
``SentencePieceBPE(...)``) from plain tables: ranks or pieces, merges as id pairs, the ids they
make, special tokens, the split rule, the normalizer. :func:`cached_load` records that call
while a file loads (the loaders make it through ``formats._common.build_tokenizer``, which
notes it) and writes its arguments to ``<cache>/loads/KEY.pickle``; the next load of
the same file makes the same call from them, with no parse and no lookups.

The key is a hash of the file's bytes (for a file over :data:`HASHED_BYTES`, a model with its
tensors: of its first megabyte, its size, inode and time of change), its path (the name and source shown come from it), the loader's name argument, this
cache's :data:`FORMAT_VERSION`, the Python version, bpeinspect's version and its core source
code: any change to the code that builds tokenizers makes older entries stale. An app bundle
that ships no sources caches nothing. Entries are written
atomically (``core.io.atomic``), checked by a CRC on reading, and read with an unpickler that
makes only bpeinspect's own classes, compiled patterns and plain data; a missing, stale, damaged or unreadable
entry is ignored (the file is parsed, and the entry written again), never an error. Loads that
warned, streams, folders and files under :data:`MIN_SIZE` are not cached; the newest
:data:`KEEP` entries are kept.

``BPEINSPECT_LOAD_CACHE=0`` turns it off (the test suite does, but for the tests of this cache).

>>> import tempfile
>>> key_for(Path(tempfile.mkdtemp()) / "tokenizer.json") is None  # no such file: never cached
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import struct
import sys
import threading
import time
import zlib
from array import array
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

from bpeinspect.core.io.atomic import atomic_open
from bpeinspect.core.io.discover import cache_dir
from bpeinspect.core.io.formats._common import recording
from bpeinspect.core.sentencepiece import SentencePieceBPE
from bpeinspect.core.tokenizer import Tokenizer

# what an entry may call to make its tokenizer (the constructor calls the loaders record)
_FACTORIES = (Tokenizer, SentencePieceBPE)

ENV = "BPEINSPECT_LOAD_CACHE"
FORMAT_VERSION = 1
MIN_SIZE = 1 << 20  # bytes: smaller files load in a few tens of ms anyway
HASHED_BYTES = 64 << 20  # a bigger file (a model's GGUF with its tensors) is not hashed whole
KEEP = 12  # entries kept (the most recently used)
_SLICE = 1 << 14  # items of a big list or dict pickled at a time
_WRITERS: set[threading.Thread] = set()
_MAGIC = b"bpeinspect load cache\n"
# CRC-32 and length of what follows, the size of the pool of ints, where the last pickle (what
# the stream before it holds) starts
_HEADER = struct.Struct("<IQQQ")
_MAX_POOL = 1 << 23

def enabled() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "off", "no", "false", "")


def folder() -> Path:
    return cache_dir() / "loads"


@functools.cache
def _code_fingerprint() -> bytes | None:
    """A hash of bpeinspect's core sources: entries made by other code are stale. ``None``
    where the sources cannot be read (an app bundle that ships only compiled modules): no
    entry is then read or written, since nothing would tell one version's tables from the next."""
    from bpeinspect import __version__

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{FORMAT_VERSION} {sys.version_info[:2]} {__version__}".encode())
    sources = sorted(root.rglob("*.py"))
    if getattr(sys, "frozen", False) or not any(p.name == "tokenizer.py" for p in sources):
        return None
    for p in sources:
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(p.read_bytes())
    return h.digest()


def key_for(path: Path, extra: str = "") -> str | None:
    """The cache key of ``path``'s content (see the module docstring), or ``None`` where the
    file is not cached (too small, not a regular file, unreadable)."""
    try:
        st = path.stat()
        if not path.is_file() or st.st_size < MIN_SIZE:
            return None
        code = _code_fingerprint()
        if code is None:
            return None
        h = hashlib.sha256(code)
        h.update(f"{path.resolve()}\0{extra}\0{st.st_size}\0".encode())
        left = st.st_size
        if st.st_size > HASHED_BYTES:  # a model with its tensors: its head, size and time of change
            h.update(f"{st.st_mtime_ns}\0{st.st_ino}\0".encode())
            left = 1 << 20
        with open(path, "rb") as f:
            while left > 0 and (block := f.read(min(left, 1 << 22))):
                h.update(block)
                left -= len(block)
    except OSError:
        return None
    return h.hexdigest()[:40]


_ALLOWED_BUILTINS = {"set", "frozenset", "slice", "range", "complex", "bytearray", "object"}
# a compiled pattern travels as its source, compiled again
_ALLOWED_CALLS = {("copyreg", "_reconstructor"), ("re", "_compile"), ("regex.regex", "_compile"), ("regex", "_compile")}


class _Unpickler(pickle.Unpickler):
    """Only bpeinspect's own classes and plain data: an entry can make nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if (module, name) in _ALLOWED_CALLS:
            return super().find_class(module, name)
        if module.startswith("bpeinspect.core.") and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) or found in _FACTORIES:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a load cache entry")


def _is_all(items: Any, kind: type) -> bool:
    return bool(items) and set(map(type, items)) == {kind}


def _encode(items: Any) -> tuple[str, Any, int]:
    """A slice of a list: ints and pairs of ints (none negative) as arrays, read back as shared
    int objects, as a parse makes them; anything else as it is. With the largest int."""
    try:
        if _is_all(items, int):
            kind, ints = "q", array("q", items)
        elif _is_all(items, tuple) and set(map(len, items)) == {2}:
            kind, ints = "p", array("q", chain.from_iterable(items))
        else:
            return "o", items, 0
    except (OverflowError, TypeError):
        return "o", items, 0
    if len(ints) == 0 or min(ints) < 0:
        return "o", items, 0
    return kind, ints.tobytes(), max(ints)


class _Checked:
    """A file being written, with the CRC-32 and length of what went through."""

    def __init__(self, f: Any) -> None:
        self.f, self.crc, self.n = f, 0, 0

    def write(self, data: Any) -> int:
        self.crc = zlib.crc32(data, self.crc)
        self.n += len(memoryview(data).cast("B"))
        return self.f.write(data)


class _Writer:
    """One pickle stream (one memo: a string in two tables is written once and read back as
    one object), a value or a slice of one at a time, the interpreter let go in between."""

    def __init__(self, out: _Checked) -> None:
        self.out = out
        self.pickler = pickle.Pickler(out, pickle.HIGHEST_PROTOCOL)
        self.largest = 0  # the largest int in an array: the pool of ints the reader shares

    def dump(self, obj: Any) -> None:
        self.pickler.dump(obj)
        time.sleep(0)  # let another thread (the GUI's) run

    def encoded(self, items: Any) -> tuple[str, Any]:
        kind, data, largest = _encode(items)
        self.largest = max(self.largest, largest)
        return kind, data

    def value(self, value: Any) -> tuple:
        """Write ``value`` (big lists and dicts in slices); what the reader needs to know of it."""
        if isinstance(value, (list, tuple)) and len(value) > _SLICE:
            for k in range(0, len(value), _SLICE):
                self.dump(self.encoded(value[k : k + _SLICE]))
            return ("list" if isinstance(value, list) else "tuple", -(-len(value) // _SLICE))
        if type(value) is dict and len(value) > _SLICE:
            keys, values = list(value), list(value.values())
            for k in range(0, len(keys), _SLICE):
                self.dump((keys[k : k + _SLICE], self.encoded(values[k : k + _SLICE])))
            return ("dict", -(-len(keys) // _SLICE))
        self.dump(value)
        return ("one", 1)


class _Reader:
    def __init__(self, body: memoryview, pool_size: int) -> None:
        self.unpickler = _Unpickler(io.BytesIO(body))
        self.pool = list(range(pool_size))  # the ints of the tables, one object each

    def load(self) -> Any:
        got = self.unpickler.load()
        time.sleep(0)
        return got

    def decoded(self, encoded: tuple[str, Any]) -> list:
        kind, data = encoded
        if kind == "o":
            return data
        ints = array("q")
        ints.frombytes(data)
        if kind == "q":
            return list(map(self.pool.__getitem__, ints))
        flat = iter(list(map(self.pool.__getitem__, ints)))
        return list(zip(flat, flat))

    def value(self, spec: tuple) -> Any:
        kind, n = spec
        if kind == "one":
            return self.load()
        if kind == "dict":
            out: dict = {}
            for _ in range(n):
                keys, values = self.load()
                out.update(zip(keys, self.decoded(values)))
            return out
        items: list = []
        for _ in range(n):
            items += self.decoded(self.load())
        return items if kind == "list" else tuple(items)


def read(key: str) -> Any | None:
    """The tokenizer an entry makes, or ``None`` (no entry, or one that is damaged or stale)."""
    entry = folder() / f"{key}.pickle"
    try:
        with open(entry, "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        if not data.startswith(_MAGIC):
            return None
        crc, n, pool, head_at = _HEADER.unpack_from(data, len(_MAGIC))
        body = memoryview(data)[len(_MAGIC) + _HEADER.size :]
        if len(body) != n or zlib.crc32(body) != crc or not 0 <= pool <= _MAX_POOL or not 0 <= head_at <= n:
            return None
        factory, arg_specs, kwarg_specs = _Unpickler(io.BytesIO(body[head_at:])).load()
        if not (factory in _FACTORIES and isinstance(arg_specs, tuple) and isinstance(kwarg_specs, dict)):
            return None
        reader = _Reader(body[:head_at], pool)
        args = [reader.value(spec) for spec in arg_specs]
        kwargs = {k: reader.value(spec) for k, spec in kwarg_specs.items()}
        del data, body, reader
        tok = factory(*args, **kwargs)
    except Exception:  # noqa: BLE001 - any damage or staleness means: parse the file as usual
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # most recently used
    return tok


def write(key: str, factory: Any, args: tuple, kwargs: dict) -> None:
    """Write an entry (atomically, straight to its temporary file); failures (a read-only
    home, a full disk, a table that does not pickle) are ignored."""
    try:
        where = folder()
        where.mkdir(parents=True, exist_ok=True)
        with atomic_open(where / f"{key}.pickle", "wb") as f:
            f.write(_MAGIC + _HEADER.pack(0, 0, 0, 0))
            out = _Checked(f)
            w = _Writer(out)
            arg_specs = tuple(map(w.value, args))
            kwarg_specs = {k: w.value(v) for k, v in kwargs.items()}
            if w.largest >= _MAX_POOL:
                raise ValueError("ids too large for the pool of ints")
            head_at = out.n
            out.write(pickle.dumps((factory, arg_specs, kwarg_specs), pickle.HIGHEST_PROTOCOL))
            f.seek(len(_MAGIC))
            f.write(_HEADER.pack(out.crc, out.n, w.largest + 1, head_at))
        _prune(where)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
        return


def _write_then_go(*args: Any) -> None:
    try:
        write(*args)
    finally:
        _WRITERS.discard(threading.current_thread())


def _snapshot(value: Any) -> Any:
    """A shallow copy of a list (C speed, 8 bytes an item), so that a writer in the background
    pickles it as it was given. Dicts are not copied (tens of MB): no tokenizer changes the
    tables it was made from."""
    return list(value) if type(value) is list else value


def wait() -> None:
    """Wait for the entries being written in the background (tests; a process that exits
    waits for them anyway)."""
    while _WRITERS:
        with contextlib.suppress(KeyError, RuntimeError):
            _WRITERS.pop().join()


def _prune(where: Path) -> None:
    entries = []
    for p in where.glob("*.pickle"):
        with contextlib.suppress(OSError):
            entries.append((p.stat().st_mtime_ns, p))
    for _, p in sorted(entries, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            p.unlink()


def cached_load(path: Path, load: Callable[[], Any], extra: str = "") -> Any:
    """``load()``, or the tokenizer an entry for ``path`` makes; a load that is cacheable is
    written as an entry (see the module docstring)."""
    key = key_for(path, extra) if enabled() else None
    if key is None:
        return load()
    tok = read(key)
    if tok is not None:
        return tok
    with recording() as calls:
        tok = load()
    if calls and calls[-1] is not None and calls[-1][3] is tok and None not in calls:
        factory, args, kwargs, _ = calls[-1]
        args, kwargs = tuple(map(_snapshot, args)), {k: _snapshot(v) for k, v in kwargs.items()}
        # written after the tokenizer is handed back, a slice at a time (not a daemon: a
        # process that exits first waits for it, and a half-written entry is never seen)
        writer = threading.Thread(target=_write_then_go, args=(key, factory, args, kwargs), name="bpeinspect load cache")
        _WRITERS.add(writer)
        writer.start()
    return tok


__all__ = ["ENV", "FORMAT_VERSION", "cached_load", "enabled", "folder", "key_for", "read", "wait", "write"]
