"""The built-in split patterns run fast, with the ``regex`` module's own Unicode tables.

``FastSplitter`` replaces every non-ASCII character by a representative of its class and runs
the standard ``re`` module on the copy; its classes come from tiktoken's tables (which are also
Hugging Face ``tokenizers``' tables: Unicode 15.1). minbpe runs its patterns with the installed
``regex`` module, whose tables are newer (Unicode 17 in ``regex`` 2025.x and later), so for
minbpe's results we ask the ``regex`` module itself which class a character is in (once per
distinct character).
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import regex

from bpeinspect.core.split.fast import FOLDED_S, LOWER, MARK, NUMBER, OTHER, OTHER_LETTER, SPACE, UPPER, FastSplitter

_CLASSES = [
    (regex.compile(r"[\p{Lu}\p{Lt}]"), UPPER),
    (regex.compile(r"\p{Ll}"), LOWER),
    (regex.compile(r"[\p{Lm}\p{Lo}]"), OTHER_LETTER),
    (regex.compile(r"\p{M}"), MARK),
    (regex.compile(r"\p{N}"), NUMBER),
    (regex.compile(r"\s"), SPACE),
]
_FOLDS_TO_S = regex.compile(r"(?i)s")
_NON_ASCII_RUN = regex.compile(r"[^\x00-\x7f]+")


class _RegexTable(dict):
    """A ``str.translate`` table filled in lazily from the ``regex`` module's answers."""

    def __init__(self, fold: bool) -> None:
        super().__init__()
        self._fold = fold

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        rep = next((r for rx, r in _CLASSES if rx.match(ch)), OTHER)
        if self._fold and rep == LOWER and _FOLDS_TO_S.match(ch):
            rep = FOLDED_S  # LATIN SMALL LETTER LONG S, which (?i) matches as "s" (the only one)
        self[cp] = rep
        return rep


class RegexTablesSplitter(FastSplitter):
    """``regex.findall(pattern, text)`` for the built-in patterns (which ask a character only
    for the classes of :data:`~bpeinspect.core.split.fast._CLASS_BODIES`, with ``\\p{Lu}`` and
    ``\\p{Lt}``, ``\\p{Lm}`` and ``\\p{Lo}`` always together), with the ``regex`` module's tables.

    >>> from bpeinspect.core.split.patterns import GPT4_PATTERN
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
