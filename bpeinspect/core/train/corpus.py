"""Training corpora on disk: files and folders streamed as text, one file at a time.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("hello world\\n", encoding="utf-8")
>>> list(iter_corpus(folder, "gpt4"))
['hello world\\n']

Each file is one document. Given the preset pattern you train with, a big file is read in
blocks cut where that pattern splits exactly as it would split the whole file (see
:mod:`bpeinspect.core.split.cuts`); otherwise a file is read whole. Bytes are kept as they
are (no newline translation), so ``\\r\\n`` trains as ``\\r\\n``.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bpeinspect.core import limits
from bpeinspect.core.errors import CorpusError
from bpeinspect.core.split.cuts import rule_can_cut, stream_cut
from bpeinspect.core.split.rules import SplitRule, resolve_rule
from bpeinspect.core.text import decode_utf8
from bpeinspect.core.train.filefilter import FileFilter, IgnoreStack

__all__ = [
    "BINARY",
    "FILTERED",
    "IGNORED",
    "CorpusError",
    "CorpusScan",
    "FileFilter",
    "corpus_files",
    "corpus_size",
    "is_binary_file",
    "iter_corpus",
    "scan_corpus",
    "skipped_counts",
    "sniff_file",
    "skipped_note",
]

BLOCK_BYTES = 1 << 20
SNIFF_BYTES = 8192  # a file in a folder whose first bytes hold a NUL or bad UTF-8 is binary
SKIPPED_FOLDERS = frozenset({"__pycache__"})
# why a file (or folder) of a folder was left out
BINARY = "binary"
IGNORED = "ignored by .gitignore"
FILTERED = "left out by the file filter"


def is_binary_file(path: str | os.PathLike[str]) -> bool:
    """True if the first :data:`SNIFF_BYTES` of ``path`` hold a NUL byte or are not UTF-8
    (a character cut at the end of the sniffed bytes is fine); an unreadable file counts as
    not binary, so reading it later reports why.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_bytes("h\\u00e9".encode())
    >>> _ = (d / "a.pyc").write_bytes(b"\\x00\\x01\\xff")
    >>> is_binary_file(d / "a.txt"), is_binary_file(d / "a.pyc")
    (False, True)
    """
    return sniff_file(path) is not None


def sniff_file(path: str | os.PathLike[str]) -> str | None:
    """Why a file of a folder is not text, from its first :data:`SNIFF_BYTES`: ``"binary"``
    if they hold a NUL byte, ``"not UTF-8 text (...)"`` if they do not decode (a Latin-1 file,
    say); None for text (and for an unreadable file, so reading it later reports why).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_bytes("caf\\u00e9".encode("latin-1"))
    >>> _ = (d / "a.pyc").write_bytes(b"\\x00\\x01\\xff")
    >>> sniff_file(d / "a.txt"), sniff_file(d / "a.pyc")
    ('not UTF-8 text (byte 0xe9 at offset 3)', 'binary')
    """
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return None
    if b"\0" in head:
        return BINARY
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head, final=len(head) < SNIFF_BYTES)
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte 0x{head[exc.start]:02x} at offset {exc.start})"
    return None


@dataclass
class CorpusScan:
    """The files a corpus's paths name, and the files of its folders that were left out."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # (file, why)
    named: set[Path] = field(default_factory=set, repr=False)  # the files given by name


def skipped_counts(skipped: list[tuple[Path, str]]) -> dict[str, int]:
    """How many were left out for each reason; the reasons that say why a file is not UTF-8
    count together as ``"not UTF-8 text"``.

    >>> skipped_counts([(Path("a.pyc"), BINARY), (Path("b"), IGNORED), (Path("c"), BINARY)])
    {'binary': 2, 'ignored by .gitignore': 1}
    """
    counts: dict[str, int] = dict.fromkeys((BINARY, IGNORED, FILTERED), 0)  # in this order first
    for _, why in skipped:
        kind = why.split(" (", 1)[0].split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return {kind: n for kind, n in counts.items() if n}


