"""Counting pre-tokens: the one pass over the corpus that BPE training needs.

Training only ever looks at the table *distinct pre-token -> how often it occurs*, so the
corpus is read once, cut into pre-tokens by the split rule and counted. Big corpora are
counted in several processes. The table can be written to and read from a TSV file, so the
counting can also run elsewhere (a Spark, Dask or Ray job) and only the merging here.

>>> counts = count_pretokens(["hello hello world"], "gpt4")
>>> counts
{b'hello': 1, b' hello': 1, b' world': 1}

The table keeps the order in which pre-tokens were first seen; minbpe's tie-break needs it.

TSV format, one pre-token a line: ``count<TAB>pre-token``. The pre-token is its UTF-8 text
with ``\\`` written ``\\\\``, tab ``\\t``, newline ``\\n``, carriage return ``\\r``, other
control characters and DEL as ``\\xHH``, and any byte that is not part of valid UTF-8 as
``\\xHH``. Lines starting with ``#`` are comments; a pre-token listed twice has its counts
added (so several shards can simply be concatenated).

>>> escape_pretoken(b"a\\tb\\n\\xff")
'a\\\\tb\\\\n\\\\xff'
>>> unescape_pretoken(escape_pretoken(b"a\\tb\\n\\xff"))
b'a\\tb\\n\\xff'
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import regex

from bpeinspect.core.errors import CountsFileError
from bpeinspect.core.io.atomic import atomic_open
from bpeinspect.core.split.rules import PRESETS, SplitRule, cut_text, resolve_rule
from bpeinspect.core.text import fix_surrogates

__all__ = [
    "CountingProgress",
    "CountsFileError",
    "count_pretokens",
    "escape_pretoken",
    "iter_count_pretokens",
    "read_counts_tsv",
    "unescape_pretoken",
    "write_counts_tsv",
]

# Work is shipped to other processes in batches of about this many characters; below twice
# this much text counting stays in this process (starting workers costs ~0.1 s each).
BATCH_CHARS = 1 << 19


@dataclass(frozen=True)
class CountingProgress:
    """A report from the counting phase: how much of the corpus has been counted."""

    documents: int
    corpus_bytes: int  # UTF-8 bytes read so far (compare with ``corpus.corpus_size``)
    distinct: int
    elapsed: float


# -- splitting fast ---------------------------------------------------------------------------

def _splitter(rule: SplitRule) -> Callable[[str], list[str]]:
    """A ``findall`` for ``rule``, exact but faster than ``rule.pieces`` where we can be."""
    if rule.fast is not None:
        return rule.fast.findall
    if not rule.splits:
        return lambda text: [text] if text else []
    if rule.name in ("gpt4", "gpt2") and rule.pattern == PRESETS[rule.name].pattern:
        from bpeinspect.core.split.regex_tables import RegexTablesSplitter

        return RegexTablesSplitter(rule.pattern).findall
    return rule.pieces


def cuttable(rule: SplitRule) -> bool:
    return bool(rule.name) and rule.name in PRESETS and rule.splits == PRESETS[rule.name].splits


# -- counting ---------------------------------------------------------------------------------

def count_batch(pattern: str | None, texts: list[str]) -> dict[str, int]:
    """Worker: the pieces of ``texts`` counted, in first-seen order (runs in other processes)."""
    findall = _worker_splitter(pattern)
    counts: Counter[str] = Counter()
    update = counts.update
    for t in texts:
        update(findall(t))
    return counts


@functools.lru_cache(maxsize=4)
def _worker_splitter(pattern: str | None) -> Callable[[str], list[str]]:
    return _splitter(resolve_rule(pattern))


def _rule_spec(rule: SplitRule) -> str | None:
    """What to send a worker so it can rebuild ``rule``."""
    if rule.name in PRESETS and PRESETS[rule.name] == rule:
        return rule.name
    if rule.pattern is None:
        raise ValueError("multi-step split rules cannot be counted in other processes")
    return rule.pattern


def _batches(texts: Iterable[str], rule: SplitRule, stats: list[int]) -> Iterator[list[str]]:
    """Texts grouped into batches of about ``BATCH_CHARS``; long texts are cut when that is exact."""
    can_cut = cuttable(rule)
    batch: list[str] = []
    size = 0
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"the corpus must hold strings, not {type(t).__name__}")
        t = fix_surrogates(t)
        stats[0] += 1
        stats[1] += len(t) if t.isascii() else len(t.encode("utf-8"))
        parts = cut_text(t, BATCH_CHARS) if can_cut and len(t) > BATCH_CHARS else [t]
        for part in parts:
            batch.append(part)
            size += len(part)
            if size >= BATCH_CHARS:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def _can_spawn() -> bool:
    import sys

    return not getattr(sys, "frozen", False) and bool(sys.executable)


def iter_count_pretokens(
    texts: str | Iterable[str],
    pattern: str | SplitRule | None = "gpt4",
    *,
    processes: int | None = None,
    interval: float = 0.1,
) -> Iterator[CountingProgress | dict[bytes, int]]:
    """Count pre-tokens, yielding :class:`CountingProgress` reports and, last, the table.

    Stop early by no longer iterating. ``processes`` is how many processes may count
    (default: one per CPU, at most 8); corpora under a few megabytes are counted here.

    >>> *reports, table = iter_count_pretokens(["a b", "a b"])
    >>> table
    {b'a': 2, b' b': 2}
    """
    rule = resolve_rule(pattern)
    if isinstance(texts, str):
        texts = [texts]
    elif isinstance(texts, (bytes, bytearray)):
        raise TypeError("the corpus must be text (str), not bytes: decode it first")
    if processes is None:
        processes = min(os.cpu_count() or 1, 8)
    start = time.perf_counter()
    stats = [0, 0]  # documents, bytes
    total: Counter[str] = Counter()
    last = start
    batches = _batches(texts, rule, stats)
    first = next(batches, None)
    second = next(batches, None) if first is not None else None
    workers: list = []
    if second is not None and processes > 1 and rule.splits and _can_spawn():
        try:
            from bpeinspect.core.train.count_worker import Worker

            spec = _rule_spec(rule)
            workers = [Worker(spec) for _ in range(processes - 1)]
        except ValueError:  # a multi-step rule: count it here
            pass
    findall = _splitter(rule)
    # Each batch goes to an idle worker, or else is counted here, so nobody waits for a
    # worker still starting up. Results are merged in batch order ([worker, counts] slots,
    # oldest first), so the table keeps the corpus's first-seen order.
    pending: deque[list] = deque()
    done = False
    try:
        for batch in itertools.chain([b for b in (first, second) if b is not None], batches):
            idle = next((w for w in workers if not w.busy), None)
            if idle is not None:
                idle.wait()
                slot = [idle, None]
                pending.append(slot)
                idle.send(batch, slot)
            elif not pending:  # nothing is due first: count straight into the total
                for t in batch:
                    total.update(findall(t))
            else:
                counts: Counter[str] = Counter()
                for t in batch:
                    counts.update(findall(t))
                pending.append([None, counts])
            while pending and pending[0][1] is not None:
                _merge(pending.popleft()[1], total, findall)
            now = time.perf_counter()
            if now - last >= interval:
                last = now
                yield CountingProgress(stats[0], stats[1], len(total), now - start)
        for w in workers:
            w.wait()
        while pending:
            _merge(pending.popleft()[1], total, findall)
        done = True
    finally:
        for w in workers:
            w.close(abandoned=not done)
    yield CountingProgress(stats[0], stats[1], len(total), time.perf_counter() - start)
    yield {k.encode("utf-8"): v for k, v in total.items()}


def _merge(counts: dict[str, int] | list[str], total: Counter[str], findall: Callable[[str], list[str]]) -> None:
    if isinstance(counts, list):  # a worker failed on this batch: count it here
        for t in counts:
            total.update(findall(t))
    else:
        total.update(counts)


def count_pretokens(
    texts: str | Iterable[str],
    pattern: str | SplitRule | None = "gpt4",
    *,
    processes: int | None = None,
) -> dict[bytes, int]:
    """Each distinct pre-token of ``texts`` (one document, or an iterable of documents, each
    split on its own) with how often it occurs, in first-seen order.

    >>> count_pretokens(["ab ab", "ab"], pattern=None)
    {b'ab ab': 1, b'ab': 1}
    """
    result: dict[bytes, int] = {}
    for item in iter_count_pretokens(texts, pattern, processes=processes):
        if isinstance(item, dict):
            result = item
    return result


# -- TSV export and import --------------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r"[\x00-\x1f\x7f\\]")
_UNESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|[\\tnr])|\\")
_UNESCAPED = {b"\\": b"\\", b"t": b"\t", b"n": b"\n", b"r": b"\r"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return _ESCAPES.get(c) or f"\\x{ord(c):02x}"


def escape_pretoken(token: bytes) -> str:
    """The TSV form of a pre-token's bytes (see the module docstring)."""
    text = token.decode("utf-8", "surrogateescape")
    if _NEEDS_ESCAPE.search(text):
        text = _NEEDS_ESCAPE.sub(_escape_char, text)
    if not text.isascii():
        # Bytes that are not UTF-8 came through as lone surrogates U+DC80..U+DCFF.
        text = regex.sub(r"[\udc80-\udcff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", text)
    return text


