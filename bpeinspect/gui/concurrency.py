"""Background work: a QRunnable per job, results delivered on the GUI thread by signals.

A :class:`TaskRunner` keeps one job per key; submitting a new job under a key cancels the
old one (its ``should_stop`` turns true and its result is dropped), so a newer request
always supersedes an older one.

>>> runner = TaskRunner()                                     # doctest: +SKIP
>>> runner.submit("load", lambda should_stop: load_tokenizer("gpt2"), on_result=print)  # doctest: +SKIP
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal, Slot

from bpeinspect.core import Cancelled, Encoding, Tokenizer, load_tokenizer
from bpeinspect.core.memory import quiet_gc

SWITCH_INTERVAL = 0.001  # seconds
REAP_AFTER = 0.5  # seconds after a job ended with its signals still undelivered, see TaskRunner._reap


class _Signals(QObject):
    result = Signal(object, object)  # job, value
    error = Signal(object, object)  # job, exception
    finished = Signal(object)  # job
    progress = Signal(object, object)  # job, value


_local = threading.local()


def report_progress(value: Any) -> None:
    """From inside a job's function: hand ``value`` to the job's ``on_progress`` callback
    (on the GUI thread). Does nothing outside a job."""
    job = getattr(_local, "job", None)
    if job is not None and not job.cancelled:
        job.signals.progress.emit(job, value)


class Job(QRunnable):
    """Runs ``fn(should_stop)`` on a pool thread; ``cancel()`` makes ``should_stop()`` true."""

    def __init__(self, key: str, fn: Callable[[Callable[[], bool]], Any]) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the runner holds the Python reference until finished
        self.key = key
        self.fn = fn
        self.signals = _Signals()
        self.cancelled = False
        self.state = "queued"  # then "running", "done"
        self.outcome: tuple[str, Any] | None = None  # ("result", value) or ("error", exc)
        self.done_at = 0.0
        self.delivered = False  # the result or error has reached its callback
        self.finished_seen = False

    def cancel(self) -> None:
        self.cancelled = True

    def should_stop(self) -> bool:
        return self.cancelled

    def run(self) -> None:
        _local.job = self
        self.state = "running"
        try:
            value = self.fn(self.should_stop)
        except Cancelled:
            pass
        except Exception as exc:  # reported in the window, never raised into Qt
            if not self.cancelled:
                self.outcome = ("error", exc)
                self.signals.error.emit(self, exc)
        else:
            if not self.cancelled:
                self.outcome = ("result", value)
                self.signals.result.emit(self, value)
        finally:
            _local.job = None
            self.fn = None  # its closure may hold a tokenizer or a text; a lingering job must not
            self.done_at = time.monotonic()
            self.state = "done"
            self.signals.finished.emit(self)


class TaskRunner(QObject):
    """Runs jobs on a thread pool; one live job per key."""

    busyChanged = Signal(bool)
    idle = Signal()

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        # A worker hands the interpreter back every 5 ms by default; with the GUI thread
        # waiting on it that is a visible hitch per hand-over, so ask for shorter turns.
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        self.pool = pool or QThreadPool.globalInstance()
        self._current: dict[str, Job] = {}
        self._running: set[Job] = set()
        self._callbacks: dict[Job, tuple[Callable | None, Callable | None]] = {}
        self._progress: dict[Job, Callable[[Any], None]] = {}
        self._reaper = QTimer(self, singleShot=True, interval=int(REAP_AFTER * 1000))
        self._reaper.timeout.connect(self._reap)

    def submit(
        self,
        key: str,
        fn: Callable[[Callable[[], bool]], Any],
        on_result: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
    ) -> Job:
        """Run ``fn`` in the pool, superseding the job under ``key``; ``fn`` may call
        :func:`report_progress`, which reaches ``on_progress`` unless the job was superseded."""
        self.cancel(key)
        job = Job(key, fn)
        job.signals.result.connect(self._on_result)
        if on_progress is not None:
            job.signals.progress.connect(self._on_progress)
            self._progress[job] = on_progress
        job.signals.error.connect(self._on_error)
        job.signals.finished.connect(self._on_finished)
        self._current[key] = job
        was_busy = bool(self._running)
        self._running.add(job)
        self._callbacks[job] = (on_result, on_error)
        self.pool.start(job)
        if not self._reaper.isActive():
            self._reaper.start()
        if not was_busy:
            self.busyChanged.emit(True)
        return job

    def cancel(self, key: str) -> None:
        old = self._current.pop(key, None)
        if old is not None:
            old.cancel()

    def cancel_all(self) -> None:
        for key in list(self._current):
            self.cancel(key)

    def has_job(self, key: str) -> bool:
        """True while a job submitted under ``key`` may still be running (even if cancelled)."""
        return any(job.key == key for job in self._running)

    def is_busy(self) -> bool:
        # asking also delivers what finished jobs left undelivered (see _reap): a lost
        # signal must never make the window look busy for ever
        if self._running:
            self._reap(restart=False)
        return bool(self._running)

    def _reap(self, restart: bool = True) -> None:
        """Deliver what finished jobs left if their queued signals never arrived.

        Seen rarely under load with PySide6 6.12: a job ran to the end and emitted
        ``finished``, but the slot was never called, and the window waited forever. The
        job keeps its outcome, so it is delivered here instead (each delivery happens once)."""
        now = time.monotonic()
        try:
            for job in list(self._running):
                if job.state == "done" and now - job.done_at > REAP_AFTER:
                    try:
                        if job.outcome is not None:
                            kind, value = job.outcome
                            (self._on_result if kind == "result" else self._on_error)(job, value)
                    finally:  # a failing callback must not leave the job "running" for ever
                        self._on_finished(job)
        finally:
            if restart and self._running:
                self._reaper.start()

    @Slot(object, object)
    def _on_progress(self, job: Job, value: Any) -> None:
        if self._current.get(job.key) is job and not job.cancelled and job in self._progress:
            self._progress[job](value)

    @Slot(object, object)
    def _on_result(self, job: Job, value: Any) -> None:
        if job.delivered or self._current.get(job.key) is not job or job.cancelled:
            return  # delivered already, or superseded
        job.delivered = True
        cb = self._callbacks.get(job, (None, None))[0]
        if cb is not None:
            cb(value)

    @Slot(object, object)
    def _on_error(self, job: Job, exc: BaseException) -> None:
        if job.delivered or self._current.get(job.key) is not job:
            return
        job.delivered = True
        cb = self._callbacks.get(job, (None, None))[1]
        if cb is not None:
            cb(exc)

    @Slot(object)
    def _on_finished(self, job: Job) -> None:
        if job.finished_seen:
            return
        job.finished_seen = True
        job.outcome = None  # delivered (or superseded): do not keep the result alive
        self._running.discard(job)
        self._callbacks.pop(job, None)
        self._progress.pop(job, None)
        if self._current.get(job.key) is job:
            del self._current[job.key]
        if not self._running:
            try:
                self.busyChanged.emit(False)
                self.idle.emit()
            except RuntimeError:  # the window (and we with it) is already being destroyed
                pass


def release_encoding(enc: Encoding, step: int = 1 << 15, budget: int | None = None) -> bool:
    """Drop an encoding's big lists a slice at a time (one ``del`` of a million-item list
    frees it all in one C call, holding the interpreter for tens of milliseconds).

    With ``budget``, stop after that many slices; returns True while something is left."""
    for name in ("ids", "piece_spans"):
        items = getattr(enc, name)
        while items:
            if budget is not None:
                if budget <= 0:
                    return True
                budget -= 1
            del items[-step:]
    return False


__all__ = ["Job", "TaskRunner", "load_quietly", "quiet_gc", "release_encoding", "report_progress"]


def load_quietly(spec: str) -> Tokenizer:
    """``load_tokenizer(spec)`` with the cyclic GC held off (see :func:`quiet_gc`): parsing a
    200k-token vocabulary allocates enough to set off full collections, each a pause of the
    whole process."""
    with quiet_gc():
        return load_tokenizer(spec)