def skipped_note(skipped: list[tuple[Path, str]]) -> str:
    """One line on the files a run left out, naming the first, with the count of each reason
    when there are several.

    >>> skipped_note([(Path("a/b.txt"), "not UTF-8 text (byte 0xff at offset 9)")])
    'Skipped 1 file: b.txt (not UTF-8 text (byte 0xff at offset 9)).'
    >>> skipped_note([(Path("x.pyc"), "binary"), (Path("y.png"), "binary")])
    'Skipped 2 files: x.pyc (binary) and 1 more.'
    >>> skipped_note([(Path("x.pyc"), BINARY), (Path("build"), IGNORED), (Path("y.log"), IGNORED)])
    'Skipped 3 files (1 binary, 2 ignored by .gitignore): x.pyc (binary) and 2 more.'
    """
    if not skipped:
        return ""
    first, why = skipped[0]
    more = f" and {len(skipped) - 1:,} more" if len(skipped) > 1 else ""
    counts = skipped_counts(skipped)
    each = f" ({', '.join(f'{n:,} {kind}' for kind, n in counts.items())})" if len(counts) > 1 else ""
    plural = "s" if len(skipped) != 1 else ""
    name = first.name + ("/" if first.is_dir() else "")  # a folder left out whole
    return f"Skipped {len(skipped):,} file{plural}{each}: {name} ({why}){more}."


