"""Normalizers: the text changes a tokenizer makes before it splits and merges, with alignment.

Real vocabularies normalize: Qwen2/2.5/3, GPT-NeoX/Pythia and OLMo-1 apply Unicode NFC,
legacy Claude NFKC, SentencePiece-style models replace spaces by ``▁`` and prepend one.
Every step here does exactly what Hugging Face ``tokenizers`` does to the text, and also
says where each character of its output came from, so that token offsets can point into the
user's own text rather than into the normalized copy.

An alignment is two lists: ``starts[i]``/``ends[i]`` is the span of the *input* that output
character ``i`` came from (``None`` for both: the identity). A composed character points at
all the characters it was made from; an inserted character (a prepended ``▁``) points at the
character it was inserted before, as Hugging Face's ``NormalizedString.prepend`` does.

>>> n = Sequence((Prepend("▁"), Replace(" ", "▁")))
>>> n.normalize("hi there")
'▁hi▁there'
>>> out, starts, ends = NFC().normalize_aligned("cafe\\u0301!")
>>> out, starts[3:], ends[3:]
('café!', [3, 5], [5, 6])
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence as _Seq
from dataclasses import dataclass
from typing import Any

import regex

# Rust's char::is_whitespace (the White_Space property), which HF's Strip uses
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
_CHUNKS = regex.compile(r"\S+|\s+")


class UnsupportedNormalizer(ValueError):
    """A normalizer bpeinspect cannot apply exactly (named in the message)."""


class Normalizer:
    """One normalization step. Subclasses implement :meth:`normalize` and :meth:`_aligned`."""

    def normalize(self, text: str) -> str:
        raise NotImplementedError

    def _aligned(self, text: str) -> tuple[str, list[int] | None, list[int] | None]:
        """The output and, per output character, the input span it came from (``None``: identity)."""
        raise NotImplementedError

    def normalize_aligned(self, text: str) -> tuple[str, list[int] | None, list[int] | None]:
        """``(output, starts, ends)``; ``starts``/``ends`` are ``None`` when nothing moved."""
        return self._aligned(text)

    def describe(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()


class Stateless(Normalizer):
    """A normalizer without settings: all instances are equal."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


def _compose(prev: tuple[list[int] | None, list[int] | None], local: tuple[list[int] | None, list[int] | None]):
    """Alignment into the original text, given one into the previous step's output."""
    ps, pe = prev
    ls, le = local
    if ls is None:
        return ps, pe
    if ps is None:
        return ls, le
    assert pe is not None and le is not None
    return [ps[i] for i in ls], [pe[j - 1] for j in le]


@dataclass(frozen=True)
class Sequence(Normalizer):
    """Steps applied one after another (HF ``Sequence``)."""

    steps: tuple[Normalizer, ...]

    def normalize(self, text: str) -> str:
        for s in self.steps:
            text = s.normalize(text)
        return text

    def _aligned(self, text: str):
        al: tuple[list[int] | None, list[int] | None] = (None, None)
        for s in self.steps:
            text, ls, le = s._aligned(text)
            al = _compose(al, (ls, le))
        return text, al[0], al[1]

    def describe(self) -> str:
        return " + ".join(s.describe() for s in self.steps) or "none"


def pieces_aligned(text: str, pieces: list[tuple[int, int, str]]):
    """Output and alignment when the spans ``(a, b, replacement)`` of ``text`` are replaced.

    Characters of a replacement point at the whole span they replace; a replacement of an
    empty span points at the next input character (the previous one at the end).
    """
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    n = len(text)
    for a, b, rep in pieces:
        if a > pos:
            out.append(text[pos:a])
            starts.extend(range(pos, a))
            ends.extend(range(pos + 1, a + 1))
        if rep:
            out.append(rep)
            if a == b:  # an insertion
                s, e = (a, a + 1) if a < n else (max(a - 1, 0), a)
            else:
                s, e = a, b
            starts.extend([s] * len(rep))
            ends.extend([e] * len(rep))
        pos = b
    if pos < n:
        out.append(text[pos:])
        starts.extend(range(pos, n))
        ends.extend(range(pos + 1, n + 1))
    return "".join(out), starts, ends


@dataclass(frozen=True)
class Replace(Normalizer):
    """Replace every match of ``pattern`` (a literal string, or a regex if ``is_regex``) by ``content``."""

    pattern: str
    content: str
    is_regex: bool = False

    def _regex(self) -> regex.Pattern[str]:
        return regex.compile(self.pattern if self.is_regex else regex.escape(self.pattern))

    def normalize(self, text: str) -> str:
        if not self.is_regex:
            return text.replace(self.pattern, self.content) if self.pattern else text
        return self._regex().sub(lambda _m: self.content, text)

    def _aligned(self, text: str):
        if not self.is_regex and len(self.pattern) == 1 and len(self.content) == 1:
            return text.replace(self.pattern, self.content), None, None  # one for one: nothing moves
        if not self.is_regex and (not self.pattern or self.pattern not in text):
            return text, None, None
        found = [(m.start(), m.end(), self.content) for m in self._regex().finditer(text) if m.end() > m.start()]
        if not found:
            return text, None, None
        return pieces_aligned(text, found)

    def describe(self) -> str:
        return f"Replace({self.pattern!r} → {self.content!r})"


