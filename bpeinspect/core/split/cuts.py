"""Where a text may be cut so that its parts encode exactly as the whole: the one rule.

The *cut points* of a text lie at its newlines:

- before a newline that follows a letter or digit (tiktoken's Unicode tables, the Basic
  Multilingual Plane): ``"word|\\n"``;
- after a newline between two *solid* characters (white space under no definition in play,
  no lone surrogate), the second not ``/``: ``").\\n|next"``;
- where the parts are encoded with the one character after them (``lookahead=True``, as the
  live window encodes its segments), also after a newline before a solid character (not
  ``/``), whatever precedes it: ``".\\n\\n|next"``.

For every rule :func:`rule_can_cut` accepts (the built-in patterns, and any rule the fast
engine runs), a pre-token starts at a cut point, the pre-tokens before it end there however
the text goes on (or, in the third case, given the next character), and no pattern looks
behind. Only white space runs on over a newline (``\\s+(?!\\S)`` backtracks before a solid
character), the punctuation pre-tokens take the newlines after them (and ``/``, in o200k),
and a letter or digit never does. So the parts split, encode and count on their own exactly
as within the whole text. (A character assigned after tiktoken's tables, U+058B say, is no
letter to tiktoken, whose pattern then takes the newline after it into its piece: it is never
before a cut point of the first kind.)

Whether a tokenizer's text may be cut at all is :func:`can_cut`; :func:`stream_cut` is the one
loop that reads a text in chunks and hands it on in parts cut at cut points.

>>> cut_text("ab\\ncd\\nef", 2)
['ab', '\\ncd', '\\nef']
>>> "".join(stream_cut(["ab\\nc", "d\\nef"], size=2)) == "ab\\ncd\\nef"
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Protocol

from bpeinspect.core.split.patterns import PRESET_PATTERNS
from bpeinspect.core.split.unicode_tables import RANGES

__all__ = [
    "bmp_class_body",
    "can_cut",
    "cut_spans",
    "cut_text",
    "is_cut",
    "last_cut",
    "next_cut",
    "rule_can_cut",
    "stream_cut",
]


def bmp_class_body(names: tuple[str, ...], reps: str = "") -> str:
    """A class body with the BMP ranges of Unicode classes ``names`` (tiktoken's tables) and
    representatives ``reps``."""
    ranges = sorted((a, min(b, 0xFFFF)) for name in names for a, b in RANGES[name] if a <= 0xFFFF)
    out = [re.escape(chr(a)) if a == b else re.escape(chr(a)) + "-" + re.escape(chr(b)) for a, b in ranges]
    return "".join(out) + reps


_BEFORE_CUT = re.compile("[" + bmp_class_body(("Lu", "Lt", "Ll", "Lm", "Lo", "N")) + "]")
# white space under any definition in play (tiktoken's tables, Python's, and older Unicode's),
# lone surrogates, and "/" (o200k's punctuation pre-tokens run on over newlines and slashes)
_NOT_SOLID = re.compile(r"[\s" + bmp_class_body(("WS",)) + "\u180e\u200b\ufeff\ud800-\udfff/]")


class _Rule(Protocol):
    @property
    def pattern(self) -> str | None: ...

    @property
    def fast(self) -> object: ...

    @property
    def unicode(self) -> str: ...


class _Tokenizer(Protocol):
    @property
    def split_rule(self) -> _Rule: ...

    @property
    def normalizer(self) -> object: ...

    @property
    def byte_level(self) -> bool: ...

    @property
    def special_tokens(self) -> Mapping[str, int]: ...

    @property
    def added_tokens(self) -> Mapping[str, int]: ...


def rule_can_cut(rule: _Rule) -> bool:
    """Whether text split by ``rule`` may be cut at cut points: a built-in pattern (not run on
    llama.cpp's own Unicode tables, which may class a letter otherwise), or a rule the fast
    engine runs (it cuts at these points itself).

    >>> from bpeinspect.core.split.rules import resolve_rule
    >>> rule_can_cut(resolve_rule("gpt2")), rule_can_cut(resolve_rule(r"\\S+\\s*"))
    (True, False)
    """
    if rule.fast is not None:
        return True
    return rule.unicode != "llama" and rule.pattern is not None and rule.pattern in PRESET_PATTERNS.values()


def can_cut(tok: _Tokenizer) -> bool:
    """Whether ``tok`` encodes the parts of a text cut at cut points exactly as the whole: a
    byte-level tokenizer with no normalizer (it could rewrite across a cut), a rule that may be
    cut (:func:`rule_can_cut`), and no special or added token holding a newline (it could
    straddle a cut).

    >>> from bpeinspect.core import load_tokenizer
    >>> can_cut(load_tokenizer("cl100k_base"))
    True
    """
    if tok.normalizer is not None or not tok.byte_level or not rule_can_cut(tok.split_rule):
        return False
    return not any("\n" in s for s in (*tok.special_tokens, *tok.added_tokens))


def _after_newline(text: str, q: int, lookahead: bool) -> bool:
    """Whether ``q``, right after a newline, is a cut point (``text[q - 1] == "\\n"``)."""
    if q >= len(text) or _NOT_SOLID.match(text, q) is not None:
        return False
    return lookahead or (q >= 2 and text[q - 2] != "/" and _NOT_SOLID.match(text, q - 2) is None)


def is_cut(text: str, pos: int, *, lookahead: bool = False) -> bool:
    """Whether ``pos`` is a cut point of ``text`` (see the module docstring).

    >>> is_cut("ab\\ncd", 2), is_cut(").\\ncd", 2), is_cut(").\\ncd", 3), is_cut(".\\n\\ncd", 3)
    (True, False, True, False)
    >>> is_cut(".\\n\\ncd", 3, lookahead=True)
    True
    """
    if not 0 < pos < len(text):
        return False
    if text[pos] == "\n" and _BEFORE_CUT.match(text, pos - 1) is not None:
        return True
    return text[pos - 1] == "\n" and _after_newline(text, pos, lookahead)


def next_cut(text: str, pos: int = 0, end: int | None = None, *, lookahead: bool = False) -> int:
    """The first cut point ``q`` with ``pos <= q < end``, or -1 (``str.find`` on the newlines:
    a regex with a look-behind costs ~40 ns a character).

    >>> next_cut("ab\\n).\\nx\\n", 3), next_cut("ab\\n).\\n", 4), next_cut("ab\\n)\\n\\n", 4, lookahead=True)
    (3, -1, -1)
    """
    end = len(text) if end is None else end
    pos = max(pos, 1)
    before = _BEFORE_CUT.match
    k = pos - 2  # a newline at pos - 1 makes pos a cut point
    while (k := text.find("\n", max(k + 1, 0), end)) >= 0:
        if k >= pos and before(text, k - 1):
            return k
        if k + 1 < end and k + 1 >= pos and _after_newline(text, k + 1, lookahead):
            return k + 1
    return -1


def last_cut(text: str, start: int = 0, end: int | None = None, *, lookahead: bool = False) -> int:
    """The last cut point ``q`` with ``start <= q < end``, or -1.

    >>> last_cut("ab\\ncd\\nef"), last_cut("ab cd"), last_cut("ab\\ncd\\nef", 0, 5)
    (6, -1, 3)
    """
    end = len(text) if end is None else end
    start = max(start, 1)
    before = _BEFORE_CUT.match
    k = end
    while (k := text.rfind("\n", max(start - 1, 0), k)) >= 0:
        if k + 1 < end and k + 1 >= start and _after_newline(text, k + 1, lookahead):
            return k + 1
        if k >= start and before(text, k - 1):
            return k
    return -1


def cut_spans(text: str, size: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the parts of ``text`` cut at the first cut point ``size`` characters
    or more into each part (a part is longer where there is none; the whole text if it is not
    longer than ``size``).

    >>> list(cut_spans("ab\\ncd\\nef", 2))
    [(0, 2), (2, 5), (5, 8)]
    """
    start, n = 0, len(text)
    while n - start > size:
        q = next_cut(text, start + max(size, 1))
        if q < 0:
            break
        yield start, q
        start = q
    yield start, n


def cut_text(text: str, size: int) -> list[str]:
    """``text`` cut into parts of about ``size`` characters at cut points (see :func:`cut_spans`).

    >>> cut_text("no newline", 2)
    ['no newline']
    """
    if len(text) <= size:
        return [text]
    return [text[a:b] for a, b in cut_spans(text, size)]


def stream_cut(chunks: Iterable[str], *, size: int | Callable[[], int] = 0, cuts: bool = True) -> Iterator[str]:
    """The text of consecutive ``chunks`` again, in parts cut at cut points: a part ends at the
    last cut point of the chunk that brought it to ``size`` characters or more (``size`` may be
    a function, asked as the chunks come). With ``cuts`` false (see :func:`can_cut`) the whole
    text is one part. Empty parts are not yielded.

    Each chunk's newlines are looked at once, and the chunks held are joined once, when a part
    is handed on.

    >>> list(stream_cut(["a\\nb", "c\\n", "d\\ne"])), list(stream_cut(["a\\nb", "c\\nd"], cuts=False))
    (['a\\n', 'bc', '\\nd\\n', 'e'], ['a\\nbc\\nd'])
    """
    held: list[str] = []
    n = 0
    tail = ""  # the last two characters read
    for chunk in chunks:
        if not chunk:
            continue
        held.append(chunk)
        n += len(chunk)
        before, tail = tail, (tail + chunk)[-2:]  # cut points at the chunk's start look at them
        if not cuts or n < (size() if callable(size) else size):
            continue
        q = last_cut(before + chunk, len(before))
        if q < 0:
            continue
        q -= len(before)  # where in ``chunk`` (0: before it)
        yield "".join(held[:-1]) + chunk[:q]
        held, n = [chunk[q:]], len(chunk) - q
    if held:
        yield "".join(held)
