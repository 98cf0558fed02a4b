"""Corpus work on every core: one small pool of child processes, for training and statistics.

>>> with ProcessPool(2) as pool:
...     list(pool.imap(_demo_square, range(4), context=10))
[10, 11, 14, 19]

:meth:`ProcessPool.imap` runs ``fn(context, item)`` for each item and yields the results in
the items' order. This process works too: an item goes to an idle child, or else is done
here, so nobody waits for a child that is still starting up, and a pool of ``n`` processes
is ``n - 1`` children plus this one. ``context`` (a tokenizer, a split pattern) is sent to
each child once per call. A child that fails or dies hands its item back, and the item is
done here (so its exception, if it has one, is raised here, with its own type).

Children are plain subprocesses, not ``multiprocessing``: they need no
``if __name__ == "__main__"`` guard in the caller's script, are safe to start from a thread
(the GUI trains in one) and work the same on every platform. They are started with a safe
import path (``python -P``, ``PYTHONSAFEPATH=1``): the current folder is never searched, so a
``regex.py`` or ``tokenizers.py`` lying there is not imported instead of the real module.
Functions and contexts travel by pickle, so ``fn`` must be importable (a module-level function).
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable
from itertools import chain, islice
from pathlib import Path
from typing import IO, Any, TypeVar

__all__ = ["BACKGROUND_NICENESS", "ProcessPool", "can_spawn", "default_processes", "max_processes", "python_command"]

# The priority of children that count in the background while the window is in use: below the
# window's. On two cores, two children starting and counting left the GUI thread a fraction of a
# core (building a plot page took several times as long); an idle machine counts as fast, since a
# nice value only weighs when the cores are shared.
BACKGROUND_NICENESS = 10

WAIT_FOR_CHILD = 0.002  # seconds between two looks for a child with room (``imap(here=False)``)

T = TypeVar("T")
R = TypeVar("R")

_FAILED = object()  # a result slot whose item must be done here
_PENDING = object()  # a result slot still waiting for its child


def can_spawn() -> bool:
    """Whether child Pythons can be started (not in a frozen app)."""
    return not getattr(sys, "frozen", False) and bool(sys.executable)


def default_processes() -> int:
    """One process per CPU this process may use, at most 8."""
    return max(1, min(_cpus(), 8))


PROCESSES_PER_CPU = 4  # more than this many processes per CPU only wait for each other


def max_processes() -> int:
    """The most processes a pool starts, whatever it is asked for: :data:`PROCESSES_PER_CPU`
    per CPU this process may use."""
    return PROCESSES_PER_CPU * _cpus()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def python_command(code: str, *, niceness: int = 0) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run ``code`` in a child Python with a safe import path.

    ``-P`` (and ``PYTHONSAFEPATH=1``, inherited by any process the child starts) keep the
    current folder and the script's folder off ``sys.path``; this package's own root is put
    on ``PYTHONPATH`` so that an uninstalled checkout works too. ``niceness`` lowers the
    child's priority before it imports anything: its start (a third of a second of importing)
    competes for the cores too.
    """
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    env["PYTHONSAFEPATH"] = "1"
    if niceness:
        code = f"import os\ntry:\n    os.nice({int(niceness)})\nexcept (AttributeError, OSError):\n    pass\n{code}"
    return [sys.executable, "-P", "-c", code], env


class _Child:
    """One child process with up to :attr:`DEPTH` items in flight. A writer thread sends the
    items and a reader thread takes the results back in order, so this process keeps working
    meanwhile, the pipes never deadlock, and the child finds its next item waiting when it
    finishes one (with one item at a time it sat idle until this process was done with its own)."""

    DEPTH = 2

    def __init__(self, niceness: int) -> None:
        cmd, env = python_command("from bpeinspect.core.pool import _child_main; _child_main()", niceness=niceness)
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both are pipes
        self._stdin: IO[bytes] = self.proc.stdin
        self._stdout: IO[bytes] = self.proc.stdout
        self.alive = True
        self.job = -1  # the job whose context the child holds
        self._slots: deque[list] = deque()  # the items in flight, oldest first
        self._cond = threading.Condition()
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._writer.start()
        self._reader.start()

    @property
    def busy(self) -> bool:
        """Whether it has no room for another item."""
        return len(self._slots) >= self.DEPTH

    def submit(self, job: int, context_bytes: bytes, fn: Callable, item: Any, slot: list) -> None:
        """Run ``fn(context, item)`` in the child; the result lands in ``slot[1]``."""
        with self._cond:
            if not self.alive:
                slot[1] = _FAILED
                return
            self._slots.append(slot)
        context = ("ctx", job, context_bytes) if self.job != job else None
        self.job = job
        self._outbox.put((context, ("task", job, fn, item)))

    def _write(self) -> None:
        out = self._stdin
        while (messages := self._outbox.get()) is not None:
            try:
                for message in messages:
                    if message is not None:
                        pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
            except (OSError, ValueError, TypeError, pickle.PickleError, AttributeError):
                self._fail()
                return

    def _read(self) -> None:
        inp = self._stdout
        while True:
            try:
                ok, value = pickle.load(inp)
            except (EOFError, OSError, ValueError, pickle.PickleError, AttributeError, ImportError):
                self._fail()
                return
            with self._cond:
                if self._slots:
                    self._slots.popleft()[1] = value if ok else _FAILED
                self._cond.notify_all()

    def _fail(self) -> None:
        """The child is gone or unusable: its items are handed back (done here)."""
        with self._cond:
            self.alive = False
            for slot in self._slots:
                slot[1] = _FAILED
            self._slots.clear()
            self._cond.notify_all()

    def wait(self) -> None:
        """Until no item is in flight."""
        with self._cond:
            while self._slots:
                self._cond.wait()

    def close(self, abandoned: bool) -> None:
        if abandoned and self._slots:
            self.proc.kill()  # busy with items nobody will read
        self.wait()
        self._outbox.put(None)
        self._writer.join()
        try:
            self._stdin.close()  # the child reads the end and leaves
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join()
        try:
            self._stdout.close()
        except OSError:
            pass


