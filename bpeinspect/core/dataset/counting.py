"""Token counts of a dataset under several tokenizers: per record, per role or field, and the
chat template's own tokens, streamed with progress and a stop.

>>> import json, tempfile, os
>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("cl100k_base")
>>> lines = [{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"}]}] * 3
>>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
...     _ = f.write("\\n".join(json.dumps(x) for x in lines))
>>> stats = count_dataset(f.name, [Target("cl100k_base", tok)])
>>> t = stats.tokenizers[0]
>>> (stats.records, t.template, t.parts, t.overhead, t.tokens)
(3, 'ChatML (gpt-4)', {'user': 3, 'assistant': 6}, 24, 33)
>>> os.unlink(f.name)

Every record of a chat dataset is rendered by each tokenizer's chat template (the whole
conversation, without a generation prompt: what a model is trained on) and its tokens are
split between the messages and the template (:func:`~bpeinspect.core.chat.count_chat`), so
``tokens == sum(parts.values()) + overhead`` for every tokenizer. Records a template refuses
(roles that do not alternate, a system message it does not take) are counted without the
template, messages joined by newlines, and counted in ``refused``. Text fields are counted
each on its own, as ordinary text (special-token text is text).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import os
import time
from array import array
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bpeinspect.core.chat.render import ChatFormat, RenderedChat, chat_format, count_chat, render_chat
from bpeinspect.core.chat.sources import templates_for
from bpeinspect.core.chat.template import ChatTemplate
from bpeinspect.core.dataset.records import RecordReader, read_records
from bpeinspect.core.dataset.shapes import Shape, conversation, field_texts, guess_shape
from bpeinspect.core.errors import ChatTemplateError, DatasetError, ShapeUnclear
from bpeinspect.core.io import load_cache
from bpeinspect.core.pool import ProcessPool
from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None]
TEMPLATE_PART = "template"  # the part name of the template's own tokens
_SAMPLE = 200  # records looked at to name the shape
_BATCH = 256  # records counted together (in one process of a pool)
_DEFAULT = object()


@dataclass(frozen=True)
class Target:
    """A tokenizer to count with, its label, and the chat template to render with
    (the default: the first of :func:`~bpeinspect.core.chat.templates_for`; ``None``: none)."""

    label: str
    tokenizer: Tokenizer
    template: ChatTemplate | None | object = _DEFAULT
    # what opens the same tokenizer again (a built-in name or a path): where its template is
    # looked for, and how a pool's process opens it; leave it unset if it was made otherwise
    spec: str | None = None

    def chat_format(self) -> ChatFormat:
        template = self.template
        if template is _DEFAULT:
            found = templates_for(self.tokenizer, self.spec)
            template = found[0] if found else None
        assert template is None or isinstance(template, ChatTemplate)
        return chat_format(self.tokenizer, template)


@dataclass
class TokenizerTotals:
    """One tokenizer's counts over a dataset."""

    label: str
    template: str  # the chat format's label, "" for a fields dataset
    tokens: int = 0
    parts: dict[str, int] = field(default_factory=dict)  # role or field -> tokens
    overhead: int = 0  # the template's tokens, all records together
    refused: int = 0  # records the template refused (counted without it)
    per_record: array = field(default_factory=lambda: array("q"))

    def summary(self) -> dict[str, float]:
        """Mean, median, 90th percentile and maximum tokens per record."""
        a = np.frombuffer(self.per_record, dtype=np.int64) if len(self.per_record) else np.zeros(1, np.int64)
        return {
            "mean": float(a.mean()),
            "median": float(np.median(a)),
            "p90": float(np.percentile(a, 90)),
            "max": int(a.max()),
        }


