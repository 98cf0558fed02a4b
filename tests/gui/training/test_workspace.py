"""The training workspace: the whole flow on real corpora, cancel and resume, bad input,
saving, the main window hook, and the event loop staying free while training runs."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from bpeinspect.core import train_tokenizer
from bpeinspect.core.train.corpus import FileFilter, iter_corpus
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.training.workspace import TrainingWorkspace
from tests.gui.conftest import wait_idle, wait_jobs
from tests.paths import SHARED

TAYLOR = SHARED / "corpora" / "taylorswift.txt"
MINBPE_REFERENCE = SHARED / "reference" / "minbpe-taylorswift-merges.json"
MERGE_TEXT = re.compile(r"^\[.*\]\[.*\] → \[.*\]$")
# Where to keep the screenshots for people to look at (CI artifacts); a temp dir otherwise.
SHOTS = os.environ.get("BPEINSPECT_SCREENSHOTS")


def synthetic_corpus(n_bytes: int, seed: int = 7) -> str:
    """Random words of Latin and Cyrillic syllables: many distinct pre-tokens, so training
    to 20k tokens takes a few seconds (long enough to watch, cancel and probe)."""
    rng = random.Random(seed)
    alpha = "abcdefghijklmnopqrstuvwxyzабвгдежзиклмнопрстуфхцчшщыэюя"
    syllables = ["".join(rng.choice(alpha) for _ in range(rng.randint(1, 3))) for _ in range(400)]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(60000)]
    out, size = [], 0
    while size < n_bytes:
        line = " ".join(rng.choice(words) for _ in range(12)) + ".\n"
        out.append(line)
        size += len(line.encode("utf-8"))
    return "".join(out)


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "synthetic.txt"
    path.write_text(synthetic_corpus(1_500_000), encoding="utf-8")
    return path


@pytest.fixture
def registry():
    return TokenizerRegistry()


@pytest.fixture
def ws(qtbot, registry):
    w = TrainingWorkspace(registry)
    qtbot.addWidget(w)
    w.resize(1200, 780)
    w.show()
    yield w
    w.shutdown()
    wait_stopped(qtbot, w)
    wait_jobs(qtbot, w.saver)


def add_corpus(qtbot, ws: TrainingWorkspace, *paths) -> None:
    ws.form.corpus.add_paths([str(p) for p in paths])
    wait_jobs(qtbot, ws.form.corpus.jobs)


def wait_stopped(qtbot, ws: TrainingWorkspace, timeout: int = 30000) -> None:
    """Wait for the run's worker to end (``runningChanged(False)``)."""
    if ws.is_running():
        with qtbot.waitSignal(ws.runningChanged, timeout=timeout, check_params_cb=lambda running: not running):
            pass


def train(qtbot, ws: TrainingWorkspace, timeout: int = 60000):
    """Click Train and wait for the outcome; returns (outcome, reports)."""
    reports = []
    ws.progressed.connect(reports.append)
    with qtbot.waitSignal(ws.trainingFinished, timeout=timeout) as blocker:
        qtbot.mouseClick(ws.train_button, Qt.MouseButton.LeftButton)
    wait_stopped(qtbot, ws, timeout)
    ws.progressed.disconnect(reports.append)
    return blocker.args[0], reports


def shoot(ws: TrainingWorkspace, tmp_path: Path, name: str) -> Path:
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / name
    assert ws.grab().save(str(out), "PNG")
    return out


# -- the whole flow -----------------------------------------------------------------------------


def test_a_finished_run_opens_its_tokenizers_one_per_turn_then_says_it_has_finished(qtbot, ws, registry):
    """Every panel that lists the open tokenizers follows each one that joins, and the panes
    and docks follow the current one: all of it in the turn the run ended held the window
    for 100-200 ms."""
    from PySide6.QtCore import QTimer

    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText("300, 400")
    turns, events = [0], []
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: turns.__setitem__(0, turns[0] + 1))
    registry.added.connect(lambda tok: events.append(("added", tok.n_vocab, turns[0])))
    registry.currentChanged.connect(lambda tok: events.append(("current", tok.n_vocab, turns[0])))
    ws.trainingFinished.connect(lambda _outcome: events.append(("finished", None, turns[0])))
    ticker.start()
    train(qtbot, ws)
    ticker.stop()
    # (the first joins an empty registry, which makes it current in its turn)
    expected = [("added", 300), ("current", 300), ("added", 400), ("current", 400), ("finished", None)]
    assert [e[:2] for e in events] == expected
    steps = [events[k][2] for k in (0, 2, 3, 4)]
    assert steps == sorted(set(steps))  # a turn each
    assert not ws.pending() and registry.current() is registry.tokenizers()[-1]


