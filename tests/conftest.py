"""Fixtures shared by the core's and the window's tests."""

from __future__ import annotations

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
