"""The :class:`Tokenizer`: normalizer -> pre-tokenizer -> model -> decoder.

A tokenizer is composed of parts, each with one job (as Hugging Face ``tokenizers`` is):

* the **normalizer** rewrites the text first (NFC, SentencePiece's ``▁``...; none for most);
* the **pre-tokenizer** (:mod:`bpeinspect.core.pretokenizer`) cuts out special and added
  tokens, then cuts the rest into pre-tokens with the split rule;
* the **model** (:mod:`bpeinspect.core.models`) turns each pre-token into ids: rank BPE,
  merge-list BPE or score BPE;
* the **decoder** (:mod:`bpeinspect.core.decoder`) finishes the tokens' joined bytes.

``Tokenizer(ranks, ...)`` builds a byte-level one from a vocabulary; :meth:`Tokenizer.compose`
puts any parts together (:func:`~bpeinspect.core.sentencepiece.SentencePieceBPE` does, for
SentencePiece-style models).

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("cl100k_base")
>>> tok.encode("hello world")
[15339, 1917]
>>> tok.decode([15339, 1917])
'hello world'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from itertools import chain
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from bpeinspect.core.aligned import Aligned, build_aligned_encoding
from bpeinspect.core.bpe import PairMerges, PieceCache, minbpe_ranks
from bpeinspect.core.decoder import PLAIN_DECODER, Decoder
from bpeinspect.core.encoding import Encoding, build_encoding, encoding_from_ids, tiled_ids, token_lengths
from bpeinspect.core.errors import DisallowedSpecialError, UnknownTokenError
from bpeinspect.core.memory import QUIET_CHARS, quiet_gc
from bpeinspect.core.merges import MergeGraph
from bpeinspect.core.models import MergeListBPE, Model, RankBPE
from bpeinspect.core.normalize import Normalizer
from bpeinspect.core.pretokenizer import PreTokenizer
from bpeinspect.core.specials import AddedOptions, check_disallowed, missing_regex
from bpeinspect.core.split.cuts import cut_text
from bpeinspect.core.split.rules import SplitRule, resolve_rule
from bpeinspect.core.text import fix_surrogates
from bpeinspect.core.word_marks import WordMarks

if TYPE_CHECKING:
    import numpy as np

_CACHE_LIMIT = 1 << 20  # pieces; cleared when full so odd input cannot grow it forever
_SLICE = 1 << 20  # characters; texts over four slices are split a slice at a time


@dataclass
class TrainingInfo:
    """How a trained tokenizer was made: settings and, per merge, the pair and its count."""

    settings: dict[str, Any] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)


class Tokenizer:
    """A BPE tokenizer: a normalizer, a pre-tokenizer, a model and a decoder (see the module).

    This constructor builds a byte-level one. ``ranks`` maps every mergeable token's bytes to
    its id. With ``merges=None`` the id is also the merge priority (tiktoken's rank rule,
    :class:`~bpeinspect.core.models.RankBPE`); with an explicit merge list (pairs of ids, in
    priority order) only those merges apply (the pair rule of Hugging Face, minbpe and
    llama.cpp, :class:`~bpeinspect.core.models.MergeListBPE`).

    ``special_tokens`` (control tokens) are recognised in text only when the caller allows
    them; ``added_tokens`` (Hugging Face ``special: false``, GGUF ``USER_DEFINED``) are always
    cut out of the text before BPE, in ordinary encoding too, as Hugging Face and llama.cpp do.

    A single byte without a token (real vocabularies leave out bytes that valid UTF-8 never
    holds, and some control bytes) is dropped from the text it occurs in, as Hugging Face
    ``tokenizers`` and llama.cpp drop it; :attr:`missing_bytes` lists them. Hugging Face drops it
    before merging; llama.cpp after (``byte_barriers``), so no merge joins its neighbours.

    >>> t = Tokenizer.from_merges([(104, 105)], pattern=None)
    >>> t.encode("hihi")
    [256, 256]
    """

    model: Model
    pre_tokenizer: PreTokenizer
    # applied to the text between special tokens before splitting (NFC for Qwen, ...):
    # ``normalizer`` to a text's first segment, ``rest_normalizer`` to the ones after a special
    # or added token (they differ where Hugging Face's Metaspace prepends ▁ only to the first)
    normalizer: Normalizer | None
    rest_normalizer: Normalizer | None
    decoder: Decoder
    # what the load of its file noted (a part of the file left out, a merge list that looks
    # truncated): one line each, naming the file, for the window or the CLI to show
    load_notes: tuple[str, ...] = ()

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        *,
        pattern: str | SplitRule | None = "cl100k",
        special_tokens: Mapping[str, int] | None = None,
        merges: Sequence[tuple[int, int]] | None = None,
        ignore_merges: bool = False,
        name: str = "",
        source: str = "",
        training: TrainingInfo | None = None,
        normalizer: Normalizer | None = None,
        added_tokens: Mapping[str, int] | None = None,
        assumed: Mapping[str, str] | None = None,
        inferred: Mapping[str, str] | None = None,
        merge_results: Sequence[int] | None = None,
        added_options: Mapping[str, AddedOptions] | None = None,
        duplicate_merges: Literal["first", "last"] = "first",  # a pair listed twice: which listing wins
        byte_barriers: bool = False,  # a byte without a token parts its neighbours (llama.cpp)
        word_marks: WordMarks | None = None,  # Hugging Face's end_of_word_suffix / continuing_subword_prefix
        unk_id: int | None = None,  # with word marks: the id of a symbol the vocabulary lacks (else dropped)
        should_stop: Callable[[], bool] | None = None,  # asked while the tables are built (Cancelled)
    ) -> None:
        rule = resolve_rule(pattern)
        model: Model
        if merges is None:
            if word_marks:
                raise ValueError(f"a model with word marks ({word_marks.describe()}) needs its merge list")
            model = RankBPE(ranks, ignore_merges=ignore_merges, byte_barriers=byte_barriers, should_stop=should_stop)
        else:
            model = MergeListBPE(
                ranks,
                merges,
                merge_results=merge_results,
                duplicate_merges=duplicate_merges,
                ignore_merges=ignore_merges,
                byte_barriers=byte_barriers,
                word_marks=word_marks,
                unk_id=unk_id,
                should_stop=should_stop,
            )
        pre = PreTokenizer(
            rule,
            special_tokens=special_tokens,
            added_tokens=added_tokens,
            added_options=added_options,
            added_normalizer=normalizer,
        )
        self._assemble(
            model,
            pre,
            normalizer=normalizer,
            name=name,
            source=source,
            training=training,
            assumed=assumed,
            inferred=inferred,
            decoder=Decoder(word_marks=word_marks) if word_marks else PLAIN_DECODER,
        )

    @classmethod
    def compose(
        cls,
        model: Model,
        pre_tokenizer: PreTokenizer,
        *,
        normalizer: Normalizer | None = None,
        first_normalizer: Normalizer | None = None,
        decoder: Decoder = PLAIN_DECODER,
        name: str = "",
        source: str = "",
        training: TrainingInfo | None = None,
        assumed: Mapping[str, str] | None = None,
        inferred: Mapping[str, str] | None = None,
    ) -> Tokenizer:
        """A tokenizer of these parts. ``normalizer`` rewrites the text between special and added
        tokens; ``first_normalizer``, if given, the text's first segment instead.
        The model belongs to this tokenizer from now on: its :attr:`~Model.decoder` becomes the
        tokenizer's id table, with the special and added tokens written into it.

        >>> from bpeinspect.core.models import RankBPE
        >>> from bpeinspect.core.split.rules import resolve_rule
        >>> model = RankBPE({bytes([b]): b for b in range(256)} | {b"hi": 256})
        >>> tok = Tokenizer.compose(model, PreTokenizer(resolve_rule("gpt2"), special_tokens={"<s>": 257}))
        >>> tok.encode("hi<s>", allowed_special="all"), tok.n_vocab
        ([256, 257], 258)
        """
        tok = cls.__new__(cls)
        tok._assemble(
            model,
            pre_tokenizer,
            normalizer=normalizer,
            first_normalizer=first_normalizer,
            decoder=decoder,
            name=name,
            source=source,
            training=training,
            assumed=assumed,
            inferred=inferred,
        )
        return tok

    def _assemble(
        self,
        model: Model,
        pre_tokenizer: PreTokenizer,
        *,
        normalizer: Normalizer | None,
        first_normalizer: Normalizer | None = None,
        decoder: Decoder = PLAIN_DECODER,
        name: str,
        source: str,
        training: TrainingInfo | None,
        assumed: Mapping[str, str] | None,
        inferred: Mapping[str, str] | None,
    ) -> None:
        self.model, self.pre_tokenizer, self.decoder = model, pre_tokenizer, decoder
        self.normalizer = first_normalizer if first_normalizer is not None else normalizer
        self.rest_normalizer = normalizer
        self.name, self.source, self.training = name, source, training
        # What the file does not store, by setting ("pattern", "special_tokens", "normalizer"):
        # ``inferred`` was derived with certainty (e.g. a rank file recognised by its sha256),
        # ``assumed`` is a default that may be wrong (shown as a warning and a badge).
        self.inferred: dict[str, str] = dict(inferred or {})
        self.assumed: dict[str, str] = dict(assumed or {})
        model.add_special_tokens(pre_tokenizer.special_tokens, pre_tokenizer.added_tokens)
        self._id_bytes = model.decoder  # id -> bytes of every token, special and added ones too
        self.n_vocab: int = model.top_id + 1 if self._id_bytes else 0
        self._cache = PieceCache(model.encode_piece, as_text=not model.byte_level)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_merges(
        cls,
        merges: Sequence[tuple[int, int]],
        *,
        pattern: str | SplitRule | None = "gpt4",
        special_tokens: Mapping[str, int] | None = None,
        **kwargs: Any,
    ) -> Tokenizer:
        """A minbpe-style tokenizer: ids 0-255 are the bytes and merge ``i`` makes id ``256 + i``."""
        return cls(minbpe_ranks(merges), pattern=pattern, special_tokens=special_tokens, merges=list(merges), **kwargs)

    # -- the parts' settings ----------------------------------------------------------------------

    @property
    def split_rule(self) -> SplitRule:
        return self.pre_tokenizer.split_rule

    @property
    def special_tokens(self) -> dict[str, int]:
        return self.pre_tokenizer.special_tokens

    @property
    def added_tokens(self) -> dict[str, int]:
        return self.pre_tokenizer.added_tokens

    @property
    def added_options(self) -> dict[str, AddedOptions]:
        return self.pre_tokenizer.added_options

    @property
    def added_normalizer(self) -> Normalizer | None:
        return self.pre_tokenizer.added_normalizer

    @property
    def byte_level(self) -> bool:
        """True when token bytes tile the (normalized) text: the model merges bytes, not characters."""
        return self.model.byte_level

    @property
    def missing_bytes(self) -> tuple[int, ...]:
        return self.model.missing_bytes

    @property
    def byte_barriers(self) -> bool:
        return self.model.byte_barriers

    @property
    def ignore_merges(self) -> bool:
        return self.model.ignore_merges

    def describe_model(self) -> str:
        """One line for ``info`` and the pane: what kind of model this is."""
        return self.model.describe()

    # -- vocabulary -----------------------------------------------------------------------------

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> id for every non-special token (a copy)."""
        return dict(self.model.ranks)

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """Token bytes -> id for every non-special token (a read-only view, no copy)."""
        return MappingProxyType(self.model.ranks)

    @property
    def uses_rank_rule(self) -> bool:
        """True for tiktoken-style tokenizers whose merge order is the id order."""
        return self.model.uses_rank_rule

    @property
    def merge_source(self) -> str:
        """Where merge order and merge trees come from, as a phrase (``the file's merge list``...)."""
        return self.model.merge_source

    def leaf_label(self, token_id: int) -> str:
        """What a token that no merge makes is: ``special``, ``byte``, ``byte fallback``, ``character``..."""
        return self.model.leaf_label(token_id, self.is_special(token_id))

    def initial_parts(self, piece: bytes) -> list[int]:
        """The symbols merging starts from for one pre-token (its bytes', or its characters' tokens)."""
        return self.model.initial_parts(piece)

    def piece(self, token_id: int) -> str:
        """The token's text as the model stores it (``▁hello``, ``<0x0A>``; bytes decoded)."""
        p = self.model.piece(token_id)
        return self.token_bytes(token_id).decode("utf-8", "replace") if p is None else p

    @property
    def word_marks(self) -> WordMarks | None:
        """The model's word marks (Hugging Face's ``end_of_word_suffix`` and
        ``continuing_subword_prefix``, see :mod:`bpeinspect.core.word_marks`), or ``None``."""
        return self.model.word_marks

    @property
    def unk_id(self) -> int | None:
        """The id a symbol the vocabulary lacks becomes (``None``: it is dropped, or falls back to bytes)."""
        return self.model.unk_id

    def token_marks(self, token_id: int) -> tuple[bool, bool]:
        """``(continues, ends)``: whether the token continues a word (after the first symbol of
        its pre-token) and whether it ends one; both ``False`` for a model without word marks."""
        return self.model.token_marks(token_id)

    def shown_with_marks(self, token_id: int, shown: str) -> str:
        """``shown`` (a token's text as a view writes it) with the token's word marks: ``on⌋`` for
        a token that ends a word, ``⌊ing`` for one that continues a word; ``shown`` itself for a
        model without word marks.

        >>> from bpeinspect.core import load_tokenizer
        >>> load_tokenizer("gpt2").shown_with_marks(31373, "hello")
        'hello'
        """
        marks = self.model.word_marks
        return shown if marks is None else marks.show(shown, *self.model.token_marks(token_id))

    def rebuild(self, token_id: int) -> list[int]:
        """What merging a token's own symbols gives: its bytes encoded as one pre-token, or with
        word marks, the symbols of its place in a word (``on`` inside a word, ``on⌋`` at its end).
        ``[token_id]`` unless the token is unreachable that way."""
        self.token_bytes(token_id)  # UnknownTokenError for an id that is no token
        return self.model.rebuild(token_id)

    def kind(self, token_id: int) -> str:
        """The model's kind of token: ``normal``, ``byte``, ``control``, ``user-defined``..."""
        return self.model.kind(token_id)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token (special tokens give their UTF-8 text)."""
        try:
            return self._id_bytes[token_id]
        except (KeyError, TypeError):
            raise UnknownTokenError(f"unknown token id {token_id!r}") from None

    def token_id(self, token: bytes | str) -> int | None:
        """The id of a token given by its bytes or text, or ``None``."""
        if isinstance(token, str):
            if token in self.special_tokens:
                return self.special_tokens[token]
            if token in self.added_tokens:
                return self.added_tokens[token]
            token = token.encode("utf-8")
        return self.model.ranks.get(token)

    def is_special(self, token_id: int) -> bool:
        """True for special (control) tokens, which text holds only when the caller allows them."""
        return token_id in self._special_ids

    def is_added(self, token_id: int) -> bool:
        """True for added tokens that are not special: always matched before BPE."""
        return token_id in self._added_ids

    def token_kind(self, token_id: int) -> Literal["special", "added", "normal"]:
        """``special`` (control), ``added`` (matched before BPE, not special) or ``normal``."""
        return "special" if self.is_special(token_id) else "added" if self.is_added(token_id) else "normal"

    @functools.cached_property
    def _special_ids(self) -> frozenset[int]:
        return frozenset(self.special_tokens.values())

    @functools.cached_property
    def _special_aliases(self) -> bool:
        """Whether a special token's text is not the bytes its id decodes to (a second name of
        one id, as in tiktoken's o200k_harmony): its span then covers its own text."""
        id_bytes = self._id_bytes
        return any(id_bytes.get(i) != s.encode("utf-8") for s, i in self.special_tokens.items())

    @functools.cached_property
    def _added_ids(self) -> frozenset[int]:
        return frozenset(self.added_tokens.values())

    def dropped_bytes(self, text: str) -> list[tuple[int, int]]:
        """Code point spans of the characters of ``text`` whose bytes include one without a token
        (they are dropped when encoding, see :attr:`missing_bytes`).

        >>> Tokenizer({bytes([b]): b for b in range(256) if b != 3}).dropped_bytes("a\x03b")
        [(1, 2)]
        """
        if not self.missing_bytes:
            return []
        return [m.span() for m in missing_regex(self.missing_bytes).finditer(text)]

    def ids(self) -> list[int]:
        """Every id in the vocabulary, ascending."""
        return sorted(self._id_bytes)

    def __len__(self) -> int:
        return len(self._id_bytes)

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name or '(unnamed)'} n_vocab={self.n_vocab}>"

    # -- merges -----------------------------------------------------------------------------------

    @property
    def explicit_merges(self) -> Sequence[tuple[int, int]] | None:
        """The file's merge list (read-only; ``None`` when merges are recovered from ranks or scores)."""
        return self.model.explicit_merges

    @property
    def merges(self) -> list[tuple[int, int]]:
        """The two parts of each merged token, in rank order.

        For rank-rule vocabularies the parts are recovered from the ranks (and from the scores
        for SentencePiece's); a token that they cannot rebuild is listed with its best split and
        flagged in :meth:`MergeGraph.unbuildable`.
        """
        explicit = self.model.explicit_merges
        if explicit is not None:
            return list(explicit)
        return self.merge_graph.merge_list()

    @functools.cached_property
    def merge_graph(self) -> MergeGraph:
        """How every token is built from two others (see :class:`MergeGraph`)."""
        return self.model.merge_graph(self)

    def merge_rank(self, left: int, right: int) -> int | None:
        """The priority of merging ``left`` and ``right`` (lower first), or ``None``."""
        return self.model.merge_rank(left, right)

    def merge_result(self, left: int, right: int) -> int | None:
        """The token made by merging ``left`` and ``right``, or ``None``."""
        return self.model.merge_result(left, right)

    # -- encoding ---------------------------------------------------------------------------------

    def _allowed(self, allowed_special: Literal["all"] | Collection[str]) -> frozenset[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        return frozenset(allowed_special)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Token ids of ``text`` with tiktoken's semantics for special tokens.

        Special-token text that is neither allowed nor explicitly permitted raises
        :class:`DisallowedSpecialError` (a ``ValueError``); pass ``disallowed_special=()`` to
        encode it as ordinary text.
        """
        text = fix_surrogates(text)
        allowed = self._allowed(allowed_special)
        disallowed = (
            frozenset(self.special_tokens) - allowed if disallowed_special == "all" else frozenset(disallowed_special)
        )
        check_disallowed(text, disallowed)
        return self._encode_cut(text, allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text``, special-token text as ordinary text (added tokens still match, as in HF)."""
        return self._encode_cut(fix_surrogates(text), frozenset())

    def _encode_cut(self, text: str, allowed: frozenset[str]) -> list[int]:
        if not allowed and not self.added_tokens:
            return self._encode_ordinary_fixed(text)
        out: list[int] = []
        pos = 0
        for segment, token in self._segments(text, allowed):
            if token is None:
                out.extend(self._encode_ordinary_fixed(segment, first=pos == 0))
            else:
                out.append(token)
            pos += len(segment)
        return out

    def _segments(self, text: str, allowed: frozenset[str]) -> list[tuple[str, int | None]]:
        """``text`` cut into ``(segment, id)`` at the ``allowed`` special tokens and every added
        token (see :meth:`PreTokenizer.segments`)."""
        return self.pre_tokenizer.segments(text, allowed)

    def _encode_ordinary_fixed(self, text: str, first: bool = True) -> list[int]:
        # ``first``: the text starts the input (a first-segment normalizer applies only there)
        norm = self.normalizer if first else self.rest_normalizer
        if norm is not None:
            text = norm.normalize(text)
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        pre = self.pre_tokenizer
        found: Iterable[str]
        with quiet_gc(freeze=False) if len(text) >= QUIET_CHARS else nullcontext():
            if pre.sliceable and len(text) > 4 * _SLICE:
                # a slice at a time: holding one slice's pre-tokens instead of the whole text's
                # (27 million strings for 100 MB) saves memory and the garbage collector's time
                found = chain.from_iterable(map(pre.find, cut_text(text, _SLICE)))
            else:
                found = pre.find(text)
            # map + chain keep the per-piece loop in C; cache misses go through __missing__
            return list(chain.from_iterable(map(cache.__getitem__, found)))

    def count_pieces(self, pieces: Iterable[str]) -> int:
        """How many tokens the pre-tokens ``pieces`` make together (through the pre-token cache).

        The pieces must come from this tokenizer's split rule and hold no lone surrogates
        (:func:`fix_surrogates`); specials are not recognised.

        >>> from bpeinspect.core import load_tokenizer
        >>> tok = load_tokenizer("cl100k_base")
        >>> tok.count_pieces(tok.split_rule.pieces("hello tokenization")) == len(tok.encode("hello tokenization"))
        True
        """
        cache = self._cache
        if len(cache) > _CACHE_LIMIT:
            cache.clear()
        with quiet_gc(freeze=False):
            return sum(map(len, map(cache.__getitem__, pieces)))

    def pre_tokens(self, text: str) -> list[str]:
        """The pre-tokens of ``text``, normalized if the tokenizer normalizes (specials not recognised)."""
        text = fix_surrogates(text)
        if self.normalizer is not None:
            text = self.normalizer.normalize(text)
        return self.pre_tokenizer.pieces(text)

    def encode_piece(self, piece: str | bytes) -> list[int]:
        """Token ids of one pre-token, without splitting it (as bytes, or as text: normalized,
        or as the decoder prints it)."""
        return self.model.piece_ids(fix_surrogates(piece) if isinstance(piece, str) else piece)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = "all",
        should_stop: Callable[[], bool] | None = None,
    ) -> Encoding:
        """Encode ``text`` and record where every token and pre-token lies.

        Special-token text is recognised by default (an inspector should show it); pass
        ``allowed_special=()`` to treat it as ordinary text. The result's offsets refer to
        ``Encoding.text``, which differs from ``text`` only if it held lone surrogates.
        """
        text = fix_surrogates(text)
        # the arrays and lists of a long text's encoding would set off full collections that
        # walk them again and again (see quiet_gc)
        with quiet_gc(freeze=False) if len(text) >= QUIET_CHARS else nullcontext():
            return self._encode_with_offsets(text, allowed_special, should_stop)

    def _encode_with_offsets(
        self,
        text: str,
        allowed_special: Literal["all"] | Collection[str],
        should_stop: Callable[[], bool] | None,
    ) -> Encoding:
        allowed = self._allowed(allowed_special)
        segments: list[tuple[str, int | None]] = [(text, None)]
        if allowed or self.added_tokens:
            segments = self._segments(text, allowed)
        if self.normalizer is not None or self.rest_normalizer is not None or not self.model.byte_level:
            # offsets are mapped back from the normalized copy into the user's text
            return self._encode_aligned(text, segments, should_stop)
        rule = self.split_rule
        if (
            not rule.splits
            or any(s.behavior != "isolated" for s in rule.splits)
            or self.dropped_bytes(text)
            or (
                (self.added_options or self._special_aliases)
                and any(t is not None and seg.encode() != self._id_bytes[t] for seg, t in segments)
            )
        ):
            # (an added token that took the whitespace beside it covers more than its own text)
            # the rule drops or glues text, or bytes without a token are dropped: token by token
            return build_encoding(self, text, segments, should_stop=should_stop)
        # the pre-tokens tile the text: ids through the pre-token cache, offsets in arrays
        ids, piece_lens = tiled_ids(segments, self.pre_tokenizer.find, self._cache.__getitem__, should_stop)
        return encoding_from_ids(
            text,
            ids,
            piece_lens,
            token_lengths=self._lengths_of_tokens(should_stop),
            special_ids=self._special_ids,
            token_bytes_of=self.token_bytes,
            added_ids=self._added_ids,
        )

    def _encode_aligned(
        self, text: str, segments: list[tuple[str, int | None]], should_stop: Callable[[], bool] | None
    ) -> Encoding:
        """:meth:`encode_with_offsets` through the normalized copy of each segment (offsets mapped back)."""
        firsts, pos = [], 0
        for seg, cut in segments:
            if cut is None:
                firsts.append(pos == 0)  # only a segment that starts the text is "first"
            pos += len(seg)
        first = iter(firsts)

        def normalize_aligned(segment: str) -> Aligned:
            norm = self.normalizer if next(first) else self.rest_normalizer
            return norm.normalize_aligned(segment) if norm is not None else (segment, None, None)

        return build_aligned_encoding(
            self,
            text,
            segments,
            normalize_aligned=normalize_aligned,
            pieces_of=self.pre_tokenizer.spans,
            encode_piece=self._cache.__getitem__,
            token_nlen=self._token_nlen,
            should_stop=should_stop,
        )

    @functools.cached_property
    def _token_nlen(self) -> Callable[[int], int]:
        return self.model.normalized_lengths(self._id_bytes, self._special_ids | self._added_ids)

    @functools.cached_property
    def _token_lengths(self) -> np.ndarray:
        return token_lengths(self._id_bytes, self.n_vocab)

    def _lengths_of_tokens(self, should_stop: Callable[[], bool] | None) -> np.ndarray:
        """:attr:`_token_lengths`, built (the first time) with ``should_stop`` asked between slices."""
        lengths = self.__dict__.get("_token_lengths")
        if lengths is None:
            lengths = self.__dict__["_token_lengths"] = token_lengths(self._id_bytes, self.n_vocab, should_stop)
        return lengths

    @property
    def token_byte_lengths(self) -> np.ndarray:
        """How many bytes each token id stands for (0 for an unused id), as one array indexed by id.

        >>> from bpeinspect.core import load_tokenizer
        >>> tok = load_tokenizer("r50k_base")
        >>> [int(n) for n in tok.token_byte_lengths[tok.encode("hello world")]]
        [5, 6]
        """
        return self._token_lengths

    def with_special_tokens(self, extra: Mapping[str, int]) -> Tokenizer:
        """This tokenizer with more special tokens, sharing its model and pre-token cache
        (a chat format's control tokens that the vocabulary file does not list).

        >>> from bpeinspect.core import load_tokenizer
        >>> chat = load_tokenizer("cl100k_base").with_special_tokens({"<|im_start|>": 100264})
        >>> chat.encode("<|im_start|>hi", allowed_special="all")
        [100264, 6151]
        """
        # a shallow copy by hand: copy.copy would go through pickling, which stores the tables
        twin, id_bytes = type(self).__new__(type(self)), dict(self._id_bytes)
        twin.__dict__.update(self.__dict__)
        for s, i in extra.items():
            if self.special_tokens.get(s) == i:
                continue
            # a second name for a special token's id is allowed (tiktoken's o200k_harmony has
            # one); the id still decodes to its first name, as in tiktoken
            if (i in id_bytes and i not in self._special_ids) or s in self.special_tokens or s in self.added_tokens:
                raise ValueError(f"special token {s!r} (id {i}) clashes with a token the vocabulary has")
            id_bytes.setdefault(i, s.encode("utf-8"))
        twin._id_bytes = id_bytes
        twin.pre_tokenizer = self.pre_tokenizer.with_special_tokens(extra)
        twin.n_vocab = max(id_bytes) + 1 if id_bytes else 0
        for derived in ("_special_ids", "_special_aliases", "_token_lengths", "_token_nlen", "merge_graph"):
            twin.__dict__.pop(derived, None)
        return twin

    # -- decoding ---------------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of a sequence of tokens."""
        dec, ids = self._id_bytes, list(ids)
        try:
            parts = [dec[i] for i in ids]
        except (KeyError, TypeError):
            bad = next(i for i in ids if i not in dec)
            raise UnknownTokenError(f"unknown token id {bad!r}") from None
        return self.decoder.finish(self.decoder.join(parts, ids, self.model.token_marks))

    def decode_tokens_bytes(self, ids: Iterable[int]) -> list[bytes]:
        return [self.token_bytes(i) for i in ids]

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of a sequence of tokens; invalid UTF-8 becomes U+FFFD."""
        return self.decode_bytes(list(ids)).decode("utf-8", errors=errors)

    # -- tiktoken's Encoding API ------------------------------------------------------------------
    # Code written for ``tiktoken.Encoding`` takes any tokenizer: these are its public methods,
    # with its names, keywords and errors (``num_threads`` is accepted and ignored).

    @property
    def max_token_value(self) -> int:
        """The largest id of any token, special ones included (``n_vocab - 1``)."""
        return self.n_vocab - 1

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (a ``KeyError`` where the vocabulary has none)."""
        return self.special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        """The texts of the special tokens."""
        return set(self.special_tokens)

    def is_special_token(self, token: int) -> bool:
        """tiktoken's name for :meth:`is_special`."""
        return self.is_special(token)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token whose bytes (or special-token text) are exactly this.

        >>> from bpeinspect.core import load_tokenizer
        >>> tok = load_tokenizer("cl100k_base")
        >>> tok.encode_single_token(" world"), tok.encode_single_token("<|endoftext|>")
        (1917, 100257)
        """
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        found = self.model.ranks.get(data)
        if found is None:
            text = data.decode("utf-8", errors="replace")
            found = self.special_tokens.get(text, self.added_tokens.get(text))
        if found is None:
            raise KeyError(text_or_bytes)
        return found

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (a ``KeyError`` for an id no token has)."""
        return self.token_bytes(token)

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted."""
        return sorted(self.model.ranks)

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``tokens`` and, for each token, the index of the character it starts in.

        A token that begins inside a character (its first byte continues a UTF-8 sequence)
        starts in that character. The bytes must be valid UTF-8.

        >>> from bpeinspect.core import load_tokenizer
        >>> tok = load_tokenizer("cl100k_base")
        >>> tok.decode_with_offsets(tok.encode("hello world"))
        ('hello world', [0, 5])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets, chars = [], 0
        for part in parts:
            continues = bool(part) and 0x80 <= part[0] < 0xC0
            offsets.append(max(0, chars - continues))
            chars += sum(1 for b in part if not 0x80 <= b < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def encode_batch(
        self,
        texts: Iterable[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """:meth:`encode` for each text."""
        return [self.encode(t, allowed_special=allowed_special, disallowed_special=disallowed_special) for t in texts]

    def encode_ordinary_batch(self, texts: Iterable[str], *, num_threads: int = 8) -> list[list[int]]:
        """:meth:`encode_ordinary` for each text."""
        return [self.encode_ordinary(t) for t in texts]

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> np.ndarray:
        """:meth:`encode` as a ``uint32`` array."""
        import numpy as np

        return np.array(
            self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special), dtype=np.uint32
        )

    def decode_batch(
        self, batch: Iterable[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """:meth:`decode` for each sequence of ids."""
        return [self.decode(ids, errors=errors) for ids in batch]

    def decode_bytes_batch(self, batch: Iterable[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """:meth:`decode_bytes` for each sequence of ids."""
        return [self.decode_bytes(ids) for ids in batch]


__all__ = [
    "DisallowedSpecialError",
    "PairMerges",
    "PreTokenizer",
    "Tokenizer",
    "TrainingInfo",
    "UnknownTokenError",
    "fix_surrogates",
]
