"""Soak: open, encode and close many documents and tokenizers; memory must not grow.

Measured with tracemalloc (Python allocations) after a warm-up, with a generous bound; and,
sharper, every closed tokenizer must actually be freed (a weak reference to it dies). The
window's cycles, between them, open the files from every offset.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import pytest
from PySide6.QtCore import QSettings, QThreadPool

from bpeinspect.core import load_tokenizer, trace
from bpeinspect.core.io.formats import load_path

from .seeds import SAMPLE, saved_files, shared_files

pytestmark = pytest.mark.timeout(600)

WARMUP, CYCLES = 2, 6
GROWTH_BOUND = 4 << 20  # bytes over CYCLES cycles: a leak of one encoding or vocabulary per cycle is far more


def document(i: int) -> str:
    """A different ~8 KB document each time (no cache can serve it)."""
    return f"Document {i}: " + SAMPLE.replace("lower", f"lower{i}") * 5 + f"\n{i * 7919} 👩‍💻 end {i}"


@pytest.fixture(scope="module")
def vocab_files(tmp_path_factory):
    files = saved_files(tmp_path_factory.mktemp("soak"))
    files.update({k: v for k, v in shared_files().items() if k == "gpt2.tiktoken"})
    return list(files.values())


def traced_after_gc() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_core_open_encode_close(vocab_files):
    refs: list[weakref.ref] = []

    def cycle(i: int) -> None:
        for path in vocab_files:
            tok = load_path(path)
            text = document(i)
            enc = tok.encode_with_offsets(text, allowed_special="all")
            assert tok.decode(list(enc.ids)) == text
            some = enc.ids[len(enc.ids) // 2]
            tok.merge_graph.tree(some)
            trace(tok, enc.text[slice(*enc.piece_spans[enc.pieces_of[len(enc.ids) // 2]])])
            refs.append(weakref.ref(tok))
        builtin = load_tokenizer("cl100k_base")  # cached: the same object every time
        builtin.encode_with_offsets(document(i))

    tracemalloc.start()
    try:
        for i in range(WARMUP):
            cycle(i)
        before = traced_after_gc()
        for i in range(WARMUP, WARMUP + CYCLES):
            cycle(i)
        growth = traced_after_gc() - before
        top = tracemalloc.take_snapshot().statistics("lineno")[:5] if growth >= GROWTH_BOUND else []
    finally:
        tracemalloc.stop()
    assert growth < GROWTH_BOUND, f"memory grew {growth / 1e6:.1f} MB over {CYCLES} cycles; biggest: {top}"
    assert not [r for r in refs if r() is not None], "closed tokenizers are still alive"


def test_window_open_encode_close(qtbot, tmp_path, vocab_files):
    from bpeinspect.gui.window.main_window import MainWindow

    win = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), panels=())
    qtbot.addWidget(win)
    win.show()
    refs: list[weakref.ref] = []

    def cycle(i: int) -> None:
        paths = [str(p) for p in vocab_files[i % len(vocab_files) :: 2]]
        for spec in [*paths, "r50k_base"]:
            win.open_tokenizer(spec)
        win.set_text(document(i))
        qtbot.waitUntil(win.is_idle, timeout=60000)
        assert len(win.panes.panes()) == len(paths) + 1
        for tok in win.registry.tokenizers():
            win.select_token(tok, 10)
            r = win.registry.result(tok)
            assert len(r.enc.ids) > 1000
            if win.registry.spec_of(tok) != "r50k_base":
                refs.append(weakref.ref(tok))
        cursor = win.panes.panes()[0].view.textCursor()
        cursor.insertText(" an edit ")  # the incremental path too
        qtbot.waitUntil(win.is_idle, timeout=60000)
        for tok in win.registry.tokenizers():
            win.registry.remove(tok)
        qtbot.waitUntil(lambda: not win.jobs.is_busy(), timeout=60000)
        qtbot.wait(20)  # deleteLater of the panes

    tracemalloc.start()
    try:
        for i in range(WARMUP):
            cycle(i)
        before = traced_after_gc()
        for i in range(WARMUP, WARMUP + CYCLES):
            cycle(i)
        growth = traced_after_gc() - before
    finally:
        tracemalloc.stop()
        QThreadPool.globalInstance().waitForDone(60_000)
    assert growth < GROWTH_BOUND, f"memory grew {growth / 1e6:.1f} MB over {CYCLES} cycles"
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"{len(alive)} closed tokenizers are still referenced: {alive[:3]}"
    assert not win.panes.panes() and not win.registry.entries()
