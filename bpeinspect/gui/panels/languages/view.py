"""The languages view: how many tokens the same text costs in hundreds of languages, per tokenizer.

The window docks it and calls :meth:`LanguagesView.set_tokenizers`. The corpus (the UDHR, the
fable, the code and data samples, or a folder) is loaded and counted on the one worker, one
tokenizer after the other, each one's figures shown as soon as they are in; filters (stage,
script, region) and the baseline only re-derive the figures (:meth:`CorpusStats.restrict`,
:meth:`CorpusStats.with_baseline`), they never count again. Six pages show them: the fairness
summary, the rank plot, the script plot, the world map, the language table and, for a few
dozen texts, bars. Each exports as PNG, SVG and CSV; a click on a language anywhere emits
``languageActivated`` with its text.

pyqtgraph takes about a second to import, so the view imports it (and its plot pages) on the
worker and builds a plot page only when its tab is first shown. New figures (a tokenizer
counted, a filter) redraw only the page shown; the others are marked old and redrawn when
their tab is shown: redrawing them all in turn kept the window busy for every tokenizer.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bpeinspect.core import human_size
from bpeinspect.gui.concurrency import Jobs, ProgressBar, describe_error
from bpeinspect.gui.message_bar import ToneLabel
from bpeinspect.gui.panels.languages.filterbar import COMPLETE_STAGE, FOLDER_PREFIX, FilterBar, source_title
from bpeinspect.gui.panels.languages.flow import FlowLayout
from bpeinspect.gui.registry import distinct_names, follow_rows, reference_first

if TYPE_CHECKING:
    from bpeinspect.core import Tokenizer
    from bpeinspect.core.analysis import Corpus, CorpusStats, CorpusText, CountCache, CountingPool, VocabularyUse
    from bpeinspect.gui.panels.context import PanelContext
    from bpeinspect.gui.panels.languages.export import Renderer
    from bpeinspect.gui.panels.languages.usage import UsePage


class Page(Protocol):
    """What the view asks of each page, a plot or a table (built from the modules loaded late)."""

    def set_stats(self, stats: CorpusStats | None, focus: str | None = None) -> None: ...

    def csv_maker(self) -> Callable[[], str]: ...

    def renderer(self) -> tuple[Renderer, QSize]: ...


KINDS = ("png", "svg", "csv")
# page key -> (tab title, module of its class or None for a table, class name)
PAGES: dict[str, tuple[str, str | None, str]] = {
    "summary": ("Summary", None, ""),
    "rank": ("Rank", "rank", "RankPage"),
    "scripts": ("Scripts", "rank", "ScriptPage"),
    "map": ("Map", "mapplot", "MapPage"),
    "table": ("Table", None, ""),
    "use": ("Use", "usage", "UsePage"),
    "bars": ("Bars", "bars", "BarsPage"),
}
FOCUS_PAGES = ("scripts", "map")  # the pages drawn under one chosen tokenizer
# pages that export as CSV only: a picture of a long table would hold the rows on screen alone
CSV_ONLY = ("table",)


# what the view needs besides Qt; imported on the worker (about a second with pyqtgraph)
MODULES = ("tables", "export", *sorted({m for _, m, _ in PAGES.values() if m}))
COUNTING = "bpeinspect.core.analysis.languages"  # the core's counting, as mods["counting"]


def load_modules() -> dict[str, ModuleType]:
    """Import the counting, the tables, pyqtgraph and the plot pages, and read the map (on the worker)."""
    mods = {name: importlib.import_module(f"{__package__}.{name}") for name in MODULES}
    mods["counting"] = importlib.import_module(COUNTING)
    mods["mapplot"].coast()
    return mods


class LanguagesView(QWidget):
    """Premiums of 1–8 tokenizers across the languages of a parallel corpus."""

    languageActivated = Signal(object)  # the CorpusText of a language clicked anywhere
    statsReady = Signal(object)  # CorpusStats (filters and baseline applied) when every tokenizer is counted
    loaded = Signal()  # the modules are in (pages are built from now on, one per event-loop turn)
    exported = Signal(str)  # the path written
    failed = Signal(str)
    addTokenizerRequested = Signal()  # "Add tokenizer…": the window asks for a vocabulary file and opens it
    processes: int | None = None  # count_corpus's: a process per CPU (the core's pool)

    def __init__(self, parent: QWidget | None = None, *, source: str = "udhr") -> None:
        super().__init__(parent)
        self.jobs = Jobs(self)
        self._m: dict[str, ModuleType] = {}  # the modules load_modules() imported
        self._tokenizers: list[Tokenizer] = []
        self._labels: list[str] = []
        self._source = source
        self._corpora: dict[str, Corpus] = {}
        self._cache: CountCache | None = None  # once the modules are loaded
        self._pool: CountingPool | None = None  # once the modules are loaded: its children start then and stay
        self._full: CorpusStats | None = None  # every text of the corpus, the tokenizers counted so far
        self._view: CorpusStats | None = None  # what the pages show: filters and baseline applied
        self._pages: dict[str, Page] = {}
        self._use_page: UsePage | None = None  # the page "use", once built
        # (source, codes shown) -> id(tokenizer) -> VocabularyUse: what each vocabulary spends on them
        self._uses: dict[tuple[str, tuple[str, ...]], dict[int, VocabularyUse]] = {}
        self._holders: dict[str, QVBoxLayout] = {}  # the layout of each tab, which holds its page once built
        self._stale: set[str] = set(PAGES)
        self._counting = False
        self._to_build: list[str] = []
        self._builder = QTimer(self, singleShot=True, interval=0)
        self._builder.timeout.connect(self._build_next)
        self._build()
        self.jobs.submit(
            "load",
            load_modules,
            on_returned=self._on_loaded,
            on_errored=lambda exc: self._show_error(f"The languages view cannot start: {describe_error(exc)}"),
        )
        self.status.setText("Loading…")

    # -- construction ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.filters = FilterBar(self._source)
        self.filters.sourceChosen.connect(self.set_source)
        self.filters.changed.connect(self._refresh)
        self.focus_box = QComboBox()
        self.focus_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.focus_box.setToolTip("The tokenizer the map colours by and the scripts are ordered by")
        self.focus_box.currentIndexChanged.connect(self._on_focus)
        self.add_button = QPushButton("Add tokenizer…")
        self.add_button.setToolTip(
            "Open another vocabulary (tokenizer.json, .tiktoken, GGUF, …): every open tokenizer joins the "
            "summary and the plots, e.g. Qwen3 or Gemma 3 beside the built-ins"
        )
        self.add_button.clicked.connect(self.addTokenizerRequested)
        self.measures_box = QCheckBox("Fertility, Rényi, utilization")
        self.measures_box.setToolTip(
            "Also measure each tokenizer on each text: fertility (tokens per word), Rényi efficiency and "
            "vocabulary utilization, as columns of the table and a choice of the rank plot (each text's token "
            "ids are counted: several times the work of the count)"
        )
        self.measures_box.toggled.connect(lambda on: self.start() if on else None)
        self.progress = ProgressBar()
        self.progress.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.export_buttons: dict[str, QPushButton] = {}
        for kind in KINDS:
            b = QPushButton(f"{kind.upper()}…")
            b.setToolTip(f"Export this page as {kind.upper()}")
            b.clicked.connect(lambda _=False, k=kind: self._ask_export(k))
            self.export_buttons[kind] = b
        self.status = ToneLabel()
        self.status.setWordWrap(True)

        # the view keeps its height for the pages (a small window docks it below the text, about
        # 250 px high): the filters on one row, the focus and measures beside the status on a
        # second, the progress and the exports beside the pages' tabs
        controls = QWidget()  # wraps onto a second row in a narrow window
        flow = FlowLayout(controls)
        flow.setContentsMargins(0, 0, 0, 0)
        flow.add_group(QLabel("Map and scripts under"), self.focus_box, self.add_button, self.measures_box)
        second = QHBoxLayout()
        second.addWidget(controls)
        second.addWidget(self.status, 1)
        corner = QWidget()
        ends = QHBoxLayout(corner)
        ends.setContentsMargins(0, 0, 0, 2)
        for w in (self.progress, self.cancel_button, *self.export_buttons.values()):
            ends.addWidget(w)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)  # no frame: its pixels go to the page
        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        for key, (title, _, _) in PAGES.items():
            holder = QWidget()
            lay = QVBoxLayout(holder)
            lay.setContentsMargins(0, 0, 0, 0)
            wait = QLabel("Loading…")
            wait.setAlignment(Qt.AlignmentFlag.AlignCenter)
            lay.addWidget(wait)
            self._holders[key] = lay
            self.tabs.addTab(holder, title)
        self.tabs.currentChanged.connect(self._on_tab)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 2, 4, 2)
        lay.setSpacing(2)
        lay.addWidget(self.filters)
        lay.addLayout(second)
        lay.addWidget(self.tabs, 1)
        self._set_running(False)

    def _on_loaded(self, mods: dict[str, ModuleType]) -> None:
        self._m = mods
        self._cache = mods["counting"].CountCache()
        self._pool = pool = mods["counting"].CountingPool(self.processes, niceness=mods["counting"].NICENESS)
        if self.processes != 1:
            self.jobs.submit("pool", pool.start)  # off the GUI thread: spawning a child is slow
        self._to_build = [self.current_page(), *(k for k in PAGES if k != self.current_page())]
        self._builder.start()
        self.loaded.emit()
        self.start()

    def _build_next(self) -> None:
        """Build one page per event-loop turn (a plot costs about a frame), the one shown first.

        While the corpus is counted, only the one shown: the others wait for the count's end
        (:meth:`_set_running`), since the count's children and its worker share the cores and
        the interpreter with the GUI thread, and building a plot then took several times as long."""
        while self._to_build and self._to_build[0] in self._pages:
            self._to_build.pop(0)
        if not self._to_build or self._counting and self._to_build[0] != self.current_page():
            return
        key = self._to_build.pop(0)
        self._build_page(key)
        if key == self.current_page():
            self._draw_current()
        if self._to_build:
            self._builder.start()

    def _build_page(self, key: str) -> QWidget:
        _, module, cls = PAGES[key]
        if module is None:
            tables = self._m["tables"]
            model = tables.SummaryModel(self) if key == "summary" else tables.LanguageModel(self)
            page = tables.TablePage(model, searchable=key == "table")
        else:
            page = getattr(self._m[module], cls)()
        lay = self._holders[key]
        while lay.count():
            item = lay.takeAt(0)
            old = item.widget() if item is not None else None
            if old is not None:
                old.deleteLater()
        if getattr(page, "scrolls", False):
            area = QScrollArea()
            area.setWidgetResizable(True)
            area.setWidget(page)
            lay.addWidget(area)
        else:
            lay.addWidget(page)
        page.languageActivated.connect(self._activate)
        if hasattr(page, "metricChosen"):
            page.metricChosen.connect(lambda _metric: self.measures_box.setChecked(True))
        self._pages[key] = page
        if key == "use":
            self._use_page = page
        return page

    # -- public API ------------------------------------------------------------------------------

    def set_tokenizers(self, tokenizers: Sequence[Tokenizer]) -> None:
        """Count the corpus under these tokenizers (those counted before are kept), in this order."""
        self._tokenizers = list(tokenizers)
        self._labels = _labels(self._tokenizers)
        keep = self.focus_box.currentText()
        self.focus_box.blockSignals(True)
        self.focus_box.clear()
        self.focus_box.addItems(self._labels)
        if keep in self._labels:
            self.focus_box.setCurrentText(keep)
        elif self._labels:
            self.focus_box.setCurrentIndex(len(self._labels) - 1)
        self.focus_box.blockSignals(False)
        self.start()

    def set_source(self, source: str) -> None:
        """``"udhr"``, ``"fable"``, ``"code"`` or ``"folder:PATH"``."""
        self._source = source
        self.filters.show_source(source)
        self.start()

    def set_filters(
        self, *, stage: int | None = COMPLETE_STAGE, script: str | None = None, region: str | None = None
    ) -> None:
        """Show the texts of one stage (``None``: all), script and region (``None``: all)."""
        self.filters.set_filters(stage=stage, script=script, region=region)

    def set_baseline(self, code: str | None) -> None:
        self.filters.set_baseline(code)

    def show_page(self, key: str) -> None:
        self.tabs.setCurrentIndex(list(PAGES).index(key))

    def current_page(self) -> str:
        return list(PAGES)[self.tabs.currentIndex()]

    def page(self, key: str) -> Page | None:
        """The page ``key`` once built."""
        return self._pages.get(key)

    def corpus(self) -> Corpus | None:
        return self._corpora.get(self._source)

    def corpus_stats(self) -> CorpusStats | None:
        """What the pages show: the counts so far with the filters and the baseline applied."""
        if self._view is None and self._full is not None:
            view = self._full.restrict(self.filters.apply(self._full.corpus))
            base = self.filters.baseline()
            self._view = view if base == view.baseline else view.with_baseline(base)
        return self._view

    def focus(self) -> str | None:
        return self.focus_box.currentText() or None

    def is_loaded(self) -> bool:
        return bool(self._m)

    def is_running(self) -> bool:
        return self._counting

    # -- counting --------------------------------------------------------------------------------

    def start(self) -> None:
        """Count what is missing for the current corpus and tokenizers (an older run is cancelled),
        then measure it if the corpus measures are asked for."""
        self.jobs.cancel("count")
        self.jobs.cancel("measure")
        self.jobs.cancel("use")
        cache = self._cache
        if cache is None:
            return  # _on_loaded starts
        cache.keep_only(self._tokenizers)
        if self._pool is not None:
            self._pool.keep_only(self._tokenizers)  # closed tokenizers leave the children too
        source, corpus = self._source, self.corpus()
        todo = [(label, tok) for tok, label in zip(self._tokenizers, self._labels) if not cache.has(source, tok)]
        self._assemble()
        if corpus is not None and not todo:
            self._set_running(False)
            self._status()
            if self._full is not None:
                self.statsReady.emit(self.corpus_stats())
            self._start_measures()
            return
        toks = [tok for _, tok in todo]

        def on_yielded(value: tuple) -> None:
            if value[0] == "corpus":
                self._corpora[source] = value[1]
                self.filters.fill(value[1], self._m["export"].language_name)
            else:
                cache.put(source, toks[value[1]], value[2])
            self._assemble()

        what = source_title(source)
        doing = f"Counting {what}" if todo else f"Loading {what}…"
        self._run_over("count", (source, corpus), todo, on_yielded, then=self._on_done, doing=doing)

    def _start_measures(self) -> None:
        """Measure the tokenizers not measured yet on the current corpus (when asked for)."""
        corpus, source, cache = self.corpus(), self._source, self._cache
        if not self.measures_box.isChecked() or corpus is None or cache is None:
            return
        todo = [
            (label, tok)
            for tok, label in zip(self._tokenizers, self._labels)
            if cache.has(source, tok) and not cache.has_measures(source, tok)
        ]
        if not todo:
            return
        toks = [tok for _, tok in todo]

        def on_yielded(value: tuple) -> None:
            cache.put_measures(source, toks[value[1]], value[2])
            self._assemble()

        doing = f"Measuring {source_title(source)}"
        self._run_over(
            "measure", (source, corpus), todo, on_yielded, then=lambda: self._on_done(measured=True), doing=doing
        )

    def _run_over(
        self,
        job: str,
        corpus: tuple,
        todo: list[tuple[str, Tokenizer]],
        on_yielded: Callable[[tuple], None],
        *,
        then: Callable[[], None],
        doing: str,
    ) -> None:
        """Run the core's ``count``, ``measure`` or ``use`` job (``*corpus``: the corpus as it
        takes it) for the tokenizers of ``todo`` on the shared pool, then ``then()``; the status
        says ``doing`` under how many (``doing`` alone when none)."""
        counting, n = self._m["counting"], len(todo)
        self.jobs.submit(
            job,
            counting.run_job,
            job,
            *corpus,
            todo,
            processes=self.processes,
            pool=self._pool,
            on_yielded=on_yielded,
            on_progress=self._on_progress,
            on_returned=lambda _: then(),
            on_errored=self._failed,
            on_aborted=lambda: self._set_running(False),
        )
        self.status.setText(f"{doing} under {n} tokenizer{'s' if n != 1 else ''}…" if n else doing)
        self.status.set_tone(None)
        self._set_running(True)

    def cancel(self) -> None:
        if self.jobs.pending("use"):
            self.jobs.cancel("use")
            self._set_running(False)
            self.status.setText("Cancelled the count of token use.")
            return
        if self.jobs.pending("measure"):
            self.jobs.cancel("measure")
            self._set_running(False)
            self.status.setText("Cancelled the corpus measures.")
            return
        if self.jobs.pending("count"):
            self.jobs.cancel("count")
            self._set_running(False)
            done = len(self._full.tokenizers) if self._full is not None else 0
            self.status.setText(f"Cancelled: {done} of {len(self._tokenizers)} tokenizers counted.")

    def _set_running(self, running: bool) -> None:
        self._counting = running
        if not running and self._to_build:
            self._builder.start()  # the pages put off while counting
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)

    def _on_progress(self, done: int, total: int) -> None:
        if total:
            self.progress.setValue(int(1000 * done / total))

    def _on_done(self, measured: bool = False) -> None:
        self._set_running(False)
        self._status()
        if self._full is not None:
            self.statsReady.emit(self.corpus_stats())
        if not measured:
            self._start_measures()
        if self.current_page() == "use" and not self._counting:
            self._stale.add("use")
            self._draw_current()

    def _assemble(self) -> None:
        corpus, cache = self.corpus(), self._cache
        # (a corpus is known only once the modules are loaded, with the cache)
        self._full = (
            None
            if corpus is None or cache is None
            else cache.stats(self._source, corpus, self._tokenizers, self._labels)
        )
        self._refresh()

    def _failed(self, exc: BaseException) -> None:
        """A counting job failed: say why."""
        self._set_running(False)
        self._show_error(describe_error(exc))

    def _show_error(self, message: str) -> None:
        self.status.setText(message)
        self.status.set_tone("error")
        self.failed.emit(message)

    # -- drawing ---------------------------------------------------------------------------------

    def _on_focus(self) -> None:
        self._stale.update(FOCUS_PAGES)
        self._draw_current()

    def _on_tab(self) -> None:
        key = self.current_page()
        for kind, button in self.export_buttons.items():
            picture_only_of_the_screen = key in CSV_ONLY and kind != "csv"
            button.setEnabled(not picture_only_of_the_screen)
            button.setToolTip(
                "The table exports as CSV: a picture would hold only the rows on screen"
                if picture_only_of_the_screen
                else f"Export this page as {kind.upper()}"
            )
        if self._m and key not in self._pages:  # not built yet: build it now, the rest later
            self._build_page(key)
        self._draw_current()

    def _refresh(self) -> None:
        self._view = None
        self._stale = set(PAGES)
        self._status()
        self._draw_current()

    def _status(self) -> None:
        view = self.corpus_stats()
        if view is None or self._counting:
            return
        total = len(self._full.corpus) if self._full is not None else 0
        shown = len(view.corpus)
        size = sum(view.counts[view.tokenizers[0], t.code].bytes for t in view.corpus)
        texts = f"{shown} of {total} texts" if shown != total else f"{total} texts"
        self.status.setText(
            f"{view.corpus.title}: {texts} ({human_size(size)} in all) under "
            f"{len(view.tokenizers)} tokenizer{'s' if len(view.tokenizers) != 1 else ''}."
        )
        self.status.set_tone(None)

    def _draw_current(self) -> None:
        self._draw(self.current_page())

    def _draw(self, key: str) -> None:
        page = self._pages.get(key)
        if page is None or key not in self._stale:
            return
        self._stale.discard(key)
        if key == "use":
            if self._use_page is not None:
                self._draw_use(self._use_page)
            return
        if key in ("summary", "table"):
            page.set_stats(self.corpus_stats())
        else:
            page.set_stats(self.corpus_stats(), self.focus())

    def _draw_use(self, page: UsePage) -> None:
        """The Use page: the token use of the texts shown, counted (on the pool) when first shown."""
        stats = self.corpus_stats()
        if stats is None:
            page.set_stats(None, self.focus())
            return
        key = (self._source, tuple(stats.corpus.codes))
        have = self._uses.get(key, {})
        pairs = [(label, tok) for tok, label in zip(self._tokenizers, self._labels) if label in stats.tokenizers]
        page.tokens_of = {label: tok.token_bytes for label, tok in pairs}
        page.uses = {label: have[id(tok)] for label, tok in pairs if id(tok) in have}
        page.set_stats(stats, self.focus())
        todo = [(label, tok) for label, tok in pairs if id(tok) not in have]
        if not todo:
            return
        if self.current_page() == "use" and not self._counting and not self.jobs.pending("use"):
            self._start_use(key, stats, todo)
        else:
            self._stale.add("use")  # counted when its tab is shown and nothing else counts

    def _start_use(self, key: tuple, stats: CorpusStats, todo: list) -> None:
        toks = [tok for _, tok in todo]

        def on_yielded(value: tuple) -> None:
            self._uses.setdefault(key, {})[id(toks[value[1]])] = value[2]

        def done() -> None:
            self._set_running(False)
            self._status()
            self._stale.add("use")
            self._draw_current()

        doing = f"Counting every token of {len(stats.corpus)} texts"
        self._run_over("use", (self._source, stats.corpus), todo, on_yielded, then=done, doing=doing)

    # -- activation and export ---------------------------------------------------------------------

    def _activate(self, code: str) -> None:
        corpus = self.corpus()
        if corpus is not None:
            self.languageActivated.emit(corpus.entry(code))

    def _ask_export(self, kind: str) -> None:
        name = f"{self._source.replace(FOLDER_PREFIX, 'folder-')}-{self.current_page()}.{kind}"
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV table (*.csv)"}
        path, _ = QFileDialog.getSaveFileName(self, f"Export {kind.upper()}", name, filters[kind])
        if path:
            self.export(kind, path)

    def export(self, kind: str, path: str | os.PathLike[str]) -> None:
        """Write the current page as ``kind`` (png, svg or csv); ``exported(path)`` says when it is written.

        Images are drawn here; a PNG is compressed and written on the worker, as CSV text is made and written."""
        page = self._pages.get(self.current_page())
        export = self._m.get("export")
        try:
            if page is None or export is None:
                raise ValueError("this page is not shown yet")
            if kind != "csv" and self.current_page() in CSV_ONLY:
                raise ValueError("the table exports as CSV (a picture would hold only the rows on screen)")
            if kind == "csv":
                self.jobs.submit(
                    "export",
                    export.write_text,
                    path,
                    page.csv_maker(),
                    on_returned=self.exported.emit,
                    on_errored=lambda exc: self._show_error(f"{path}: could not export: {exc}"),
                )
                return
            render, size = page.renderer()
            if kind == "png":
                export.submit_png(self.jobs, path, render, size, done=self.exported.emit, failed=self._show_error)
                return
            export.write_svg(path, render, size, title=f"{PAGES[self.current_page()][0]}: {self.status.text()}")
        except (OSError, ValueError) as exc:
            self._show_error(f"{path}: could not export: {exc}")
            return
        self.exported.emit(str(path))

    def closeEvent(self, event) -> None:
        self.cancel()
        if self._pool is not None:
            self._pool.close(wait=False)
        super().closeEvent(event)


def _labels(toks: Sequence[Tokenizer]) -> list[str]:
    """Distinct display names: ``tok.name``, numbered when two share one."""
    return distinct_names(t.name or f"tokenizer {i + 1}" for i, t in enumerate(toks))


def make_panel(host: PanelContext) -> LanguagesView:
    """The view, tied to the window: a language picked opens its text, the tokenizers follow
    the window's (the reference first) while the panel is shown."""
    win = host.window
    view = LanguagesView()

    def open_language(text: CorpusText) -> None:  # shown right to left when its language is written so
        sample, rtl = text.sample, text.language.direction == "rtl"
        if sample.text is not None:
            win.set_text(sample.text, right_to_left=rtl)
        elif sample.path is not None:
            win.open_text_file(str(sample.path), right_to_left=rtl)

    view.languageActivated.connect(open_language)
    view.addTokenizerRequested.connect(win.files.ask_open_tokenizer)
    view.failed.connect(win.show_error)
    follow_rows(win.registry, lambda: panel_shown(view, host))
    win.registry.referenceChanged.connect(lambda _ref: panel_shown(view, host))
    return view


def panel_shown(view: LanguagesView, host: PanelContext) -> None:
    """Give the view the window's tokenizers (the plot sorts by the reference), if it is shown."""
    toks, _names = reference_first(host.window.registry)
    if toks and host.docks["languages"].isVisible():
        view.set_tokenizers(toks)


__all__ = ["PAGES", "LanguagesView", "load_modules", "make_panel", "panel_shown"]
