"""Training byte-level BPE vocabularies: exact, fast, observable and cancellable.

>>> from bpeinspect.core import train_tokenizer
>>> tok = train_tokenizer("low lower lowest", 259, pattern="gpt2")
>>> [tok.token_bytes(256 + i) for i in range(3)]
[b'lo', b'low', b' low']
>>> tok.decode(tok.encode("lowest low")) == "lowest low"
True

Two tie-breaks for pairs with equal counts:

* ``"first-seen"`` (default) is karpathy/minbpe's: the pair whose first occurrence in the
  partly merged corpus comes first. Given the same text and pattern, the merges are
  minbpe's, id for id. (Several documents count as minbpe's chunks of each, in order.)
* ``"hf"`` is Hugging Face ``tokenizers``' ``BpeTrainer`` (with the byte-level alphabet as
  its initial alphabet and ``min_frequency=0``): the pair of smaller ids. The ids are its
  own: the special tokens ``0..k-1``, the bytes in the order of the byte-level alphabet's
  characters, then the merges, so a saved ``tokenizer.json`` is the one it would write.

The two also cut the corpus as their trainers do: ``"first-seen"`` with ``regex.findall``
(text between matches is dropped, the installed ``regex`` module's Unicode tables), ``"hf"``
with an isolated ``Split`` (see :func:`~bpeinspect.core.train.counts.counting_splitter`).
A corpus that runs out of pairs stops early with fewer tokens, as Hugging Face does (minbpe
fails): the last report and the tokenizer's settings say so (``ran_out_of_pairs``).

For a GUI worker, :class:`TrainingRun` is the same training as a generator of reports:

>>> run = TrainingRun(["to be or not to be"], 260, pattern="gpt4")
>>> reports = list(run.reports())
>>> reports[-1].phase, reports[-1].merges_done, len(run.tokenizer())
('done', 4, 260)
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.split.rules import SplitRule, is_preset_pattern, resolve_rule
from bpeinspect.core.tokenizer import Tokenizer, TrainingInfo
from bpeinspect.core.train.counts import CountingProgress, check_counting_pattern, iter_count_pretokens
from bpeinspect.core.train.engine import MAX_ID, HFVocabulary, MergeEngine

__all__ = [
    "TieBreak",
    "TrainedMerge",
    "TrainingProgress",
    "TrainingRun",
    "initial_token_bytes",
    "merges_tokenizer",
    "train_tokenizer",
]

TieBreak = Literal["first-seen", "hf"]
TIE_BREAKS = ("first-seen", "hf")


class TrainedMerge(NamedTuple):
    """One learned merge: ``left`` + ``right`` -> ``id``, seen ``count`` times when chosen."""

    rank: int
    left: int
    right: int
    id: int
    count: int  # type: ignore[assignment]  # times seen: a public field name that shadows tuple.count
    token: bytes


@dataclass(frozen=True)
class TrainingProgress:
    """A progress report. ``phase`` is ``"counting"`` (reading the corpus), ``"merging"`` or
    ``"done"`` (the last report; also after a stop). ``new_merges`` are the merges made since
    the previous report, so a view can append them in one batch."""

    phase: Literal["counting", "merging", "done"]
    merges_done: int
    merges_total: int
    merge: TrainedMerge | None
    new_merges: tuple[TrainedMerge, ...]
    merges_per_second: float
    bytes_per_token: float  # corpus bytes per token with the merges so far (0.0 while counting)
    elapsed: float
    documents: int
    corpus_bytes: int  # UTF-8 bytes of the corpus (read so far, while counting)
    distinct_pretokens: int
    stopped: bool = False
    exhausted: bool = False  # no pair was left before the vocabulary was full (see ``done``)

    @property
    def fraction(self) -> float:
        """How far the merge phase is, from 0.0 to 1.0."""
        return min(1.0, self.merges_done / self.merges_total) if self.merges_total else 1.0


class TrainingRun:
    """One training, run step by step: iterate :meth:`reports`, then take :meth:`tokenizer`.

    The settings are checked at once (``ValueError`` for bad ones); the corpus is read when
    the reports are first iterated. Once merging has begun, breaking out of the iteration
    (or ``should_stop``) pauses the run and iterating :meth:`reports` again resumes it; a stop
    while the corpus is being counted ends the run with no merges. :meth:`tokenizer` gives
    the vocabulary learned so far at any time.

    In a GUI worker thread (reports are throttled to one per ``interval`` seconds; each
    carries the merges made since the previous one, for a view to append in one batch)::

        run = TrainingRun(iter_corpus(folder, "gpt4"), 32768, pattern="gpt4")
        for report in run.reports():   # report.phase: "counting", "merging", then "done"
            emit(report)               # a Qt signal; the core knows nothing of Qt
            if cancelled:
                break                  # pauses; iterate run.reports() again to resume
        tokenizer = run.tokenizer()    # everything learned so far

    >>> run = TrainingRun.from_counts({b"aaab": 3, b"ab": 1}, 258, pattern=None)
    >>> [(m.token, m.count) for report in run.reports() for m in report.new_merges]
    [(b'aa', 6), (b'ab', 4)]
    """

    def __init__(
        self,
        texts: str | Iterable[str],
        vocab_size: int,
        *,
        pattern: str | SplitRule | None = "gpt4",
        special_tokens: Iterable[str] | None = None,
        tie_break: TieBreak = "first-seen",
        processes: int | None = None,
        interval: float = 0.1,
    ) -> None:
        self._rule = resolve_rule(pattern)  # PatternError (a ValueError) if it does not compile
        self._pattern = pattern if isinstance(pattern, str | None) else self._rule.pattern
        try:
            if isinstance(vocab_size, bool):
                raise TypeError
            vocab_size = operator.index(vocab_size)  # ints, numpy ints; not floats or strings
        except TypeError:
            raise ValueError(f"vocab_size must be an integer, not {vocab_size!r}") from None
        self.vocab_size = vocab_size
        self.special_tokens: list[str] = _check_specials(special_tokens)
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie_break {tie_break!r}; expected one of {', '.join(TIE_BREAKS)}")
        self.tie_break: TieBreak = tie_break
        check_counting_pattern(self._rule, tie_break)
        if tie_break == "hf" and not is_preset_pattern(self._rule):  # Hugging Face's Unicode (the
            self._rule = self._rule.with_hf_unicode()  # presets count with it already, see counts.py)
        initial = HFVocabulary.of(self.special_tokens).size if tie_break == "hf" else 256 + len(self.special_tokens)
        needed = 256 + len(self.special_tokens) + 1
        if vocab_size < needed:
            what = f"256 bytes and {len(self.special_tokens)} special tokens" if self.special_tokens else "256 bytes"
            raise ValueError(
                f"vocab_size {vocab_size} is too small: {what} leave no room for a merge (need >= {needed})"
            )
        if vocab_size > MAX_ID + 1:
            raise ValueError(f"vocab_size {vocab_size} is too large (at most {MAX_ID + 1})")
        # new tokens to make (Hugging Face may make more merges: one that makes a special's text adds none)
        self.merges_total = vocab_size - initial
        self._texts = texts
        self._processes = processes
        self.interval = interval
        self.counts: dict[bytes, int] | None = None  # the pre-token table, once counted
        self.merges: list[TrainedMerge] = []
        self.documents = 0
        self.finished = False  # no more merges to make (target reached or no pair left)
        self.exhausted = False  # no pair was left before the target
        self._engine: MergeEngine | None = None
        self._public: dict[int, int] = {}  # "first-seen": internal id of a merge -> public id
        self._by_bytes: dict[bytes, int] = {}  # "first-seen": public token bytes -> public id
        self._seconds = 0.0

    @classmethod
    def from_counts(cls, counts: dict[bytes, int], vocab_size: int, **kwargs) -> TrainingRun:
        """A run over a pre-token count table (e.g. read with ``read_counts_tsv``) instead of
        texts. ``pattern`` should be the one the table was counted with: it becomes the
        tokenizer's split rule."""
        run = cls((), vocab_size, **kwargs)
        run.counts = _checked_counts(counts)
        return run

    # -- running ----------------------------------------------------------------------------------

    def reports(self, should_stop: Callable[[], bool] | None = None) -> Iterator[TrainingProgress]:
        """Run (or resume) the training, yielding throttled :class:`TrainingProgress` reports.

        ``should_stop`` is called between merges; when it returns true the run pauses and a
        last report with ``phase == "done"`` and ``stopped=True`` is yielded.
        """
        start = time.perf_counter()
        base = self._seconds
        last = start
        if self.counts is None:
            # A stop (or the consumer walking away) while counting ends the run: the corpus
            # may be a one-shot iterator, so it cannot be counted again from the start.
            self.finished = True
            self.counts = {}
            table = None
            items = iter_count_pretokens(
                self._texts, self._rule, tie_break=self.tie_break, processes=self._processes, interval=self.interval
            )
            for item in items:
                if isinstance(item, CountingProgress):
                    self.documents = item.documents
                    now = time.perf_counter()
                    yield TrainingProgress(
                        "counting",
                        0,
                        self.merges_total,
                        None,
                        (),
                        0.0,
                        0.0,
                        base + now - start,
                        item.documents,
                        item.corpus_bytes,
                        item.distinct,
                    )
                    if should_stop is not None and should_stop():
                        self._seconds = base + time.perf_counter() - start
                        yield self._report("done", (), 0.0, self._seconds, stopped=True)
                        return
                else:
                    table = item
            self._texts = ()
            self.counts = table or {}
            self.finished = False
        # The engine allocates millions of small objects and holds no reference cycles: the
        # cyclic collector, which would walk them over and over (a fifth of the time), waits.
        if self._engine is None and not self.finished:
            with quiet_gc():
                self._start_engine()
        engine = self._engine
        merges = self.merges
        reported = len(merges)
        t_rate, n_rate = time.perf_counter(), len(merges)
        rate = 0.0
        stopped = False
        interval = self.interval
        perf = time.perf_counter
        while engine is not None and not self.finished and not stopped:
            report = None
            with quiet_gc():  # not while the consumer has the report
                while True:
                    if should_stop is not None and should_stop():
                        stopped = True
                        break
                    if not self._step(engine):
                        break
                    now = perf()
                    if now - last >= interval or len(merges) == 1:
                        if now > t_rate:
                            rate = (len(merges) - n_rate) / (now - t_rate)
                        new = tuple(merges[reported:])
                        reported = len(merges)
                        self._seconds = base + now - start
                        report = self._report("merging", new, rate, self._seconds)
                        break
            if report is None:
                break
            yield report
            last = perf()  # the consumer may have spent time; do not count it
        end = perf()
        if end > t_rate and len(merges) > n_rate:
            rate = (len(merges) - n_rate) / (end - t_rate)
        self._seconds = base + end - start
        yield self._report("done", tuple(merges[reported:]), rate, self._seconds, stopped=stopped)

    def _start_engine(self) -> None:
        if not self.counts or not any(self.counts.values()):
            raise ValueError("the corpus is empty: there is no text to learn merges from")
        self._engine = MergeEngine(self.counts, self.tie_break, self.special_tokens)
        self._by_bytes = {bytes([b]): b for b in range(256)}

    def _step(self, engine: MergeEngine) -> bool:
        """One merge; false when the target is reached or no pair is left."""
        if self._reached(engine):
            self.finished = True
            return False
        made = engine.step()
        if made is None:
            self.finished = self.exhausted = True
            return False
        a, b, new, count = made
        token = engine.token_bytes[new]
        if self.tie_break == "hf":  # the engine's ids are Hugging Face's
            self.merges.append(TrainedMerge(len(self.merges), a, b, new, count, token))
        else:
            pub = self._by_bytes.get(token)
            if pub is None:  # else a merge re-made a token; it keeps its id
                pub = self._by_bytes[token] = len(self._by_bytes)
            self._public[new] = pub
            self.merges.append(TrainedMerge(len(self.merges), self._pub(a), self._pub(b), pub, count, token))
        if self._reached(engine):
            self.finished = True
        return True

    def _pub(self, internal: int) -> int:
        return internal if internal < 256 else self._public[internal]

    def _reached(self, engine: MergeEngine) -> bool:
        # minbpe makes a fixed number of merges; Hugging Face grows the vocabulary to its size
        if self.tie_break == "hf":
            return engine.next_id >= self.vocab_size
        return len(self.merges) >= self.merges_total

    def _report(
        self, phase, new: tuple[TrainedMerge, ...], rate: float, elapsed: float, stopped: bool = False
    ) -> TrainingProgress:
        engine = self._engine
        bpt = engine.corpus_bytes / engine.tokens if engine is not None and engine.tokens else 0.0
        return TrainingProgress(
            phase,
            len(self.merges),
            self.merges_total,
            self.merges[-1] if self.merges else None,
            new,
            rate,
            bpt,
            elapsed,
            self.documents,
            engine.corpus_bytes if engine else 0,
            len(self.counts or ()),
            stopped,
            self.exhausted and phase == "done",
        )

    # -- the result ----------------------------------------------------------------------------

    def tokenizer(self) -> Tokenizer:
        """The tokenizer learned so far (all merges once the run is finished).

        With ``"first-seen"`` (minbpe's ids) ids 0-255 are the bytes, merge ``i`` makes id
        ``256 + i`` and the special tokens follow; should a merge make a token that exists
        already, which minbpe allows, it keeps the existing id and later ids move down by
        one. With ``"hf"`` the ids are Hugging Face's (see the module docstring).
        """
        with quiet_gc():
            return merges_tokenizer(
                self.merges,
                pattern=self._rule,
                special_tokens=self.special_tokens,
                settings=self.settings(),
                name=f"trained-{self.vocab_size}",
                tie_break=self.tie_break,
            )

    def settings(self) -> dict:
        """The run's settings and figures so far, as the tokenizer's :class:`TrainingInfo` keeps them."""
        return {
            "trainer": "bpeinspect",
            "vocab_size": self.vocab_size,
            "pattern": self._pattern,
            "pattern_name": self._rule.name,
            "tie_break": self.tie_break,
            "special_tokens": list(self.special_tokens),
            "documents": self.documents,
            "corpus_bytes": self._engine.corpus_bytes if self._engine else 0,
            "distinct_pretokens": len(self.counts or ()),
            "merges": len(self.merges),
            "finished": self.finished,
            "ran_out_of_pairs": self.exhausted,
            "seconds": round(self._seconds, 3),
        }


