"""Work on every core: one pool of child processes and one protocol to talk to them.

>>> with ProcessPool(2) as pool:
...     list(pool.imap(_demo_square, range(4), context=10))
[10, 11, 14, 19]

:meth:`ProcessPool.imap` runs ``fn(context, item)`` for each item and yields the results in
the items' order. This process works too: an item goes to an idle child, or else is done
here, so nobody waits for a child that is still starting up, and a pool of ``n`` processes
is ``n - 1`` children plus this one. ``context`` (a tokenizer, a split pattern) is sent to
each child once per call. A child that fails or dies hands its item back, and the item is
done here (so its exception, if it has one, is raised here, with its own type).

The same children serve other schedules (the token counts of many texts under several
tokenizers, a training run): :meth:`ProcessPool.start` starts them early and keeps them,
:meth:`Child.put` gives one a context to keep (under a key from :meth:`ProcessPool.new_key`),
:meth:`ProcessPool.submit` gives it a task and :meth:`ProcessPool.reply` takes what the
children answer. The protocol, one pickled tuple after another on the child's stdin and stdout:

* to the child: ``("put", key, data)`` (keep ``pickle.loads(data)`` as context ``key``),
  ``("drop", key)``, ``("task", task, fn, key, item, live)`` and ``("cancel", task)``;
* from the child: ``("result", task, value, seconds, load)`` (``load``: the seconds its
  context took to unpickle, told with the first task that used it),
  ``("progress", task, value)`` and ``("error", task, kinds, message)`` (``kinds``: the names
  of the exception's classes, its own first; a task cancelled before it began fails with
  ``"Cancelled"``).

A *live* task is called ``fn(context, item, channel)``: ``channel.progress(value)`` sends a
progress message, ``channel.cancelled()`` says whether the parent asked it to stop (or went
away), and the task decides what stopping means (a training run pauses and returns its state).

Children are plain subprocesses, not ``multiprocessing``: they need no
``if __name__ == "__main__"`` guard in the caller's script, are safe to start from a thread
(the GUI trains in one) and work the same on every platform. They are started with a safe
import path (``python -P``, ``PYTHONSAFEPATH=1``): the current folder is never searched, so a
``regex.py`` or ``tokenizers.py`` lying there is not imported instead of the real module.
Functions and contexts travel by pickle, so ``fn`` must be importable (a module-level function).
A child leaves when its stdin ends (this process closed the pool, or died): a live task
is told to stop first.
"""

from __future__ import annotations

import gc
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable
from itertools import chain, count, islice
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar

__all__ = [
    "BACKGROUND_NICENESS",
    "Channel",
    "Child",
    "ProcessPool",
    "Reply",
    "can_spawn",
    "default_processes",
    "max_processes",
    "python_command",
]

# The priority of children that count in the background while the window is in use: below the
# window's. On two cores, two children starting and counting left the GUI thread a fraction of a
# core (building a plot page took several times as long); an idle machine counts as fast, since a
# nice value only weighs when the cores are shared.
BACKGROUND_NICENESS = 10

# Progress messages of a child taken from its pipe but not yet from the pool: past these, its pipe
# fills and the child waits, so that it never runs far ahead of a consumer that may ask it to stop.
PROGRESS_ROOM = 16
WAIT_FOR_CHILD = 0.05  # seconds between two looks at the caller's state while waiting for a child

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


class Reply(NamedTuple):
    """A child's answer, as :meth:`ProcessPool.reply` gives it.

    ``kind`` is ``"result"`` (``value``; ``seconds`` the task took, ``load`` the seconds its
    context took to unpickle), ``"progress"`` (``value``), ``"error"`` (``value`` the message,
    ``kinds`` the exception's class names) or ``"lost"``: the child is gone (``value``: why,
    as far as it is known), with ``tasks``, the tasks it had in flight.
    """

    child: Child
    kind: str
    task: int = 0
    value: Any = None
    seconds: float = 0.0
    load: float = 0.0
    kinds: tuple[str, ...] = ()
    tasks: tuple[int, ...] = ()


