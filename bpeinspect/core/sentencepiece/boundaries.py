"""Where merging never crosses: the pre-tokens of SentencePiece-style BPE.

A merge can only join two symbols if some piece holds the two characters side by side. Pieces
rarely hold ``▁`` after another character, so the normalized text is cut before each ``▁``
(unless the character before it is one that pieces do put before ``▁``); the pre-tokens are
then cached as for byte-level tokenizers, and the result is identical to merging the whole
text at once.

>>> boundary_rule(["▁a", "b", "x▁"], []).pieces("▁ab▁c x▁y")
['▁ab', '▁c x▁y']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import itemgetter

import regex

from bpeinspect.core.models.pieces import SPACE
from bpeinspect.core.split.rules import SplitRule


def boundary_rule(mergeable: Iterable[str], frozen: Sequence[str], newline_words: bool = False) -> SplitRule:
    """Pre-tokens that merging never crosses: cut before a ``▁`` that follows another character,
    unless some piece holds that character right before a ``▁``; user-defined pieces stand alone."""
    # every character that some piece holds right before a ▁, found in one pass over all pieces
    # (the last character of each run between two ▁: a C-speed split, not a regex scan)
    runs = "\uffff".join(mergeable).split(SPACE)
    before = set(map(itemgetter(slice(-1, None)), runs[:-1])) - {"", "\uffff"}
    s = regex.escape(SPACE)
    nl = "\\n" if newline_words else ""
    if before:
        cls = "".join(regex.escape(c) for c in sorted(before))
        glue = f"(?:[^{s}{nl}]|(?<=[{cls}]){s}+)"
    else:
        glue = f"[^{s}{nl}]"
    alts = [f"{glue}+", f"{s}+{glue}*"]
    if newline_words:  # llama.cpp's gemma4 words: runs of newlines apart from the rest
        alts.insert(0, "\\n+")
    if frozen:
        ud = "|".join(regex.escape(f) for f in sorted(frozen, key=lambda x: (-len(x), x)))
        alts = [ud] + [a.replace(glue, f"(?:(?!{ud}){glue})") for a in alts]
    return SplitRule.from_pattern("|".join(alts), name="sentencepiece ▁ boundaries")
