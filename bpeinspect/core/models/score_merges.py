"""Merge trees of SentencePiece-style BPE: from the file's merge list, or recovered from scores.

``.model`` files and llama.cpp's GGUF store no merges, only a score per piece: any two
adjacent symbols whose concatenation is a piece may merge, the highest score first. A
piece's parents are then found as tiktoken's are from ranks: merge the piece's own
characters with every merge but the one that makes the piece; if that ends in two parts, they
are the parents. A piece for which it does not is flagged unbuildable (with its best split).
Unlike tiktoken's ranks, scores need not order a piece after its parts (Llama's whitespace
runs score above the shorter runs they are built from), so all other merges are allowed.

>>> from bpeinspect.core.sentencepiece import SentencePieceBPE
>>> tok = SentencePieceBPE(["<unk>", "a", "b", "ab", "abb"], [2, 1, 1, 1, 1], scores=[0, -9, -9, -1, -2])
>>> tok.merge_graph.parents(4), tok.merge_graph.rank(4)
((3, 2), 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, overload

from bpeinspect.core.bpe import rank_bounds
from bpeinspect.core.merges import MergeGraph, MergeSource, best_split


class _ScoreTables(Protocol):
    """What the graph reads from a :class:`~bpeinspect.core.models.score.ScoreBPE`."""

    @property
    def explicit_merges(self) -> list[tuple[int, int]] | None: ...

    @property
    def piece_id(self) -> Mapping[str, int]: ...

    @property
    def mergeable(self) -> Mapping[str, int]: ...

    @property
    def score_rank(self) -> Mapping[str, int]: ...

    def piece(self, token_id: int) -> str | None: ...

    def kind(self, token_id: int) -> str: ...


class SentencePieceMergeGraph(MergeGraph):
    """:class:`MergeGraph` over pieces (characters at the leaves) instead of bytes."""

    def __init__(self, tok: MergeSource, model: _ScoreTables) -> None:
        self.model = model
        super().__init__(tok)

    def _compute(self, token_id: int) -> tuple[int, int] | None:
        tok, model = self.tok, self.model
        piece = model.piece(token_id)
        result: tuple[int, int] | None = None
        if tok.is_special(token_id) or piece is None or model.kind(token_id) == "byte" or len(piece) < 2:
            result = None
        elif model.explicit_merges is not None:
            self._unbuildable.add(token_id)  # no listed merge makes it
            result = best_split(piece, model.piece_id)
        else:
            ranks = model.score_rank
            # Merge the piece's own characters with every merge except the one making the piece
            # itself (which can only be the last): two parts left are its parents. Scores need
            # not grow with length (whitespace runs), so parents may rank below their child.
            bounds = rank_bounds(piece, _Without(ranks, piece)) if piece in ranks else []
            if len(bounds) == 3:
                result = (model.mergeable[piece[: bounds[1]]], model.mergeable[piece[bounds[1] :]])
            else:
                self._unbuildable.add(token_id)
                result = best_split(piece, model.mergeable)
        self._parents[token_id] = result
        return result

    def rank(self, token_id: int) -> int | None:
        p = self.parents(token_id)
        if p is None or token_id in self._unbuildable:
            return None
        return self.tok.merge_rank(*p)


class _Without:
    """A read-only view of a rank table without one key (only ``get``, all that merging reads)."""

    def __init__(self, ranks: Mapping[str, int], skip: str) -> None:
        self._ranks, self._skip = ranks, skip

    @overload
    def get(self, key: str, /) -> int | None: ...

    @overload
    def get(self, key: str, default: int, /) -> int: ...

    def get(self, key: str, default: int | None = None, /) -> int | None:
        return default if key == self._skip else self._ranks.get(key, default)