def test_train_several_sizes_on_files_and_a_folder(qtbot, ws, registry, tmp_path):
    folder = tmp_path / "docs"
    (folder / "more").mkdir(parents=True)
    (folder / "ru.txt").write_text("Быстрая коричневая лиса перепрыгивает через ленивую собаку.\n" * 20, encoding="utf-8")
    (folder / "more" / "code.py").write_text("def f(x):\n    return x + 1\n" * 30, encoding="utf-8")
    add_corpus(qtbot, ws, TAYLOR, folder)
    rows = {ws.form.corpus.tree.topLevelItem(i).text(0): ws.form.corpus.tree.topLevelItem(i) for i in range(2)}
    assert rows["docs/"].text(1) == "2"
    assert "Cyrillic" in rows["docs/"].text(3) and rows["taylorswift.txt"].text(3) == "Latin 100%"
    assert rows["taylorswift.txt"].text(2) == "181.4 KB"
    ws.form.sizes_edit.setText("300, 1k, 2000")
    ws.form.specials_edit.setText("<|endoftext|>")
    outcome, reports = train(qtbot, ws)

    assert [r.phase for r in reports][-1] == "done" and "counting" in {r.phase for r in reports}
    done = [r.merges_done for r in reports]
    assert done == sorted(done) and done[-1] == outcome.merges == 2000 - 257
    assert sum(len(r.new_merges) for r in reports) == outcome.merges  # every merge reported once
    assert not outcome.stopped and not outcome.exhausted
    # the bytes/token curve has a point per merge, however few the reports
    assert len(reports) < outcome.merges and ws.plots.vocab.n >= outcome.merges
    bpt = ws.plots.bpt.view()
    assert (bpt[1:] >= bpt[:-1] - 1e-9).all() and len(set(bpt.round(6))) > len(reports)

    texts = list(iter_corpus([TAYLOR, folder], "gpt4"))
    toks = registry.tokenizers()
    assert [t.name for t in toks] == ["taylorswift and docs · 300", "taylorswift and docs · 1k", "taylorswift and docs · 2k"]
    assert registry.current() is toks[-1]
    # results join the picker, not the overlay, until the user asks
    assert not any(registry.is_shown(t) for t in toks)
    ws.results.setCurrentRow(1)
    ws.show_button.click()
    assert registry.is_shown(toks[1]) and registry.current() is toks[1] and not registry.is_shown(toks[2])
    for tok, size in zip(toks, (300, 1000, 2000), strict=True):
        ref = train_tokenizer(texts, size, pattern="gpt4", special_tokens=["<|endoftext|>"])
        assert tok.n_vocab == size
        assert tok.merges == ref.merges
        assert tok.special_tokens == ref.special_tokens == {"<|endoftext|>": size - 1}
        assert tok.training.counts == ref.training.counts
        s = tok.training.settings
        assert s["vocab_size"] == size and s["sizes"] == [300, 1000, 2000] and s["pattern"] == "gpt4"
        assert [Path(c).resolve() for c in s["corpus"]] == [TAYLOR.resolve(), folder.resolve()]
        assert s["history"]["vocab_size"] and max(s["history"]["vocab_size"]) <= size
        text = "Taylor Swift <|endoftext|> лиса\n"
        assert tok.decode(tok.encode(text, allowed_special="all")) == text

    # the view shows the end of the run
    assert ws.progress.value() == ws.progress.maximum() == outcome.merges
    assert "merges/s" in ws.rate_label.text()
    assert MERGE_TEXT.match(ws.merge_label.text())
    last = reports[-1].merge
    assert ws.merge_info.text().startswith(f"×{last.count:,}")
    assert ws.plots.merge_index.n == outcome.merges and ws.plots.vocab.n >= 2
    assert ws.results.count() == 3 and "Done" in ws.phase_label.text()
    assert ws.train_button.isEnabled() and not ws.cancel_button.isEnabled()
    shoot(ws, tmp_path, "training-done.png")


def test_merges_are_minbpes(qtbot, ws, registry):
    # the reference merges minbpe's own code learned on the same file
    ref = json.loads(MINBPE_REFERENCE.read_text())["taylorswift_regex_gpt4_1024"]
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText(str(ref["vocab_size"]))
    train(qtbot, ws)
    tok = registry.current()
    assert [[a, b, 256 + i] for i, (a, b) in enumerate(tok.merges)] == ref["merges"]


def test_hf_tie_break_and_custom_pattern(qtbot, ws, registry):
    add_corpus(qtbot, ws, TAYLOR)
    pattern = r"\p{L}+| ?\d|\s+|."
    ws.form.set_custom_pattern(pattern)
    ws.form.tie_combo.setCurrentIndex(ws.form.tie_combo.findData("hf"))
    ws.form.sizes_edit.setText("400, 600")
    train(qtbot, ws)
    text = TAYLOR.read_text(encoding="utf-8")
    for tok, size in zip(registry.tokenizers(), (400, 600), strict=True):
        ref = train_tokenizer(text, size, pattern=pattern, tie_break="hf")
        assert tok.merges == ref.merges and tok.mergeable_ranks == ref.mergeable_ranks
        assert tok.split_rule.pattern == pattern
        assert tok.training.settings["tie_break"] == "hf"


