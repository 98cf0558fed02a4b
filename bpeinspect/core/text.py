"""Text helpers every layer shares: tiktoken's surrogate fix-up and UTF-16 lengths.

Qt counts text positions in UTF-16 code units; Python counts code points. A character
outside the Basic Multilingual Plane (most emoji) is one code point but two UTF-16 units.

>>> utf16_len("a😀")
3
>>> fix_surrogates("a\\ud83d\\ude00") == "a😀"
True
"""

from __future__ import annotations

import regex

_SURROGATE = regex.compile(r"[\ud800-\udfff]")


def fix_surrogates(text: str) -> str:
    """tiktoken's fix-up: lone surrogates become U+FFFD, surrogate pairs become one character.

    Python strings may hold surrogates that UTF-8 cannot encode; tiktoken round-trips the
    text through UTF-16 so that encoding never fails, and we do the same to stay identical.

    >>> fix_surrogates("x\\ud800y")
    'x\\ufffdy'
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (a lone surrogate counts one).

    >>> utf16_len("héllo"), utf16_len("🎉🎉")
    (5, 4)
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
