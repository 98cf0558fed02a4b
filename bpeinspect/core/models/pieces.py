"""SentencePiece piece kinds and texts: the type numbers, byte pieces (``<0x41>``), what the
decoder prints for a piece, and ``remove_extra_whitespaces``.

>>> byte_of_piece("<0x41>"), decoded_bytes("▁hi", NORMAL), KIND_NAMES[BYTE]
(65, b' hi', 'byte')
"""

from __future__ import annotations

import re
from typing import Literal

import regex

from bpeinspect.core.normalize import Stateless

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
KIND_NAMES = {
    NORMAL: "normal",
    UNKNOWN: "unknown",
    CONTROL: "control",
    USER_DEFINED: "user-defined",
    UNUSED: "unused",
    BYTE: "byte",
}
SPACE = "▁"
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
Flavour = Literal["sentencepiece", "llama.cpp", "huggingface"]


class SqueezeSpaces(Stateless):
    """SentencePiece's ``remove_extra_whitespaces``: no leading or trailing spaces, runs become one."""

    _RUN = regex.compile(r" {2,}")

    def normalize(self, text: str) -> str:
        return self._RUN.sub(" ", text.strip(" "))

    def _aligned(self, text: str):
        from bpeinspect.core.normalize import pieces_aligned

        a = len(text) - len(text.lstrip(" "))
        b = max(a, len(text.rstrip(" ")))
        found = [(0, a, "")] if a else []
        found += [(m.start() + 1, m.end(), "") for m in self._RUN.finditer(text, a, b)]
        if b < len(text):
            found.append((b, len(text), ""))
        if not found:
            return text, None, None
        return pieces_aligned(text, found)

    def describe(self) -> str:
        return "remove extra spaces"


def byte_of_piece(piece: str) -> int | None:
    """The byte a ``<0xXX>`` piece stands for, else ``None``."""
    m = _BYTE_PIECE.fullmatch(piece)
    return int(m.group(1), 16) if m else None


def decoded_bytes(piece: str, kind: int) -> bytes:
    """The bytes the decoder writes for a piece: ``▁`` as a space, a byte piece as its byte."""
    if kind == BYTE:
        b = byte_of_piece(piece)
        if b is not None:
            return bytes([b])
    return piece.replace(SPACE, " ").encode("utf-8", "surrogatepass")