@dataclass(frozen=True)
class Prepend(Normalizer):
    """Put ``prefix`` before a non-empty text (HF ``Prepend``; SentencePiece's dummy prefix)."""

    prefix: str

    def normalize(self, text: str) -> str:
        return self.prefix + text if text else text

    def _aligned(self, text: str):
        if not text or not self.prefix:
            return text, None, None
        return pieces_aligned(text, [(0, 0, self.prefix)])

    def describe(self) -> str:
        return f"Prepend({self.prefix!r})"


@dataclass(frozen=True)
class Strip(Normalizer):
    """Remove whitespace at the start and/or the end (HF ``Strip``)."""

    left: bool = True
    right: bool = True

    def normalize(self, text: str) -> str:
        if self.left:
            text = text.lstrip(_WS)
        if self.right:
            text = text.rstrip(_WS)
        return text

    def _aligned(self, text: str):
        a = len(text) - len(text.lstrip(_WS)) if self.left else 0
        b = len(text.rstrip(_WS)) if self.right else len(text)
        b = max(a, b)
        if a == 0 and b == len(text):
            return text, None, None
        return text[a:b], list(range(a, b)), list(range(a + 1, b + 1))

    def describe(self) -> str:
        side = "both ends" if self.left and self.right else "start" if self.left else "end"
        return f"Strip({side})"


class Lowercase(Stateless):
    """Lower-case each character on its own (Rust's ``char::to_lowercase``: no final-sigma rule)."""

    def normalize(self, text: str) -> str:
        if text.isascii():
            return text.lower()
        if "Σ" not in text:
            return text.lower()
        return "".join([c.lower() for c in text])

    def _aligned(self, text: str):
        out = self.normalize(text)
        if len(out) == len(text):
            return out, None, None  # every character became one character
        return pieces_aligned(text, [(i, i + 1, c.lower()) for i, c in enumerate(text) if c.lower() != c])



class StripAccents(Stateless):
    """Remove combining marks, spacing ones too (HF ``StripAccents``, used after NFD/NFKD)."""

    _MARKS = regex.compile(r"\p{M}+")

    def normalize(self, text: str) -> str:
        return self._MARKS.sub("", text)

    def _aligned(self, text: str):
        found = [(m.start(), m.end(), "") for m in self._MARKS.finditer(text)]
        if not found:
            return text, None, None
        return pieces_aligned(text, found)



@dataclass(frozen=True)
class Unicode(Normalizer):
    """Unicode normalization form ``NFC``, ``NFD``, ``NFKC`` or ``NFKD``.

    Alignment: the text is cut into clusters (a starter and the combining marks after it;
    clusters that compose with each other, such as Hangul jamo, are joined). A cluster the
    form leaves alone keeps its characters' own spans; every character of a changed cluster
    points at the whole cluster.
    """

    form: str

    def normalize(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)

    def _aligned(self, text: str):
        form = self.form
        if unicodedata.is_normalized(form, text):
            return text, None, None
        pieces: list[tuple[int, int, str]] = []
        for m in _CHUNKS.finditer(text):
            chunk = m.group()
            if unicodedata.is_normalized(form, chunk):
                continue
            pieces.extend(_changed_clusters(form, chunk, m.start()))
        out, starts, ends = pieces_aligned(text, pieces)
        if out != unicodedata.normalize(form, text):
            # a composition across chunks we did not foresee: fall back to one coarse span
            whole = unicodedata.normalize(form, text)
            return whole, [0] * len(whole), [len(text)] * len(whole)
        return out, starts, ends

    def describe(self) -> str:
        return self.form


def NFC() -> Unicode:  # noqa: N802 (named as the form)
    return Unicode("NFC")


def _changed_clusters(form: str, chunk: str, base: int) -> list[tuple[int, int, str]]:
    """``(start, end, normalized)`` for the clusters of ``chunk`` that ``form`` changes."""
    bounds = [i for i, c in enumerate(chunk) if i == 0 or unicodedata.combining(c) == 0]
    bounds.append(len(chunk))
    clusters: list[tuple[int, int]] = []
    for a, b in zip(bounds, bounds[1:]):
        if clusters:
            pa, pb = clusters[-1]
            prev, cur = chunk[pa:pb], chunk[a:b]
            nf = unicodedata.normalize
            if nf(form, prev + cur) != nf(form, prev) + nf(form, cur):
                clusters[-1] = (pa, b)
                continue
        clusters.append((a, b))
    out = []
    for a, b in clusters:
        src = chunk[a:b]
        dst = unicodedata.normalize(form, src)
        if dst != src:
            out.append((base + a, base + b, dst))
    return out


