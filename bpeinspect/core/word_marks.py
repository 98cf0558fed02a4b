"""Word marks: BPE models whose symbols know where they sit in their word.

Hugging Face's BPE model has two options, used by CLIP, OpenAI GPT-1, XLM, FlauBERT and
subword-nmt vocabularies: ``end_of_word_suffix`` (``</w>``) is added to the last symbol of
every pre-token, and ``continuing_subword_prefix`` (``##``) to every symbol but the first.
Merging starts from those marked symbols, so ``on</w>`` and ``on`` are two tokens.

The marks are not text. Token ``on</w>`` covers the two characters ``on`` and *ends a word*;
here a token is its bytes plus two flags, ``continues`` and ``ends``. Its bytes tile the text
as every other token's do (offsets, the overlay), and the flags are shown beside them
(:meth:`WordMarks.show`). Decoding puts a space where a word ends, as Hugging Face's
``BPEDecoder`` does (and where a word starts, for the prefix alone).

Inside a tokenizer's table of bytes -> id (which must tell the two tokens apart), a marked
token is keyed by its bytes with the marks' UTF-8 around them, as the file spells it:
``b"on</w>"``. Hugging Face's vocabulary cannot tell ``on</w>`` from a plain token spelled so
either.

>>> marks = WordMarks(suffix="</w>")
>>> marks.parse("on</w>"), marks.parse("on"), marks.parse("</w>")
(('on', False, True), ('on', False, False), ('</w>', False, False))
>>> marks.show("on", False, True)
'on⌋'
>>> marks.join([b"hello", b"wor", b"ld"], [False, False, False], [True, False, True])
b'hello world'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bpeinspect.core.bpe import MergeResults, PairMerges, pair_encode

END_MARK = "⌋"  # shown after a token that ends a word
CONTINUES_MARK = "⌊"  # shown before a token that continues a word


@dataclass(frozen=True)
class WordMarks:
    """The marks of a BPE model: ``suffix`` (``end_of_word_suffix``) and ``prefix``
    (``continuing_subword_prefix``); an empty string is no mark."""

    suffix: str = ""
    prefix: str = ""

    def __bool__(self) -> bool:
        return bool(self.suffix or self.prefix)

    def parse(self, token: str) -> tuple[str, bool, bool]:
        """``(text, continues, ends)`` of a token as the file spells it."""
        text, continues, ends = token, False, False
        if self.prefix and text.startswith(self.prefix) and len(text) > len(self.prefix):
            text, continues = text[len(self.prefix) :], True
        if self.suffix and text.endswith(self.suffix) and len(text) > len(self.suffix):
            text, ends = text[: -len(self.suffix)], True
        return text, continues, ends

    def spell(self, text: str, continues: bool, ends: bool) -> str:
        """The token as the file spells it (the reverse of :meth:`parse`).

        >>> WordMarks("</w>", "##").spell("ab", True, True)
        '##ab</w>'
        """
        return (self.prefix if continues else "") + text + (self.suffix if ends else "")

    def key(self, data: bytes, continues: bool, ends: bool) -> bytes:
        """A token's key in a table of bytes -> id: its bytes with the marks' UTF-8 around them."""
        return (self.prefix.encode() if continues else b"") + data + (self.suffix.encode() if ends else b"")

    def parse_key(self, key: bytes) -> tuple[bytes, bool, bool]:
        """``(bytes, continues, ends)`` of a key made by :meth:`key`."""
        pre, suf = self.prefix.encode(), self.suffix.encode()
        data, continues, ends = key, False, False
        if pre and data.startswith(pre) and len(data) > len(pre):
            data, continues = data[len(pre) :], True
        if suf and data.endswith(suf) and len(data) > len(suf):
            data, ends = data[: -len(suf)], True
        return data, continues, ends

    def merged(self, left: str, right: str) -> str:
        """The token a merge of ``left`` and ``right`` makes, spelled as the file does: Hugging
        Face drops the right part's prefix (``a`` + ``##b`` -> ``ab``)."""
        return left + right[len(self.prefix) :]

    def show(self, text: str, continues: bool, ends: bool) -> str:
        """A token's text (already in the views' notation) with its marks shown."""
        return (CONTINUES_MARK if continues else "") + text + (END_MARK if ends else "")

    def where(self, continues: bool, ends: bool) -> str:
        """Where a token with these marks sits in its word, in words.

        >>> WordMarks("</w>").where(False, True), WordMarks("", "##").where(True, False)
        ('ends a word', 'continues a word')
        """
        if self.suffix and self.prefix:
            return {
                (False, False): "starts a word",
                (True, False): "inside a word",
                (False, True): "a whole word",
                (True, True): "ends a word",
            }[(continues, ends)]
        if self.suffix:
            return "ends a word" if ends else "does not end a word"
        return "continues a word" if continues else "starts a word"

    def join(self, tokens: Sequence[bytes], continues: Sequence[bool], ends: Sequence[bool]) -> bytes:
        """The decoded bytes of tokens: a space after each that ends a word (Hugging Face's
        ``BPEDecoder``), unless it is the last or the next starts with whitespace already (a
        byte-level pre-token that kept its space); with a prefix and no suffix, a space before
        each that does not continue a word, unless it is the first or starts with whitespace.

        >>> WordMarks("</w>").join([b"dog", b";", b" cat"], [False] * 3, [True, True, True])
        b'dog ; cat'
        """
        out: list[bytes] = []
        for k, data in enumerate(tokens):
            if k and not data[:1].isspace():
                if (self.suffix and ends[k - 1]) or (not self.suffix and not continues[k]):
                    out.append(b" ")
            out.append(data)
        return b"".join(out)

    def describe(self) -> str:
        """The marks in a few words (``info``, the model pane).

        >>> WordMarks("</w>").describe()
        "end-of-word suffix '</w>'"
        """
        parts = []
        if self.suffix:
            parts.append(f"end-of-word suffix {self.suffix!r}")
        if self.prefix:
            parts.append(f"continuing-subword prefix {self.prefix!r}")
        return " and ".join(parts) or "no word marks"


