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


def test_the_script_table_is_matched_a_block_of_code_points_at_a_time(monkeypatch):
    """A worker builds the table while the window is in use: the text of all 1.1M code points,
    made and matched in one C call each, held the interpreter for 0.1 s; blocks keep each
    call short, and a script's run cut at a block's end comes out the same."""
    matched: list[int] = []
    compile_ = scripts.regex.compile

    class Recording:
        def __init__(self, pattern):
            self.pattern = pattern

        def finditer(self, text, *args, **kwargs):
            matched.append(len(text))
            return self.pattern.finditer(text, *args, **kwargs)

    monkeypatch.setattr(scripts.regex, "compile", lambda *a, **k: Recording(compile_(*a, **k)))
    table = scripts._script_table.__wrapped__()
    assert sum(matched) == 0x110000 and max(matched) <= 1 << 14
    values = scripts._VALUES
    for ch, script in (("a", "Latin"), ("ж", "Cyrillic"), ("ሀ", "Ethiopic"), ("5", "Common"), ("\ue000", "Unknown")):
        assert values[table[ord(ch)]] == script
    assert table == scripts._script_table()
