"""Background work: one :class:`Worker` for every job, and keyed "latest wins" with :class:`Jobs`.

A worker runs a plain function or a generator function on a thread pool and reports on the
GUI thread, by signals only:

- ``yielded(value)`` for each value a generator yields (or the function hands to ``report``);
- ``progressed(done, total)``, throttled to one every :data:`PROGRESS_INTERVAL` (the last
  one always arrives), for functions that take the core's ``progress`` callback;
- then exactly one of ``returned(value)``, ``errored(exc)`` or ``aborted()``;
- and ``finished()`` last, always.

``fn`` gets the keyword arguments it names among ``should_stop`` (true once
:meth:`Worker.cancel` was called), ``progress`` and ``report``. Cancelling only asks: a
function stops by raising :class:`~bpeinspect.core.Cancelled` (which ends as ``aborted``)
or by returning what it has, as a training does with its partial vocabulary; a generator
that does not take ``should_stop`` is closed at its next ``yield``. Every live worker is
held in one class-level table until its ``finished`` has been delivered, and then until its
pool thread has let go of it (so that it, with its signals, is freed on the GUI thread);
:meth:`Worker.shutdown` cancels them all and waits for their threads (the app calls it at quit).

A job made with ``paused_by=typing`` (work nobody waits for, such as indexing a vocabulary)
also pauses at those checks while the user types: it goes on :data:`TYPING_QUIET` seconds
after the last edit noted in that :class:`Typing` (the window's document owns one and notes
each edit), so that it never shares the interpreter with a keystroke's work. It also waits while
the owner holds it (:meth:`Typing.hold`: the window's encoder does while a big text is encoded on
every core).

:class:`Jobs` gives a widget "latest wins" per key: submitting under a key detaches the
previous worker of that key (none of its signals but ``finished`` reach anyone any more,
even those already queued) and cancels it.

>>> jobs = Jobs()                                                          # doctest: +SKIP
>>> jobs.submit("search", index.search, query, on_returned=table.set_rows)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import threading
import time
from collections.abc import Callable, Generator, Hashable
from typing import Any, ClassVar, cast

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThread, QThreadPool, QTimer, Signal, Slot
from PySide6.QtWidgets import QProgressBar

from bpeinspect.core import Cancelled

PROGRESS_INTERVAL = 0.05  # seconds between two ``progressed`` signals of one worker
HEARTBEAT_MS = 4  # the GUI thread's heartbeat while workers run
GUI_LATE = 0.007  # seconds without a heartbeat: the GUI thread is busy, or waits for the interpreter
# seconds a worker waits at most for one late heartbeat: longer than the GUI thread's longest
# stretch of work (a new plot and the paint after it, 60 ms); with 50 ms, two workers went on in
# the middle of such a stretch, and each of its calls back into Python waited for the interpreter
# again (a 60 ms stretch took 250-400 ms)
GIVE_WAY_FOR = 0.25
TYPING_QUIET = 0.3  # seconds after an edit before background jobs (``paused_by=``) go on
# threads of the shared pool beyond one per core: long jobs (the merge tree linking a vocabulary,
# a round waiting on child processes) held every thread, and what the user asked for meanwhile
# (a tokenizer opened) waited seconds for one of them to end
SPARE_THREADS = 2
LET_GO_MS = 20  # how often a delivered worker looks whether its pool thread has let go of it
HOOKS = ("should_stop", "progress", "report")  # keyword arguments a worker passes to a function that names them

_YIELDED, _PROGRESSED, _RETURNED, _ERRORED, _ABORTED, _FINISHED = range(6)
_serials = itertools.count(1)


def describe_error(exc: BaseException) -> str:
    """A message for the window: the core's ``ValueError``\\ s say it themselves, a bug gets its type.

    >>> describe_error(ValueError("no such file")), describe_error(KeyError("x"))
    ('no such file', "KeyError: 'x'")
    """
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def _hooks_of(fn: Callable[..., Any]) -> frozenset[str]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return frozenset()
    return frozenset(name for name in HOOKS if name in params)


class WorkerSignals(QObject):
    """A worker's signals. It lives on the GUI thread: the pool thread posts to it, and it
    re-emits there, so connected slots run on the GUI thread and a detached worker stays silent."""

    yielded = Signal(object)
    progressed = Signal(int, int)
    returned = Signal(object)
    errored = Signal(object)  # the exception
    aborted = Signal()
    finished = Signal()
    _posted = Signal(int, object)  # (kind, value), emitted on the pool thread

    def __init__(self, serial: int) -> None:
        super().__init__()
        self.serial = serial
        self.detached = False
        self.running = True
        self._posted.connect(self._deliver)

    @Slot(int, object)
    def _deliver(self, kind: int, value: object) -> None:
        if kind == _FINISHED:
            self.running = False
            try:
                self.finished.emit()
            finally:
                # after this slot has returned (not inside it): forget the worker
                serial = self.serial
                QTimer.singleShot(0, lambda: Worker._release(serial))
            return
        if self.detached:
            return
        if kind == _YIELDED:
            self.yielded.emit(value)
        elif kind == _PROGRESSED:
            self.progressed.emit(*cast("tuple[int, int]", value))
        elif kind == _RETURNED:
            self.returned.emit(value)
        elif kind == _ERRORED:
            self.errored.emit(value)
        elif kind == _ABORTED:
            self.aborted.emit()


class _Heartbeat:
    """When the GUI thread's event loop last turned: a timer beats there while workers live.

    A worker running Python shares the interpreter lock with the GUI thread, which gives it up
    at every call into Qt and waits for it at every call back into Python: a short burst of
    GUI work (a model reset, a new pane) took several times as long next to one busy worker, and
    longer next to two. So at each of its checks (``should_stop``, ``progress``, a generator's ``yield``)
    a worker that finds the heartbeat late sleeps until it beats again, leaving the GUI thread
    the lock (:func:`give_way`). A GUI thread late for other reasons (blocked waiting for the
    worker, or with no event loop) is waited for once, :data:`GIVE_WAY_FOR` at most."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.running = False
        self.waited_out = -1.0  # a beat some worker waited for in full: no one waits for it again
        self.gui = threading.main_thread().ident  # the thread that beats (never waits for itself)
        self._timer: QTimer | None = None

    def start(self) -> None:
        """On the GUI thread: beat until :meth:`stop`."""
        if self.running or QCoreApplication.instance() is None:
            return
        self.gui = threading.get_ident()
        if self._timer is None:
            self._timer = QTimer(interval=HEARTBEAT_MS, timerType=Qt.TimerType.PreciseTimer)
            self._timer.timeout.connect(self._beat)
        self.last = time.monotonic()
        self.running = True
        self._timer.start()

    def stop(self) -> None:
        self.running = False
        if self._timer is not None:
            self._timer.stop()

    def _beat(self) -> None:
        self.last = time.monotonic()


_heartbeat = _Heartbeat()


def shared_pool() -> QThreadPool:
    """The pool workers run on unless given one: Qt's global pool, with :data:`SPARE_THREADS`
    threads more than the cores."""
    pool = QThreadPool.globalInstance()
    want = QThread.idealThreadCount() + SPARE_THREADS
    if pool.maxThreadCount() < want:
        pool.setMaxThreadCount(want)
    return pool


def give_way() -> None:
    """On a worker: while the GUI thread is late for its heartbeat, sleep (the sleep hands it
    the interpreter lock), :data:`GIVE_WAY_FOR` at most per late beat (see :class:`_Heartbeat`)."""
    hb = _heartbeat
    last = hb.last
    if not hb.running or last == hb.waited_out or time.monotonic() - last < GUI_LATE or threading.get_ident() == hb.gui:
        return
    end = time.monotonic() + GIVE_WAY_FOR
    while hb.last == last and hb.running:
        if time.monotonic() >= end:
            hb.waited_out = last
            return
        time.sleep(0.001)


class Typing:
    """When the user last edited a text, for the background jobs that wait for the typing to
    pause (``paused_by=``): the owner of the text calls :meth:`note` at each edit."""

    def __init__(self, quiet: float = TYPING_QUIET) -> None:
        self.quiet = quiet  # seconds without an edit before paused jobs go on
        self.last = -1e9  # when the last edit was noted (monotonic seconds)
        # the text is being encoded in bulk (a big file going in): paused jobs wait for that too,
        # not sharing the cores and the interpreter with it (see hold)
        self.held = False

    def hold(self, on: bool) -> None:
        """On the GUI thread: pause the paused jobs until ``hold(False)``, whether or not the user types."""
        self.held = on

    def note(self) -> None:
        """On the GUI thread: the user has just edited the text."""
        self.last = time.monotonic()

    def wait_out(self, stop: threading.Event) -> None:
        """On a worker: sleep while the user is typing, or until ``stop`` is set."""
        if threading.get_ident() == _heartbeat.gui:
            return
        while not stop.is_set():
            left = self.last + self.quiet - time.monotonic()
            if left <= 0 and not self.held:
                return
            stop.wait(min(left, 0.02) if left > 0 else 0.02)


def next_beat() -> None:
    """On a worker: wait for the GUI thread's next heartbeat (:data:`GIVE_WAY_FOR` at most), so
    that a job about to run long without checks lets the GUI finish the turn that started it
    (showing the job is under way) before they share the interpreter."""
    hb = _heartbeat
    if not hb.running or threading.get_ident() == hb.gui:
        return
    last, end = hb.last, time.monotonic() + GIVE_WAY_FOR
    while hb.last == last and hb.running and time.monotonic() < end:
        time.sleep(0.001)


class Worker(QRunnable):
    """``fn(*args, **kwargs)`` on a pool thread; see the module for the signals and the hooks.

    Make it (and connect its :attr:`signals`) on the GUI thread, then :meth:`start` it.
    """

    _live: ClassVar[dict[int, Worker]] = {}  # started and not yet finished (delivered), by serial
    _retired: ClassVar[list[Worker]] = []  # delivered, maybe still held by the pool thread (see _let_go)
    _let_go_due: ClassVar[bool] = False  # a timer will call _let_go

    def __init__(self, fn: Callable[..., Any], *args: Any, paused_by: Typing | None = None, **kwargs: Any) -> None:
        """``paused_by``: work nobody waits for, paused while the user types there (see the module)."""
        super().__init__()
        # autoDelete stays on: the pool deletes the C++ runnable after run() (with it off,
        # PySide would keep the Python object alive for ever); _live keeps the Python side,
        # with its signals, until the last signal is delivered. Nothing calls into Qt on a
        # worker after start().
        self.serial = next(_serials)
        self.signals = WorkerSignals(self.serial)
        self._fn: Callable[..., Any] | None = fn
        self._args: tuple[Any, ...] | None = args
        self._kwargs: dict[str, Any] | None = kwargs
        self._hooks = _hooks_of(fn) - set(kwargs)
        self._stop = threading.Event()
        self.paused_by = paused_by
        self._pool: QThreadPool | None = None
        self._last_progress = 0.0
        self._pending_progress: tuple[int, int] | None = None

    # -- control (GUI thread) ---------------------------------------------------------------------

    def start(self, pool: QThreadPool | None = None) -> Worker:
        """Run in ``pool`` (default: the global pool); returns the worker."""
        self._pool = pool or shared_pool()
        Worker._live[self.serial] = self
        _heartbeat.start()
        self._pool.start(self)
        return self

    def cancel(self) -> None:
        """Ask the function to stop: ``should_stop()`` turns true (see the module)."""
        self._stop.set()

    def detach(self) -> None:
        """From now on only ``finished`` is emitted, even for what the thread already sent."""
        self.signals.detached = True

    def should_stop(self) -> bool:
        """True once cancelled; on the worker's thread it first gives way to a late GUI thread."""
        if self._stop.is_set():
            return True
        self._give_way()
        return self._stop.is_set()

    def _give_way(self) -> None:
        give_way()
        if self.paused_by is not None:
            self.paused_by.wait_out(self._stop)

    @property
    def is_running(self) -> bool:
        """True from :meth:`start` until ``finished`` has been delivered."""
        return self.serial in Worker._live and self.signals.running

    @classmethod
    def _release(cls, serial: int) -> None:
        worker = cls._live.pop(serial, None)
        if not cls._live:
            _heartbeat.stop()
        if worker is not None:
            # PySide's pool keeps its last runnable referenced until the next start: drop the
            # signals object, and with it the slots (and what they hold), now
            worker.signals.deleteLater()
            cls._retired.append(worker)
        cls._let_go()

    @classmethod
    def _let_go(cls, *, timer: bool = False) -> None:
        """Forget the delivered workers that their pool threads have let go of.

        After ``run`` the pool deletes the C++ runnable on its own thread, and PySide drops that
        thread's reference to the Python worker then. The thread may get there only after the
        worker was delivered and released (it waits for the interpreter lock, or the machine is
        busy): if ours were gone by then, the worker would be freed on the pool thread, and its
        signals, a QObject of the GUI thread, destroyed there while the GUI thread may be
        deleting it too (a SIGSEGV at times). So a worker is kept until its runnable is deleted
        (its wrapper no longer valid), looked at again every :data:`LET_GO_MS`."""
        if timer:
            cls._let_go_due = False
        cls._retired = [w for w in cls._retired if shiboken6.isValid(w)]
        if cls._retired and not cls._let_go_due and QCoreApplication.instance() is not None:
            cls._let_go_due = True
            QTimer.singleShot(LET_GO_MS, lambda: cls._let_go(timer=True))

    @classmethod
    def running_count(cls) -> int:
        """How many workers have not delivered ``finished`` yet."""
        return sum(1 for w in cls._live.values() if w.signals.running)

    @classmethod
    def shutdown(cls, timeout_ms: int = 3000) -> bool:
        """Detach and cancel every live worker, then wait for their pools, and for those of
        the delivered workers whose threads have not let go of them yet; False on a timeout."""
        pools: dict[int, QThreadPool] = {}
        for worker in list(cls._live.values()):
            worker.detach()
            worker.cancel()
        for worker in [*cls._live.values(), *cls._retired]:
            if worker._pool is not None and shiboken6.isValid(worker._pool):
                pools[id(worker._pool)] = worker._pool
        done = all(pool.waitForDone(timeout_ms) for pool in pools.values())
        cls._let_go()
        return done

    # -- the pool thread --------------------------------------------------------------------------

    def _post(self, kind: int, value: object = None) -> None:
        with contextlib.suppress(RuntimeError):  # the app is quitting: the signals object is gone
            self.signals._posted.emit(kind, value)

    def _progress(self, done: int, total: int) -> None:
        if not self._stop.is_set():
            self._give_way()
        now = time.monotonic()
        if done >= total or now - self._last_progress >= PROGRESS_INTERVAL:
            self._last_progress = now
            self._pending_progress = None
            self._post(_PROGRESSED, (done, total))
        else:
            self._pending_progress = (done, total)

    def _report(self, value: object) -> None:
        self._post(_YIELDED, value)

    def run(self) -> None:
        fn, args, given = self._fn, self._args, self._kwargs
        assert fn is not None and args is not None and given is not None  # a worker runs once
        kwargs = dict(given)
        hooks = {"should_stop": self.should_stop, "progress": self._progress, "report": self._report}
        kwargs.update({name: hooks[name] for name in self._hooks})
        try:
            result = fn(*args, **kwargs)
            if inspect.isgenerator(result):
                result = self._drive(result)
        except Cancelled:
            kind, value = _ABORTED, None
        except Exception as exc:  # reported by a signal, never raised into Qt
            kind, value = _ERRORED, exc
        else:
            kind, value = _RETURNED, result
        finally:
            # the closure may hold a tokenizer or a text: a worker waiting for delivery must not
            self._fn = self._args = self._kwargs = None
            del fn, args, given, kwargs, hooks
        if self._pending_progress is not None:
            self._post(_PROGRESSED, self._pending_progress)
        self._post(kind, value)
        self._post(_FINISHED)

    def _drive(self, gen: Generator[Any, Any, Any]) -> Any:
        closes = "should_stop" not in self._hooks  # a generator that stops itself is run to its end
        while True:
            if closes and self._stop.is_set():
                gen.close()
                raise Cancelled("cancelled")
            try:
                value = next(gen)
            except StopIteration as stop:
                return stop.value
            self._post(_YIELDED, value)
            if not self._stop.is_set():
                self._give_way()


class Jobs(QObject):
    """A widget's workers, one per key: a new job under a key supersedes the one before.

    ``busyChanged(bool)`` says when the first job starts and the last one's thread is free
    (superseded jobs count until then: they may still read what they were given);
    ``ended(key)`` follows the ``finished`` of every job.
    """

    busyChanged = Signal(bool)
    ended = Signal(object)  # the key

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self.pool = pool
        self._latest: dict[Hashable, Worker] = {}
        self._running: dict[int, Hashable] = {}  # serial -> key, until its ``finished``
        # deleted with its owner (a view): its jobs deliver nothing more to the view gone
        self.destroyed.connect(functools.partial(_detach_all, self._latest))

    def submit(
        self,
        key: Hashable,
        fn: Callable[..., Any],
        *args: Any,
        on_returned: Callable[[Any], None] | None = None,
        on_errored: Callable[[BaseException], None] | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        on_yielded: Callable[[Any], None] | None = None,
        on_aborted: Callable[[], None] | None = None,
        paused_by: Typing | None = None,
        threads: QThreadPool | None = None,
        **kwargs: Any,
    ) -> Worker:
        """Run ``fn(*args, **kwargs)`` as the job ``key``, superseding the one before;
        ``paused_by``: it pauses while the user types there (see the module); ``threads``: the
        pool to run it on, if not that of these jobs."""
        self.cancel(key)
        worker = Worker(fn, *args, paused_by=paused_by, **kwargs)
        s = worker.signals
        for signal, slot in (
            (s.returned, on_returned),
            (s.errored, on_errored),
            (s.progressed, on_progress),
            (s.yielded, on_yielded),
            (s.aborted, on_aborted),
        ):
            if slot is not None:
                signal.connect(slot)
        serial = worker.serial
        s.finished.connect(lambda: self._ended(serial))  # no reference to the worker: no cycle
        self._latest[key] = worker
        was_busy = bool(self._running)
        self._running[serial] = key
        worker.start(threads or self.pool)
        if not was_busy:
            self.busyChanged.emit(True)
        return worker

    def cancel(self, key: Hashable) -> None:
        """Detach and cancel the job ``key`` (nothing of it is delivered any more)."""
        old = self._latest.pop(key, None)
        if old is not None:
            old.detach()
            old.cancel()

    def cancel_all(self) -> None:
        for key in list(self._latest):
            self.cancel(key)

    def is_busy(self) -> bool:
        """True while a job's thread has not finished, superseded and cancelled ones included."""
        return bool(self._running)

    def running_keys(self) -> list[Hashable]:
        """The keys of the jobs whose threads have not finished (for messages and tests)."""
        return list(self._running.values())

    def pending(self, key: Hashable | None = None) -> bool:
        """True while the job ``key`` (or any) has yet to deliver its outcome."""
        return bool(self._latest) if key is None else key in self._latest

    def _ended(self, serial: int) -> None:
        key = self._running.pop(serial, None)
        latest = self._latest.get(key)
        if latest is not None and latest.serial == serial:
            del self._latest[key]
        with contextlib.suppress(RuntimeError):  # the owner is being destroyed
            self.ended.emit(key)
            if not self._running:
                self.busyChanged.emit(False)


def _detach_all(workers: dict[Hashable, Worker], *_: object) -> None:
    for worker in list(workers.values()):
        worker.detach()
        worker.cancel()


def all_idle() -> bool:
    """True when no worker anywhere is running (what ``--screenshot`` waits for)."""
    return Worker.running_count() == 0


class ProgressBar(QProgressBar):
    """A progress bar for a worker's progress that repaints with the rest of the window.

    ``QProgressBar`` repaints at once whenever the shown value moves (``setValue``, and
    ``setRange`` or ``reset`` that reset it): a paint of its own, in which everything else
    waiting to be painted is painted too (a newly shown panel, every pane of a long text),
    inside the callback that reports the progress. Here the change waits for the window's
    next paint."""

    def setValue(self, value: int) -> None:  # noqa: N802 (Qt's names)
        if value != self.value():
            self._quietly(super().setValue, value)

    def setRange(self, minimum: int, maximum: int) -> None:  # noqa: N802
        self._quietly(super().setRange, minimum, maximum)

    def reset(self) -> None:
        self._quietly(super().reset)

    def _quietly(self, change: Callable[..., None], *args: int) -> None:
        was = self.updatesEnabled()
        self.setUpdatesEnabled(False)  # repaint() does nothing then; turned on, it asks for an update
        try:
            change(*args)
        finally:
            self.setUpdatesEnabled(was)
