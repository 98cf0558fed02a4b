"""Pre-tokenization: cut text into pieces before BPE sees it.

A tokenizer's split rule is an ordered sequence of regex splits, applied one after another
the way Hugging Face's ``Sequence([Split(...), ...])`` does: the first split cuts the text,
the second cuts each piece again, and so on.

>>> rule = PRESETS["cl100k"]
>>> rule.pieces("Hello world!!")
['Hello', ' world', '!!']
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Literal

import regex

from bpeinspect.core.errors import PatternError
from bpeinspect.core.split import fast as _fastsplit
from bpeinspect.core.split.bounded import BoundedPattern, split_time_limit
from bpeinspect.core.split.hf_unicode import hf_view
from bpeinspect.core.split.llama_unicode import collapse_pattern, view_for
from bpeinspect.core.split.patterns import PRESET_PATTERNS, QWEN2_PATTERN

Behavior = Literal["isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous"]
BEHAVIORS: tuple[str, ...] = ("isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous")


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> BoundedPattern:
    """Compile ``pattern`` with the ``regex`` module, or raise :class:`PatternError`.

    Its ``findall`` and ``spans`` stop a pattern that backtracks catastrophically with a
    :class:`PatternError` (see :mod:`.bounded`).

    >>> compile_pattern(r"\\p{L}+").findall("ab 12")
    ['ab']
    """
    try:
        return BoundedPattern(pattern)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise PatternError(f"the split pattern does not compile: {exc}") from None


@dataclass(frozen=True)
class Split:
    """One regex split step, with Hugging Face's ``SplitDelimiterBehavior`` names.

    ``isolated`` keeps every match and every gap between matches as its own piece;
    ``removed`` drops the matches. With ``invert=True`` the matches are the content and the
    gaps are the delimiters, so ``Split(p, "removed", invert=True)`` is ``regex.findall``.
    """

    pattern: str
    behavior: Behavior = "isolated"
    invert: bool = False

    def __post_init__(self) -> None:
        if self.behavior not in BEHAVIORS:
            raise ValueError(f"unknown split behaviour {self.behavior!r}; expected one of {', '.join(BEHAVIORS)}")

    def spans(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """Cut ``text[start:end]`` and return the pieces' spans (absolute positions in ``text``)."""
        end = len(text) if end is None else end
        compiled = compile_pattern(self.pattern)
        marked: list[tuple[int, int, bool]] = []  # (start, end, is_delimiter)
        pos = start
        for m in compiled.matches(text, start, end):
            a, b = m.span()
            if a == b:
                # an empty match cuts the text there, as in Hugging Face (e.g. digits grouped by
                # three with a lookahead); the presets never match empty
                if pos < a < end:
                    marked.append((pos, a, self.invert))
                    pos = a
                continue
            if a > pos:
                marked.append((pos, a, self.invert))
            marked.append((a, b, not self.invert))
            pos = b
        if pos < end:
            marked.append((pos, end, self.invert))
        return _apply_behavior(marked, self.behavior)


