"""What the C calls of a piece of code work on: the size of each call's receiver (a set's
``intersection``, an array's ``tolist``), recorded on the calling thread.

A C call that does not release the interpreter lock (a set operation, a conversion between
Python objects and arrays) holds every other thread as long as it runs, the GUI thread too:
code that a worker runs next to the window cuts such calls into slices. The tests check the
sizes, not times::

    calls = receiver_sizes(lambda: compare_vocabularies(pairs), "vocab_diff.py")
    assert max(size for name, size in calls if name == "intersection") <= SLICE
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def receiver_sizes(fn: Callable[[], Any], *files: str) -> list[tuple[str, int]]:
    """``(name, len(receiver))`` of every C method call that code of ``files`` (file names)
    makes while ``fn()`` runs."""
    got: list[tuple[str, int]] = []
    names = set(files)

    def profile(frame, event: str, arg) -> None:
        if event != "c_call" or Path(frame.f_code.co_filename).name not in names:
            return
        receiver = getattr(arg, "__self__", None)
        try:
            size = len(receiver)  # type: ignore[arg-type]
        except TypeError:
            return
        got.append((getattr(arg, "__name__", "?"), size))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return got