def test_the_thread_fallback_trains_the_same(qtbot, ws, registry):
    # where no child Python can start (a frozen app), training runs in a thread here
    ws.in_process = True
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText("300, 1k")
    kinds = []
    ws.trainingStarted.connect(lambda plan: kinds.append(type(ws.job.run_).__name__))
    outcome, reports = train(qtbot, ws)
    assert kinds == ["TrainingRun"] and reports[-1].phase == "done"
    text = TAYLOR.read_text(encoding="utf-8")
    for tok, size in zip(registry.tokenizers(), (300, 1000), strict=True):
        assert tok.merges == train_tokenizer(text, size, pattern="gpt4").merges


def test_a_corpus_that_runs_out_of_pairs(qtbot, ws, registry, tmp_path):
    small = tmp_path / "small.txt"
    small.write_text("abab cdcd abab", encoding="utf-8")
    add_corpus(qtbot, ws, small)
    ws.form.sizes_edit.setText("258, 1k")
    outcome, _ = train(qtbot, ws)
    assert outcome.exhausted and outcome.merges == len(train_tokenizer("abab cdcd abab", 1000).merges)
    assert [t.name for t in registry.tokenizers()] == ["small · 258", f"small · {256 + outcome.merges}"]
    assert "ran out of pairs" in ws.phase_label.text() and "fewer than the 1,000 asked for" in ws.phase_label.text()
    assert registry.tokenizers()[-1].training.settings["ran_out_of_pairs"] is True  # the core says so
    # the bar shows the run finished, with the merges really made
    bar = ws.progress
    assert bar.value() == bar.maximum() == outcome.merges
    assert bar.text() == f"{outcome.merges:,} merges: ran out of pairs"
    shoot(ws, tmp_path, "training-out-of-pairs.png")


# -- cancel and resume --------------------------------------------------------------------------


def test_cancel_keeps_a_consistent_partial_vocabulary_and_resume_finishes(qtbot, ws, registry, big_corpus, tmp_path):
    add_corpus(qtbot, ws, big_corpus)
    ws.form.sizes_edit.setText("300, 20k")
    seen = []

    def on_report(r):
        seen.append(r)
        if r.merges_done >= 400 and not ws.is_cancelling():
            shoot(ws, tmp_path, "training-running.png")
            qtbot.mouseClick(ws.cancel_button, Qt.MouseButton.LeftButton)

    ws.progressed.connect(on_report)
    with qtbot.waitSignal(ws.trainingFinished, timeout=120000) as blocker:
        qtbot.mouseClick(ws.train_button, Qt.MouseButton.LeftButton)
    outcome = blocker.args[0]
    wait_stopped(qtbot, ws, 30000)
    ws.progressed.disconnect(on_report)
    assert outcome.stopped and seen[-1].stopped
    assert 400 <= outcome.merges < 20480 - 256
    small, partial = registry.tokenizers()
    assert small.name == "synthetic · 300" and small.n_vocab == 300
    assert partial.name.endswith("(partial)") and partial.n_vocab == 256 + outcome.merges
    assert registry.current() is partial and not registry.is_shown(partial)  # no pane for a partial size
    assert partial.training.settings["stopped"] is True and partial.training.settings["finished"] is False
    texts = list(iter_corpus([big_corpus], "gpt4"))
    ref = train_tokenizer(texts, 256 + outcome.merges, pattern="gpt4")
    assert partial.merges == ref.merges and partial.training.counts == ref.training.counts
    assert small.merges == ref.merges[: 300 - 256]
    sample = big_corpus.read_text(encoding="utf-8")[:5000]
    assert partial.decode(partial.encode(sample)) == sample
    assert "Cancelled" in ws.phase_label.text() and ws.resume_button.isVisible()
    assert ws.train_button.isEnabled() and ws.form.sizes_edit.isEnabled()

    # resume: the run goes on from where it stopped, to the same result as one whole run
    with qtbot.waitSignal(ws.trainingFinished, timeout=120000) as blocker:
        qtbot.mouseClick(ws.resume_button, Qt.MouseButton.LeftButton)
    wait_stopped(qtbot, ws, 30000)
    final = blocker.args[0]
    assert not final.stopped
    full = registry.current()
    assert full.name == "synthetic · 20k" and full.n_vocab == 20000
    assert [t.name for t in registry.tokenizers()] == ["synthetic · 300", partial.name, "synthetic · 20k"]
    assert full.merges == train_tokenizer(texts, 20000, pattern="gpt4").merges
    assert not ws.resume_button.isVisible()


def test_a_crashed_training_process_is_a_message(qtbot, ws, registry, big_corpus):
    add_corpus(qtbot, ws, big_corpus)
    ws.form.sizes_edit.setText("20k")

    def kill(report):
        if report.merges_done > 100 and ws.job.run_._proc is not None:
            ws.job.run_._proc.kill()

    ws.progressed.connect(kill)
    with qtbot.waitSignal(ws.trainingFailed, timeout=60000) as blocker:
        ws.start()
    wait_stopped(qtbot, ws, 30000)
    assert "the training process ended unexpectedly" in blocker.args[0]
    assert "Training failed" in ws.message.text() and len(registry) == 0
    assert ws.train_button.isEnabled()