@dataclass(frozen=True)
class SymbolTables:
    """The id each single byte starts as, by where it sits in its pre-token (``-1``: the
    vocabulary has no such symbol)."""

    alone: list[int]  # the only byte: first and last
    first: list[int]
    middle: list[int]
    last: list[int]

    @classmethod
    def of(cls, ranks: Mapping[bytes, int], marks: WordMarks) -> SymbolTables:
        def table(continues: bool, ends: bool) -> list[int]:
            return [ranks.get(marks.key(bytes([b]), continues, ends), -1) for b in range(256)]

        return cls(table(False, True), table(False, False), table(True, False), table(True, True))

    def initial(self, piece: bytes) -> list[int]:
        """The marked symbols of one pre-token (``-1`` where the vocabulary has none)."""
        n = len(piece)
        if n <= 1:
            return [self.alone[piece[0]]] if n else []
        middle = self.middle
        return [self.first[piece[0]], *[middle[b] for b in piece[1:-1]], self.last[piece[-1]]]

    def of_token(self, data: bytes, continues: bool, ends: bool) -> list[int]:
        """The symbols a token's own bytes start as at its place in a word (``continues``: not
        its first symbol, ``ends``: its last); ``-1`` where the vocabulary has none.

        >>> t = SymbolTables.of({b"a": 0, b"b": 1, b"a</w>": 2, b"b</w>": 3}, WordMarks("</w>"))
        >>> t.of_token(b"ab", False, True), t.of_token(b"ab", False, False)
        ([0, 3], [0, 1])
        """
        ids = [self.middle[b] if k or continues else self.first[b] for k, b in enumerate(data)]
        if ends and data:
            ids[-1] = (self.last if len(data) > 1 or continues else self.alone)[data[-1]]
        return ids


