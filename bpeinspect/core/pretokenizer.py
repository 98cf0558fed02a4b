"""The pre-tokenizer: where a text is cut before a model merges it.

First the special tokens the caller allows and every added token are cut out (they become
their own ids; :mod:`bpeinspect.core.specials`), then the split rule cuts the text between them
into pre-tokens (:mod:`bpeinspect.core.split`), which the model encodes one at a time.

>>> from bpeinspect.core.split.rules import resolve_rule
>>> pre = PreTokenizer(resolve_rule("gpt2"), special_tokens={"<|endoftext|>": 50256})
>>> pre.segments("hi<|endoftext|> there", frozenset({"<|endoftext|>"}))
[('hi', None), ('<|endoftext|>', 50256), (' there', None)]
>>> pre.pieces(" there you")
[' there', ' you']
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from itertools import accumulate

from bpeinspect.core.normalize import Normalizer
from bpeinspect.core.specials import PLAIN, AddedOptions, check_tables, cut_at, cut_with_flags
from bpeinspect.core.split.fast import TiktokenSplitter
from bpeinspect.core.split.rules import SplitRule


class PreTokenizer:
    """Special and added tokens, then a split rule.

    ``special_tokens`` (control tokens) are cut out only where the caller allows them;
    ``added_tokens`` (Hugging Face ``special: false``, GGUF ``USER_DEFINED``) always, in ordinary
    encoding too, as Hugging Face and llama.cpp do. ``added_options``: Hugging Face's flags of
    the tokens that have any (lstrip, rstrip, single_word, normalized: see
    :mod:`bpeinspect.core.specials`), and ``added_normalizer`` the normalizer ``normalized``
    ones are matched after. ``find``: the pre-tokens of a text when the rule's one pattern covers
    all of it (its ``findall``: SentencePiece-style boundaries); else the rule's own engine.
    """

    def __init__(
        self,
        split_rule: SplitRule,
        *,
        special_tokens: Mapping[str, int] | None = None,
        added_tokens: Mapping[str, int] | None = None,
        added_options: Mapping[str, AddedOptions] | None = None,
        added_normalizer: Normalizer | None = None,
        find: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.split_rule = split_rule
        if isinstance(split_rule.fast, TiktokenSplitter):
            split_rule.fast.prepare()  # once per process, and slow: not in the first encode
        self.special_tokens: dict[str, int] = dict(special_tokens or {})
        self.added_tokens: dict[str, int] = dict(added_tokens or {})
        check_tables((), self.special_tokens, self.added_tokens)
        self.added_options = {w: o for w, o in (added_options or {}).items() if o != PLAIN}
        self.added_normalizer = added_normalizer
        self.tiles = find is not None
        # texts over a few slices are split a slice at a time (only with the rule's own engine)
        self.sliceable = find is None and split_rule.fast is not None
        if find is None:
            find = split_rule.fast.findall if split_rule.fast is not None else split_rule.pieces
        self.find: Callable[[str], list[str]] = find

    def segments(self, text: str, allowed: frozenset[str]) -> list[tuple[str, int | None]]:
        """``text`` cut into ``(segment, id)`` at the ``allowed`` special tokens and every added
        token (their id), with ``None`` for the text between them; the longest match wins."""
        if not self.added_tokens:
            words, ids = allowed, self.special_tokens
        else:
            words, ids = allowed | self.added_tokens.keys(), {**self.added_tokens, **self.special_tokens}
        if not self.added_options:
            return cut_at(text, words, ids)
        order = (*self.special_tokens, *self.added_tokens)
        return cut_with_flags(text, words, ids, self.added_options, normalizer=self.added_normalizer, order=order)

    def pieces(self, text: str) -> list[str]:
        """The pre-tokens of ``text`` (special tokens not recognised)."""
        return self.find(text) if self.tiles else self.split_rule.pieces(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The pre-tokens of ``text`` as ``(start, end)`` code point spans."""
        if not self.tiles:
            return self.split_rule.spans(text)
        ends = list(accumulate(map(len, self.find(text))))
        return list(zip([0, *ends[:-1]], ends))

    def with_special_tokens(self, extra: Mapping[str, int]) -> PreTokenizer:
        """A copy that also knows the special tokens ``extra``."""
        twin = copy.copy(self)
        twin.special_tokens = {**self.special_tokens, **extra}
        return twin


__all__ = ["PreTokenizer"]
