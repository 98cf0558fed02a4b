from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.paths import SHARED

VOCABS = SHARED / "vocabs"

EDGE = [
    "",
    " ",
    "\n",
    "  \n\n\t  x",
    "Hello world! It's 2024; we've 1234567 numbers, 3.14159 and 1,000,000.",
    "don't I'LL we'Re THEY'VE 's 'd",
    "naïve café résumé Straße ÆØÅ ﬁ ǅ Ǆ",
    "Привет мир, как дела? Ελληνικά κείμενο. עברית עם ניקוד שָׁלוֹם. العربية ١٢٣",
    "中文文本，日本語のテキスト、한국어 텍스트。カタカナ ひらがな",
    "emoji 👍🏽 👨‍👩‍👧‍👦 🇩🇪 ❤️ zero\u200bwidth",
    "code:\n    def f(x):\n        return x**2  # comment\n\n\tif a != b && c <= d: pass\r\n",
    "   leading and trailing spaces   ",
    "tabs\tand\u00a0nbsp\u2003em-space\u3000ideographic",
    "<|endoftext|> special in text <|endoftext|><|endoftext|>",
    "digits 0 00 000 0000 ١٢٣٤ ①②③ ⅻ ½",
    "mixedCASE camelCaseWords snake_case_words kebab-case-words URL https://example.com/a?b=c&d=e#f",
    "\u0301combining at start and e\u0301 a\u0308",
    "$$$ %%% ^^^ ~~~ ||| `backticks` «quotes» “smart” ‘single’ — dash – en …",
    "lone surrogate \ud800 in text",
    "\x00\x01\x02 control \x7f\x1b[0m chars",
]


def _random_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    alphabet = (
        "abcdefghijklmnopqrstuvwxyz ABCXYZ 0123456789 \n\t\r'\".,;:!?-_/\\()[]{}<>|@#$%^&*+=~`"
        "éüßøñçÆ日本語中文한국어ПриветΩ€😀🎉\u00a0\u2003\u200d\u0301١٢"
    )
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200))) for _ in range(n)]


@pytest.fixture(scope="session")
def corpus() -> list[str]:
    """Broad text: minbpe's English article whole and in chunks of 25 lines, hand-written edge cases, random mixes."""
    text = (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    chunks = ["".join(lines[i : i + 25]) for i in range(0, len(lines), 25)]
    return [text, *chunks, *EDGE, *_random_texts(300)]


@pytest.fixture(scope="session")
def vocabs() -> Path:
    if not VOCABS.is_dir():
        pytest.skip("the shared GPT-2 vocabulary files are not available")
    return VOCABS
