"""Workers: results on the GUI thread, errors as signals, newer jobs supersede older ones."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QThread

from bpeinspect.core import Cancelled
from bpeinspect.gui.concurrency import TaskRunner


def test_result_arrives_on_gui_thread(qtbot):
    runner = TaskRunner()
    got = []
    threads = []

    def work(stop):
        threads.append(threading.get_ident())
        return 42

    runner.submit("k", work, lambda v: got.append((v, QThread.currentThread())))
    qtbot.waitUntil(lambda: bool(got) and not runner.is_busy(), timeout=5000)
    assert got[0][0] == 42
    assert got[0][1] is qtbot_thread()
    assert threads[0] != threading.get_ident()


def qtbot_thread():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance().thread()


def test_errors_are_reported_not_raised(qtbot):
    runner = TaskRunner()
    errors = []
    runner.submit("k", lambda stop: 1 / 0, None, errors.append)
    qtbot.waitUntil(lambda: bool(errors) and not runner.is_busy(), timeout=5000)
    assert isinstance(errors[0], ZeroDivisionError)


def test_newer_job_supersedes_and_cancels_older(qtbot):
    runner = TaskRunner()
    results, stopped = [], []
    started = threading.Event()

    def slow(stop):
        started.set()
        while not stop():
            time.sleep(0.002)
        stopped.append(True)
        raise Cancelled()

    runner.submit("enc", slow, results.append)
    assert started.wait(5)
    runner.submit("enc", lambda stop: "new", results.append)
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=5000)
    assert results == ["new"]
    assert stopped == [True]


def test_stale_result_is_dropped(qtbot):
    runner = TaskRunner()
    results = []
    gate = threading.Event()

    def old(stop):
        gate.wait(5)
        return "old"  # ignores stop: its result must still be dropped

    runner.submit("enc", old, results.append)
    runner.submit("enc", lambda stop: "new", results.append)
    gate.set()
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=5000)
    assert results == ["new"]


def test_cancel_all(qtbot):
    runner = TaskRunner()
    results = []
    runner.submit("a", lambda stop: (time.sleep(0.05), "a")[1], results.append)
    runner.cancel_all()
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=5000)
    assert results == []


def test_release_encoding_empties_lists(cl100k):
    from bpeinspect.gui.concurrency import release_encoding

    enc = cl100k.encode_with_offsets("some text " * 10_000)
    n = len(enc.ids)
    assert release_encoding(enc, step=1000, budget=3)  # something left after three slices
    assert len(enc.ids) == n - 3000
    assert not release_encoding(enc, step=1000)
    assert enc.ids == [] and enc.piece_spans == []


def test_progress_reaches_the_gui_thread(qtbot):
    from bpeinspect.gui.concurrency import report_progress

    runner = TaskRunner()
    seen, results = [], []

    def work(stop):
        report_progress("half")
        return "all"

    runner.submit("k", work, results.append, None, lambda v: seen.append((v, QThread.currentThread())))
    qtbot.waitUntil(lambda: bool(results) and not runner.is_busy(), timeout=5000)
    assert seen and seen[0][0] == "half" and seen[0][1] is qtbot_thread()
    report_progress("outside a job: ignored")


def test_lost_signals_are_delivered_by_the_reaper(qtbot):
    runner = TaskRunner()
    results = []
    go = threading.Event()
    job = runner.submit("k", lambda stop: (go.wait(5), 7)[1], results.append)
    job.signals.result.disconnect()  # simulate signals that never arrive
    job.signals.finished.disconnect()
    go.set()
    qtbot.waitUntil(lambda: not runner.is_busy(), timeout=5000)
    assert job.state == "done" and job.finished_seen
    assert results == [7]
    runner._on_result(job, 7)  # a late signal is not delivered twice
    assert results == [7]
