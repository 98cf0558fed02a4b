"""A training plan and the job that carries it out: what to train (the corpus, the vocabulary
sizes, the settings), where it runs (a child process where one can be started, else this
process), and the tokenizers of every asked-for size (the smaller ones are prefixes of the
largest training's merges).

:meth:`TrainingJob.reports` drives the core's ``TrainingRun.reports()`` generator: it yields
the core's throttled reports (every ``interval`` seconds) and returns a
:class:`TrainingOutcome` with the tokenizers of every asked-for size, built on the caller's
thread (the window's worker, not its GUI thread). Cancelling makes its ``should_stop`` true;
the run then stops after the current merge and the outcome keeps the merges learned so far.
:meth:`TrainingJob.run` does the same to the end and returns the outcome.

>>> plan = TrainingPlan([], [258, 260], pattern=None, name="ab")
>>> job = TrainingJob(plan, TrainingRun(["ab ab ab abc abc"], 260, pattern=None))
>>> [tok.name for tok in job.run().tokenizers]
['ab · 258', 'ab · 260']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.train.corpus import iter_corpus
from bpeinspect.core.train.filefilter import FileFilter
from bpeinspect.core.train.process import ProcessTrainingRun, can_spawn
from bpeinspect.core.train.run import TieBreak, TrainingProgress, TrainingRun
from bpeinspect.core.train.setup import prefix_tokenizer

HISTORY_POINTS = 2000


class _RunSettings(TypedDict):
    """The settings a training run takes alike in this process and in a child."""

    pattern: str | None
    special_tokens: list[str]
    tie_break: TieBreak
    processes: int | None
    interval: float


@dataclass
class TrainingPlan:
    """What to train: the corpus paths, the sizes (the largest is trained), the settings."""

    paths: list[Path]
    sizes: list[int]
    pattern: str | None
    special_tokens: list[str] = field(default_factory=list)
    tie_break: TieBreak = "first-seen"
    name: str = "trained"
    processes: int | None = None
    interval: float = 0.05  # seconds between reports
    file_filter: FileFilter = field(default_factory=FileFilter)  # which files of its folders
    # files of the corpus left out by the last run made (binary, not UTF-8): (file, why)
    skipped: list[tuple[Path, str]] = field(default_factory=list, repr=False, compare=False)

    def make_run(self, in_process: bool | None = None) -> TrainingRun | ProcessTrainingRun:
        """The run over the corpus; raises ``ValueError``/``PatternError`` for bad settings.

        It runs in a child process where one can be started (see :mod:`.process`
        for why), else in this process (``in_process=True`` forces that).
        """
        self.skipped.clear()
        settings: _RunSettings = {
            "pattern": self.pattern,
            "special_tokens": self.special_tokens,
            "tie_break": self.tie_break,
            "processes": self.processes,
            "interval": self.interval,
        }
        if not in_process and can_spawn():
            return ProcessTrainingRun(self.paths, max(self.sizes), file_filter=self.file_filter, **settings)
        texts = iter_corpus(self.paths, self.pattern, skipped=self.skipped, file_filter=self.file_filter)
        return TrainingRun(texts, max(self.sizes), **settings)


@dataclass
class TrainingOutcome:
    """The result: one tokenizer per size reached (ascending), and how the run ended."""

    tokenizers: list[Tokenizer]
    stopped: bool  # cancelled by the user
    exhausted: bool  # the corpus ran out of pairs before the largest size
    merges: int
    seconds: float
    history: dict[str, list[float]]
    # the size each tokenizer stands for: the one asked for, or the full one's own if it fell short
    sizes: list[int] = field(default_factory=list)
    # files of the corpus left out (filtered, ignored, binary, not UTF-8 text): (file, why)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def size_label(size: int) -> str:
    """``4000`` -> ``"4k"``, ``4096`` -> ``"4096"`` (as :func:`parse_sizes` reads them)."""
    return f"{size // 1000}k" if size and size % 1000 == 0 else str(size)


def trained_name(name: str, size: int) -> str:
    """The name of the tokenizer trained from ``name``'s corpus to ``size`` tokens, as a person
    would write it.

    >>> trained_name("json and 2 more", 300)
    'json and 2 more · 300'
    >>> trained_name("taylorswift", 16000)
    'taylorswift · 16k'
    """
    return f"{name} · {size_label(size)}"


def check_sizes(sizes: Sequence[int], special_tokens: Sequence[str] = ()) -> None:
    """Refuse a size too small for a merge once the 256 bytes and the special tokens are in:
    ``ValueError`` naming it.

    >>> check_sizes([257, 4096], ["<|endoftext|>"])
    Traceback (most recent call last):
    ...
    ValueError: Vocabulary size 257 is too small: 256 bytes and 1 special tokens leave no room for a merge (need at least 258).
    """
    need = 256 + len(special_tokens) + 1
    small = [s for s in sizes if s < need]
    if small:
        what = f"256 bytes and {len(special_tokens)} special tokens" if special_tokens else "256 bytes"
        raise ValueError(
            f"Vocabulary size {small[0]:,} is too small: {what} leave no room for a merge (need at least {need})."
        )


class TrainingJob:
    """One :class:`TrainingPlan` over its run (a fresh one, or a cancelled one to resume)."""

    def __init__(self, plan: TrainingPlan, run: TrainingRun | ProcessTrainingRun | None = None) -> None:
        self.plan = plan
        self.run_ = run if run is not None else plan.make_run()
        # (vocab size, bytes per token, seconds) after each report: the curve the view
        # draws, saved with the tokenizer as its history
        self.history: dict[str, list[float]] = {"vocab_size": [], "bytes_per_token": [], "seconds": []}

    def stop(self) -> None:
        """Tell a child process at once, not at its next report (the worker's cancel comes too)."""
        stop = getattr(self.run_, "stop", None)
        if stop is not None:
            stop()

    def reports(self, should_stop: Callable[[], bool]) -> Generator[TrainingProgress, None, TrainingOutcome]:
        """Yield the run's reports; return the outcome (runs on the worker's thread)."""
        try:
            # The merge engine builds millions of small objects; full garbage collections
            # over them would hold the interpreter for a second at a time (the window
            # frozen), and they hold no cycles, so collection waits until the end.
            with quiet_gc():
                last: TrainingProgress | None = None
                for report in self.run_.reports(should_stop):
                    last = report
                    if report.phase != "counting" and report.bytes_per_token:
                        self._record(report)
                    yield report
                outcome = self._outcome(last)
        except Exception:
            self.close_run()
            raise
        if not outcome.stopped:  # a stopped run keeps its process while it may be resumed
            self.close_run()
        return outcome

    def run(
        self,
        progress: Callable[[TrainingProgress], object] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> TrainingOutcome:
        """Carry out the whole plan here, handing each report to ``progress``; the outcome."""
        reports = self.reports(should_stop or (lambda: False))
        while True:
            try:
                report = next(reports)
            except StopIteration as done:
                return done.value
            if progress is not None:
                progress(report)

    def close_run(self) -> None:
        """End the run's child process, if it has one (it is kept while a stop may be resumed)."""
        close = getattr(self.run_, "close", None)
        if close is not None:
            close()

    def _record(self, report: TrainingProgress) -> None:
        h = self.history
        vocab = 256 + len(self.plan.special_tokens) + report.merges_done
        # about HISTORY_POINTS points whatever the size (and always the last one)
        step = max(1, self.run_.merges_total // HISTORY_POINTS)
        if h["vocab_size"] and (vocab - h["vocab_size"][-1] < step and report.phase != "done"):
            return
        if h["vocab_size"] and h["vocab_size"][-1] == vocab:
            return
        h["vocab_size"].append(vocab)
        h["bytes_per_token"].append(round(report.bytes_per_token, 4))
        h["seconds"].append(round(report.elapsed, 3))

    def _outcome(self, last: TrainingProgress | None) -> TrainingOutcome:
        t0 = time.perf_counter()
        run, plan = self.run_, self.plan
        stopped = bool(last is not None and last.stopped)
        exhausted = bool(last is not None and last.exhausted)  # the corpus ran out of pairs
        toks: list[Tokenizer] = []
        sizes: list[int] = []
        if run.merges:
            full = run.tokenizer()
            training = full.training
            assert training is not None  # a trained tokenizer carries its settings
            settings = {
                **training.settings,
                "corpus": [str(p) for p in plan.paths],
                "file_filter": plan.file_filter.settings(),  # which files of its folders: to repeat the run
                "sizes": list(plan.sizes),
            }
            largest = max(plan.sizes)
            for size in plan.sizes[:-1]:
                if self._reached(size):
                    settings_k = {**settings, "finished": True, "history": self._history_to(size)}
                    toks.append(
                        prefix_tokenizer(
                            run.merges,
                            size,
                            pattern=full.split_rule,
                            special_tokens=plan.special_tokens,
                            tie_break=plan.tie_break,
                            settings=settings_k,
                            name=trained_name(plan.name, size),
                        )
                    )
                    sizes.append(size)
            partial = stopped or exhausted
            sizes.append(full.n_vocab if partial else largest)
            full.name = trained_name(plan.name, sizes[-1]) + (" (partial)" if stopped else "")
            training.settings.update(settings, stopped=stopped, history=self._history_to(largest))
            toks.append(full)
        seconds = (last.elapsed if last else 0.0) + time.perf_counter() - t0
        skipped = run.skipped if isinstance(run, ProcessTrainingRun) else list(plan.skipped)
        return TrainingOutcome(toks, stopped, exhausted, len(run.merges), seconds, dict(self.history), sizes, skipped)

    def _reached(self, size: int) -> bool:
        """Whether the merges so far hold the whole vocabulary of ``size`` tokens."""
        run, n_specials = self.run_, len(self.plan.special_tokens)
        if self.plan.tie_break == "hf":
            # Hugging Face's ids (specials included) are dense: the largest tells the vocabulary's size
            return max((m.id for m in run.merges), default=0) >= size - 1
        return len(run.merges) >= size - 256 - n_specials

    def _history_to(self, size: int) -> dict[str, list[float]]:
        keep = [i for i, n in enumerate(self.history["vocab_size"]) if n <= size]
        return {k: [v[i] for i in keep] for k, v in self.history.items()}
