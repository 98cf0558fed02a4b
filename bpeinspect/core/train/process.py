"""A training run in a child process, driven like :class:`~bpeinspect.core.train.run.TrainingRun`.

A GUI that trains in one of its own threads shares the interpreter lock with it: every
redraw of the window then waits on the trainer, and the window stutters. Here the merges
are learned in a child of a :class:`~bpeinspect.core.pool.ProcessPool` (started with a safe
import path); this process only takes its messages, which a reader thread gets from a pipe
(not holding the lock while it waits), and builds the tokenizer at the end.

>>> run = ProcessTrainingRun(["to be or not to be"], 260, pattern="gpt4")  # doctest: +SKIP
>>> reports = list(run.reports()); run.tokenizer().merges               # doctest: +SKIP
[(32, 98), (116, 111), (256, 101), (111, 114)]

The run is the pool's one protocol: the settings are the child's context, and each call of
:meth:`ProcessTrainingRun.reports` is a live task on it (:func:`_train`) that sends each
:class:`~bpeinspect.core.train.run.TrainingProgress` as a progress message, pauses when
cancelled, and answers with the run's state as data (its settings and figures, the files left
out); the run itself stays in the child's context until it is resumed.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bpeinspect.core.errors import TrainingProcessError
from bpeinspect.core.pool import Channel, ProcessPool, Reply, can_spawn
from bpeinspect.core.split.rules import PatternError
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.train.corpus import CorpusError, iter_corpus
from bpeinspect.core.train.filefilter import FileFilter
from bpeinspect.core.train.run import TieBreak, TrainedMerge, TrainingProgress, TrainingRun, merges_tokenizer

__all__ = ["ProcessTrainingRun", "TrainingProcessError", "can_spawn"]

CHILD_NICENESS = 5  # background work: on a busy machine the window that shows it comes first
WAIT = 0.05  # seconds between two looks at should_stop while waiting for the child
PAUSE_SECONDS = 30.0  # the longest a run left early waits for its child to pause
_ERRORS: dict[str, type[Exception]] = {  # the errors that come back with their own type
    "CorpusError": CorpusError,
    "PatternError": PatternError,
    "ValueError": ValueError,
}


class ProcessTrainingRun:
    """:class:`TrainingRun` over corpus files, run in a child process.

    The settings are checked here at once (``ValueError``); the corpus is read by the
    child. ``reports`` may be iterated again after a stop to resume; :meth:`close` ends
    the child (also done when the object is collected).
    """

    def __init__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        vocab_size: int,
        *,
        pattern: str | None = "gpt4",
        special_tokens: Sequence[str] | None = None,
        tie_break: TieBreak = "first-seen",
        processes: int | None = None,
        interval: float = 0.1,
        file_filter: FileFilter | None = None,
    ) -> None:
        check = TrainingRun((), vocab_size, pattern=pattern, special_tokens=special_tokens, tie_break=tie_break)
        self._rule = check._rule  # (with Hugging Face's Unicode for tie_break='hf')
        self._settings = check.settings()  # before any merge
        self.vocab_size = check.vocab_size
        self.special_tokens = list(check.special_tokens)
        self.tie_break = tie_break
        self.merges_total = check.merges_total
        self.merges: list[TrainedMerge] = []
        self.finished = False
        self.state: dict = {}
        self._args = {
            "paths": [str(p) for p in paths],
            "vocab_size": vocab_size,
            "pattern": pattern,
            "special_tokens": self.special_tokens,
            "tie_break": tie_break,
            "processes": processes,
            "interval": interval,
            "file_filter": file_filter,
        }
        self._pool: ProcessPool | None = None
        self._key = 0  # the run's context in the child
        self._task: int | None = None  # the reports task at work

    # -- the child ----------------------------------------------------------------------------------

    def _start(self) -> ProcessPool:
        pool = ProcessPool(2, niceness=CHILD_NICENESS)
        if not pool.start():
            pool.close()
            raise TrainingProcessError("the training process could not start")
        self._key = pool.new_key()
        pool.children[0].put(self._key, pickle.dumps(self._args, protocol=pickle.HIGHEST_PROTOCOL))
        return pool

    @property
    def _proc(self) -> Any:
        """The child process (``None`` before the start and after :meth:`close`)."""
        children = self._pool._children if self._pool is not None else []
        return children[0].proc if children else None

    def stop(self) -> None:
        """Ask the child to stop after the current merge (``reports`` then ends)."""
        pool, task = self._pool, self._task
        if pool is not None and task is not None:
            pool.cancel(task)

    def reports(self, should_stop: Callable[[], bool] | None = None) -> Iterator[TrainingProgress]:
        """Run (or resume) the training in the child, yielding its reports as they come.

        ``should_stop`` is checked while waiting for the child; when it turns true the child
        stops after the current merge and the last report (``phase == "done"``) says ``stopped``.
        """
        if self.finished:
            return
        if self._pool is None:
            self._pool = self._start()
        pool = self._pool
        child = pool.children[0] if pool.children else None
        if child is None:
            self.close()
            raise TrainingProcessError("the training process ended unexpectedly")
        self._task = task = pool.submit(child, _train, None, key=self._key, live=True)
        asked = done = False
        try:
            while True:
                if not asked and should_stop is not None and should_stop():
                    pool.cancel(task)
                    asked = True
                reply = pool.reply(WAIT)
                if reply is None:
                    continue
                if reply.kind == "progress":
                    self.merges.extend(reply.value.new_merges)
                    yield reply.value
                elif self._ends(reply):
                    done = True
                    return
        finally:
            if not done and self._pool is pool:  # left early: the child pauses, its merges are kept
                self._pause(pool, task)
            self._task = None

    def _pause(self, pool: ProcessPool, task: int) -> None:
        """Stop ``task`` and take what it sends until it ends (the run is closed if that
        takes more than :data:`PAUSE_SECONDS`, or fails: nobody is left to tell)."""
        pool.cancel(task)
        deadline = time.monotonic() + PAUSE_SECONDS
        with contextlib.suppress(Exception):
            while time.monotonic() < deadline:
                reply = pool.reply(WAIT)
                if reply is None:
                    continue
                if reply.kind == "progress":
                    self.merges.extend(reply.value.new_merges)
                elif self._ends(reply):
                    return
        self.close()

    def _ends(self, reply: Reply) -> bool:
        """Whether ``reply`` ends the task: its state is taken, or its error raised."""
        if reply.kind == "result":
            self.state = reply.value
            self.finished = self.state["finished"]
            return True
        if reply.kind == "error":
            self.close()
            kind = next((k for k in reply.kinds if k in _ERRORS), "")
            raise _ERRORS.get(kind, TrainingProcessError)(reply.value)
        if reply.kind == "lost":
            self.close()
            raise TrainingProcessError(f"the training process ended unexpectedly ({reply.value})")
        return False

    def close(self) -> None:
        """End the child process."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: S110 (interpreter shutdown)
            pass

    # -- the result -----------------------------------------------------------------------------

    @property
    def skipped(self) -> list[tuple[Path, str]]:
        """The corpus files the child left out (binary, not UTF-8 text), with the reason."""
        return [(Path(f), why) for f, why in self.state.get("skipped", [])]

    def tokenizer(self) -> Tokenizer:
        """The tokenizer learned so far, as :meth:`TrainingRun.tokenizer` makes it."""
        settings = {**self._settings, **self.state.get("settings", {})}
        settings.update(merges=len(self.merges), finished=self.finished)
        return merges_tokenizer(
            self.merges,
            pattern=self._rule,
            special_tokens=self.special_tokens,
            settings=settings,
            name=f"trained-{self.vocab_size}",
            tie_break=self.tie_break,
        )


def _train(context: dict, _: object, channel: Channel) -> dict:
    """The child's task: run (or resume) the training in ``context`` (the settings; the run
    is kept there), sending each report; answer the run's state."""
    run = context.get("run")
    if run is None:
        skipped = context["skipped"] = []
        run = context["run"] = TrainingRun(
            iter_corpus(context["paths"], context["pattern"], skipped=skipped, file_filter=context["file_filter"]),
            context["vocab_size"],
            pattern=context["pattern"],
            special_tokens=context["special_tokens"],
            tie_break=context["tie_break"],
            processes=context["processes"],
            interval=context["interval"],
        )
    for report in run.reports(channel.cancelled):
        channel.progress(report)
    left_out = [(str(f), why) for f, why in context["skipped"]]
    return {"finished": run.finished, "skipped": left_out, "settings": run.settings()}
