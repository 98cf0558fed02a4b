"""The main window: tokenizers, live encoding, selection, ids, errors, export, panels."""

from __future__ import annotations

import json
import os
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QLabel

from bpeinspect.core import load_tokenizer
from bpeinspect.gui.window import files as files_module
from tests.gui.conftest import wait_idle, wait_jobs


def test_stacked_tokenizers_encode_the_text(qtbot, window):
    window.open_tokenizer("o200k_base")
    window.open_tokenizer("cl100k_base")
    window.set_text("Hello wörld 🎉\nzweite Zeile")
    wait_idle(qtbot, window)
    assert [p.tok.name for p in window.panes.panes()] == ["o200k_base", "cl100k_base"]
    assert [window.toolbar.picker.itemText(i) for i in range(2)] == ["o200k_base", "cl100k_base"]
    for pane in window.panes.panes():
        assert pane.view.enc.ids == pane.tok.encode(window.text(), allowed_special="all")
        assert f"{len(pane.view.enc.ids):,} tokens" in pane.count.text()
    assert window.registry.current().name == "o200k_base"
    lower = window.panes.panes()[1]
    assert "% vs o200k_base" in lower.count.text()
    status = window.status_line.text()
    assert "tokens" in status and "bytes/token" in status and "chars/token" in status and "ms" in status


def type_at(qtbot, window, position: int, text: str) -> None:
    """Type ``text`` into the window's document at ``position``, a key at a time."""
    cur = QTextCursor(window.document)
    cur.setPosition(position)
    for ch in text:
        cur.insertText(ch)
        qtbot.wait(1)


