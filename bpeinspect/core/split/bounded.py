"""Split patterns with a time limit: a pattern that backtracks catastrophically is stopped.

A pattern from a file or the command line may take exponential time: ``(a|a)+$`` runs for
minutes on 30 characters. Every search through a :class:`BoundedPattern` gets
:func:`limits.split_timeout` seconds for its text and then raises :class:`PatternError`,
saying it was stopped by the time limit. How it is stopped depends on the thread:

* in the main thread (the command line, the GUI's own quick encodes) an interval timer on
  the process's CPU time (``SIGVTALRM``) interrupts the search: the ``regex`` module checks
  for signals as it works, so this costs nothing while it does not fire, and Ctrl-C works
  all the while too;
* in other threads (the GUI's worker) a pattern that can backtrack (:func:`can_backtrack`)
  gets the ``regex`` module's own ``timeout=`` and releases the interpreter lock
  (``concurrent=True``), so the window stays responsive meanwhile. ``timeout=`` makes a
  search about three times slower, so patterns that cannot backtrack run as they are.

>>> p = BoundedPattern(r"\\p{L}+")
>>> p.findall("ab 12 cd"), p.spans("ab 12 cd")
(['ab', 'cd'], [(0, 2), (6, 8)])
>>> can_backtrack(r"(a|a)+$"), can_backtrack(r"(a+)+"), can_backtrack(r" ?\\p{L}+|\\s+(?!\\S)")
(True, True, False)
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import regex

from bpeinspect.core import limits
from bpeinspect.core.errors import PatternError

T = TypeVar("T")


class _Expired(Exception):
    """Raised by the CPU-time signal inside a search in the main thread."""


class _Budget:
    """The main thread's CPU-time limit: armed around a search, disarmed after."""

    armed = False
    handler_installed = False


def _on_timer(signum: int, frame: Any) -> None:
    if _Budget.armed:
        raise _Expired


_MAIN = threading.main_thread()


def _can_use_timer() -> bool:
    if not hasattr(signal, "setitimer") or threading.current_thread() is not _MAIN:
        return False
    if not _Budget.handler_installed:
        if signal.getsignal(signal.SIGVTALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None):
            return False  # someone else's timer: leave it alone
        signal.signal(signal.SIGVTALRM, _on_timer)
        _Budget.handler_installed = True
    return signal.getsignal(signal.SIGVTALRM) is _on_timer


@contextlib.contextmanager
def split_time_limit(n_chars: int, pattern: str = "") -> Iterator[None]:
    """Stop the searches run in the block (in the main thread) once they have taken
    :func:`limits.split_timeout` ``(n_chars)`` seconds of CPU time together; an outer block's
    limit covers inner ones. Elsewhere the block does nothing (each search bounds itself)."""
    if _Budget.armed or not _can_use_timer():
        yield
        return
    budget = limits.split_timeout(n_chars)
    signal.setitimer(signal.ITIMER_VIRTUAL, budget)
    _Budget.armed = True
    try:
        yield
    except _Expired:
        raise PatternError(_stopped(pattern, budget, n_chars)) from None
    finally:
        _Budget.armed = False
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def _stopped(pattern: str, budget: float, n_chars: int) -> str:
    shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
    return (
        f"the split pattern {shown!r} was stopped by bpeinspect's time limit after {budget:.1f} s on {n_chars:,} "
        f"characters: it backtracks catastrophically (a limit of {limits.SPLIT_SECONDS:g} s plus "
        f"{limits.SPLIT_SECONDS_PER_CHAR * 1e6:g} µs per character)"
    )


