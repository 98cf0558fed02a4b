"""A broad test corpus written for bpeinspect: prose in many scripts, code, and adversarial text."""

from __future__ import annotations

import functools
import random
import sysconfig
import unicodedata
from pathlib import Path

import regex

from tests.paths import SHARED

PROSE = [
    "The quick brown fox doesn't jump over the lazy dog; it's ALREADY there, isn't it? We'LL see.",
    "Der Fuchs springt über den faulen Hund, während die Straße naß glänzt. Größe: 12,5 cm.",
    "Le renard brun rapide saute par-dessus le chien paresseux. « C’est l’été ! » dit-il.",
    "El zorro marrón salta sobre el perro perezoso. ¿Por qué? ¡Porque sí! Año 2024.",
    "Быстрая коричневая лиса перепрыгивает через ленивую собаку. Ёжик в тумане — 1975 г.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Ὦ ξεῖν’, ἀγγέλλειν.",
    "الثعلب البني السريع يقفز فوق الكلب الكسول. ١٢٣٤٥ ٦٧٨٩٠ — مرحبا بالعالم!",
    "השועל החום המהיר קופץ מעל הכלב העצלן. שָׁלוֹם עֲלֵיכֶם",
    "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है। संख्या: १२३४५",
    "দ্রুত বাদামী শিয়াল অলস কুকুরের উপর লাফ দেয়।",
    "விரைவான பழுப்பு நரி சோம்பேறி நாயின் மேல் குதிக்கிறது.",
    "สุนัขจิ้งจอกสีน้ำตาลกระโดดข้ามสุนัขขี้เกียจ ๑๒๓",
    "敏捷的棕色狐狸跳过了懒狗。今天是2024年5月17日，天气晴朗！",
    "素早い茶色の狐がのろまな犬を飛び越える。カタカナとひらがな、漢字。ｱｲｳｴｵ１２３",
    "빠른 갈색 여우가 게으른 개를 뛰어넘습니다. 한국어 텍스트 123개",
    "Nhanh chóng con cáo nâu nhảy qua con chó lười biếng. Tiếng Việt có dấu.",
    "Hızlı kahverengi tilki tembel köpeğin üzerinden atlar. İstanbul'da ıslak.",
    "Szybki brązowy lis przeskakuje nad leniwym psem. Zażółć gęślą jaźń.",
    "სწრაფი ყავისფერი მელა ხტება ზარმაც ძაღლზე.",
    "Արագ շագանակագույն աղվեսը ցատկում է ծույլ շան վրայով։",
    "ፈጣኑ ቡናማ ቀበሮ በሰነፉ ውሻ ላይ ይዘልላል።",
    "Mbweha mwepesi wa kahawia anaruka juu ya mbwa mvivu.",
    "Ⅻ ½ ² ³ ① ⑳ 𝟘𝟙 ٣ ໑ ᠑ 𑁧 roman Ⅳ and fractions ¾",
]

ADVERSARIAL = [
    "",
    " ",
    "  ",
    "\n",
    "\n\n\n",
    "\r\n\r\n",
    "a\r\nb\rc\nd",
    "   leading and trailing   ",
    "tabs\t\tand\t \tmixed \t\n\t spaces",
    "line one  \n  line two\n\n   \n\t\nend   ",
    "x \n",
    " \n ",
    "\u00a0\u2000\u2001\u3000 nbsp and friends \u2028\u2029\u0085",
    "\x1c\x1d\x1e\x1f unit separators\x00\x01\x7f",
    "1 12 123 1234 12345 123456 1234567 3.14159 -42 1e10 0x1F 1,000,000",
    "٠١٢٣٤٥٦٧٨٩ ０１２３４５６７８９ ๐๑๒",
    "I'm you're he's she'd we've they'll it'S I'M YOU'RE 'll 've 're 's 't 'd 'm",
    "don't DON'T Don'T dOn't ’s ‘t '''''  ''s",
    "'ſ 'ſt ſ long s Kelvin K İstanbul ǅungla ǈ ǋ",
    "👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇩🇪🇯🇵 ❤️ 🧑🏿‍🚀 🫠",
    "e\u0301 a\u0300\u0301\u0302 \u0301start combining \u20dd ñ vs n\u0303",
    "क्षत्रिय ज्ञ श्री",
    "<|endoftext|>hello<|endoftext|> <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|> <|endofprompt|>",
    "<|endoftext|",
    "<|endoftext|><|endoftext|>",
    "a" * 1000,
    " " * 1000,
    "\n" * 300 + "x",
    "ab" * 700,
    "🎉" * 200,
    "mixed日本語and English없다123abc",
    "URL: https://example.com/path?q=1&r=two#frag user@example.org",
    "CamelCaseIdentifier snake_case_name SCREAMING_CASE kebab-case",
    "\ufeffBOM at start and \ufffd replacement",
    "\U0001d400\U0001d401 math bold, \U00020000 CJK ext B, \U000e0001 tag",
    "!!! ??? ... --- *** ### $$$ %%% ^^^ &&& ((())) [[]] {{}}",
    "    def f(x):\n        return x  # comment\n\n\nclass A:\n\tpass\n",
    "\t\t\tindented\n    \n        \n",
]

