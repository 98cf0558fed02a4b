"""Work put off to later turns of the event loop, one piece per turn, so the window paints and
takes input between them.

A tokenizer added with four panels open had every panel follow it in the turn it came, and a
theme change repainted every dock in one turn: each over 50 ms on the GUI thread. Such work is
now split into pieces, and :func:`later` runs one piece per turn, in the order asked; a piece
asked for again before it ran runs once.

>>> later(view.refresh); later(view.refresh)  # doctest: +SKIP
>>> pending()  # until the event loop has run it, once  # doctest: +SKIP
True

:func:`painted_in_parts` uses it to paint a window that a change repaints whole in parts, one
per turn: its text, then each dock.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget


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
        owner = getattr(fn, "__self__", None)
        try:
            if not isinstance(owner, QObject) or shiboken6.isValid(owner):  # (not deleted since)
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


class Parts:
    """What :func:`painted_in_parts` paints in later turns."""

    def __init__(self) -> None:
        self.widgets: list[QWidget] = []

    def hold(self, widget: QWidget | None, *, first: bool = False) -> None:
        """Paint ``widget`` in a turn of its own (``first``: before the others), not now."""
        if widget is None:
            return
        if widget in self.widgets:
            self.widgets.remove(widget)
        elif widget.updatesEnabled():
            widget.setUpdatesEnabled(False)
        else:
            return  # held by an earlier change: painted in its turn
        self.widgets.insert(0 if first else len(self.widgets), widget)


@contextlib.contextmanager
def painted_in_parts(window: QMainWindow) -> Iterator[Parts]:
    """Around a change that has Qt repaint the whole ``window`` (a new palette; a dock shown for
    the first time, which had Qt repaint the text and every dock): paint it in parts, one per
    later turn: the text, then each dock on screen (after the part the change asks first:
    :meth:`Parts.hold`). Until its turn a part shows what it showed before. In one turn these
    took 55-90 ms on the GUI thread.

    Each part is painted at once (``repaint``) in its turn: Qt paints what was asked within a few
    ms in one go, so parts merely let repaint in turns of their own were painted together."""
    parts = Parts()
    if window.isVisible():
        parts.hold(window.centralWidget())
        for dock in window.findChildren(QDockWidget):
            on_screen = dock.isVisible() and not dock.visibleRegion().isEmpty()  # (not behind a tab)
            if on_screen and not dock.isFloating():
                parts.hold(dock)
    try:
        yield parts
    finally:
        if parts.widgets:  # from the turn after next: Qt polishes, lays out and raises in the next
            later(functools.partial(_repaint_each_later, parts.widgets))


def _repaint_each_later(widgets: list[QWidget]) -> None:
    for widget in widgets:
        later(functools.partial(_repaint, widget))


def _repaint(widget: QWidget) -> None:
    if shiboken6.isValid(widget):
        widget.setUpdatesEnabled(True)
        widget.repaint()
