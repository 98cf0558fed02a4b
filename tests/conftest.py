"""Fixtures shared by the core's and the window's tests."""

from __future__ import annotations

import faulthandler
import sys

import pytest

from bpeinspect.core import pool


@pytest.fixture
def children_given(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The child processes items were given to, one entry per item (spied on the pool)."""
    given: list[object] = []
    real = pool.Child.submit

    def submit(self, *args):
        given.append(self)
        return real(self, *args)

    monkeypatch.setattr(pool.Child, "submit", submit)
    return given


HUNG_AFTER = 900  # seconds: far above the slowest test; the time limit of pytest-timeout is 600


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test stuck where pytest-timeout cannot reach it (its thread never returns to Python,
    or spins without giving its signal handler a turn) prints every thread's stack and ends
    its process, which the test run reports as a crash: the run finishes either way."""
    faulthandler.dump_traceback_later(HUNG_AFTER, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
