"""The writing system of a text, from the Unicode Script property of its letters.

>>> dominant_script("Всеки човек има право")
'Cyrillic'
>>> dominant_script("すべての人間は、生まれながらにして自由であり")
'Kanji and kana'
>>> dominant_script("1234 !?")
''

Only letters count (general category L*): digits, punctuation and combining marks belong
to the Common or Inherited scripts or follow their base letter. :func:`char_script` is the one
script classifier of the package (the vocabulary browser and comparison use it too): the
Unicode Script property of a code point, as the ``regex`` module's Unicode tables give it. Han mixed with kana is
named as Japanese writing is; every other text gets the script most of its letters are in,
with underscores turned into spaces (``Canadian Aboriginal``).
"""

from __future__ import annotations

import functools
from collections import Counter

import regex

# Unicode 15.1 script names (long form), the most common first so lookups end early.
SCRIPT_NAMES: tuple[str, ...] = (
    "Latin",
    "Cyrillic",
    "Arabic",
    "Han",
    "Devanagari",
    "Greek",
    "Hebrew",
    "Ethiopic",
    "Hangul",
    "Hiragana",
    "Katakana",
    "Thai",
    "Bengali",
    "Tamil",
    "Telugu",
    "Kannada",
    "Malayalam",
    "Gujarati",
    "Gurmukhi",
    "Oriya",
    "Sinhala",
    "Myanmar",
    "Khmer",
    "Lao",
    "Tibetan",
    "Georgian",
    "Armenian",
    "Mongolian",
    "Canadian_Aboriginal",
    "Cherokee",
    "Tifinagh",
    "Vai",
    "Nko",
    "Syriac",
    "Thaana",
    "Yi",
    "Tagalog",
    "Bopomofo",
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bhaiksuki",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Chorasmian",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Deseret",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Gunjala_Gondi",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Imperial_Aramaic",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khojki",
    "Khudawadi",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mro",
    "Multani",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tangsa",
    "Tangut",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Zanabazar_Square",
    # Unicode 16, 17 and later (used when the installed ``regex`` knows them)
    "Garay",
    "Gurung_Khema",
    "Kirat_Rai",
    "Ol_Onal",
    "Sunuwar",
    "Todhri",
    "Tulu_Tigalari",
    "Beria_Erfe",
    "Sidetic",
    "Tai_Yo",
    "Tolong_Siki",
    "Jurchen",
    "Seal",
    "Proto_Cuneiform",
)
COMMON = "Common"  # digits, punctuation, symbols, spaces: shared by all scripts
INHERITED = "Inherited"  # combining marks that take the script of the letter before them
UNKNOWN = "Unknown"  # unassigned, private use and surrogate code points
NO_SCRIPT = frozenset((COMMON, INHERITED, UNKNOWN))  # values that name no writing system

JAPANESE = "Kanji and kana"
_KANA = ("Hiragana", "Katakana")
_KANA_SHARE = 0.05  # Japanese prose is mostly kana; Chinese quoting a kana word is not Japanese
SAMPLE_CHARS = 1 << 16  # long texts are judged by their start
_TABLE_BLOCK = 1 << 13  # code points of the script table's text matched at a time


def _known(name: str) -> bool:
    try:
        regex.compile(rf"\p{{Script={name}}}")
    except regex.error:
        return False
    return True


# Every value of the property this ``regex`` knows; the table's index 0 is Unknown, which is also
# where a code point of a script newer than this list would land.
_VALUES: tuple[str, ...] = (UNKNOWN, COMMON, INHERITED, *(n for n in SCRIPT_NAMES if _known(n)))
_LETTER = regex.compile(r"\p{L}")


@functools.cache
def _script_table() -> bytes:
    """One byte per code point (0 to U+10FFFF): its index in ``_VALUES``. Built once, in about
    0.2 s: one alternation of ``\\p{Script=...}+`` runs over every code point, so each run of
    one script costs a single match."""
    # Unknown is matched too: a position no alternative matches would cost a try of each
    pattern = regex.compile("|".join(f"(\\p{{Script={name}}}+)" for name in _VALUES))
    table = bytearray(0x110000)  # zeros: Unknown, for a script newer than SCRIPT_NAMES
    # a block of code points at a time: one join of all 1.1M took 0.1 s with the interpreter held
    # (a worker builds the table while the window is in use); a run cut at a block's end goes on
    # in the next block, with the same value
    for lo in range(0, len(table), _TABLE_BLOCK):
        block = "".join([chr(c) for c in range(lo, min(lo + _TABLE_BLOCK, len(table)))])
        for m in pattern.finditer(block):
            table[lo + m.start() : lo + m.end()] = bytes([m.lastindex - 1]) * (m.end() - m.start())
    return bytes(table)


def char_script(ch: str) -> str:
    """The Unicode Script property of one character: a script name such as ``Latin``, or
    ``Common`` (shared by all scripts), ``Inherited`` (combining marks) or ``Unknown``.

    >>> char_script("ж"), char_script("ሀ"), char_script("5"), char_script("\\u0301"), char_script("\\ue000")
    ('Cyrillic', 'Ethiopic', 'Common', 'Inherited', 'Unknown')
    """
    return _VALUES[_script_table()[ord(ch)]]


def script_names() -> tuple[str, ...]:
    """Every script :func:`char_script` can name (without Common, Inherited and Unknown), the
    most common first."""
    return _VALUES[3:]


def script_counts(text: str) -> Counter[str]:
    """How many letters of ``text`` each script has.

    >>> sorted(script_counts("abc где").items())
    [('Cyrillic', 3), ('Latin', 3)]
    """
    letters = Counter(_LETTER.findall(text))  # regex's Unicode tables, as char_script's
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


__all__ = [
    "COMMON",
    "INHERITED",
    "JAPANESE",
    "NO_SCRIPT",
    "SCRIPT_NAMES",
    "UNKNOWN",
    "char_script",
    "dominant_script",
    "script_counts",
    "script_names",
]
