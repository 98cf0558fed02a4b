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


def atomic_write_many(files: dict[str | os.PathLike[str], bytes | str], encoding: str = "utf-8") -> None:
    """Write files that belong together (GPT-2's encoder.json + vocab.bpe): all or none.

    Every file is written to a temporary first; only when all are on disk are they renamed
    into place, and if a rename fails the ones already renamed get their old content back.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_many({d / "a": b"1", d / "b": "2"})
    >>> (d / "a").read_bytes(), (d / "b").read_text()
    (b'1', '2')
    """
    # Added for issue 9 (robustness): two atomic_write calls in a row left a new encoder.json
    # beside the old vocab.bpe when the second one failed.
    staged: list[tuple[Path, Path]] = []  # (temporary with the new content, target)
    try:
        for path, data in files.items():
            target = Path(path)
            staged.append((_write_temp(target, data.encode(encoding) if isinstance(data, str) else data), target))
        replaced: list[tuple[Path, Path | None]] = []  # (target, hard link to its old content)
        try:
            for tmp, target in staged:
                old = _keep_old(target)
                try:
                    os.replace(tmp, target)
                except BaseException:
                    if old is not None:
                        with contextlib.suppress(OSError):
                            os.unlink(old)
                    raise
                replaced.append((target, old))
        except BaseException:
            for target, old in reversed(replaced):
                with contextlib.suppress(OSError):
                    if old is None:
                        os.unlink(target)
                    else:
                        os.replace(old, target)
            raise
        finally:
            for _target, old in replaced:
                if old is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(old)
    finally:
        for tmp, _target in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # only those never renamed are still there
    for folder in {target.parent for _tmp, target in staged}:
        _fsync_dir(folder)


def _write_temp(target: Path, payload: bytes) -> Path:
    """``payload`` in a synced temporary file beside ``target`` (which it does not touch)."""
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else _default_mode())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def _keep_old(target: Path) -> Path | None:
    """A hard link to ``target``'s current content (None if there is none), to undo a rename."""
    if not target.exists():
        return None
    for n in range(100):
        link = target.with_name(f".{target.name}.{os.getpid()}.{n}.old")
        try:
            os.link(target, link)
            return link
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some network and FAT file systems): copy instead
            import shutil

            shutil.copy2(target, link)
            return link
    raise OSError(f"{target}: cannot keep a copy of the old file")


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