def unescape_pretoken(field: str) -> bytes:
    """The bytes of a pre-token written by :func:`escape_pretoken`; raises ``ValueError``."""
    data = field.encode("utf-8")
    if b"\\" not in data:
        return data

    def repl(m: re.Match[bytes]) -> bytes:
        g = m.group(1)
        if g is None:
            raise ValueError(f"a backslash that starts no escape in {field!r} (write \\\\ for a backslash)")
        if len(g) == 3:
            return bytes([int(g[1:], 16)])
        return _UNESCAPED[g]

    return _UNESCAPE.sub(repl, data)


def write_counts_tsv(counts: dict[bytes, int], path: str | os.PathLike[str], *, comment: str = "") -> None:
    """Write the count table to ``path`` atomically (see :mod:`bpeinspect.core.io.atomic`).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "counts.tsv")
    >>> write_counts_tsv({b"hi": 3, b"\\tx": 1}, p)
    >>> read_counts_tsv(p)
    {b'hi': 3, b'\\tx': 1}
    """
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write("# bpeinspect pre-token counts: count<TAB>escaped pre-token\n")
        if comment:
            f.write("# " + comment.replace("\n", " ") + "\n")
        f.writelines(f"{n}\t{escape_pretoken(tok)}\n" for tok, n in counts.items())


