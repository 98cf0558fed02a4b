"""How bytes and text are shown to people, the same in every view and in the CLI.

One notation, chosen so that every token reads on one line and maps back to its bytes (the
symbols are ones real vocabularies do not hold, so the way back is exact for all of their
tokens; a tab is ``⇥``, not ``→``, because arrows are common text):

======================================  ==============================
what                                    shown as
======================================  ==============================
space, tab, newline, carriage return    ``␣`` ``⇥`` ``↵`` ``␍``
no-break space (U+00A0)                 ``⍽``
other C0 controls, DEL                  U+2400 control pictures: ``␀`` … ``␟``, ``␡``
other invisible code points             ``⟨U+200B⟩`` (format, separator, private use,
                                        unassigned, C1 controls and other spaces)
bytes that are not a whole UTF-8        ``<e4 bd>``: lower-case hex, a run of them in one
character (a split character)           pair of brackets
======================================  ==============================

>>> display_bytes(b" a\\t\\n\\xe4\\xbd")
'␣a⇥↵<e4 bd>'
>>> parse_display("␣a⇥↵<e4 bd>")
b' a\\t\\n\\xe4\\xbd'

Qt counts text positions in UTF-16 code units, Python in code points: a character outside
the Basic Multilingual Plane (most emoji) is one code point but two UTF-16 units.

>>> utf16_len("a😀")
3
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator
from itertools import chain

import regex

SYMBOLS: dict[str, str] = {" ": "␣", "\t": "⇥", "\n": "↵", "\r": "␍", "\x7f": "␡", "\u00a0": "⍽"}
for _c in range(0x20):
    SYMBOLS.setdefault(chr(_c), chr(0x2400 + _c))
LEGEND = "␣ space, ⇥ tab, ↵ newline, <e4 bd> bytes of a split character, ⟨U+200B⟩ an invisible character"

_TABLE = {ord(c): s for c, s in SYMBOLS.items()}
_UNSYMBOLS = {ord(s): c for c, s in SYMBOLS.items()}
_INVISIBLE = regex.compile(r"[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]")
_ESCAPED = regex.compile(r"[\udc80-\udcff]+")  # bytes that surrogateescape could not decode
_NOTATION = regex.compile(r"<([0-9a-f]{2}(?: [0-9a-f]{2})*)>|⟨U\+([0-9A-F]{4,6})⟩")
_SURROGATE = regex.compile(r"[\ud800-\udfff]")


def display_text(text: str) -> str:
    """``text`` on one line with whitespace, controls and invisible characters made visible.

    >>> display_text("if x:\\n\\tgo\\u200b")
    'if␣x:↵⇥go⟨U+200B⟩'
    """
    return _shown(text, _TABLE, _INVISIBLE)


def _shown(text: str, table: dict[int, str], invisible: regex.Pattern[str]) -> str:
    """``text`` with ``table``'s symbols, and what ``invisible`` matches as ``⟨U+XXXX⟩``."""
    out = text.translate(table)
    if out.isascii():
        return out
    return invisible.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", out)


_LABEL_TABLE = {k: v for k, v in _TABLE.items() if k != ord(" ")}
_LABEL_INVISIBLE = regex.compile(r"(?V1)[[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]--[ ]]")


def display_label(text: str) -> str:
    """A name, a path or a message on one line, safe to print on a terminal: control and
    invisible characters in the notation of :func:`display_text` (an escape sequence in a
    vocabulary's name cannot reach the terminal), ordinary spaces kept.

    >>> display_label("my vocab\\x1b]0;title\\x07\\u202e")
    'my vocab␛]0;title␇⟨U+202E⟩'
    """
    return _shown(text, _LABEL_TABLE, _LABEL_INVISIBLE)