@dataclass(frozen=True)
class LongRecord:
    """One of the longest records: its place in the file, its tokens under each tokenizer, and
    the record itself (to open it)."""

    index: int
    tokens: tuple[int, ...]
    record: Any

    def preview(self, limit: int = 80) -> str:
        """The first words of the record, on one line; a chat's from its first message that is not
        the system prompt (which a whole dataset often shares)."""
        msgs = conversation(self.record)
        if msgs is not None:
            msgs = [m for m in msgs if m.get("role") != "system"] or msgs
            text = " ".join(str(m.get("content") or "") for m in msgs if isinstance(m.get("content"), str))
        elif isinstance(self.record, dict):
            text = " ".join(v for v in self.record.values() if isinstance(v, str))
        else:
            text = str(self.record)
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class DatasetStats:
    """Counts of one dataset file under every tokenizer (see the module docstring)."""

    path: str
    shape: Shape
    tokenizers: list[TokenizerTotals]
    records: int = 0
    skipped: int = 0  # records of another shape, lines that are not JSON
    problems: list[str] = field(default_factory=list)
    truncated: str = ""
    stopped: bool = False  # cancelled: the counts cover the records read until then
    longest: list[LongRecord] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def part_names(self) -> list[str]:
        """Roles or fields in the order first seen (the template's part last)."""
        names = list(dict.fromkeys(k for t in self.tokenizers for k in t.parts))
        return names + ([TEMPLATE_PART] if self.shape.kind == "chat" else [])

    def histogram(self, bins: int = 40) -> tuple[np.ndarray, list[np.ndarray]]:
        """Shared bin edges (from 0 to the largest 99th percentile; the last bin also holds
        everything above) and each tokenizer's record counts per bin."""
        arrays = [np.frombuffer(t.per_record, dtype=np.int64) for t in self.tokenizers if len(t.per_record)]
        if not arrays:
            return np.linspace(0, 1, bins + 1), [np.zeros(bins, np.int64) for _ in self.tokenizers]
        hi = max(float(np.percentile(a, 99)) for a in arrays)
        hi = max(_nice(hi), 1.0)
        edges = np.linspace(0, hi, bins + 1)
        counts = []
        for t in self.tokenizers:
            a = np.frombuffer(t.per_record, dtype=np.int64) if len(t.per_record) else np.zeros(0, np.int64)
            counts.append(np.histogram(np.minimum(a, hi), bins=edges)[0])
        return edges, counts

    def as_dict(self, bins: int = 40) -> dict[str, Any]:
        """Everything as plain JSON data."""
        edges, counts = self.histogram(bins)
        return {
            "file": self.path,
            "shape": self.shape.label,
            "records": self.records,
            "skipped": self.skipped,
            "problems": self.problems,
            "truncated": self.truncated or None,
            "stopped": self.stopped,
            "tokenizers": [
                {
                    "tokenizer": t.label,
                    "template": t.template or None,
                    "tokens": t.tokens,
                    "parts": dict(t.parts),
                    "template_tokens": t.overhead if self.shape.kind == "chat" else None,
                    "refused_by_template": t.refused,
                    "per_record": t.summary(),
                    "histogram": {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts[i]]},
                }
                for i, t in enumerate(self.tokenizers)
            ],
            "longest": [
                {
                    "record": r.index,
                    "tokens": dict(zip((t.label for t in self.tokenizers), r.tokens)),
                    "preview": r.preview(),
                }
                for r in self.longest
            ],
        }


def _nice(x: float) -> float:
    """``x`` rounded up to a round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of
    ten), so that the histogram's range is not much wider than the data.

    >>> [_nice(v) for v in (7, 130, 241, 2001, 10_000)]
    [8.0, 150.0, 250.0, 2500.0, 10000.0]
    """
    if x <= 0:
        return 1.0
    p = 10.0 ** np.floor(np.log10(x))
    return float(next(m * p for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if m * p >= x))


@dataclass
class _Context:
    """What counting a batch of records needs. Sent to a pool's children once per run, as the
    specs the tokenizers were opened from and the templates: each child opens them itself."""

    shape: Shape
    tokenizers: list[Tokenizer]
    formats: list[ChatFormat]  # chat datasets: each target's format, and the same without a template
    plain: list[ChatFormat]
    add_generation_prompt: bool
    specs: list[str | None]

    @classmethod
    def make(cls, shape: Shape, targets: Sequence[Target], add_generation_prompt: bool) -> _Context:
        chat = shape.kind == "chat"
        formats = [t.chat_format() for t in targets] if chat else []
        plain = [chat_format(t.tokenizer, None) for t in targets] if chat else []
        specs = [t.spec for t in targets]
        return cls(shape, [t.tokenizer for t in targets], formats, plain, add_generation_prompt, specs)

    @property
    def shippable(self) -> bool:
        return all(self.specs)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # one template (or None) per target: only chat datasets have formats, and zip() would
        # otherwise leave a child with no tokenizer at all
        templates = [f.template for f in self.formats] if self.formats else [None] * len(self.specs)
        # (the child opens the files again: from the load cache if this process uses it)
        return _rebuild_context, (self.shape, self.specs, templates, self.add_generation_prompt, load_cache.enabled())


@functools.lru_cache(maxsize=8)
def _open(spec: str) -> Tokenizer:
    from bpeinspect.core.io.load import load_tokenizer

    return load_tokenizer(spec)


