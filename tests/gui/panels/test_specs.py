"""The docked views follow the text: clicks, the picker and each other."""

from __future__ import annotations

from types import SimpleNamespace

from bpeinspect.gui.panels.specs import EXAMPLE_PIECE, PANELS
from tests.gui.conftest import wait_idle


def _panels(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("Hello tokenization world")
    wait_idle(qtbot, window)
    views = window.panels.views
    return SimpleNamespace(tree=views["tree"], vocab=views["vocab"], replay=views["replay"])


def _wait_replay(qtbot, replay):
    if replay.busy:
        with qtbot.waitSignal(replay.jobs.busyChanged, timeout=10000):
            pass


def test_the_window_docks_what_the_registry_lists(panel_window):
    host = panel_window.panels
    eager = [spec.key for spec in PANELS if not spec.lazy]
    assert list(host.docks) == eager and list(host.views) == eager
    titles = [a.text() for a in panel_window.commands.menu("view/panels").actions()]
    assert titles == [spec.title for spec in PANELS if not spec.lazy]
    assert panel_window.commands["panels.languages"].shortcut().toString() == "Ctrl+L"
    assert panel_window.commands.menu("tokenizers").actions()[-1].text() == "Train a tokenizer…"


def test_views_follow_the_current_tokenizer_and_show_an_example(qtbot, panel_window):
    window = panel_window
    panels = _panels(qtbot, window)
    tok = window.registry.current()
    assert panels.tree.tok is tok and panels.vocab.index_.tok is tok
    ids = tok.encode_piece(EXAMPLE_PIECE)
    assert [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())] == ids
    _wait_replay(qtbot, panels.replay)
    assert panels.replay.trace is not None and panels.replay.trace.piece == EXAMPLE_PIECE.encode()


def test_clicking_a_token_shows_its_tree_and_row(qtbot, panel_window):
    window = panel_window
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
    _wait_replay(qtbot, panels.replay)
    assert panels.replay.trace.piece == b" world"
    assert list(panels.replay.trace.result) == [world]
