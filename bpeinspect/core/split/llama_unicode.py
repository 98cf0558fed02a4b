"""Split patterns of a GGUF file, run as llama.cpp runs them.

llama.cpp does not hand a split pattern to a Unicode regex engine. It classes every code point
with its own tables (``src/unicode-data.cpp``, copied here as :mod:`.llama_unicode_tables`) and
runs the pattern with C++ ``std::regex`` in one of two ways (``unicode_regex_split`` in its
``src/unicode.cpp``):

* a pattern naming a category (``\\p{L}``, ``\\p{N}``, ``\\p{P}``, ``\\p{M}``, ``\\p{S}``, or a
  letter subcategory such as ``\\p{Lu}``, which there means any letter) runs on a "collapsed"
  copy of the text: ASCII stays as it is, every other code point becomes one byte for its
  class (whitespace becomes a vertical tab), and the pattern's categories become classes of
  those bytes and their ASCII members. ``\\s``, ``\\d`` and ``\\w`` see ASCII only.
* any other pattern runs on the code points, with non-ASCII whitespace turned into a vertical tab.

The few patterns llama.cpp runs as hand-written code (GPT-2's, Llama 3's, Qwen2's) implement
the same classes. Here the ``regex`` module runs the same rewritten pattern (in ASCII mode) on
the same copy, which has the text's length, so its pieces are the text's by position.

>>> from bpeinspect.core.split.rules import Split, SplitRule
>>> SplitRule((Split(r"\\p{L}+"),), unicode="llama").pieces("ab\\u3000cd")
['ab', '\\u3000', 'cd']
"""

from __future__ import annotations

import bisect
import functools

from bpeinspect.core.split.llama_unicode_tables import CLASSES, STARTS, WHITESPACE

# the byte each class becomes in the collapsed text (llama.cpp's choice); O(ther) is 0xD0
_BYTE = {"N": "\xd1", "L": "\xd2", "P": "\xd3", "M": "\xd4", "S": "\xd5", "O": "\xd0"}
# what a category of a pattern becomes: its byte and its ASCII members
_CATEGORY = {
    "N": "\xd10-9",
    "L": "\xd2A-Za-z",
    "P": "\xd3!-#%-*,-/:-;?-@\\[-\\]_\\{\\}",
    "M": "\xd4",
    "S": "\xd5\\$\\+<->\\^`\\|~",
}
_NAMES = {"N": "N", "L": "L", "P": "P", "M": "M", "S": "S", "Lu": "L", "Ll": "L", "Lt": "L", "Lm": "L", "Lo": "L"}


def char_class(cp: int) -> str:
    """llama.cpp's class of code point ``cp``: ``N``, ``L``, ``M``, ``P``, ``S`` or ``O``."""
    return CLASSES[bisect.bisect_right(STARTS, cp) - 1]


class _Collapse(dict):
    """A ``str.translate`` table built as it is used: code point -> its collapsed character."""

    def __missing__(self, cp: int) -> str:
        if cp < 0x80:
            out = chr(cp)
        elif cp in WHITESPACE:
            out = "\x0b"
        else:
            out = _BYTE[char_class(cp)]
        self[cp] = out
        return out


class _Widen(dict):
    def __missing__(self, cp: int) -> str:
        out = "\x0b" if cp >= 0x80 and cp in WHITESPACE else chr(cp)
        self[cp] = out
        return out


_COLLAPSE = _Collapse()
_WIDEN = _Widen()


def collapsed_view(text: str) -> str:
    """``text`` as llama.cpp's category patterns see it (same length)."""
    return text if text.isascii() else text.translate(_COLLAPSE)


def wide_view(text: str) -> str:
    """``text`` as llama.cpp's other patterns see it: non-ASCII whitespace as a vertical tab."""
    return text if text.isascii() else text.translate(_WIDEN)


def uses_categories(pattern: str) -> bool:
    """Whether llama.cpp runs ``pattern`` on the collapsed text."""
    return any(f"\\p{{{name}}}" in pattern for name in _NAMES)


@functools.lru_cache(maxsize=128)
def collapse_pattern(pattern: str) -> str:
    """``pattern`` as llama.cpp rewrites it for the collapsed text, in the ``regex`` module's
    ASCII mode; a pattern without categories keeps its text (ASCII mode all the same)."""
    if not uses_categories(pattern):
        return "(?a)" + pattern
    out: list[str] = []
    inside = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[" and (i == 0 or pattern[i - 1] != "\\"):
            inside = True
        elif inside and c == "]" and pattern[i - 1] != "\\":
            inside = False
        elif pattern.startswith("\\p{", i):
            close = pattern.find("}", i + 3)
            name = _NAMES.get(pattern[i + 3 : close]) if 0 <= close <= i + 10 else None
            if name is not None:
                body = _CATEGORY[name]
                out.append(body if inside else f"[{body}]")
                i = close + 1
                continue
        out.append(c)
        i += 1
    return "(?a)" + "".join(out)


def view_for(pattern: str, text: str) -> str:
    """The copy of ``text`` that llama.cpp runs ``pattern`` on."""
    return collapsed_view(text) if uses_categories(pattern) else wide_view(text)
