"""Bounds on a chat template's run: a time limit, and sizes past which an operation is refused
before it runs.

A chat template comes from the internet, and Jinja's sandbox keeps it from the file system but
not from running for ever or filling the memory. Two things do here:

- What could fill the memory, or hold the interpreter for minutes inside one C call (which no
  time limit can stop: ``10**100000000``), is refused before it runs: a power or product whose
  result has more than :data:`MAX_INT_BITS` bits, a repeat, a concatenation or a value stored
  past :data:`MAX_TEXT` characters or items, a format width past :data:`MAX_WIDTH`, ``lipsum``
  past a few paragraphs.
- Everything else runs under :func:`time_limit`: past :data:`TIME_LIMIT` seconds of a render, a
  :class:`TooLong` is raised in the rendering thread at its next step (nested loops of a
  hundred thousand turns each stop there).

>>> check_binop("**", 2, 64)
>>> check_binop("**", 10, 100_000_000)
Traceback (most recent call last):
...
jinja2.exceptions.SecurityError: a chat template may not compute a number of more than 65536 bits
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import heapq
import itertools
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from bpeinspect.core.errors import TooLong

TIME_LIMIT = 5.0  # seconds a template may render (or compile)
MAX_INT_BITS = 1 << 16  # a number of more bits than this is refused (about 20,000 digits)
MAX_TEXT = 1 << 25  # characters (or items) of one value: 32 Mi, or twice what the render was given
MAX_WIDTH = 1 << 16  # a format's width or precision
MAX_FORMAT = 1000  # characters of a date format
_MAX_LIPSUM = 100  # paragraphs; their words at most 1000


def text_limit(given: int) -> int:
    """The characters (or items) a value may reach in a render given ``given`` characters:
    :data:`MAX_TEXT`, or twice what it was given when that is more.

    >>> text_limit(10) == MAX_TEXT, text_limit(MAX_TEXT) == 2 * MAX_TEXT
    (True, True)
    """
    return max(MAX_TEXT, 2 * given)


def _refuse(message: str) -> None:
    from jinja2.exceptions import SecurityError

    raise SecurityError(message)


def _bits(x: Any) -> int:
    return x.bit_length() if isinstance(x, int) else 0


def check_binop(op: str, left: Any, right: Any, max_text: int = MAX_TEXT) -> None:
    """Refuse ``left op right`` if its result would be larger than the bounds (a text or list:
    ``max_text`` characters or items)."""
    if op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if right * math.log2(abs(left)) > MAX_INT_BITS:
                _refuse(f"a chat template may not compute a number of more than {MAX_INT_BITS} bits")
    elif op == "*":
        if isinstance(left, int) and isinstance(right, int):
            if _bits(left) + _bits(right) > MAX_INT_BITS:
                _refuse(f"a chat template may not compute a number of more than {MAX_INT_BITS} bits")
        elif isinstance(left, int) or isinstance(right, int):
            times, seq = (left, right) if isinstance(left, int) else (right, left)
            if hasattr(seq, "__len__") and times > 0 and len(seq) * times > max_text:
                _refuse(f"a chat template may not repeat a text or list past {max_text:,} characters or items")
    elif op == "+":
        if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            if _weight(left, max_text) + _weight(right, max_text) > max_text:
                _refuse(f"a chat template may not join texts or lists past {max_text:,} characters or items")
    elif op == "%" and isinstance(left, str):
        check_format(left)


_WIDTHS = re.compile(r"\d+")
_PERCENT_SPEC = re.compile(r"%[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?")
_BRACE_SPEC = re.compile(r"\{[^{}]*:([^{}]*)\}")


def check_format(text: str) -> None:
    """Refuse a ``%`` or ``str.format`` format with a width or precision past :data:`MAX_WIDTH`
    (or given by an argument, ``*``).

    >>> check_format("%5d|{:>10}")
    >>> check_format("%999999999d")
    Traceback (most recent call last):
    ...
    jinja2.exceptions.SecurityError: a chat template's format may not be wider than 65536
    """
    specs = [m.group() for m in _PERCENT_SPEC.finditer(text)] + [m.group(1) for m in _BRACE_SPEC.finditer(text)]
    for spec in specs:
        if "*" in spec[1:] and spec.startswith("%"):
            _refuse("a chat template's format may not take its width from an argument")
        if any(int(w) > MAX_WIDTH for w in _WIDTHS.findall(spec) if len(w) < 50) or any(
            len(w) >= 50 for w in _WIDTHS.findall(spec)
        ):
            _refuse(f"a chat template's format may not be wider than {MAX_WIDTH}")


def check_size(value: Any, max_text: int = MAX_TEXT) -> None:
    """Refuse a text or list of more than :data:`MAX_TEXT` characters or items (a list: its
    items and the characters of its texts, so many distinct large texts count as what they hold);
    ``max_text`` for :data:`MAX_TEXT`."""
    if isinstance(value, (str, list, tuple, dict)) and _weight(value, max_text) > max_text:
        _refuse(f"a chat template may not build a text or list of more than {max_text:,} characters or items")
    if isinstance(value, int) and _bits(value) > MAX_INT_BITS:
        _refuse(f"a chat template may not compute a number of more than {MAX_INT_BITS} bits")


_WALK = 100_000  # items of a list looked into at most (beyond, its length alone counts)


def _weight(value: Any, budget: int) -> int:
    """Characters and items in ``value``, counted until they pass ``budget``."""
    if isinstance(value, str):
        return len(value)
    if not isinstance(value, (list, tuple, dict)):
        return 1
    total = len(value)
    items = value.values() if isinstance(value, dict) else value
    for k, item in enumerate(items):
        if total > budget or k >= _WALK:
            break
        if isinstance(item, (str, list, tuple, dict)):
            total += _weight(item, budget - total) if not isinstance(item, str) else len(item)
    return total


_GROWING = {"center": 0, "ljust": 0, "rjust": 0, "zfill": 0, "expandtabs": 0}


def check_call(func: Any, args: tuple, kwargs: dict, max_text: int = MAX_TEXT) -> None:
    """Refuse a call of a text's method whose result would be past :data:`MAX_TEXT`, and any
    call given a text or list past it."""
    for a in itertools.chain(args, kwargs.values()):  # shallow: a macro given the messages may be called often
        if isinstance(a, (str, list, tuple, dict)) and len(a) > max_text:
            _refuse(f"a chat template may not build a text or list of more than {max_text:,} characters or items")
        if isinstance(a, int) and _bits(a) > MAX_INT_BITS:
            _refuse(f"a chat template may not compute a number of more than {MAX_INT_BITS} bits")
    owner = getattr(func, "__self__", None)
    if not isinstance(owner, str):
        return
    name = getattr(func, "__name__", "")
    if name in _GROWING and args and isinstance(args[0], int):
        size = args[0] * (max(owner.count("\t"), 1) if name == "expandtabs" else 1)
        if size > max_text:
            _refuse(f"a chat template may not build a text of more than {max_text:,} characters")
    elif name == "join" and args:
        _check_join(owner, args[0], max_text)
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        _check_replace(owner, args[0], args[1], max_text)


def _check_join(separator: str, items: Any, max_text: int) -> None:
    if isinstance(items, (list, tuple)):
        total = len(separator) * len(items) + sum(len(x) for x in items if isinstance(x, str))
        if total > max_text:
            _refuse(f"a chat template may not build a text of more than {max_text:,} characters")


def _check_replace(text: str, old: str, new: str, max_text: int) -> None:
    if len(new) > len(old) and len(text) + text.count(old) * (len(new) - len(old)) > max_text:
        _refuse(f"a chat template may not build a text of more than {max_text:,} characters")


def bounded_filter(func: Callable[..., Any], max_text: int = MAX_TEXT) -> Callable[..., Any]:
    """A Jinja filter that refuses an argument or a result past the bounds (``max_text`` for
    :data:`MAX_TEXT`)."""

    @functools.wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        values = [a for a in itertools.chain(args, kwargs.values()) if not hasattr(a, "environment")]
        for a in values:
            check_size(a, max_text)
            if isinstance(a, int) and a > MAX_WIDTH and func.__name__ in ("do_center", "do_indent", "do_wordwrap"):
                _refuse(f"a chat template's width may not be more than {MAX_WIDTH}")
            if isinstance(a, str) and func.__name__ == "do_format":
                check_format(a)
        texts = [a for a in values if isinstance(a, (str, list, tuple))]
        if func.__name__ == "do_join" and texts:
            _check_join(str(texts[1]) if len(texts) > 1 and isinstance(texts[1], str) else "", texts[0], max_text)
        if func.__name__ == "do_replace" and len(texts) >= 3:
            s, old, new = texts[:3]
            if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
                _check_replace(s, old, new, max_text)
        if func.__name__ == "do_indent" and len(texts) >= 2 and isinstance(texts[1], str):
            if len(texts[1]) * (texts[0].count("\n") + 1) > max_text:
                _refuse(f"a chat template may not build a text of more than {max_text:,} characters")
        result = func(*args, **kwargs)
        check_size(result, max_text)
        return result

    return bounded


def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002  (Jinja's names)
    """Jinja's ``lipsum``, at most a hundred paragraphs of at most a thousand words."""
    from jinja2.utils import generate_lorem_ipsum

    if not all(isinstance(x, (int, float)) for x in (n, min, max)) or n > _MAX_LIPSUM or max > 10 * _MAX_LIPSUM:
        _refuse(f"a chat template's lipsum is limited to {_MAX_LIPSUM} paragraphs of {10 * _MAX_LIPSUM} words")
    return generate_lorem_ipsum(int(n), bool(html), int(min), int(max))


