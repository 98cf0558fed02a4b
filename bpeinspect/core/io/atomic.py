"""Atomic file writes: a reader sees the old file or the new one, never half of either.

Every file bpeinspect writes goes through here. The data goes to a temporary file in the
target's folder (so the final rename cannot cross file systems), which is fsynced, given
the target's permissions (an existing file keeps its mode, a new one gets the usual
``0o666 & ~umask``, typically 0644), and renamed over the target with ``os.replace``; then
the folder is fsynced so the rename itself survives a crash. If anything fails, the
temporary file is removed and the old file is untouched.

A target that is not a regular file is never replaced: a device (``/dev/null``), a named
pipe, an open descriptor (``/dev/stdout``, a shell's ``>(...)``: ``/dev/fd/N``) or a link to
one of these is written straight through, as ``sort -o`` does (:func:`writes_through`).

A process killed mid-save (SIGKILL, a power cut) leaves nothing behind either. Where the
system has ``O_TMPFILE`` (Linux) the data goes to a file with no name, linked in only once it
is complete, so a kill while writing leaves no trace. Every temporary name holds the writing
process's id (``.NAME.PID.XXXX.tmp``, ``.NAME.PID.N.old``), and each save first removes those
of its target whose process is gone (:func:`clean_stale`). Two files that belong together
(:func:`atomic_write_many`) are renamed into place under a journal: a kill between the
renames is finished, forwards, by the next save or load of the pair (:func:`finish_interrupted`).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> atomic_write(p, b"hello")
>>> p.read_bytes()
b'hello'
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
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
    if writes_through(path):
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder) / ("out" + suffix)
            yield tmp
            if not tmp.exists() or tmp.stat().st_size == 0:
                raise OSError(f"{path}: nothing was written")
            with _open_through(Path(path)) as out, open(tmp, "rb") as f:
                shutil.copyfileobj(f, out)
        return
    with _replacing(Path(path), suffix) as (fd, tmp):
        os.close(fd)
        yield tmp
        if not tmp.exists() or tmp.stat().st_size == 0:
            raise OSError(f"{path}: nothing was written")


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "wb", encoding: str | None = None, *, through: bool = True
) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on a clean exit it replaces ``path``.

    ``through=False`` replaces even a device or a pipe (see :func:`writes_through`): for the
    program's own state files, where such a thing is only in the way.

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
    if through and writes_through(target):
        with _open_through(target) as raw:
            if mode == "wb":
                yield raw
            else:
                with open(raw.fileno(), "w", encoding=encoding, newline="", closefd=False) as f:
                    yield f
        return
    clean_stale(target)
    fd = _unnamed_beside(target)
    if fd is None:  # no O_TMPFILE here: a named temporary, removed by a later save if we are killed
        with (
            _replacing(target, ".tmp") as (named_fd, _tmp),
            os.fdopen(named_fd, mode, encoding=encoding, newline="" if "b" not in mode else None) as f,
        ):
            yield f
        return
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline="" if "b" not in mode else None, closefd=False) as f:
            yield f
        os.fsync(fd)
        with contextlib.suppress(OSError):
            os.fchmod(fd, _mode_for(target))
        tmp = _link_unnamed(fd, target)
        try:
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    finally:
        os.close(fd)
    _fsync_dir(_folder(target))


@contextlib.contextmanager
def _replacing(target: Path, suffix: str) -> Iterator[tuple[int, Path]]:
    """A temporary file beside ``target`` (its descriptor and path) that replaces ``target``
    when the block ends cleanly and is removed when it does not."""
    clean_stale(target)
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


_DESCRIPTOR = re.compile(r"^/(?:proc/(self|thread-self|\d+)|dev)/fd/(\d+)$")
_STANDARD = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def writes_through(path: str | os.PathLike[str]) -> bool:
    """Whether a save to ``path`` writes straight into it instead of replacing it: it is a
    device, a named pipe or a socket, an open descriptor (``/dev/stdout``, ``/dev/fd/N``), or
    a link to one of these. A regular file, a folder or a new name is replaced atomically.

    >>> writes_through("/dev/null"), writes_through("/no/such/file")
    (True, False)
    """
    if _descriptor(Path(path)) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _descriptor(target: Path) -> int | None:
    """The descriptor number ``target`` names (``/dev/stdout``, ``/proc/self/fd/N``, or a link
    leading to one of these), else None."""
    current = os.path.abspath(target)
    for _ in range(40):  # as many links as the system follows
        if current in _STANDARD:
            return _STANDARD[current]
        m = _DESCRIPTOR.match(current)
        if m is not None and m.group(1) in (None, "self", "thread-self", str(os.getpid())):
            return int(m.group(2))
        try:
            link = os.readlink(current)
        except (OSError, ValueError):
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return None


@contextlib.contextmanager
def _open_through(target: Path) -> Iterator[IO[bytes]]:
    """``target`` opened to be written straight into (see :func:`writes_through`): an open
    descriptor's duplicate (so the data goes where the descriptor's offset is, as a shell's
    ``>>`` expects), else the device or pipe itself."""
    number = _descriptor(target)
    fd = os.dup(number) if number is not None else os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "wb") as f:
        yield f


def _unnamed_beside(target: Path) -> int | None:
    """A descriptor of a new file with no name in ``target``'s folder (``O_TMPFILE``), or
    None where the system or the file system cannot make one."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not _Unnamed.works:
        return None
    try:
        return os.open(_folder(target), flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None  # this file system has no unnamed files (ENOENT: a kernel without O_TMPFILE)
        raise


class _Unnamed:
    works = os.path.isdir("/proc/self/fd")  # linkat through /proc names an unnamed file


def _link_unnamed(fd: int, target: Path) -> Path:
    """Give the unnamed file ``fd`` a temporary name beside ``target`` (``linkat`` through
    ``/proc/self/fd``); a kill between this and the rename leaves a name :func:`clean_stale` removes."""
    folder = _folder(target)
    # a dst_dir_fd makes os.link call linkat(AT_SYMLINK_FOLLOW): plain link() would link the
    # /proc symlink itself
    dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for _ in range(100):
            name = f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
            try:
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
                return folder / name
            except FileExistsError:
                continue
    finally:
        os.close(dir_fd)
    raise OSError(f"{target}: cannot name the temporary file")


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A new, empty folder beside ``path`` to fill with files; on a clean exit they are fsynced
    and the folder (with the umask's mode) replaces ``path``, or is removed if the block fails.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "texts"
    >>> with atomic_folder(d) as tmp:
    ...     _ = (tmp / "a.txt").write_text("hi")
    >>> [p.name for p in d.parent.iterdir()], (d / "a.txt").read_text()
    (['texts'], 'hi')
    """
    target = Path(path)
    if writes_through(target):
        raise OSError(f"{target}: not a regular file or folder; a folder of files cannot be written into it")
    clean_stale(target)
    for _ in range(100):
        tmp = _folder(target) / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.mkdir(tmp, 0o777)  # the umask's mode, as a new file gets (mkdtemp's is 0700)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"{target}: cannot make a temporary folder beside it")
    try:
        yield tmp
        for entry in os.scandir(tmp):
            _finish(Path(entry.path), Path(entry.path))
        _fsync_dir(tmp)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(_folder(target))


def atomic_write(
    path: str | os.PathLike[str], data: bytes | str, encoding: str = "utf-8", *, through: bool = True
) -> None:
    """Write ``data`` (bytes, or text as ``encoding``) to ``path`` atomically (``through``: as
    :func:`atomic_open`)."""
    payload = data.encode(encoding) if isinstance(data, str) else data
    with atomic_open(path, "wb", through=through) as f:
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
    targets = [Path(path) for path in files]
    for target in targets:
        if writes_through(target):
            raise OSError(f"{target}: not a regular file; files that belong together are written to regular files only")
    for folder in {_folder(t) for t in targets}:
        finish_interrupted(folder)
    staged: list[tuple[Path, Path]] = []  # (temporary with the new content, target)
    journal: Path | None = None
    try:
        for path, data in files.items():
            target = Path(path)
            clean_stale(target)
            fd, tmp = _temp_beside(target, ".tmp")
            staged.append((tmp, target))
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode(encoding) if isinstance(data, str) else data)
            _finish(tmp, target)
        journal = _write_journal(staged)  # from here a kill is finished forwards by the next save or load
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
        if journal is not None:
            with contextlib.suppress(OSError):
                os.unlink(journal)
    for folder in {_folder(target) for _tmp, target in staged}:
        _fsync_dir(folder)


_JOURNAL_END = "end"


def _write_journal(staged: list[tuple[Path, Path]]) -> Path | None:
    """Record which temporary becomes which file, durably, in one folder's journal
    (``.NAME.PID.journal``). It counts only once complete (its last line is ``end``), so a
    kill while writing it leaves the old files, and a later save removes the rest."""
    folders = {_folder(target) for _tmp, target in staged}
    if len(folders) != 1:
        return None  # files in different folders: no single place to record them (not used so)
    folder = folders.pop()
    journal = folder / f".{staged[0][1].name}.{os.getpid()}.journal"
    lines = [f"{tmp.name}\t{target.name}" for tmp, target in staged] + [_JOURNAL_END]
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(folder)
    return journal


def finish_interrupted(folder: str | os.PathLike[str], names: tuple[str, ...] = ()) -> list[Path]:
    """Finish the saves of file pairs in ``folder`` whose process was killed between its renames
    (renaming the rest of the new files into place) and remove their leftovers, and those of
    killed saves of the files ``names``; returns the files put in place. Loading a pair calls
    this first, so a pair never loads half new. A folder that cannot be written is left as it
    is (the load then reports what it finds).
    """
    done: list[Path] = []
    root = Path(folder)
    for name in _left_by_dead(root, _JOURNAL_NAME):
        journal = root / name
        try:
            raw = read_state(journal)  # a pipe named like a journal would never answer
            if raw is None:
                continue
            lines = raw.decode("utf-8").splitlines()
            if lines and lines[-1] == _JOURNAL_END:
                for line in lines[:-1]:
                    tmp_name, _, target_name = line.partition("\t")
                    if "/" in tmp_name or "/" in target_name or not tmp_name.startswith("."):
                        continue  # not a journal of ours
                    if (root / tmp_name).exists():
                        os.replace(root / tmp_name, root / target_name)
                        done.append(root / target_name)
            os.unlink(journal)
            for line in lines[:-1]:
                clean_stale(root / line.partition("\t")[2])
        except (OSError, UnicodeDecodeError):
            continue
    for name in names:  # after the journals: the temporaries they name are what they put in place
        clean_stale(root / name)
    if done:
        _fsync_dir(root)
    return done


_JOURNAL_NAME = re.compile(r"^\.(.+)\.(?P<pid>\d+)\.journal$")


def _names_matching(folder: Path, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """The names in ``folder`` that ``pattern`` matches (none when it cannot be read)."""
    try:
        return [m for m in map(pattern.match, [e.name for e in os.scandir(folder)]) if m is not None]
    except OSError:
        return []


def _left_by_dead(folder: Path, pattern: re.Pattern[str]) -> list[str]:
    """The names in ``folder`` that ``pattern`` matches and whose process (group ``pid``) is gone."""
    return [m.string for m in _names_matching(folder, pattern) if not _alive(int(m["pid"]))]


def unfinished_saves(folder: str | os.PathLike[str], names: tuple[str, ...]) -> list[Path]:
    """The journals in ``folder`` of pair saves of the files ``names`` that are between their
    renames: still running, or killed and not finished by :func:`finish_interrupted` (the
    folder cannot be written). Those files may then be half old, half new."""
    root = Path(folder)
    out = []
    for name in (m.string for m in _names_matching(root, _JOURNAL_NAME)):
        try:
            raw = read_state(root / name)
            if raw is None:
                continue
            lines = raw.decode("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        if not lines or lines[-1] != _JOURNAL_END:
            continue  # written before any rename: the files are still the old ones
        staged = [line.partition("\t") for line in lines[:-1]]
        if any(target in names and (root / tmp).exists() for tmp, _, target in staged if "/" not in tmp):
            out.append(root / name)
    return out


MAX_STATE = 1 << 20  # a state file larger than this is not one of ours: ignored, and replaced on the next write


def read_state(path: Path, limit: int = MAX_STATE, *, follow_links: bool = True) -> bytes | None:
    """The bytes of one of bpeinspect's own files, or None when it is missing, not a regular file
    (a named pipe would never answer, ``/dev/zero`` never end), over ``limit``, a link while
    ``follow_links`` is false, or changed in size while it was read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == st.st_size else None


def _stale_name(target_name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(target_name)}\.(?P<pid>\d+)\.[0-9a-z_]+\.(?:tmp(?:\.\w+)?|old)$")


def clean_stale(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of earlier saves of ``target`` whose process is gone (killed
    mid-save); returns what was removed. Only names of this module's own making are touched:
    ``.NAME.PID.XXXX.tmp`` and ``.NAME.PID.N.old``, and only for a process id no longer running."""
    target = Path(target)
    folder = _folder(target)
    removed: list[Path] = []
    for name in _left_by_dead(folder, _stale_name(target.name)):
        with contextlib.suppress(OSError):
            if (folder / name).is_dir() and not (folder / name).is_symlink():
                shutil.rmtree(folder / name)  # a folder of atomic_folder's
            else:
                os.unlink(folder / name)
            removed.append(folder / name)
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (ours, or one we cannot signal)."""
    if pid == os.getpid() or os.name == "nt":  # Windows: os.kill(pid, 0) is no query there
        return True
    if pid <= 0 or pid > 1 << 22:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _folder(target: Path) -> Path:
    return target.parent if str(target.parent) else Path(".")


def _temp_beside(target: Path, suffix: str) -> tuple[int, Path]:
    """A new named temporary beside ``target``: ``.NAME.PID.XXXX.tmp`` (an exporter's
    ``suffix`` follows: ``.NAME.PID.XXXX.tmp.svg``)."""
    tail = ".tmp" if suffix == ".tmp" else ".tmp" + suffix
    for _ in range(100):
        tmp = _folder(target) / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{tail}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            continue
        return fd, tmp
    raise OSError(f"{target}: cannot make a temporary file beside it")


def _finish(tmp: Path, target: Path) -> None:
    """Make ``tmp``'s content durable and give it the mode ``target`` has or a new file gets
    (mkstemp's 0600 would surprise whoever shares the file)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.chmod(tmp, _mode_for(target))


def _mode_for(target: Path) -> int:
    """The mode ``target`` has, or the one a new file gets."""
    return target.stat().st_mode & 0o7777 if target.exists() else 0o666 & ~_umask()


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