def test_typing_reencodes_incrementally_and_exactly(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("first line\n" * 3000)
    wait_idle(qtbot, window)
    pane = window.panes.panes()[0]
    type_at(qtbot, window, 15000, "typed text, 日本 😀")
    wait_idle(qtbot, window)
    text = window.text()
    assert pane.view.enc.text == text
    full = pane.tok.encode_with_offsets(text)
    assert pane.view.enc.ids == full.ids
    assert list(pane.view.enc.utf16_starts) == list(full.utf16_starts)
    assert window.encoder.last.mode == "segment"


@pytest.mark.parametrize("lines", [20, 5000])  # encoded right away, or by a worker
def test_typing_with_a_tokenizer_that_cannot_be_cut_encodes_the_whole_text(qtbot, window, lines):
    from bpeinspect.core import Tokenizer

    base = load_tokenizer("r50k_base")
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*", name="custom")
    window.registry.add(custom, "custom")
    window.set_text("first line\n" * lines)
    wait_idle(qtbot, window)
    type_at(qtbot, window, 25, "typed, 日本 😀")
    wait_idle(qtbot, window)
    live = window.registry.result(custom).enc
    assert not live.cutting and live.n_parts() == 1
    assert live.ids == custom.encode(window.text(), allowed_special="all")


def test_bad_tokenizer_file_is_a_message_and_keeps_the_text(qtbot, window, tmp_path):
    window.set_text("precious words")
    bad = tmp_path / "broken.tiktoken"
    bad.write_bytes(b"\x00\x01 not a vocabulary")
    window.open_tokenizer(str(bad))
    window.open_tokenizer("no-such-tokenizer")
    wait_idle(qtbot, window)
    assert window.message.isVisible()
    assert "no-such-tokenizer" in window.message.text()
    assert window.text() == "precious words"
    assert len(window.registry) == 0


def test_bad_text_file_is_a_message(qtbot, window, tmp_path):
    window.set_text("keep me")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    window.open_text_file(str(bad))
    qtbot.waitUntil(window.message.isVisible, timeout=5000)
    assert "not UTF-8" in window.message.text()
    assert window.text() == "keep me"
    good = tmp_path / "ok.txt"
    good.write_text("hello there", encoding="utf-8")
    window.open_text_file(str(good))
    qtbot.waitUntil(lambda: window.text() == "hello there", timeout=5000)


def test_click_selects_everywhere_and_emits_signals(qtbot, window):
    window.open_tokenizer("o200k_base")
    window.open_tokenizer("r50k_base")
    window.set_text("the tokenizer inspector")
    wait_idle(qtbot, window)
    o200k = window.registry.find("o200k_base")
    tokens, pieces = [], []
    window.tokenActivated.connect(lambda t, i: tokens.append((t, i)))
    window.pieceActivated.connect(lambda t, p: pieces.append((t, p)))
    window.select_token(o200k, 1)
    enc = window.registry.result(o200k).enc
    assert tokens == [(o200k, enc.ids[1])]
    assert pieces == [(o200k, " tokenizer")]
    r50k_pane = window.panes.pane_of(window.registry.find("r50k_base"))
    sel = r50k_pane.view.selected
    assert (
        sel is not None
        and r50k_pane.view.enc.utf16_starts[sel] <= enc.utf16_starts[1] < r50k_pane.view.enc.utf16_ends[sel]
    )
    assert window.ids.view.selected == 1


def test_copy_ids(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("hello world")
    wait_idle(qtbot, window)
    with qtbot.waitSignal(window.ids.copier.done, timeout=10000):
        window.commands["edit.copy_ids_json"].trigger()
    assert json.loads(QGuiApplication.clipboard().text()) == [15339, 1917]
    with qtbot.waitSignal(window.ids.copier.done, timeout=10000):
        window.commands["edit.copy_ids"].trigger()
    assert QGuiApplication.clipboard().text() == "15339, 1917"


def test_registry_signals_and_close(qtbot, window):
    added, removed = [], []
    window.registry.added.connect(added.append)
    window.registry.removed.connect(removed.append)
    window.open_tokenizer("r50k_base")
    wait_idle(qtbot, window)
    tok = window.registry.current()
    assert added == [tok] and tok.name == "r50k_base"
    window.registry.remove(tok)
    assert removed == [tok] and window.registry.current() is None and not window.panes.panes()


def test_export_html_and_png(qtbot, window, tmp_path, monkeypatch):
    window.open_tokenizer("cl100k_base")
    window.set_text("a <b> & 🎉")
    wait_idle(qtbot, window)
    html_path = tmp_path / "o.html"
    window.files.export_html(str(html_path))
    wait_jobs(qtbot, window.jobs, 5000)
    assert html_path.exists()
    page = html_path.read_text(encoding="utf-8")
    assert (
        "&lt;" in page
        and "<b>" not in page
        and "&amp;" in page
        and "🎉" in page
        and "cl100k_base" in page
        and "�" not in page
    )
    png = tmp_path / "o.png"
    png.write_bytes(b"an older picture")
    os.link(png, tmp_path / "backup.png")  # another name for the old file: a save replaces it, never writes into it
    gui, writers = threading.get_ident(), []
    real = files_module.save_png

    def save_png(picture, path):
        writers.append(threading.get_ident())
        return real(picture, path)

    monkeypatch.setattr(files_module, "save_png", save_png)
    assert window.files.export_png(str(png))
    wait_jobs(qtbot, window.jobs)
    assert writers and gui not in writers  # compressed and written on the worker
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "backup.png").read_bytes() == b"an older picture"
    assert sorted(os.listdir(tmp_path)) == ["backup.png", "o.html", "o.png"]


def test_add_panel_docks_a_widget(window):
    label = QLabel("vocabulary")
    dock = window.add_panel("Vocabulary", label, Qt.DockWidgetArea.LeftDockWidgetArea)
    assert dock.widget() is label
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert dock.toggleViewAction() in window.commands.menu("view/panels").actions()


def test_layers_palette_zoom_dark(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("x y\tz")
    wait_idle(qtbot, window)
    window.commands["view.layer.ids"].setChecked(True)
    window.commands["view.layer.boundaries"].setChecked(True)
    pane = window.panes.panes()[0]
    assert pane.view.layers.ids and pane.view.layers.boundaries
    size = window.appearance.text_size
    window.commands["view.zoom_in"].trigger()
    assert window.appearance.text_size == size + 1
    assert window.document.defaultFont().pointSizeF() == pytest.approx(size + 1)
    ranges = window.document.firstBlock().layout().formats()  # inline ids: room below the text
    assert ranges[0].format.fontPointSize() == pytest.approx((size + 1) * 1.5)
    window.commands["view.layer.ids"].setChecked(False)
    assert window.document.defaultFont().pointSizeF() == pytest.approx(size + 1)
    window.commands["view.palette.colour-blind safe"].trigger()
    window.commands["view.dark"].setChecked(True)
    assert pane.view.palette_.dark and pane.view.palette_.name == "colour-blind safe"
    assert window.ids.view.palette_ is pane.view.palette_
    window.commands["view.dark"].setChecked(False)
    assert not pane.view.palette_.dark
    assert not window.grab().isNull()


def test_recent_tokenizers_are_remembered(settings, tmp_path):
    from bpeinspect.core.io.discover import recent_files
    from bpeinspect.gui.window.settings import Preferences

    a, b = tmp_path / "a.tiktoken", tmp_path / "b.tiktoken"
    for p in (a, b):
        p.write_text("x")
    prefs = Preferences(settings)
    for path in (a, b, a):
        prefs.remember_tokenizer(str(path))
    assert prefs.recent_tokenizers() == [str(a), str(b)]
    # one list: the app's is the core's, which the CLI's `list` shows
    assert [e.spec for e in recent_files()] == [str(a), str(b)]
    c = tmp_path / "c.tiktoken"  # a list an older version kept in its own settings joins it
    c.write_text("x")
    settings.setValue("recent_tokenizers", [str(c)])
    assert prefs.recent_tokenizers() == [str(c), str(a), str(b)] and settings.value("recent_tokenizers") is None


def test_same_tokenizer_twice_opens_once(qtbot, window):
    window.open_tokenizer("gpt2")
    window.open_tokenizer("gpt2")
    wait_idle(qtbot, window)
    assert len(window.registry) == 1
    assert window.registry.current() is load_tokenizer("gpt2")


def test_cached_text_matches_what_qt_holds(window):
    tricky = "a\r\nb\rc\u2029d\u2028e\u00a0f\x00g\x0ch\ufeffi 😀\t\n"
    window.set_text(tricky)
    cached = window.text()
    window.live._text_cache = None
    assert window.text() == cached


def test_inline_ids_make_room_and_keep_text_size(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("hello world\nsecond line")
    wait_idle(qtbot, window)
    pane = window.panes.panes()[0]
    block = window.document.firstBlock()
    plain_height = block.layout().lineAt(0).height()
    plain_x = block.layout().lineAt(0).cursorToX(5)[0]
    window.commands["view.layer.ids"].setChecked(True)
    qtbot.wait(10)
    line = window.document.firstBlock().layout().lineAt(0)
    assert line.height() > plain_height * 1.3  # room below the text for the ids
    assert abs(line.cursorToX(5)[0] - plain_x) < 1.0  # the text itself is not bigger
    assert not pane.view.viewport().grab().isNull()
    window.commands["view.layer.ids"].setChecked(False)
    qtbot.wait(10)
    assert abs(window.document.firstBlock().layout().lineAt(0).height() - plain_height) < 0.5
    assert window.text() == "hello world\nsecond line"


def test_drop_text_and_vocab_files(qtbot, window, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    text = tmp_path / "dropped.txt"
    text.write_text("dropped words", encoding="utf-8")
    vocab = tmp_path / "dropped.tiktoken"
    vocab.write_bytes(b"not really")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(text)), QUrl.fromLocalFile(str(vocab))])
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.text() == "dropped words", timeout=5000)
    qtbot.waitUntil(window.message.isVisible, timeout=5000)
    assert "dropped.tiktoken" in window.message.text()