_TERMINAL_TABLE = {k: v for k, v in _TABLE.items() if chr(k) not in " \t\n"}
_TERMINAL_UNSAFE = regex.compile("[\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def display_terminal(text: str) -> str:
    """Text to print on a terminal as it is (decoded tokens, coloured text), except what a
    terminal would act on: control characters other than newline and tab, and the marks
    that reverse the order text is shown in, appear in the notation of :func:`display_text`.

    >>> display_terminal("a\\tb\\n\\x1b[2J\\r\\u202e")
    'a\\tb\\n␛[2J␍⟨U+202E⟩'
    """
    return _shown(text, _TERMINAL_TABLE, _TERMINAL_UNSAFE)


def display_bytes(data: bytes) -> str:
    """``data`` as :func:`display_text` shows it, with bytes that are not part of a whole UTF-8
    character as hex in angle brackets (never "�").

    >>> display_bytes(b"\\xf0\\x9f"), display_bytes(" the".encode()), display_bytes("日".encode()[:2] + b"x")
    ('<f0 9f>', '␣the', '<e6 97>x')
    """
    if data.isascii():
        return data.decode("ascii").translate(_TABLE)
    text = data.decode("utf-8", "surrogateescape")
    if not _ESCAPED.search(text):
        return display_text(text)
    parts = _ESCAPED.split(text)
    runs = _ESCAPED.findall(text)
    out = [display_text(parts[0])]
    for run, part in zip(runs, parts[1:]):
        out.append("<" + bytes(ord(c) - 0xDC00 for c in run).hex(" ") + ">")
        out.append(display_text(part))
    return "".join(out)


def parse_display(shown: str) -> bytes:
    """The bytes a user means by ``shown``, written in the notation of :func:`display_bytes`.

    ``parse_display(display_bytes(b)) == b`` for every ``b`` that does not itself hold text
    looking like the notation (a control picture, ``<e4>``, ``⟨U+…⟩``).

    >>> parse_display("␣the↵"), parse_display("<f0 9f>⟨U+200B⟩")
    (b' the\\n', b'\\xf0\\x9f\\xe2\\x80\\x8b')
    """
    out: list[bytes] = []
    pos = 0
    for m in _NOTATION.finditer(shown):
        out.append(shown[pos : m.start()].translate(_UNSYMBOLS).encode("utf-8", "surrogatepass"))
        if m.group(1) is not None:
            out.append(bytes.fromhex(m.group(1)))
        else:
            out.append(chr(int(m.group(2), 16)).encode("utf-8", "surrogatepass"))
        pos = m.end()
    out.append(shown[pos:].translate(_UNSYMBOLS).encode("utf-8", "surrogatepass"))
    return b"".join(out)


def hex_bytes(data: bytes) -> str:
    """Space-separated lower-case hex.

    >>> hex_bytes(b"hi")
    '68 69'
    """
    return data.hex(" ")


def fix_surrogates(text: str) -> str:
    """tiktoken's fix-up: lone surrogates become U+FFFD, surrogate pairs become one character.

    Python strings may hold surrogates that UTF-8 cannot encode; tiktoken round-trips the
    text through UTF-16 so that encoding never fails, and we do the same to stay identical.

    >>> fix_surrogates("x\\ud800y"), fix_surrogates("a\\ud83d\\ude00") == "a😀"
    ('x\\ufffdy', True)
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


def decode_utf8(blocks: Iterable[bytes], bad: Callable[[int, int], Exception]) -> Iterator[tuple[str, int]]:
    """Consecutive ``blocks`` of bytes decoded as strict UTF-8, as ``(text, bytes)``: a character
    cut between two blocks comes whole with the second. A byte that is not UTF-8 raises
    ``bad(offset, byte)``, the offset counted from the first block.

    >>> list(decode_utf8([b"a\\xc3", b"\\xa9"], ValueError))
    [('a', 2), ('é', 1), ('', 0)]
    >>> list(decode_utf8([b"ab", b"\\xff"], lambda at, byte: ValueError(f"0x{byte:02x} at {at}")))
    Traceback (most recent call last):
    ValueError: 0xff at 2
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0  # bytes decoded before the current block
    for block in chain(blocks, (None,)):
        data = b"" if block is None else block
        pending = len(decoder.getstate()[0])  # bytes of a character cut by the last block
        try:
            text = decoder.decode(data, final=block is None)
        except UnicodeDecodeError as exc:
            raise bad(offset - pending + exc.start, exc.object[exc.start]) from None
        offset += len(data)
        yield text, len(data)
