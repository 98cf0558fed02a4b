"""The training workspace: set up a training, watch it run, and inspect the result at once.

Training runs in a child process (:mod:`bpeinspect.core.train.process`) watched by a
:class:`~bpeinspect.gui.concurrency.Worker` running a :class:`~bpeinspect.core.train.plan.TrainingJob` in a pool
of its own (so it never takes a thread the window's encoding needs); this widget only shows the throttled reports
(progress, rate, time left, the current merge, two live plots). The
tokenizers it makes, one per asked-for size, join the :class:`TokenizerRegistry`, so the
main window's overlay and every other panel show them straight away.

>>> ws = TrainingWorkspace(window.registry)          # doctest: +SKIP
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import LEGEND, Tokenizer, TrainingProgress
from bpeinspect.core.io import saveable
from bpeinspect.core.train import TrainingJob, TrainingOutcome, format_merge, initial_token_bytes, skipped_note
from bpeinspect.gui.concurrency import Jobs, ProgressBar, Worker, describe_error
from bpeinspect.gui.message_bar import MessageBar, ToneLabel
from bpeinspect.gui.panels.token_list import ElidedLabel
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.training.form import TrainingForm
from bpeinspect.gui.training.plots import TrainingPlots, bytes_per_token_curve

if TYPE_CHECKING:
    from bpeinspect.gui.panels.context import PanelContext

# Save dialog filters -> (format name, suffix); bpeinspect's own first: it keeps the training
SAVE_FILTERS = {
    f"{f.description} ({f'*{f.suffix}' if f.suffix else 'a folder'})": (f.name, f.suffix)
    for f in sorted(saveable(), key=lambda f: f.name != "native")
}


STEP_MS = 16  # ms between the steps that open what a finished run made (a frame: each is painted)


class _NameDelegate(QStyledItemDelegate):
    """Edits a trained tokenizer's name alone (its row reads "name — 1,000 tokens"): the
    workspace renames it everywhere when the edit is committed."""

    committed = Signal(object, str)  # (Tokenizer, the name typed)

    def setEditorData(self, editor: QWidget, index) -> None:
        tok = index.data(Qt.ItemDataRole.UserRole)
        editor.setProperty("text", tok.name if tok is not None else "")

    def setModelData(self, editor: QWidget, model, index) -> None:
        tok = index.data(Qt.ItemDataRole.UserRole)
        if tok is not None:
            self.committed.emit(tok, str(editor.property("text")))


class _FillingLayout(QVBoxLayout):
    """A column that, in a scroll area, fills the height it is given: its wrapped labels would
    otherwise have the area size it to their preferred height (taller than the window), and
    the results under the plots would need scrolling to at any size."""

    def hasHeightForWidth(self) -> bool:
        return False


def clock(seconds: float) -> str:
    """``75.2`` -> ``"1:15"``; ``3725`` -> ``"1:02:05"``."""
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class TrainingWorkspace(QWidget):
    """Set-up, run and result of trainings; results go into ``registry``."""

    trainingStarted = Signal(object)  # TrainingPlan
    progressed = Signal(object)  # TrainingProgress, after the view showed it
    trainingFinished = Signal(object)  # TrainingOutcome, after the tokenizers joined the registry
    trainingFailed = Signal(str)
    runningChanged = Signal(bool)  # a run started, or its worker ended (after trainingFinished/Failed)

    in_process = False  # train in a thread of this process instead of a child process

    def __init__(
        self, registry: TokenizerRegistry, parent: QWidget | None = None, *, settings: QSettings | None = None
    ) -> None:
        """``settings``: where the form's folder filter is remembered (``None``: not remembered)."""
        super().__init__(parent)
        self.registry = registry
        self._settings = settings
        self.job: TrainingJob | None = None  # the running one
        self._worker: Worker | None = None
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self.paused: tuple | None = None  # (plan, run, history) of a cancelled run, to resume
        self.trained: list[Tokenizer] = []
        self.last_report: TrainingProgress | None = None
        self.saver = Jobs(self)
        self._token_bytes: dict[int, bytes] = {}
        self._delivered: set[int] = set()  # sizes of the current run already in the registry
        # what a finished run opens, one step per turn: each tokenizer joins the registry (every
        # panel that lists the open tokenizers follows), then the last becomes current (the panes
        # and docks follow); all in the turn the run ended held the window for 100-200 ms
        self._steps: deque[Callable[[], object]] = deque()
        self._step_timer = QTimer(self, singleShot=True, interval=STEP_MS)
        self._step_timer.timeout.connect(self._next_step)
        self._build()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # -- layout -----------------------------------------------------------------------------------

    def _build(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.message = MessageBar()
        self.form = TrainingForm(settings=self._settings)
        self.train_button = QPushButton("Train")
        self.train_button.setDefault(True)
        self.train_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the current merge and keep the vocabulary learned so far")
        self.cancel_button.clicked.connect(self.cancel)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue the cancelled training where it stopped")
        self.resume_button.clicked.connect(self.resume)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.resume_button, self.cancel_button, self.train_button):
            buttons.addWidget(b)
        setup = QWidget()
        slay = QVBoxLayout(setup)
        slay.setContentsMargins(0, 0, 4, 0)
        slay.addWidget(self.form, 1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(setup)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setMinimumWidth(360)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # the form scrolls; Train stays in sight below it however short the panel is
        left = QWidget()
        llay = QVBoxLayout(left)
        llay.setContentsMargins(0, 0, 0, 0)
        llay.addWidget(scroll, 1)
        llay.addLayout(buttons)

        self.phase_label = QLabel("Not started.")
        self.phase_label.setWordWrap(True)  # a long line ("ran out of pairs … Made: …") wraps, not widens the form
        self.phase_label.setMinimumWidth(1)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.rate_label = ToneLabel(tone="muted")
        self.merge_label = ElidedLabel("—")  # a long merge is shortened in the middle, whole in its tooltip
        big = mono
        big.setPointSizeF(mono.pointSizeF() * 1.35)
        self.merge_label.setFont(big)
        self.merge_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.merge_info = ToneLabel(tone="muted")
        for label in (self.rate_label, self.merge_info):  # long lines wrap, not widen the run
            label.setWordWrap(True)
            label.setMinimumWidth(1)
        self.plots = TrainingPlots()
        self.run_box = run_box = QGroupBox("Run")
        rlay = QVBoxLayout(run_box)
        rlay.addWidget(self.phase_label)
        rlay.addWidget(self.progress)
        rlay.addWidget(self.rate_label)
        merge_row = QHBoxLayout()
        merge_caption = QLabel("Current merge:")
        merge_caption.setToolTip(f"The latest merge: [left][right] → [new token]; {LEGEND}")
        merge_row.addWidget(merge_caption)
        merge_row.addWidget(self.merge_label, 1)
        rlay.addLayout(merge_row)
        rlay.addWidget(self.merge_info)
        rlay.addWidget(self.plots, 1)

        self.results = QListWidget()
        self.results.setMaximumHeight(110)
        self.results.itemDoubleClicked.connect(lambda item: self.show_tokenizer(item.data(Qt.ItemDataRole.UserRole)))
        # F2 or Rename edits a name in place (a double click shows the tokenizer)
        self.results.setEditTriggers(QListWidget.EditTrigger.EditKeyPressed)
        self._names = _NameDelegate(self.results)
        self._names.committed.connect(self.rename_tokenizer)
        self.results.setItemDelegate(self._names)
        self.rename_button = QPushButton("Rename")
        self.rename_button.setToolTip(
            "Give the selected tokenizer another name (F2): the picker, the panes and saving use it"
        )
        self.rename_button.clicked.connect(self._edit_name)
        self.show_button = QPushButton("Show in overlay")
        self.show_button.clicked.connect(lambda: self.show_tokenizer(self.selected_tokenizer()))
        self.save_button = QPushButton("Save…")
        self.save_button.clicked.connect(self._ask_save)
        res_box = QGroupBox("Trained tokenizers")
        res_lay = QHBoxLayout(res_box)
        res_lay.addWidget(self.results, 1)
        res_buttons = QVBoxLayout()
        res_buttons.addWidget(self.show_button)
        res_buttons.addWidget(self.rename_button)
        res_buttons.addWidget(self.save_button)
        res_buttons.addStretch(1)
        res_lay.addLayout(res_buttons)

        right = QWidget()
        rl = _FillingLayout(right)
        rl.setContentsMargins(4, 0, 0, 0)
        rl.addWidget(run_box, 1)
        rl.addWidget(res_box)
        # scrolled too, so that docked in a small window the run asks for no more height than
        # the window has (its plots need about 450 px), and the window never grows past the screen
        right_scroll = QScrollArea()
        right_scroll.setWidgetResizable(True)
        right_scroll.setWidget(right)
        right_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        right_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right_scroll)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        split.setSizes([450, 750])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.message)
        lay.addWidget(split, 1)

        self.setAcceptDrops(True)
        self.form.corpus.problem.connect(self.show_error)
        self.form.changed.connect(self._refresh_buttons)
        self.results.currentRowChanged.connect(self._refresh_buttons)
        self.registry.renamed.connect(lambda _tok: self._relabel_results())
        self._refresh_buttons()

    # -- running ------------------------------------------------------------------------------------

    def is_running(self) -> bool:
        return self.job is not None

    def is_cancelling(self) -> bool:
        """True after Cancel, until the run has stopped."""
        return self._worker is not None and self._worker.should_stop()

    def start(self) -> bool:
        """Train with the form's settings; false (with a message shown) if they are not valid."""
        if self.is_running():
            return False
        try:
            plan = self.form.plan()
            job = TrainingJob(plan, plan.make_run(self.in_process))  # checks the settings at once
        except ValueError as exc:
            self.show_error(str(exc))
            return False
        self._drop_paused()
        self._launch(job, fresh=True)
        return True

    def resume(self) -> bool:
        """Continue the cancelled run with the merges it has, to the sizes it was asked for."""
        if self.is_running() or self.paused is None:
            return False
        plan, run, history = self.paused
        self.paused = None
        job = TrainingJob(plan, run)
        job.history = history
        self._launch(job, fresh=False)
        return True

    def _launch(self, job: TrainingJob, fresh: bool) -> None:
        plan = job.plan
        self.message.clear()
        if fresh:
            self._delivered = set()
            self.plots.reset(plan.sizes, len(plan.special_tokens))
            self._token_bytes = initial_token_bytes(plan.tie_break, plan.special_tokens)
            self.merge_label.setText("—")
            self.merge_info.setText("")
            self.rate_label.setText("")
            self.progress.setRange(0, 0)  # busy until the corpus is read
        self.job = job
        self._worker = worker = Worker(job.reports)
        worker.signals.yielded.connect(self._on_progress)
        worker.signals.returned.connect(lambda outcome: self._on_finished(job, outcome))
        worker.signals.errored.connect(self._on_failed)
        worker.signals.finished.connect(lambda: self._on_worker_done(job))
        self.phase_label.setText(f"Training <b>{plan.name}</b> to {', '.join(f'{s:,}' for s in plan.sizes)} tokens…")
        self.form.set_editable(False)
        self._refresh_buttons()
        self.trainingStarted.emit(plan)
        self.runningChanged.emit(True)
        worker.start(self._pool)

    def cancel(self) -> None:
        """Stop after the current merge; the merges learned so far become a tokenizer."""
        if self.job is not None and self._worker is not None:
            self._worker.cancel()
            self.job.stop()
            self.cancel_button.setEnabled(False)
            self.phase_label.setText("Cancelling…")

    def shutdown(self, timeout_ms: int = 30000) -> None:
        """Cancel a running training, wait for its thread and end its process (before the app quits)."""
        job = self.job
        if job is not None:
            self.cancel()
            self._pool.waitForDone(timeout_ms)
            job.close_run()
        self._drop_paused()

    def _drop_paused(self) -> None:
        if self.paused is not None:
            close = getattr(self.paused[1], "close", None)
            if close is not None:
                close()
        self.paused = None
        self.resume_button.setVisible(False)

    def _on_progress(self, report: TrainingProgress) -> None:
        self._show_progress(report)
        self.progressed.emit(report)

    def _show_progress(self, report: TrainingProgress) -> None:
        self.last_report = report
        if report.phase == "counting":
            self.progress.setRange(0, 0)
            self.phase_label.setText(
                f"Reading the corpus: {report.documents:,} documents, {report.corpus_bytes:,} characters, "
                f"{report.distinct_pretokens:,} distinct pre-tokens"
            )
            self.rate_label.setText(f"{clock(report.elapsed)} elapsed")
        else:
            total = max(report.merges_total, 1)
            self._set_progress(report.merges_done, total)
            rate = report.merges_per_second
            left = (report.merges_total - report.merges_done) / rate if rate > 0 else None
            parts = [f"{rate:,.0f} merges/s" if rate else "", f"{clock(report.elapsed)} elapsed"]
            if left is not None and report.phase == "merging":
                parts.append(f"about {clock(left)} left")
            self.rate_label.setText(" · ".join(p for p in parts if p))
            if report.phase == "merging":
                self.phase_label.setText(
                    f"Merging: {report.corpus_bytes:,} bytes in {report.distinct_pretokens:,} distinct pre-tokens · "
                    f"{report.bytes_per_token:.3f} bytes/token"
                )
            tb = self._token_bytes
            for m in report.new_merges:
                tb[m.id] = m.token
            chosen = report.merge
            if chosen is not None:
                self.merge_label.setText(format_merge(tb.get(chosen.left, b"?"), tb.get(chosen.right, b"?")))
                self.merge_info.setText(
                    f"×{chosen.count:,} in the corpus when chosen · merge {chosen.rank + 1:,} · new id {chosen.id:,}"
                )
            self.plots.add_merges(report.new_merges)
            if report.bytes_per_token and self.job is not None:
                size = 256 + len(self.job.plan.special_tokens) + report.merges_done
                self.plots.add_points(
                    bytes_per_token_curve(size, report.corpus_bytes, report.bytes_per_token, report.new_merges)
                )

    def _set_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(min(done, total))
        self.progress.setFormat(f"{done:,} / {total:,} merges ({done / total:.0%})")

    def _on_finished(self, job: TrainingJob, outcome: TrainingOutcome) -> None:
        if outcome.exhausted and outcome.merges:  # finished early: a full bar of the merges made
            self.progress.setRange(0, outcome.merges)
            self.progress.setValue(outcome.merges)
            self.progress.setFormat(f"{outcome.merges:,} merges: ran out of pairs")
        else:
            self._set_progress(outcome.merges, max(job.run_.merges_total, 1))
        self.plots.redraw()
        # a run cancelled with merges still to make can resume; one that made them all (the
        # cancel came as it ended) or that ran out of pairs has nothing left to do
        if outcome.stopped and not outcome.exhausted and outcome.merges < job.run_.merges_total:
            self.paused = (job.plan, job.run_, job.history)
        else:
            self._drop_paused()
        steps: list[Callable[[], object]] = []
        for tok in outcome.tokenizers:
            settings = tok.training.settings if tok.training else {}
            size = settings.get("vocab_size")
            if settings.get("finished") and size in self._delivered:
                continue  # a size a cancelled run already delivered complete, before a resume
            if settings.get("finished") and isinstance(size, int):
                self._delivered.add(size)
            steps.append(partial(self.add_to_registry, tok))
        if outcome.tokenizers:
            steps.append(partial(self._make_current, outcome.tokenizers[-1]))
        names = ", ".join(t.name for t in outcome.tokenizers)
        secs = f"{outcome.seconds:.1f} s"
        if not outcome.tokenizers:
            self.phase_label.setText("Cancelled before the first merge; nothing to keep.")
        elif outcome.stopped:
            self.phase_label.setText(f"Cancelled after {outcome.merges:,} merges ({secs}); kept: {names}.")
        elif outcome.exhausted:
            self.phase_label.setText(
                f"The corpus ran out of pairs after {outcome.merges:,} merges ({secs}): "
                f"{outcome.tokenizers[-1].n_vocab:,} tokens, fewer than the {max(job.plan.sizes):,} asked for. "
                f"Made: {names}."
            )
        else:
            self.phase_label.setText(f"Done: {outcome.merges:,} merges in {secs}. Made: {names}.")
        if outcome.skipped:
            self.phase_label.setText(f"{self.phase_label.text()} {skipped_note(outcome.skipped)}")
        steps.append(partial(self.trainingFinished.emit, outcome))  # once its tokenizers are open
        self._steps.extend(steps)
        self._step_timer.start()

    def pending(self) -> bool:
        """Whether what a finished run made is still being opened (a step per turn)."""
        return bool(self._steps)

    def _next_step(self) -> None:
        if self._steps:
            self._steps.popleft()()
        if self._steps:
            self._step_timer.start()

    def _make_current(self, tok: Tokenizer) -> None:
        if tok in self.registry:  # (not closed meanwhile)
            self.registry.set_current(tok)

    def _on_failed(self, exc: BaseException) -> None:
        text = describe_error(exc)
        self.phase_label.setText("Training failed.")
        self.show_error(f"Training failed: {text}")
        self.trainingFailed.emit(text)

    def _on_worker_done(self, job: TrainingJob) -> None:
        if job is self.job:
            self.job = self._worker = None
            if self.progress.maximum() == 0:  # stopped while counting
                self.progress.setRange(0, 1)
                self.progress.setFormat("")
            self.form.set_editable(True)
            self._refresh_buttons()
            self.runningChanged.emit(False)

    # -- results --------------------------------------------------------------------------------

    def add_to_registry(self, tok: Tokenizer, *, shown: bool = False) -> None:
        """Open ``tok`` in the registry under a name no other open tokenizer has: it joins
        the picker, and gets a pane in the overlay only when ``shown`` (the user asked)."""
        spec, n = f"trained:{tok.name}", 2
        while self.registry.find(spec) is not None:
            spec, n = f"trained:{tok.name} #{n}", n + 1
        if spec != f"trained:{tok.name}":
            tok.name = spec.removeprefix("trained:")
        self.trained.append(tok)
        item = QListWidgetItem(self._result_text(tok))
        item.setData(Qt.ItemDataRole.UserRole, tok)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        settings = tok.training.settings if tok.training else {}
        item.setToolTip("\n".join(f"{k}: {v}" for k, v in settings.items() if k != "history"))
        self.results.addItem(item)
        self.results.setCurrentItem(item)
        self.registry.add(tok, spec, shown=shown)

    @staticmethod
    def _result_text(tok: Tokenizer) -> str:
        return f"{tok.name} — {tok.n_vocab:,} tokens"

    def _relabel_results(self) -> None:
        for row in range(self.results.count()):
            item = self.results.item(row)
            tok = item.data(Qt.ItemDataRole.UserRole)
            if tok is not None and item.text() != self._result_text(tok):
                item.setText(self._result_text(tok))

    def _edit_name(self) -> None:
        item = self.results.currentItem()
        if item is not None:
            self.results.editItem(item)

    def rename_tokenizer(self, tok: Tokenizer, name: str) -> bool:
        """Call the trained ``tok`` ``name`` wherever it shows (the picker, the overlay, the
        panels) and when it is saved; false (with a message) for an empty name."""
        name = " ".join(name.split())
        if not name:
            self.show_error(f"A tokenizer needs a name: {tok.name} keeps its own.")
            return False
        if tok in self.registry:
            self.registry.rename(tok, name)  # the results follow its signal
        else:
            tok.name = name
            self._relabel_results()
        return True

    def selected_tokenizer(self) -> Tokenizer | None:
        item = self.results.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    def show_tokenizer(self, tok: Tokenizer | None) -> None:
        if tok is None:
            return
        if tok not in self.registry:
            self.add_to_registry(tok, shown=True)
        self.registry.set_shown(tok, True)
        self.registry.set_current(tok)

    def save_tokenizer(self, tok: Tokenizer, path: str | Path, fmt: str | None = None) -> None:
        """Write ``tok`` to ``path`` in a worker (atomically); the outcome shows as a message."""
        try:
            from bpeinspect.core.io import Saved, save_noted
        except ImportError:
            self.show_error("Saving needs bpeinspect.core.io.formats, which this build does not have.")
            return

        def write() -> Saved:
            return save_noted(tok, path, fmt)

        def done(saved: Saved) -> None:
            # what the format cannot keep is shown with the result
            self.show_message(" ".join([f"Saved {tok.name} to {saved.path}.", *(f"Note: {n}" for n in saved.notes)]))

        self.saver.submit(
            ("save", str(path)),
            write,
            on_returned=done,
            on_errored=lambda exc: self.show_error(f"Could not save {tok.name} to {path}: {exc}"),
        )

    def _ask_save(self) -> None:
        tok = self.selected_tokenizer()
        if tok is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, f"Save {tok.name}", tok.name.replace(" ", "_"), ";;".join(SAVE_FILTERS)
        )
        if not path:
            return
        fmt, suffix = SAVE_FILTERS.get(chosen, ("native", ".json"))
        if suffix and not path.endswith(suffix):
            path += suffix
        self.save_tokenizer(tok, path, fmt)

    # -- dropping corpus files anywhere on the workspace ------------------------------------------

    def dragEnterEvent(self, e) -> None:
        if e.mimeData().hasUrls() and not self.is_running():
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:
        paths = [u.toLocalFile() for u in e.mimeData().urls() if u.toLocalFile()]
        if paths and not self.is_running():
            self.form.corpus.add_paths(paths)
            e.acceptProposedAction()

    # -- messages and state ---------------------------------------------------------------------

    def show_error(self, text: str) -> None:
        self.message.show_message(text, error=True)

    def show_message(self, text: str) -> None:
        self.message.show_message(text, error=False)

    def _refresh_buttons(self) -> None:
        running = self.is_running()
        self.train_button.setEnabled(not running)
        self.cancel_button.setEnabled(running and not self.is_cancelling())
        self.resume_button.setVisible(self.paused is not None and not running)
        has = self.results.currentItem() is not None
        self.show_button.setEnabled(has)
        self.rename_button.setEnabled(has)
        self.save_button.setEnabled(has)


def make_panel(host: PanelContext) -> TrainingWorkspace:
    """The workspace the window docks (the first time it is shown), on the window's registry and
    its stored settings."""
    return TrainingWorkspace(host.window.registry, settings=host.window.settings)