def _rebuild_context(
    shape: Shape, specs: list[str], templates: list[ChatTemplate | None], gen: bool, cache: bool = False
) -> _Context:
    if cache:
        load_cache.turn_on()
    targets = [Target(spec, _open(spec), template, spec) for spec, template in zip(specs, templates)]
    if shape.kind != "chat":
        targets = [Target(t.label, t.tokenizer, None, t.spec) for t in targets]
    return _Context.make(shape, targets, gen)


@dataclass
class _Batch:
    """The counts of a batch of records: each target's totals, and each record's total per target."""

    totals: list[TokenizerTotals]
    records: list[tuple[int, tuple[int, ...]]]  # (index, totals) of the records of the shape
    others: list[int]  # indices of records of another shape


def _count_batch(ctx: _Context, batch: list[tuple[int, Any]]) -> _Batch:
    totals = [TokenizerTotals("", "") for _ in ctx.tokenizers]
    out = _Batch(totals, [], [])
    chat = ctx.shape.kind == "chat"
    # tokenizers with the same template share one rendering of each record
    keys = [
        (f.template.source, tuple(sorted(f.template.special_tokens.items()))) if f.template is not None else None
        for f in ctx.formats
    ]
    for index, record in batch:
        got = _count_chat(ctx, keys, totals, record) if chat else _count_fields(ctx, totals, record)
        if got is None:
            out.others.append(index)
        else:
            out.records.append((index, got))
    return out


def _count_fields(ctx: _Context, totals: list[TokenizerTotals], record: Any) -> tuple[int, ...] | None:
    texts = field_texts(ctx.shape, record)
    if not any(texts):
        return None
    out = []
    for tok, t in zip(ctx.tokenizers, totals):
        n_all = 0
        for name, text in zip(ctx.shape.fields, texts):
            n = len(tok.encode_ordinary(text)) if text else 0
            t.parts[name] = t.parts.get(name, 0) + n
            n_all += n
        t.tokens += n_all
        t.per_record.append(n_all)
        out.append(n_all)
    return tuple(out)


def _count_chat(ctx: _Context, keys: list[Any], totals: list[TokenizerTotals], record: Any) -> tuple[int, ...] | None:
    msgs = conversation(record)
    if msgs is None:
        return None
    rendered: dict[Any, Any] = {}
    out = []
    for fmt, plain, key, t in zip(ctx.formats, ctx.plain, keys, totals):
        r: RenderedChat | Literal[False] | None = rendered.get(key)  # False: the template refused
        if r is None:
            try:
                r = render_chat(fmt, msgs, add_generation_prompt=ctx.add_generation_prompt, plain=True)
            except ChatTemplateError:
                r = False
            rendered[key] = r
        if r is False:
            t.refused += 1
            c = count_chat(plain, render_chat(plain, msgs, plain=True))
        else:
            c = count_chat(fmt, r)
        parts = t.parts
        for role, n in zip(c.roles, c.per_message):
            parts[role] = parts.get(role, 0) + n
        t.overhead += c.overhead
        t.tokens += c.total
        t.per_record.append(c.total)
        out.append(c.total)
    return tuple(out)


def _merge(into: TokenizerTotals, part: TokenizerTotals) -> None:
    into.tokens += part.tokens
    into.overhead += part.overhead
    into.refused += part.refused
    for k, v in part.parts.items():
        into.parts[k] = into.parts.get(k, 0) + v
    into.per_record.extend(part.per_record)


class _InProcess:
    """The pool's ``imap``, in this process."""

    @staticmethod
    def imap(fn: Callable[[Any, Any], Any], items: Any, *, context: Any = None) -> Generator[Any, None, None]:
        return (fn(context, item) for item in items)


