import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# PySide6 6.12 on CPython 3.11 leaks references to None on every void call (see
# bpeinspect/gui/_pyside_fix.py); apply the fix before pytest-qt starts calling Qt.
try:
    import bpeinspect.gui  # noqa: F401
except ImportError:  # PySide6 missing: GUI tests are skipped elsewhere
    pass
