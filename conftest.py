"""Set up for every test and doctest: Qt runs headless, and the GUI's doctests get an application.

Qt reads QT_QPA_PLATFORM when the application is made, so it is set here, before collection
imports any module of bpeinspect.gui.
"""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _qt_application_for_gui_doctests(request):
    """A QApplication for the doctests of bpeinspect/gui (widgets need one; tests ask pytest-qt)."""
    if isinstance(request.node, pytest.DoctestItem) and f"{os.sep}gui{os.sep}" in str(request.node.path):
        request.getfixturevalue("qapp")

# Tests parse the files they load: the cache of built tables (core/io/load_cache.py) is off
# but in its own tests, which turn it on with a folder of their own (BPEINSPECT_LOAD_CACHE=1 in the
# environment runs the suite through it, e.g. the conformance suite twice: writing, then reading).
os.environ.setdefault("BPEINSPECT_LOAD_CACHE", "0")
