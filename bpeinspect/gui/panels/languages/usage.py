"""The Use page: what each vocabulary spends on the corpus.

A log-log plot of how often each token occurs against its rank (one line per tokenizer: a
vocabulary that spends its budget on this corpus has a long tail), and under it, per
tokenizer, the share of its tokens the corpus never uses and, for the chosen tokenizer, the
unused tokens by script or kind, with the unreachable ones (which no text can give) counted
apart. The view counts the ids on the counting processes when the page is first shown.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QSplitter, QTextBrowser

from bpeinspect.core import display_bytes
from bpeinspect.core.analysis import CorpusStats, VocabularyUse
from bpeinspect.gui.overlay.palette import UiColors
from bpeinspect.gui.panels.languages.plotbase import PlotPage

EXAMPLES = 8  # unused tokens shown per category
SORT_CHUNK = 20_000  # unused tokens sorted into categories per drawing step
RANK_POINTS = 2000  # points of each rank-frequency line (log-spaced ranks: the same pixels)


def rank_points(counts: np.ndarray, limit: int = RANK_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(ranks, counts)`` to draw a rank-frequency line (counts by rank, from 1) on a log
    scale: every rank when they are few, else about ``limit`` ranks spaced evenly in log
    from the first to the last. A line of 200k points made its first paint take 100 ms.

    >>> r, c = rank_points(np.arange(100_000, 0, -1), limit=50); int(r[0]), int(r[-1]), len(r) <= 50
    (1, 100000, True)
    """
    n = len(counts)
    if n <= limit:
        return np.arange(1, n + 1, dtype=float), counts.astype(float)
    ranks = np.unique(np.geomspace(1, n, limit).round().astype(np.int64))
    return ranks.astype(float), counts[ranks - 1].astype(float)


class UsePage(PlotPage):
    """Token counts by rank (log-log), and the unused share and categories of each vocabulary."""

    title = "Use"

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.uses: dict[str, VocabularyUse] = {}  # tokenizer label -> its use of the shown corpus
        self.tokens_of: dict[str, Callable[[int], bytes]] = {}  # tokenizer label -> its token_bytes
        self.report = QTextBrowser()
        lay = self.box
        lay.removeWidget(self.plot)
        split = QSplitter()
        split.setOrientation(Qt.Orientation.Vertical)
        split.addWidget(self.plot)
        split.addWidget(self.report)
        split.setSizes([400, 260])
        lay.addWidget(split, 1)
        self.item.setLogMode(x=True, y=True)

    def set_uses(self, uses: dict[str, VocabularyUse]) -> None:
        self.uses = uses
        self.redraw()

    def empty_reason(self, stats: CorpusStats | None) -> str:
        if stats is None or not stats.tokenizers:
            return "Nothing counted yet."
        if not len(stats.corpus):
            return "No language passes the filters."
        if any(tok not in self.uses for tok in stats.tokenizers):
            return "Counting every token of the corpus under each tokenizer…"
        return ""

    def draw(self, stats: CorpusStats, c: UiColors) -> Iterator[None]:
        for k, tok in enumerate(stats.tokenizers):
            x, y = rank_points(self.uses[tok].rank_frequency())
            self.item.addItem(pg.PlotDataItem(x, y, pen=pg.mkPen(self.series_color(k), width=2), name=tok))
            yield
        self.set_labels(
            f"Token use on {stats.corpus.title}: how often each token occurs, by rank",
            "occurrences (log scale)",
            "rank (log scale)",
        )
        yield
        report = ""
        for part in self._report(stats):
            if part is None:
                yield
            else:
                report = part
        yield from self._lay_out_rows(report)
        self.report.setHtml(report)

    def _lay_out_rows(self, report: str) -> Iterator[None]:
        """Lay the report out a row per step in a scratch document (yielding after each) before
        the report shows it: its examples are tokens of many scripts, and the report's first
        layout loaded the fonts of all of them in one turn (tens of ms)."""
        scratch = QTextDocument()
        scratch.setDefaultFont(self.report.document().defaultFont())
        for row in report.split("</tr>"):
            scratch.setHtml(row)
            scratch.size()  # lays it out
            yield

    def report_html(self, stats: CorpusStats) -> str:
        """The report under the plot, in HTML (what :meth:`draw` writes a part at a time)."""
        return next(part for part in self._report(stats) if part is not None)

    def _report(self, stats: CorpusStats) -> Iterator[str | None]:
        """Yields None after each :data:`SORT_CHUNK` unused tokens sorted into their categories
        (a 200k vocabulary leaves about 185k unused on the UDHR: sorting them at once held the
        window about 45 ms), then the report's HTML."""
        esc = html.escape
        rows = []
        for tok in stats.tokenizers:
            u = self.uses[tok]
            dead = "" if u.unreachable is None else f"{len(u.unreachable):,}"
            rows.append(
                f"<tr><td>{esc(tok)}</td><td align='right'>{u.tokens:,}</td><td align='right'>{u.used:,} of "
                f"{u.vocab:,}</td><td align='right'>{100 * u.share_unused:.1f}%</td>"
                f"<td align='right'>{dead}</td></tr>"
            )
        out = (
            "<table cellspacing='0' cellpadding='3'><tr><th align='left'>tokenizer</th><th>tokens</th>"
            "<th>tokens used</th><th>never used</th><th>unreachable</th></tr>" + "".join(rows) + "</table>"
        )
        focus = self.focus if self.focus in self.uses else stats.tokenizers[-1]
        u = self.uses[focus]
        tb, unreachable = u.categories, u.unreachable or frozenset()
        first: dict[str, list[int]] = {}  # category -> its first EXAMPLES unused tokens
        unused_in: Counter[str] = Counter()  # category -> unused tokens, and unreachable ones
        dead_in: Counter[str] = Counter()
        for start in range(0, len(u.unused), SORT_CHUNK):
            for i in u.unused[start : start + SORT_CHUNK]:
                cat = tb[i]
                unused_in[cat] += 1
                if i in unreachable:
                    dead_in[cat] += 1
                shown = first.setdefault(cat, [])
                if len(shown) < EXAMPLES:
                    shown.append(i)
            yield None
        lines = []
        for cat, n in sorted(unused_in.items(), key=lambda r: (-r[1], r[0])):  # as unused_by_category()
            n_dead = dead_in[cat]
            examples = ", ".join(f"<code>{esc(self.example(focus, i))}</code>" for i in first[cat])
            lines.append(
                f"<tr><td>{esc(cat)}</td><td align='right'>{n:,}</td><td align='right'>{n_dead:,}</td>"
                f"<td>{examples}</td></tr>"
            )
        out += (
            f"<p><b>Never used under {esc(focus)}</b>, by script or kind (the unreachable ones no text can give):</p>"
            "<table cellspacing='0' cellpadding='3'><tr><th align='left'>category</th><th>unused</th>"
            "<th>unreachable</th><th align='left'>first of them</th></tr>" + "".join(lines) + "</table>"
        )
        yield out

    def example(self, tok: str, token_id: int) -> str:
        t = self.tokens_of.get(tok)
        return f"{token_id} {display_bytes(t(token_id))}" if t is not None else str(token_id)

    def csv_rows(self, stats: CorpusStats) -> tuple[list[str], list[list[object]]]:
        rows: list[list[object]] = []
        for tok in stats.tokenizers:
            u = self.uses.get(tok)
            if u is not None:
                rows.extend([tok, c, n, dead] for c, n, dead in u.unused_by_category())
        return ["tokenizer", "category", "unused", "unreachable"], rows


__all__ = ["UsePage"]
