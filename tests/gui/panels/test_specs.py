"""The docked views follow the text: clicks, the picker and each other."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from bpeinspect.gui.panels.context import PanelWindow
from bpeinspect.gui.panels.specs import EXAMPLE_PIECE, PANELS
from tests.gui.conftest import wait_idle


def _panels(qtbot, window):
    window.open_tokenizer("cl100k_base")
    window.set_text("Hello tokenization world")
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)  # the views follow, one per turn
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


def test_declaring_the_panels_imports_none_of_the_lazy_ones():
    """A lazy panel's module (and pyqtgraph behind most of them) comes in when the panel is first
    shown or on the window's start-up worker, never with the registry of panels."""
    lazy = [spec.module for spec in PANELS if spec.lazy]
    code = "import sys, bpeinspect.gui.panels.specs; print(*[m for m in sys.argv[1:] if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code, *lazy], capture_output=True, text=True, check=True)
    assert len(lazy) == 5 and out.stdout.split() == []


def test_each_lazy_panel_is_made_from_its_menu_entry_by_its_own_module(qtbot, panel_window):
    win = panel_window
    host = win.panels
    lazy = [spec for spec in PANELS if spec.lazy]
    assert [(spec.key, spec.menu, win.commands[f"panels.{spec.key}"].shortcut().toString()) for spec in lazy] == [
        ("languages", "view", "Ctrl+L"),
        ("vocabs", "view", "Ctrl+Shift+B"),
        ("training", "tokenizers", "Ctrl+T"),
        ("chat", "view", "Ctrl+Shift+M"),
        ("dataset", "view", "Ctrl+Shift+J"),
    ]
    view_menu = [a.text() for a in win.commands.menu("view").actions() if a.text().endswith("…")]
    assert view_menu[-4:] == ["Languages…", "Vocabularies…", "Chat…", "Dataset…"]
    win.setGeometry(win.screen().availableGeometry())  # no room beside it: each opens docked in its area
    qtbot.wait(10)
    for spec in lazy:
        assert host.view(spec.key) is None
        win.commands[f"panels.{spec.key}"].trigger()
        view, dock = host.view(spec.key), host.docks[spec.key]
        assert view is not None and type(view).__module__.startswith(spec.module)
        assert dock.isVisible() and dock.widget() is view
        assert not dock.isFloating() and win.dockWidgetArea(dock) == spec.area
    assert (
        host.view("training").form.folder_filter.settings is win.settings
    )  # its folder filter is kept with the window's


def test_the_panels_are_made_with_the_window_as_their_typed_context(panel_window):
    """The window has every member :class:`PanelWindow` names (a stand-in lacking one has not),
    and the host the panels are made with hands them that window."""
    from bpeinspect.gui.window.docks import DockingWindow

    assert isinstance(panel_window, PanelWindow) and isinstance(panel_window, DockingWindow)
    host = panel_window.panels
    assert host.window is panel_window and host.inspector.window is panel_window
    members = {n: getattr(panel_window, n) for n in ("registry", "document", "appearance", "files", "text")}
    stand_in = SimpleNamespace(**members)
    assert not isinstance(stand_in, PanelWindow)


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
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    roots = [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())]
    assert roots == [world]
    assert str(world) in panels.tree.title.text()
    selected = panels.vocab.table.selectionModel().selectedRows()
    assert selected and panels.vocab.model.token_id(selected[0].row()) == world
    # a pre-token click goes to the replay
    window.pieceActivated.emit(tok, " world")
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    _wait_replay(qtbot, panels.replay)
    assert panels.replay.trace.piece == b" world"
    assert list(panels.replay.trace.result) == [world]


def test_a_click_shows_in_the_panes_before_the_docks_follow(qtbot, panel_window):
    """The docks follow a click in an event-loop turn of their own, after the panes and ids
    show the outline: their work (the tree, the vocabulary, the replay, the tree's dock brought
    forward and painted, the token list's scroll) does not lengthen the click's turn; the latest
    pick wins."""
    window = panel_window
    panels = _panels(qtbot, window)
    tok = window.registry.current()
    tree_before = [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())]
    enc = window.registry.result(tok).enc
    window.panels.docks["tokens"].raise_()
    in_front = lambda key: not window.panels.docks[key].visibleRegion().isEmpty()  # noqa: E731 (tabbed docks all say isVisible)
    qtbot.waitUntil(lambda: not in_front("tree"), timeout=5000)
    window.select_token(tok, 0)
    window.select_token(tok, 2)
    pane = window.panes.pane_of(tok)
    assert pane.view.selected == 2 and window.ids.view.selected == 2  # at once
    assert window.panels.inspector.pending()
    roots = [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())]
    assert roots == tree_before and not in_front("tree")
    tokens = window.panels.view("tokens")
    assert tokens.selected_rows() != [2]  # the token list follows in that turn too
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    qtbot.waitUntil(lambda: tokens.selected_rows() == [2], timeout=5000)
    roots = [panels.tree.down.index(r, 0).internalPointer().token_id for r in range(panels.tree.down.rowCount())]
    assert roots == [enc.id_at(2)]
    _wait_replay(qtbot, panels.replay)
    assert panels.replay.trace.piece == enc.piece_text(2).encode()
    assert in_front("tokens") and not in_front("tree")  # the list the user had in front stays there


