"""Byte-level BPE models: the rank rule (:class:`RankBPE`) and the merge-list rule (:class:`MergeListBPE`).

Both merge a pre-token's UTF-8 bytes; they differ in which merges exist and in what order
(see :mod:`bpeinspect.core.bpe`).

>>> m = MergeListBPE({bytes([b]): b for b in range(256)} | {b"hi": 256}, [(104, 105)])
>>> m.encode_piece(b"hihi"), m.merge_result(104, 105), m.merge_rank(104, 105)
([256, 256], 256, 0)
>>> RankBPE({bytes([b]): b for b in range(256)} | {b"ab": 256, b"abab": 257}).encode_piece(b"ababab")
[257, 256]
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from bpeinspect.core.bpe import make_piece_encoder, pair_merge_table
from bpeinspect.core.merges import MergeGraph
from bpeinspect.core.specials import check_tables, decode_special_tokens, missing_single_bytes, rank_tables
from bpeinspect.core.word_marks import MarkedTokens, WordMarks

if TYPE_CHECKING:
    from bpeinspect.core.merges import MergeSource


class ByteOptions(TypedDict, total=False):
    """The options every byte-level model takes (see :class:`ByteLevelBPE`)."""

    ignore_merges: bool
    byte_barriers: bool
    should_stop: Callable[[], bool] | None


class ByteLevelBPE:
    """What the two byte-level models share: the token table (bytes <-> id), the single bytes
    without a token, and the piece encoder (``encode_piece``, bytes -> ids).

    ``ranks`` maps every mergeable token's bytes to its id. A single byte without a token is
    dropped from the piece it occurs in, as Hugging Face ``tokenizers`` and llama.cpp drop it:
    before merging, or with ``byte_barriers`` after (llama.cpp: no merge joins its neighbours).
    """

    byte_level = True
    uses_rank_rule: bool
    explicit_merges: list[tuple[int, int]] | None
    encode_piece: Callable[[bytes], list[int]]
    word_marks: WordMarks | None = None  # MergeListBPE's option: Hugging Face's end_of_word_suffix / prefix
    unk_id: int | None = None

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        *,
        ignore_merges: bool = False,
        byte_barriers: bool = False,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        # should_stop: asked while the tables are built (Cancelled if it says so; see rank_tables)
        self.ranks, self.decoder, low, self.top_id = rank_tables(ranks, should_stop)
        check_tables((low, self.top_id) if self.ranks else (), {}, {})
        if len(self.decoder) != len(self.ranks):
            raise ValueError("two tokens share one id")
        self.missing_bytes: tuple[int, ...] = missing_single_bytes(self.ranks)
        self.ignore_merges, self.byte_barriers = ignore_merges, byte_barriers

    def add_special_tokens(self, special: Mapping[str, int], added: Mapping[str, int]) -> None:
        """Write the special and added tokens' text into :attr:`decoder` (the tokenizer's id table)."""
        decode_special_tokens(self.decoder, special, added)
        self.top_id = max([self.top_id, *special.values(), *added.values()])

    def initial_parts(self, piece: bytes) -> list[int]:
        """The symbols merging starts from for one pre-token: its bytes' tokens."""
        ranks = self.ranks
        return [ranks[bytes([b])] for b in piece]

    def piece_ids(self, piece: str | bytes) -> list[int]:
        """Ids of one pre-token given as its text or bytes (text: lone surrogates already fixed)."""
        return list(self.encode_piece(piece.encode("utf-8") if isinstance(piece, str) else piece))

    def token_marks(self, token_id: int) -> tuple[bool, bool]:
        """``(continues, ends)``: whether the token continues and ends a word (word marks only)."""
        return False, False

    def rebuild(self, token_id: int) -> list[int]:
        """What merging the token's own bytes as one pre-token gives (``[token_id]`` unless unreachable)."""
        return list(self.encode_piece(self.decoder[token_id]))

    def leaf_label(self, token_id: int, special: bool) -> str:
        """What a token that no merge makes is: ``special`` or ``byte``."""
        return "special" if special else "byte"

    def kind(self, token_id: int) -> str:
        """``byte`` for a single byte's token, else ``normal`` (special tokens aside)."""
        return "byte" if len(self.decoder.get(token_id, b"")) == 1 else "normal"

    def piece(self, token_id: int) -> str | None:
        """The token's text as the model stores it: its bytes, decoded (``None``: no such token)."""
        b = self.decoder.get(token_id)
        return None if b is None else b.decode("utf-8", "replace")

    def merge_graph(self, tok: MergeSource) -> MergeGraph:
        return MergeGraph(tok)

    def normalized_lengths(self, decoder: Mapping[int, bytes], others: Collection[int]) -> Callable[[int], int]:
        """How many bytes of normalized text each token stands for: its own, counted when first asked."""
        lengths: dict[int, int] = {}

        def nlen(i: int) -> int:
            n = lengths.get(i)
            if n is None:
                n = lengths[i] = len(decoder[i])
            return n

        return nlen


