"""The window's encoder: a big text is encoded on child processes, every tokenizer at once, with
its progress in the status bar, exactly as one full encode, and typing after it stays exact."""

from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QTextCursor

from bpeinspect.gui.window import document as document_module
from bpeinspect.gui.window import encoder as encoder_module
from bpeinspect.gui.window.document import normalize_newlines
from tests.core.corpus import PROSE, code_samples
from tests.core.live_text.test_edits import SAMPLE, assert_same
from tests.gui.conftest import wait_idle

PROGRESS = re.compile(r"Encoding [\d,]+ characters: o200k_base \d+% · cl100k_base \d+%")


@pytest.fixture
def big_text(monkeypatch: pytest.MonkeyPatch) -> str:
    """A text big enough to go to child processes (the thresholds lowered for a fast test)."""
    monkeypatch.setattr(encoder_module, "FAR_CHARS", 1 << 16)
    monkeypatch.setattr(document_module, "READ_PART", 1 << 14)  # a file is read (and fed) in many parts
    text = normalize_newlines("\n".join([SAMPLE, *PROSE, *code_samples(200_000)]))  # as the window holds it
    return text * (400_000 // len(text) + 1)


def _assert_exact(window) -> None:
    text = window.text()
    for pane in window.panes.panes():
        assert_same(pane.view.enc.encoding(), pane.tok.encode_with_offsets(text))


def _open_two(qtbot, window) -> None:
    window.open_tokenizer("o200k_base")
    window.open_tokenizer("cl100k_base")
    wait_idle(qtbot, window)


def test_a_big_file_is_encoded_on_child_processes_with_its_progress_in_the_status_bar(
    qtbot, window, big_text, children_given, tmp_path
) -> None:
    _open_two(qtbot, window)
    shown: list[str] = []
    window.encoder.partial.connect(lambda *_: shown.append(window.status_line.text()))
    path = tmp_path / "big.txt"
    path.write_text(big_text, encoding="utf-8")
    window.open_text_file(str(path))
    wait_idle(qtbot, window, timeout=120_000)
    assert window.text() == big_text
    assert any(PROGRESS.fullmatch(s) for s in shown), shown[:5]
    assert len({id(c) for c in children_given}) == 2  # both children encoded
    _assert_exact(window)
    status = window.status_line.text()
    assert status.startswith("o200k_base:") and "tokens" in status and "%" not in status
    # typing after the whole text was encoded stays exact
    cur = QTextCursor(window.document)
    cur.setPosition(len(big_text) // 2)
    for ch in "typed, 日本 😀\nnew line":
        cur.insertText(ch)
        qtbot.wait(1)
    wait_idle(qtbot, window)
    _assert_exact(window)


def test_a_big_text_is_coloured_where_the_panes_show_it_while_long_jobs_hold_the_threads(
    qtbot, window, big_text
) -> None:
    """The first screen of a big new text is coloured at once, even while every thread
    of the shared pool runs a long job (such as the merge tree linking a 100k vocabulary): the
    segments the panes show waited behind those jobs, and the screen stayed plain for seconds."""
    import threading

    from bpeinspect.gui.concurrency import Worker, shared_pool

    _open_two(qtbot, window)
    release = threading.Event()
    pool = shared_pool()
    holders = [Worker(release.wait, 60).start() for _ in range(pool.maxThreadCount())]
    try:
        qtbot.waitUntil(lambda: pool.activeThreadCount() >= pool.maxThreadCount(), timeout=5000)
        window.set_text(big_text)  # (a file is read on the pool: pasted, as it is once read)

        def coloured_on_screen() -> bool:
            views = [pane.view for pane in window.panes.panes()]
            return all(
                v.parts is not None and v.parts.part_at_u16(v.firstVisibleBlock().position()) is not None for v in views
            )

        qtbot.waitUntil(coloured_on_screen, timeout=20_000)
    finally:
        release.set()
        for holder in holders:
            holder.cancel()
    wait_idle(qtbot, window, timeout=120_000)
    _assert_exact(window)


def test_a_tokenizer_added_to_a_big_text_is_encoded_on_child_processes(qtbot, window, big_text, children_given) -> None:
    window.open_tokenizer("cl100k_base")
    window.set_text(big_text)
    wait_idle(qtbot, window, timeout=120_000)
    given = len(children_given)
    window.open_tokenizer("o200k_base")
    wait_idle(qtbot, window, timeout=120_000)
    assert len(children_given) > given
    _assert_exact(window)


def test_a_tokenizer_without_a_pane_is_encoded_off_the_gui_thread(qtbot, window, big_text, monkeypatch) -> None:
    """A trained tokenizer joins the picker without a pane: what the panes show is encoded at
    once on the GUI thread only for the tokenizers that have one (the rest is the children's)."""
    import threading

    from bpeinspect.core import load_tokenizer
    from tests.core.live_text.test_edits import assert_same

    window.open_tokenizer("cl100k_base")
    window.set_text(big_text)
    wait_idle(qtbot, window, timeout=120_000)
    gui, here = threading.get_ident(), []
    real = encoder_module.encode_segment

    def spy(tok, *args, **kwargs):
        if threading.get_ident() == gui:
            here.append(tok)
        return real(tok, *args, **kwargs)

    monkeypatch.setattr(encoder_module, "encode_segment", spy)
    tok = load_tokenizer("o200k_base")
    window.registry.add(tok, "o200k_base", shown=False)
    wait_idle(qtbot, window, timeout=120_000)
    assert tok not in here
    result = window.registry.result(tok)
    assert result is not None
    assert_same(result.enc.encoding(), tok.encode_with_offsets(big_text))


def test_a_tokenizer_joining_a_big_text_encodes_the_shown_segments_first_on_threads(
    qtbot, window, big_text, monkeypatch
) -> None:
    """The segments the panes show are coloured before the children start, by threads, one
    handed over per event-loop turn (on the GUI thread, one segment of a tokenizer whose split
    rule runs in Python held it for tens of ms), and the text ends exact."""
    import threading

    window.open_tokenizer("cl100k_base")
    window.set_text(big_text)
    wait_idle(qtbot, window, timeout=120_000)
    gui, encoded, on_gui = threading.get_ident(), [], []
    real, real_segment = encoder_module._encode_shown_segment, encoder_module.encode_segment

    def spy(tok, seg, head, should_stop):
        encoded.append(seg.text)
        return real(tok, seg, head, should_stop)

    def segment(tok, text, *args, **kwargs):
        if threading.get_ident() == gui and kwargs.get("previous") is None:
            on_gui.append(text)
        return real_segment(tok, text, *args, **kwargs)

    monkeypatch.setattr(encoder_module, "_encode_shown_segment", spy)
    monkeypatch.setattr(encoder_module, "encode_segment", segment)
    window.open_tokenizer("o200k_base")
    wait_idle(qtbot, window, timeout=120_000)
    assert encoded, "the shown segments were not encoded ahead of the round"
    assert not on_gui
    text = window.encoder.doc.live_text
    at = text.index_at_u16(window.encoder.focus)
    assert encoded[0] == text.segments[at].text  # the first shown segment is coloured first
    _assert_exact(window)


def test_a_tokenizer_joining_a_big_text_is_handed_to_the_round_a_bounded_number_of_segments_per_turn(
    qtbot, window, big_text, children_given, monkeypatch
) -> None:
    """Listing every segment of a long text for a new tokenizer, and handing them all to the
    round, held the GUI thread in one turn: each encoder turn now looks at HAND_OVER segments
    at most, from what the panes show on, and the text still ends exact."""
    import threading

    from bpeinspect.core.live_text import processes, segment_encoding

    monkeypatch.setattr(encoder_module, "HAND_OVER", 8)
    window.open_tokenizer("cl100k_base")
    window.set_text(big_text)
    wait_idle(qtbot, window, timeout=120_000)
    first = window.panes.panes()[0].view
    first.verticalScrollBar().setValue(first.verticalScrollBar().maximum() // 2)
    qtbot.waitUntil(lambda: window.encoder.focus > 0)
    gui = threading.get_ident()
    turns: list[list[int]] = [[]]  # segments listed or handed over on the GUI thread, per encoder turn
    handed: list[int] = []  # the indices of the segments handed to a round, in order
    real_pending, real_add = segment_encoding.LiveEncoding.pending, processes.Round.add

    def pending(live, among=None):
        todo = real_pending(live, among)
        if threading.get_ident() == gui:
            turns[-1].append(len(todo))
        return todo

    def add(work, segments):
        turns[-1].append(len(segments))
        handed.extend(seg.k for seg, _ in segments)
        return real_add(work, segments)

    monkeypatch.setattr(segment_encoding.LiveEncoding, "pending", pending)
    monkeypatch.setattr(processes.Round, "add", add)
    window.encoder.settled.connect(lambda: turns.append([]))
    given = len(children_given)
    window.open_tokenizer("o200k_base")
    wait_idle(qtbot, window, timeout=120_000)
    text = window.encoder.doc.live_text
    assert len(children_given) > given  # the round encoded it
    assert len(handed) > 4 * 8  # over several turns
    assert max(sum(t) for t in turns) <= 8, [sum(t) for t in turns]
    assert handed[0] >= text.index_at_u16(window.encoder.focus)  # from what the panes show on
    _assert_exact(window)


def test_closing_a_tokenizer_while_its_text_is_encoded_leaves_the_other_exact(qtbot, window, big_text) -> None:
    _open_two(qtbot, window)
    window.set_text(big_text)
    qtbot.waitUntil(lambda: window.encoder.progress(window.registry.find("o200k_base")) is not None)
    window.registry.remove(window.registry.find("o200k_base"))
    wait_idle(qtbot, window, timeout=120_000)
    assert [p.tok.name for p in window.panes.panes()] == ["cl100k_base"]
    _assert_exact(window)


def test_a_new_text_while_a_big_one_is_encoded_ends_exact(qtbot, window, big_text) -> None:
    _open_two(qtbot, window)
    window.set_text(big_text)
    qtbot.waitUntil(lambda: len(window.text()) > len(big_text) // 4)
    window.set_text(big_text[: len(big_text) // 2][::-1])
    wait_idle(qtbot, window, timeout=120_000)
    _assert_exact(window)


def test_while_a_big_file_is_encoded_the_readouts_say_so_and_compare_only_finished_counts(
    qtbot, window, big_text, tmp_path
) -> None:
    _open_two(qtbot, window)
    o200k = window.registry.find("o200k_base")
    window.registry.set_reference(o200k)
    wrong: list[str] = []
    counting: list[str] = []

    def look(*_args: object) -> None:
        going = window.encoder.progress(o200k)
        badge = window.count_badge
        if going is not None:
            counting.append(badge.chars.text())
            if badge.tokens.text() != "counting…" or not badge.chars.text().startswith(f"{going[1]:,} characters"):
                wrong.append(f"badge: {badge.tokens.text()} {badge.chars.text()}")
        for pane in window.panes.panes():
            header = pane.count.text()
            unfinished = [t.name for t in (pane.tok, o200k) if window.encoder.progress(t) is not None]
            if "vs" in header and unfinished:
                wrong.append(f"{pane.tok.name} compared while {unfinished} still encode: {header}")
            if window.encoder.progress(pane.tok) is not None and "encoding…" not in header:
                wrong.append(f"{pane.tok.name} shows a count while it encodes: {header}")

    # after the window's own slots: what the user sees once a signal is handled
    window.encoder.partial.connect(look)
    window.encoder.encoded.connect(look)
    window.registry.dataChanged.connect(look)
    path = tmp_path / "big.txt"
    path.write_text(big_text, encoding="utf-8")
    window.open_text_file(str(path))
    wait_idle(qtbot, window, timeout=120_000)
    assert counting and wrong == [], wrong[:5]
    look()
    assert window.count_badge.tokens.text() == f"{len(window.registry.result(o200k).enc):,} tokens"
    cl100k = window.panes.pane_of(window.registry.find("cl100k_base"))
    assert "% vs o200k_base" in cl100k.count.text()


def test_a_big_paste_over_the_whole_text_is_encoded_on_child_processes(
    qtbot, window, big_text, children_given, monkeypatch
) -> None:
    _open_two(qtbot, window)
    window.set_text(big_text)
    wait_idle(qtbot, window, timeout=120_000)
    given = len(children_given)
    batches = []  # segments encoded by threads of this process (they hold the GUI thread's lock)
    real = encoder_module._encode_batch
    monkeypatch.setattr(
        encoder_module, "_encode_batch", lambda tok, batch, **kw: batches.append(batch) or real(tok, batch, **kw)
    )
    monkeypatch.setattr(document_module, "FEED_BUDGET", 0.0)  # a slice per turn, well under FAR_CHARS
    new = "\n".join(reversed(big_text.splitlines()))  # another text of the same size
    cur = QTextCursor(window.document)
    cur.select(QTextCursor.SelectionType.Document)
    window.live.insert_text(cur, new)
    wait_idle(qtbot, window, timeout=120_000)
    assert window.text() == new
    # the text emptied on the way ended the first round; the new text had one of its own
    assert len(children_given) - given >= len(new) // encoder_module.FAR_CHARS
    assert not batches
    _assert_exact(window)


def test_while_a_round_encodes_a_big_text_a_turn_looks_only_at_the_segments_it_does_not_have(
    qtbot, window, big_text, monkeypatch
) -> None:
    """Once a big text is in, the round on child processes has every segment: the GUI thread's
    turns (the text's end going in, a keystroke) look only at the segments of later edits, never
    at every segment the round has yet to send back (ten thousand of them at 64 MB, per tokenizer
    and per turn); the keystroke is encoded here at once, and the text ends exact."""
    import threading

    from bpeinspect.core.live_text import LiveEncoding

    _open_two(qtbot, window)
    go = threading.Event()
    real_round = encoder_module.encode_round

    def held(work, should_stop=None, **kwargs):  # the round starts once the test lets it
        while not go.wait(0.01):
            if should_stop is not None and should_stop():
                return
        yield from real_round(work, should_stop=should_stop, **kwargs)

    monkeypatch.setattr(encoder_module, "encode_round", held)
    looked: list[int] = []
    real_head = LiveEncoding._head
    monkeypatch.setattr(LiveEncoding, "_head", lambda live, k: looked.append(k) or real_head(live, k))
    window.set_text(big_text)
    qtbot.waitUntil(lambda: not window.live.is_feeding(), timeout=60_000)
    qtbot.wait(100)  # the turns after the text is in
    assert window.encoder._far is not None and not go.is_set()
    n_segments = len(window.live.live_text.segments)
    assert len(looked) < 10, f"looked at {len(looked)} segments of {n_segments}"
    looked.clear()
    cur = QTextCursor(window.document)
    cur.setPosition(len(big_text) // 2)
    cur.insertText("x")
    qtbot.wait(50)
    assert 0 < len(looked) < 10, f"looked at {len(looked)} segments of {n_segments}"
    at = window.live.live_text.index_at_u16(len(big_text) // 2)
    for pane in window.panes.panes():  # the keystroke's segment is encoded, by this process
        assert pane.view.enc.part(at) is not None
    go.set()
    wait_idle(qtbot, window, timeout=120_000)
    _assert_exact(window)


def test_background_jobs_paused_by_typing_wait_while_a_round_encodes_a_big_text(
    qtbot, window, big_text, monkeypatch
) -> None:
    """Work nobody waits for (the merge tree's linking) took a core and the interpreter from the
    child processes and from the unpacking of what they send back: it waits for the round."""
    import threading

    from bpeinspect.gui.concurrency import Jobs

    _open_two(qtbot, window)
    go = threading.Event()
    real_round = encoder_module.encode_round

    def held(work, should_stop=None, **kwargs):  # the round goes on once the test lets it
        while not go.wait(0.01):
            if should_stop is not None and should_stop():
                return
        yield from real_round(work, should_stop=should_stop, **kwargs)

    monkeypatch.setattr(encoder_module, "encode_round", held)
    window.set_text(big_text)
    qtbot.waitUntil(lambda: window.encoder._far is not None, timeout=60_000)
    jobs = Jobs()
    ran: list[bool] = []
    jobs.submit("index", lambda should_stop: ran.append(should_stop()), paused_by=window.typing)
    qtbot.wait(window.typing.quiet * 1000 + 300)  # longer than a pause after typing
    assert ran == []
    go.set()
    wait_idle(qtbot, window, timeout=120_000)
    qtbot.waitUntil(lambda: ran == [False], timeout=10_000)
    _assert_exact(window)


def test_freeing_an_encoding_sent_back_does_not_build_its_columns() -> None:
    from bpeinspect.core import load_tokenizer
    from bpeinspect.core.live_text.processes import pack, unpack

    tok = load_tokenizer("cl100k_base")
    enc = tok.encode_with_offsets(SAMPLE * 20)
    (got,) = unpack([enc.text], pack([enc]), tok.token_bytes)
    assert not encoder_module.release_encoding(got, step=16)
    assert got.ids == [] and "piece_spans" not in vars(got)
