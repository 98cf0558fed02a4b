"""The built-in split patterns with the regex module's own tables: the same pieces as the regex module, on every code point."""

from __future__ import annotations

import re

import pytest
import regex

from bpeinspect.core.split.regex_tables import RegexTablesSplitter
from bpeinspect.core.split.rules import PRESETS
from tests.core.corpus import all_texts


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_regex_tables_splitter_equals_the_regex_module(name: str) -> None:
    pattern = PRESETS[name].pattern
    splitter = RegexTablesSplitter(pattern)
    for text in all_texts():
        assert splitter.findall(text) == regex.findall(pattern, text)


# The splitter's table is built once per case rule: with (?i) (every preset but GPT-2's and r50k's)
# and without. o200k's pattern asks the most questions of a character (cased, uncased and other
# letters, marks, numbers, white space, folding); GPT-2's asks them without folding. Those two run
# on every code point, the others on a sample of each stretch (their classes are unions of o200k's).
EVERY_CODE_POINT = {"o200k", "gpt2"}
SAMPLE_STEP = 17


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_regex_tables_splitter_on_every_code_point(name: str) -> None:
    pattern = PRESETS[name].pattern
    splitter = RegexTablesSplitter(pattern)
    cps = [c for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000]
    if name not in EVERY_CODE_POINT:
        cps = cps[sorted(PRESETS).index(name) % SAMPLE_STEP :: SAMPLE_STEP]
    # Each character after " '": the pattern asks whether it folds to a contraction letter,
    # is a letter, a number, white space or none of these; and all of them run together.
    for start in range(0, len(cps), 8192):
        chars = [chr(c) for c in cps[start : start + 8192]]
        text = " '".join(chars) + "".join(chars)
        assert splitter.findall(text) == regex.findall(pattern, text)


def test_the_code_points_swept_whole_cover_both_case_rules_and_every_class_a_preset_asks() -> None:
    swept = [PRESETS[name].pattern for name in EVERY_CODE_POINT]
    assert {"(?i" in p for p in swept} == {True, False}
    asked = {c for name in PRESETS for c in re.findall(r"\\p\{\w+\}|\\s", PRESETS[name].pattern)}
    assert asked <= {c for p in swept for c in re.findall(r"\\p\{\w+\}|\\s", p)}