def read_counts_tsv(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> dict[bytes, int]:
    """Read one or more count files (a folder means every file in it, sorted by name).

    Counts of a pre-token listed more than once are added. Raises :class:`CountsFileError`
    naming the file and line of anything malformed.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*") if q.is_file() and not q.name.startswith((".", "_"))))
        else:
            files.append(p)
    total: dict[bytes, int] = {}
    get = total.get
    for path in files:
        try:
            f = open(path, encoding="utf-8", newline="")  # noqa: SIM115
        except OSError as exc:
            raise CountsFileError(f"{path}: cannot read the count file: {exc.strerror or exc}") from None
        with f:
            lineno = 0
            try:
                for lineno, line in enumerate(f, 1):  # noqa: B007
                    line = line.rstrip("\r\n") if line.endswith("\n") else line
                    if not line or line.startswith("#"):
                        continue
                    n, sep, field = line.partition("\t")
                    if not sep or not n.isdigit():
                        raise ValueError("expected a count, a tab and a pre-token")
                    tok = unescape_pretoken(field)
                    if not tok:
                        raise ValueError("the pre-token is empty")
                    total[tok] = get(tok, 0) + int(n)
            except UnicodeDecodeError as exc:
                raise CountsFileError(f"{path}: not UTF-8 text (byte {exc.start} of a line)") from None
            except ValueError as exc:
                raise CountsFileError(f"{path}, line {lineno}: {exc}") from None
    return total