class Child:
    """One child process with its tasks in flight. A writer thread sends the messages and a
    reader thread hands the answers to the pool's queue, so this process keeps working
    meanwhile, the pipes never deadlock, and the child finds its next task waiting when it
    finishes one (with one task at a time it sat idle until this process was done with its own)."""

    DEPTH = 2  # tasks in flight that :meth:`ProcessPool.imap` gives one child

    def __init__(self, replies: queue.SimpleQueue, niceness: int, collect: bool) -> None:
        code = f"from bpeinspect.core.pool import child_main; child_main(collect={bool(collect)})"
        cmd, env = python_command(code, niceness=niceness)
        self._stderr = tempfile.TemporaryFile()  # a file, so a chatty child never blocks on it
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both are pipes
        self._stdin: IO[bytes] = self.proc.stdin
        self._stdout: IO[bytes] = self.proc.stdout
        self.alive = True
        self.held: set[Any] = set()  # the context keys it keeps
        self.tasks: set[int] = set()  # the tasks in flight
        self._lock = threading.Lock()  # alive and tasks, between the reader and the submitters
        self.room = threading.Semaphore(PROGRESS_ROOM)  # see PROGRESS_ROOM
        self._replies = replies
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write, daemon=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._writer.start()
        self._reader.start()

    @property
    def busy(self) -> bool:
        """Whether it has :attr:`DEPTH` tasks in flight."""
        return len(self.tasks) >= self.DEPTH

    def put(self, key: Any, data: bytes) -> None:
        """Have it keep ``pickle.loads(data)`` as context ``key``."""
        self.held.add(key)
        self._outbox.put(("put", key, data))

    def drop(self, key: Any) -> None:
        """Have it forget context ``key`` (if it keeps it)."""
        if key in self.held:
            self.held.discard(key)
            self._outbox.put(("drop", key))

    def submit(self, task: int, fn: Callable, item: Any, key: Any = None, live: bool = False) -> None:
        """Run ``fn(context, item)`` (``live``: with a :class:`Channel` too) as ``task``."""
        with self._lock:
            if not self.alive:  # it died meanwhile: the task is handed back as lost with it
                self._replies.put(Reply(self, "lost", value="ended", tasks=(task,)))
                return
            self.tasks.add(task)
        self._outbox.put(("task", task, fn, key, item, live))

    def cancel(self, task: int) -> None:
        self._outbox.put(("cancel", task))

    def _write(self) -> None:
        out = self._stdin
        while (message := self._outbox.get()) is not None:
            try:
                pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
                out.flush()
            except (OSError, ValueError, TypeError, pickle.PickleError, AttributeError):
                self.proc.kill()  # half a message went out: the reader hears the end
                break
        try:
            out.close()  # the child reads the end and leaves
        except OSError:
            pass

    def _read(self) -> None:
        inp = self._stdout
        while True:
            try:
                msg = pickle.load(inp)
            except Exception:  # noqa: BLE001 (gone: EOF, a broken pipe, garbage)
                with self._lock:
                    self.alive = False
                    tasks = tuple(self.tasks)
                    self.tasks.clear()
                self._replies.put(Reply(self, "lost", value=self._why(), tasks=tasks))
                return
            kind, task = msg[0], msg[1]
            if kind == "result":
                self.tasks.discard(task)
                self._replies.put(Reply(self, kind, task, msg[2], msg[3], msg[4]))
            elif kind == "error":
                self.tasks.discard(task)
                self._replies.put(Reply(self, kind, task, msg[3], kinds=tuple(msg[2])))
            else:
                while not self.room.acquire(timeout=WAIT_FOR_CHILD) and self.alive:
                    pass  # room is made when the pool hands a progress message on
                self._replies.put(Reply(self, kind, task, msg[2]))

    def _why(self) -> str:
        """How the child ended: its exit code and the last line it wrote to stderr."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        try:
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - 4096))
            lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            lines = []
        return f"exit code {code}" + (f": {lines[-1]}" if lines else "")

    def close(self, kill: bool = False) -> None:
        """End it: ``kill`` at once, or let it finish its task at hand (its stdin ends)."""
        with self._lock:
            self.alive = False
        if kill:
            self.proc.kill()
        self._outbox.put(None)

    def wait(self) -> None:
        """Until it has left (killed after 5 seconds)."""
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._writer.join()
        self._reader.join()
        for f in (self._stdout, self._stderr):
            try:
                f.close()
            except OSError:
                pass


class ProcessPool:
    """``processes`` processes in all (default :func:`default_processes`): this one and
    ``processes - 1`` children, started on the first call that has two items or more (or by
    :meth:`start`).

    Close it (or use it as a context manager) to end the children. ``niceness`` lowers the
    children's priority (background work in an interactive app); ``collect=False`` turns the
    children's garbage collector off (it runs when a context is dropped), for tasks that build
    caches by the hundred thousand objects.
    """

    def __init__(self, processes: int | None = None, *, niceness: int = 0, collect: bool = True) -> None:
        self.processes = default_processes() if processes is None else min(max(1, int(processes)), max_processes())
        self.niceness = niceness
        self.collect = collect
        self._children: list[Child] = []
        self._replies: queue.SimpleQueue = queue.SimpleQueue()
        self._tasks = count(1)
        self._keys = count(1)
        self._lock = threading.Lock()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the children and the protocol ------------------------------------------------------------

    def start(self) -> list[Child]:
        """Start the children now, in place of any that died (they import the core
        meanwhile); safe to call again, from any thread. Gives the live children."""
        with self._lock:
            self._children = [c for c in self._children if c.alive and c.proc.poll() is None]
            if can_spawn():
                while len(self._children) < self.processes - 1:
                    self._children.append(Child(self._replies, self.niceness, self.collect))
            return list(self._children)

    @property
    def children(self) -> list[Child]:
        """The live children."""
        return [c for c in self._children if c.alive]

    def new_key(self) -> int:
        """A context key no other user of this pool has."""
        return next(self._keys)

    def drop(self, key: Any) -> None:
        """Have every child forget context ``key``."""
        for c in self._children:
            c.drop(key)

    def submit(self, child: Child, fn: Callable, item: Any, *, key: Any = None, live: bool = False) -> int:
        """Run ``fn(context ``key``, item)`` on ``child`` (``live``: ``fn(context, item,
        channel)``, see the module); gives the task's number, which its replies carry."""
        task = next(self._tasks)
        child.submit(task, fn, item, key, live)
        return task

    def cancel(self, task: int) -> None:
        """Ask the child running ``task`` to stop it (a live task hears it; a task not begun
        fails with ``"Cancelled"``; a plain task at work finishes)."""
        for c in self._children:
            if task in c.tasks:
                c.cancel(task)

    def reply(self, timeout: float | None = None) -> Reply | None:
        """The children's next answer, waiting up to ``timeout`` seconds (``None``: for ever,
        ``0``: not at all); ``None`` if there is none yet."""
        try:
            if timeout is None:
                reply = self._replies.get()
            else:
                reply = self._replies.get(timeout=timeout) if timeout > 0 else self._replies.get_nowait()
        except queue.Empty:
            return None
        if reply.kind == "progress":
            reply.child.room.release()
        return reply

    def put_back(self, replies: Iterable[Reply]) -> None:
        """Answers one user of the pool took that are another's (a count under way while a
        single task waits): :meth:`reply` gives them again, in their order, before newer ones."""
        replies = list(replies)
        if not replies:
            return
        for mine in replies:
            if mine.kind == "progress":
                mine.child.room.acquire(blocking=False)  # released again when it is given again
        newer = []
        while (came := self._replies_nowait()) is not None:
            newer.append(came)
        for r in (*replies, *newer):
            self._replies.put(r)

    def _replies_nowait(self) -> Reply | None:
        try:
            return self._replies.get_nowait()
        except queue.Empty:
            return None

    def lose(self, child: Child) -> None:
        """End ``child`` at once (it failed): :meth:`start` starts another."""
        child.close(kill=True)

    # -- ordered work ----------------------------------------------------------------------------

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
        it = iter(items)
        head = list(islice(it, 2))
        if len(head) < 2:
            for item in head:
                yield fn(context, item)
            return
        children = self.start() if self.processes > 1 else []
        key = self.new_key()
        context_bytes = pickle.dumps(context, protocol=pickle.HIGHEST_PROTOCOL) if children else b""
        slots: dict[int, list] = {}  # task -> [item, result]
        pending: deque[list] = deque()  # the same slots (and those done here), oldest first
        done = False
        try:
            for item in chain(head, it):
                idle = self._idle(children)
                while idle is None and not here and any(c.alive for c in children):
                    while pending and pending[0][1] is not _PENDING:  # what is done meanwhile
                        yield self._result(pending.popleft(), fn, context)
                    self._take(slots, WAIT_FOR_CHILD)
                    idle = self._idle(children)
                if idle is not None:
                    if key not in idle.held:
                        idle.put(key, context_bytes)
                    slot: list = [item, _PENDING]
                    pending.append(slot)
                    slots[self.submit(idle, fn, item, key=key)] = slot
                elif not pending:  # nothing is due first
                    yield fn(context, item)
                else:
                    pending.append([item, fn(context, item)])
                self._take(slots, 0)
                while pending and pending[0][1] is not _PENDING:
                    yield self._result(pending.popleft(), fn, context)
            while pending:
                while pending[0][1] is _PENDING:
                    self._take(slots, WAIT_FOR_CHILD)
                yield self._result(pending.popleft(), fn, context)
            done = True
        finally:
            if done:
                self.drop(key)
            else:
                self._abandon()

    @staticmethod
    def _idle(children: list[Child]) -> Child | None:
        return next((c for c in children if c.alive and not c.busy), None)

    def _take(self, slots: dict[int, list], timeout: float) -> None:
        """Fill the slots of the answers that came (waiting up to ``timeout`` for the first)."""
        while (r := self.reply(timeout)) is not None:
            timeout = 0
            if r.kind == "lost":
                self.lose(r.child)
                for task in r.tasks:
                    if task in slots:
                        slots.pop(task)[1] = _FAILED
            elif r.kind in ("result", "error") and r.task in slots:
                slots.pop(r.task)[1] = r.value if r.kind == "result" else _FAILED

    @staticmethod
    def _result(slot: list, fn: Callable, context: Any) -> Any:
        item, result = slot
        return fn(context, item) if result is _FAILED else result

    def _abandon(self) -> None:
        """End the children, at once those with tasks nobody will read."""
        with self._lock:
            children, self._children = self._children, []
        for c in children:
            c.close(kill=bool(c.tasks))
        for c in children:
            c.wait()

    def close(self, *, wait: bool = True) -> None:
        """End the children (they finish the task at hand and leave; ``wait`` for that)."""
        with self._lock:
            children, self._children = self._children, []
        for c in children:
            c.close()
        for c in children if wait else ():
            c.wait()

    def __del__(self) -> None:
        try:
            for c in self._children:
                c.close(kill=True)
        except Exception:  # noqa: S110 (interpreter shutdown)
            pass