def test_cancel_while_reading_the_corpus_keeps_nothing(qtbot, ws, registry, big_corpus):
    add_corpus(qtbot, ws, big_corpus)
    ws.form.sizes_edit.setText("1k")
    ws.trainingStarted.connect(lambda plan: ws.cancel())  # before the first report
    with qtbot.waitSignal(ws.trainingFinished, timeout=60000) as blocker:
        ws.start()
    wait_stopped(qtbot, ws, 30000)
    assert blocker.args[0].stopped and blocker.args[0].tokenizers == []
    assert len(registry) == 0 and "nothing to keep" in ws.phase_label.text()
    assert ws.progress.maximum() > 0  # not left spinning


# -- invalid input ------------------------------------------------------------------------------


def refused(qtbot, ws, registry) -> str:
    """Click Train; it must refuse with a message and start nothing."""
    qtbot.mouseClick(ws.train_button, Qt.MouseButton.LeftButton)
    assert not ws.is_running() and len(registry) == 0
    return ws.message.text()


def test_no_corpus(qtbot, ws, registry):
    assert "Add a corpus first" in refused(qtbot, ws, registry)


@pytest.mark.parametrize(
    "case",
    [
        ("200", "", "Vocabulary size 200 is too small: 256 bytes leave no room"),
        ("257, 1k", "<|a|>", "Vocabulary size 257 is too small: 256 bytes and 1 special tokens"),
        ("abc", "", "'abc' is not a vocabulary size"),
        ("", "", "no vocabulary size given"),
        ("9999999", "", "too large"),
    ],
)
def test_bad_sizes(qtbot, ws, registry, case):
    sizes, specials, expected = case
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText(sizes)
    ws.form.specials_edit.setText(specials)
    assert expected in refused(qtbot, ws, registry)


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "", r"(?:(a|aa)+)+b"])
def test_bad_regex_is_explained_live_and_refused(qtbot, ws, registry, pattern):
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sample_edit.setText("a" * 40)
    ws.form.set_custom_pattern(pattern)
    shown = ws.form.pattern_message.text()
    assert shown.startswith("⚠") and ("compile" in shown or "empty" in shown or "takes over" in shown)
    assert ws.form.preview.text() == ""
    assert "Split pattern" in refused(qtbot, ws, registry)
    ws.form.set_custom_pattern(r"\w+|\W")  # fixing it clears the warning
    assert not ws.form.pattern_message.text().startswith("⚠") and ws.form.preview.text()


def test_live_preview_follows_the_preset(qtbot, ws):
    ws.form.sample_edit.setText("Hello  world\\n")
    ws.form.pattern_combo.setCurrentIndex(ws.form.pattern_combo.findData("cl100k"))
    assert ws.form.pattern_message.text().startswith("4 pre-tokens")  # Hello, " ", " world", "\n"
    assert "␣world" in ws.form.preview.text() and "↵" in ws.form.preview.text()
    ws.form.pattern_combo.setCurrentIndex(ws.form.pattern_combo.findData("none"))
    assert ws.form.pattern_message.text().startswith("1 pre-tokens")
    assert ws.form.pattern() is None