def merges_tokenizer(
    merges: Sequence[TrainedMerge],
    *,
    pattern,
    special_tokens: Sequence[str] = (),
    settings: dict | None = None,
    name: str = "",
    tie_break: str = "first-seen",
) -> Tokenizer:
    """The tokenizer that ``merges`` (all the merges of a run, in order) make, with the special
    tokens and ``settings`` and the merge counts as its :class:`TrainingInfo`: what
    :meth:`TrainingRun.tokenizer` returns.

    >>> run = TrainingRun("aaab", 258, pattern=None); _ = list(run.reports())
    >>> merges_tokenizer(run.merges, pattern=None).merges == run.tokenizer().merges
    True
    """
    rule = pattern if isinstance(pattern, SplitRule) else resolve_rule(pattern)
    pairs = [(m.left, m.right) for m in merges]
    info = TrainingInfo(settings=dict(settings or {}), counts=[m.count for m in merges])
    name = name or "trained"
    if tie_break == "hf":
        vocab = HFVocabulary.of(special_tokens)
        ranks = {bytes([b]): i for b, i in enumerate(vocab.byte_ids)}
        for m in merges:
            ranks.setdefault(m.token, m.id)
        specials = {s: i for i, s in enumerate(special_tokens)}
        return Tokenizer(
            ranks, pattern=rule, special_tokens=specials, merges=pairs, training=info, name=name, source="trained"
        )
    n = max((m.id for m in merges), default=255) + 1
    specials = {s: n + i for i, s in enumerate(special_tokens)}
    if n == 256 + len(merges):
        return Tokenizer.from_merges(
            pairs, pattern=rule, special_tokens=specials, training=info, name=name, source="trained"
        )
    ranks = {bytes([b]): b for b in range(256)}
    for m in merges:
        ranks.setdefault(m.token, m.id)
    return Tokenizer(
        ranks, pattern=rule, special_tokens=specials, merges=pairs, training=info, name=name, source="trained"
    )