class RankBPE(ByteLevelBPE):
    """tiktoken's rank rule: two parts merge when their concatenated bytes are a token, the lowest
    id first; a pre-token that is a whole token is looked up first. Also Hugging Face byte-level
    files whose merge order is the id order."""

    uses_rank_rule = True
    explicit_merges = None
    merge_source = "recovered from the ranks"

    def __init__(self, ranks: Mapping[bytes, int], **options: Unpack[ByteOptions]) -> None:
        super().__init__(ranks, **options)
        self.encode_piece = make_piece_encoder(
            self.ranks, None, None, False, drop=bytes(self.missing_bytes), barriers=self.byte_barriers
        )

    def merge_rank(self, left: int, right: int) -> int | None:
        """The priority of merging ``left`` and ``right`` (the id it makes), or ``None``."""
        dec = self.decoder
        if left not in dec or right not in dec:
            return None
        return self.ranks.get(dec[left] + dec[right])

    def merge_result(self, left: int, right: int) -> int | None:
        return self.merge_rank(left, right)

    def describe(self) -> str:
        return "rank rule (merge priority = id, as tiktoken)"


class MergeListBPE(ByteLevelBPE):
    """The pair rule of Hugging Face, minbpe and llama.cpp: only the listed merges (pairs of ids,
    in priority order) apply, the earliest listed first, leftmost on ties.

    ``merge_results``: the id each merge makes, when the loader looked them up already.
    ``duplicate_merges``: for a pair listed twice, which listing wins. ``ignore_merges``: a
    pre-token that is a whole token is looked up first (Hugging Face's option).

    ``word_marks`` (Hugging Face's ``end_of_word_suffix`` and ``continuing_subword_prefix``: CLIP's
    ``</w>``): pieces start from marked symbols, ``ranks`` keys marked tokens as
    :meth:`WordMarks.key` spells them, and :attr:`decoder` holds the bytes each token covers, its
    marks apart (:meth:`token_marks`; see :mod:`bpeinspect.core.word_marks`). ``unk_id``: the id
    of a symbol the vocabulary lacks (else it is dropped).

    >>> ranks = {bytes([b]): b for b in range(256)} | {bytes([b]) + b"</w>": 256 + b for b in range(256)}
    >>> m = MergeListBPE(ranks | {b"hi</w>": 512}, [(104, 256 + 105)], word_marks=WordMarks("</w>"))
    >>> m.encode_piece(b"hi"), m.encode_piece(b"hih"), m.decoder[512], m.token_marks(512), m.piece(512)
    ([512], [104, 105, 360], b'hi', (False, True), 'hi</w>')
    """

    uses_rank_rule = False
    merge_source = "the file's merge list"

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        merges: Sequence[tuple[int, int]],
        *,
        merge_results: Sequence[int] | None = None,
        duplicate_merges: Literal["first", "last"] = "first",
        ignore_merges: bool = False,
        byte_barriers: bool = False,
        word_marks: WordMarks | None = None,
        unk_id: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(ranks, ignore_merges=ignore_merges, byte_barriers=byte_barriers, should_stop=should_stop)
        self.explicit_merges, self.pair_merges, self.merge_made = pair_merge_table(
            self.ranks, self.decoder, merges, merge_results, duplicate_merges
        )
        if word_marks:
            self.word_marks, self.unk_id = word_marks, unk_id
            self.marked = MarkedTokens(
                word_marks,
                self.ranks,
                self.decoder,
                self.pair_merges,
                self.merge_made,
                unk_id=unk_id,
                ignore_merges=ignore_merges,
            )
            self.missing_bytes = ()  # a symbol the vocabulary lacks is the unknown token's, or dropped
            self.encode_piece = self.marked.encode_piece
            return
        byte_ids = [self.ranks.get(bytes([b]), -1) for b in range(256)]
        self.encode_piece = make_piece_encoder(
            self.ranks,
            self.pair_merges,
            byte_ids,
            ignore_merges,
            drop=bytes(self.missing_bytes),
            barriers=byte_barriers,
            made=self.merge_made,
        )

    def merge_rank(self, left: int, right: int) -> int | None:
        """The priority of merging ``left`` and ``right`` (its place in the list), or ``None``."""
        return self.pair_merges.get((left, right))

    def merge_result(self, left: int, right: int) -> int | None:
        m = self.pair_merges.get((left, right))
        return None if m is None else self.merge_made[m]

    def token_marks(self, token_id: int) -> tuple[bool, bool]:
        if self.word_marks is None:
            return False, False
        return self.marked.token_marks(token_id)

    def initial_parts(self, piece: bytes) -> list[int]:
        if self.word_marks is None:
            return super().initial_parts(piece)
        return self.marked.initial_parts(piece)

    def rebuild(self, token_id: int) -> list[int]:
        """What merging the token's own symbols gives, at its place in a word with word marks."""
        if self.word_marks is None:
            return super().rebuild(token_id)
        return self.marked.rebuild(token_id, self.decoder[token_id])

    def piece(self, token_id: int) -> str | None:
        """The token's text as the model stores it; with word marks, spelled with them (``on</w>``)."""
        text = super().piece(token_id)
        if self.word_marks is None or text is None:
            return text
        return self.word_marks.spell(text, *self.marked.token_marks(token_id))

    def describe(self) -> str:
        marks = f", {self.word_marks.describe()}" if self.word_marks is not None else ""
        return f"pair rule (explicit merge list){marks}"


__all__ = ["ByteLevelBPE", "MergeListBPE", "RankBPE"]
