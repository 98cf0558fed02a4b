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
control characters and DEL as ``\\xHH``, any byte that is not part of valid UTF-8 as
``\\xHH``, and the C1 controls (U+0080-U+009F) and the line and paragraph separators
(U+2028, U+2029) as ``\\uHHHH``, so that no reader that splits lines the way
``str.splitlines`` does (at U+0085, U+2028, U+2029 too) ever breaks a line. Lines starting
with ``#`` are comments; a pre-token listed twice has its counts added (so several shards can
simply be concatenated); a count of 0 is text that is not in the corpus, and is skipped.

>>> escape_pretoken(b"a\\tb\\n\\xff")
'a\\\\tb\\\\n\\\\xff'
>>> unescape_pretoken(escape_pretoken(b"a\\tb\\n\\xff"))
b'a\\tb\\n\\xff'
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import regex

from bpeinspect.core.errors import CountsFileError
from bpeinspect.core.io.atomic import atomic_open
from bpeinspect.core.pool import ProcessPool
from bpeinspect.core.split.cuts import cut_text, rule_can_cut
from bpeinspect.core.split.fast import TiktokenSplitter
from bpeinspect.core.split.rules import PRESETS, SplitRule, compile_pattern, is_preset_pattern, resolve_rule
from bpeinspect.core.text import fix_surrogates

__all__ = [
    "CountingProgress",
    "CountsFileError",
    "count_pretokens",
    "counting_splitter",
    "escape_pretoken",
    "iter_count_pretokens",
    "read_counts_tsv",
    "unescape_pretoken",
    "write_counts_tsv",
]

# Work is shipped to other processes in batches of about this many characters; below twice
# this much text counting stays in this process (starting a child is slow).
BATCH_CHARS = 1 << 19


@dataclass(frozen=True)
class CountingProgress:
    """A report from the counting phase: how much of the corpus has been counted."""

    documents: int
    corpus_bytes: int  # UTF-8 bytes read so far (compare with ``corpus.corpus_size``)
    distinct: int
    elapsed: float


# -- splitting --------------------------------------------------------------------------------


def counting_splitter(
    pattern: str | SplitRule | None = "gpt4", tie_break: str = "first-seen"
) -> Callable[[str], list[str]]:
    """The pre-tokens training counts in one document, as the trainer it follows makes them.

    * ``"first-seen"`` (minbpe): ``regex.findall(pattern, text)`` with the installed ``regex``
      module, exactly as minbpe's ``RegexTokenizer`` does: text between matches is dropped,
      and with one capture group the group is what counts.
    * ``"hf"`` (Hugging Face): the pattern's ``Split`` with the ``isolated`` behaviour, so the
      text between matches becomes pieces too, and the built-in patterns run with Hugging
      Face's Unicode tables (15.1, the same as tiktoken's), not the ``regex`` module's.

    Both are fast for the built-in patterns however they are given (a preset name or the
    pattern itself). Count documents with this in any job (a Spark or Ray map, say) and the
    table is the one local counting makes.

    >>> counting_splitter(r"\\p{L}+")("ab  cd!")
    ['ab', 'cd']
    >>> counting_splitter(r"\\p{L}+", "hf")("ab  cd!")
    ['ab', '  ', 'cd', '!']
    """
    return _counting_splitter(resolve_rule(pattern), tie_break)


@functools.lru_cache(maxsize=16)
def _counting_splitter(rule: SplitRule, tie_break: str) -> Callable[[str], list[str]]:
    if not rule.splits:
        return lambda text: [text] if text else []
    pattern = rule.pattern
    if pattern is None:  # several steps (from a tokenizer.json): Hugging Face's semantics
        return rule.pieces
    if is_preset_pattern(rule):
        if tie_break == "hf":
            if isinstance(rule.fast, TiktokenSplitter):
                return rule.fast.findall
            return TiktokenSplitter(pattern).findall
        from bpeinspect.core.split.regex_tables import RegexTablesSplitter

        return RegexTablesSplitter(pattern).findall
    if tie_break == "hf":  # Hugging Face's Split: gaps are pieces too, and its Unicode tables
        return rule.with_hf_unicode().pieces
    check_counting_pattern(rule, tie_break)
    findall = compile_pattern(pattern).findall
    return lambda text: [p for p in findall(text) if p]


def check_counting_pattern(rule: SplitRule, tie_break: str) -> None:
    """Raise ``ValueError`` for a pattern minbpe cannot train with: with several capture groups,
    ``regex.findall`` returns tuples, which minbpe's training fails on."""
    if tie_break == "hf" or rule.pattern is None or is_preset_pattern(rule):
        return
    groups = compile_pattern(rule.pattern).groups
    if groups > 1:
        raise ValueError(
            f"the pattern has {groups} capture groups: minbpe's regex.findall then gives tuples, which it cannot "
            "train on; make them non-capturing, (?:...), or use tie_break='hf'"
        )