class BoundedPattern:
    """A compiled ``regex`` pattern whose :meth:`findall` and :meth:`spans` are bounded in
    time; anything else (``groups``, ``finditer``, ...) is the compiled pattern's own."""

    def __init__(self, pattern: str) -> None:
        self.compiled = regex.compile(pattern)
        self.backtracks = can_backtrack(pattern)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)

    def findall(self, text: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        """``regex``'s ``findall``, bounded."""
        end = len(text) if endpos is None else endpos
        if self._free():
            return self.compiled.findall(text, pos, end)
        return self._bounded(lambda **kw: self.compiled.findall(text, pos, end, **kw), end - pos)

    def matches(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterable[Any]:
        """Every match in ``text[pos:endpos]``, bounded: an iterator as ``finditer`` gives
        when no bounding is needed (as fast as a plain search: rules call this per piece),
        else a list, found within the limit."""
        end = len(text) if endpos is None else endpos
        if _Budget.armed or (not self.backtracks and threading.current_thread() is not _MAIN):  # see _free
            return self.compiled.finditer(text, pos, end)
        return self._bounded(lambda **kw: list(self.compiled.finditer(text, pos, end, **kw)), end - pos)

    def spans(self, text: str, pos: int = 0, endpos: int | None = None) -> list[tuple[int, int]]:
        """The spans of every match in ``text[pos:endpos]``, bounded."""
        return [m.span() for m in self.matches(text, pos, endpos)]

    def _free(self) -> bool:
        """True if the search needs no bounding of its own: an outer limit covers it, or it
        runs outside the main thread and cannot backtrack."""
        return _Budget.armed or (not self.backtracks and threading.current_thread() is not _MAIN)

    def _bounded(self, search: Callable[..., T], n_chars: int) -> T:
        if _can_use_timer():
            with split_time_limit(n_chars, self.compiled.pattern):
                return search()
        budget = limits.split_timeout(n_chars)
        try:
            return search(concurrent=True, timeout=budget if self.backtracks else None)
        except TimeoutError:
            raise PatternError(_stopped(self.compiled.pattern, budget, n_chars)) from None


def can_backtrack(pattern: str) -> bool:
    """True if ``pattern`` may take exponential time: a repeated group holds a repetition or
    an alternation (``(a+)+``, ``(a|ab)*``), or it refers back to a group. A cheap look at
    the pattern's text, erring towards yes; no real tokenizer's pattern is one of these."""
    holds = [False]  # per open group: does it hold a repetition or an alternation?
    last_group = False  # the atom just before a quantifier is a group that holds one
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        group = False
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in ("g", "k") or (nxt.isdigit() and nxt != "0"):
                return True  # a back reference
            i += 2
            if nxt in ("p", "P", "N", "x", "u", "U") and pattern[i : i + 1] == "{":
                i = pattern.find("}", i) + 1 or n
        elif c == "[":
            i = _class_end(pattern, i)
        elif c == "(":
            if pattern.startswith("(?P=", i):
                return True
            holds.append(False)
            i += 1
        elif c == ")":
            inner = holds.pop() if len(holds) > 1 else False
            holds[-1] = holds[-1] or inner
            group = inner
            i += 1
        elif c == "|":
            holds[-1] = True
            i += 1
        elif c in "*+?{":
            i, repeats = _quantifier(pattern, i)
            possessive = pattern[i : i + 1] == "+"
            if pattern[i : i + 1] in ("?", "+"):
                i += 1
            if repeats and last_group and not possessive:
                return True
            holds[-1] = holds[-1] or repeats
        else:
            i += 1
        last_group = group
    return False


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that starts at ``pattern[i] == "["``."""
    i += 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    depth = 1
    while i < len(pattern) and depth:
        c = pattern[i]
        if c == "\\":
            i += 1
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        i += 1
    return i


def _quantifier(pattern: str, i: int) -> tuple[int, bool]:
    """The index after the quantifier at ``i`` and whether it repeats (more than once)."""
    c = pattern[i]
    if c != "{":
        return i + 1, c != "?"
    m = regex.match(r"\{(\d*)(,?)(\d*)\}", pattern[i:])
    if m is None:
        return i + 1, False  # a literal "{"
    low, comma, high = m.groups()
    top = int(high) if high else (None if comma else int(low or 0))
    return i + m.end(), top is None or top > 1