# Long pre-tokens, which the level-wise merge and the long-piece cache handle: runs of one
# character, rows of one emoji sequence, runs glued to words, runs that come back.
_FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
LONG_RUNS = [
    "x" * 3001,
    " " * 777 + "x" + " " * 256,
    "\n" * 513 + "y",
    "\r\n" * 300,
    "\t" * 401 + "tab",
    "é" * 641,
    "into" + "é" * 400 + " and" + "é" * 400,
    "=" * 700 + "\n" + "-" * 701 + "\n" + "=" * 700,
    "-=" * 300 + "+",
    _FAMILY * 61,
    "👍🏽" * 150 + "🏳️‍🌈" * 90,
    "的" * 500 + "ー" * 300,
    "ab" * 2000 + "a",
    ("word " + "#" * 300 + "\n") * 3,
    "0" * 1000 + "1" * 1001,
]

# Letters and marks new in Unicode 16 and 17 (and U+0295, a letter moved from Ll to Lo), before newlines.
NEW_IN_UNICODE_17 = "".join(f"{w} x{c}\n{c}\n1{c}\n" for w in ("ab", "A") for c in "\ua7ce\ua7cf\u058b\u0295\u05c8\U000323b0\u1acf")


def code_samples(limit_bytes: int = 400_000) -> list[str]:
    """Python sources from the running interpreter's standard library."""
    out, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out.append(text)
        total += len(text)
        if total > limit_bytes:
            break
    return out


def taylorswift() -> str:
    return (SHARED / "corpora" / "taylorswift.txt").read_text(encoding="utf-8")


def all_texts() -> list[str]:
    return PROSE + ADVERSARIAL + LONG_RUNS + code_samples() + [taylorswift()]


@functools.cache
def recent_code_points() -> tuple[int, ...]:
    """Code points assigned since Python 3.11's Unicode (14.0) that the ``regex`` module knows:
    those of 15.0 and 15.1 (which tiktoken and Hugging Face know too) and of 16.0 and 17.0."""
    assigned = regex.compile(r"\P{Cn}")
    return tuple(
        c
        for c in range(0x110000)
        if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) == "Cn" and assigned.match(chr(c))
    )


def recent_unicode_texts(seed: int, n: int) -> list[str]:
    """``n`` short random texts drawn from all of Unicode, weighted to recently assigned
    characters, with the ASCII that split patterns care about (contractions, digits, spaces)."""
    rnd = random.Random(seed)
    recent = recent_code_points()
    common = [ord(c) for c in "abc XYZ 's 't 'll 123 \n\r\t  .,!?-\u4e00"]
    out = []
    for _ in range(n):
        cps = []
        for _ in range(rnd.randint(1, 12)):
            r = rnd.random()
            cps.append(rnd.choice(recent) if r < 0.4 else rnd.choice(common) if r < 0.75 else rnd.randrange(0x110000))
        out.append("".join(chr(c) for c in cps if not 0xD800 <= c < 0xE000))
    return out
