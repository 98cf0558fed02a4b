"""The one contract every model keeps (see :mod:`bpeinspect.core.models`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Protocol

from bpeinspect.core.merges import MergeGraph, MergeSource
from bpeinspect.core.word_marks import WordMarks


class Model(Protocol):
    """A BPE model: turns one pre-token into ids, and says how its tokens are merged."""

    byte_level: bool  # pre-tokens are merged as UTF-8 bytes (else as normalized characters)
    decoder: dict[int, bytes]  # id -> what the decoder prints; the tokenizer's id table
    top_id: int  # the highest id (special and added tokens counted once added)
    missing_bytes: tuple[int, ...]  # single bytes without a token (dropped from text)
    byte_barriers: bool
    ignore_merges: bool

    @property
    def uses_rank_rule(self) -> bool: ...  # the merge priority is the id (tiktoken)

    @property
    def merge_source(self) -> str: ...  # where merge order comes from, as a phrase

    @property
    def explicit_merges(self) -> Sequence[tuple[int, int]] | None: ...  # the file's merge list, if any

    @property
    def ranks(self) -> Mapping[bytes, int]: ...  # token bytes -> id (special tokens left out)

    def encode_piece(self, piece: Any) -> list[int]:
        """The hot path: the pre-token cache calls it on a miss (bytes, or text if not byte_level)."""
        ...

    def add_special_tokens(self, special: Mapping[str, int], added: Mapping[str, int]) -> None: ...

    def piece_ids(self, piece: str | bytes) -> list[int]: ...

    def initial_parts(self, piece: bytes) -> list[int]: ...

    def merge_rank(self, left: int, right: int) -> int | None: ...

    def merge_result(self, left: int, right: int) -> int | None: ...

    def merge_graph(self, tok: MergeSource) -> MergeGraph: ...

    def leaf_label(self, token_id: int, special: bool) -> str: ...

    def kind(self, token_id: int) -> str: ...

    def piece(self, token_id: int) -> str | None: ...

    def normalized_lengths(self, decoder: Mapping[int, bytes], others: Collection[int]) -> Callable[[int], int]: ...

    def describe(self) -> str: ...

    # word marks (MergeListBPE's option): where a token sits in its word, and what its own
    # symbols merge into there
    word_marks: WordMarks | None
    unk_id: int | None

    def token_marks(self, token_id: int) -> tuple[bool, bool]: ...

    def rebuild(self, token_id: int) -> list[int]: ...


__all__ = ["Model"]
