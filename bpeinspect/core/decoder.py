"""The decoder: what is done to the tokens' bytes joined, after the model (the last part of a tokenizer).

>>> Decoder(strip_leading_space=True).finish(b" hello")
b'hello'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bpeinspect.core.word_marks import WordMarks


@dataclass(frozen=True)
class Decoder:
    """``strip_leading_space``: drop the one space a dummy prefix (SentencePiece's ``▁``) put
    before the text. ``word_marks``: a space goes where a word ends (see :meth:`join`)."""

    strip_leading_space: bool = False
    word_marks: WordMarks | None = None

    def join(
        self, parts: Sequence[bytes], ids: Sequence[int], token_marks: Callable[[int], tuple[bool, bool]]
    ) -> bytes:
        """The tokens' bytes ``parts`` joined; with word marks, a space where a word ends (as
        Hugging Face's ``BPEDecoder``, see :meth:`WordMarks.join`). ``token_marks``: the model's.

        >>> Decoder(word_marks=WordMarks("</w>")).join([b"a", b"b"], [1, 2], lambda i: (False, True))
        b'a b'
        """
        if self.word_marks is None:
            return b"".join(parts)
        marks = [token_marks(i) for i in ids]
        return self.word_marks.join(parts, [c for c, _ in marks], [e for _, e in marks])

    def finish(self, data: bytes) -> bytes:
        """``data``, the tokens' bytes joined, as the text's bytes."""
        if self.strip_leading_space and data.startswith(b" "):
            return data[1:]
        return data


PLAIN_DECODER = Decoder()

__all__ = ["PLAIN_DECODER", "Decoder"]
