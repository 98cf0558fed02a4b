"""The corpus measures papers report for a tokenizer on a text: fertility, Rényi efficiency and
vocabulary utilization (beside bytes/token, chars/token and the premium of
:mod:`bpeinspect.core.analysis.stats`).

* **fertility**: tokens per whitespace-separated word (``str.split()``'s words). Not defined for
  a text whose writing does not separate words by spaces (Chinese, Japanese, Thai, ...): there
  chars/token says how much text a token holds.
* **Rényi efficiency** (Zouhar et al., ACL 2023, "Tokenization and the Noiseless Channel"): the
  Rényi entropy of order α (2.5) of the token-id unigram distribution over the text, divided by
  the log of the full vocabulary size: ``log(Σ p_i^α) / ((1 - α) · log |V|)``.
* **utilization**: distinct ids used / vocabulary size.

Counts treat special-token text as ordinary text, as the other statistics do.

>>> from bpeinspect.core import load_tokenizer
>>> m = measure_text(load_tokenizer("cl100k_base"), "the cat and the hat", tokenizer="cl100k", source="demo")
>>> m.tokens, m.words, m.distinct, m.fertility
(5, 5, 5, 1.0)
>>> round(m.renyi_efficiency, 4), round(m.utilization, 8)  # 5 ids once each: log 5 / log 100277
(0.1398, 4.986e-05)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from bpeinspect.core.analysis.samples import Sample
from bpeinspect.core.analysis.shipping import counts_pre_tokens
from bpeinspect.core.analysis.stats import PerToken, iter_chunks
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.scripts import JAPANESE, dominant_script
from bpeinspect.core.split.cuts import can_cut, stream_cut
from bpeinspect.core.text import fix_surrogates
from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]

RENYI_ORDER = 2.5  # the order Zouhar et al. found to predict downstream quality best
# Scripts whose writing does not separate words by spaces (scriptio continua): fertility is not
# defined there. Named as dominant_script names them.
UNSPACED_SCRIPTS = frozenset(
    {"Han", JAPANESE, "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan", "Javanese", "Balinese"}
)
_CHUNK_CHARS = 1 << 20


def renyi_efficiency(counts: Iterable[int], vocab_size: int, order: float = RENYI_ORDER) -> float:
    """Rényi entropy of order ``order`` of the distribution ``counts`` (each id's count), over
    ``log(vocab_size)``; 0.0 for an empty text or a vocabulary of one token.

    >>> round(renyi_efficiency([1, 1, 1, 1], 4), 6)  # uniform over the whole vocabulary
    1.0
    >>> round(renyi_efficiency([3, 1], 4), 4)
    0.316
    """
    cs = [c for c in counts if c > 0]
    total = sum(cs)
    if not total or vocab_size < 2:
        return 0.0
    if order == 1.0:
        entropy = -sum(c / total * math.log(c / total) for c in cs)
    else:
        power_sum = sum((c / total) ** order for c in cs)
        entropy = math.log(power_sum) / (1.0 - order)
    return entropy / math.log(vocab_size)


@dataclass(frozen=True)
class Measures(PerToken):
    """The measures of one tokenizer on one text."""

    tokenizer: str
    source: str
    tokens: int
    bytes: int
    chars: int
    words: int  # whitespace-separated words
    distinct: int  # distinct ids used
    n_vocab: int  # the full vocabulary size, specials included
    renyi_efficiency: float
    script: str = ""  # the text's dominant script ("" without letters)
    premium: float | None = None

    @property
    def spaced(self) -> bool:
        """Whether the text's writing separates words by spaces (fertility is defined)."""
        return self.script not in UNSPACED_SCRIPTS

    @property
    def fertility(self) -> float | None:
        """Tokens per whitespace-separated word; ``None`` where words are not separated by spaces."""
        if not self.spaced or not self.words:
            return None
        return self.tokens / self.words

    @property
    def fertility_note(self) -> str:
        """Why fertility is missing, or ``""``."""
        if not self.spaced:
            return f"not defined: {self.script} writing does not separate words by spaces; see chars_per_token"
        if not self.words:
            return "not defined: the text has no words"
        return ""

    @property
    def utilization(self) -> float:
        return self.distinct / self.n_vocab if self.n_vocab else 0.0

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "tokenizer": self.tokenizer,
            "source": self.source,
            "tokens": self.tokens,
            "bytes": self.bytes,
            "chars": self.chars,
            "words": self.words,
            "bytes_per_token": round(self.bytes_per_token, 4),
            "chars_per_token": round(self.chars_per_token, 4),
            "fertility": None if self.fertility is None else round(self.fertility, 6),
            "renyi_efficiency": round(self.renyi_efficiency, 6),
            "utilization": round(self.utilization, 8),
            "distinct_tokens": self.distinct,
            "n_vocab": self.n_vocab,
        }
        if self.fertility is None:
            d["fertility_note"] = self.fertility_note
        if self.premium is not None:
            d["premium"] = round(self.premium, 4)
        return d


