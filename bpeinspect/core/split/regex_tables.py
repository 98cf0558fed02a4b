"""minbpe's split patterns run fast, with the ``regex`` module's own Unicode tables.

``_fastsplit`` replaces every non-ASCII character by a representative of its class and runs
the standard ``re`` module on the copy; its classes come from tiktoken's tables. minbpe runs
its patterns with the ``regex`` module, whose tables are newer, so for those patterns we ask
the ``regex`` module itself which class a character is in (once per distinct character).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import regex

from bpeinspect.core.split.fast import LOWER, NUMBER, OTHER, SPACE, FastSplitter

_LETTER = regex.compile(r"\p{L}")
_NUMBER = regex.compile(r"\p{N}")
_SPACE = regex.compile(r"\s")
_FOLDS_TO_ASCII = regex.compile(r"(?i)[a-z]")
_NON_ASCII_RUN = regex.compile(r"[^\x00-\x7f]+")


class _RegexTable(dict):
    """A ``str.translate`` table filled in lazily from the ``regex`` module's answers."""

    def __init__(self, fold: bool) -> None:
        super().__init__()
        self._fold = fold

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if self._fold and _FOLDS_TO_ASCII.match(ch):
            # e.g. LATIN SMALL LETTER LONG S, which (?i) matches as "s"
            rep = next(c for c in "abcdefghijklmnopqrstuvwxyz" if regex.match(f"(?i){c}", ch))
        elif _LETTER.match(ch):
            rep = LOWER
        elif _NUMBER.match(ch):
            rep = NUMBER
        elif _SPACE.match(ch):
            rep = SPACE
        else:
            rep = OTHER
        self[cp] = rep
        return rep


class RegexTablesSplitter(FastSplitter):
    """``regex.findall(pattern, text)`` for patterns that only ask ``\\p{L}``, ``\\p{N}`` and
    ``\\s`` of non-ASCII characters (minbpe's GPT-2 and GPT-4 patterns).

    >>> from bpeinspect.core.split.rules import GPT4_PATTERN
    >>> RegexTablesSplitter(GPT4_PATTERN).findall("Ünïcode 12345 ſ's")
    ['Ünïcode', ' ', '123', '45', ' ſ', "'s"]
    """

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self._table = _RegexTable(fold="(?i" in pattern)

    def findall(self, text: str) -> list[str]:
        tt = self.translate(text)
        found = self._findall(tt)
        if tt is text:
            return found
        # Only the pieces that overlap a non-ASCII run differ from the text: slice just those
        # back out of the original instead of every piece.
        ends = list(accumulate(map(len, found)))
        for m in _NON_ASCII_RUN.finditer(text):
            for i in range(bisect_right(ends, m.start()), bisect_right(ends, m.end() - 1) + 1):
                found[i] = text[ends[i] - len(found[i]) : ends[i]]
        return found
