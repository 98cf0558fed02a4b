"""The vocabulary table: model contract, searching, filtering, sorting and picking tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QModelIndex, Qt, QThreadPool

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.analysis.vocab import TokenQuery, VocabIndex
from bpeinspect.core.text import display_bytes
from bpeinspect.gui.panels.vocabulary import (
    COL_BYTES,
    COL_FLAGS,
    COL_ID,
    COL_LEN,
    COL_PARENTS,
    COL_RANK,
    COL_TOKEN,
    TOKEN_ID_ROLE,
    VocabBrowser,
    VocabTableModel,
)
from tests.gui.conftest import wait_jobs


@pytest.fixture(autouse=True)
def _drain_workers() -> Iterator[None]:
    yield
    QThreadPool.globalInstance().waitForDone(30_000)


@pytest.fixture
def small() -> Tokenizer:
    # hand-made pair-rule vocabulary: a+b merges before b+c, so "abc" (a + bc) is unreachable
    return Tokenizer.from_merges(
        [(97, 98), (98, 99), (97, 257), (32, 97), (259, 98)], pattern="gpt4", special_tokens={"<|end|>": 261}
    )


def _idle(qtbot, w: VocabBrowser, timeout: int = 20_000) -> None:
    """Wait for the typed search to start (the debounce) and for every job to end."""
    if w.debounce.isActive():
        with qtbot.waitSignal(w.debounce.timeout, timeout=timeout):
            pass
    wait_jobs(qtbot, w.jobs, timeout)


def _browser(qtbot, tok: Tokenizer) -> VocabBrowser:
    w = VocabBrowser()
    qtbot.addWidget(w)
    w.resize(1000, 500)
    w.set_tokenizer(tok)
    return w


def test_model_passes_modeltester(qtmodeltester, small: Tokenizer) -> None:
    model = VocabTableModel()
    ix = VocabIndex(small)
    ix.compute_unreachable()
    model.set_index(ix)
    qtmodeltester.check(model, force_py=True)
    model.set_rows(ix.search(TokenQuery(min_len=2)))
    qtmodeltester.check(model, force_py=True)


def test_model_passes_modeltester_builtin(qtmodeltester) -> None:
    model = VocabTableModel()
    ix = VocabIndex(load_tokenizer("cl100k_base"))
    model.set_index(ix, ix.search(TokenQuery(text=" the")))
    qtmodeltester.check(model)


def test_cells(small: Tokenizer) -> None:
    model = VocabTableModel()
    ix = VocabIndex(small)
    ix.compute_unreachable()
    model.set_index(ix)
    row = model.row_of(258)  # "abc"
    assert row is not None

    def cell(col: int, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        return model.data(model.index(row, col), role)

    assert cell(COL_ID) == "258" and cell(COL_TOKEN) == "abc" and cell(COL_BYTES) == "61 62 63"
    assert cell(COL_LEN) == "3" and cell(COL_RANK) == "2"
    assert cell(COL_PARENTS) == "a + bc"
    assert cell(COL_FLAGS) == "unreachable"
    assert "merging its bytes gives ab c" in str(cell(COL_FLAGS, Qt.ItemDataRole.ToolTipRole))
    assert cell(COL_TOKEN, TOKEN_ID_ROLE) == 258
    assert model.data(model.index(model.row_of(259), COL_TOKEN)) == "␣a"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.DisplayRole) == "0"
    assert model.data(QModelIndex()) is None


def test_opening_o200k_does_no_per_token_work_up_front(qtbot) -> None:
    tok = load_tokenizer("o200k_base")
    w = _browser(qtbot, tok)
    w.show()
    qtbot.waitExposed(w)
    assert not w.busy  # nothing was sent to a worker to open the table
    assert w.model.rowCount() == len(tok)
    assert w.table.model().data(w.model.index(12000, COL_TOKEN)) == display_bytes(tok.token_bytes(12000))


def test_search_modes_run_in_worker(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    w = _browser(qtbot, tok)
    ix = w.index_
    cases = [
        ("Text", "␣hello", TokenQuery(text=" hello")),
        ("Hex bytes", "e4 b8", TokenQuery(text="e4b8", mode="hex")),
        ("Regex", r"^\d{3}$", TokenQuery(text=r"^\d{3}$", mode="regex")),
        ("ID", "10-20, 99", TokenQuery(text="10-20,99", mode="id")),
    ]
    for mode, typed, query in cases:
        w.mode.setCurrentIndex(w.mode.findText(mode))
        w.search.setText(typed)
        _idle(qtbot, w)
        want = ix.search(query)
        assert want
        assert w.model.rows() == want, mode
        assert f"{len(want):,} of" in w.status.text()


def test_filters_and_sorting(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    w = _browser(qtbot, tok)
    w.script.setCurrentIndex(w.script.findData("Greek"))
    w.min_len.setValue(4)
    _idle(qtbot, w)
    rows = w.model.rows()
    assert rows == w.index_.search(TokenQuery(script="Greek", min_len=4))
    assert rows and all(len(tok.token_bytes(i)) >= 4 for i in rows)
    w.table.sortByColumn(COL_LEN, Qt.SortOrder.DescendingOrder)
    _idle(qtbot, w)
    lens = [len(tok.token_bytes(i)) for i in w.model.rows()]
    assert sorted(w.model.rows()) == sorted(rows) and lens == sorted(lens, reverse=True)
    w.show_which.setCurrentIndex(w.show_which.findData("special"))
    _idle(qtbot, w)
    assert w.model.rows() == []  # no special token is Greek
    w.script.setCurrentIndex(0)
    w.min_len.setValue(0)
    _idle(qtbot, w)
    assert sorted(w.model.rows()) == sorted(tok.special_tokens.values())


def test_unreachable_filter_scans_in_worker(qtbot) -> None:
    tok = load_tokenizer("o200k_base")
    w = _browser(qtbot, tok)
    w.show_which.setCurrentIndex(w.show_which.findData("unreachable"))
    _idle(qtbot, w, 30_000)  # the scan, then the search it starts
    assert w.index_.unreachable is not None
    assert w.model.rows() == sorted(w.index_.unreachable)
    assert tok.token_id(b"\n//") in w.model.rows()
    row = w.model.row_of(tok.token_id(b"\n//"))
    assert w.model.data(w.model.index(row, COL_FLAGS)) == "unreachable"
    assert "12 unreachable" in w.status.text()


def test_unused_needs_a_corpus(qtbot, small: Tokenizer) -> None:
    w = _browser(qtbot, small)
    w.show_which.setCurrentIndex(w.show_which.findData("unused"))
    _idle(qtbot, w)
    assert "corpus" in w.status.text()
    w.set_corpus(["ab ab abc", " ab"])
    _idle(qtbot, w, 10_000)
    assert w.index_.unused is not None
    used = set(small.encode_ordinary("ab ab abc")) | set(small.encode_ordinary(" ab"))
    assert w.model.rows() == [i for i in small.ids() if i not in used and not small.is_special(i)]


def test_bad_regex_shows_message_and_keeps_rows(qtbot, small: Tokenizer) -> None:
    w = _browser(qtbot, small)
    before = w.model.rows()
    w.mode.setCurrentIndex(w.mode.findData("regex"))
    w.search.setText("(unclosed")
    _idle(qtbot, w)
    assert "regex does not compile" in w.status.text()
    assert w.model.rows() == before


def test_cancel_a_scan(qtbot) -> None:
    w = _browser(qtbot, load_tokenizer("o200k_base"))
    w.find_unreachable()
    assert w.busy and w.cancel.isVisibleTo(w)
    w.cancel.click()
    assert not w.busy
    QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(50)
    assert w.index_.unreachable is None  # stopped long before the end of 200k tokens
    assert "tokens" in w.status.text()


def test_pick_and_show_token(qtbot) -> None:
    tok = load_tokenizer("gpt2")
    w = _browser(qtbot, tok)
    with qtbot.waitSignal(w.tokenActivated, timeout=2000) as sig:
        w.table.setCurrentIndex(w.model.index(500, COL_TOKEN))
    assert sig.args == [500]
    # a token hidden by the search: show_token clears the search and selects it without echoing
    w.search.setText("zzzz")
    _idle(qtbot, w)
    assert 31373 not in w.model.rows()
    with qtbot.assertNotEmitted(w.tokenActivated):
        w.show_token(31373)
    assert w.search.text() == ""
    assert w.table.currentIndex().data(TOKEN_ID_ROLE) == 31373
    _idle(qtbot, w)
    assert w.model.rowCount() == len(tok)


def test_show_piece_searches_text(qtbot) -> None:
    tok = load_tokenizer("gpt2")
    w = _browser(qtbot, tok)
    w.show_piece(" world")
    _idle(qtbot, w)
    assert w.model.rows() == [i for i in tok.ids() if b" world" in tok.token_bytes(i)]


def test_switching_tokenizer_resets(qtbot, small: Tokenizer) -> None:
    w = _browser(qtbot, load_tokenizer("gpt2"))
    w.search.setText("hello")
    w.set_tokenizer(small)  # a pending search for the old tokenizer must not land
    _idle(qtbot, w)
    assert w.index_.tok is small
    assert w.model.rows() == []  # the search still says "hello", which no token of `small` holds
    w.search.clear()
    _idle(qtbot, w)
    assert w.model.rows() == small.ids()


def test_unsortable_columns_sort_by_id(qtbot, small: Tokenizer) -> None:
    w = _browser(qtbot, small)
    w.table.sortByColumn(COL_LEN, Qt.SortOrder.DescendingOrder)
    _idle(qtbot, w)
    assert w.model.rows() != small.ids()
    w.table.sortByColumn(COL_PARENTS, Qt.SortOrder.DescendingOrder)
    _idle(qtbot, w)
    assert w.model.rows() == small.ids()[::-1]
    assert w.table.horizontalHeader().sortIndicatorSection() == COL_ID


def test_show_token_in_another_order_sorts_in_worker(qtbot) -> None:
    tok = load_tokenizer("cl100k_base")
    w = _browser(qtbot, tok)
    w.table.sortByColumn(COL_LEN, Qt.SortOrder.DescendingOrder)
    w.search.setText("zzzz")
    _idle(qtbot, w)
    target = tok.token_id(" hello")
    w.show_token(target)
    assert w.busy  # the re-sort of all tokens runs in the pool
    _idle(qtbot, w)
    assert w.model.rowCount() == len(tok)
    assert w.table.currentIndex().data(TOKEN_ID_ROLE) == target
    lens = [len(tok.token_bytes(i)) for i in w.model.rows()[:2000]]
    assert lens == sorted(lens, reverse=True)
    w.show_token(10**9)  # unknown ids are ignored
    assert w.table.currentIndex().data(TOKEN_ID_ROLE) == target


def test_status_names_single_bytes_without_a_token(qtbot) -> None:
    ranks = {bytes([b]): b for b in range(256) if b not in (0x03, 0xC0)}
    tok = Tokenizer(ranks, pattern="gpt2", added_tokens={"  ": 300}, name="falconish")
    w = _browser(qtbot, tok)
    _idle(qtbot, w)
    assert "no token for 2 single bytes (03 c0)" in w.status.text()
    # added tokens that are not special have their own kind
    assert w.index_.kind(300) == "added"


def test_a_tokens_tooltip_shows_its_bytes_in_the_one_notation() -> None:
    token = b" \t\n\xe4\xbd"  # then the first two bytes of 你 (e4 bd a0)
    ranks = {bytes([b]): b for b in range(256)}
    ranks[token] = 256
    model = VocabTableModel()
    model.set_index(VocabIndex(Tokenizer(ranks, pattern=None)))
    row = model.row_of(256)
    assert row is not None
    tip = model.data(model.index(row, COL_TOKEN), Qt.ItemDataRole.ToolTipRole)
    assert tip.splitlines() == ["256: " + display_bytes(token), "20 09 0a e4 bd"]
    assert display_bytes(token) == "␣⇥↵<e4 bd>"


def test_finding_a_row_in_the_id_order_builds_no_table(monkeypatch) -> None:
    """A token clicked in the text selects its row: in the id order it is found by bisection,
    without building the positions of every id on the GUI thread (10 ms for o200k_base)."""
    import bpeinspect.gui.panels.vocabulary_model as vm

    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 300, b"abc": 302}  # ids with holes
    model = VocabTableModel()
    model.set_index(VocabIndex(Tokenizer(ranks, pattern=None)))
    monkeypatch.setattr(vm, "positions", lambda ids: pytest.fail("positions built"))
    assert [model.row_of(i) for i in (0, 255, 300, 302)] == [0, 255, 256, 257]
    assert [model.row_of(i) for i in (256, 301, 303, -1, 10**6)] == [None] * 5
    assert model.token_id(model.row_of(302)) == 302
    monkeypatch.undo()
    model.set_rows([302, 5, 300])  # another order: its positions are built once
    assert [model.row_of(i) for i in (302, 5, 300, 0)] == [0, 1, 2, None]


def test_every_token_in_id_order_is_shown_without_a_worker(qtbot, monkeypatch) -> None:
    """Sorting by id with no search, and clearing the search in the id order, show the index's
    own sorted ids at once: no worker (it held the interpreter while the window repainted),
    nothing sorted, no positions built (a row is found by bisection, in either direction)."""
    import bpeinspect.gui.panels.vocabulary_model as vm

    tok = load_tokenizer("cl100k_base")
    w = _browser(qtbot, tok)
    w.table.sortByColumn(COL_LEN, Qt.SortOrder.DescendingOrder)
    _idle(qtbot, w)
    target = tok.token_id(" hello")
    w.show_token(target)
    monkeypatch.setattr(VocabIndex, "sorted", lambda *a, **k: pytest.fail("sorted"))
    monkeypatch.setattr(VocabIndex, "search", lambda *a, **k: pytest.fail("searched"))
    monkeypatch.setattr(vm, "positions", lambda ids: pytest.fail("positions built"))
    for order, want in ((Qt.SortOrder.AscendingOrder, tok.ids()), (Qt.SortOrder.DescendingOrder, tok.ids()[::-1])):
        w.table.sortByColumn(COL_ID, order)
        assert not w.busy
        assert w.model.rows() == want
        assert w.table.currentIndex().data(TOKEN_ID_ROLE) == target  # the selection is kept
        assert [w.model.token_id(w.model.row_of(i)) for i in (0, 5000, target, want[-1])] == [0, 5000, target, want[-1]]
        assert w.model.row_of(10**7) is None and w.model.row_of(-3) is None
    monkeypatch.undo()
    w.search.setText("hello")
    _idle(qtbot, w)
    assert w.model.rows() == w.index_.search(TokenQuery(text="hello"), sort="id", descending=True)
    monkeypatch.setattr(VocabIndex, "search", lambda *a, **k: pytest.fail("searched"))
    w.search.clear()
    with qtbot.waitSignal(w.debounce.timeout):
        pass
    assert not w.busy
    assert w.model.rows() == tok.ids()[::-1]
    assert f"{len(tok):,} of {len(tok):,} tokens" in w.status.text()


def test_a_regex_typed_as_text_that_finds_nothing_gets_a_hint(qtbot) -> None:
    w = _browser(qtbot, load_tokenizer("cl100k_base"))
    w.mode.setCurrentIndex(w.mode.findData("text"))
    w.search.setText(r"^\d{3}$")
    _idle(qtbot, w)
    assert w.model.rowCount() == 0 and "set the search to Regex" in w.status.text()
    w.search.setText("zzzzqqqq")  # nothing found, but no regex: no hint
    _idle(qtbot, w)
    assert w.model.rowCount() == 0 and "Regex" not in w.status.text()


def test_a_long_hint_does_not_widen_the_panel(qtbot) -> None:
    """The hint was one line as wide as its text: the dock grew to 617 px of a 1024 px window
    and the text kept 400."""
    from bpeinspect.gui.window.docks import dock_width

    w = _browser(qtbot, load_tokenizer("cl100k_base"))
    w.show()
    narrow = w.minimumSizeHint().width()
    assert narrow <= dock_width(1024)
    w.mode.setCurrentIndex(w.mode.findData("text"))
    w.search.setText(r"^\d{3}$")
    _idle(qtbot, w)
    assert "set the search to Regex" in w.status.text()
    qtbot.wait(50)  # the layout asks its widgets again
    assert w.minimumSizeHint().width() == narrow


def test_the_script_column_is_ready_before_it_is_first_shown(qtbot, monkeypatch):
    """The table of every code point's script (built once) is built by a worker when the view
    is made, not by the first paint of the Script column on the GUI thread."""
    import threading

    from bpeinspect.core import scripts
    from bpeinspect.gui.concurrency import all_idle

    built = []
    build = scripts._script_table.__wrapped__

    def recording():
        built.append(threading.current_thread() is threading.main_thread())
        return build()

    monkeypatch.setattr(scripts, "_script_table", recording)
    view = VocabBrowser()
    qtbot.addWidget(view)
    qtbot.waitUntil(all_idle, timeout=30000)
    assert built and not built[0]  # built, first by a worker
