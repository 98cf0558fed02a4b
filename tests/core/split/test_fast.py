"""The direct split engine of the tiktoken presets: its classes, representatives and folds."""

from __future__ import annotations

import re

import pytest
import regex

from bpeinspect.core import load_tokenizer
from bpeinspect.core.split import fast as fs
from bpeinspect.core.split.rules import PRESETS
from bpeinspect.core.split.unicode_tables import FOLDS, RANGES

BMP = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000)

# the Unicode classes behind each escape, as the presets use them
ESCAPES = {
    r"\p{L}": ("Lu", "Lt", "Ll", "Lm", "Lo"),
    r"\p{Lu}": ("Lu",),
    r"\p{Lt}": ("Lt",),
    r"\p{Ll}": ("Ll",),
    r"\p{Lm}": ("Lm",),
    r"\p{Lo}": ("Lo",),
    r"\p{M}": ("M",),
    r"\p{N}": ("N",),
    r"\s": ("WS",),
}


def _expected(names: tuple[str, ...]) -> set[str]:
    return {chr(c) for n in names for a, b in RANGES[n] for c in range(a, min(b, 0xFFFF) + 1)} - {
        chr(c) for c in range(0xD800, 0xE000)
    }


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_direct_classes_are_tiktokens_on_the_whole_bmp(escape: str) -> None:
    body = fs._DIRECT_BODIES[escape]
    got = set(re.findall("[" + body + "]", BMP))
    assert got == _expected(ESCAPES[escape])


def test_characters_beyond_the_bmp_get_the_representative_of_their_class() -> None:
    table = fs._AstralTable()
    # every astral range of every class, at both ends, and some unassigned/other points
    for name, ranges in RANGES.items():
        for a, b in ranges:
            for cp in {a, b}:
                if cp > 0xFFFF:
                    rep = table[cp]
                    assert re.fullmatch("[" + fs._DIRECT_BODIES[_escape_of(name)] + "]", rep), (name, hex(cp))
    for cp in (0x1F600, 0x1F468, 0x10FFFF, 0xE0001, 0xF0000):
        assert table[cp] == fs._D_REPS[fs.OTHER] == table[0xD800]


def _escape_of(name: str) -> str:
    return {"Lu": r"\p{Lu}", "Lt": r"\p{Lt}", "Ll": r"\p{Ll}", "Lm": r"\p{Lm}", "Lo": r"\p{Lo}", "M": r"\p{M}", "N": r"\p{N}", "WS": r"\s"}[name]


def test_standard_library_folds_the_contraction_letters_like_tiktoken() -> None:
    # the direct engine keeps (?i:...) groups, so ``re``'s folding must be tiktoken's
    every = "".join(map(chr, range(0x80, 0x110000)))
    folds = {}
    for letter in "sdmtlvre":  # one pass of ``re`` over every code point per letter
        for m in re.finditer(f"(?i:{letter})", every):
            folds[0x80 + m.start()] = letter
    assert folds == FOLDS


@pytest.mark.parametrize("name", ["r50k", "cl100k", "o200k", "llama3"])
def test_astral_characters_and_lone_surrogates_split_like_the_regex_module(name: str) -> None:
    rule = PRESETS[name]
    compiled = regex.compile(rule.pattern)
    texts = [
        "héllo 🙂world 𝐀𝐁𝐂abc 𝟙𝟚𝟛4 👨‍👩‍👧 x\U0001F3FBy",
        "𐐀𐐨 Deseret 𐐷s's 𝒜'S 🙂'll",
        "\ue000\ue001 private use \U000F0000 \ud800 lone \udfff surrogates \ud801x",
        "a\U0001D165\U0001D166b \U00010300\U00010301 " * 50,
        "🙂" * 300 + " tail",
    ]
    for text in texts:
        assert rule.fast.findall(text) == compiled.findall(text), text


def test_the_pre_token_cache_stays_bounded_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    from bpeinspect.core import bpe
    from bpeinspect.core import tokenizer as tokmod

    tok = load_tokenizer("cl100k_base")
    cache = tok._cache
    assert cache[" hello"] == (tok.token_id(b" hello"),)  # a whole token: one lookup on its miss
    text = "Pre-tokens that are whole tokens never reach BPE; the rest do: antidisestablishmentarianism."
    want = tok.encode(text)
    monkeypatch.setattr(tokmod, "_CACHE_LIMIT", 10)
    assert tok.encode(text) == want  # the cache was over the limit: it starts again
    assert len(cache) < 40
    # long pre-tokens are kept apart, the most recent within a budget of characters
    monkeypatch.setattr(bpe, "LONG_BUDGET", 3000)
    runs = [" " * 1000 + "x", "=" * 1200, "\n" * 1100]
    want = [tok.encode(r) for r in runs]
    assert [tok.encode(r) for r in runs] == want
    assert sum(map(len, cache._long)) <= 3000 and "=" * 1200 in cache._long and " " * 1000 not in cache._long


@pytest.mark.parametrize("name", ["r50k", "cl100k", "o200k", "llama3"])
def test_sparse_astral_text_is_split_in_parts_like_the_regex_module(name: str) -> None:
    # few astral characters in long text: the text between cut points around them is split
    # as it is, the stretches with them on a translated copy (emoji joined by ZWJ, variation
    # selectors and spaces are one run)
    import random

    rule = PRESETS[name]
    compiled = regex.compile(rule.pattern)
    atoms = ["word", " ", "\n", "x\n", "9\n", ").\n", "\n\n", "  \n", "é\n", "𝐀\n", "🙂", "👨\u200d👩\u200d👧",
             "🙂 🙂", "\ufe0f", "\u200d", "𝟙", "'s", "ŉ", "\ud800", "\t", "abc def", "1234567"]  # fmt: skip
    rng = random.Random(17)
    for _ in range(300):
        weights = [rng.choice((1, 30)) if "\n" in a or a.isascii() else 1 for a in atoms]
        text = "".join(rng.choices(atoms, weights, k=rng.randrange(1, 300)))
        assert rule.fast.findall(text) == compiled.findall(text), text
    sparse = ("line of text\n" * 40 + "🙂\u200d🔥 x\n") * 30 + "end 👍"
    assert rule.fast.findall(sparse) == compiled.findall(sparse)
