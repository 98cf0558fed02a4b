"""The merge-tree browser: lazy tree models equal the core's merge trees, both directions."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QModelIndex, Qt, QThreadPool

from bpeinspect.core import MergeNode, Tokenizer, load_tokenizer
from bpeinspect.core.text import display_bytes
from bpeinspect.gui.panels.merge_tree import (
    BATCH,
    COL_ID,
    COL_MERGE,
    COL_RANK,
    COL_TOKEN,
    TOKEN_ID_ROLE,
    MergeTreeBrowser,
    MergeTreeModel,
)
from tests.gui.conftest import wait_jobs
from tests.paths import SHARED


@pytest.fixture(autouse=True)
def _drain_workers() -> Iterator[None]:
    yield
    QThreadPool.globalInstance().waitForDone(30_000)


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    ref = json.loads((SHARED / "reference" / "minbpe-taylorswift-merges.json").read_text())
    entry = ref["taylorswift_regex_gpt4_1024"]
    return Tokenizer.from_merges([(a, b) for a, b, _ in entry["merges"]], pattern="gpt4")


def _fetch_all(model: MergeTreeModel, index: QModelIndex) -> None:
    while model.canFetchMore(index):
        model.fetchMore(index)


def _model_tree(model: MergeTreeModel, index: QModelIndex) -> tuple:
    """The subtree at ``index`` as nested tuples (id, rank text, (children...)), fetching as it goes."""
    _fetch_all(model, index)
    kids = tuple(_model_tree(model, model.index(r, 0, index)) for r in range(model.rowCount(index)))
    rank = model.data(index.siblingAtColumn(COL_RANK))
    return (index.data(TOKEN_ID_ROLE), rank, kids)


def _core_tree(node: MergeNode) -> tuple:
    kids = () if node.left is None or node.right is None else (_core_tree(node.left), _core_tree(node.right))
    return (node.id, "" if node.rank is None else str(node.rank), kids)


def _sample(tok: Tokenizer, n: int, seed: int = 6) -> list[int]:
    ids = tok.ids()
    return sorted(random.Random(seed).sample(ids, min(n, len(ids))))


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base", "trained"])
def test_down_trees_equal_core_trees(name: str, trained: Tokenizer) -> None:
    tok = trained if name == "trained" else load_tokenizer(name)
    ids = tok.ids() if name == "trained" else _sample(tok, 300) + sorted(tok.special_tokens.values())
    model = MergeTreeModel("down")
    model.set_tokenizer(tok)
    model.set_roots(ids)
    assert model.rowCount() == len(ids)
    for r, tid in enumerate(ids):
        got = _model_tree(model, model.index(r, 0))
        assert got == _core_tree(tok.merge_graph.tree(tid)), tid


def test_down_tree_is_lazy_and_labelled() -> None:
    tok = load_tokenizer("cl100k_base")
    tid = tok.encode(" unbelievable")[0]
    model = MergeTreeModel("down")
    model.set_tokenizer(tok)
    model.set_roots([tid])
    root = model.index(0, 0)
    assert model.hasChildren(root) and model.rowCount(root) == 0  # nothing fetched until expanded
    model.fetchMore(root)
    left, right = tok.merge_graph.parents(tid)
    assert [model.index(r, 0, root).data(TOKEN_ID_ROLE) for r in range(2)] == [left, right]
    assert root.data() == "␣unbelievable"
    assert root.siblingAtColumn(COL_ID).data() == str(tid)
    assert root.siblingAtColumn(COL_MERGE).data() == f"{display_bytes(tok.token_bytes(left))} + {display_bytes(tok.token_bytes(right))}"
    ix = root
    for _ in range(3):  # " unbelievable" -> " unbelie" -> " un" -> " "
        _fetch_all(model, ix)
        ix = model.index(0, 0, ix)
    assert ix.data(TOKEN_ID_ROLE) == tok.token_id(b" ")
    assert not model.hasChildren(ix) and not model.canFetchMore(ix)
    assert ix.siblingAtColumn(COL_MERGE).data() == "byte" and ix.siblingAtColumn(COL_RANK).data() == ""


def test_up_tree_equals_core_children(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    tok.merge_graph.compute_all()
    model = MergeTreeModel("up")
    model.set_tokenizer(tok)
    space = tok.token_id(b" ")
    ing = tok.token_id(b"ing")
    model.set_roots([space, ing])
    assert not model.hasChildren(model.index(0, 0))  # not ready: no children yet
    model.set_ready(True)
    for r, tid in enumerate([space, ing]):
        ix = model.index(r, 0)
        want = tok.merge_graph.children(tid)
        assert model.child_count(ix) == len(want)
        if len(want) > BATCH:
            model.fetchMore(ix)
            assert model.rowCount(ix) == BATCH and model.canFetchMore(ix)
        _fetch_all(model, ix)
        assert [model.index(k, 0, ix).data(TOKEN_ID_ROLE) for k in range(model.rowCount(ix))] == want
    # one level further up
    ix = model.index(0, 0, model.index(1, 0))
    _fetch_all(model, ix)
    assert [model.index(k, 0, ix).data(TOKEN_ID_ROLE) for k in range(model.rowCount(ix))] == tok.merge_graph.children(
        ix.data(TOKEN_ID_ROLE)
    )


def test_models_pass_modeltester(qtmodeltester, trained: Tokenizer) -> None:
    down = MergeTreeModel("down")
    down.set_tokenizer(trained)
    down.set_roots(list(range(1000, 1024)))
    qtmodeltester.check(down, force_py=True)
    qtmodeltester.check(down)
    up = MergeTreeModel("up")
    up.set_tokenizer(trained)
    trained.merge_graph.compute_all()
    up.set_roots([32, 101, 300])
    up.set_ready(True)
    qtmodeltester.check(up, force_py=True)
    qtmodeltester.check(up)


def _browser(qtbot, tok: Tokenizer) -> MergeTreeBrowser:
    w = MergeTreeBrowser()
    qtbot.addWidget(w)
    w.resize(800, 600)
    w.set_tokenizer(tok)
    return w


def test_browser_links_in_worker_and_shows_both_directions(qtbot) -> None:
    tok = Tokenizer(load_tokenizer("o200k_base").mergeable_ranks, pattern="o200k")  # a fresh, unlinked graph
    w = _browser(qtbot, tok)
    tid = tok.encode(" tokenization")[0]
    w.show_token(tid)
    assert w.busy  # compute_all runs in the pool; the down tree is there already
    assert w.down.roots() == [tid] and w.down_view.isExpanded(w.down.index(0, 0))
    assert "linking" in w.up_label.text()
    wait_jobs(qtbot, w.jobs, 60_000)
    assert w.up.ready
    kids = tok.merge_graph.children(tid)
    assert w.up_label.text() == f"Part of {len(kids):,} token{'s' if len(kids) != 1 else ''}"
    root = w.up.index(0, 0)
    assert [w.up.index(k, 0, root).data(TOKEN_ID_ROLE) for k in range(w.up.rowCount(root))] == kids[:BATCH]
    assert str(tid) in w.title.text()


def test_browser_cancel_and_restart(qtbot) -> None:
    tok = Tokenizer(load_tokenizer("cl100k_base").mergeable_ranks, pattern="cl100k")
    w = _browser(qtbot, tok)
    assert w.busy
    w.cancel.click()
    assert not w.busy and not w.up.ready
    QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(20)
    assert "not computed" in w.up_label.text()
    w.set_tokenizer(tok)  # starts again
    qtbot.waitUntil(lambda: w.up.ready, timeout=60_000)


def test_browser_piece_entry_and_activation(qtbot, trained: Tokenizer) -> None:
    w = _browser(qtbot, trained)
    wait_jobs(qtbot, w.jobs, 10_000)
    w.entry.setText(" Swiftly")
    w.entry.returnPressed.emit()
    assert w.down.roots() == trained.encode_piece(" Swiftly")
    assert "pre-token" in w.title.text()
    w.entry.setText("300")
    w.entry.returnPressed.emit()
    assert w.down.roots() == [300]
    child = w.down.index(0, 0, w.down.index(0, 0))
    with qtbot.waitSignal(w.tokenActivated) as sig:
        w.down_view.activated.emit(child)
    assert sig.args == [child.data(TOKEN_ID_ROLE)]
    assert w.down.roots() == [child.data(TOKEN_ID_ROLE)]  # navigated to it
    w.show_token(10**9)
    assert w.message.isVisibleTo(w) and "unknown token id" in w.message.text()


def test_unbuildable_tokens_are_marked(qtbot) -> None:
    # "abc" exists but "ab"/"bc" do not: no chain of merges makes it
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256
    tok = Tokenizer(ranks, pattern=None)
    model = MergeTreeModel("down")
    model.set_tokenizer(tok)
    model.set_roots([256])
    ix = model.index(0, COL_TOKEN)
    assert not tok.merge_graph.is_buildable(256)
    assert "unbuildable" in model.data(ix, Qt.ItemDataRole.ToolTipRole)
    assert model.data(ix, Qt.ItemDataRole.FontRole).italic()
    assert not model.data(model.index(0, COL_ID), Qt.ItemDataRole.FontRole)


def test_a_tokens_tooltip_shows_its_bytes_in_the_one_notation(qtbot) -> None:
    # " \t\n" then the first two bytes of 你 (e4 bd a0): a leaf's tooltip, in the tree's notation
    ranks = {bytes([b]): b for b in range(256)}
    token = b" \t\n\xe4\xbd"
    ranks[token] = 256
    tok = Tokenizer(ranks, pattern=None)
    model = MergeTreeModel("down")
    model.set_tokenizer(tok)
    model.set_roots([256])
    tip = model.data(model.index(0, COL_TOKEN), Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines()[0] == "256: " + display_bytes(token) == "256: ␣⇥↵<e4 bd>"
    assert "b'" not in tip and "\\x" not in tip