class ProcessPool:
    """``processes`` processes in all (default :func:`default_processes`): this one and
    ``processes - 1`` children, started on the first call that has two items or more.

    Close it (or use it as a context manager) to end the children. ``niceness`` lowers the
    children's priority (background work in an interactive app).
    """

    def __init__(self, processes: int | None = None, *, niceness: int = 0) -> None:
        self.processes = default_processes() if processes is None else min(max(1, int(processes)), max_processes())
        self.niceness = niceness
        self._children: list[_Child] = []
        self._job = 0

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        if not self._children and self.processes > 1 and can_spawn():
            self._children = [_Child(self.niceness) for _ in range(self.processes - 1)]

    def imap(
        self, fn: Callable[[Any, T], R], items: Iterable[T], *, context: Any = None, here: bool = True
    ) -> Generator[R, None, None]:
        """``fn(context, item)`` for every item, in order (see the module docstring).

        ``here=False`` keeps this process for its own work (a window's): an item waits for a
        child to take it instead of being done here, and only what a failed child hands back
        is done here (everything, if no child could start).

        Stop early by closing the iterator: children busy with items nobody will read are
        ended, and the pool starts new ones when it is used again.
        """
        self._job += 1
        job = self._job
        it = iter(items)
        head = list(islice(it, 2))
        if len(head) < 2:
            for item in head:
                yield fn(context, item)
            return
        self._start()
        children = [c for c in self._children if c.alive]
        context_bytes = pickle.dumps(context, protocol=pickle.HIGHEST_PROTOCOL) if children else b""
        pending: deque[list] = deque()  # [item, result], oldest first
        done = False
        try:
            for item in chain(head, it):
                idle = next((c for c in children if c.alive and not c.busy), None)
                while idle is None and not here and any(c.alive for c in children):
                    while pending and pending[0][1] is not _PENDING:  # what is done meanwhile
                        yield self._result(pending.popleft(), fn, context)
                    time.sleep(WAIT_FOR_CHILD)
                    idle = next((c for c in children if c.alive and not c.busy), None)
                if idle is not None:
                    slot: list = [item, _PENDING]
                    pending.append(slot)
                    idle.submit(job, context_bytes, fn, item, slot)
                elif not pending:  # nothing is due first
                    yield fn(context, item)
                else:
                    pending.append([item, fn(context, item)])
                while pending and pending[0][1] is not _PENDING:
                    yield self._result(pending.popleft(), fn, context)
            for c in children:
                c.wait()
            while pending:
                yield self._result(pending.popleft(), fn, context)
            done = True
        finally:
            if not done:
                self._abandon()

    @staticmethod
    def _result(slot: list, fn: Callable, context: Any) -> Any:
        item, result = slot
        return fn(context, item) if result is _FAILED else result

    def _abandon(self) -> None:
        children, self._children = self._children, []
        for c in children:
            c.close(abandoned=True)

    def close(self) -> None:
        """End the children."""
        children, self._children = self._children, []
        for c in children:
            c.close(abandoned=False)

    def __del__(self) -> None:
        try:
            self._abandon()
        except Exception:  # noqa: S110 (interpreter shutdown)
            pass


def _child_main() -> None:
    """The child: read ``("ctx", job, pickled context)`` and ``("task", job, fn, item)``
    messages from stdin, answer each task with ``(True, result)`` or ``(False, error text)``."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    contexts: dict[int, Any] = {}
    while True:
        try:
            msg = pickle.load(stdin)
        except EOFError:
            return
        kind, job = msg[0], msg[1]
        if kind == "ctx":
            contexts.clear()  # one job at a time
            try:
                contexts[job] = pickle.loads(msg[2])
            except Exception as exc:
                contexts[job] = _Broken(exc)
            continue
        fn, item = msg[2], msg[3]
        try:
            context = contexts[job]
            if isinstance(context, _Broken):
                raise context.exc
            answer = (True, fn(context, item))
        except Exception as exc:  # handed back: the parent does the item itself
            answer = (False, f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


class _Broken:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _demo_square(offset: int, x: int) -> int:
    return offset + x * x