def test_non_utf8_file_seen_in_the_summary(qtbot, ws, registry, tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("café olé".encode("latin-1"))
    add_corpus(qtbot, ws, TAYLOR, bad)
    item = ws.form.corpus.tree.topLevelItem(1)
    assert "not UTF-8" in item.text(3)
    msg = refused(qtbot, ws, registry)
    assert "latin1.txt: not UTF-8 text (byte 0xe9 at offset 3)" in msg
    ws.form.corpus.remove_path(bad.resolve())
    assert ws.start()  # without it, training goes ahead
    wait_stopped(qtbot, ws, 60000)


def test_non_utf8_past_the_sample_fails_cleanly(qtbot, ws, registry, tmp_path):
    bad = tmp_path / "late.txt"
    bad.write_bytes(b"plain text " * 10000 + b"\xff tail")
    add_corpus(qtbot, ws, bad)
    assert ws.form.corpus.problems() == []  # the summary only samples the start
    with qtbot.waitSignal(ws.trainingFailed, timeout=60000) as blocker:
        ws.start()
    wait_stopped(qtbot, ws, 30000)
    assert "late.txt: not UTF-8 text (byte 0xff at offset 110000" in blocker.args[0]
    assert "Training failed" in ws.message.text() and len(registry) == 0
    assert ws.train_button.isEnabled() and ws.form.sizes_edit.isEnabled()


def test_empty_corpus_files(qtbot, ws, registry, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    add_corpus(qtbot, ws, empty)
    with qtbot.waitSignal(ws.trainingFailed, timeout=30000) as blocker:
        ws.start()
    wait_stopped(qtbot, ws, 30000)
    assert "the corpus is empty" in blocker.args[0] and len(registry) == 0


def test_missing_and_empty_folders(qtbot, ws, registry, tmp_path):
    ws.form.corpus.add_paths([str(tmp_path / "gone.txt")])
    assert "gone.txt: no such file or folder" in ws.message.text()
    (tmp_path / "nothing").mkdir()
    add_corpus(qtbot, ws, tmp_path / "nothing")
    assert "the folder holds no text files" in refused(qtbot, ws, registry)


@pytest.mark.parametrize("target", ["list", "workspace"])
def test_corpus_from_a_drop(qtbot, ws, tmp_path, target):
    from PySide6.QtCore import QMimeData, QPoint, QUrl
    from PySide6.QtGui import QDropEvent

    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.txt")), QUrl.fromLocalFile(str(TAYLOR))])
    widget = ws.form.corpus.tree if target == "list" else ws
    event = QDropEvent(QPoint(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    widget.dropEvent(event)
    assert event.isAccepted()
    wait_jobs(qtbot, ws.form.corpus.jobs)
    assert ws.form.corpus.paths() == [(tmp_path / "a.txt").resolve(), TAYLOR.resolve()]
    assert ws.form.default_name() == "a and taylorswift"  # no cryptic "a+1"


def test_save_dialog_picks_the_format_and_suffix(qtbot, ws, registry, tmp_path, monkeypatch):
    formats = pytest.importorskip("bpeinspect.core.io.formats")
    from bpeinspect.gui.training import workspace as training

    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText("300")
    train(qtbot, ws)
    for label, (fmt, suffix) in training.SAVE_FILTERS.items():
        if fmt == "gpt2":
            continue
        target = tmp_path / f"out-{fmt}"  # no suffix: the dialog's filter adds it
        monkeypatch.setattr(training.QFileDialog, "getSaveFileName", lambda *a, t=target, lab=label: (str(t), lab))
        qtbot.mouseClick(ws.save_button, Qt.MouseButton.LeftButton)
        wait_jobs(qtbot, ws.saver, 30000)
        written = target.with_name(target.name + suffix)
        assert written.is_file(), (fmt, ws.message.text())
        assert formats.detect_format(written) == fmt
    monkeypatch.setattr(training.QFileDialog, "getSaveFileName", lambda *a: ("", ""))  # cancelled
    qtbot.mouseClick(ws.save_button, Qt.MouseButton.LeftButton)
    assert not ws.saver.is_busy()


# -- saving -------------------------------------------------------------------------------------


def test_save_in_every_format(qtbot, ws, registry, tmp_path):
    formats = pytest.importorskip("bpeinspect.core.io.formats")
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.pattern_combo.setCurrentIndex(ws.form.pattern_combo.findData("gpt2"))  # what GPT-2's files imply
    ws.form.sizes_edit.setText("600")
    ws.form.specials_edit.setText("<|endoftext|>")
    train(qtbot, ws)
    tok = registry.current()
    targets = {
        "native": tmp_path / "t.json",
        "tiktoken": tmp_path / "t.tiktoken",
        "huggingface": tmp_path / "tokenizer.json",
        "minbpe": tmp_path / "t.model",
        "gpt2": tmp_path / "gpt2-folder",
    }
    for fmt, path in targets.items():
        ws.save_tokenizer(tok, path, fmt)
        wait_jobs(qtbot, ws.saver, 30000)
        assert f"Saved {tok.name} to" in ws.message.text(), (fmt, ws.message.text())
        assert ("Note:" in ws.message.text().splitlines()[-1]) == (fmt == "tiktoken")  # ranks only
        ws.message.clear()
    text = TAYLOR.read_text(encoding="utf-8")[:20000] + " <|endoftext|> ünïcödé 😀"
    expected = tok.encode(text, allowed_special="all")
    for fmt, path in targets.items():
        kwargs = {"pattern": "gpt2", "special_tokens": tok.special_tokens} if fmt == "tiktoken" else {}
        loaded = formats.load_path(path, **kwargs)
        assert loaded.encode(text, allowed_special="all") == expected, fmt
    native = formats.load_path(targets["native"])
    assert native.training.settings == tok.training.settings  # settings and history
    assert native.training.counts == tok.training.counts
    assert native.training.settings["history"]["bytes_per_token"]


def test_save_error_is_a_message(qtbot, ws, registry, tmp_path):
    pytest.importorskip("bpeinspect.core.io.formats")
    add_corpus(qtbot, ws, TAYLOR)
    ws.form.sizes_edit.setText("300")
    train(qtbot, ws)
    ws.save_tokenizer(registry.current(), tmp_path / "no" / "such" / "dir.json", "native")
    wait_jobs(qtbot, ws.saver, 30000)
    assert "Could not save" in ws.message.text()
    assert not (tmp_path / "no").exists()


# -- in the main window -------------------------------------------------------------------------


def test_results_show_in_the_main_window_overlay(qtbot, panel_window, tmp_path):
    window = panel_window
    train_action = next(a for a in window.menuBar().actions() if a.text() == "&Tokenizers").menu().actions()[-1]
    assert train_action.text() == "Train a tokenizer…"
    train_action.trigger()
    ws = window.panels.view("training")
    try:
        assert any(a.text() == "Training" for a in window.commands.menu("view/panels").actions())
        assert ws.isVisible() and ws.registry is window.registry
        add_corpus(qtbot, ws, TAYLOR)
        ws.form.sizes_edit.setText("300, 1k")
        window.set_text("Taylor Alison Swift is an American singer-songwriter.")
        train(qtbot, ws)
        wait_idle(qtbot, window)
        assert not window.panes.panes()  # the results join the picker, not the overlay ...
        for row in range(ws.results.count()):  # ... until the user asks
            ws.results.setCurrentRow(row)
            ws.show_button.click()
        wait_idle(qtbot, window)
        assert len(window.panes.panes()) == 2  # stacked, one pane per size
        counts = {e.tok.name: len(e.result.enc.ids) for e in window.registry.entries()}
        assert counts["taylorswift · 300"] > counts["taylorswift · 1k"]  # a bigger vocabulary, fewer tokens
        assert [p.tok.name for p in window.panes.panes()] == ["taylorswift · 300", "taylorswift · 1k"]
        window.resize(1000, 600)
        out = Path(SHOTS) if SHOTS else tmp_path
        out.mkdir(parents=True, exist_ok=True)
        assert window.grab().save(str(out / "training-main-window.png"), "PNG")
        assert window.registry.current().name == "taylorswift · 1k"
    finally:
        ws.shutdown()


def test_a_trained_tokenizer_renamed_shows_the_name_everywhere_and_is_saved_under_it(qtbot, panel_window, tmp_path):
    from PySide6.QtWidgets import QLineEdit

    from bpeinspect.core.io.formats import load_path

    window = panel_window
    window.commands["panels.training"].trigger()
    ws = window.panels.view("training")
    try:
        add_corpus(qtbot, ws, TAYLOR)
        ws.form.sizes_edit.setText("300")
        window.set_text("Taylor Alison Swift is an American singer-songwriter.")
        train(qtbot, ws)
        ws.show_button.click()
        wait_idle(qtbot, window)
        tok = ws.selected_tokenizer()
        assert tok is not None and tok.name == "taylorswift · 300"
        window.commands["panels.languages"].trigger()
        languages = window.panels.view("languages")
        with qtbot.waitSignal(languages.statsReady, timeout=60000):
            languages.set_source("fable")
        # renamed in place: Rename (or F2) opens the name alone for editing, Enter commits it
        assert ws.rename_button.isEnabled()
        ws.rename_button.click()
        editor = ws.results.viewport().findChild(QLineEdit)
        assert editor is not None and editor.text() == "taylorswift · 300"
        editor.setText("  Taylor   lyrics ")
        with qtbot.waitSignal(languages.statsReady, timeout=60000) as blocker:
            qtbot.keyClick(editor, Qt.Key.Key_Return)
        name = "Taylor lyrics"
        assert tok.name == name
        assert ws.results.currentItem().text() == f"{name} — 300 tokens"
        assert window.toolbar.picker.currentText() == name  # the picker
        (pane,) = window.panes.panes()
        assert pane.tok is tok and name in pane.title.text()  # the overlay's pane
        assert window.status_line.text().startswith(f"{name}: ")  # the status line
        assert name in blocker.args[0].tokenizers  # the Languages panel counts it under the new name
        assert name in [languages.focus_box.itemText(i) for i in range(languages.focus_box.count())]
        # what is saved keeps the name, and the save dialog offers it
        ws.save_tokenizer(tok, tmp_path / "renamed.json", "native")
        wait_jobs(qtbot, ws.saver)
        assert load_path(tmp_path / "renamed.json").name == name
        # an empty name is refused with a message, and the old one stays
        assert not ws.rename_tokenizer(tok, "   ")
        assert tok.name == name and "needs a name" in ws.message.text()
    finally:
        ws.shutdown()


def test_resume_is_offered_only_with_merges_left(qtbot, ws):
    from types import SimpleNamespace

    from bpeinspect.core.train.plan import TrainingOutcome

    job = SimpleNamespace(
        plan=SimpleNamespace(sizes=[300], name="x"), run_=SimpleNamespace(merges_total=44), history={}
    )
    ws._on_finished(job, TrainingOutcome([], stopped=True, exhausted=False, merges=10, seconds=0.1, history={}))
    ws._refresh_buttons()
    assert ws.resume_button.isVisible()  # cancelled with 34 merges to go
    ws._on_finished(job, TrainingOutcome([], stopped=True, exhausted=False, merges=44, seconds=0.1, history={}))
    ws._refresh_buttons()
    assert not ws.resume_button.isVisible()  # the cancel came as the last merge was made: nothing to resume


def test_a_long_status_line_wraps_and_keeps_the_form_in_the_window(qtbot, ws):
    ws.resize(1024, 700)
    ws.phase_label.setText(
        "The corpus ran out of pairs after 51,804 merges (812.4 s): 52,060 tokens, fewer than the 100,000 asked "
        "for. Made: " + ", ".join(f"a-corpus-with-a-long-name-{k}k" for k in range(1, 12))
    )
    qtbot.wait(50)
    assert ws.minimumSizeHint().width() <= 1024 and ws.train_button.geometry().right() <= ws.width()


def test_a_source_folder_with_binary_and_bad_files_trains_and_says_what_it_skipped(qtbot, ws, tmp_path):
    folder = tmp_path / "src"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__" / "m.cpython-312.pyc").write_bytes(b"\x00\x01\x02")
    (folder / "m.py").write_text("def f(x):\n    return x + 1\n" * 30, encoding="utf-8")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    # UTF-8 at its head, so listed; a Latin-1 line further in, found only when read
    (folder / "latin1.txt").write_bytes(b"the head is ascii\n" * 600 + b"caf\xe9 au lait\n")
    add_corpus(qtbot, ws, folder)
    row = ws.form.corpus.tree.topLevelItem(0)
    assert row.text(1) == "2 (+1 skipped)"
    assert "skipped 1 filtered out" in ws.form.corpus.total.text()
    assert "latin1.txt: not UTF-8 text" in row.toolTip(0)
    ws.form.sizes_edit.setText("270")
    outcome, _ = train(qtbot, ws)  # the form does not refuse the folder for one bad file
    assert sorted(p.name for p, _ in outcome.skipped) == ["latin1.txt", "logo.png"]
    assert "Skipped 2 files (1 left out by the file filter, 1 not UTF-8 text)" in ws.phase_label.text()


# -- the folder filter --------------------------------------------------------------------------


def wait_summaries(qtbot, ws: TrainingWorkspace) -> None:
    """Wait until the folder filter's edit has settled and the folders are counted again."""
    qtbot.waitUntil(lambda: not ws.form.folder_filter._timer.isActive(), timeout=5000)
    wait_jobs(qtbot, ws.form.corpus.jobs)


def test_the_folder_filter_changes_what_is_counted_and_trained(qtbot, ws, tmp_path):
    folder = tmp_path / "proj"
    files = {
        "notes.md": "markdown markdown markdown\n" * 5,
        "main.py": "python python python\n" * 5,
        "data.csv": "comma,comma,comma\n" * 5,
        "secret.txt": "hidden hidden hidden\n" * 5,
        ".gitignore": "secret.txt\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    add_corpus(qtbot, ws, folder)
    row = ws.form.corpus.tree.topLevelItem(0)
    assert row.text(1) == "3 (+1 skipped)"  # the default: text files by name, secret.txt ignored
    assert "skipped 1 ignored" in ws.form.corpus.total.text()

    ws.form.folder_filter.include_edit.setText("*.md, *.TXT")
    wait_summaries(qtbot, ws)
    assert row.text(1) == "1 (+3 skipped)"
    assert "skipped 1 ignored, 2 filtered out" in ws.form.corpus.total.text()
    ws.form.folder_filter.gitignore_check.setChecked(False)
    wait_summaries(qtbot, ws)
    assert row.text(1) == "2 (+2 skipped)"

    ws.form.sizes_edit.setText("262")
    outcome, _ = train(qtbot, ws)
    want = train_tokenizer([files["notes.md"], files["secret.txt"]], 262, pattern="gpt4")
    assert outcome.tokenizers[-1].merges == want.merges
    assert sorted(p.name for p, _ in outcome.skipped) == ["data.csv", "main.py"]
    assert "Skipped 2 files:" in ws.phase_label.text()


def test_the_folder_filter_is_remembered(qtbot, registry, tmp_path):
    from PySide6.QtCore import QSettings

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    first = TrainingWorkspace(registry, settings=settings)
    qtbot.addWidget(first)
    assert first.form.folder_filter.file_filter() == FileFilter()  # the default at first
    first.form.folder_filter.include_edit.setText("*.rst")
    first.form.folder_filter.exclude_edit.setText("build/, old")
    first.form.folder_filter.gitignore_check.setChecked(False)
    qtbot.waitUntil(lambda: not first.form.folder_filter._timer.isActive(), timeout=5000)
    settings.sync()
    again = TrainingWorkspace(registry, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(again)
    assert again.form.folder_filter.file_filter() == FileFilter(("*.rst",), ("build/", "old"), False)
    assert again.form.corpus.file_filter == FileFilter(("*.rst",), ("build/", "old"), False)
    qtbot.mouseClick(again.form.folder_filter.default_button, Qt.MouseButton.LeftButton)  # text files by name again
    qtbot.waitUntil(lambda: again.form.corpus.file_filter.include == FileFilter().include, timeout=5000)


def test_docked_in_a_small_window_the_workspace_asks_for_little_room(qtbot, ws, tmp_path):
    """Docked at the bottom of a 1024x700 window, the workspace must fit what the window has
    left (the window grew to 866 px high when the run asked for 447), and its set-up column
    must fit its 360 px (the corpus total beside the buttons cut it off)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    for i in range(3):
        (folder / f"n{i}.md").write_text("some words to count and merge\n" * 10, encoding="utf-8")
    (folder / "blob.txt").write_bytes(b"\x00" * 10)
    (folder / "pic.png").write_bytes(b"\x89PNG")
    add_corpus(qtbot, ws, folder)
    assert "skipped 1 binary, 1 filtered out" in ws.form.corpus.total.text()
    ws.form.sizes_edit.setText("300")
    train(qtbot, ws)
    hint = ws.minimumSizeHint()
    assert hint.height() <= 250 and hint.width() <= 600, hint
    assert ws.form.minimumSizeHint().width() <= 360


def test_train_stays_in_sight_when_the_panel_is_short(qtbot, ws):
    """Docked under the text at 1920x1200 the panel is about 300 px high: the form scrolls,
    the Train button must not scroll away with it."""
    ws.resize(1200, 260)
    qtbot.wait(50)
    top_left = ws.train_button.mapTo(ws, ws.train_button.rect().topLeft())
    assert ws.train_button.isVisible() and 0 <= top_left.y() and top_left.y() + ws.train_button.height() <= ws.height()
    assert ws.train_button.visibleRegion().boundingRect().height() == ws.train_button.height()


def test_the_trained_tokenizers_show_without_scrolling_in_a_1024x700_window(qtbot, ws):
    """The run column scrolls only when it must: the wrapped status lines made it as tall as
    their preferred height, and the results list fell below the fold."""
    ws.resize(1024, 700)
    qtbot.wait(50)
    assert ws.results.visibleRegion().boundingRect().height() == ws.results.height()


def test_the_split_preview_is_made_once_and_after_the_form_is_made(qtbot, monkeypatch):
    """Opening the panel draws no preview in the turn that makes it (probing fonts for the
    sample's characters was most of the first show), and the preset shown is split once."""
    from bpeinspect.gui.training import pattern
    from bpeinspect.gui.training.form import TrainingForm

    calls: list[str | None] = []
    real = pattern.preview_split

    def counting(rule, text, timeout=0.25):
        calls.append(rule)
        return real(rule, text, timeout=timeout)

    monkeypatch.setattr(pattern, "preview_split", counting)
    form = TrainingForm()
    qtbot.addWidget(form)
    assert calls == [] and form.preview.text() == ""
    qtbot.waitUntil(lambda: form.preview.text() != "")
    assert calls == ["gpt4"] and "␣world" in form.preview.text()
    assert form.pattern_message.text().endswith("merges never cross their edges")


def test_opening_the_panel_and_showing_a_result_keep_the_text_panes_width(qtbot, panel_window):
    """A text pane that changes width lays the whole text out again (a 10 MB text: a tenth of a
    second per pane): the stack of panes keeps its width when a panel docks below it and when
    one more pane makes it scroll."""
    from PySide6.QtCore import QEvent, QObject

    window = panel_window
    window.resize(1024, 700)
    small = [train_tokenizer("the cat sat on the mat " * 50, 256 + n, pattern="gpt4") for n in (3, 6, 9, 12)]
    for n, tok in enumerate(small[:2]):
        tok.name = f"small {n}"
        window.registry.add(tok, f"trained:small {n}")
    window.set_text("A line of text that wraps at the pane's width, and then some more. " * 400)
    wait_idle(qtbot, window)
    widths: list[tuple[int, int]] = []

    class Widths(QObject):
        def eventFilter(self, obj, e):
            if e.type() == QEvent.Type.Resize and e.oldSize().width() > 0 and e.oldSize().width() != e.size().width():
                widths.append((e.oldSize().width(), e.size().width()))
            return False

    watch = Widths()

    def watch_panes() -> None:
        for pane in window.panes.panes():
            pane.view.installEventFilter(watch)

    watch_panes()
    window.commands["panels.training"].trigger()
    qtbot.wait(300)
    wait_idle(qtbot, window)
    assert window.panels.docks["training"].isVisible()
    assert widths == []
    for n, tok in enumerate(small[2:], start=2):  # more panes than the stack's height holds: it scrolls
        tok.name = f"small {n}"
        window.registry.add(tok, f"trained:small {n}")
        qtbot.wait(100)
        watch_panes()
    wait_idle(qtbot, window)
    assert len(window.panes.panes()) == 4 and window.panes.verticalScrollBar().maximum() > 0
    assert widths == []


def test_a_long_current_merge_is_shortened_to_fit_the_run_box(qtbot, ws):
    """Beside a 1920 px window the text of a long merge ran past the panel's right edge."""
    from PySide6.QtWidgets import QLabel

    ws.resize(628, 700)
    ws.show()
    qtbot.waitExposed(ws)
    merge = "[" + "abcdefghij" * 12 + "][" + "klmnopqrst" * 12 + "] → [...]"
    ws.merge_label.setText(merge)
    qtbot.wait(20)
    label = ws.merge_label
    drawn = QLabel.text(label)
    assert label.toolTip() == merge and label.text() == merge
    assert label.fontMetrics().horizontalAdvance(drawn) <= label.width() and "…" in drawn
    assert label.geometry().right() <= label.parentWidget().width()