# -- the child -------------------------------------------------------------------------------------


class Channel:
    """What a live task is given in the child: :meth:`progress` and :meth:`cancelled`."""

    def __init__(self, task: int, send: Callable[[tuple], None], cancelled: set[int], ending: threading.Event) -> None:
        self._task, self._send, self._cancelled, self._ending = task, send, cancelled, ending

    def progress(self, value: Any) -> None:
        """Send ``value`` to the parent as a progress message."""
        self._send(("progress", self._task, value))

    def cancelled(self) -> bool:
        """Whether the parent asked this task to stop, or went away."""
        return self._task in self._cancelled or self._ending.is_set()


def child_main(collect: bool = True) -> None:
    """A child: reads the messages of the protocol (see the module) and answers them, until
    its stdin ends. ``collect=False`` turns the garbage collector off (a dropped context is
    collected at once)."""
    if not collect:
        gc.disable()
    child = _Serving(sys.stdin.buffer, sys.stdout.buffer)
    threading.Thread(target=child.read, daemon=True).start()
    while (msg := child.work.get()) is not None:
        kind = msg[0]
        if kind == "put":
            child.hold(msg[1], msg[2])
        elif kind == "drop":
            child.contexts.pop(msg[1], None)
            child.loads.pop(msg[1], None)
            if not collect:
                gc.collect()
        elif kind == "task" and not child.ending.is_set():
            child.send(child.answer(*msg[1:]))
    try:
        sys.stdout.buffer.flush()
    finally:
        # Freeing millions of objects (a training run's, the counting caches) one by one takes
        # a second or more, and the parent may be waiting: leave without tearing them down.
        os._exit(0)


