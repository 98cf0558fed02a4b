"""Atomic file writes: a reader sees the old file or the new one, never half of either.

Every saver writes through :func:`atomic_write`: the data goes to a temporary file in the
target's folder (so the final rename cannot cross file systems), is flushed and fsynced,
and then replaces the target with ``os.replace``. If anything fails, the temporary file is
removed and the old file is untouched.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> atomic_write(p, b"hello")
>>> p.read_bytes()
b'hello'
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> with atomic_open(p, "w", encoding="utf-8") as f:
    ...     _ = f.write("hi")
    >>> p.read_text()
    'hi'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes whole files; mode must be 'w' or 'wb', not {mode!r}")
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline="" if "b" not in mode else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            # Keep an existing file's permissions; a new one gets the usual umask-based mode.
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _default_mode())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def atomic_write(path: str | os.PathLike[str], data: bytes | str, encoding: str = "utf-8") -> None:
    """Write ``data`` (bytes, or text as ``encoding``) to ``path`` atomically."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_open(path, "wb") as f:
        f.write(payload)


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; not possible (nor needed) on every platform.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
