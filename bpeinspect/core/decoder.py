"""The decoder: what is done to the tokens' bytes joined, after the model (the last part of a tokenizer).

>>> Decoder(strip_leading_space=True).finish(b" hello")
b'hello'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decoder:
    """``strip_leading_space``: drop the one space a dummy prefix (SentencePiece's ``▁``) put
    before the text."""

    strip_leading_space: bool = False

    def finish(self, data: bytes) -> bytes:
        """``data``, the tokens' bytes joined, as the text's bytes."""
        if self.strip_leading_space and data.startswith(b" "):
            return data[1:]
        return data


PLAIN_DECODER = Decoder()

__all__ = ["PLAIN_DECODER", "Decoder"]