CSV_COLUMNS = (
    "tokenizer",
    "source",
    "tokens",
    "bytes",
    "chars",
    "words",
    "bytes_per_token",
    "chars_per_token",
    "fertility",
    "renyi_efficiency",
    "utilization",
    "distinct_tokens",
    "n_vocab",
    "premium",
)


@dataclass(frozen=True)
class Profile:
    """What the measures of one text need from its encoding: the token count, the distinct ids
    and the sum of each id's count to the power :data:`RENYI_ORDER` (children of a counting pool
    send this, not the ids)."""

    tokens: int
    distinct: int
    power_sum: float

    def renyi_efficiency(self, vocab_size: int, order: float = RENYI_ORDER) -> float:
        """As :func:`renyi_efficiency` of the counts: ``Σ p^α = Σ c^α / N^α``.

        >>> p = text_profile_of([3, 1])
        >>> round(p.renyi_efficiency(4), 4) == round(renyi_efficiency([3, 1], 4), 4)
        True
        """
        if not self.tokens or vocab_size < 2 or self.power_sum <= 0:
            return 0.0
        log_sum = math.log(self.power_sum) - order * math.log(self.tokens)
        return log_sum / (1.0 - order) / math.log(vocab_size)


def text_profile_of(counts: Iterable[int]) -> Profile:
    """The profile of one text's id counts."""
    cs = [c for c in counts if c > 0]
    return Profile(sum(cs), len(cs), math.fsum(c**RENYI_ORDER for c in cs))


def text_profile(tok: Tokenizer, text: str) -> Profile:
    """The profile of ``text`` (lone surrogates already fixed) under ``tok``, counted as
    :func:`~bpeinspect.core.analysis.shipping.count_text` counts.

    >>> from bpeinspect.core import load_tokenizer
    >>> text_profile(load_tokenizer("r50k_base"), "a a a")
    Profile(tokens=3, distinct=2, power_sum=6.656854249492381)
    """
    tally = _Tally(tok)
    tally.count_ids(text)
    return text_profile_of(tally.ids.values())


def text_ids(tok: Tokenizer, text: str) -> Counter[int]:
    """How often each id occurs in ``text`` (lone surrogates already fixed) under ``tok``.

    >>> from bpeinspect.core import load_tokenizer
    >>> sorted(text_ids(load_tokenizer("r50k_base"), "a a a").items())
    [(64, 1), (257, 2)]
    """
    tally = _Tally(tok)
    tally.count_ids(text)
    return tally.ids


def is_spaced(text: str) -> bool:
    """Whether ``text``'s writing separates words by spaces (see :data:`UNSPACED_SCRIPTS`).

    >>> is_spaced("Всеки човек"), is_spaced("人人生而自由")
    (True, False)
    """
    return dominant_script(text) not in UNSPACED_SCRIPTS


@dataclass(frozen=True)
class TextMeasures:
    """The corpus measures of one tokenizer on one text of a corpus (the languages view's)."""

    fertility: float | None  # None: the writing does not separate words by spaces
    renyi_efficiency: float
    utilization: float

    @classmethod
    def of(cls, profile: Profile, words: int, spaced: bool, n_vocab: int) -> TextMeasures:
        """
        >>> TextMeasures.of(Profile(10, 4, 50.0), words=5, spaced=True, n_vocab=100).fertility
        2.0
        """
        fertility = profile.tokens / words if spaced and words else None
        utilization = profile.distinct / n_vocab if n_vocab else 0.0
        return cls(fertility, profile.renyi_efficiency(n_vocab), utilization)


