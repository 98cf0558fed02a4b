"""Atomic file writes: a reader sees the old file or the new one, never half of either.

Every file bpeinspect writes goes through here. The data goes to a temporary file in the
target's folder (so the final rename cannot cross file systems), which is fsynced, given
the target's permissions (an existing file keeps its mode, a new one gets the usual
``0o666 & ~umask``, typically 0644), and renamed over the target with ``os.replace``; then
the folder is fsynced so the rename itself survives a crash. If anything fails, the
temporary file is removed and the old file is untouched.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> atomic_write(p, b"hello")
>>> p.read_bytes()
b'hello'
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that wants a file name (an image
    exporter); on a clean exit the file written there replaces ``path``.

    ``suffix`` ends the temporary name (exporters that pick the format by the name need
    the target's). Writing nothing is an error: the target is left as it was.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
    >>> with atomic_path(p, suffix=".csv") as tmp:
    ...     _ = tmp.write_text("x,y")
    >>> p.read_text()
    'x,y'
    """
    with _replacing(Path(path), suffix) as (fd, tmp):
        os.close(fd)
        yield tmp
        if not tmp.exists() or tmp.stat().st_size == 0:
            raise OSError(f"{path}: nothing was written")


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
    with _replacing(Path(path), ".tmp") as (fd, _tmp), os.fdopen(
        fd, mode, encoding=encoding, newline="" if "b" not in mode else None
    ) as f:
        yield f


@contextlib.contextmanager
def _replacing(target: Path, suffix: str) -> Iterator[tuple[int, Path]]:
    """A temporary file beside ``target`` (its descriptor and path) that replaces ``target``
    when the block ends cleanly and is removed when it does not."""
    fd, tmp = _temp_beside(target, suffix)
    try:
        yield fd, tmp
        _finish(tmp, target)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(_folder(target))


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
    staged: list[tuple[Path, Path]] = []  # (temporary with the new content, target)
    try:
        for path, data in files.items():
            target = Path(path)
            fd, tmp = _temp_beside(target, ".tmp")
            staged.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode(encoding) if isinstance(data, str) else data)
            _finish(tmp, target)
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
    for folder in {_folder(target) for _tmp, target in staged}:
        _fsync_dir(folder)


def _folder(target: Path) -> Path:
    return target.parent if str(target.parent) else Path(".")


def _temp_beside(target: Path, suffix: str) -> tuple[int, Path]:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=_folder(target))
    return fd, Path(tmp)


def _finish(tmp: Path, target: Path) -> None:
    """Make ``tmp``'s content durable and give it the mode ``target`` has or a new file gets
    (mkstemp's 0600 would surprise whoever shares the file)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.chmod(tmp, target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask())


def _umask() -> int:
    # /proc tells without changing it; os.umask can only be read by setting it, which for a
    # moment would give files other threads create meanwhile the wrong mode
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


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
            shutil.copy2(target, link)
            return link
    raise OSError(f"{target}: cannot keep a copy of the old file")


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; not possible (nor needed) on every platform.
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
