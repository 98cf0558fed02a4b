"""The vocabulary's sorts, the compare tab on a big text, loading two big vocabularies and typing
while the merge tree links a new one never freeze the window.

The work runs in workers that share the interpreter lock with the GUI thread: their own long
holds (a full collection walking big structures, a long C call) and the GUI's own bursts of
work next to a busy worker are what these probes catch (a 5 ms probe timer on the GUI thread
records the longest gap between its ticks; best of three runs, as in test_responsiveness).
"""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from benchmarks.stalls.test_window import StallProbe, best_of_attempts, require_quiet_machine
from bpeinspect.core import load_tokenizer
from bpeinspect.core.io import builtins as catalog
from bpeinspect.gui.concurrency import all_idle
from bpeinspect.gui.panels.compare import MARK
from bpeinspect.gui.panels.specs import PANELS
from bpeinspect.gui.panels.vocabulary_model import COL_ID, COL_LEN, COL_SCRIPT
from tests.gui.conftest import _window, wait_idle

MB = 1_000_000


@pytest.fixture
def win(qtbot, settings):
    """The window with every panel (its jobs ended at teardown). Small, as in test_responsiveness:
    the probe is about the workers, and our own painting (benchmarks/latency.py measures the
    window at its full size) would dominate the gaps on a loaded machine."""
    for w in _window(qtbot, settings, PANELS):
        w.resize(900, 560)
        yield w


def _settled(qtbot, win) -> None:
    """Wait until the docks have followed the current tokenizer (a turn each) and no worker
    runs (what a dock just shown started): the probe measures what the test does next."""
    qtbot.waitUntil(lambda: not win.panels.inspector.pending(), timeout=10000)
    qtbot.waitUntil(all_idle, timeout=120000)


def _quiet_enough(qtbot, win) -> None:
    """Skip on a machine with more runnable processes than cores (as the Languages stall test
    does): 200k-token sorts and 1 MB encodes next to a full test suite on each core measure the
    scheduler (the length sort failed two landings so, while 23-25 ms on the quiet machine)."""
    _settled(qtbot, win)
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        pytest.skip(f"the machine is too busy to measure stalls (load average {load:.1f})")
    require_quiet_machine(qtbot)


def _open(qtbot, win, *names: str) -> None:
    for name in names:
        win.open_tokenizer(name)
    qtbot.waitUntil(lambda: len(win.registry) == len(names), timeout=120000)
    wait_idle(qtbot, win, timeout=120000)