def piece_encoder(
    tables: SymbolTables,
    pair_merges: PairMerges,
    made: MergeResults,
    *,
    unk_id: int | None = None,
    fuse_unk: bool = False,
    whole: Mapping[bytes, int] | None = None,
) -> Callable[[bytes], list[int]]:
    """The piece encoder of a byte-level model with word marks, as Hugging Face's BPE runs it:
    a symbol the vocabulary lacks becomes ``unk_id`` (runs of them one, with ``fuse_unk``) or,
    without one, is dropped; then the merges apply. ``whole`` (Hugging Face's ``ignore_merges``):
    a pre-token that is a whole unmarked token there is looked up first.

    >>> ranks = {b"a": 0, b"b": 1, b"a</w>": 2, b"b</w>": 3, b"ab</w>": 4}
    >>> enc = piece_encoder(SymbolTables.of(ranks, WordMarks("</w>")), {(0, 3): 0}, [4])
    >>> enc(b"ab"), enc(b"ba"), enc(b"b")
    ([4], [1, 2], [3])
    """

    def encode(piece: bytes) -> list[int]:
        if whole is not None:
            t = whole.get(piece)
            if t is not None:
                return [t]
        ids = tables.initial(piece)
        if -1 in ids:
            ids = known(ids, unk_id, fuse_unk)
        return pair_encode(ids, pair_merges, made)

    return encode


class MarkedTokens:
    """The word marks of one byte-level merge-list model: which tokens continue or end a word,
    the symbols pieces start from, and the piece encoder.

    ``ranks`` keys marked tokens as :meth:`WordMarks.key` spells them; each such entry of
    ``decoder`` (id -> bytes, the model's id table) is rewritten to the bytes the token covers.
    """

    def __init__(
        self,
        marks: WordMarks,
        ranks: Mapping[bytes, int],
        decoder: dict[int, bytes],
        pair_merges: PairMerges,
        made: MergeResults,
        *,
        unk_id: int | None = None,
        ignore_merges: bool = False,
    ) -> None:
        self.marks, self.unk_id = marks, unk_id
        self._pair_merges, self._made = pair_merges, made
        continues, ends = set(), set()
        for i, key in list(decoder.items()):
            data, c, e = marks.parse_key(key)
            if c or e:
                decoder[i] = data
                if c:
                    continues.add(i)
                if e:
                    ends.add(i)
        self.continues, self.ends = frozenset(continues), frozenset(ends)
        self.symbols = SymbolTables.of(ranks, marks)
        self.encode_piece = piece_encoder(
            self.symbols, pair_merges, made, unk_id=unk_id, whole=ranks if ignore_merges else None
        )

    def token_marks(self, token_id: int) -> tuple[bool, bool]:
        """``(continues, ends)`` of a token."""
        return token_id in self.continues, token_id in self.ends

    def initial_parts(self, piece: bytes) -> list[int]:
        """The symbols merging starts from for one pre-token."""
        return known(self.symbols.initial(piece), self.unk_id)

    def rebuild(self, token_id: int, data: bytes) -> list[int]:
        """What merging the token's own symbols gives, at its place in a word."""
        ids = self.symbols.of_token(data, *self.token_marks(token_id))
        return pair_encode(known(ids, self.unk_id), self._pair_merges, self._made)

    def join(self, parts: Sequence[bytes], ids: Sequence[int]) -> bytes:
        """The decoded bytes of the tokens ``ids`` (their bytes ``parts``): see :meth:`WordMarks.join`."""
        return self.marks.join(parts, [i in self.continues for i in ids], [i in self.ends for i in ids])


def known(ids: list[int], unk_id: int | None, fuse_unk: bool = False) -> list[int]:
    """``ids`` with each missing symbol (``-1``) dropped, or made ``unk_id``.

    >>> known([5, -1, -1, 6], None), known([5, -1, -1, 6], 0), known([5, -1, -1, 6], 0, fuse_unk=True)
    ([5, 6], [5, 0, 0, 6], [5, 0, 6])
    """
    if unk_id is None:
        return [i for i in ids if i != -1]
    out: list[int] = []
    for i in ids:
        if i == -1:
            if fuse_unk and out and out[-1] == unk_id:
                continue
            i = unk_id
        out.append(i)
    return out


__all__ = ["CONTINUES_MARK", "END_MARK", "MarkedTokens", "SymbolTables", "WordMarks", "known", "piece_encoder"]
