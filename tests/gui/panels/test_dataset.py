"""The dataset panel: a file's records counted on the worker, drawn, listed and opened."""

from __future__ import annotations

import json

from bpeinspect.core import load_tokenizer
from bpeinspect.core.dataset import Target, count_dataset, fields_shape
from bpeinspect.gui.panels.dataset import DatasetView
from tests.gui.conftest import wait_idle, wait_jobs

SPECS = ["o200k_base", "gpt2"]


def chats(n: int) -> list[dict]:
    return [{"messages": [{"role": "user", "content": f"Question {i}: " + "why " * (i % 37)},
                          {"role": "assistant", "content": "Because. " * (i % 23 + 1)}]} for i in range(n)]  # fmt: skip


def write(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")


def make(qtbot) -> DatasetView:
    view = DatasetView()
    qtbot.addWidget(view)
    view.set_tokenizers([load_tokenizer(s) for s in SPECS], SPECS)
    return view


def cells(table, row: int) -> list[str]:
    return [table.item(row, c).text() for c in range(table.columnCount())]


def test_a_chat_dataset_is_counted_drawn_and_listed(qtbot, tmp_path):
    path = tmp_path / "train.jsonl"
    write(path, chats(300))
    view = make(qtbot)
    with qtbot.waitSignal(view.statsReady, timeout=60000) as got:
        view.open_file(path)
    stats = got.args[0]
    labels = [t.label for t in stats.tokenizers]  # the tokenizers' names
    want = count_dataset(path, [Target(n, load_tokenizer(s), spec=s) for n, s in zip(labels, SPECS)], longest=50)
    assert stats.as_dict()["tokenizers"] == want.as_dict()["tokenizers"]
    assert "300 records of chat messages" in view.status.text()
    head = [view.totals.horizontalHeaderItem(c).text() for c in range(view.totals.columnCount())]
    assert head[:6] == ["tokenizer", "chat template", "tokens", "user", "assistant", "template"]  # not two "template"
    for row, t in enumerate(want.tokenizers):
        assert cells(view.totals, row)[:6] == [t.label, t.template, f"{t.tokens:,}", f"{t.parts['user']:,}",
                                               f"{t.parts['assistant']:,}", f"{t.overhead:,}"]  # fmt: skip
    curves = view.histogram()
    assert list(curves) == labels
    assert all(sum(ys) == 300 for _, ys in curves.values())
    assert view.legend.isVisible()  # names the curves
    assert view.longest.rowCount() == 50
    assert not view.longest.wordWrap()  # a record a line
    assert cells(view.longest, 0)[0] == f"{want.longest[0].index + 1:,}"
    with qtbot.waitSignal(view.recordActivated) as opened:
        view.longest.cellClicked.emit(0, 1)
    assert opened.args[0] == want.longest[0].record


def test_the_empty_plot_has_no_legend_box(qtbot):
    view = make(qtbot)
    assert not view.histogram() and not view.legend.isVisible()


def test_unclear_records_ask_for_fields(qtbot, tmp_path):
    path = tmp_path / "notes.jsonl"
    write(path, [{"title": f"Note {i}", "body": "text " * i, "n": i} for i in range(40)])
    view = make(qtbot)
    view.open_file(path)
    wait_jobs(qtbot, view.jobs)
    assert view.fields_box.isVisibleTo(view) and view.stats is None
    names = [box.text() for box in view.field_boxes]
    assert sorted(names) == ["body", "title"]
    assert not view.count_button.isEnabled()
    view.field_boxes[names.index("body")].setChecked(True)
    assert view.count_button.isEnabled()
    with qtbot.waitSignal(view.statsReady, timeout=60000) as got:
        view.count_button.click()
    stats = got.args[0]
    assert stats.shape == fields_shape("body")
    tok = load_tokenizer("o200k_base")
    assert stats.tokenizers[0].tokens == sum(len(tok.encode("text " * i)) for i in range(40))
    assert not view.fields_box.isVisibleTo(view)


def test_cancel_keeps_what_was_counted(qtbot, tmp_path):
    path = tmp_path / "big.jsonl"
    write(path, chats(30000))
    view = make(qtbot)
    view.open_file(path)
    qtbot.waitUntil(lambda: view.jobs.pending("count") and view.progress.value() > 0, timeout=60000)
    with qtbot.waitSignal(view.statsReady, timeout=60000) as got:
        view.cancel_button.click()
    stats = got.args[0]
    assert stats.stopped and 0 < stats.records < 30000
    assert "stopped early" in view.status.text()
    assert not view.progress.isVisibleTo(view)


def test_a_clicked_record_opens_in_the_chat_panel(qtbot, panel_window, tmp_path):
    win = panel_window
    win.open_tokenizer("cl100k_base")
    wait_idle(qtbot, win)
    path = tmp_path / "train.jsonl"
    records = chats(50)
    write(path, records)
    view = win.panels.show("dataset")
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.open_file(path)
    view.open_record(0)
    chat = win.panels.views["chat"]
    assert chat.messages() == records[view.stats.longest[0].index]["messages"]
    qtbot.waitUntil(lambda: not chat.is_busy() and chat.result is not None, timeout=30000)
    assert not chat.generation_box.isChecked()  # a record is counted as it stands, without a reply header
    assert chat.result.count.total == view.stats.longest[0].tokens[0]  # the count the list shows
    plain = tmp_path / "plain.jsonl"
    write(plain, [{"prompt": f"p{i}", "completion": f"c{i}" * i} for i in range(20)])
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.open_file(plain)
    view.open_record(0)
    assert win.text() == "p19\n\n" + "c19" * 19


def test_a_dropped_dataset_opens_in_the_dataset_panel(qtbot, panel_window, tmp_path):
    win = panel_window
    win.open_tokenizer("gpt2")
    wait_idle(qtbot, win)
    path = tmp_path / "train.jsonl"
    write(path, chats(10))
    win.files.open_dropped([str(path)])
    view = win.panels.views["dataset"]
    with qtbot.waitSignal(view.statsReady, timeout=60000) as got:
        pass
    assert got.args[0].records == 10 and view.path == str(path)


def test_the_file_is_named_with_the_home_folder_as_a_tilde(qtbot, tmp_path, monkeypatch):
    """The label shows the path as people write it (``~/...``, the full path on hover), with a
    control character in a file name made visible rather than sent to the label as it is."""
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = tmp_path / "datasets"
    folder.mkdir()
    path = folder / "chats\x1b.jsonl"
    write(path, chats(5))
    view = make(qtbot)
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.open_file(path)
    assert view.file_label.text() == "~/datasets/chats␛.jsonl"
    assert view.file_label.toolTip() == f"{folder}/chats␛.jsonl"
    elsewhere = tmp_path.parent / (tmp_path.name + "-other.jsonl")  # a sibling that only starts like home
    write(elsewhere, chats(2))
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.open_file(elsewhere)
    assert view.file_label.text() == str(elsewhere)


def test_a_big_file_is_counted_on_children_below_the_windows_priority(qtbot, tmp_path, monkeypatch):
    import bpeinspect.gui.panels.dataset as panel
    from bpeinspect.core.dataset import counting
    from bpeinspect.core.pool import BACKGROUND_NICENESS, ProcessPool

    made = []

    class Recorded(ProcessPool):
        def __init__(self, processes=None, *, niceness=0):
            made.append((processes, niceness))
            super().__init__(2, niceness=niceness)

    monkeypatch.setattr(counting, "ProcessPool", Recorded)
    monkeypatch.setattr(panel, "POOL_FROM_BYTES", 0)  # every file counts as big
    path = tmp_path / "train.jsonl"
    write(path, chats(40))
    view = make(qtbot)
    with qtbot.waitSignal(view.statsReady, timeout=60000) as got:
        view.open_file(path)
    assert made == [(None, BACKGROUND_NICENESS)]  # on every core, niced like the Languages counts
    assert BACKGROUND_NICENESS > 0
    assert got.args[0].records == 40


def test_a_binary_file_opened_as_a_dataset_is_said_to_be_not_json(qtbot, tmp_path):
    path = tmp_path / "paper.pdf"
    path.write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" * 20)
    view = make(qtbot)
    view.open_file(path)
    wait_jobs(qtbot, view.jobs)
    assert "not JSON" in view.status.text() and "no records" not in view.status.text()
    assert view.status.tone == "error" and not view.fields_box.isVisibleTo(view)


def test_a_tokenizer_file_opened_as_a_dataset_is_said_so_without_a_field_picker(qtbot, tmp_path):
    path = tmp_path / "tokenizer.json"
    vocab = {f"t{i}": i for i in range(300)}
    path.write_text(json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": []}}), "utf-8")
    view = make(qtbot)
    view.open_file(path)
    wait_jobs(qtbot, view.jobs)
    assert not view.fields_box.isVisibleTo(view)
    assert "no text fields" in view.status.text() and "Open tokenizer file" in view.status.text()
    assert view.status.tone == "error"


def test_the_histogram_is_drawn_only_once_a_dataset_is_counted(qtbot, tmp_path):
    """Its empty axes were most of the panel's first paint: a note stands in for it until then."""
    view = make(qtbot)
    view.resize(900, 500)
    view.show()
    qtbot.waitExposed(view)
    assert not view.plot.isVisible() and view.plot_note.isVisible()
    path = tmp_path / "train.jsonl"
    write(path, chats(50))
    with qtbot.waitSignal(view.statsReady, timeout=60000):
        view.open_file(path)
    assert view.plot.isVisible() and not view.plot_note.isVisible()


def test_a_finished_count_draws_the_plot_now_and_fills_each_table_in_a_later_turn_of_its_own(qtbot, tmp_path):
    """Drawing the plot and filling both tables in the turn the count came held the GUI thread
    for 60 ms with six tokenizers: each table is filled in a later turn of its own, and
    ``statsReady`` says so once both are."""
    from tests.gui.conftest import PaintTurns

    path = tmp_path / "train.jsonl"
    write(path, chats(120))
    view = make(qtbot)
    toks = [load_tokenizer(s) for s in SPECS]
    stats = count_dataset(path, [Target(s, t, spec=s) for s, t in zip(SPECS, toks)], shape=None, longest=50)
    turns = PaintTurns([])
    filled = {}
    view.totals.model().rowsInserted.connect(lambda *_: filled.setdefault("totals", turns.turn))
    view.longest.model().rowsInserted.connect(lambda *_: filled.setdefault("longest", turns.turn))
    turns.start()
    with qtbot.waitSignal(view.statsReady, timeout=5000):
        view._done(stats)
        assert list(view.histogram()) == SPECS  # the plot now
        assert filled == {}
    turns.stop()
    assert 0 < filled["totals"] < filled["longest"]
    assert view.totals.rowCount() == len(SPECS) and view.longest.rowCount() == 50