# -- the time limit ------------------------------------------------------------------------------------------


_RAISE_AGAIN = 0.2  # seconds between raises in a block that goes on after its limit


class _Watchdog:
    """One thread that raises :class:`TooLong` in threads whose time limit has passed."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)
        self.heap: list[tuple[float, int, int]] = []  # (deadline, token, thread id)
        self.active: dict[int, int] = {}  # token -> thread id
        self.fired: set[int] = set()
        self.tokens = itertools.count()
        self.thread: threading.Thread | None = None

    def start(self, seconds: float) -> int:
        with self.lock:
            token = next(self.tokens)
            tid = threading.get_ident()
            self.active[token] = tid
            heapq.heappush(self.heap, (time.monotonic() + seconds, token, tid))
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="chat template time limit", daemon=True)
                self.thread.start()
            self.wake.notify()
            return token

    def stop(self, token: int) -> None:
        """End the block of ``token``; called in the block's own thread as it leaves."""
        with self.lock:
            tid = self.active.pop(token, None)
            fired = token in self.fired
            self.fired.discard(token)
        if fired and tid == threading.get_ident():
            _drop_pending()  # a TooLong not yet raised must not land after the block

    def _run(self) -> None:
        with self.lock:
            while True:
                while self.heap and self.heap[0][1] not in self.active:
                    heapq.heappop(self.heap)
                if not self.heap:
                    self.wake.wait()
                    continue
                deadline, token, tid = self.heap[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self.wake.wait(left)
                    continue
                # raised again while the block runs: an exception raised in a thread is lost
                # when it lands in code that swallows it (a garbage collector's callback)
                heapq.heapreplace(self.heap, (time.monotonic() + _RAISE_AGAIN, token, tid))
                self.fired.add(token)
                _raise_in(tid, TooLong)


def _raise_in(thread_id: int, exc: type[BaseException]) -> bool:
    """Have ``exc`` raised in the thread at its next step; False where that cannot be done."""
    with contextlib.suppress(AttributeError, OSError):  # not CPython: only the bounds above hold
        return ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc)) == 1
    return False


