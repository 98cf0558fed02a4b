"""Faster, exact engines for the built-in split patterns.

The ``regex`` module spends most of its time testing Unicode properties. The built-in
patterns only ever ask a handful of questions of a character (is it a letter, upper or
lower case, a mark, a number, white space?), so they can run on the standard library's
``re`` (which has possessive quantifiers since Python 3.11), whose character classes are
cheap, with the Unicode classes spelled out:

* :class:`TiktokenSplitter` (the tiktoken presets) writes each class out as explicit
  ranges of the Basic Multilingual Plane, which ``re`` compiles into a constant-time
  bitmap, and runs on the text itself. Only characters beyond the BMP (emoji, historic
  scripts) are first replaced by a representative of their class, because ``re`` would
  test those against a long list of ranges.
* :class:`FastSplitter` replaces every non-ASCII character by one representative Latin-1
  control character per class and runs ``re`` on that copy (used with other tables).

A copy has the same length as the text, so its matches give the original pieces by
position.

The character classes come from ``_unicode_tables``, which is generated from tiktoken
itself, so this engine agrees with tiktoken even where the ``regex`` module's newer Unicode
tables would not.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate, compress, count
from operator import not_

import numpy as np
import regex

from bpeinspect.core.split.cuts import bmp_class_body, last_cut, next_cut
from bpeinspect.core.split.unicode_tables import FOLDS, RANGES

# Representatives: one Latin-1 C1 control character per class. Real C1 characters in the
# text are themselves non-ASCII and are translated like everything else.
UPPER = "\x80"  # Lu, Lt
LOWER = "\x81"  # Ll
OTHER_LETTER = "\x82"  # Lm, Lo
MARK = "\x83"  # M
NUMBER = "\x84"  # N
SPACE = "\x86"  # White_Space
OTHER = "\x87"  # everything else
FOLDED_S = "\x88"  # Ll that matches "s" case-insensitively (U+017F LATIN SMALL LETTER LONG S)
_FOLD_REPS = {"s": FOLDED_S}

_CLASS_OF = {
    "Lu": UPPER,
    "Lt": UPPER,
    "Ll": LOWER,
    "Lm": OTHER_LETTER,
    "Lo": OTHER_LETTER,
    "M": MARK,
    "N": NUMBER,
    "WS": SPACE,
}

_bounds: list[tuple[int, int, str]] = sorted(
    (a, b, _CLASS_OF[name]) for name, ranges in RANGES.items() for a, b in ranges
)
_STARTS = [a for a, _, _ in _bounds]


def char_class(cp: int) -> str:
    """The representative of code point ``cp`` (``cp`` must be non-ASCII)."""
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i >= 0 and _bounds[i][1] >= cp:
        return _bounds[i][2]
    return OTHER


class _Table(dict):
    """A ``str.translate`` table filled in lazily, one code point at a time."""

    def __init__(self, fold: bool) -> None:
        super().__init__()
        self._fold = fold

    def __missing__(self, cp: int) -> str:
        rep = _FOLD_REPS[FOLDS[cp]] if self._fold and cp in FOLDS else char_class(cp)
        self[cp] = rep
        return rep


# The escapes of the built-in patterns, as classes over the translated text; each is a
# class *body* (what goes between brackets).
_L = "A-Za-z" + UPPER + LOWER + OTHER_LETTER + FOLDED_S
_CLASS_BODIES = {
    r"\p{L}": _L,
    r"\p{Lu}": "A-Z" + UPPER,
    r"\p{Lt}": UPPER,
    r"\p{Ll}": "a-z" + LOWER + FOLDED_S,
    r"\p{Lm}": OTHER_LETTER,
    r"\p{Lo}": OTHER_LETTER,
    r"\p{M}": MARK,
    r"\p{N}": "0-9" + NUMBER,
    r"\s": "\t\n\x0b\x0c\r " + SPACE,
}


def translate_pattern(pattern: str, fold: bool = False, bodies: dict[str, str] | None = None) -> str:
    """Rewrite a built-in pattern to run on translated text with the ``re`` module.

    With ``fold`` (patterns whose letters are all in case-insensitive groups), a literal
    letter also matches the representative of the non-ASCII letters that fold to it.
    ``bodies`` replaces the class bodies of the escapes (default: the Latin-1 representatives).
    """
    bodies = _CLASS_BODIES if bodies is None else bodies
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith(r"\p{", i):
                j = pattern.index("}", i)
                esc = pattern[i : j + 1]
                i = j + 1
            else:
                esc = pattern[i : i + 2]
                i += 2
            if esc == r"\S":
                out.append("[^" + bodies[r"\s"] + "]")
            elif esc in bodies:
                body = bodies[esc]
                out.append(body if in_class else "[" + body + "]")
            elif esc in (r"\r", r"\n", r"\t"):
                out.append(esc)
            else:
                raise ValueError(f"unsupported escape {esc!r} for the fast splitter")
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        elif c == "$" and not in_class:
            c = r"\Z"  # tiktoken's engine: end of text only, not before a final newline
        elif fold and c in _FOLD_REPS:
            c = c + _FOLD_REPS[c] if in_class else "[" + c + _FOLD_REPS[c] + "]"
        out.append(c)
        i += 1
    return "".join(out)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def originals(text: str, translated: list[str]) -> list[str]:
    """The pieces of ``text`` given the pieces of its class-translated copy (same lengths).

    A translated piece that is ASCII is its own original; only the others are sliced out
    of ``text``, so mostly-ASCII text pays for its few non-ASCII pieces only.
    """
    bounds = list(accumulate(map(len, translated), initial=0))
    for i in compress(count(), map(not_, map(str.isascii, translated))):
        translated[i] = text[bounds[i] : bounds[i + 1]]
    return translated


class FastSplitter:
    """Split text like ``regex.findall(pattern, text)`` with tiktoken's Unicode tables.

    >>> FastSplitter(r"\\p{L}+|\\p{N}+|\\s+|[^\\s\\p{L}\\p{N}]+").findall("héllo 42")
    ['héllo', ' ', '42']
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        # In the case-insensitive built-ins, LATIN SMALL LETTER LONG S counts as "s".
        fold = "(?i" in pattern
        self._findall = re.compile(translate_pattern(pattern, fold)).findall
        self._table: dict = _Table(fold)  # a subclass may fill another kind

    def translate(self, text: str) -> str:
        """The class-representative copy of ``text`` (``text`` itself when it is ASCII)."""
        if text.isascii():
            return text
        table = self._table
        return _NON_ASCII.sub(lambda m: m.group().translate(table), text)

    def findall(self, text: str) -> list[str]:
        """The pieces of ``text``. The built-in patterns match every character, so they tile it."""
        tt = self.translate(text)
        found = self._findall(tt)
        return found if tt is text else originals(text, found)