def _text(size: int) -> str:
    """About ``size`` bytes of mixed text (a few scripts, emoji, code)."""
    line = "The quick brown fox jumps over the lazy dog — Grüße, Привет, 日本語 😀 1234.\ndef f(x):\n    return x * 2\n"
    text = line * (size // len(line.encode("utf-8")) + 1)
    return text[: len(text) * size // len(text.encode("utf-8"))]


@pytest.mark.slow
@pytest.mark.parametrize("column", [COL_LEN, COL_SCRIPT], ids=["length", "script"])
def test_sorting_the_vocabulary_does_not_stall(qtbot, win, column):
    _open(qtbot, win, "o200k_base")
    tok = win.registry.tokenizers()[0]
    view = win.panels.view("vocab")
    win.panels.docks["vocab"].raise_()
    done = lambda: not view.busy and not view.debounce.isActive()  # noqa: E731
    _quiet_enough(qtbot, win)

    def attempt(_: int) -> StallProbe:
        view.table.sortByColumn(COL_ID, Qt.SortOrder.AscendingOrder)
        qtbot.waitUntil(done, timeout=60000)
        view.set_tokenizer(tok)  # a new index: the column's order is worked out anew
        wait_idle(qtbot, win, timeout=60000)
        with StallProbe() as probe:
            view.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
            qtbot.waitUntil(done, timeout=60000)
            qtbot.wait(300)  # and past it: a sort done in ~130 ms gave the probe under 20 ticks
        rows = view.model.rows()
        assert len(rows) == len(tok)
        if column == COL_LEN:
            lengths = [len(tok.token_bytes(i)) for i in rows]
            assert lengths == sorted(lengths)
        else:
            names = ["+".join(view.index_.scripts(i)) for i in rows]
            assert names == sorted(names)
        return probe

    best_of_attempts(attempt)


@pytest.mark.slow
def test_the_compare_tab_on_1mb_does_not_stall(qtbot, win):
    _open(qtbot, win, "o200k_base", "cl100k_base")
    view = win.panels.view("compare")
    text = _text(MB)
    _quiet_enough(qtbot, win)

    def attempt(number: int) -> StallProbe:
        win.panels.docks["tree"].raise_()  # the compare tab hidden: it waits to be shown
        win.set_text(text + f"attempt {number}\n")
        wait_idle(qtbot, win, timeout=120000)
        _settled(qtbot, win)  # (the tree shown follows the current tokenizer)
        with StallProbe() as probe:
            win.panels.docks["compare"].raise_()
            qtbot.waitUntil(lambda: view.result is not None and not view.busy, timeout=120000)
            qtbot.wait(200)  # reading the window's encodings is quick: what follows it counts too
        toks = win.registry.tokenizers()
        assert [r.tokens for r in view.rows] == [len(t.encode_ordinary(view.text)) for t in toks]
        for section in view.sections[:2]:  # the sections' documents, made by the worker, are shown
            assert section.browser.toPlainText().replace(MARK, "").startswith("The quick brown fox")
        return probe

    best_of_attempts(attempt)


@pytest.mark.slow
def test_loading_o200k_and_cl100k_together_does_not_stall(qtbot, win):
    win.set_text(_text(100_000))
    wait_idle(qtbot, win, timeout=60000)
    _quiet_enough(qtbot, win)

    def attempt(_: int) -> StallProbe:
        for tok in win.registry.tokenizers():
            win.registry.remove(tok)
        wait_idle(qtbot, win, timeout=60000)
        with StallProbe() as probe:
            _open_fresh_builtins(qtbot, win)
        return probe

    try:
        best_of_attempts(attempt)
    finally:
        _restore_builtins()


@pytest.mark.slow
def test_typing_while_the_merge_tree_links_new_vocabularies_does_not_stall(qtbot, win):
    """Keystrokes in 100 KB right after o200k and cl100k were loaded, while the merge tree's
    worker links the new vocabulary's tokens (its children index was one loop of 100 ms
    without a check, so the GUI thread waited for the interpreter lock: 70 ms stalls). The
    linking is background work: it waits while the user types, and ends once the typing stops."""
    win.set_text(_text(100_000))
    wait_idle(qtbot, win, timeout=60000)
    win.panels.docks["tree"].raise_()
    tree = win.panels.view("tree")
    _quiet_enough(qtbot, win)

    def attempt(_: int) -> StallProbe:
        for tok in win.registry.tokenizers():
            win.registry.remove(tok)
        wait_idle(qtbot, win, timeout=60000)
        qtbot.waitUntil(lambda: not tree.jobs.is_busy(), timeout=60000)
        _open_fresh_builtins(qtbot, win)  # new tokenizers: their merge graphs are linked anew
        view = win.panes.panes()[0].view
        view.setFocus()
        cur = view.textCursor()
        cur.setPosition(view.document().characterCount() // 2)
        cur.movePosition(QTextCursor.MoveOperation.EndOfLine)
        view.setTextCursor(cur)
        assert tree.jobs.pending("link")  # the typing overlaps the linking
        keys = 0
        with StallProbe() as probe:
            while keys < 60:
                QTest.keyClick(view, Qt.Key.Key_X)
                keys += 1
                wait_idle(qtbot, win, timeout=60000)
                qtbot.wait(20)
            assert tree.jobs.pending("link")  # it waits for the typing to pause
            qtbot.waitUntil(lambda: not tree.jobs.pending("link"), timeout=60000)
        assert tree.up.ready
        assert win.text().count("x" * keys) == 1
        return probe

    try:
        best_of_attempts(attempt)
    finally:
        _restore_builtins()


def _open_fresh_builtins(qtbot, win) -> None:
    """Open o200k and cl100k built anew (not the cached ones) and wait until they are in."""
    catalog.forget_builtins()
    for name in ("o200k_base", "cl100k_base"):
        win.open_tokenizer(name)
    qtbot.waitUntil(lambda: len(win.registry) == 2, timeout=120000)
    wait_idle(qtbot, win, timeout=120000)


def _restore_builtins() -> None:
    """Leave the built-ins cached again for the tests that follow."""
    catalog.forget_builtins()
    for name in ("o200k_base", "cl100k_base"):
        load_tokenizer(name)