# -- Hugging Face tokenizer.json --------------------------------------------------------------------


def from_hf(obj: Any) -> Normalizer | None:
    """The normalizer of a ``tokenizer.json`` ``normalizer`` object (``None`` for null).

    Raises :class:`UnsupportedNormalizer` naming any step that cannot be applied exactly.

    >>> from_hf({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}).describe()
    'NFC + Lowercase'
    """
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise UnsupportedNormalizer("the normalizer is not an object")
    kind = obj.get("type")
    if kind == "Sequence":
        subs = obj.get("normalizers")
        if not isinstance(subs, list):
            raise UnsupportedNormalizer("a Sequence normalizer without a 'normalizers' list")
        steps = tuple(s for s in (from_hf(x) for x in subs) if s is not None)
        return steps[0] if len(steps) == 1 else Sequence(steps)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return Unicode(kind)
    if kind == "Lowercase":
        return Lowercase()
    if kind == "StripAccents":
        return StripAccents()
    if kind == "Strip":
        return Strip(bool(obj.get("strip_left", True)), bool(obj.get("strip_right", True)))
    if kind == "Prepend":
        prefix = obj.get("prepend")
        if not isinstance(prefix, str):
            raise UnsupportedNormalizer("a Prepend normalizer without a 'prepend' string")
        return Prepend(prefix)
    if kind == "Replace":
        pat, content = obj.get("pattern"), obj.get("content")
        if not (isinstance(pat, dict) and len(pat) == 1 and isinstance(content, str)):
            raise UnsupportedNormalizer(f"a Replace normalizer with an unreadable pattern ({pat!r})")
        ((pk, pv),) = pat.items()
        if pk not in ("String", "Regex") or not isinstance(pv, str):
            raise UnsupportedNormalizer(f"a Replace normalizer with an unreadable pattern ({pat!r})")
        if pk == "Regex":
            try:
                regex.compile(pv)
            except regex.error as exc:
                raise UnsupportedNormalizer(f"the Replace pattern {pv!r} does not compile: {exc}") from None
        return Replace(pv, content, is_regex=pk == "Regex")
    raise UnsupportedNormalizer(f"the normalizer {kind or '?'} is not supported (bpeinspect applies NFC, NFD, NFKC, "
                                "NFKD, Lowercase, Strip, StripAccents, Replace, Prepend and Sequences of them)")


def to_hf(norm: Normalizer | None) -> dict | None:
    """The ``tokenizer.json`` object for ``norm`` (the inverse of :func:`from_hf`)."""
    if norm is None:
        return None
    if isinstance(norm, Sequence):
        return {"type": "Sequence", "normalizers": [to_hf(s) for s in norm.steps]}
    if isinstance(norm, Unicode):
        return {"type": norm.form}
    if isinstance(norm, Lowercase):
        return {"type": "Lowercase"}
    if isinstance(norm, StripAccents):
        return {"type": "StripAccents"}
    if isinstance(norm, Strip):
        return {"type": "Strip", "strip_left": norm.left, "strip_right": norm.right}
    if isinstance(norm, Prepend):
        return {"type": "Prepend", "prepend": norm.prefix}
    if isinstance(norm, Replace):
        return {"type": "Replace", "pattern": {"Regex" if norm.is_regex else "String": norm.pattern},
                "content": norm.content}
    raise UnsupportedNormalizer(f"{norm.describe()} has no tokenizer.json form")


def sequence(steps: _Seq[Normalizer | None]) -> Normalizer | None:
    """One normalizer for ``steps`` (``None`` entries dropped; ``None`` if nothing is left)."""
    kept = tuple(s for s in steps if s is not None)
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Sequence(kept)


def badge(tok: Any) -> tuple[str, str] | None:
    """A short label and a tooltip saying how ``tok`` changes text before merging (``None``: it does not).

    >>> from bpeinspect.core import load_tokenizer
    >>> badge(load_tokenizer("gpt2")) is None
    True
    """
    norm = getattr(tok, "normalizer", None)
    model = getattr(tok, "describe_model", None)
    steps = norm.describe() if norm is not None else "none"
    after = "Token offsets point into your own text."
    if model is not None:
        return "SentencePiece", f"{model()}.\nNormalizer: {steps}.\n{after}"
    if norm is None:
        return None
    label = steps if len(steps) <= 16 else steps[:15] + "…"
    return label, f"Normalizer: {steps}. The text is normalized before it is split and merged.\n{after}"


__all__ = [
    "Lowercase",
    "Normalizer",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
    "Unicode",
    "UnsupportedNormalizer",
    "badge",
    "from_hf",
    "sequence",
    "to_hf",
]
