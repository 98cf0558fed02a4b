"""Keep PySide6 6.12 from deallocating ``None`` on CPython 3.11.

PySide6 6.12's generated bindings return ``None`` from every void method without taking a
reference (harmless from CPython 3.12 on, where ``None`` is immortal). On 3.11 each call
such as ``painter.setBrush(...)`` or ``widget.update()`` drops None's reference count by
one, and after some ten thousand calls the interpreter aborts with "none_dealloc". We
detect the leak at import and, only then, give ``None`` a reference count no program can
exhaust, which is what CPython 3.12 does for it anyway.

>>> import sys
>>> apply() in (True, False)
True
"""

from __future__ import annotations

import ctypes
import sys

_state = {"applied": False}


def leaks_none() -> bool:
    """True if a void PySide6 call drops a reference to ``None``."""
    if sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject

    obj = QObject()
    before = sys.getrefcount(None)
    for _ in range(64):
        obj.setObjectName("probe")
    return sys.getrefcount(None) <= before - 32


def apply() -> bool:
    """Make ``None`` effectively immortal if this PySide6 needs it; returns whether it did."""
    if _state["applied"]:
        return True
    if not leaks_none():
        return False
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
    _state["applied"] = True
    return True
