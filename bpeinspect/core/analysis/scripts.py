"""The writing system of a text, from the Unicode Script property of its letters.

>>> dominant_script("Всеки човек има право")
'Cyrillic'
>>> dominant_script("すべての人間は、生まれながらにして自由であり")
'Kanji and kana'
>>> dominant_script("1234 !?")
''

Only letters count (general category L*): digits, punctuation and combining marks belong
to the Common or Inherited scripts or follow their base letter. Han mixed with kana is
named as Japanese writing is; every other text gets the script most of its letters are in,
with underscores turned into spaces (``Canadian Aboriginal``).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import cache, lru_cache

import regex

# Unicode 15.1 script names (long form), the most common first so lookups end early.
SCRIPT_NAMES: tuple[str, ...] = (
    "Latin", "Cyrillic", "Arabic", "Han", "Devanagari", "Greek", "Hebrew", "Ethiopic", "Hangul", "Hiragana",
    "Katakana", "Thai", "Bengali", "Tamil", "Telugu", "Kannada", "Malayalam", "Gujarati", "Gurmukhi", "Oriya",
    "Sinhala", "Myanmar", "Khmer", "Lao", "Tibetan", "Georgian", "Armenian", "Mongolian", "Canadian_Aboriginal",
    "Cherokee", "Tifinagh", "Vai", "Nko", "Syriac", "Thaana", "Yi", "Tagalog", "Bopomofo", "Adlam", "Ahom",
    "Anatolian_Hieroglyphs", "Avestan", "Balinese", "Bamum", "Bassa_Vah", "Batak", "Bhaiksuki", "Brahmi",
    "Braille", "Buginese", "Buhid", "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Chorasmian", "Coptic",
    "Cuneiform", "Cypriot", "Cypro_Minoan", "Deseret", "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs",
    "Elbasan", "Elymaic", "Glagolitic", "Gothic", "Grantha", "Gunjala_Gondi", "Hanifi_Rohingya", "Hanunoo",
    "Hatran", "Imperial_Aramaic", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kawi",
    "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khojki", "Khudawadi", "Lepcha", "Limbu", "Linear_A",
    "Linear_B", "Lisu", "Lycian", "Lydian", "Mahajani", "Makasar", "Mandaic", "Manichaean", "Marchen",
    "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs",
    "Miao", "Modi", "Mro", "Multani", "Nabataean", "Nag_Mundari", "Nandinagari", "New_Tai_Lue", "Newa", "Nushu",
    "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic", "Old_North_Arabian",
    "Old_Permic", "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Osage",
    "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician", "Psalter_Pahlavi", "Rejang",
    "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sogdian",
    "Sora_Sompeng", "Soyombo", "Sundanese", "Syloti_Nagri", "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet",
    "Takri", "Tangsa", "Tangut", "Tirhuta", "Toto", "Ugaritic", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi",
    "Zanabazar_Square",
)  # fmt: skip

JAPANESE = "Kanji and kana"
_KANA = ("Hiragana", "Katakana")
_KANA_SHARE = 0.05  # Japanese prose is mostly kana; Chinese quoting a kana word is not Japanese
SAMPLE_CHARS = 1 << 16  # long texts are judged by their start


@cache
def _matcher(name: str) -> regex.Pattern[str]:
    return regex.compile(rf"\p{{Script={name}}}")


@lru_cache(maxsize=1 << 16)
def char_script(ch: str) -> str:
    """The Unicode script of one character (``Common`` when it is none of the named ones).

    >>> char_script("ж"), char_script("ሀ"), char_script("5")
    ('Cyrillic', 'Ethiopic', 'Common')
    """
    for name in SCRIPT_NAMES:
        if _matcher(name).match(ch):
            return name
    return "Common"


def script_counts(text: str) -> Counter[str]:
    """How many letters of ``text`` each script has.

    >>> sorted(script_counts("abc где").items())
    [('Cyrillic', 3), ('Latin', 3)]
    """
    letters = Counter(ch for ch in text if unicodedata.category(ch).startswith("L"))
    out: Counter[str] = Counter()
    for ch, n in letters.items():
        out[char_script(ch)] += n
    return out


def dominant_script(text: str, *, limit: int = SAMPLE_CHARS) -> str:
    """The script of most of the first ``limit`` characters' letters, readable; ``""`` without letters."""
    counts = script_counts(text[:limit])
    if not counts:
        return ""
    kana = sum(counts[k] for k in _KANA)
    if counts["Han"] and kana >= _KANA_SHARE * counts.total():
        return JAPANESE
    name, _ = counts.most_common(1)[0]
    return name.replace("_", " ")


__all__ = ["JAPANESE", "SCRIPT_NAMES", "char_script", "dominant_script", "script_counts"]
