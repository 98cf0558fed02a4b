"""A small background job for the languages and compare views: run one core call off the GUI thread.

The call receives ``progress(done, total)`` and ``should_stop()``; results come back by
signals only (throttled progress, ``done``, ``failed``, ``cancelled``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from bpeinspect.core import Cancelled

_PROGRESS_INTERVAL = 0.05  # seconds; enough for a smooth bar without flooding the event loop


class JobSignals(QObject):
    progress = Signal(int, int)
    done = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class Job(QRunnable):
    """Runs ``fn(progress=..., should_stop=...)`` in the global thread pool.

    >>> # job = Job(lambda progress, should_stop: 42); job.signals.done.connect(print); job.start()
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.setAutoDelete(False)  # we keep a reference; Qt must not delete it under us
        self.fn = fn
        self.signals = JobSignals()
        self._stop = threading.Event()
        self._last = 0.0
        self.finished = threading.Event()

    def start(self) -> None:
        QThreadPool.globalInstance().start(self)

    def cancel(self) -> None:
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def _progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last >= _PROGRESS_INTERVAL or done >= total:
            self._last = now
            self.signals.progress.emit(done, total)

    def run(self) -> None:
        try:
            result = self.fn(progress=self._progress, should_stop=self._stop.is_set)
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # reported in the window, never a traceback
            self.signals.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self._stop.is_set():
                self.signals.cancelled.emit()
            else:
                self.signals.done.emit(result)
        finally:
            self.finished.set()
