"""Split rules for llama.cpp's BPE pre-tokenizer names (``tokenizer.ggml.pre`` in GGUF files).

Each name maps to the split its model's original Hugging Face tokenizer performs: a
sequence of isolated regex splits (llama.cpp's ``regex_exprs``, which it applies one after
another as Hugging Face's ``Sequence`` of ``Split`` does), plus whether whole pre-tokens
that are tokens skip the merges (``ignore_merges``).

>>> rule_for_pre("qwen2")[0].pieces("abc 12")
['abc', ' ', '1', '2']
"""

from __future__ import annotations

import warnings

from bpeinspect.core.split.rules import (
    CL100K_PATTERN,
    LLAMA3_PATTERN,
    O200K_PATTERN,
    PRESETS,
    Split,
    SplitRule,
)

GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
TEKKEN = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"""
    r"""[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
BLOOM = r""" ?[^(\s|.,!?…。，、।۔،)]+"""
CJK = r"""[一-龥ࠀ-一가-퟿]+"""
DEEPSEEK_LATIN = (
    r"""\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+"""
)
DEEPSEEK3_WORDS = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
    r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# name -> (regexes split one after another, ignore_merges)
_TABLE: dict[str, tuple[tuple[str, ...], bool]] = {}


def _add(names: str, regexes: tuple[str, ...], ignore_merges: bool = False) -> None:
    for n in names.split():
        _TABLE[n] = (regexes, ignore_merges)


_add("llama3 llama-v3 llama-bpe falcon3 falcon-h1 pixtral midm-2.0 lfm2", (LLAMA3_PATTERN,), True)
_add("smaug-bpe glm4 chatglm-bpe", (LLAMA3_PATTERN,))
_add("dbrx", (CL100K_PATTERN,))  # DBRX's Hugging Face tokenizer wraps tiktoken's cl100k_base
_add("gpt-4o llama4", (O200K_PATTERN,))
_add("deepseek-llm", ("[\r\n]", DEEPSEEK_LATIN, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$", CJK, r"\p{N}+"))
_add("deepseek-coder", ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK, r"\p{N}"))
_add("deepseek-v3", (r"\p{N}{1,3}", r"[一-龥぀-ゟ゠-ヿ]+", DEEPSEEK3_WORDS))
_add("falcon", (r"[\p{P}\$\+<=>\^~\|`]+", GPT2_SPLIT, r"[0-9][0-9][0-9]"))
_add("starcoder refact command-r smollm codeshell exaone minerva-7b", (r"\p{N}", GPT2_SPLIT))
_add(
    "gpt-2 phi-2 jina-es jina-de gigachat jina-v1-en jina-v2-es jina-v2-de jina-v2-code roberta-bpe mpt olmo jais "
    "exaone4 a.x-4.0 mellum",
    ("gpt2",),
)
_add("qwen2 deepseek-r1-qwen stablelm2 megrez kormo", (QWEN2,))
_add("tekken", (TEKKEN,), True)
_add("poro-chat bloom gpt3-finnish", (BLOOM,))
_add("viking", (BLOOM, r"\p{N}"))
_add("default", (r"[\p{P}\$\+<=>\^~\|]+", GPT2_SPLIT, r"\p{N}+", r"[0-9][0-9][0-9]"))

KNOWN_PRE_NAMES: tuple[str, ...] = tuple(sorted(_TABLE))


def rule_for_pre(name: str | None, source: str = "") -> tuple[SplitRule, bool]:
    """``(split rule, ignore_merges)`` for a ``tokenizer.ggml.pre`` name.

    An unknown or missing name gives a warning and GPT-2's rule.
    """
    entry = _TABLE.get(name or "")
    if entry is None:
        warnings.warn(
            f"{source + ': ' if source else ''}unknown pre-tokenizer {name!r}; using GPT-2's split rule",
            stacklevel=2,
        )
        return PRESETS["r50k"], False
    regexes, ignore_merges = entry
    if regexes == ("gpt2",):
        return PRESETS["r50k"], ignore_merges
    if len(regexes) == 1:
        for preset in PRESETS.values():
            if preset.pattern == regexes[0]:
                return preset, ignore_merges
    return SplitRule(tuple(Split(r) for r in regexes), name=name or ""), ignore_merges
