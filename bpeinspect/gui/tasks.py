"""A small worker for the vocabulary views: run one core call in the thread pool.

The call gets ``progress(done, total)`` and ``should_stop()`` keyword arguments (the core's
convention). Results come back through signals of a QObject that lives on the GUI thread, so
connected slots run there; progress is throttled so a fast loop cannot flood the event queue.

Example (in a widget)::

    task = Task(index.search, query, tag=7)
    task.signals.done.connect(self._on_done)   # slot(tag, result)
    task.start()
    ...
    task.cancel()   # the core raises Cancelled at its next check; no signal but `cancelled`
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from bpeinspect.core import Cancelled

_serial = itertools.count(1)


class TaskSignals(QObject):
    progress = Signal(int, int, int)  # tag, done, total
    done = Signal(int, object)  # tag, result
    failed = Signal(int, str)  # tag, message for the window
    cancelled = Signal(int)


class Task(QRunnable):
    """``fn(*args, progress=..., should_stop=..., **kwargs)`` in a pool thread."""

    def __init__(self, fn: Callable[..., Any], *args: Any, tag: int | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.setAutoDelete(False)  # the owner keeps it; Python frees it
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.tag = next(_serial) if tag is None else tag
        self.signals = TaskSignals()
        self._stop = False
        self._last = 0.0

    def cancel(self) -> None:
        self._stop = True

    @property
    def is_cancelled(self) -> bool:
        return self._stop

    def start(self, pool: QThreadPool | None = None) -> Task:
        _keeper().hold(self)
        (pool or QThreadPool.globalInstance()).start(self)
        return self

    def _progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - self._last > 0.05:
            self._last = now
            self.signals.progress.emit(self.tag, done, total)

    def run(self) -> None:
        try:
            self._run()
        except RuntimeError:  # the app quit while we ran: our signals object is gone
            pass

    def _run(self) -> None:
        try:
            result = self.fn(*self.args, progress=self._progress, should_stop=lambda: self._stop, **self.kwargs)
        except Cancelled:
            self.signals.cancelled.emit(self.tag)
            return
        except ValueError as exc:  # the core's errors for bad input are ValueError subclasses
            self.signals.failed.emit(self.tag, str(exc))
            return
        except Exception as exc:  # a bug: still report it in the window rather than lose it
            self.signals.failed.emit(self.tag, f"{type(exc).__name__}: {exc}")
            return
        if self._stop:
            self.signals.cancelled.emit(self.tag)
        else:
            self.signals.done.emit(self.tag, result)



class _Keeper(QObject):
    """Holds started tasks until their last signal reaches the GUI thread, so that neither the
    runnable nor its signals object is freed while the pool thread still uses it."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, Task] = {}

    def hold(self, task: Task) -> None:
        self._held[id(task)] = task
        for sig in (task.signals.done, task.signals.failed, task.signals.cancelled):
            sig.connect(self._release)

    def cancel_all(self) -> None:
        """Ask every running task to stop (on quit, before the pool is waited for)."""
        for task in self._held.values():
            task.cancel()

    def _release(self, tag: int, *_: object) -> None:
        for key, task in list(self._held.items()):
            if task.tag == tag:
                del self._held[key]


_the_keeper: _Keeper | None = None


def _keeper() -> _Keeper:
    global _the_keeper  # noqa: PLW0603 (one per process, made on the GUI thread on first use)
    if _the_keeper is None:
        _the_keeper = _Keeper()
    return _the_keeper


def shutdown_tasks(timeout_ms: int = 3000) -> None:
    """Cancel the running tasks and wait for the pool, so none emits into a deleted object."""
    if _the_keeper is not None:
        _the_keeper.cancel_all()
    QThreadPool.globalInstance().waitForDone(timeout_ms)
