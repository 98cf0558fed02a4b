"""Split patterns of a ``tokenizer.json``, run by the ``regex`` module with Hugging Face's Unicode.

Hugging Face ``tokenizers`` runs a ``Split`` pattern with Oniguruma, whose Unicode tables are
version 15.1 (tiktoken's are the same); the ``regex`` module that runs such patterns here
knows newer ones (Unicode 17 in ``regex`` 2025.x and later). So the ~17,800 characters assigned
since (U+058B, CJK Extension J, Tulu-Tigalari digits...) are letters, digits or symbols to
``regex`` and unassigned to Hugging Face, and U+0295 is Lo to one and Ll to the other: a pattern
such as DeepSeek's ``[\\p{L}\\p{M}]+`` cuts them differently.

A rule with ``unicode="hf"`` therefore runs on a copy of the text in which each such character
is replaced by a stand-in that the ``regex`` module sees as Hugging Face sees the original: an
unassigned code point, or a letter of the same category. The copy has the same length, so its
matches are the original's pieces by position. Characters a pattern names itself (a literal or
a range, ``[\\U00031350-\\U000323af]``) are left as they are, and a pattern that asks for Unicode
blocks or ages (``\\p{InArmenian}``) runs on the text itself: a stand-in would change those.

>>> from bpeinspect.core.split.rules import Split, SplitRule
>>> rule = SplitRule((Split(r"\\p{L}+"),), unicode="hf")
>>> rule.pieces("a\\u058bb"), SplitRule((Split(r"\\p{L}+"),)).pieces("a\\u058bb")
(['a', '\\u058b', 'b'], ['a\\u058bb'])
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

import regex

from bpeinspect.core.split.hf_unicode_tables import CATEGORY, UNASSIGNED

# Stand-ins, as the regex module sees them: U+0378 is unassigned in every Unicode version so far,
# U+0138 LATIN SMALL LETTER KRA is an Ll of the Latin script without case mappings.
STAND_INS = {"Cn": "\u0378", "Ll": "\u0138"}

# A literal code point of a pattern: \x{...}, \xHH, \uHHHH, \UHHHHHHHH, \N{name}, an escaped or plain character.
_ITEM = re.compile(
    r"\\x\{([0-9a-fA-F]+)\}|\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\N\{([^}]*)\}|\\(.)|(.)", re.S
)
_BLOCKS_OR_AGES = regex.compile(r"\\[pP]\{\^?\s*(?:in|blk|block|age)", regex.I)


@functools.cache
def _differences() -> dict[int, str]:
    """Code point -> stand-in, for every character the ``regex`` module sees otherwise than
    Hugging Face (computed once, from the installed ``regex`` module)."""
    assigned = regex.compile(r"\P{Cn}")
    out: dict[int, str] = {}
    for a, b in UNASSIGNED:
        chunk = "".join(map(chr, range(a, b + 1)))
        for m in assigned.finditer(chunk):
            out[a + m.start()] = STAND_INS["Cn"]
    for cp, category in CATEGORY.items():
        out[cp] = STAND_INS[category]
    return out


def _named(pattern: str) -> list[tuple[int, int]] | None:
    """The code point ranges ``pattern`` names by its literals (each character, and each
    ``a-b`` as a range), or ``None`` if it names a character this cannot read."""
    items: list[int | str] = []
    for m in _ITEM.finditer(pattern):
        hexa = m.group(1) or m.group(2) or m.group(3) or m.group(4)
        if hexa:
            items.append(int(hexa, 16))
        elif m.group(5) is not None:
            try:
                items.append(ord(unicodedata.lookup(m.group(5))))
            except KeyError:
                return None
        elif m.group(6) is not None:
            items.append("\\" + m.group(6) if m.group(6).isalnum() else ord(m.group(6)))
        else:
            items.append(ord(m.group(7)))
    out = [(c, c) for c in items if isinstance(c, int)]
    for i in range(1, len(items) - 1):
        a, dash, b = items[i - 1], items[i], items[i + 1]
        if dash == ord("-") and isinstance(a, int) and isinstance(b, int) and a <= b:
            out.append((a, b))
    return out


@functools.lru_cache(maxsize=64)
def _substitution(patterns: tuple[str, ...]) -> tuple[dict[int, str], re.Pattern[str]] | None:
    """The translation table and a finder of its characters for ``patterns``, or ``None``
    when the text must be run as it is."""
    if any(_BLOCKS_OR_AGES.search(p) for p in patterns):
        return None
    named: list[tuple[int, int]] = []
    for p in patterns:
        ranges = _named(p)
        if ranges is None:
            return None
        named += [(a, b) for a, b in ranges if b >= 0x80]
    table = {cp: rep for cp, rep in _differences().items() if not any(a <= cp <= b for a, b in named)}
    if not table:
        return None
    return table, re.compile("[" + "".join(_class_ranges(sorted(table))) + "]")


def _class_ranges(cps: Iterable[int]) -> list[str]:
    out: list[list[int]] = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in out]


def hf_view(text: str, patterns: tuple[str, ...]) -> str:
    """``text`` with the characters Hugging Face sees otherwise than the ``regex`` module
    replaced by their stand-ins, for running ``patterns`` (``text`` itself if it has none)."""
    if text.isascii():
        return text
    sub = _substitution(patterns)
    if sub is None or sub[1].search(text) is None:
        return text
    return text.translate(sub[0])
