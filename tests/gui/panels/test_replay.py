"""Merge replay: the steps shown equal the core's trace, and the controls move through them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, Qt, QThreadPool

from bpeinspect.core import Tokenizer, load_tokenizer, trace
from bpeinspect.core.text import display_bytes
from bpeinspect.gui.panels.replay import MAX_PIECE_BYTES, ReplayWidget, StepsModel, parts_at
from tests.gui.conftest import wait_jobs
from tests.paths import SHARED

PIECES = [" unbelievably", "hello", " Здравствуйте", " 東京都", "🤗🤗", "    ", "\n\n", "'s", "12345", " x" * 40]


@pytest.fixture(autouse=True)
def _drain_workers() -> Iterator[None]:
    yield
    QThreadPool.globalInstance().waitForDone(30_000)


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text())
    entry = ref["taylorswift_regex_gpt4_1024"]
    return Tokenizer.from_merges([(a, b) for a, b, _ in entry["merges"]], pattern="gpt4")


def _widget(qtbot, tok: Tokenizer) -> ReplayWidget:
    w = ReplayWidget()
    qtbot.addWidget(w)
    w.resize(800, 500)
    w.set_tokenizer(tok)
    return w


def _replayed(qtbot, w: ReplayWidget) -> None:
    wait_jobs(qtbot, w.jobs, 20_000)
    assert w.trace is not None


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base", "trained"])
def test_steps_equal_trace(qtbot, name: str, trained: Tokenizer) -> None:
    tok = trained if name == "trained" else load_tokenizer(name)
    w = _widget(qtbot, tok)
    for piece in PIECES:
        w.show_piece(piece)
        _replayed(qtbot, w)
        want = trace(tok, piece)
        assert w.trace == want
        n = len(want.steps)
        assert w.steps.rowCount() == n and w.slider.maximum() == n and w.step() == n
        for k, s in enumerate(want.steps):
            assert w.steps.index(k, 1).data() == str(s.rank)
            assert w.steps.index(k, 4).data() == f"{display_bytes(tok.token_bytes(s.result))}  ({s.result})"
        for k in (0, n // 2, n):
            w.set_step(k)
            parts = parts_at(want, k)
            pv = w.parts_view
            assert pv.ids == list(parts)
            assert pv.labels == [display_bytes(tok.token_bytes(i)) for i in parts]
            if k:
                s = want.steps[k - 1]
                assert pv.merged == s.position and pv.merged_rank == s.rank
                assert pv.ids[s.position] == s.result
                assert f"rank <b>{s.rank}</b>" in w.step_label.text()
            if k < n:
                nxt = want.steps[k]
                assert (pv.next_pair, pv.next_rank) == (nxt.position, nxt.rank)
                assert (pv.ids[nxt.position], pv.ids[nxt.position + 1]) == (nxt.left, nxt.right)
        # replay ends at what the encoder gives for this pre-token
        assert w.trace.result == tuple(tok.encode_piece(piece))


def test_steps_model_passes_modeltester(qtmodeltester) -> None:
    tok = load_tokenizer("cl100k_base")
    model = StepsModel()
    model.set_trace(tok, trace(tok, " unbelievably"))
    qtmodeltester.check(model, force_py=True)
    qtmodeltester.check(model)
    model.set_trace(None, None)
    qtmodeltester.check(model, force_py=True)


def test_buttons_slider_table_and_play(qtbot) -> None:
    tok = load_tokenizer("gpt2")
    w = _widget(qtbot, tok)
    w.show_piece(" unbelievable")
    _replayed(qtbot, w)
    n = len(w.trace.steps)
    assert n > 3
    assert not w.next.isEnabled() and w.prev.isEnabled()
    w.first.click()
    assert w.step() == 0 and not w.prev.isEnabled() and w.parts_view.ids == list(w.trace.initial)
    w.next.click()
    w.next.click()
    assert w.step() == 2 and w.table.currentIndex().row() == 1
    w.prev.click()
    assert w.step() == 1
    w.table.setCurrentIndex(w.steps.index(3, 0))  # choosing a row moves to that step
    assert w.step() == 4
    w.last.click()
    assert w.step() == n
    w._timer.setInterval(5)
    w.play.setChecked(True)  # from the end, play restarts at the bytes and runs to the end
    assert w.step() == 0
    qtbot.waitUntil(lambda: not w.play.isChecked(), timeout=5000)
    assert w.step() == n


def test_typed_text_is_split_into_pre_tokens(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    w = _widget(qtbot, tok)
    w.entry.setText("Hello world, 2024!")
    _replayed(qtbot, w)
    pieces = tok.split_rule.pieces("Hello world, 2024!")
    assert [w.pieces.itemData(i) for i in range(w.pieces.count())] == pieces
    assert w.pieces.isVisibleTo(w)
    assert w.trace == trace(tok, pieces[0])
    w.pieces.setCurrentIndex(1)
    wait_jobs(qtbot, w.jobs, 10_000)
    assert w.trace.piece == pieces[1].encode()
    assert w.trace == trace(tok, pieces[1])
    w.set_tokenizer(load_tokenizer("gpt2"))  # replays the same text with the new tokenizer
    wait_jobs(qtbot, w.jobs, 10_000)
    assert w.steps.tok is not tok
    assert w.trace == trace(load_tokenizer("gpt2"), pieces[0])


def test_whole_piece_lookup_is_explained(qtbot) -> None:
    # tiktoken's rule: "abcdef" is looked up whole, though merging stops at ab|cd|ef
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"cd": 257, b"ef": 258, b"abcdef": 259})
    tok = Tokenizer(ranks, pattern=None)
    w = _widget(qtbot, tok)
    w.show_piece("abcdef")
    _replayed(qtbot, w)
    assert w.trace.shortcut and w.trace.result == (259,)
    assert [s.result for s in w.trace.steps] == [256, 257, 258]
    assert w.note.isVisibleTo(w) and "whole piece" in w.note.text()


def test_show_token_and_chip_click(qtbot) -> None:
    tok = load_tokenizer("o200k_base")
    w = _widget(qtbot, tok)
    w.show()
    qtbot.waitExposed(w)
    tid = tok.token_id(b"\n//")  # unreachable from text, but its bytes as one piece merge to it
    w.show_token(tid)
    _replayed(qtbot, w)
    assert w.trace.result == (tid,)
    w.set_step(0)
    qtbot.wait(10)
    w.parts_view.repaint()
    with qtbot.waitSignal(w.tokenActivated) as sig:
        qtbot.mouseClick(w.parts_view, Qt.MouseButton.LeftButton, pos=w.parts_view._rects[1].center().toPoint())
    assert sig.args == [w.trace.initial[1]]
    with qtbot.assertNotEmitted(w.tokenActivated):
        qtbot.mouseClick(w.parts_view, Qt.MouseButton.LeftButton, pos=QPoint(1, 1))


def test_too_long_piece_is_refused_politely(qtbot) -> None:
    w = _widget(qtbot, load_tokenizer("gpt2"))
    w.show_piece("a" * (MAX_PIECE_BYTES + 1))
    assert not w.busy and w.trace is None
    assert w.note.isVisibleTo(w) and "up to" in w.note.text()
    w.show_piece("ok")
    _replayed(qtbot, w)
    assert w.trace == trace(load_tokenizer("gpt2"), "ok")


def test_special_token_is_explained(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    w = _widget(qtbot, tok)
    w.show_token(tok.special_tokens["<|endoftext|>"])
    _replayed(qtbot, w)
    assert w.trace == trace(tok, "<|endoftext|>")
    assert w.note.isVisibleTo(w) and "special token" in w.note.text()
    w.show_piece("hello")
    _replayed(qtbot, w)
    qtbot.waitUntil(lambda: w.trace.piece == b"hello")
    assert not w.note.isVisibleTo(w)
