"""Tokenizers ▸ Open from Hugging Face…: pick a popular model (or type any repository), and its
tokenizer is downloaded in a worker and opened.

The list is the catalog of :mod:`bpeinspect.core.io.hub_catalog`, with the repositories the
Hugging Face cache already holds (marked, and listed first when they are not in the catalog).
One click on a row downloads and opens it; the search field filters the rows, and what is typed
there opens as a repository of its own (``OWNER/NAME``, ``OWNER/NAME@REVISION``, ``hf:…`` or the
model page's address). The download shows its progress and can be cancelled; a failure is shown
in the dialog, in the core's one line.

>>> dialog = HubDialog(window); dialog.show(); dialog.start("hf:Qwen/Qwen3-8B")   # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from bpeinspect.core import VocabularyError, human_size
from bpeinspect.core.io import HubModel, hub, hub_models, search_hub_models
from bpeinspect.gui.concurrency import Jobs, ProgressBar, describe_error
from bpeinspect.gui.overlay.palette import app_colors

COLUMNS = ("Model", "Family", "Access", "Licence", "Cache")
HUB_PAGES = ("https://huggingface.co/", "http://huggingface.co/", "huggingface.co/")
SPEC_ROLE = Qt.ItemDataRole.UserRole


def spec_from_text(text: str) -> str | None:
    """The ``hf:`` spec that typed text names (a repository, ``hf:…``, a model page's address),
    or None if it names none.

    >>> spec_from_text("Qwen/Qwen3-8B"), spec_from_text("https://huggingface.co/openai/gpt-oss-20b/tree/main")
    ('hf:Qwen/Qwen3-8B', 'hf:openai/gpt-oss-20b')
    >>> spec_from_text("llama 3"), spec_from_text("gpt2")
    (None, None)
    """
    text = text.strip()
    for page in HUB_PAGES:
        if text.startswith(page):
            text = "/".join(text[len(page) :].split("/")[:2])
    if not text.startswith(hub.PREFIX):
        text = hub.PREFIX + text
    if "/" not in text:  # a bare word is a search, not a repository
        return None
    try:
        return str(hub.parse_spec(text))
    except VocabularyError:
        return None


def _repo(spec: str) -> str:
    """The repository of an ``hf:`` spec (every row of the dialog has one)."""
    parsed = hub.parse_spec(spec)
    if parsed is None:
        raise ValueError(f"{spec}: not a Hugging Face spec")
    return parsed.repo


class HubDialog(QDialog):
    """Search the catalog, pick or type a repository, and open its tokenizer in ``window``."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window_ = window
        self.setWindowTitle("Open from Hugging Face")
        self.setObjectName("hubDialog")
        self.jobs = Jobs(self)
        self.models = hub_models()
        self.cached: set[str] = set()
        self.loading: str | None = None  # the spec being downloaded

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search popular models, or type a repository: OWNER/NAME[@REVISION]")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._fill)
        self.search.returnPressed.connect(self._open_first)
        self.list = QTreeWidget()
        self.list.setObjectName("hubModels")
        self.list.setHeaderLabels(COLUMNS)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setToolTip("One click downloads the model's tokenizer files (not its weights) and opens them")
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.list.itemClicked.connect(lambda item, _col: self._open_item(item))
        self.list.itemActivated.connect(lambda item, _col: self._open_item(item))

        self.status = QLabel()
        self.status.setObjectName("hubStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = ProgressBar()
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        close = QPushButton("Close")
        close.clicked.connect(self.reject)
        where = QLabel(
            f"From {hub.endpoint()} into the Hugging Face cache {hub.hf_cache_dir()}. Gated models need their "
            "licence accepted on the model's page, and HF_TOKEN set or `hf auth login`."
        )
        where.setWordWrap(True)
        where.setEnabled(False)  # a dimmed note

        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel_button)
        row.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.search)
        lay.addWidget(self.list, 1)
        lay.addWidget(where)
        lay.addWidget(self.status)
        lay.addLayout(row)
        QShortcut(QKeySequence(Qt.Key.Key_Down), self.search).activated.connect(self._to_list)
        self.resize(760, 560)
        self._fill()
        self.jobs.submit("cached", hub.cached_repos, on_returned=self._set_cached)

    # -- the list -------------------------------------------------------------------------------------

    def rows(self) -> list[str]:
        """The specs the list shows, top to bottom (tests read it)."""
        items = (self.list.topLevelItem(i) for i in range(self.list.topLevelItemCount()))
        return [item.data(0, SPEC_ROLE) for item in items if item is not None]

    def _fill(self, *_args: object) -> None:
        text = self.search.text()
        self.list.clear()
        typed = spec_from_text(text)
        known = {m.repo for m in self.models}
        if typed is not None and typed[len(hub.PREFIX) :] not in known:
            self._add(typed, (f"Open {typed[len(hub.PREFIX) :]}", "any repository", "", ""))
        for repo in sorted(self.cached - known, key=str.lower):
            if all(w in repo.lower() for w in text.lower().split()):
                self._add(hub.PREFIX + repo, (repo, "(in the cache)", "", ""))
        for m in search_hub_models(text, self.models) if typed is None else self._typed_matches(typed):
            self._add(m.spec, (m.repo, m.family, m.gate, m.licence), model=m)

    def _typed_matches(self, spec: str) -> list[HubModel]:
        repo = _repo(spec).lower()
        return [m for m in self.models if repo in m.repo.lower()]

    def _add(self, spec: str, cells: tuple[str, str, str, str], model: HubModel | None = None) -> None:
        """A row: ``cells`` are the model, family, access and licence columns."""
        cached = _repo(spec) in self.cached
        item = QTreeWidgetItem([*cells, "✓ cached" if cached else ""])
        item.setData(0, SPEC_ROLE, spec)
        tip = f"{spec}" + (f"\n{model.note}" if model is not None and model.note else "")
        if model is not None and model.gated:
            tip += "\nGated: accept its licence on the model's page first, then set HF_TOKEN or run `hf auth login`."
        item.setToolTip(0, tip + ("\nIn the Hugging Face cache: opens offline too." if cached else ""))
        self.list.addTopLevelItem(item)

    def _set_cached(self, repos: list[str]) -> None:
        self.cached = set(repos)
        self._fill()

    def _to_list(self) -> None:
        first = self.list.topLevelItem(0)
        if first is not None:
            self.list.setFocus()
            self.list.setCurrentItem(first)

    # -- opening --------------------------------------------------------------------------------------

    def _open_first(self) -> None:
        self._open_item(self.list.topLevelItem(0))  # (None when the list is empty)

    def _open_item(self, item: QTreeWidgetItem | None) -> None:
        if item is not None:
            self.start(item.data(0, SPEC_ROLE))

    def start(self, spec: str) -> None:
        """Download ``spec``'s tokenizer files (unless a download runs), then open them."""
        if self.loading is not None:
            return
        self.loading = spec
        self._busy(True)
        self._say(f"Asking the Hub for {spec[len(hub.PREFIX) :]}…")
        self.jobs.submit(
            "download",
            hub.fetch,
            spec,
            on_progress=self._on_progress,
            on_returned=self._on_fetched,
            on_errored=self._on_failed,
            on_aborted=self._on_cancelled,
        )

    def cancel(self) -> None:
        """Stop the download; nothing half-downloaded is kept."""
        if self.loading is not None:
            self.jobs.cancel("download")
            self._on_cancelled()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(1, total >> 10))
        self.progress.setValue(min(done, total) >> 10)
        self._say(f"Downloading {(self.loading or '')[len(hub.PREFIX) :]}: {human_size(done)} of {human_size(total)}")

    def _on_fetched(self, files: hub.HubFiles) -> None:
        self.loading = None
        self._busy(False)
        self.cached.add(files.repo)
        spec = f"{hub.PREFIX}{files.repo}@{files.commit}"  # the commit read: opens from the cache, reproducibly
        self._say(f"Opening {files.repo} at commit {files.commit[:12]}…")
        self.window_.open_tokenizer(spec)
        self.accept()

    def _on_failed(self, exc: BaseException) -> None:
        self.loading = None
        self._busy(False)
        self._say(describe_error(exc), error=True)

    def _on_cancelled(self) -> None:
        if self.loading is not None:
            self._say(f"Cancelled: {self.loading[len(hub.PREFIX) :]} was not opened.")
        self.loading = None
        self._busy(False)

    def _busy(self, on: bool) -> None:
        self.progress.setVisible(on)
        self.progress.setRange(0, 0)  # a moving bar until the sizes are known
        self.cancel_button.setVisible(on)
        self.list.setEnabled(not on)
        self.search.setEnabled(not on)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setProperty("error", error)
        self.status.setStyleSheet(f"color: {app_colors().error_text};" if error else "")

    def done(self, result: int) -> None:
        self.jobs.cancel_all()  # closing stops a download
        self.loading = None
        super().done(result)
