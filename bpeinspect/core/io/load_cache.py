"""A cache of large vocabularies' built tables, so that opening the same file again is fast.

Opening a big ``tokenizer.json`` or GGUF file mostly parses it and maps ~1 million merge parts
to ids; the tokenizer is then made by one constructor call from plain tables. :func:`cached_load`
writes the tables the loaded tokenizer is made from again (:func:`~bpeinspect.core.tables.parts_of`)
as data (``core/tables.py``: a JSON header and byte strings, no pickled objects) to
``<cache>/loads/KEY.tables``, and the next load of the same file makes it from them, with no
parse and no lookups.

The cache is a service: the app and the command line turn it on (:func:`turn_on`); in library
use it is off unless asked. ``BPEINSPECT_LOAD_CACHE=1`` (or ``0``) turns it on (or off) whatever
the program says.

The key is a hash of the file's bytes (for a file over :data:`HASHED_BYTES`, a model with its
tensors: of its first megabyte, its size, device, inode and times of modification and of
change, which no copy that keeps times can set back), its path (the name and source shown come
from it), the loader's name argument, this cache's :data:`FORMAT_VERSION`, the Python version,
bpeinspect's version and its core source code: any change to the code that builds tokenizers
makes older entries stale. Every other file the load read (the other half of a GPT-2 pair) is
named in the entry with the same fingerprint, checked before the entry is used. An app bundle
that ships no sources caches nothing.

Entries are written atomically (``core.io.atomic``) and checked by a CRC on reading; only a
regular file is read (a FIFO or a link put in its place is passed over, and replaced on the
next write), at most :data:`MAX_ENTRY` bytes. A missing, stale, damaged, foreign or hostile entry
is ignored (the file is parsed, and the entry written again), never an error, and it can make
nothing but a tokenizer from checked tables. Loads with notes (``Tokenizer.load_notes``), streams, folders and files under
:data:`MIN_SIZE` are not cached; the newest :data:`KEEP` entries are kept, and pruning removes
only files that are this cache's own (its name pattern and its header).

>>> import tempfile
>>> key_for(Path(tempfile.mkdtemp()) / "tokenizer.json") is None  # no such file: never cached
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
import struct
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeinspect.core import tables
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.io.atomic import atomic_open, read_state
from bpeinspect.core.io.discover import cache_dir
from bpeinspect.core.io.formats._common import files_read

ENV = "BPEINSPECT_LOAD_CACHE"
FORMAT_VERSION = 2
MIN_SIZE = 1 << 20  # bytes: smaller files load in a few tens of ms anyway
HASHED_BYTES = 64 << 20  # a bigger file (a model's GGUF with its tensors) is not hashed whole
HEAD_BYTES = 1 << 20  # what is hashed of such a file (with its size, inode and times)
KEEP = 12  # entries kept (the most recently used)
MAX_ENTRY = 2 << 30  # bytes: no vocabulary's tables come near this
SUFFIX = ".tables"
_NAME = re.compile(r"[0-9a-f]{40}\.tables")
_MAGIC = b"bpeinspect load cache 2\n"
# names and headers of the entries older versions wrote (also this cache's own, to prune)
_OLD = ((re.compile(r"[0-9a-f]{40}\.pickle"), b"bpeinspect load cache\n"),)
# CRC-32 and length of what follows, length of the JSON naming the other files read
_HEADER = struct.Struct("<IQI")
_WRITERS: set[threading.Thread] = set()
_service = {"on": False}


def turn_on(on: bool = True) -> None:
    """Turn the cache on (the app and the command line do) or off; the environment variable
    :data:`ENV`, when set, wins."""
    _service["on"] = on


def enabled() -> bool:
    """Whether loads use the cache: :data:`ENV` if set, else what :func:`turn_on` said."""
    value = os.environ.get(ENV)
    if value is None:
        return _service["on"]
    return value.strip().lower() not in ("0", "off", "no", "false", "")


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


def fingerprint(path: Path) -> str | None:
    """What a file's content is known by (see the module docstring), or ``None`` where it is
    not a regular file or cannot be read."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            h = hashlib.sha256(f"{st.st_size}\0".encode())
            left = st.st_size
            if st.st_size > HASHED_BYTES:  # a model with its tensors: its head, size and times
                h.update(f"{st.st_dev}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0".encode())
                left = HEAD_BYTES
            while left > 0 and (block := f.read(min(left, 1 << 22))):
                h.update(block)
                left -= len(block)
    except OSError:
        return None
    return h.hexdigest()


def key_for(path: Path, extra: str = "") -> str | None:
    """The cache key of ``path``'s content (see the module docstring), or ``None`` where the
    file is not cached (too small, not a regular file, unreadable)."""
    try:
        if not path.is_file() or path.stat().st_size < MIN_SIZE:
            return None
        where = path.resolve()
    except (OSError, RuntimeError):
        return None
    code = _code_fingerprint()
    content = fingerprint(path)
    if code is None or content is None:
        return None
    h = hashlib.sha256(code)
    h.update(f"{where}\0{extra}\0{content}\0".encode())
    return h.hexdigest()[:40]


