"""Unicode normalization as Hugging Face applies it, whose tables are older than Python's.

``HF_UNKNOWN`` in ``bpeinspect/core/normalize.py`` is generated from ``tokenizers`` and this
Python's ``unicodedata`` by running this file as a script; the first test checks it is current.
"""

from __future__ import annotations

import random
import sys
import unicodedata

import pytest
import regex

from bpeinspect.core import normalize
from bpeinspect.core.normalize import HF_UNKNOWN_VERSION, Unicode, from_hf
from tests.paths import ROOT

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers as hfn  # noqa: E402

FORMS = {"NFC": hfn.NFC(), "NFD": hfn.NFD(), "NFKC": hfn.NFKC(), "NFKD": hfn.NFKD()}


def unknown_to_hugging_face() -> list[int]:
    """The code points Python's unicodedata decomposes, reorders or composes and Hugging Face's
    normalizers leave as they are: no decomposition there, or no combining class (tested against
    U+0345, the highest class: a mark of a lower one moves before it), and the parts of a
    composition it does not know."""
    out: set[int] = set()
    for cp in range(0x110000):
        c = chr(cp)
        if 0xD800 <= cp < 0xE000 or not (unicodedata.decomposition(c) or unicodedata.combining(c)):
            continue
        if unicodedata.decomposition(c) and FORMS["NFKD"].normalize_str(c) == c:
            out.add(cp)
        elif 0 < unicodedata.combining(c) < 240 and FORMS["NFD"].normalize_str("a\u0345" + c) == "a\u0345" + c:
            out.add(cp)
    for cp in list(out):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            out.update(int(x, 16) for x in d.split())  # e.g. U+11935 U+11930 -> U+11938
    return sorted(out)


def _class_body(cps: list[int]) -> str:
    ranges: list[list[int]] = []
    for c in cps:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])

    return "".join(_esc(a) if a == b else f"{_esc(a)}-{_esc(b)}" for a, b in ranges)


def _esc(c: int) -> str:
    return f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def _singles(normalizer) -> tuple[list[str], list[str]]:
    """Every code point (but surrogates and the newline) on its own, and what ``normalizer`` makes of each."""
    singles = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != 10]
    theirs = normalizer.normalize_str("\n".join(singles)).split("\n")
    assert len(theirs) == len(singles)
    return singles, theirs


def generate() -> dict[str, str]:
    singles, stripped = _singles(hfn.StripAccents())
    marks = regex.compile(r"\p{M}")
    _, lowered = _singles(hfn.Lowercase())
    lower = [(c, t) for c, t in zip(singles, lowered) if c.lower() != t]
    assert all(c.lower() == c and len(t) == 1 for c, t in lower)  # (else a pair string cannot hold them)
    return {
        "HF_UNKNOWN_VERSION": unicodedata.unidata_version,
        "HF_UNKNOWN": _class_body(unknown_to_hugging_face()),
        "HF_NOT_MARKS": _class_body([ord(c) for c, t in zip(singles, stripped) if t == c and marks.match(c)]),
        "HF_MARKS_TOO": _class_body([ord(c) for c, t in zip(singles, stripped) if t == "" and not marks.match(c)]),
        "HF_LOWER": "".join(f"{_esc(ord(c))}{_esc(ord(t))}" for c, t in lower),
    }


def test_the_tables_are_current() -> None:
    if unicodedata.unidata_version != HF_UNKNOWN_VERSION:
        pytest.skip(f"generated for Unicode {HF_UNKNOWN_VERSION}, this Python has {unicodedata.unidata_version}")
    generated = generate()
    ours = {name: getattr(normalize, name) for name in generated}
    assert ours == {k: v.encode().decode("unicode_escape") for k, v in generated.items()}


def _texts(seed: int, n: int) -> list[str]:
    """Random short texts of the characters Hugging Face does not know, combining marks it
    does, letters they combine with, and compatibility characters."""
    rnd = random.Random(seed)
    unknown = [c for c in range(0x20000) if normalize._HF_UNKNOWN.match(chr(c))]
    pool = unknown + [ord(c) for c in "aeoAE\u0301\u0323\u0345\u0327\u1100\u1161\u11a8ﬁ①ｶﾞ \u11935"]
    return ["".join(chr(rnd.choice(pool)) for _ in range(rnd.randint(1, 8))) for _ in range(n)]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_normalizes_as_hugging_face(form: str) -> None:
    ours = from_hf({"type": form})
    assert ours == Unicode(form, tables="hf")
    singles = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c != 10]
    theirs = FORMS[form].normalize_str("\n".join(singles)).split("\n")
    assert [c for c, t in zip(singles, theirs) if ours.normalize(c) != t] == []
    for text in _texts(len(form), 3000):
        expected = FORMS[form].normalize_str(text)
        assert ours.normalize(text) == expected, text.encode("unicode_escape")
        out, starts, ends = ours.normalize_aligned(text)
        assert out == expected
        if starts is not None:
            assert ends is not None and len(starts) == len(ends) == len(out)
            assert all(0 <= a < b <= len(text) for a, b in zip(starts, ends)) and starts == sorted(starts)


def test_python_tables_stay_for_what_python_references() -> None:
    # a tiktoken rank file's NFC (Qwen's) is applied by its own package with Python's unicodedata
    assert Unicode("NFKC").normalize("\u32ff") == unicodedata.normalize("NFKC", "\u32ff") != "\u32ff"
    assert Unicode("NFKC", tables="hf").normalize("\u32ff") == "\u32ff"


if __name__ == "__main__":
    path = ROOT / "bpeinspect" / "core" / "normalize.py"
    text = path.read_text(encoding="utf-8")
    start = text.index("\n", text.index("# -- generated by")) + 1
    end = text.index("# -- end of generated")
    block = "".join(f'{name} = "{value}"\n' for name, value in generate().items())
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")
    print(f"wrote the generated tables into {path}", file=sys.stderr)


@pytest.mark.parametrize(("spec", "hf"), [("Lowercase", hfn.Lowercase()), ("StripAccents", hfn.StripAccents())])
def test_lowercase_and_strip_accents_as_hugging_face_on_every_code_point(spec: str, hf) -> None:
    ours = from_hf({"type": spec})
    assert ours is not None
    singles, theirs = _singles(hf)
    assert [c for c, t in zip(singles, theirs) if ours.normalize(c) != t] == []
    whole = "".join(singles)  # and all of them in one text, with its alignment
    out, starts, ends = ours.normalize_aligned(whole)
    assert out == hf.normalize_str(whole) == ours.normalize(whole)
    assert starts is None or len(starts) == len(out)