class _Dropped(BaseException):
    """Stands in for a pending :class:`TooLong` so that it is raised, and caught, at once."""


def _drop_pending() -> None:
    """Drop a time-limit exception pending in this thread by raising a stand-in here and now.

    Clearing it instead (``PyThreadState_SetAsyncExc`` with no exception) leaves the
    interpreter's flag for pending exceptions set with nothing left to raise: every thread then
    checks for one at each step for the rest of the process, and code run under a profile hook
    never gets past that check."""
    try:
        if _raise_in(threading.get_ident(), _Dropped):  # (it may land before this call returns)
            while True:
                pass  # the stand-in is raised at the loop's first check
    except _Dropped:
        pass


_watchdog = _Watchdog()


@contextlib.contextmanager
def time_limit(seconds: float | None = None) -> Iterator[None]:
    """Raise :class:`TooLong` in this thread if the block runs longer than ``seconds``
    (default :data:`TIME_LIMIT`)."""
    token = _watchdog.start(TIME_LIMIT if seconds is None else seconds)
    try:
        yield
    finally:
        _watchdog.stop(token)


def stop_all() -> None:
    """Stop every render running now, in any thread (an app that quits): each raises
    :class:`TooLong` at its next step instead of keeping the process alive until its limit."""
    with _watchdog.lock:
        now = time.monotonic()
        for token, tid in _watchdog.active.items():
            if token not in _watchdog.fired:
                _watchdog.fired.add(token)
                _raise_in(tid, TooLong)
                heapq.heappush(_watchdog.heap, (now + _RAISE_AGAIN, token, tid))  # (see _Watchdog._run)
        _watchdog.wake.notify()


__all__ = [
    "MAX_INT_BITS",
    "MAX_TEXT",
    "TIME_LIMIT",
    "TooLong",
    "check_binop",
    "check_size",
    "stop_all",
    "text_limit",
    "time_limit",
]
