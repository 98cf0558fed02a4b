"""What a vocabulary spends on a corpus: how often each token occurs, the share of the
vocabulary never used, and where the unused budget went, script by script, with the tokens
that could never occur at all (unreachable: the encoder never produces them) marked.

The ids are counted on every core (:class:`~bpeinspect.core.analysis.corpus_count.CountingPool`),
each text's count of every id sent back; special tokens are left out (ordinary encoding never
gives them).

>>> from bpeinspect.core import Tokenizer
>>> tok = Tokenizer.from_merges([(97, 98), (256, 99)], pattern=None)  # ab, abc
>>> use = vocabulary_use(tok, ["abcabc ab"], processes=1)
>>> use.used, use.vocab, use.unused[-2:], use.rank_frequency()[:3].tolist()  # abc twice, ab and a space once
(3, 258, [254, 255], [2, 1, 1])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bpeinspect.core.analysis.corpus_count import CountingPool
from bpeinspect.core.analysis.measures import text_ids
from bpeinspect.core.analysis.token_categories import category_codes, put_categories
from bpeinspect.core.analysis.vocab import unreachable_tokens
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.text import fix_surrogates
from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class VocabularyUse:
    """One tokenizer's token use over a corpus."""

    tokenizer: str
    tokens: int  # tokens of the whole corpus
    counts: dict[int, int]  # id -> occurrences, the ids used only
    unused: list[int]  # ids never used, special tokens left out, ascending
    unreachable: frozenset[int] | None  # ids the encoder never produces (None: not looked for)
    categories: dict[int, str]  # unused id -> its token_category

    @property
    def used(self) -> int:
        return len(self.counts)

    @property
    def vocab(self) -> int:
        """Tokens that ordinary text can give: every id but the special tokens."""
        return self.used + len(self.unused)

    @property
    def share_unused(self) -> float:
        return len(self.unused) / self.vocab if self.vocab else 0.0

    def rank_frequency(self) -> np.ndarray:
        """Every used token's count, the most frequent first (a log-log plot against rank 1, 2...)."""
        return np.sort(np.fromiter(self.counts.values(), dtype=np.int64, count=len(self.counts)))[::-1]

    def unused_by_category(self) -> list[tuple[str, int, int]]:
        """``(category, unused tokens, of which unreachable)`` per script or kind, the most first."""
        unused = Counter(self.categories.values())
        dead = Counter(self.categories[i] for i in self.unused if self.unreachable and i in self.unreachable)
        return sorted(((c, n, dead[c]) for c, n in unused.items()), key=lambda r: (-r[1], r[0]))

    def as_dict(self, *, rank_frequency: bool = False) -> dict:
        d: dict = {
            "tokenizer": self.tokenizer,
            "tokens": self.tokens,
            "vocab": self.vocab,
            "used": self.used,
            "unused": len(self.unused),
            "share_unused": round(self.share_unused, 6),
            "unreachable": None if self.unreachable is None else len(self.unreachable),
            "unused_unreachable": None
            if self.unreachable is None
            else sum(1 for i in self.unused if i in self.unreachable),
            "unused_by_category": [
                {"category": c, "unused": n, "unreachable": None if self.unreachable is None else d}
                for c, n, d in self.unused_by_category()
            ],
        }
        if rank_frequency:
            d["rank_frequency"] = self.rank_frequency().tolist()
        return d


def count_ids(
    toks: Sequence[Tokenizer],
    texts: Sequence[str],
    *,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    processes: int | None = None,
    pool: CountingPool | None = None,
) -> list[Counter[int]]:
    """Each tokenizer's count of every id over all of ``texts``: on a counting pool's children
    (``pool``, or one of ``processes`` made for the call) unless ``processes`` is 1."""
    texts = [fix_surrogates(t) for t in texts]
    out: list[Counter[int]] = [Counter() for _ in toks]
    if processes == 1 and pool is None:
        total, done = sum(map(len, texts)) * len(toks), 0
        for k, tok in enumerate(toks):
            for text in texts:
                if should_stop is not None and should_stop():
                    raise Cancelled()
                out[k].update(text_ids(tok, text))
                done += len(text)
                if progress is not None:
                    progress(done, total)
        return out
    own = pool is None
    pool = CountingPool(processes) if pool is None else pool
    try:
        for k, per_text in pool.count(toks, texts, progress=progress, should_stop=should_stop, what="ids"):
            for c in per_text:
                out[k].update(c)
    finally:
        if own:
            pool.close()
    return out


def vocabulary_use(
    tok: Tokenizer,
    texts: Sequence[str],
    *,
    name: str = "",
    unreachable: bool = False,
    counts: Counter[int] | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    processes: int | None = None,
    pool: CountingPool | None = None,
) -> VocabularyUse:
    """``tok``'s token use over ``texts`` (or over ``counts`` already made by :func:`count_ids`);
    with ``unreachable``, the tokens the encoder never produces are looked for too (seconds for
    a 200k vocabulary). With a ``pool``, its child looks for them and sorts the unused tokens
    into categories (this process only waits: a window's thread keeps the interpreter)."""
    if counts is None:
        counts = count_ids([tok], texts, progress=progress, should_stop=should_stop, processes=processes)[0]
    special = {*tok.special_tokens.values()}
    unused = [i for i in tok.ids() if i not in special and not counts.get(i)]
    if pool is None:
        dead_ids, labels, codes = _unused_facts(tok, (unused, unreachable), should_stop)
    else:
        dead_ids, labels, codes = pool.call(tok, _unused_facts, (unused, unreachable), should_stop=should_stop)
    dead = None if dead_ids is None else frozenset(dead_ids)
    categories: dict[int, str] = {}
    put_categories(categories, unused, labels, codes)
    used = {i: c for i, c in counts.items() if c and i not in special}
    return VocabularyUse(name or tok.name, sum(used.values()), used, unused, dead, categories)


def _unused_facts(
    tok: Tokenizer, item: tuple[list[int], bool], should_stop: ShouldStop | None = None
) -> tuple[list[int] | None, list[str], bytes]:
    """The unreachable tokens (if asked for, else ``None``) and the category of each unused
    token of ``item`` (the labels, and one byte per token: its label's index); a counting
    pool's child task (see :meth:`CountingPool.call`)."""
    unused, unreachable = item
    dead = [u.id for u in unreachable_tokens(tok, should_stop=should_stop)] if unreachable else None
    return dead, *category_codes(map(tok.token_bytes, unused))


__all__ = ["VocabularyUse", "count_ids", "vocabulary_use"]
