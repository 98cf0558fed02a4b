"""SentencePiece-style BPE with byte fallback (Llama 1/2, Mistral v1-v3, Gemma, Phi-3, Baichuan...).

These models merge *characters*, not bytes: the text is normalized (spaces become ``▁``, a
``▁`` is usually prepended), split into characters, and adjacent symbols merge while their
concatenation is a piece. A character that ends up in no piece falls back to its UTF-8
bytes, as the pieces ``<0x00>``..``<0xFF>``. Three libraries do this and each is matched
exactly by one ``flavour``:

* ``"sentencepiece"`` (``.model`` files): any adjacent pair whose concatenation is a normal,
  user-defined or unused piece may merge; the highest score first, leftmost on ties.
* ``"llama.cpp"`` (GGUF ``tokenizer.ggml.model = llama``): the same, over every token.
* ``"huggingface"`` (``tokenizer.json`` BPE with ``byte_fallback``): only the file's merges,
  in their order (the pair rule); a character without a token becomes byte tokens first.

The tokenizer is composed of parts (:func:`SentencePieceBPE`): the model is
:class:`~bpeinspect.core.models.score.ScoreBPE`, the pre-tokenizer cuts at
:func:`boundary_rule`, the decoder may drop the dummy prefix's space.

Token bytes are what the model's decoder prints: ``▁`` as a space, ``<0x41>`` as the byte
0x41. Offsets point into the user's own text (:mod:`bpeinspect.core.aligned`).

Speed: a merge can only join two symbols if some piece contains the two characters side by
side. Pieces rarely hold ``▁`` after another character, so the normalized text is cut before
each ``▁`` (unless the character before it is one that pieces do put before ``▁``), and the
pre-tokens are cached as for byte-level tokenizers; the result is identical to merging the
whole text at once.

>>> tok = SentencePieceBPE(["<unk>", "▁", "h", "i", "▁h", "▁hi"], [2, 1, 1, 1, 1, 1],
...     scores=[0, -5, -6, -7, -1, -2], normalizer=None, byte_fallback=False, unk_id=0)
>>> tok.encode_ordinary("▁hi▁x")
[5, 1, 0]
"""

from bpeinspect.core.models.pieces import (
    BYTE,
    CONTROL,
    KIND_NAMES,
    NORMAL,
    SPACE,
    UNKNOWN,
    UNUSED,
    USER_DEFINED,
    Flavour,
    SqueezeSpaces,
    byte_of_piece,
    decoded_bytes,
)
from bpeinspect.core.models.score_merges import SentencePieceMergeGraph
from bpeinspect.core.sentencepiece.boundaries import boundary_rule
from bpeinspect.core.sentencepiece.model import SentencePieceBPE

__all__ = [
    "BYTE",
    "CONTROL",
    "KIND_NAMES",
    "NORMAL",
    "SPACE",
    "UNKNOWN",
    "UNUSED",
    "USER_DEFINED",
    "Flavour",
    "SentencePieceBPE",
    "SentencePieceMergeGraph",
    "SqueezeSpaces",
    "boundary_rule",
    "byte_of_piece",
    "decoded_bytes",
]