class _Serving:
    """A child's state: its contexts, the tasks the parent cancelled, the messages to do."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.work: queue.SimpleQueue = queue.SimpleQueue()  # messages but cancels, for the main thread
        self.cancelled: set[int] = set()
        self.ending = threading.Event()  # the parent closed the pool or died
        self.contexts: dict[Any, Any] = {}
        self.loads: dict[Any, float] = {}  # key -> seconds its unpickling took (told once, with its first task)

    def read(self) -> None:
        """Read the messages (a thread of its own, so that a cancel reaches the task at work)."""
        while True:
            try:
                msg = pickle.load(self.stdin)
            except Exception:  # noqa: BLE001 (EOF: the parent closed the pool or died)
                break
            if msg[0] == "cancel":
                self.cancelled.add(msg[1])
            else:
                self.work.put(msg)
        self.ending.set()
        self.work.put(None)

    def send(self, msg: tuple) -> None:
        try:
            data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 (a value that cannot travel)
            data = pickle.dumps(_error(msg[1], exc), protocol=pickle.HIGHEST_PROTOCOL)
        self.stdout.write(data)
        self.stdout.flush()

    def hold(self, key: Any, data: bytes) -> None:
        t0 = time.perf_counter()
        try:
            self.contexts[key] = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 (each of its tasks says so)
            self.contexts[key] = _Broken(exc)
        self.loads[key] = time.perf_counter() - t0

    def answer(self, task: int, fn: Callable, key: Any, item: Any, live: bool) -> tuple:
        """The answer to a task."""
        if task in self.cancelled and not live:
            self.cancelled.discard(task)
            return ("error", task, ("Cancelled",), "cancelled")
        t0 = time.perf_counter()
        try:
            context = self.contexts[key] if key is not None else None
            if isinstance(context, _Broken):
                raise context.exc
            if live:
                value = fn(context, item, Channel(task, self.send, self.cancelled, self.ending))
            else:
                value = fn(context, item)
            answer: tuple = ("result", task, value, time.perf_counter() - t0, self.loads.pop(key, 0.0))
        except Exception as exc:  # noqa: BLE001 (told to the parent)
            answer = _error(task, exc)
        self.cancelled.discard(task)
        return answer


def _error(task: int, exc: BaseException) -> tuple:
    kinds = tuple(c.__name__ for c in type(exc).__mro__ if c is not object)
    return ("error", task, kinds, str(exc) or type(exc).__name__)


class _Broken:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _demo_square(offset: int, x: int) -> int:
    return offset + x * x