def count_dataset(
    path: str | os.PathLike[str],
    targets: Sequence[Target],
    *,
    shape: Shape | None = None,
    add_generation_prompt: bool = False,
    longest: int = 25,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    processes: int | None = 1,
    niceness: int = 0,
) -> DatasetStats:
    """Count every record of the dataset at ``path`` under each of ``targets``.

    ``shape`` (default: named from the first records, see
    :func:`~bpeinspect.core.dataset.shapes.guess_shape`; :class:`ShapeUnclear` if none fits)
    says what to count. ``progress(done, total)`` counts bytes of the file; when
    ``should_stop()`` turns true the counting stops and what was counted comes back with
    ``stopped`` set. ``longest`` records (by the first target's count) are kept to be opened.
    ``processes`` > 1 (``None``: one per CPU) counts batches of records in a
    :class:`~bpeinspect.core.pool.ProcessPool`, when every target says the ``spec`` that opens
    its tokenizer again in another process; otherwise, and with ``processes=1``, here.
    ``niceness`` lowers the children's priority (the window counts in the background).
    """
    if not targets:
        raise DatasetError("no tokenizer to count with")
    started = time.perf_counter()
    reader = read_records(path)
    records = iter(reader)
    head = list(itertools.islice(records, _SAMPLE))
    if shape is None:
        guess = guess_shape(r for _, r in head)
        if guess.shape is None:
            if not _any_record(r for _, r in head):
                raise _no_records(path, reader)
            fields = ", ".join(guess.fields) or "none"
            raise ShapeUnclear(
                f"{path}: the records are not chat messages, prompt/completion, prompt/response or text "
                f"(only {guess.fitting} of the first {guess.looked_at} fit one shape); choose the fields to "
                f"count (text fields: {fields})",
                guess.fields,
            )
        shape = guess.shape
    ctx = _Context.make(shape, targets, add_generation_prompt)
    labels = [f.label for f in ctx.formats] if shape.kind == "chat" else [""] * len(targets)
    stats = DatasetStats(str(path), shape, [TokenizerTotals(t.label, lab) for t, lab in zip(targets, labels)])
    heap: list[tuple[int, int, LongRecord]] = []
    sent: deque[tuple[list[tuple[int, Any]], int]] = deque()  # batches in flight, with the bytes read by then

    def batches() -> Iterator[list[tuple[int, Any]]]:
        it = _chain(head, records)
        while not (should_stop is not None and should_stop()):
            batch = list(itertools.islice(it, _BATCH))
            if not batch:
                return
            sent.append((batch, reader.done))
            yield batch
        stats.stopped = True

    pool = ProcessPool(processes, niceness=niceness) if ctx.shippable else None
    if pool is not None and pool.processes < 2:
        pool = None
    results = (pool or _InProcess()).imap(_count_batch, batches(), context=ctx)
    try:
        for result in results:
            batch, done = sent.popleft()
            for total, part in zip(stats.tokenizers, result.totals):
                _merge(total, part)
            stats.records += len(result.records)
            if longest:
                kept = dict(batch)
                for index, got in result.records:
                    if len(heap) < longest or got[0] > heap[0][0]:
                        item = (got[0], -index, LongRecord(index, got, kept[index]))
                        (heapq.heappush if len(heap) < longest else heapq.heapreplace)(heap, item)
            stats.skipped += len(result.others)
            stats.problems += [
                f"record {i + 1}: not {shape.label}" for i in result.others[: max(0, 20 - len(stats.problems))]
            ]
            if progress is not None:
                progress(done, reader.size)
            if should_stop is not None and should_stop():
                stats.stopped = True
                break
    finally:
        results.close()
        if pool is not None:
            pool.close()
    stats.longest = [item[2] for item in sorted(heap, reverse=True)]
    stats.skipped += reader.skipped
    stats.problems = reader.problems + stats.problems
    stats.truncated = reader.truncated
    stats.seconds = time.perf_counter() - started
    if progress is not None:
        progress(reader.done if stats.stopped else reader.size, reader.size)
    return stats


def _chain(head: list[tuple[int, Any]], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield from head
    yield from rest


def peek_shape(path: str | os.PathLike[str]) -> tuple[RecordReader, Any]:
    """The reader of ``path`` and the shape guess of its first records (for a dialog to ask about fields)."""
    reader = read_records(path)
    head = [r for _, r in itertools.islice(iter(reader), _SAMPLE)]
    if (head and not _any_record(head)) or (not head and reader.problems):  # lines, but none of them a record
        raise _no_records(path, reader)
    return reader, guess_shape(head)


def _any_record(values: Iterable[Any]) -> bool:
    """Whether some of ``values`` can hold text to count: an object or a list (of messages), not
    a bare number or string (a PDF's lone "startxref" number reads as JSON)."""
    return any(isinstance(v, (dict, list)) for v in values)


def _no_records(path: str | os.PathLike[str], reader: RecordReader) -> DatasetError:
    """Why ``path`` gave no record: it is not JSON (a PDF, a text), or it holds none."""
    if reader.problems:
        first = reader.problems[0].removeprefix(f"{reader.name} ")  # named once
        return DatasetError(f"{path}: not JSON or JSON Lines (no line is a record; {first})")
    return DatasetError(f"{path}: holds no records" + (f" ({reader.truncated})" if reader.truncated else ""))


__all__ = [
    "TEMPLATE_PART",
    "DatasetStats",
    "LongRecord",
    "ShapeUnclear",
    "Target",
    "TokenizerTotals",
    "count_dataset",
    "peek_shape",
]
