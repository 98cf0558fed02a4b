"""The :class:`SentencePieceBPE` tokenizer (see :mod:`bpeinspect.core.sentencepiece`)."""


from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any, Literal

import numpy as np

from bpeinspect.core.aligned import build_aligned_encoding
from bpeinspect.core.bpe import PieceCache, pair_encode, rank_bounds
from bpeinspect.core.encoding import Encoding
from bpeinspect.core.normalize import Normalizer
from bpeinspect.core.sentencepiece.boundaries import boundary_rule
from bpeinspect.core.sentencepiece.pieces import (
    BYTE,
    KIND_NAMES,
    NORMAL,
    SPACE,
    UNUSED,
    USER_DEFINED,
    Flavour,
    byte_of_piece,
    display_bytes,
)
from bpeinspect.core.specials import PLAIN, AddedOptions, check_tables
from bpeinspect.core.split.rules import SplitRule, compile_pattern
from bpeinspect.core.text import fix_surrogates
from bpeinspect.core.tokenizer import Tokenizer

_CACHE_LIMIT = 1 << 20


def _display_all(pieces: list[str]) -> list[bytes]:
    """Each piece's UTF-8 bytes with ``▁`` as a space, converted all at once (one join, replace,
    encode and split for a whole vocabulary: faster than piece by piece), or piece by piece
    where a piece holds the NUL that keeps them apart."""
    joined = "\0".join(pieces)
    if joined.count("\0") == len(pieces) - 1:
        return joined.replace(SPACE, " ").encode("utf-8", "surrogatepass").split(b"\0")
    return [p.replace(SPACE, " ").encode("utf-8", "surrogatepass") for p in pieces]


