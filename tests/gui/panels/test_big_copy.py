"""Copies of many tokens are built in a worker: the copy's slot returns at once, the token
texts are made off the GUI thread, a big copy shows progress and can be cancelled, and a
copy too big for the clipboard is offered as a file."""

from __future__ import annotations

import json
import threading

from PySide6.QtGui import QGuiApplication

from bpeinspect.core import display_bytes
from bpeinspect.gui.overlay.glyphs import shown
from bpeinspect.gui.panels import big_copy
from bpeinspect.gui.panels.big_copy import IdSnapshot, build_copy
from tests.gui.conftest import wait_idle

TEXT = "The quick brown fox jumps over the lazy dog. 中文 🎉 नमस्ते\n" * 3000  # many segments


def _open(qtbot, win, text: str = TEXT):
    win.open_tokenizer("cl100k_base")
    win.set_text(text)
    wait_idle(qtbot, win)
    tok = win.registry.current()
    view = win.panels.view("tokens")
    n = len(win.registry.result(tok).enc)
    qtbot.waitUntil(lambda: view.model.rowCount() == n, timeout=10000)
    return tok, view


def test_id_snapshot_reads_ranges_across_parts_in_runs():
    snap = IdSnapshot([(0, [1, 2, 3]), (3, [4, 5]), (5, [6, 7, 8, 9])])
    assert len(snap) == 9
    assert [list(r) for r in snap.runs([(2, 7)], size=2)] == [[3], [4, 5], [6, 7]]
    assert [list(r) for r in snap.runs([(6, 8), (0, 1)])] == [[7, 8], [1]]  # out of order too
    assert [x for r in snap.runs(None) for x in r] == list(range(1, 10))
    assert b"".join(build_copy(snap, [(0, 2), (8, 20)], "ids_json", None)) == b"[1, 2, 9]"


def test_copy_text_returns_before_the_copy_and_makes_no_token_text_on_the_gui_thread(qtbot, panel_window, monkeypatch):
    win = panel_window
    tok, view = _open(qtbot, win)
    QGuiApplication.clipboard().setText("before")
    threads = set()
    real = big_copy.display_bytes
    monkeypatch.setattr(big_copy, "display_bytes", lambda b: threads.add(threading.get_ident()) or real(b))
    with qtbot.waitSignal(view.copier.done, timeout=30000) as done:
        view.copy_text()
        assert QGuiApplication.clipboard().text() == "before"  # the slot only started the copy
    assert done.args == ["copied"]
    ids = tok.encode_with_offsets(TEXT).ids
    assert QGuiApplication.clipboard().text() == "\n".join(shown(display_bytes(tok.token_bytes(i))) for i in ids)
    assert threads and threading.get_ident() not in threads


def test_copy_ids_and_json_of_a_selection_of_ranges(qtbot, panel_window):
    win = panel_window
    tok, view = _open(qtbot, win)
    ids = tok.encode_with_offsets(TEXT).ids
    view.table.selectRow(3)
    sel = view.table.selectionModel()
    for r in (4, 5, 9000, 20):
        sel.select(view.model.index(r, 0), sel.SelectionFlag.Select | sel.SelectionFlag.Rows)
    assert view.selected_ranges() == [(3, 6), (20, 21), (9000, 9001)]
    with qtbot.waitSignal(view.copier.done, timeout=30000):
        view.copy_ids()
    assert QGuiApplication.clipboard().text() == ", ".join(str(ids[r]) for r in (3, 4, 5, 20, 9000))
    with qtbot.waitSignal(view.copier.done, timeout=30000):
        view.copy_pairs()
    pairs = json.loads(QGuiApplication.clipboard().text())
    assert [p["id"] for p in pairs] == [ids[r] for r in (3, 4, 5, 20, 9000)]


def test_edit_copy_token_ids_as_json_returns_before_the_copy(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text(TEXT)
    wait_idle(qtbot, window)
    QGuiApplication.clipboard().setText("before")
    with qtbot.waitSignal(window.ids.copier.done, timeout=30000):
        window.commands["edit.copy_ids_json"].trigger()
        assert QGuiApplication.clipboard().text() == "before"
    assert json.loads(QGuiApplication.clipboard().text()) == window.registry.current().encode(TEXT)


def test_a_big_copy_shows_progress_and_cancel_stops_its_worker(qtbot, panel_window, monkeypatch):
    win = panel_window
    _tok, view = _open(qtbot, win)
    monkeypatch.setattr(big_copy, "PROGRESS_ROWS", 100)
    monkeypatch.setattr(big_copy, "CHUNK", 16)  # many steps, each a chance to stop
    gate, made = threading.Event(), []
    real = big_copy._pair

    def pair(tok, token_id):  # the worker waits at its 100th token until the test has cancelled
        made.append(token_id)
        if len(made) == 100:
            gate.wait(30)
        return real(tok, token_id)

    monkeypatch.setattr(big_copy, "_pair", pair)
    QGuiApplication.clipboard().setText("before")
    with qtbot.waitSignal(view.copier.done, timeout=30000) as done:
        view.copy_pairs()
        dialog = view.copier.dialog
        assert dialog is not None and "Copying" in dialog.labelText()
        qtbot.waitUntil(lambda: dialog.value() > 0, timeout=30000)  # progress arrived
        dialog.canceled.emit()  # its Cancel button
    gate.set()
    qtbot.waitUntil(lambda: not view.copier.jobs.is_busy(), timeout=30000)
    assert done.args == ["cancelled"] and len(made) <= 100 + 16  # stopped at the next step
    assert view.copier.dialog is None and QGuiApplication.clipboard().text() == "before"


def test_a_copy_too_big_for_the_clipboard_is_saved_to_a_file_when_asked(qtbot, panel_window, monkeypatch, tmp_path):
    win = panel_window
    tok, view = _open(qtbot, win)
    monkeypatch.setattr(big_copy, "CLIPBOARD_LIMIT", 1000)
    QGuiApplication.clipboard().setText("before")
    asked = []
    target = tmp_path / "tokens.txt"
    view.copier.ask_save = lambda size: asked.append(size) or str(target)
    with qtbot.waitSignal(view.copier.done, timeout=30000) as done:
        view.copy_ids()
    assert done.args == ["saved"]
    want = ", ".join(map(str, tok.encode_with_offsets(TEXT).ids))
    assert target.read_text(encoding="utf-8") == want and asked == [len(want)]
    assert QGuiApplication.clipboard().text() == "before"
    assert "Saved" in win.message.text()
    view.copier.ask_save = lambda size: ""  # declined: nothing is copied nor saved
    with qtbot.waitSignal(view.copier.done, timeout=30000) as done:
        view.copy_text()
    assert done.args == ["declined"] and QGuiApplication.clipboard().text() == "before"
