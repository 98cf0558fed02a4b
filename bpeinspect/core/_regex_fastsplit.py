"""minbpe's split patterns run fast, with the ``regex`` module's own Unicode tables.

``_fastsplit`` replaces every non-ASCII character by a representative of its class and runs
the standard ``re`` module on the copy; its classes come from tiktoken's tables. minbpe runs
its patterns with the ``regex`` module, whose tables are newer, so for those patterns we ask
the ``regex`` module itself which class a character is in (once per distinct character).
"""

from __future__ import annotations

import regex

from ._fastsplit import LOWER, NUMBER, OTHER, SPACE, FastSplitter

_LETTER = regex.compile(r"\p{L}")
_NUMBER = regex.compile(r"\p{N}")
_SPACE = regex.compile(r"\s")
_FOLDS_TO_ASCII = regex.compile(r"(?i)[a-z]")


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

    >>> from bpeinspect.core.pretokenize import GPT4_PATTERN
    >>> RegexTablesSplitter(GPT4_PATTERN).findall("Ünïcode 12345 ſ's")
    ['Ünïcode', ' ', '123', '45', ' ſ', "'s"]
    """

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self._table = _RegexTable(fold="(?i" in pattern)