# -- the direct engine ----------------------------------------------------------------------

# Representatives of the characters beyond the BMP: lone surrogates, which no text that
# reaches a tokenizer holds (tiktoken's fix-up turns them into U+FFFD). Any lone surrogate
# that does occur is itself replaced, by the representative of "other".
_D_REPS = {
    UPPER: "\ud800",
    LOWER: "\ud801",
    OTHER_LETTER: "\ud802",
    MARK: "\ud803",
    NUMBER: "\ud804",
    SPACE: "\ud805",
    OTHER: "\ud806",
}
# (two single-range searches are each much faster than one search for the union)
_ASTRAL = regex.compile(r"[\U00010000-\U0010ffff]")
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# Runs of characters that need a representative, taken whole across the joiners of emoji
# sequences and spaces (kept as they are): a row of ZWJ emoji is one run, not one per emoji.
_JOINERS = "\u200d\ufe0e\ufe0f "
_ASTRAL_RUN = regex.compile(r"[\U00010000-\U0010ffff](?:[\u200d\ufe0e\ufe0f ]*[\U00010000-\U0010ffff])*")
_NEEDS_REP_RUN = regex.compile(
    r"[\ud800-\udfff\U00010000-\U0010ffff](?:[\u200d\ufe0e\ufe0f ]*[\ud800-\udfff\U00010000-\U0010ffff])*"
)


def _needs_reps(text: str) -> bool:
    return not text.isascii() and (_ASTRAL.search(text) is not None or _SURROGATE.search(text) is not None)


_DIRECT_BODIES = {
    r"\p{L}": bmp_class_body(("Lu", "Lt", "Ll", "Lm", "Lo"), _D_REPS[UPPER] + _D_REPS[LOWER] + _D_REPS[OTHER_LETTER]),
    r"\p{Lu}": bmp_class_body(("Lu",), _D_REPS[UPPER]),
    r"\p{Lt}": bmp_class_body(("Lt",), _D_REPS[UPPER]),
    r"\p{Ll}": bmp_class_body(("Ll",), _D_REPS[LOWER]),
    r"\p{Lm}": bmp_class_body(("Lm",), _D_REPS[OTHER_LETTER]),
    r"\p{Lo}": bmp_class_body(("Lo",), _D_REPS[OTHER_LETTER]),
    r"\p{M}": bmp_class_body(("M",), _D_REPS[MARK]),
    r"\p{N}": bmp_class_body(("N",), _D_REPS[NUMBER]),
    r"\s": bmp_class_body(("WS",), _D_REPS[SPACE]),
}


class _AstralTable(dict):
    """``str.translate`` table for the characters that need a representative, filled lazily
    (the joiners inside a run stay as they are)."""

    def __init__(self) -> None:
        super().__init__((ord(c), ord(c)) for c in _JOINERS)

    def __missing__(self, cp: int) -> str:
        rep = _D_REPS[OTHER] if 0xD800 <= cp <= 0xDFFF else _D_REPS[char_class(cp)]
        self[cp] = rep
        return rep