class SentencePieceBPE(Tokenizer):
    """A SentencePiece-style BPE tokenizer (see the module docstring for the three flavours).

    ``pieces[i]`` is the text of id ``i`` as the model stores it (``▁`` for spaces, ``<0x41>``
    for a byte), ``kinds[i]`` its SentencePiece type (:data:`NORMAL`, :data:`BYTE`, ...).
    Give ``scores`` (merge by score) or ``merges`` (id pairs in priority order).
    ``piece_ids``: piece text -> id as a loader already built it for this flavour (llama.cpp's
    keeps the last listing of a text, the others the first), not rebuilt here.
    """

    byte_level = False

    def __init__(  # noqa: PLR0915
        self,
        pieces: Sequence[str | None],
        kinds: Sequence[int] | None = None,
        *,
        scores: Sequence[float] | None = None,
        merges: Sequence[tuple[int, int]] | None = None,
        merge_results: Sequence[int] | None = None,
        normalizer: Normalizer | None = None,
        first_normalizer: Normalizer | None = None,
        special_tokens: Mapping[str, int] | None = None,
        added_tokens: Mapping[str, int] | None = None,
        added_options: Mapping[str, AddedOptions] | None = None,
        added_normalizer: Normalizer | None = None,
        byte_fallback: bool = True,
        unk_id: int | None = None,
        fuse_unk: bool = False,
        flavour: Flavour = "sentencepiece",
        strip_leading_space: bool = False,
        ignore_merges: bool = False,
        user_defined_in_text: bool = True,
        split_before_space: bool = False,
        newline_words: bool = False,
        piece_ids: dict[str, int] | None = None,
        name: str = "",
        source: str = "",
    ) -> None:
        if (scores is None) == (merges is None):
            raise ValueError("give either scores or merges")
        n = len(pieces)
        kinds = list(kinds) if kinds is not None else [NORMAL] * n
        if len(kinds) != n or (scores is not None and len(scores) != n):
            raise ValueError("pieces, kinds and scores differ in length")
        self.name, self.source, self.training = name, source, None
        self.flavour: Flavour = flavour
        self.pieces = list(pieces)
        self.kinds = kinds
        self.scores = list(scores) if scores is not None else None
        # The first segment of a text (or the only one) may get a different normalizer:
        # Hugging Face's Metaspace prepends ▁ only there ("first" scheme).
        self.normalizer = first_normalizer if first_normalizer is not None else normalizer
        self._rest_normalizer = normalizer
        self.special_tokens = dict(special_tokens or {})
        # added, not special (HF "special": false, GGUF user-defined): always cut out of the text
        self.added_tokens = dict(added_tokens or {})
        check_tables((0, n - 1) if n else (), self.special_tokens, self.added_tokens)
        # Hugging Face's lstrip/rstrip/single_word/normalized (see Tokenizer._segments)
        self.added_options = {w: o for w, o in (added_options or {}).items() if o != PLAIN}
        self.added_normalizer = added_normalizer
        self.byte_fallback = byte_fallback
        self.unk_id = unk_id
        self.fuse_unk = fuse_unk
        self.strip_leading_space = strip_leading_space
        self.ignore_merges = ignore_merges
        specials = set(self.special_tokens.values())
        P = self.pieces
        present = [i for i, p in enumerate(P) if p is not None] if None in P else range(n)
        # id -> what the decoder prints
        self._decoder: dict[int, bytes] = dict(
            zip(present, _display_all(P if isinstance(present, range) else list(map(P.__getitem__, present))))  # type: ignore[arg-type]
        )
        kind_arr = np.array(kinds, dtype=np.int64)
        byte_pieces = [i for i in np.nonzero(kind_arr == BYTE)[0].tolist() if P[i] is not None]
        for i in byte_pieces + [i for i in specials if 0 <= i < n and P[i] is not None]:
            p = P[i]
            self._decoder[i] = p.encode("utf-8", "surrogatepass") if i in specials else display_bytes(p, BYTE)  # type: ignore[union-attr,arg-type]
        for s, i in (*self.special_tokens.items(), *self.added_tokens.items()):
            if i not in self._decoder:
                self._decoder[i] = s.encode("utf-8")
        # piece text -> id: llama.cpp's token_to_id keeps the last listing, the others the first
        self._piece_id: dict[str, int]
        if piece_ids is not None:
            self._piece_id = piece_ids
        elif isinstance(present, range):  # no gaps: no index list to build
            last = flavour == "llama.cpp"
            self._piece_id = dict(zip(P, present) if last else zip(reversed(P), reversed(present)))  # type: ignore[arg-type]
        else:
            order = present if flavour == "llama.cpp" else present[::-1]
            self._piece_id = dict(zip(map(P.__getitem__, order), order))  # type: ignore[arg-type]
        self.n_vocab = max(self._decoder) + 1 if self._decoder else 0
        # byte fallback: byte -> id
        self._byte_ids: list[int | None] = [None] * 256
        for i in byte_pieces:
            b = byte_of_piece(self.pieces[i])  # type: ignore[arg-type]
            if b is not None and self._byte_ids[b] is None:
                self._byte_ids[b] = i
        if flavour == "llama.cpp":
            # llama.cpp falls back to the byte's own one-character token when <0xXX> is missing
            for b in range(128):
                if self._byte_ids[b] is None:
                    self._byte_ids[b] = self._piece_id.get(chr(b))
        # which pieces merging may produce, and the frozen (user-defined) ones
        if flavour == "sentencepiece":
            # all pieces but the few control, unknown and byte ones (dict copy + pops: C speed)
            self._mergeable = dict(self._piece_id)
            for i in np.nonzero(~np.isin(kind_arr, (NORMAL, USER_DEFINED, UNUSED)))[0].tolist():
                if P[i] is not None and self._mergeable.get(P[i]) == i:
                    del self._mergeable[P[i]]
            ud = np.nonzero(kind_arr == USER_DEFINED)[0].tolist() if user_defined_in_text else []
            frozen = [P[i] for i in ud if P[i] is not None]
        else:
            self._mergeable = self._piece_id
            frozen = []
        self._frozen = frozenset(frozen)
        self._explicit_merges: list[tuple[int, int]] | None = None
        self._pair_merges: dict[tuple[int, int], int] | None = None  # (left, right) -> rank
        self._merge_made: list[int] = []  # rank -> the id its merge makes
        self._score_rank: dict[str, int] = {}
        if merges is not None:
            em = merges if isinstance(merges, list) else list(merges)
            P, get = self.pieces, self._piece_id.get
            try:
                if merge_results is not None:  # the loader looked them up already
                    news = list(merge_results)
                    if len(news) != len(em):
                        raise ValueError("merge_results does not match the merges")
                else:
                    news = [get(P[a] + P[b]) for a, b in em]  # type: ignore[operator]
            except (TypeError, IndexError):
                news = [None if not (0 <= a < n and 0 <= b < n and P[a] is not None and P[b] is not None)
                        else get(P[a] + P[b]) for a, b in em]  # type: ignore[operator]
            if None in news:
                rank = news.index(None)
                raise ValueError(f"merge {rank} {tuple(em[rank])} makes a token that is not in the vocabulary")
            self._explicit_merges = em
            # Hugging Face keeps the last listing of a pair: built forwards, it is written last
            self._pair_merges = dict(zip(em, range(len(em))))
            self._merge_made = news  # type: ignore[assignment]
        else:
            assert scores is not None
            # dense rank of the score, highest first: equal scores tie and the leftmost pair wins
            ids = np.fromiter(self._mergeable.values(), dtype=np.int64, count=len(self._mergeable))
            sc = np.asarray(scores, dtype=np.float64)[ids]
            _, dense = np.unique(-sc, return_inverse=True)
            self._score_rank = dict(zip(self._mergeable, dense.reshape(-1).tolist()))
        if split_before_space:  # Metaspace(split=true): every ▁ starts a word
            self.split_rule = SplitRule.from_pattern(f"{SPACE}[^{SPACE}]*|[^{SPACE}]+", name="Metaspace words")
        else:
            self.split_rule = boundary_rule(self._mergeable, sorted(self._frozen), newline_words)
        self._newline_words = newline_words
        # the rule's one pattern covers the whole text, so findall gives every pre-token
        self._findall = compile_pattern(self.split_rule.splits[0].pattern).findall  # bounded in time
        self._cache = PieceCache(self._encode_normalized_piece, as_text=True)

    # -- vocabulary -----------------------------------------------------------------------------

    @functools.cached_property
    def _ranks(self) -> dict[bytes, int]:  # type: ignore[override]
        """Display bytes -> first id (lookups by text; built when first asked for)."""
        specials = self._special_ids
        return {b: i for i, b in reversed(self._decoder.items()) if i not in specials}

    def _piece(self, token_id: int) -> str | None:
        return self.pieces[token_id] if 0 <= token_id < len(self.pieces) else None

    def piece(self, token_id: int) -> str:
        """The token's text as the model stores it (``▁hello``, ``<0x0A>``)."""
        p = self._piece(token_id)
        if p is None:
            return self.token_bytes(token_id).decode("utf-8", "replace")
        return p

    def kind(self, token_id: int) -> str:
        """``normal``, ``byte``, ``control``, ``user-defined``, ``unused`` or ``unknown``."""
        if token_id in self._special_ids and not (0 <= token_id < len(self.kinds)):
            return "control"
        return KIND_NAMES.get(self.kinds[token_id], "normal") if 0 <= token_id < len(self.kinds) else "control"

    def leaf_label(self, token_id: int) -> str:
        kind = self.kind(token_id)
        if kind == "byte":
            return "byte fallback"
        if kind in ("control", "unknown") or self.is_special(token_id):
            return "special"
        p = self._piece(token_id)
        return "character" if p is not None and len(p) == 1 else kind

    @property
    def uses_rank_rule(self) -> bool:
        return False

    @property
    def merge_source(self) -> str:
        """Where merge order and trees come from: the file's merge list or the pieces' scores."""
        return "the file's merge list" if self._explicit_merges is not None else "recovered from the scores"

    @property
    def merges(self) -> list[tuple[int, int]]:
        if self._explicit_merges is not None:
            return list(self._explicit_merges)
        return self.merge_graph.merge_list()

    @functools.cached_property
    def merge_graph(self):  # -> MergeGraph
        from bpeinspect.core.sentencepiece.merges import SentencePieceMergeGraph

        return SentencePieceMergeGraph(self)

    def merge_rank(self, left: int, right: int) -> int | None:
        if self._pair_merges is not None:
            return self._pair_merges.get((left, right))
        pa, pb = self._piece(left), self._piece(right)
        if pa is None or pb is None:
            return None
        return self._score_rank.get(pa + pb)

    def merge_result(self, left: int, right: int) -> int | None:
        if self._pair_merges is not None:
            m = self._pair_merges.get((left, right))
            return None if m is None else self._merge_made[m]
        pa, pb = self._piece(left), self._piece(right)
        if pa is None or pb is None or (pa + pb) not in self._score_rank:
            return None
        return self._mergeable[pa + pb]

    # -- encoding --------------------------------------------------------------------------------

    def _fallback(self, text: str) -> list[int]:
        """Ids for text that no piece covers: its bytes, or the unknown token."""
        if self.byte_fallback:
            ids = [self._byte_ids[b] for b in text.encode("utf-8", "surrogatepass")]
            if None not in ids:
                return ids  # type: ignore[return-value]
        if self.unk_id is None:
            return []
        return [self.unk_id]

    def _encode_normalized_piece(self, piece: str) -> list[int]:
        if piece in self._frozen:
            return [self._piece_id[piece]]
        if self._pair_merges is not None:
            return self._encode_pairs(piece)
        bounds = rank_bounds(piece, self._score_rank)  # type: ignore[arg-type]
        out: list[int] = []
        get = self._mergeable.get
        for a, b in zip(bounds, bounds[1:]):
            part = piece[a:b]
            t = get(part)
            if t is None and self.flavour == "llama.cpp":
                t = self._piece_id.get(part)
            if t is None:
                fb = self._fallback(part)
                # sentencepiece turns a run of unknown characters into one unknown piece
                if self.flavour == "sentencepiece" and fb == [self.unk_id] and out and out[-1] == self.unk_id:
                    continue
                out.extend(fb)
            else:
                out.append(t)
        return out

    def _encode_pairs(self, piece: str) -> list[int]:
        get = self._piece_id.get
        if self.ignore_merges or (self._newline_words and not piece.strip("\n")):
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
        return pair_encode(ids, self._pair_merges, self._merge_made)  # type: ignore[arg-type]

    def _normalize(self, text: str, first: bool) -> str:
        norm = self.normalizer if first else self._rest_normalizer
        return norm.normalize(text) if norm is not None else text

    def _normalize_aligned(self, text: str, first: bool):
        norm = self.normalizer if first else self._rest_normalizer
        return norm.normalize_aligned(text) if norm is not None else (text, None, None)

    def _encode_ordinary_fixed(self, text: str, first: bool = True) -> list[int]:
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        return list(chain.from_iterable(map(cache.__getitem__, self._findall(self._normalize(text, first)))))

    def _spans(self, text: str) -> list[tuple[int, int]]:
        ends = list(accumulate(map(len, self._findall(text))))
        return list(zip([0, *ends[:-1]], ends))

    def pre_tokens(self, text: str) -> list[str]:
        """The normalized pre-tokens of ``text`` (special tokens not recognised)."""
        return self._findall(self._normalize(fix_surrogates(text), True))

    def encode_piece(self, piece: str | bytes) -> list[int]:
        """Ids of one pre-token, given normalized (``▁hi``) or as the decoder prints it (`` hi``)."""
        if isinstance(piece, bytes):
            try:
                piece = piece.decode("utf-8")
            except UnicodeDecodeError:
                return [i for b in piece for i in ([self._byte_ids[b]] if self._byte_ids[b] is not None else [])]
        piece = fix_surrogates(piece)
        if self._escapes_spaces:
            piece = piece.replace(" ", SPACE)
        return list(self._encode_normalized_piece(piece))

    @functools.cached_property
    def _escapes_spaces(self) -> bool:
        norm = self._rest_normalizer or self.normalizer
        return norm is not None and norm.normalize(" x") != " x" and SPACE in norm.normalize("a b")

    def initial_parts(self, piece: bytes) -> list[int]:
        """The symbols merging starts from: one per character, or its byte tokens."""
        text = piece.decode("utf-8", "replace")
        if self._escapes_spaces:
            text = text.replace(" ", SPACE)
        out: list[int] = []
        for ch in text:
            t = self._piece_id.get(ch)
            out.extend([t] if t is not None else self._fallback(ch))
        return out

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Any = "all",
        should_stop: Any = None,
    ) -> Encoding:
        text = fix_surrogates(text)
        allowed = self._allowed(allowed_special)
        segments = self._segments(text, allowed) if allowed or self.added_tokens else [(text, None)]
        firsts, pos = [], 0
        for seg, cut in segments:
            if cut is None:
                firsts.append(pos == 0)  # only a segment that starts the text is "first"
            pos += len(seg)
        first = iter(firsts)
        return build_aligned_encoding(
            self,
            text,
            segments,
            normalize_aligned=lambda seg: self._normalize_aligned(seg, next(first)),
            pieces_of=self._spans,
            encode_piece=self._cache.__getitem__,
            token_nlen=self._nlens.__getitem__,
            should_stop=should_stop,
        )

    @functools.cached_property
    def _nlens(self) -> dict[int, int]:
        """Bytes of normalized text each token stands for (``▁`` counts 3, a byte token 1)."""
        out = {}
        for i in self._decoder:
            p = self._piece(i)
            if i in self._special_ids or i in self._added_ids or p is None:
                out[i] = len(self._decoder[i])
            elif self.kinds[i] == BYTE and byte_of_piece(p) is not None:
                out[i] = 1
            else:
                out[i] = len(p.encode("utf-8", "surrogatepass"))
        return out

    def count_pieces(self, pieces: Iterable[str]) -> int:
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        return sum(map(len, map(cache.__getitem__, pieces)))

    # -- decoding ----------------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of a sequence of tokens, without the space the dummy prefix added."""
        data = super().decode_bytes(ids)
        if self.strip_leading_space and data.startswith(b" "):
            data = data[1:]
        return data

    def describe_model(self) -> str:
        """One line for ``info`` and the pane: what kind of model this is."""
        fb = "byte fallback" if self.byte_fallback else "no byte fallback"
        return f"SentencePiece-style BPE ({self.flavour}), merges {self.merge_source}, {fb}"


__all__ = ["SentencePieceBPE"]
