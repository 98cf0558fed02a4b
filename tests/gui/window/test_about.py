"""The About box: what a bug report needs, shown and copyable."""

from __future__ import annotations

import platform
import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion

from bpeinspect import __version__
from bpeinspect.gui.window.about import AboutDialog, versions


def test_versions_are_the_running_ones():
    found = versions()
    assert found["bpeinspect"] == __version__
    assert found["Qt"] == qVersion()
    assert found["PySide6"] == pyside_version
    assert found["Python"].startswith(platform.python_version())


def test_a_frozen_app_says_so(monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert versions()["bpeinspect"] == f"{__version__} (frozen app)"


def test_the_box_shows_every_version_and_its_text_lists_them(qtbot):
    box = AboutDialog()
    qtbot.addWidget(box)
    assert not box.isModal()
    shown = box.label.text()
    lines = box.text().splitlines()
    assert [line.split(":")[0] for line in lines] == list(versions())
    for value in versions().values():
        assert value in shown
