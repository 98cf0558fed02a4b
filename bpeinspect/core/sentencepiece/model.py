""":func:`SentencePieceBPE`: a tokenizer of SentencePiece-style parts (see :mod:`bpeinspect.core.sentencepiece`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Unpack

from bpeinspect.core.decoder import Decoder
from bpeinspect.core.models.pieces import SPACE
from bpeinspect.core.models.score import ScoreBPE, ScoreOptions
from bpeinspect.core.normalize import Normalizer
from bpeinspect.core.pretokenizer import PreTokenizer
from bpeinspect.core.sentencepiece.boundaries import boundary_rule
from bpeinspect.core.specials import AddedOptions, check_tables
from bpeinspect.core.split.rules import SplitRule, compile_pattern
from bpeinspect.core.tokenizer import Tokenizer


def SentencePieceBPE(
    pieces: Sequence[str | None],
    kinds: Sequence[int] | None = None,
    *,
    normalizer: Normalizer | None = None,
    first_normalizer: Normalizer | None = None,
    special_tokens: Mapping[str, int] | None = None,
    added_tokens: Mapping[str, int] | None = None,
    added_options: Mapping[str, AddedOptions] | None = None,
    added_normalizer: Normalizer | None = None,
    strip_leading_space: bool = False,
    split_before_space: bool = False,
    name: str = "",
    source: str = "",
    **options: Unpack[ScoreOptions],
) -> Tokenizer:
    """A SentencePiece-style BPE tokenizer (see the package docstring for the three flavours).

    The model is a :class:`~bpeinspect.core.models.score.ScoreBPE` (``pieces``, ``kinds``,
    ``scores`` or ``merges``...: see it). Around it: ``first_normalizer`` for a text's first
    segment and ``normalizer`` for the rest (Hugging Face's Metaspace prepends ``▁`` only to
    the first); a pre-tokenizer that cuts before ``▁`` where no piece crosses it
    (``split_before_space``: before every ``▁``, Metaspace ``split=true``); and a decoder that
    drops the dummy prefix's space (``strip_leading_space``).
    """
    special_tokens, added_tokens = dict(special_tokens or {}), dict(added_tokens or {})
    check_tables((), special_tokens, added_tokens)
    rest = normalizer or first_normalizer
    escapes = rest is not None and rest.normalize(" x") != " x" and SPACE in rest.normalize("a b")
    model = ScoreBPE(
        pieces,
        kinds,
        special_ids=set(special_tokens.values()),
        escape_spaces=escapes,
        **options,
    )
    if split_before_space:  # Metaspace(split=true): every ▁ starts a word
        rule = SplitRule.from_pattern(f"{SPACE}[^{SPACE}]*|[^{SPACE}]+", name="Metaspace words")
    else:
        rule = boundary_rule(model.mergeable, sorted(model.frozen), model.newline_words)
    # the rule's one pattern covers the whole text, so its findall gives every pre-token
    pre = PreTokenizer(
        rule,
        special_tokens=special_tokens,
        added_tokens=added_tokens,
        added_options=added_options,
        added_normalizer=added_normalizer,
        find=compile_pattern(rule.splits[0].pattern).findall,
    )
    return Tokenizer.compose(
        model,
        pre,
        normalizer=normalizer,
        first_normalizer=first_normalizer,
        name=name,
        source=source,
        decoder=Decoder(strip_leading_space=strip_leading_space),
    )


__all__ = ["SentencePieceBPE"]
