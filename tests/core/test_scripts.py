"""The one script classifier: every code point's script is the Unicode Script property, and
a token's scripts agree with the counts of its characters."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest
import regex

from bpeinspect.core import scripts
from bpeinspect.core.analysis import vocab


def test_one_char_script_for_the_whole_package() -> None:
    assert vocab.char_script is scripts.char_script


def test_char_script_is_the_unicode_script_property_for_every_code_point() -> None:
    chars: dict[str, list[str]] = defaultdict(list)
    for cp in range(0x110000):
        ch = chr(cp)
        chars[scripts.char_script(ch)].append(ch)
    assert {"Latin", "Common", "Inherited", "Unknown", "Tagalog", "Ethiopic"} <= set(chars)
    for name, members in chars.items():
        assert regex.fullmatch(rf"\p{{Script={name}}}+", "".join(members)), name


@pytest.mark.parametrize(
    ("text", "want"),
    [("ᜀ", ("Tagalog",)), ("ꦲ", ("Javanese",)), ("e\u0301", ("Latin",)), ("\ue000", ("Common",)), ("ⴰ", ("Tifinagh",))],
)
def test_token_scripts_names_every_script(text: str, want: tuple[str, ...]) -> None:
    assert vocab.token_scripts(text.encode()) == want


def test_script_counts_and_token_scripts_agree_on_letters() -> None:
    letters = regex.findall(r"\p{L}", "".join(map(chr, range(0x110000))))
    for ch in itertools.islice(letters, 0, None, 7):
        named = scripts.char_script(ch)
        got = vocab.token_scripts(ch.encode("utf-8", "surrogatepass"))
        assert got == ((named,) if named not in scripts.NO_SCRIPT else ("Common",)), ch
        assert scripts.script_counts(ch) == {named: 1}
