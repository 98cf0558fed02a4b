"""The docked views follow the text: clicks, the picker and each other."""

from __future__ import annotations

from bpeinspect.gui.concurrency import Worker
from bpeinspect.gui.panels.specs import EXAMPLE_PIECE, install_panels
from tests.gui.conftest import wait_idle


def _panels(qtbot, window):
    panels = install_panels(window)
    window.open_tokenizer("cl100k_base")
    window.set_text("Hello tokenization world")
    qtbot.waitUntil(lambda: len(window.registry) == 1, timeout=30000)
    wait_idle(qtbot, window)
    return panels


def test_views_follow_the_current_tokenizer_and_show_an_example(qtbot, window):
    panels = _panels(qtbot, window)
    tok = window.registry.current()
    assert panels.tree.tok is tok and panels.vocab.index_.tok is tok
    ids = tok.encode_piece(EXAMPLE_PIECE)
    assert [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())] == ids
    qtbot.waitUntil(lambda: not panels.replay.busy, timeout=10000)
    assert panels.replay.trace is not None and panels.replay.trace.piece == EXAMPLE_PIECE.encode()
    Worker.shutdown()


def test_clicking_a_token_shows_its_tree_and_row(qtbot, window):
    panels = _panels(qtbot, window)
    tok = window.registry.current()
    world = tok.encode(" world")[0]
    window.tokenActivated.emit(tok, world)
    roots = [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())]
    assert roots == [world]
    assert str(world) in panels.tree.title.text()
    selected = panels.vocab.table.selectionModel().selectedRows()
    assert selected and panels.vocab.model.token_id(selected[0].row()) == world
    # a pre-token click goes to the replay
    window.pieceActivated.emit(tok, " world")
    qtbot.waitUntil(lambda: not panels.replay.busy, timeout=10000)
    assert panels.replay.trace.piece == b" world"
    assert list(panels.replay.trace.result) == [world]
    Worker.shutdown()