def _files_unchanged(files: Any) -> bool:
    if type(files) is not list:
        return False
    for item in files:
        if not (type(item) is list and len(item) == 2 and all(type(x) is str for x in item)):
            return False
        if fingerprint(Path(item[0])) != item[1]:
            return False
    return True


def read(key: str, should_stop: Callable[[], bool] | None = None) -> Any | None:
    """The tokenizer an entry makes, or ``None`` (no entry, or one that is damaged, stale or
    not this cache's); ``should_stop`` is asked while it is built (:class:`Cancelled`)."""
    entry = folder() / f"{key}{SUFFIX}"
    data = read_state(entry, MAX_ENTRY, follow_links=False)  # never a FIFO, a device or a link
    if data is None or not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _HEADER.size:
        return None
    crc, n, files_size = _HEADER.unpack_from(data, len(_MAGIC))
    body = memoryview(data)[len(_MAGIC) + _HEADER.size :]
    if len(body) != n or zlib.crc32(body) != crc or files_size > n:
        return None
    try:
        files = json.loads(str(body[:files_size], "utf-8"))
    except (ValueError, RecursionError):
        return None
    if not _files_unchanged(files):
        return None
    try:
        parts = tables.loads(body[files_size:])
        del data, body  # (the entry's bytes are not kept while the tokenizer is built from the parts)
        tok = tables.build(parts, should_stop)
    except Cancelled:
        raise
    except Exception:  # noqa: BLE001 - any damage means: parse the file as usual
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # most recently used
    return tok


def write(key: str, parts: tables.Parts, files: list[list[str]]) -> None:
    """Write an entry (atomically); failures (a read-only home, a full disk, tables that
    cannot be stored) are ignored."""
    try:
        where = folder()
        where.mkdir(parents=True, exist_ok=True)
        chunks = tables.chunks(parts)
        named = json.dumps(files).encode("utf-8")  # the other files read: [path, fingerprint]
        crc, n = zlib.crc32(named), len(named)
        for chunk in chunks:
            crc, n = zlib.crc32(chunk, crc), n + len(chunk)
        entry = where / f"{key}{SUFFIX}"
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISREG(os.lstat(entry).st_mode):
                os.unlink(entry)  # a FIFO, a device or a link in the entry's place: replaced
        with atomic_open(entry, "wb", through=False) as f:  # a pipe there is replaced, never written into
            f.write(_MAGIC + _HEADER.pack(crc, n, len(named)) + named)
            for chunk in chunks:
                f.write(chunk)
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
    stores it as it was given. Dicts are not copied (tens of MB): no tokenizer changes the
    tables it was made from."""
    return list(value) if type(value) is list else value


def wait() -> None:
    """Wait for the entries being written in the background (tests; a process that exits
    waits for them anyway)."""
    while _WRITERS:
        with contextlib.suppress(KeyError, RuntimeError):
            _WRITERS.pop().join()


def is_own(path: Path) -> bool:
    """Whether ``path`` is an entry this cache wrote (now or in an older version): its name
    pattern, a regular file, and its header."""
    kinds = ((_NAME, _MAGIC), *_OLD)
    magic = next((m for pattern, m in kinds if pattern.fullmatch(path.name)), None)
    if magic is None:
        return False
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(magic)) == magic
        finally:
            os.close(fd)
    except OSError:
        return False


def _prune(where: Path) -> None:
    entries = []
    for p in where.iterdir():
        if is_own(p):
            with contextlib.suppress(OSError):
                entries.append((p.lstat().st_mtime_ns, p))
    for _, p in sorted(entries, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            p.unlink()


def cached_load(
    path: Path, load: Callable[[], Any], extra: str = "", should_stop: Callable[[], bool] | None = None
) -> Any:
    """``load()``, or the tokenizer an entry for ``path`` makes (``should_stop`` asked while it
    is built); a load that is cacheable is written as an entry (see the module docstring)."""
    key = key_for(path, extra) if enabled() else None
    if key is None:
        return load()
    tok = read(key, should_stop)
    if tok is not None:
        return tok
    with files_read() as read_paths:
        tok = load()
    if tok.load_notes or not tables.can_rebuild(tok):  # an entry would not carry the notes
        return tok
    made = tables.parts_of(tok)  # the tables it is made from again, as data
    parts = tables.Parts(made.factory, {k: _snapshot(v) for k, v in made.args.items()})
    main = os.path.abspath(path)
    others = [[p, fingerprint(Path(p)) or ""] for p in sorted({os.path.abspath(p) for p in read_paths} - {main})]
    # written after the tokenizer is handed back (not a daemon: a process that exits first
    # waits for it, and a half-written entry is never seen)
    writer = threading.Thread(target=_write_then_go, args=(key, parts, others), name="bpeinspect load cache")
    _WRITERS.add(writer)
    writer.start()
    return tok


__all__ = [
    "ENV",
    "FORMAT_VERSION",
    "cached_load",
    "enabled",
    "fingerprint",
    "folder",
    "is_own",
    "key_for",
    "read",
    "turn_on",
    "wait",
    "write",
]
