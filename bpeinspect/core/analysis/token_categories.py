"""What a token is made of, as one label (:func:`token_category`): its script, or whitespace,
digits, code punctuation, a piece of a character. Vocabularies are compared by these categories
(:mod:`~bpeinspect.core.analysis.vocab_diff`), and so are the tokens a corpus leaves unused
(:mod:`~bpeinspect.core.analysis.vocab_use`). A vocabulary's 200k tokens take about a second of
Python: a process pool's child can sort them and send back a byte per token.

>>> category_codes([b" the", b"42", "日本".encode()])
(['Latin', 'digits', 'Han'], b'\\x00\\x01\\x02')
"""

from __future__ import annotations

import itertools
import string
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from bpeinspect.core.errors import Cancelled
from bpeinspect.core.scripts import NO_SCRIPT, char_script

if TYPE_CHECKING:
    from bpeinspect.core.pool import ProcessPool

ShouldStop = Callable[[], bool] | None
K = TypeVar("K")

# The categories of a token that are not a script (see token_category), in the order shown.
PARTIAL = "partial UTF-8"  # not whole UTF-8: a piece of a character
WHITESPACE = "whitespace"  # spaces, tabs, newlines only
DIGITS = "digits"  # decimal digits, with spaces around allowed
CODE_PUNCTUATION = "code punctuation"  # ASCII punctuation and symbols ({, ;, ->, ==...)
MIXED = "mixed scripts"  # letters of more than one script
NO_SCRIPT_LABEL = "other symbols"  # none of the above and no letters: emoji, other punctuation, marks
CATEGORIES_FIRST: tuple[str, ...] = (PARTIAL, WHITESPACE, DIGITS, CODE_PUNCTUATION)
CATEGORIES_LAST: tuple[str, ...] = (MIXED, NO_SCRIPT_LABEL)
_ASCII_PUNCTUATION = frozenset(string.punctuation)
# tokens between two should_stop checks (a millisecond or two of work: at each, a worker gives way
# to a window whose GUI thread is busy, see bpeinspect.gui.concurrency.give_way)
CHECK_EVERY = 2048
FAR_CHUNK = 1 << 15  # tokens a child sorts into categories at a time (see sort_into_categories)


def token_category(token: bytes) -> str:
    """What one token is made of, as a single label for composition charts: ``partial UTF-8``,
    ``whitespace``, ``digits``, ``code punctuation``, the script of its letters (the Unicode
    Script property), ``mixed scripts``, or ``other symbols``. Spaces around digits and
    punctuation are allowed (`` 2024``, ``();\\n``); a token of spaces alone is ``whitespace``.

    >>> [token_category(t) for t in (b" the", b"\\n\\n", b" 2024", b"();", "日本".encode(), b"\\xe6\\x97")]
    ['Latin', 'whitespace', 'digits', 'code punctuation', 'Han', 'partial UTF-8']
    >>> token_category("ab\u0436".encode()), token_category("\u2014".encode()), token_category(b"a1")
    ('mixed scripts', 'other symbols', 'Latin')
    """
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return PARTIAL
    core = text.strip()
    if not core:
        return WHITESPACE
    if core.isdecimal():
        return DIGITS
    if core.isascii():
        if all(ch in _ASCII_PUNCTUATION for ch in core):
            return CODE_PUNCTUATION
        if any(ch.isalpha() for ch in core):
            return "Latin"
        return NO_SCRIPT_LABEL  # ASCII letters absent: digits mixed with punctuation, say
    found = None
    for ch in core:
        s = char_script(ch)
        if s in NO_SCRIPT or s == found:
            continue
        if found is not None:
            return MIXED
        found = s
    return found or NO_SCRIPT_LABEL


def sort_into_categories(
    tokens: list[bytes], should_stop: ShouldStop = None, pool: ProcessPool | None = None
) -> tuple[dict[bytes, str], Counter[str]]:
    """Each token's :func:`token_category`, and how many tokens each category has.

    With ``pool``, its children work them out (see :func:`_category_codes`): here only C loops
    run, a slice at a time, so a window's thread is not kept waiting for the interpreter (done
    here if no child can start). ``should_stop`` is asked every :data:`CHECK_EVERY` tokens."""
    categories: dict[bytes, str] = {}
    comp: Counter[str] = Counter()
    if pool is None:
        for n, t in enumerate(tokens):
            if not n % CHECK_EVERY:
                _check(should_stop)
            categories[t] = token_category(t)
        comp.update(categories[t] for t in tokens)
        return categories, comp
    chunks = [tokens[at : at + FAR_CHUNK] for at in range(0, len(tokens), FAR_CHUNK)]
    answers = pool.imap(_category_codes, (_packed(chunk) for chunk in chunks), here=False)
    try:
        for chunk, (labels, codes) in zip(chunks, answers):
            put_categories(categories, chunk, labels, codes, should_stop)
            comp.update({labels[c]: n for c, n in Counter(codes).items()})
    finally:
        answers.close()
    return categories, comp


def _packed(tokens: list[bytes]) -> tuple[bytes, bytes]:
    """``tokens`` as two flat strings, quick to send: their bytes one after another, and their
    lengths as 32-bit integers."""
    return b"".join(tokens), array("I", map(len, tokens)).tobytes()


def _category_codes(_context: object, item: tuple[bytes, bytes]) -> tuple[list[str], bytes]:
    """In a child: :func:`category_codes` of a :func:`_packed` list of tokens."""
    joined, raw = item
    lengths = array("I")
    lengths.frombytes(raw)
    ends = itertools.accumulate(lengths)
    return category_codes(joined[end - n : end] for n, end in zip(lengths, ends))


def category_codes(tokens: Iterable[bytes]) -> tuple[list[str], bytes]:
    """The :func:`token_category` of each token, as the labels met and one byte per token, its
    label's index: a few bytes to send from a child process for each token.

    >>> category_codes([b" the", b"42", b" and"])
    (['Latin', 'digits'], b'\\x00\\x01\\x00')
    """
    labels: dict[str, int] = {}
    codes = bytes(labels.setdefault(token_category(t), len(labels)) for t in tokens)
    return list(labels), codes


def put_categories(
    into: dict[K, str], keys: Sequence[K], labels: list[str], codes: bytes, should_stop: ShouldStop = None
) -> None:
    """``into[keys[i]] = labels[codes[i]]`` for each key (:func:`category_codes` read back), a
    slice at a time: one C call over 200k keys would hold the interpreter for tens of ms."""
    for at in range(0, len(keys), CHECK_EVERY):
        _check(should_stop)
        into.update(zip(keys[at : at + CHECK_EVERY], map(labels.__getitem__, codes[at : at + CHECK_EVERY])))


def _check(should_stop: ShouldStop) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled()
