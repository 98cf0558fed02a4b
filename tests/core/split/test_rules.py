"""Split rules: the fast engine, Hugging Face's split behaviours, errors."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import PatternError, Split, SplitRule, resolve_rule
from bpeinspect.core.split.rules import PRESETS
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples

tokenizers = pytest.importorskip("tokenizers")


def _agreeing(text: str) -> str:
    """Drop characters on which the ``regex`` module's newer Unicode tables differ from tiktoken's."""
    return "".join(c for c in text if c.isascii() or regex.match(r"\p{Cn}", c) is None)


@pytest.mark.parametrize("name", ["r50k", "cl100k", "o200k", "llama3"])
def test_fast_engine_equals_regex_module(name: str) -> None:
    rule = PRESETS[name]
    assert rule.fast is not None
    compiled = regex.compile(rule.pattern)
    for text in PROSE + ADVERSARIAL + code_samples(100_000):
        assert rule.fast.findall(text) == compiled.findall(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cn", "Co")), max_size=50))
def test_fast_engine_hypothesis(text: str) -> None:
    for name in ["r50k", "cl100k", "o200k", "llama3"]:
        rule = PRESETS[name]
        assert rule.fast.findall(text) == regex.findall(rule.pattern, text)


BEHAVIORS = ["isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous"]


@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviours_match_huggingface(behavior: str, invert: bool) -> None:
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Split as HFSplit

    for pattern in [r"\s+", r"\d", r"[,.;]", r"ab|a"]:
        hf = HFSplit(Regex(pattern), behavior=behavior, invert=invert)
        ours = Split(pattern, behavior, invert)
        for text in ["hello world  x", "a1b22c333", ",,a,.b;", "abab a ba", "", "   ", "x"] + PROSE[:4]:
            want = [s for s, _ in hf.pre_tokenize_str(text)]
            got = [text[a:b] for a, b in ours.spans(text)]
            assert got == want, (pattern, behavior, invert, text)


def test_sequence_of_splits_matches_huggingface() -> None:
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Sequence
    from tokenizers.pre_tokenizers import Split as HFSplit

    first = r"\p{N}{1,3}"
    second = r" ?\p{L}+|\s+|[^\s\p{L}]+"
    hf = Sequence([HFSplit(Regex(first), "isolated"), HFSplit(Regex(second), "isolated")])
    rule = SplitRule((Split(first), Split(second)))
    for text in PROSE + ADVERSARIAL[:20]:
        assert rule.pieces(text) == [s for s, _ in hf.pre_tokenize_str(text)]


def test_resolve_rule() -> None:
    assert resolve_rule("gpt4") is PRESETS["gpt4"]
    assert resolve_rule(PRESETS["cl100k"].pattern) is PRESETS["cl100k"]
    assert resolve_rule(None).pieces("a b") == ["a b"]
    assert resolve_rule(r"\w+|\W+").pieces("ab, c") == ["ab", ", ", "c"]
    with pytest.raises(PatternError, match="does not compile"):
        resolve_rule(r"(unclosed")
    with pytest.raises(PatternError):
        resolve_rule("")
    with pytest.raises(ValueError, match="behaviour"):
        Split("x", "sideways")  # type: ignore[arg-type]
