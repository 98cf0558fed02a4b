"""The open tokenizers as one list model: order asked for, current one, results, and Qt's model rules."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.live_text import EncodeResult, LiveEncoding, LiveText
from bpeinspect.gui.registry import (
    RESULT_ROLE,
    SPEC_ROLE,
    TOKENIZER_ROLE,
    TokenizerRegistry,
    follow_rows,
    specs_of,
    tokenizers_of,
)
from bpeinspect.gui.turns import pending


@pytest.fixture(scope="module")
def toks():
    return {name: load_tokenizer(name) for name in ("r50k_base", "cl100k_base", "o200k_base")}


def test_rows_follow_the_order_asked_for_not_the_order_loaded(qtmodeltester, toks):
    reg = TokenizerRegistry()
    qtmodeltester.check(reg, force_py=True)
    for name in ("o200k_base", "r50k_base", "cl100k_base"):
        reg.expect(name)
    assert reg.loading() == ["o200k_base", "r50k_base", "cl100k_base"] and reg.rowCount() == 0
    for name in ("cl100k_base", "r50k_base", "o200k_base"):  # the loads finish the other way round
        reg.add(toks[name], name)  # the tester checks every change as it happens
    assert specs_of(reg) == ["o200k_base", "r50k_base", "cl100k_base"]
    assert tokenizers_of(reg) == [toks["o200k_base"], toks["r50k_base"], toks["cl100k_base"]]
    assert reg.current() is toks["o200k_base"]  # the first asked for, though it came last
    assert reg.loading() == []
    ix = reg.index(1)
    assert ix.data() == "r50k_base" and ix.data(SPEC_ROLE) == "r50k_base" and ix.data(TOKENIZER_ROLE) is toks["r50k_base"]
    assert ix.data(Qt.ItemDataRole.ToolTipRole)


def test_current_moves_on_when_it_closes_and_signals_say_so(qtbot, qtmodeltester, toks):
    reg = TokenizerRegistry()
    qtmodeltester.check(reg, force_py=True)
    seen = []
    reg.currentChanged.connect(seen.append)
    reg.add(toks["r50k_base"], "r50k_base")
    reg.add(toks["cl100k_base"], "cl100k_base")
    reg.set_current(toks["cl100k_base"])
    assert reg.current_row() == 1
    with qtbot.waitSignals([reg.rowsRemoved, reg.removed, reg.currentChanged]):
        reg.remove(toks["cl100k_base"])
    assert seen == [toks["r50k_base"], toks["cl100k_base"], toks["r50k_base"]]
    reg.remove(toks["r50k_base"])
    assert reg.current() is None and reg.current_row() == -1 and len(reg) == 0
    with pytest.raises(ValueError, match="not open"):
        reg.set_current(toks["o200k_base"])


def test_a_failed_load_leaves_no_gap_and_reopening_goes_last(toks):
    reg = TokenizerRegistry()
    for name in ("o200k_base", "missing", "r50k_base"):
        reg.expect(name)
    reg.forget("missing")
    reg.add(toks["r50k_base"], "r50k_base")
    reg.add(toks["o200k_base"], "o200k_base")
    assert specs_of(reg) == ["o200k_base", "r50k_base"]
    reg.remove(toks["o200k_base"])
    reg.add(toks["o200k_base"], "o200k_base")  # not expected again: it goes to the end
    assert specs_of(reg) == ["r50k_base", "o200k_base"]
    reg.add(toks["o200k_base"], "again")  # already open: nothing happens
    assert len(reg) == 2 and reg.spec_of(toks["o200k_base"]) == "o200k_base"


def test_the_latest_encoding_lives_in_the_row(qtbot, qtmodeltester, toks):
    reg = TokenizerRegistry()
    qtmodeltester.check(reg, force_py=True)
    tok = toks["cl100k_base"]
    reg.add(tok, "cl100k_base")
    result = EncodeResult(tok, LiveEncoding(tok, LiveText("hello world")), 0.001, "segment")
    with qtbot.waitSignal(reg.dataChanged) as blocker:
        reg.set_result(tok, result, revision=3)
    assert blocker.args[2] == [RESULT_ROLE]
    assert reg.result(tok) is result and reg.entry(tok).revision == 3
    assert reg.index(0).data(RESULT_ROLE) is result
    reg.set_result(toks["r50k_base"], result, 1)  # not open: ignored
    assert reg.result(toks["r50k_base"]) is None


def test_follow_rows_calls_back_after_changes_once_and_each_view_in_a_turn_of_its_own(qtbot, toks):
    """A tokenizer added with four panels open had them all follow it in the turn it came, with
    its pane and first encoding: over 50 ms. Each view now follows in a later turn of its own."""
    from PySide6.QtCore import QTimer

    reg = TokenizerRegistry()
    calls, turns = [], []
    follow_rows(reg, lambda: calls.append(("a", len(reg))))
    follow_rows(reg, lambda: calls.append(("b", len(reg))))
    reg.add(toks["r50k_base"])
    reg.add(toks["o200k_base"])
    assert calls == [] and pending()  # not in the turn of the change
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: turns.append(len(calls)))
    ticker.start()
    qtbot.waitUntil(lambda: not pending(), timeout=2000)
    qtbot.wait(20)
    ticker.stop()
    assert calls == [("a", 2), ("b", 2)]  # once for both changes, in the order they were asked
    assert 1 in turns  # a turn of the event loop between the two
    own = Tokenizer.from_merges([(104, 105)], pattern=None)  # (a loaded tokenizer is shared: not renamed here)
    reg.add(own)
    reg.remove(toks["r50k_base"])
    reg.rename(own, "renamed")
    qtbot.waitUntil(lambda: len(calls) == 4, timeout=2000)
    qtbot.wait(20)
    assert calls[2:] == [("a", 2), ("b", 2)]