class _Tally:
    """Token-id counts, words, characters and bytes of a text read in consecutive parts."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self.ids: Counter[int] = Counter()
        self.words = self.chars = self.bytes = 0
        self._in_word = False  # the text so far ends inside a word
        self.head = ""  # the first characters, to tell the script

    def text(self, text: str) -> None:
        """Count one part (cut at a cut point, see :mod:`bpeinspect.core.split.cuts`)."""
        if not text:
            return
        if len(self.head) < 1 << 16:
            self.head += text[: (1 << 16) - len(self.head)]
        words = len(text.split())
        if words and self._in_word and not text[0].isspace():
            words -= 1  # the word the last part ended in goes on here
        self.words += words
        self._in_word = not text[-1].isspace()
        self.chars += len(text)
        self.bytes += len(text.encode("utf-8"))
        self.count_ids(text)

    def count_ids(self, text: str) -> None:
        tok = self.tok
        if not counts_pre_tokens(tok):
            self.ids.update(tok.encode_ordinary(text))
            return
        ids = self.ids
        for piece, n in Counter(tok.split_rule.pieces(text)).items():
            for i in tok.encode_piece(piece):
                ids[i] += n

    def result(self, tokenizer: str, source: str) -> Measures:
        return Measures(
            tokenizer,
            source,
            self.ids.total(),
            self.bytes,
            self.chars,
            self.words,
            len(self.ids),
            self.tok.n_vocab,
            renyi_efficiency(self.ids.values(), self.tok.n_vocab),
            dominant_script(self.head),
        )


def measure_text(tok: Tokenizer, text: str, *, tokenizer: str = "", source: str = "") -> Measures:
    """The measures of ``tok`` on one text held in memory."""
    tally = _Tally(tok)
    tally.text(fix_surrogates(text))
    return tally.result(tokenizer or tok.name, source)


def measure_sample(
    tok: Tokenizer,
    sample: Sample,
    *,
    tokenizer: str = "",
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
) -> Measures:
    """The measures of ``tok`` on one sample, read a part at a time (a whole text at once when
    the tokenizer's count is not a sum over pre-tokens: a normalizer or added tokens)."""
    tally = _Tally(tok)
    total = sample.size()
    for part in _safe_parts(sample, tok, progress, should_stop, total):
        tally.text(part)
    if progress is not None:
        progress(total, total)
    return tally.result(tokenizer or tok.name, sample.name)


def _safe_parts(
    sample: Sample, tok: Tokenizer, progress: Progress | None, should_stop: ShouldStop | None, total: int
) -> Iterator[str]:
    """The sample's text in parts cut where the tokenizer allows it, else whole."""

    def chunks() -> Iterator[str]:
        done = 0
        for text, n in iter_chunks(sample, _CHUNK_CHARS):
            if should_stop is not None and should_stop():
                raise Cancelled()
            done += n
            yield text
            if progress is not None:
                progress(done, total)

    return stream_cut(chunks(), size=_CHUNK_CHARS, cuts=can_cut(tok))


def with_premiums(rows: list[Measures], baseline: str | None) -> list[Measures]:
    """``rows`` with premiums (tokens / the baseline source's tokens under the same tokenizer)."""
    if baseline is None:
        return rows
    base = {r.tokenizer: r.tokens for r in rows if r.source == baseline}
    out = []
    for r in rows:
        b = base.get(r.tokenizer)
        out.append(_replace_premium(r, r.tokens / b if b else None))
    return out


def _replace_premium(r: Measures, premium: float | None) -> Measures:
    return replace(r, premium=premium)


__all__ = [
    "CSV_COLUMNS",
    "RENYI_ORDER",
    "UNSPACED_SCRIPTS",
    "Measures",
    "Profile",
    "TextMeasures",
    "is_spaced",
    "measure_sample",
    "measure_text",
    "renyi_efficiency",
    "text_ids",
    "text_profile",
    "text_profile_of",
    "with_premiums",
]