def test_picker_lists_open_tokenizers_and_switches_current(qtbot, window):
    window.open_tokenizer("o200k_base")
    window.open_tokenizer("r50k_base")
    window.set_text("picker")
    wait_idle(qtbot, window)
    picker = window.toolbar.picker
    assert picker.model() is window.registry
    names = [picker.itemText(i) for i in range(picker.count())]
    assert names == ["o200k_base", "r50k_base"] and picker.currentText() == "o200k_base"
    r50k = window.registry.find("r50k_base")
    picker.activated.emit(names.index("r50k_base"))  # what a click on the entry does
    assert window.registry.current() is r50k and picker.currentText() == "r50k_base"
    assert "r50k_base" in window.ids.title.text()
    window.registry.remove(r50k)  # the picker goes back to the one left
    assert picker.count() == 1 and picker.currentText() == "o200k_base"
    window.toolbar.add_menu.aboutToShow.emit()
    labels = [a.text() for a in window.toolbar.add_menu.actions()]
    assert any(t.startswith("cl100k_base") for t in labels) and "Open tokenizer file…" in labels


def test_big_text_goes_in_slices_and_ends_exact(qtbot, window):
    from bpeinspect.gui.overlay.token_view import document_text
    from bpeinspect.gui.window.document import FEED_SLICE

    window.open_tokenizer("cl100k_base")
    wait_idle(qtbot, window)
    line = "line with 😀 and \r\n windows ending\rold mac\u2029para\n"
    text = line * (3 * FEED_SLICE // len(line))
    window.set_text(text)
    assert window.live.is_feeding()  # not all in at once
    assert window.panes.panes()[0].view.isReadOnly()
    wait_idle(qtbot, window)
    assert window.text() == document_text(window.document)
    assert not window.panes.panes()[0].view.isReadOnly()
    pane = window.panes.panes()[0]
    assert pane.view.enc.ids == pane.tok.encode(document_text(window.document), allowed_special="all")
    window.set_text("small again")  # a new text stops a feed in progress
    assert window.text() == "small again"


def test_panes_badge_a_default_split_rule_and_missing_bytes(qtbot, window, tmp_path):
    """A rank file bpeinspect does not know gets cl100k's split rule as a default, and a
    vocabulary without some single bytes drops them: both are badges in the pane header."""
    import base64

    odd = tmp_path / "odd.tiktoken"
    odd.write_bytes(b"".join(base64.b64encode(bytes([b])) + f" {b}\n".encode() for b in range(256) if b != 3))
    window.set_text("a\x03b")
    window.open_tokenizer(str(odd))
    wait_idle(qtbot, window)
    (pane,) = window.panes.panes()
    tags = {tag.text(): tag.toolTip() for tag in pane.provenance}
    assert set(tags) == {"default split", "1 byte missing"}
    assert "cl100k" in tags["default split"] and "03" in tags["1 byte missing"]


def test_a_load_asks_its_workers_should_stop_and_a_cancelled_one_is_forgotten(qtbot, window, monkeypatch):
    """The loading worker's ``should_stop`` reaches the rank file's parse, where it gives way to a
    busy GUI thread (without it the window waited for the interpreter lock through most of
    o200k_base's parse: stalls of 0.2-0.5 s); a load cancelled (at quit) leaves the registry."""
    from bpeinspect.core.io import builtins as catalog
    from bpeinspect.gui.concurrency import Worker

    asked: list[bool] = []
    real = Worker.should_stop
    monkeypatch.setattr(Worker, "should_stop", lambda self: asked.append(True) or real(self))
    catalog.forget_builtins()
    try:
        window.open_tokenizer("r50k_base")
        wait_idle(qtbot, window)
        assert window.registry.current().name == "r50k_base" and len(asked) >= 50256 // 1024
        monkeypatch.setattr(Worker, "should_stop", lambda self: True)
        window.open_tokenizer("cl100k_base")
        assert window.registry.loading() == ["cl100k_base"]
        qtbot.waitUntil(lambda: not window.registry.loading() and not window.jobs.is_busy())
        assert len(window.registry) == 1
    finally:
        catalog.forget_builtins()
        load_tokenizer("r50k_base")  # cached again for the tests that follow


def test_a_big_html_export_asks_and_writes_only_the_visible_part_in_a_worker(qtbot, window, tmp_path, monkeypatch):
    import threading

    from bpeinspect.gui.window import files as export

    window.resize(800, 500)
    window.open_tokenizer("cl100k_base")
    lines = [f"line {i} says héllo 🎉" for i in range(3000)]
    window.set_text("\n".join(lines))
    wait_idle(qtbot, window)
    monkeypatch.setattr("bpeinspect.gui.window.files.HTML_LIMIT", 1000)
    asked, threads = [], set()
    real = export._spans
    monkeypatch.setattr(export, "_spans", lambda *a: threads.add(threading.get_ident()) or real(*a))
    window.files.ask_html_scope = lambda size, has_sel: asked.append((size, has_sel)) or ""
    path = tmp_path / "o.html"
    assert not window.files.export_html(str(path))  # cancelled: nothing written
    assert asked and asked[0][0] > 3000 * 10 * 100 and not path.exists()
    window.files.ask_html_scope = lambda size, has_sel: "visible"
    assert window.files.export_html(str(path))
    wait_jobs(qtbot, window.jobs, 30000)
    page = path.read_text(encoding="utf-8")
    assert ">line<" in page and "🎉" in page and ">2999<" not in page and len(page) < 200_000
    assert threads and threading.get_ident() not in threads
    cur = window.panes.panes()[0].view.textCursor()
    at = window.text().index("line 2500 ")
    cur.setPosition(len(window.text()[:at].encode("utf-16-le")) // 2)
    cur.setPosition(cur.position() + 9, cur.MoveMode.KeepAnchor)  # "line 2500"
    window.panes.panes()[0].view.setTextCursor(cur)
    assert window.files.export_html(str(path), "selection")
    wait_jobs(qtbot, window.jobs, 30000)
    page = path.read_text(encoding="utf-8")
    assert ">250<" in page and ">line<" in page and "says" not in page and "the selection" in window.message.text()


def test_the_tokenizers_menu_offers_to_add_only_what_is_not_open(qtbot, window):
    assert window.commands["tokenizers.add.cl100k_base"].isEnabled()
    window.open_tokenizer("cl100k_base")
    wait_idle(qtbot, window)
    assert not window.commands["tokenizers.add.cl100k_base"].isEnabled()
    assert window.commands["tokenizers.add.r50k_base"].isEnabled()
    window.close_current()
    assert window.commands["tokenizers.add.cl100k_base"].isEnabled()


def test_a_builtin_loading_is_not_offered_again_in_the_menu_or_the_toolbar(qtbot, window):
    """Add NAME stayed offered until the tokenizer had loaded."""
    window.open_tokenizer("cl100k_base")
    assert "cl100k_base" in window.registry.loading()  # still loading on the worker
    assert not window.commands["tokenizers.add.cl100k_base"].isEnabled()
    add_menu = window.toolbar.add_menu
    add_menu.aboutToShow.emit()
    offered = {a.text().split(" — ")[0]: a.isEnabled() for a in add_menu.actions() if " — " in a.text()}
    assert offered["cl100k_base"] is False and offered["o200k_base"] is True
    wait_idle(qtbot, window)
    assert not window.commands["tokenizers.add.cl100k_base"].isEnabled()


def test_a_tokenizer_file_open_is_not_offered_again_however_its_path_is_spelled(qtbot, window, tmp_path, monkeypatch):
    """File ▸ Recent tokenizers offered the file open already, and the same file by another
    spelling of its path opened a second time."""
    from bpeinspect.core.io.formats import save

    (tmp_path / "gpt2").mkdir()
    path = save(load_tokenizer("gpt2"), tmp_path / "gpt2" / "tokenizer.json")
    window.open_tokenizer(str(path))
    wait_idle(qtbot, window)
    monkeypatch.chdir(tmp_path)
    window.open_tokenizer(os.path.join(".", "gpt2", "..", "gpt2", "tokenizer.json"))
    wait_idle(qtbot, window)
    assert len(window.registry.tokenizers()) == 1
    menu = window.commands.menu("file/recent_tokenizers")
    menu.aboutToShow.emit()
    entries = {a.text(): a.isEnabled() for a in menu.actions()}
    assert entries == {str(path.resolve()): False}
    window.close_current()
    menu.aboutToShow.emit()
    assert {a.text(): a.isEnabled() for a in menu.actions()} == {str(path.resolve()): True}


def test_save_text_as_writes_the_file_in_a_worker(qtbot, window, tmp_path, monkeypatch):
    import threading

    from PySide6.QtWidgets import QFileDialog

    from bpeinspect.gui.window import files

    text = "hello, saved 🎉\n" * 1000
    window.set_text(text)
    path = tmp_path / "saved.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(path), ""))
    writers = []
    write = files.atomic_write
    monkeypatch.setattr(
        files, "atomic_write", lambda *a, **k: (writers.append(threading.current_thread()), write(*a, **k))
    )
    window.commands["file.save_text"].trigger()
    wait_jobs(qtbot, window.jobs, 10000)
    assert path.read_text(encoding="utf-8") == text
    assert writers and writers[0] is not threading.main_thread()
    assert str(path) in window.message.text()


def test_a_big_html_export_reads_each_encoding_once_and_counts_its_tokens_without_searching_them(
    qtbot, window, monkeypatch
):
    """Before it asks what to export, the window reads each tokenizer's encoding once (it read
    them twice, thousands of parts each at 10 MB) and counts the whole overlay's tokens without
    a search in every part."""
    from bpeinspect.core.live_text import LiveEncoding
    from bpeinspect.gui.window import files as export

    window.open_tokenizer("cl100k_base")
    window.open_tokenizer("r50k_base")
    window.set_text("\n".join(f"line {i} says héllo 🎉" for i in range(3000)))
    wait_idle(qtbot, window)
    assert all(window.live_encoding(t).n_parts() > 3 for t in window.registry.tokenizers())
    monkeypatch.setattr("bpeinspect.gui.window.files.HTML_LIMIT", 1000)
    reads, searched, asked = [], [], []
    real_parts, real_tokens = LiveEncoding.parts, export._tokens
    monkeypatch.setattr(LiveEncoding, "parts", lambda self: reads.append(self.tok.name) or real_parts(self))
    monkeypatch.setattr(export, "_tokens", lambda *a: searched.append(a) or real_tokens(*a))
    window.files.ask_html_scope = lambda size, has_sel: asked.append(size) or ""
    assert not window.files.export_html("unused.html")
    n_tokens = sum(len(window.live_encoding(t)) for t in window.registry.tokenizers())
    assert asked == [len(export.HEAD) + n_tokens * export.HTML_PER_TOKEN]
    assert sorted(reads) == ["cl100k_base", "r50k_base"] and searched == []


def test_a_tokenizer_opened_while_long_jobs_hold_a_thread_per_core_is_loaded_at_once(qtbot, window) -> None:
    """Long background jobs (the merge tree linking a vocabulary, a whole document's round of
    encoding) took every thread of the shared pool, one per core: a tokenizer the user opened
    then waited for one of them to end, seconds with nothing to show."""
    import threading

    from PySide6.QtCore import QThread, QThreadPool

    from bpeinspect.gui.concurrency import Worker

    release = threading.Event()
    cores = QThread.idealThreadCount()
    holders = [Worker(release.wait, 60).start() for _ in range(cores)]
    try:
        pool = QThreadPool.globalInstance()
        qtbot.waitUntil(lambda: pool.activeThreadCount() >= cores, timeout=5000)
        window.open_tokenizer("r50k_base")
        qtbot.waitUntil(lambda: [t.name for t in window.registry.tokenizers()] == ["r50k_base"], timeout=20_000)
    finally:
        release.set()
        for holder in holders:
            holder.cancel()
