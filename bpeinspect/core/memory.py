"""Keep the cyclic garbage collector out of the way while big objects are built.

>>> with quiet_gc():
...     table = [(i, i) for i in range(10)]
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

# From this many characters an encode keeps the collector waiting: the new pre-token cache
# entries of a cold encode set off collections that walk its big young lists (pre-tokens,
# ids) again and again, 5-10 % of its time.
QUIET_CHARS = 1 << 15

_gc_lock = threading.Lock()
_gc_pausers = [0]  # callers inside quiet_gc, on any thread
_gc_freeze = [False]  # whether one of them asked for the new objects to be frozen
_gc_was_on = [True]  # whether the collector ran when the first of them came in
# Whether quiet_gc has frozen objects since the last thaw(). Kept here because asking the
# collector (gc.get_freeze_count) walks every frozen object with the interpreter held, on
# every count and every long encode, once a big encoding was frozen.
_gc_frozen = [False]
# Whether quiet_gc may freeze objects for good (gc.freeze is process-wide: it moves the caller's
# objects out of the collector's reach too). Off in library use; the app and the CLI, which own
# their process, turn it on with allow_gc_freeze().
_freeze_allowed = [False]


def allow_gc_freeze(allowed: bool = True) -> None:
    """Let :func:`quiet_gc` freeze the objects a big encoding or a training run built, so that
    later collections skip them. Process-wide: only a program that owns its process (the app,
    the CLI) turns it on. Off, a library call leaves the collector as it found it."""
    _freeze_allowed[0] = allowed


@contextlib.contextmanager
def quiet_gc(freeze: bool = True) -> Iterator[None]:
    """Keep the cyclic garbage collector from running while a big encoding is built.

    Building a million-token encoding allocates millions of tuples, which sets off full
    collections; each walks the whole heap while holding the interpreter (with every
    other thread locked out). Encodings hold no cycles, so collection can wait; at the
    end the new objects are frozen (``gc.freeze``) so that later collections skip them
    (the first collection after a long pause would otherwise scan them all).
    Refcounting still frees them when they are dropped, which is why the core keeps its
    long-lived objects free of reference cycles (a tokenizer and its merge graph).

    ``freeze=False`` (loading a vocabulary, which any caller may do many times) leaves the new
    objects to the collector: nothing is moved out of its reach for good. Nested inside a
    freezing ``quiet_gc``, the outer one still freezes at its end. Unless the program turned
    freezing on (:func:`allow_gc_freeze`), ``freeze=True`` acts as ``freeze=False``.
    """
    with _gc_lock:
        if _gc_pausers[0] == 0:
            _gc_was_on[0] = gc.isenabled()  # a collector that the caller had turned off stays off
        _gc_pausers[0] += 1
        _gc_freeze[0] = _gc_freeze[0] or (freeze and _freeze_allowed[0])
        gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers[0] -= 1
            if _gc_pausers[0] == 0:
                if _gc_freeze[0]:
                    gc.freeze()
                    _gc_frozen[0] = True
                elif not _gc_frozen[0] and (_freeze_allowed[0] or gc.get_freeze_count() == 0):
                    _to_oldest_generation()  # never thaws objects that the caller froze
                _gc_freeze[0] = False
                if _gc_was_on[0]:
                    gc.enable()


def _to_oldest_generation() -> None:
    """Move every object the collector tracks into its oldest generation, at no cost.

    While collection was held off, the youngest generation's count of allocations kept
    growing: the first allocation after ``gc.enable()`` would set off a collection of every
    object made meanwhile (a large vocabulary's million merge tuples: a good part of its
    load). ``freeze`` then ``unfreeze`` moves them all to the oldest generation in one list
    splice and resets that count, so they are left to the (rare) full collections, like any
    long-lived object. Used only when nothing else is frozen, which ``unfreeze`` would release.
    """
    gc.freeze()
    gc.unfreeze()


def thaw() -> None:
    """Hand every frozen object back to the collector (``gc.unfreeze``), and say so to
    :func:`quiet_gc`; the project never calls ``gc.freeze``/``gc.unfreeze`` directly."""
    with _gc_lock:
        gc.unfreeze()
        _gc_frozen[0] = False