# -- counting ---------------------------------------------------------------------------------


def count_batch(context: tuple[str | SplitRule | None, str], texts: list[str]) -> Counter[str]:
    """Pool task: the pieces of ``texts`` counted, in first-seen order; ``context`` is
    ``(rule or preset name, tie_break)``."""
    spec, tie_break = context
    findall = counting_splitter(spec, tie_break)
    counts: Counter[str] = Counter()
    update = counts.update
    for t in texts:
        update(findall(t))
    return counts


def _rule_spec(rule: SplitRule) -> str | SplitRule:
    """What to send a child so it can rebuild ``rule`` (a preset by its name)."""
    return rule.name if rule.name in PRESETS and PRESETS[rule.name] == rule else rule


def _batches(texts: Iterable[str], rule: SplitRule, stats: list[int]) -> Iterator[list[str]]:
    """Texts grouped into batches of about ``BATCH_CHARS``; long texts are cut when that is exact."""
    can_cut = rule_can_cut(rule)
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


def iter_count_pretokens(
    texts: str | Iterable[str],
    pattern: str | SplitRule | None = "gpt4",
    *,
    tie_break: str = "first-seen",
    processes: int | None = None,
    interval: float = 0.1,
) -> Iterator[CountingProgress | dict[bytes, int]]:
    """Count pre-tokens, yielding :class:`CountingProgress` reports and, last, the table.

    Pre-tokens are what :func:`counting_splitter` makes for ``tie_break``. Stop early by no
    longer iterating. ``processes`` is how many processes may count (a
    :class:`~bpeinspect.core.pool.ProcessPool`; default: one per CPU, at most 8); corpora
    under a megabyte are counted here.

    >>> *reports, table = iter_count_pretokens(["a b", "a b"])
    >>> table
    {b'a': 2, b' b': 2}
    """
    rule = resolve_rule(pattern)
    check_counting_pattern(rule, tie_break)
    if isinstance(texts, str):
        texts = [texts]
    elif isinstance(texts, (bytes, bytearray)):
        raise TypeError("the corpus must be text (str), not bytes: decode it first")
    start = time.perf_counter()
    stats = [0, 0]  # documents, bytes
    total: Counter[str] = Counter()
    last = start
    batches = _batches(texts, rule, stats)
    if not rule.splits:
        processes = 1  # nothing to split: counting is a dict update
    with ProcessPool(processes) as pool:
        # results come in batch order, so the table keeps the corpus's first-seen order
        for counts in pool.imap(count_batch, batches, context=(_rule_spec(rule), tie_break)):
            if total:
                total.update(counts)
            else:
                total = counts
            now = time.perf_counter()
            if now - last >= interval:
                last = now
                yield CountingProgress(stats[0], stats[1], len(total), now - start)
    yield CountingProgress(stats[0], stats[1], len(total), time.perf_counter() - start)
    yield {k.encode("utf-8"): v for k, v in total.items()}


def count_pretokens(
    texts: str | Iterable[str],
    pattern: str | SplitRule | None = "gpt4",
    *,
    tie_break: str = "first-seen",
    processes: int | None = None,
) -> dict[bytes, int]:
    """Each distinct pre-token of ``texts`` (one document, or an iterable of documents, each
    split on its own) with how often it occurs, in first-seen order.

    >>> count_pretokens(["ab ab", "ab"], pattern=None)
    {b'ab ab': 1, b'ab': 1}
    """
    result: dict[bytes, int] = {}
    for item in iter_count_pretokens(texts, pattern, tie_break=tie_break, processes=processes):
        if isinstance(item, dict):
            result = item
    return result


# -- TSV export and import --------------------------------------------------------------------

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r"[\x00-\x1f\x7f\\]")
_NEEDS_U_ESCAPE = re.compile("[\x80-\x9f\u2028\u2029]")
_UNESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[\\tnr])|\\")
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
        if _NEEDS_U_ESCAPE.search(text):
            text = _NEEDS_U_ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
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
        if len(g) == 5:
            return chr(int(g[1:], 16)).encode("utf-8", "surrogatepass")
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
                    if n.strip("0"):  # a count of 0: text that is not in the corpus
                        total[tok] = get(tok, 0) + int(n)
            except UnicodeDecodeError as exc:
                raise CountsFileError(f"{path}: not UTF-8 text (byte {exc.start} of a line)") from None
            except ValueError as exc:
                raise CountsFileError(f"{path}, line {lineno}: {exc}") from None
    return total
