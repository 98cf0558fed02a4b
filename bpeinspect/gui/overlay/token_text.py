"""How token bytes are written for people: printable text with escapes, and hex.

>>> token_label(b" hello\\n")
'·hello↵'
>>> token_label(b"\\xe4\\xbd")
'<e4 bd>'
>>> describe_bytes(b"A\\xff")
'41 ff'
"""

from __future__ import annotations

_VISIBLE = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}


def describe_bytes(data: bytes) -> str:
    """The bytes in hex, space-separated."""
    return data.hex(" ")


def token_label(data: bytes) -> str:
    """A token's text for labels: whitespace made visible, control characters as control
    pictures, and bytes that are not whole UTF-8 characters as ``<hex>``, never "�"."""
    out = []
    i = 0
    while i < len(data):
        n = _utf8_len(data, i)
        if n:
            ch = data[i : i + n].decode("utf-8")
            if ch in _VISIBLE:
                ch = _VISIBLE[ch]
            elif ord(ch) < 0x20:
                ch = chr(0x2400 + ord(ch))
            elif ord(ch) == 0x7F:
                ch = "\u2421"
            out.append(ch)
            i += n
        else:
            j = i + 1
            while j < len(data) and not _utf8_len(data, j):
                j += 1
            out.append("<" + data[i:j].hex(" ") + ">")
            i = j
    return "".join(out)


def _utf8_len(data: bytes, i: int) -> int:
    """Length of the complete UTF-8 character at ``data[i]``, or 0 if there is none."""
    for n in (1, 2, 3, 4):
        try:
            data[i : i + n].decode("utf-8")
            return n
        except UnicodeDecodeError:
            if i + n >= len(data):
                return 0
    return 0
