"""The built-in split patterns with the regex module's own tables: the same pieces as the regex module, on every code point."""

from __future__ import annotations

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


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_regex_tables_splitter_on_every_code_point(name: str) -> None:
    pattern = PRESETS[name].pattern
    splitter = RegexTablesSplitter(pattern)
    cps = [c for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000]
    # Each character after " '": the pattern asks whether it folds to a contraction letter,
    # is a letter, a number, white space or none of these; and all of them run together.
    for start in range(0, len(cps), 8192):
        chars = [chr(c) for c in cps[start : start + 8192]]
        text = " '".join(chars) + "".join(chars)
        assert splitter.findall(text) == regex.findall(pattern, text)
