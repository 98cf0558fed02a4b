"""SentencePiece-style BPE over characters: :class:`ScoreBPE` (see :mod:`bpeinspect.core.sentencepiece`
for the three flavours and the tokenizer built around it).

Symbols are characters of the normalized text (``▁`` for a space), not bytes; two adjacent
symbols merge while their concatenation is a piece, by score (``.model`` files, llama.cpp's
``llama``) or by the file's merge list (Hugging Face BPE with ``byte_fallback``). A character
that ends in no piece falls back to its UTF-8 bytes (``<0x41>`` pieces) or the unknown token.

>>> m = ScoreBPE(["<unk>", "▁", "h", "i", "▁h", "▁hi"], [2, 1, 1, 1, 1, 1],
...     scores=[0, -5, -6, -7, -1, -2], byte_fallback=False, unk_id=0)
>>> m.encode_piece("▁hi"), m.encode_piece("x"), m.merge_result(4, 3)
([5], [0], 5)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TypedDict, cast

import numpy as np

from bpeinspect.core.bpe import pair_encode, rank_bounds
from bpeinspect.core.models.pieces import (
    BYTE,
    KIND_NAMES,
    NORMAL,
    SPACE,
    UNUSED,
    USER_DEFINED,
    Flavour,
    byte_of_piece,
    decoded_bytes,
)
from bpeinspect.core.models.score_merges import MergeSource, SentencePieceMergeGraph
from bpeinspect.core.specials import check_tables
from bpeinspect.core.word_marks import WordMarks


def _display_all(pieces: list[str]) -> list[bytes]:
    """Each piece's UTF-8 bytes with ``▁`` as a space, converted all at once (one join, replace,
    encode and split for a whole vocabulary: faster than piece by piece), or piece by piece
    where a piece holds the NUL that keeps them apart."""
    joined = "\0".join(pieces)
    if joined.count("\0") == len(pieces) - 1:
        return joined.replace(SPACE, " ").encode("utf-8", "surrogatepass").split(b"\0")
    return [p.replace(SPACE, " ").encode("utf-8", "surrogatepass") for p in pieces]


class ScoreOptions(TypedDict, total=False):
    """The options of a :class:`ScoreBPE` that a tokenizer's factory passes on unchanged
    (their meaning and defaults: see :class:`ScoreBPE`)."""

    scores: Sequence[float] | None
    merges: Sequence[tuple[int, int]] | None
    merge_results: Sequence[int] | None
    byte_fallback: bool
    unk_id: int | None
    fuse_unk: bool
    flavour: Flavour
    ignore_merges: bool
    user_defined_in_text: bool
    newline_words: bool
    piece_ids: dict[str, int] | None


class ScoreBPE:
    """SentencePiece-style BPE: pieces (characters at the leaves) merged by score or merge list.

    ``pieces[i]`` is the text of id ``i`` as the model stores it (``▁`` for spaces, ``<0x41>``
    for a byte; ``None``: no piece has the id), ``kinds[i]`` its SentencePiece type
    (:data:`NORMAL`, :data:`BYTE`, ...). Give ``scores`` (merge by score) or ``merges`` (id
    pairs in priority order; ``merge_results``, the id each makes, when already looked up).
    ``piece_ids``: piece text -> id as a loader already built it for this flavour (llama.cpp's
    keeps the last listing of a text, the others the first). ``special_ids``: the pieces that
    are control tokens (their text is printed as it is, ``▁`` and all). ``escape_spaces``: the
    normalizer writes spaces as ``▁``, so a pre-token given as printed text is escaped the same.
    """

    byte_level = False
    missing_bytes: tuple[int, ...] = ()
    byte_barriers = False

    def __init__(  # noqa: PLR0915 (one table after another, each from the ones before)
        self,
        pieces: Sequence[str | None],
        kinds: Sequence[int] | None = None,
        *,
        scores: Sequence[float] | None = None,
        merges: Sequence[tuple[int, int]] | None = None,
        merge_results: Sequence[int] | None = None,
        byte_fallback: bool = True,
        unk_id: int | None = None,
        fuse_unk: bool = False,
        flavour: Flavour = "sentencepiece",
        ignore_merges: bool = False,
        user_defined_in_text: bool = True,
        newline_words: bool = False,
        piece_ids: dict[str, int] | None = None,
        special_ids: Collection[int] = (),
        escape_spaces: bool = False,
    ) -> None:
        if (scores is None) == (merges is None):
            raise ValueError("give either scores or merges")
        n = len(pieces)
        kinds = list(kinds) if kinds is not None else [NORMAL] * n
        if len(kinds) != n or (scores is not None and len(scores) != n):
            raise ValueError("pieces, kinds and scores differ in length")
        check_tables((0, n - 1) if n else (), {}, {})
        self.flavour: Flavour = flavour
        self.pieces = list(pieces)
        self.kinds = kinds
        self.scores = list(scores) if scores is not None else None
        self.byte_fallback, self.unk_id, self.fuse_unk = byte_fallback, unk_id, fuse_unk
        self.ignore_merges, self.newline_words, self.escape_spaces = ignore_merges, newline_words, escape_spaces
        self._specials = frozenset(special_ids)
        P = self.pieces
        texts = [p for p in P if p is not None]
        # the ids that have a piece (all of them, unless the file leaves gaps)
        present: Sequence[int] = range(n) if len(texts) == n else [i for i, p in enumerate(P) if p is not None]
        self.decoder: dict[int, bytes] = dict(zip(present, _display_all(texts)))  # id -> what the decoder prints
        kind_arr = np.array(kinds, dtype=np.int64)
        byte_pieces = [i for i in np.nonzero(kind_arr == BYTE)[0].tolist() if P[i] is not None]
        for i in byte_pieces + [i for i in self._specials if 0 <= i < n]:
            p = P[i]
            if p is not None:
                self.decoder[i] = p.encode("utf-8", "surrogatepass") if i in self._specials else decoded_bytes(p, BYTE)
        self.top_id = max(self.decoder, default=-1)
        # piece text -> id: llama.cpp's token_to_id keeps the last listing, the others the first
        if piece_ids is not None:
            self.piece_id = piece_ids
        elif flavour == "llama.cpp":
            self.piece_id = dict(zip(texts, present))
        else:
            self.piece_id = dict(zip(reversed(texts), reversed(present)))
        # byte fallback: byte -> id
        self.byte_ids: list[int | None] = [None] * 256
        for i in byte_pieces:
            b = byte_of_piece(P[i] or "")
            if b is not None and self.byte_ids[b] is None:
                self.byte_ids[b] = i
        if flavour == "llama.cpp":
            # llama.cpp falls back to the byte's own one-character token when <0xXX> is missing
            for b in range(128):
                if self.byte_ids[b] is None:
                    self.byte_ids[b] = self.piece_id.get(chr(b))
        # which pieces merging may produce, and the frozen (user-defined) ones
        frozen: list[str] = []
        if flavour == "sentencepiece":
            # all pieces but the few control, unknown and byte ones (dict copy + pops: C speed)
            self.mergeable = dict(self.piece_id)
            for i in np.nonzero(~np.isin(kind_arr, (NORMAL, USER_DEFINED, UNUSED)))[0].tolist():
                p = P[i]
                if p is not None and self.mergeable.get(p) == i:
                    del self.mergeable[p]
            if user_defined_in_text:
                frozen = [p for i in np.nonzero(kind_arr == USER_DEFINED)[0].tolist() if (p := P[i]) is not None]
        else:
            self.mergeable = self.piece_id
        self.frozen = frozenset(frozen)
        self.explicit_merges: list[tuple[int, int]] | None = None
        self.pair_merges: dict[tuple[int, int], int] | None = None  # (left, right) -> rank
        self.merge_made: list[int] = []  # rank -> the id its merge makes
        self.score_rank: dict[str, int] = {}
        if merges is not None:
            self.explicit_merges = merges if isinstance(merges, list) else list(merges)
            self.merge_made = self._merge_results(self.explicit_merges, merge_results)
            # Hugging Face keeps the last listing of a pair: built forwards, it is written last
            self.pair_merges = dict(zip(self.explicit_merges, range(len(self.explicit_merges))))
        else:
            assert scores is not None
            # dense rank of the score, highest first: equal scores tie and the leftmost pair wins
            ids = np.fromiter(self.mergeable.values(), dtype=np.int64, count=len(self.mergeable))
            sc = np.asarray(scores, dtype=np.float64)[ids]
            _, dense = np.unique(-sc, return_inverse=True)
            self.score_rank = dict(zip(self.mergeable, dense.reshape(-1).tolist()))

    def _merge_results(self, merges: list[tuple[int, int]], given: Sequence[int] | None) -> list[int]:
        """The id each merge makes; ``ValueError`` for one that makes no piece."""
        if given is not None:  # the loader looked them up already
            if len(given) != len(merges):
                raise ValueError("merge_results does not match the merges")
            return list(given)
        P, get, n = self.pieces, self.piece_id.get, len(self.pieces)
        try:
            news = [get(cast(str, P[a]) + cast(str, P[b])) for a, b in merges]  # a None piece: TypeError
        except (TypeError, IndexError):
            news = [
                None
                if not (0 <= a < n and 0 <= b < n and P[a] is not None and P[b] is not None)
                else get(cast(str, P[a]) + cast(str, P[b]))
                for a, b in merges
            ]
        if None in news:
            rank = news.index(None)
            raise ValueError(f"merge {rank} {tuple(merges[rank])} makes a token that is not in the vocabulary")
        return cast(list[int], news)  # no None left

    # -- the token table --------------------------------------------------------------------------

    def add_special_tokens(self, special: Mapping[str, int], added: Mapping[str, int]) -> None:
        """Give the special and added tokens without a piece their text in :attr:`decoder`."""
        for s, i in (*special.items(), *added.items()):
            if i not in self.decoder:
                self.decoder[i] = s.encode("utf-8")
        self.top_id = max([self.top_id, *special.values(), *added.values()])

    @functools.cached_property
    def ranks(self) -> dict[bytes, int]:
        """Display bytes -> first id (lookups by text; built when first asked for)."""
        specials = self._specials
        return {b: i for i, b in reversed(self.decoder.items()) if i not in specials}

    def piece(self, token_id: int) -> str | None:
        """The token's text as the model stores it (``▁hello``, ``<0x0A>``), or ``None``."""
        return self.pieces[token_id] if 0 <= token_id < len(self.pieces) else None

    def kind(self, token_id: int) -> str:
        """``normal``, ``byte``, ``control``, ``user-defined``, ``unused`` or ``unknown``."""
        return KIND_NAMES.get(self.kinds[token_id], "normal") if 0 <= token_id < len(self.kinds) else "control"

    def leaf_label(self, token_id: int, special: bool) -> str:
        """What a token that no merge makes is: a byte fallback, a character, special..."""
        kind = self.kind(token_id)
        if kind == "byte":
            return "byte fallback"
        if kind in ("control", "unknown") or special:
            return "special"
        p = self.piece(token_id)
        return "character" if p is not None and len(p) == 1 else kind

    def normalized_lengths(self, decoder: Mapping[int, bytes], others: Collection[int]) -> Callable[[int], int]:
        """Bytes of normalized text each token stands for (``▁`` counts 3, a byte token 1);
        ``others`` (special and added tokens) their own text's."""
        out = {}
        for i in decoder:
            p = self.piece(i)
            if i in others or p is None:
                out[i] = len(decoder[i])
            elif self.kinds[i] == BYTE and byte_of_piece(p) is not None:
                out[i] = 1
            else:
                out[i] = len(p.encode("utf-8", "surrogatepass"))
        return out.__getitem__

    # -- merges -------------------------------------------------------------------------------------

    uses_rank_rule = False

    @property
    def merge_source(self) -> str:
        """Where merge order and trees come from: the file's merge list or the pieces' scores."""
        return "the file's merge list" if self.explicit_merges is not None else "recovered from the scores"

    def merge_rank(self, left: int, right: int) -> int | None:
        if self.pair_merges is not None:
            return self.pair_merges.get((left, right))
        pa, pb = self.piece(left), self.piece(right)
        if pa is None or pb is None:
            return None
        return self.score_rank.get(pa + pb)

    def merge_result(self, left: int, right: int) -> int | None:
        if self.pair_merges is not None:
            m = self.pair_merges.get((left, right))
            return None if m is None else self.merge_made[m]
        pa, pb = self.piece(left), self.piece(right)
        if pa is None or pb is None or (pa + pb) not in self.score_rank:
            return None
        return self.mergeable[pa + pb]

    def merge_graph(self, tok: MergeSource) -> SentencePieceMergeGraph:
        return SentencePieceMergeGraph(tok, self)

    def describe(self) -> str:
        """One line for ``info`` and the pane: what kind of model this is."""
        fb = "byte fallback" if self.byte_fallback else "no byte fallback"
        return f"SentencePiece-style BPE ({self.flavour}), merges {self.merge_source}, {fb}"

    # -- encoding ---------------------------------------------------------------------------------

    def _fallback(self, text: str) -> list[int]:
        """Ids for text that no piece covers: its bytes, or the unknown token."""
        if self.byte_fallback:
            ids = [self.byte_ids[b] for b in text.encode("utf-8", "surrogatepass")]
            if None not in ids:
                return cast(list[int], ids)
        if self.unk_id is None:
            return []
        return [self.unk_id]

    def encode_piece(self, piece: str) -> list[int]:
        """Ids of one normalized pre-token (``▁hi``)."""
        if piece in self.frozen:
            return [self.piece_id[piece]]
        if self.pair_merges is not None:
            return self._encode_pairs(piece, self.pair_merges)
        bounds = rank_bounds(piece, self.score_rank)
        out: list[int] = []
        get = self.mergeable.get
        for a, b in zip(bounds, bounds[1:]):
            part = piece[a:b]
            t = get(part)
            if t is None and self.flavour == "llama.cpp":
                t = self.piece_id.get(part)
            if t is None:
                fb = self._fallback(part)
                # sentencepiece turns a run of unknown characters into one unknown piece
                if self.flavour == "sentencepiece" and fb == [self.unk_id] and out and out[-1] == self.unk_id:
                    continue
                out.extend(fb)
            else:
                out.append(t)
        return out

    def _encode_pairs(self, piece: str, pair_merges: dict[tuple[int, int], int]) -> list[int]:
        get = self.piece_id.get
        if self.ignore_merges or (self.newline_words and not piece.strip("\n")):
            t = get(piece)
            if t is not None:
                return [t]
        ids: list[int] = []
        unk = self.unk_id
        for ch in piece:
            t = get(ch)
            if t is not None:
                ids.append(t)
                continue
            fb = self._fallback(ch)
            if self.fuse_unk and fb == [unk] and ids and ids[-1] == unk:
                continue
            ids.extend(fb)
        return pair_encode(ids, pair_merges, self.merge_made)

    word_marks: WordMarks | None = None  # word marks are a byte-level option (MergeListBPE's)

    def token_marks(self, token_id: int) -> tuple[bool, bool]:
        """``(continues, ends)``: no word marks here."""
        return False, False

    def rebuild(self, token_id: int) -> list[int]:
        """What merging the token's own text as one pre-token gives."""
        return self.piece_ids(self.decoder[token_id])

    def piece_ids(self, piece: str | bytes) -> list[int]:
        """Ids of one pre-token, given normalized (``▁hi``) or as the decoder prints it (`` hi``)."""
        if isinstance(piece, bytes):
            data = piece
            try:
                piece = data.decode("utf-8")
            except UnicodeDecodeError:
                return [i for b in data if (i := self.byte_ids[b]) is not None]
        if self.escape_spaces:
            piece = piece.replace(" ", SPACE)
        return list(self.encode_piece(piece))

    def initial_parts(self, piece: bytes) -> list[int]:
        """The symbols merging starts from: one per character, or its byte tokens."""
        text = piece.decode("utf-8", "replace")
        if self.escape_spaces:
            text = text.replace(" ", SPACE)
        out: list[int] = []
        for ch in text:
            t = self.piece_id.get(ch)
            out.extend([t] if t is not None else self._fallback(ch))
        return out


__all__ = ["ScoreBPE"]
