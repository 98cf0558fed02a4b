"""Work put off to later turns of the event loop, one piece per turn, so the window paints and
takes input between them.

A tokenizer added with four panels open had every panel follow it in the turn it came, and a
theme change repainted every dock in one turn: each over 50 ms on the GUI thread. Such work is
now split into pieces, and :func:`later` runs one piece per turn, in the order asked; a piece
asked for again before it ran runs once.

>>> later(view.refresh); later(view.refresh)  # doctest: +SKIP
>>> pending()  # until the event loop has run it, once  # doctest: +SKIP
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class _Turns(QObject):
    def __init__(self) -> None:
        super().__init__()
        self._due: dict[Callable[[], object], None] = {}  # in the order asked (a dict: each once)
        self._asked = False  # the event loop has been asked for the next turn

    def add(self, fn: Callable[[], object]) -> None:
        self._due[fn] = None
        self._ask()

    def _ask(self) -> None:
        if self._due and not self._asked:
            self._asked = True
            QTimer.singleShot(0, self, self._next)

    def _next(self) -> None:
        self._asked = False
        if not self._due:
            return
        fn = next(iter(self._due))
        del self._due[fn]
        try:
            fn()
        finally:  # asked after the piece: what it asked of the window (a paint) comes first
            self._ask()


@functools.cache
def _turns() -> _Turns:
    """The one queue (made once a QApplication exists)."""
    return _Turns()


def later(fn: Callable[[], object]) -> None:
    """Call ``fn()`` in a later turn of the event loop, after the pieces asked for before it."""
    _turns().add(fn)


def pending() -> bool:
    """Whether a piece has yet to run."""
    return bool(_turns()._due)