@pytest.mark.parametrize("front, stays", [("vocab", True), ("replay", True), ("compare", False)])
def test_a_pick_brings_the_tree_forward_only_over_views_that_do_not_follow_it(qtbot, panel_window, front, stays):
    """Tabbed docks behind another all say isVisible(), so the tree came forward on every pick,
    even over the vocabulary or the token list the user had just clicked in."""
    window = panel_window
    _panels(qtbot, window)
    tok = window.registry.current()
    in_front = lambda key: not window.panels.docks[key].visibleRegion().isEmpty()  # noqa: E731
    window.panels.docks[front].raise_()
    qtbot.waitUntil(lambda: in_front(front), timeout=5000)
    window.select_token(tok, 1)
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    qtbot.wait(50)
    assert in_front(front) == stays and in_front("tree") == (not stays)


def test_big_panels_open_beside_the_window_or_docked_never_over_it(qtbot, panel_window, monkeypatch):
    win = panel_window
    free = win.screen().availableGeometry()  # a small screen in the tests: room for a narrow panel
    monkeypatch.setattr("bpeinspect.gui.window.docks.BESIDE_MIN", 200, raising=False)
    win.setGeometry(free.left() + 2, free.top() + 30, free.width() // 3, free.height() // 2)  # room on its right
    qtbot.wait(10)
    win.panels.show("chat")
    chat = win.panels.docks["chat"]
    assert chat.isFloating()
    assert not chat.frameGeometry().intersects(win.frameGeometry())
    assert free.contains(chat.frameGeometry().topLeft())
    win.setGeometry(free.left(), free.top(), free.width(), free.height())  # no room left
    qtbot.wait(10)
    for key in ("languages", "dataset", "training"):
        win.panels.show(key)
    docks = [win.panels.docks[k] for k in ("languages", "dataset", "training")]
    assert not any(d.isFloating() for d in docks)
    assert win.tabifiedDockWidgets(docks[0])  # tabs of one dock area, not three bands


def test_views_follow_a_new_current_tokenizer_one_per_turn_and_those_behind_when_shown(qtbot, panel_window):
    """Each view builds what it shows of a vocabulary: all three in the turn that changed the
    current tokenizer held the window for 100-200 ms. A view behind another tab waits until it
    is shown, unless its tokenizer is closed (it is not kept alive by a view)."""
    from PySide6.QtCore import QTimer

    window = panel_window
    panels = _panels(qtbot, window)
    old = window.registry.current()
    window.open_tokenizer("r50k_base")
    wait_idle(qtbot, window)
    new = window.registry.find("r50k_base")
    docks = window.panels.docks
    in_front = lambda key: not docks[key].visibleRegion().isEmpty()  # noqa: E731
    docks["tree"].setFloating(True)
    docks["replay"].setFloating(True)
    docks["vocab"].raise_()
    qtbot.waitUntil(lambda: all(in_front(k) for k in ("tree", "replay", "vocab")), timeout=5000)
    turns, calls = [0], []
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    ticker.start()
    for key in ("tree", "vocab", "replay"):
        view = getattr(panels, key)
        real = view.set_tokenizer
        view.set_tokenizer = lambda tok, key=key, real=real: (calls.append((key, turns[0])), real(tok))
    window.registry.set_current(new)
    assert calls == []  # not in the turn that changed it
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    ticker.stop()
    assert sorted(key for key, _ in calls) == ["replay", "tree", "vocab"]
    assert len({turn for _, turn in calls}) == 3  # each in a turn of its own
    assert panels.tree.tok is new and panels.vocab.index_.tok is new
    # the vocabulary behind the token list waits until it is shown
    docks["tokens"].raise_()
    qtbot.waitUntil(lambda: not in_front("vocab"), timeout=5000)
    window.registry.set_current(old)
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    assert panels.tree.tok is old and panels.vocab.index_.tok is new
    docks["vocab"].raise_()
    qtbot.waitUntil(lambda: panels.vocab.index_.tok is old, timeout=5000)
    # a view left behind lets go of a tokenizer that is closed
    docks["tokens"].raise_()
    qtbot.waitUntil(lambda: not in_front("vocab"), timeout=5000)
    window.registry.set_current(new)
    qtbot.waitUntil(lambda: not window.panels.inspector.pending(), timeout=5000)
    assert panels.vocab.index_.tok is old
    window.registry.remove(old)
    qtbot.waitUntil(lambda: panels.vocab.index_.tok is new, timeout=5000)
