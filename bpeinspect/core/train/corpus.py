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

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from bpeinspect.core import limits
from bpeinspect.core.errors import CorpusError
from bpeinspect.core.split.cuts import rule_can_cut, stream_cut
from bpeinspect.core.split.rules import SplitRule, resolve_rule
from bpeinspect.core.text import decode_utf8

__all__ = ["CorpusError", "corpus_files", "corpus_size", "iter_corpus"]

BLOCK_BYTES = 1 << 20


def corpus_files(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The files of ``paths``: files as given, folders searched recursively (sorted; hidden
    files and folders skipped). Raises :class:`CorpusError` for a path that does not exist.

    >>> corpus_files([])
    []
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = [
                q
                for q in p.rglob("*")
                if q.is_file() and not any(part.startswith(".") for part in q.relative_to(p).parts)
            ]
            out.extend(sorted(found))
        elif p.is_file():
            out.append(p)
        elif p.exists():  # a device (/dev/zero), a pipe, a socket: no end, or no size to show
            raise CorpusError(f"{p}: not a regular file or folder")
        else:
            raise CorpusError(f"{p}: no such file or folder")
    return out


def corpus_size(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> int:
    """Total size in bytes of the corpus files (for a progress bar)."""
    return sum(f.stat().st_size for f in corpus_files(paths))


def iter_corpus(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    pattern: str | SplitRule | None = None,
    *,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[str]:
    """The text of the corpus files, file by file (see the module docstring). Pass the
    ``pattern`` you train with to read big files in blocks: for the presets a file then
    splits exactly as it would whole. With ``None`` (or a custom pattern) files are read whole.

    Raises :class:`CorpusError` naming the file and byte offset of anything not UTF-8.
    """
    cuts = rule_can_cut(resolve_rule(pattern))
    for path in corpus_files(paths):
        yield from stream_cut(_decoded(path, block_bytes if cuts else None), size=block_bytes, cuts=cuts)


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
