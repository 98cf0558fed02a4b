"""The About box: what bpeinspect is, and the versions a bug report needs.

>>> sorted(versions())
['Platform', 'PySide6', 'Python', 'Qt', 'bpeinspect']
"""

from __future__ import annotations

import platform
import sys

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from bpeinspect import __version__


def versions() -> dict[str, str]:
    """bpeinspect's, Qt's, PySide6's and Python's versions, and the platform."""
    frozen = " (frozen app)" if getattr(sys, "frozen", False) else ""
    return {
        "bpeinspect": __version__ + frozen,
        "Qt": qVersion(),
        "PySide6": PYSIDE_VERSION,
        "Python": f"{platform.python_version()} ({platform.python_implementation()})",
        "Platform": platform.platform(terse=True),
    }


class AboutDialog(QDialog):
    """bpeinspect's About box (not modal: the window stays usable)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About bpeinspect")
        rows = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;{v}</td></tr>" for k, v in versions().items())
        self.label = QLabel(
            "<h3>bpeinspect</h3><p>A desktop inspector for byte-level BPE tokenizers:<br>"
            "token overlays, merge trees, training and comparisons.</p>"
            f"<table>{rows}</table>"
        )
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)

    def text(self) -> str:
        """The plain text shown (for tests and "copy to clipboard")."""
        return "\n".join(f"{k}: {v}" for k, v in versions().items())
