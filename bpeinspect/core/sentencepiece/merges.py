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

import weakref
from typing import TYPE_CHECKING

from bpeinspect.core.bpe import rank_bounds
from bpeinspect.core.merges import MergeGraph, best_split

if TYPE_CHECKING:
    from bpeinspect.core.sentencepiece.model import SentencePieceBPE


class SentencePieceMergeGraph(MergeGraph):
    """:class:`MergeGraph` over pieces (characters at the leaves) instead of bytes."""

    def __init__(self, tok: SentencePieceBPE) -> None:  # noqa: D107 (the base's state, without its byte rules)
        self.tok = weakref.proxy(tok)
        self._parents = {}
        self._unbuildable = set()
        self._children = None
        self._complete = False
        if tok._explicit_merges is not None:
            for a, b in tok._explicit_merges:
                new = tok.merge_result(a, b)
                if new is not None and new not in self._parents:
                    self._parents[new] = (a, b)

    def _compute(self, token_id: int) -> tuple[int, int] | None:
        tok = self.tok
        piece = tok._piece(token_id)
        result: tuple[int, int] | None = None
        if tok.is_special(token_id) or piece is None or tok.kind(token_id) == "byte" or len(piece) < 2:
            result = None
        elif tok._explicit_merges is not None:
            self._unbuildable.add(token_id)  # no listed merge makes it
            result = best_split(piece, tok._piece_id)
        else:
            ranks = tok._score_rank
            # Merge the piece's own characters with every merge except the one making the piece
            # itself (which can only be the last): two parts left are its parents. Scores need
            # not grow with length (whitespace runs), so parents may rank below their child.
            bounds = rank_bounds(piece, _Without(ranks, piece)) if piece in ranks else []  # type: ignore[arg-type]
            if len(bounds) == 3:
                result = (tok._mergeable[piece[: bounds[1]]], tok._mergeable[piece[bounds[1] :]])
            else:
                self._unbuildable.add(token_id)
                result = best_split(piece, tok._mergeable)
        self._parents[token_id] = result
        return result

    def rank(self, token_id: int) -> int | None:
        p = self.parents(token_id)
        if p is None or token_id in self._unbuildable:
            return None
        return self.tok.merge_rank(*p)


class _Without:
    """A read-only view of a rank table without one key."""

    def __init__(self, ranks: dict[str, int], skip: str) -> None:
        self._ranks, self._skip = ranks, skip

    def get(self, key: str, default: int | None = None) -> int | None:
        return default if key == self._skip else self._ranks.get(key, default)