def _apply_behavior(marked: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    if behavior == "isolated":
        return [(a, b) for a, b, _ in marked]
    if behavior == "removed":
        return [(a, b) for a, b, delim in marked if not delim]
    # As in Hugging Face: a delimiter joins its neighbour only if that neighbour is not a
    # delimiter itself, so consecutive delimiters stay apart (except for "contiguous").
    out: list[tuple[int, int]] = []
    if behavior == "merged_with_previous":
        prev = False
        for a, b, delim in marked:
            if delim and not prev and out:
                out[-1] = (out[-1][0], b)
            else:
                out.append((a, b))
            prev = delim
        return out
    if behavior == "merged_with_next":
        prev = False
        for a, b, delim in reversed(marked):
            if delim and not prev and out:
                out[-1] = (a, out[-1][1])
            else:
                out.append((a, b))
            prev = delim
        out.reverse()
        return out
    # contiguous: consecutive pieces of the same kind form one piece
    prev = False
    for a, b, delim in marked:
        if delim == prev and out:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
        prev = delim
    return out


@dataclass(frozen=True)
class SplitRule:
    """An ordered sequence of :class:`Split` steps; no steps means no splitting.

    >>> SplitRule.from_pattern(r"\\d+|\\D+").pieces("ab12")
    ['ab', '12']
    """

    splits: tuple[Split, ...] = ()
    name: str = ""
    # Set for the built-in tiktoken patterns: an exact, faster engine for the same split.
    fast: _fastsplit.FastSplitter | None = field(default=None, compare=False, repr=False)
    # "hf": the steps see Unicode as Hugging Face's regex engine does (see .hf_unicode), for
    # rules of a tokenizer.json; "llama": as llama.cpp runs them (see .llama_unicode), for rules
    # of a GGUF file; "": as the ``regex`` module does (minbpe). The fast engine's tables are
    # Hugging Face's already.
    unicode: Literal["", "hf", "llama"] = ""

    @classmethod
    def from_pattern(cls, pattern: str, name: str = "") -> SplitRule:
        """A rule of one isolated split, i.e. tiktoken's ``pat_str``."""
        return cls((Split(pattern),), name=name)

    @property
    def pattern(self) -> str | None:
        """The single pattern of a one-step rule (tiktoken's ``pat_str``), else ``None``."""
        if len(self.splits) == 1 and self.splits[0].behavior == "isolated" and not self.splits[0].invert:
            return self.splits[0].pattern
        return None

    def validate(self) -> None:
        """Raise :class:`PatternError` if any step's pattern does not compile."""
        for s in self.splits:
            compile_pattern(s.pattern)

    def spans(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """The pieces of ``text[start:end]`` as ``(start, end)`` code point spans."""
        end = len(text) if end is None else end
        if start >= end:
            return []
        if self.fast is not None:
            out = []
            pos = start
            for p in self.fast.findall(text[start:end]):
                out.append((pos, pos + len(p)))
                pos += len(p)
            return out
        spans = [(start, end)]
        if self.unicode == "hf":  # same length: the pieces' spans are the text's
            text = hf_view(text, tuple(s.pattern for s in self.splits))
        with split_time_limit(end - start, self.splits[0].pattern if self.splits else ""):  # one limit for all steps
            for step in self.splits:
                if self.unicode == "llama":  # each step on llama.cpp's copy of the text (same length)
                    view = view_for(step.pattern, text)
                    step = Split(collapse_pattern(step.pattern), step.behavior, step.invert)
                    spans = [s for a, b in spans for s in step.spans(view, a, b)]
                else:
                    spans = [s for a, b in spans for s in step.spans(text, a, b)]
        return spans

    def with_hf_unicode(self) -> SplitRule:
        """This rule as Hugging Face (or tiktoken, whose tables are the same) runs it: its steps see
        Unicode as their engines do (the rule itself if it runs on the fast engine, whose tables
        are those already)."""
        if self.fast is not None or not self.splits or self.unicode == "hf":
            return self
        return dataclasses.replace(self, unicode="hf")

    def pieces(self, text: str) -> list[str]:
        """The pieces of ``text`` as strings."""
        if self.fast is not None:
            return self.fast.findall(text)
        if not self.splits:
            return [text] if text else []
        return [text[a:b] for a, b in self.spans(text)]

    def describe(self) -> str:
        """A short human-readable form of the rule."""
        if not self.splits:
            return "no splitting"
        parts = []
        for s in self.splits:
            flags = (
                ""
                if s.behavior == "isolated" and not s.invert
                else f" [{s.behavior}{', inverted' if s.invert else ''}]"
            )
            parts.append(s.pattern + flags)
        return "\n".join(parts)


def _preset(name: str, pattern: str, *, fast: bool) -> SplitRule:
    return SplitRule(
        (Split(pattern),),
        name=name,
        fast=_fastsplit.TiktokenSplitter(pattern) if fast else None,
    )


# minbpe's patterns run on the ``regex`` module exactly as minbpe runs them; the others on the fast engine
PRESETS: dict[str, SplitRule] = {
    name: _preset(name, pattern, fast=name not in ("gpt4", "gpt2")) for name, pattern in PRESET_PATTERNS.items()
}
_FAST_RULES = {QWEN2_PATTERN: SplitRule((Split(QWEN2_PATTERN),), fast=_fastsplit.TiktokenSplitter(QWEN2_PATTERN))}
PRESET_ALIASES = {
    "p50k": "r50k",
    "cl100k_base": "cl100k",
    "o200k_base": "o200k",
    "r50k_base": "r50k",
    "llama-bpe": "llama3",
}
NO_SPLIT = SplitRule((), name="none")


def is_preset_pattern(rule: SplitRule) -> bool:
    """Whether ``rule`` is one of the built-in patterns, however it was given (a name or the
    pattern itself): such rules split fast (and may be cut, see :mod:`.cuts`)."""
    return rule.pattern is not None and rule.pattern in PRESET_PATTERNS.values()


def resolve_rule(pattern: str | SplitRule | None) -> SplitRule:
    """A :class:`SplitRule` from a preset name, a regex string, a rule, or ``None`` (no splitting).

    >>> resolve_rule("gpt4").name
    'gpt4'
    """
    if pattern is None:
        return NO_SPLIT
    if isinstance(pattern, SplitRule):
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a preset name, a regex string or None, not {type(pattern).__name__}")
    key = PRESET_ALIASES.get(pattern, pattern)
    if key in PRESETS:
        return PRESETS[key]
    for rule in PRESETS.values():
        if rule.fast is not None and rule.pattern == pattern:
            return rule
    if pattern in _FAST_RULES:
        return _FAST_RULES[pattern]
    if not pattern:
        raise PatternError("the split pattern is empty")
    rule = SplitRule.from_pattern(pattern)
    rule.validate()
    return rule