def initial_token_bytes(tie_break: str, special_tokens: Sequence[str] = ()) -> dict[int, bytes]:
    """Id -> bytes of the tokens a run starts with (the bytes; with ``"hf"`` the special tokens
    too, which come first).

    >>> initial_token_bytes("hf", ["<s>"])[0], initial_token_bytes("hf", ["<s>"])[1]
    (b'<s>', b'!')
    """
    if tie_break == "hf":
        return dict(enumerate(HFVocabulary.of(special_tokens).token_bytes))
    return {i: bytes([i]) for i in range(256)}


def _checked_counts(counts: dict[bytes, int]) -> dict[bytes, int]:
    """A count table without its zero counts (text that is not in the corpus: minbpe never
    sees it); anything but non-negative integer counts of non-empty bytes is refused."""
    out: dict[bytes, int] = {}
    for key, n in counts.items():
        if not isinstance(key, bytes) or not key:
            raise ValueError(f"a pre-token must be non-empty bytes, not {key!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"the count of {key!r} must be a non-negative integer, not {n!r}")
        if n:
            out[key] = n
    return out


def _check_specials(special_tokens: Iterable[str] | None) -> list[str]:
    if special_tokens is None:
        return []
    if isinstance(special_tokens, str):
        raise ValueError("special_tokens must be a list of strings, not one string")
    out: list[str] = []
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise ValueError(f"a special token must be a non-empty string, not {s!r}")
        if s in out:
            raise ValueError(f"special token {s!r} is listed twice")
        out.append(s)
    return out


def train_tokenizer(
    texts: str | Iterable[str],
    vocab_size: int,
    *,
    pattern: str | SplitRule | None = "gpt4",
    special_tokens: Sequence[str] | None = None,
    tie_break: TieBreak = "first-seen",
    progress: Callable[[TrainingProgress], object] | None = None,
    should_stop: Callable[[], bool] | None = None,
    processes: int | None = None,
) -> Tokenizer:
    """Learn a byte-level BPE tokenizer of ``vocab_size`` tokens (special tokens included).

    ``texts`` is one document or an iterable of documents (each split on its own; see
    :func:`bpeinspect.core.train.corpus.iter_corpus` to stream files and folders). ``pattern`` is
    a preset name, a regex, or ``None`` for no splitting. ``progress`` receives throttled
    :class:`TrainingProgress` reports; ``should_stop`` is checked between merges and a stop
    returns the tokenizer learned so far. Special tokens take no part in training (as in
    minbpe and Hugging Face): their text is trained on like any other, and they get the ids
    after the merges. ``processes`` caps the processes that count pre-tokens of big corpora.

    >>> tok = train_tokenizer(["aaab", "aab"], 258, pattern=None)
    >>> tok.merges, tok.training.counts
    ([(97, 97), (256, 97)], [3, 1])
    """
    run = TrainingRun(
        texts, vocab_size, pattern=pattern, special_tokens=special_tokens, tie_break=tie_break, processes=processes
    )
    for report in run.reports(should_stop):
        if progress is not None:
            progress(report)
    return run.tokenizer()