# Exact rewrites that ``re`` runs faster: an optional group is a general repeat in ``re``,
# while a branch with an empty alternative rejects at its first literal ("'"). About 10 %
# of o200k's split.
_REWRITES = {"(?i:'s|'t|'re|'ve|'m|'ll|'d)?": "(?:'(?i:[sdmt]|ll|ve|re)|)"}


def _rewrite(pattern: str) -> str:
    for old, new in _REWRITES.items():
        pattern = pattern.replace(old, new)
    return pattern


class TiktokenSplitter(FastSplitter):
    """``regex.findall(pattern, text)`` for the tiktoken presets, with tiktoken's tables.

    The standard library's case-insensitive matching folds exactly the characters that
    tiktoken's does onto the contraction letters (LATIN SMALL LETTER LONG S onto "s"; a test
    checks every code point), so contractions need no representative.

    >>> TiktokenSplitter(r"\\p{L}+|\\p{N}+|\\s+|[^\\s\\p{L}\\p{N}]+").findall("héllo 42 🙂!")
    ['héllo', ' ', '42', ' ', '🙂!']
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None  # compiled on first use: compiling is slow
        self._table = _AstralTable()

    def prepare(self) -> None:
        """Compile the pattern now (the tokenizer does it when built, i.e. in a loading worker)."""
        if self._compiled is None:
            self._compiled = re.compile(translate_pattern(_rewrite(self.pattern), bodies=_DIRECT_BODIES))

    @property
    def _findall(self):
        if self._compiled is None:
            self.prepare()
        return self._compiled.findall

    def translate(self, text: str) -> str:
        """``text`` with representatives for the characters beyond the BMP (``text`` itself if none)."""
        return self._translate_runs(text)[0] if _needs_reps(text) else text

    def _translate_runs(self, text: str) -> tuple[str, list[tuple[int, int]]]:
        parts: list[str] = []
        runs: list[tuple[int, int]] = []
        pos = 0
        table = self._table
        runs_of = _NEEDS_REP_RUN if _SURROGATE.search(text) is not None else _ASTRAL_RUN
        for m in runs_of.finditer(text):
            a, b = m.span()
            parts.append(text[pos:a])
            parts.append(m.group().translate(table))
            runs.append((a, b))
            pos = b
        parts.append(text[pos:])
        return "".join(parts), runs

    def _translate_all(self, text: str) -> str:
        # one translate of the whole text with a table of just the characters it holds (found
        # by numpy over UTF-32): for texts where they are many (rows of emoji), which a run at
        # a time would cost a few microseconds each
        cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
        distinct = np.unique(cp[(cp >= 0x10000) | ((cp >= 0xD800) & (cp <= 0xDFFF))]).tolist()
        table = self._table
        return text.translate({c: table[c] for c in distinct})

    def findall(self, text: str) -> list[str]:
        if not _needs_reps(text):
            return self._findall(text)
        if (len(text.encode("utf-16-le", "surrogatepass")) // 2 - len(text)) * 32 > len(text):
            # dense: translate everything, then every piece is a slice of the text
            found = self._findall(self._translate_all(text))
            bounds = list(accumulate(map(len, found), initial=0))
            return list(map(text.__getitem__, map(slice, bounds, bounds[1:])))
        # sparse: the text between cut points around the runs is split as it is, and only the
        # stretches that hold runs are translated (a copy of the whole text, and finding the
        # pieces of the runs in it, cost a third of the split)
        findall, out = self._findall, []
        start = end = 0  # split up to ``start``; [start, end) holds runs, still to split
        for m in (_NEEDS_REP_RUN if _SURROGATE.search(text) is not None else _ASTRAL_RUN).finditer(text):
            a, b = m.span()
            if a < end:
                continue
            cut = last_cut(text, end, a)
            if cut > 0:
                out += self._findall_translated(text[start:end])
                out += findall(text[end:cut])
                start = cut
            end = next_cut(text, b)  # the searches look at each newline once at most
            end = len(text) if end < 0 else end
        if end:
            out += self._findall_translated(text[start:end])
        out += findall(text[end:])
        return out

    def _findall_translated(self, text: str) -> list[str]:
        """The pieces of ``text`` split on its copy with representatives (runs are few)."""
        tt, runs = self._translate_runs(text)
        found = self._findall(tt)
        # only the pieces that hold a replaced character are sliced out of the text again
        bounds = list(accumulate(map(len, found), initial=0))
        for a, b in runs:
            for k in range(bisect.bisect_right(bounds, a) - 1, bisect.bisect_left(bounds, b)):
                found[k] = text[bounds[k] : bounds[k + 1]]
        return found