def scan_corpus(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    file_filter: FileFilter | None = None,
) -> CorpusScan:
    """The files of ``paths``: files as given, folders searched recursively (sorted). In a
    folder, hidden files and folders (``.git``, ``.venv``, ...) and ``__pycache__`` folders are
    not entered; what ``file_filter`` (default: :class:`FileFilter`'s, text files by name and
    the ``.gitignore`` files) leaves out and binary files (see :func:`is_binary_file`) are
    skipped and listed with the reason (:data:`FILTERED`, :data:`IGNORED`, :data:`BINARY`; a
    folder left out is listed once, its files are not searched). The ``.gitignore`` files
    that count are those of the folder and below, and, for a folder inside a git repository,
    those above it up to the repository's top and its ``.git/info/exclude`` (a folder that these
    ignore is still searched when given: it is the user's choice, as a file named one by one is).
    Raises :class:`CorpusError` for a path that does not exist.

    >>> scan_corpus([])
    CorpusScan(files=[], skipped=[])
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    wanted = file_filter if file_filter is not None else FileFilter()
    scan = CorpusScan()
    for p in map(Path, paths):
        if p.is_dir():
            scan.files.extend(_scan_folder(p, wanted, scan.skipped))
        elif p.is_file():
            scan.files.append(p)
            scan.named.add(p)
        elif p.exists():  # a device (/dev/zero), a pipe, a socket: no end, or no size to show
            raise CorpusError(f"{p}: not a regular file or folder")
        else:
            raise CorpusError(f"{p}: no such file or folder")
    return scan


def _scan_folder(top: Path, wanted: FileFilter, skipped: list[tuple[Path, str]]) -> list[Path]:
    """The files of the folder ``top`` that ``wanted`` keeps, sorted; the others go to ``skipped``."""
    found: list[Path] = []
    left_out: list[tuple[Path, str]] = []
    # the rules of the repository above the folder, its paths from the repository's top
    above, at = IgnoreStack.above(top) if wanted.gitignore else (IgnoreStack(), "")
    stacks: dict[str, IgnoreStack] = {"": above}
    for root, dirs, names in os.walk(top):
        here = Path(root)
        rel_dir = "" if here == top else here.relative_to(top).as_posix()
        stack = stacks.pop(rel_dir, IgnoreStack())
        if wanted.gitignore:
            stack = stack.entered(_joined(at, rel_dir), here)
        kept: list[str] = []
        for d in dirs:
            if d.startswith(".") or d in SKIPPED_FOLDERS:
                continue
            rel = f"{rel_dir}/{d}" if rel_dir else d
            why = _left_out(wanted, stack, rel, at, is_dir=True)
            if why:
                left_out.append((here / d, why))
                continue
            kept.append(d)
            stacks[rel] = stack
        dirs[:] = kept
        for name in names:
            q = here / name
            if name.startswith(".") or not q.is_file():
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            why = _left_out(wanted, stack, rel, at, is_dir=False)
            if why is None:
                why = sniff_file(q)
            if why:
                left_out.append((q, why))
            else:
                found.append(q)
    skipped.extend(sorted(left_out))
    return sorted(found)


def _joined(at: str, rel: str) -> str:
    return f"{at}/{rel}" if at and rel else at or rel


def _left_out(wanted: FileFilter, stack: IgnoreStack, rel: str, at: str, *, is_dir: bool) -> str | None:
    """Why the filter leaves the file or folder at ``rel`` (in the folder at ``at`` from the
    top of its repository) out, or ``None``."""
    if wanted.gitignore and stack.ignored(_joined(at, rel), is_dir):
        return IGNORED
    if wanted.excludes(rel, is_dir) or (not is_dir and not wanted.includes(rel)):
        return FILTERED
    return None


def corpus_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    file_filter: FileFilter | None = None,
) -> list[Path]:
    """The files :func:`scan_corpus` keeps.

    >>> corpus_files([])
    []
    """
    return scan_corpus(paths, file_filter).files


def corpus_size(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    file_filter: FileFilter | None = None,
) -> int:
    """Total size in bytes of the corpus files (for a progress bar)."""
    return sum(f.stat().st_size for f in corpus_files(paths, file_filter))


def iter_corpus(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    pattern: str | SplitRule | None = None,
    *,
    block_bytes: int = BLOCK_BYTES,
    skipped: list[tuple[Path, str]] | None = None,
    file_filter: FileFilter | None = None,
    scan: CorpusScan | None = None,
) -> Iterator[str]:
    """The text of the corpus files, file by file (see the module docstring). Pass the
    ``pattern`` you train with to read big files in blocks: for the presets a file then
    splits exactly as it would whole. With ``None`` (or a custom pattern) files are read whole.

    Raises :class:`CorpusError` naming the file and byte offset of anything not UTF-8, unless
    ``skipped`` is a list: then a file of a folder that is not UTF-8 text is checked whole before
    any of it is read (so none of it is trained on), left out, and added to the list with the
    reason. What a folder's scan leaves out (``file_filter``, binary files, see
    :func:`scan_corpus`) is added to it too. A file given by name is the user's choice: it is
    never skipped. ``scan`` is a :func:`scan_corpus` of ``paths`` already made (it is then not
    made again).
    """
    cuts = rule_can_cut(resolve_rule(pattern))
    if scan is None:
        scan = scan_corpus(paths, file_filter)
    if skipped is not None:
        skipped.extend(scan.skipped)
    for path in scan.files:
        if skipped is not None and path not in scan.named:
            why = _not_text(path)
            if why:
                skipped.append((path, why))
                continue
        yield from stream_cut(_decoded(path, block_bytes if cuts else None), size=block_bytes, cuts=cuts)


def _not_text(path: Path) -> str | None:
    """Why the file at ``path`` cannot be trained on (not UTF-8, unreadable), or ``None``."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    at = 0
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(BLOCK_BYTES), b""):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as exc:
                    held = len(exc.object) - len(block)  # bytes of a character begun in the last block
                    where = at - held + exc.start
                    return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {where})"
                at += len(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return "not UTF-8 text (the file ends inside a character)"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return None


def _decoded(path: Path, block_bytes: int | None) -> Iterator[str]:
    """The text of the file at ``path``, decoded ``block_bytes`` at a time (``None``: whole)."""
    try:
        f = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read: {exc.strerror or exc}") from None

    def blocks() -> Iterator[bytes]:
        if block_bytes is not None:
            yield from iter(lambda: f.read(block_bytes), b"")
            return
        # read whole (a custom pattern cannot be cut): as much as the CLI reads
        whole = limits.read_at_most(f, limits.MAX_INPUT)
        if len(whole) > limits.MAX_INPUT:
            raise CorpusError(
                f"{path}: more than {limits.human_size(limits.MAX_INPUT)}, read whole for a custom split pattern; "
                "split the file, or train with a preset pattern (read in blocks)"
            )
        yield whole

    def bad(at: int, byte: int) -> CorpusError:
        return CorpusError(f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {at} is not valid UTF-8)")

    with f:
        for text, _ in decode_utf8(blocks(), bad):
            yield text
