"""Statistics across texts and tokenizers: counts, compression, premiums (agreement and overlap
between two tokenizers: :mod:`bpeinspect.core.analysis.compare`).

Counts treat special-token text as ordinary text (``encode_ordinary``), so a sample that
happens to contain ``<|endoftext|>`` is measured rather than refused.

>>> from bpeinspect.core import load_tokenizer
>>> s = text_stats(load_tokenizer("cl100k_base"), "hello world", tokenizer="cl100k_base", source="demo")
>>> (s.tokens, s.bytes, s.chars, s.bytes_per_token)
(2, 11, 11, 5.5)

The *premium* of a language (Petrov et al. 2023, "Language Model Tokenizers Introduce
Unfairness Between Languages") is its token count divided by the baseline language's count
for the same content under the same tokenizer: 2.0 means the text costs twice as much.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from bpeinspect.core.analysis.samples import Sample, SampleError
from bpeinspect.core.analysis.shipping import Shipped, can_ship, count_text
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.pool import ProcessPool
from bpeinspect.core.split.cuts import can_cut, stream_cut
from bpeinspect.core.text import decode_utf8, fix_surrogates
from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]

_CHUNK_BYTES = 1 << 20
# Below this much text per tokenizer a pool's children (each loading the tokenizer)
# would cost more than they save: it is counted here. This process counts meanwhile, so a
# child pays off from a few MB (the UDHR is 7 MB; see benchmarks/languages.py).
POOL_MIN_BYTES = 2 << 20
# The last parts shared out are smaller (a pool's processes then finish together rather than
# one idling while another counts a whole chunk): the last _TAIL_CHUNKS chunks per process are
# cut _TAIL_SPLIT times finer.
_TAIL_CHUNKS = 3
_TAIL_SPLIT = 8


class PerToken:
    """The ratios of a row that counts ``tokens`` over ``bytes`` and ``chars`` of text.

    >>> TextStats("t", "en", 4, 10, 8).bytes_per_token
    2.5
    """

    tokens: int
    bytes: int
    chars: int

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class TextStats(PerToken):
    """Counts for one tokenizer on one text; ``premium`` is set when a baseline was chosen."""

    tokenizer: str
    source: str
    tokens: int
    bytes: int
    chars: int
    premium: float | None = None

    def as_dict(self) -> dict[str, object]:
        """Plain fields plus the derived ratios, for JSON and CSV."""
        d: dict[str, object] = asdict(self)
        d["bytes_per_token"] = round(self.bytes_per_token, 4)
        d["chars_per_token"] = round(self.chars_per_token, 4)
        if self.premium is not None:
            d["premium"] = round(self.premium, 4)
        return d


CSV_COLUMNS = ("tokenizer", "source", "tokens", "bytes", "chars", "bytes_per_token", "chars_per_token", "premium")


@dataclass
class StatsTable:
    """Rows of :class:`TextStats` for tokenizers × sources, in the order they were measured."""

    rows: list[TextStats] = field(default_factory=list)
    baseline: str | None = None

    @property
    def tokenizers(self) -> list[str]:
        return list(dict.fromkeys(r.tokenizer for r in self.rows))

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(r.source for r in self.rows))

    def get(self, tokenizer: str, source: str) -> TextStats | None:
        for r in self.rows:
            if r.tokenizer == tokenizer and r.source == source:
                return r
        return None

    def with_baseline(self, source: str | None) -> StatsTable:
        """The same counts with premiums against ``source`` (``None`` drops them), without re-encoding.

        >>> t = StatsTable([TextStats("t", "en", 10, 40, 40), TextStats("t", "ko", 50, 60, 20)])
        >>> [r.premium for r in t.with_baseline("en").rows]
        [1.0, 5.0]
        """
        if source is not None and source not in self.sources:
            raise SampleError(f"baseline {source!r} is not one of the samples")
        rows = []
        for r in self.rows:
            base = self.get(r.tokenizer, source) if source is not None else None
            premium = r.tokens / base.tokens if base is not None and base.tokens else None
            rows.append(TextStats(r.tokenizer, r.source, r.tokens, r.bytes, r.chars, premium))
        return StatsTable(rows, source)

    def to_records(self) -> list[dict[str, object]]:
        return [r.as_dict() for r in self.rows]

    def to_csv(self) -> str:
        """The table as CSV text with a header row (``premium`` empty without a baseline)."""
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
        w.writeheader()
        for rec in self.to_records():
            w.writerow({k: rec.get(k, "") for k in CSV_COLUMNS})
        return out.getvalue()


def text_stats(tok: Tokenizer, text: str, *, tokenizer: str = "", source: str = "") -> TextStats:
    """Counts for ``text`` held in memory."""
    text = fix_surrogates(text)
    return TextStats(
        tokenizer or tok.name, source, len(tok.encode_ordinary(text)), len(text.encode("utf-8")), len(text)
    )


def iter_counts(tok: Tokenizer, chunks: Iterable[str]) -> Iterator[tuple[int, int, int]]:
    """Count tokens of a text given as consecutive chunks; yields running ``(tokens, chars, bytes)``.

    Exact: the text is counted in parts cut at cut points where the tokenizer allows it
    (:mod:`bpeinspect.core.split.cuts`), else whole. The last value yielded is the total.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("r50k_base")
    >>> list(iter_counts(tok, ["hello wo", "rld"]))[-1] == (len(tok.encode("hello world")), 11, 11)
    True
    """
    tokens = chars = nbytes = 0
    for part in stream_cut(chunks, cuts=can_cut(tok)):
        tokens += count_text(tok, part)
        chars += len(part)
        nbytes += len(part.encode("utf-8", "surrogatepass"))
        yield tokens, chars, nbytes
    yield tokens, chars, nbytes


def iter_chunks(sample: Sample, chunk_bytes: int = _CHUNK_BYTES) -> Iterator[tuple[str, int]]:
    """A sample's text in pieces as ``(text, bytes consumed)``; files are decoded as strict UTF-8."""
    if sample.text is not None:
        text = fix_surrogates(sample.text)
        for i in range(0, len(text), chunk_bytes):
            part = text[i : i + chunk_bytes]
            yield part, len(part.encode("utf-8"))
        return
    path = sample.path
    assert path is not None

    def bad(at: int, byte: int) -> SampleError:
        return SampleError(f"{path}: not UTF-8 text (byte 0x{byte:02x} at offset {at})")

    try:
        with open(path, "rb") as f:
            yield from decode_utf8(iter(lambda: f.read(chunk_bytes), b""), bad)
    except OSError as exc:
        raise SampleError(f"{path}: cannot read: {exc.strerror or exc}") from None


def compute_stats(
    tokenizers: Mapping[str, Tokenizer] | Sequence[tuple[str, Tokenizer]],
    samples: Sequence[Sample],
    *,
    baseline: str | Sample | None = None,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    chunk_bytes: int = _CHUNK_BYTES,
    processes: int | None = 1,
    pool: ProcessPool | None = None,
) -> StatsTable:
    """Measure every tokenizer on every sample; the work for long texts (100 MB) streams.

    ``tokenizers`` maps labels to tokenizers. ``baseline`` names one of ``samples`` (or is a
    separate :class:`Sample`) whose token count divides each row's count for the premium.
    ``progress(done, total)`` counts bytes; ``should_stop()`` is checked between chunks and
    raises :class:`Cancelled`.

    ``processes`` > 1 (``None``: one per CPU) counts in a
    :class:`~bpeinspect.core.pool.ProcessPool`, each process a part of the text cut where the
    tokenizer allows it (:mod:`bpeinspect.core.split.cuts`);
    other tokenizers share out whole samples (those up to ``chunk_bytes``;
    the rest are measured here), and samples under :data:`POOL_MIN_BYTES` in all are measured
    here. ``pool``: a pool to use (and leave open) instead of one made for this call, so that
    several calls (one per tokenizer) start its children once.
    """
    pairs = list(tokenizers.items()) if isinstance(tokenizers, Mapping) else list(tokenizers)
    base_sample: Sample | None
    if isinstance(baseline, Sample):
        base_sample = baseline
    elif baseline is not None:
        base_sample = next((s for s in samples if s.name == baseline), None)
        if base_sample is None:
            raise SampleError(f"baseline {baseline!r} is not one of the samples")
    else:
        base_sample = None
    todo = list(samples) + ([base_sample] if base_sample is not None and base_sample not in samples else [])
    total = sum(s.size() for s in todo) * len(pairs)
    done = 0

    read = 0  # bytes read, over every tokenizer

    def feed(sample: Sample, step: int, row: list[int]) -> Iterator[str]:
        """``sample``'s text ``step`` bytes at a time; ``row`` gets its bytes and characters."""
        nonlocal done, read
        for text, n in iter_chunks(sample, step):
            if should_stop is not None and should_stop():
                raise Cancelled()
            row[1] += n
            row[2] += len(text)
            read += n
            yield text
            done += n
            if progress is not None:
                progress(done, total)

    def measure(label: str, tok: Tokenizer, sample: Sample) -> TextStats:
        *_, (tokens, chars, nbytes) = iter_counts(tok, feed(sample, chunk_bytes, [0, 0, 0]))
        return TextStats(label, sample.name, tokens, nbytes, chars)

    def measure_in_pool(label: str, tok: Tokenizer, cuts: bool) -> dict[str, TextStats]:
        """Share the samples out (cut at cut points if ``cuts``, else whole samples)."""
        sizes = [[0, 0, 0] for _ in todo]  # tokens, bytes, chars
        here = {k for k, s in enumerate(todo) if not cuts and s.size() > chunk_bytes}
        # read a finer step at a time and cut at ``chunk_bytes``, finer in the tail
        tail, step = _TAIL_CHUNKS * shared.processes * chunk_bytes, max(1, chunk_bytes // _TAIL_SPLIT)
        end = read + sum(s.size() for k, s in enumerate(todo) if k not in here)

        def size() -> int:
            return chunk_bytes if end - read > tail else step

        def parts() -> Iterator[tuple[int, str]]:
            for k, sample in enumerate(todo):
                if k not in here:
                    chunks = feed(sample, step if cuts else chunk_bytes, sizes[k])
                    yield from ((k, part) for part in stream_cut(chunks, size=size, cuts=cuts))

        for k, tokens in shared.imap(_count_tokens, parts(), context=Shipped(tok, should_stop)):
            sizes[k][0] += tokens
        out = {s.name: TextStats(label, s.name, *sizes[k]) for k, s in enumerate(todo)}
        for k in sorted(here):
            out[todo[k].name] = measure(label, tok, todo[k])
        return out

    rows: list[TextStats] = []
    own_pool = pool is None
    shared = ProcessPool(processes) if pool is None else pool
    try:
        for label, tok in pairs:
            if shared.processes > 1 and total >= POOL_MIN_BYTES * len(pairs) and can_ship(tok):
                measured = measure_in_pool(label, tok, cuts=can_cut(tok))
            else:
                measured = {s.name: measure(label, tok, s) for s in todo}
            rows.extend(_with_premiums(measured, samples, base_sample))
    finally:
        if own_pool:
            shared.close()
    if progress is not None:
        progress(total, total)
    return StatsTable(rows, base_sample.name if base_sample is not None else None)


def _with_premiums(measured: dict[str, TextStats], samples: Sequence[Sample], base: Sample | None) -> list[TextStats]:
    """The rows of ``samples``, with premiums against ``base`` if there is one."""
    base_tokens = measured[base.name].tokens if base is not None else 0
    rows = []
    for s in samples:
        r = measured[s.name]
        if base is not None and base_tokens:
            r = TextStats(r.tokenizer, r.source, r.tokens, r.bytes, r.chars, r.tokens / base_tokens)
        rows.append(r)
    return rows


def _count_tokens(shipped: Shipped | Tokenizer, item: tuple[int, str]) -> tuple[int, int]:
    """Pool task: ``(sample index, tokens in the text)`` (a whole sample unless the tokenizer may be cut)."""
    tok = shipped.tokenizer if isinstance(shipped, Shipped) else shipped
    k, text = item
    return k, count_text(tok, text)


__all__ = [
    "CSV_COLUMNS",
    "Cancelled",
    "PerToken",
    "Sample",
    "SampleError",
    "StatsTable",
    "TextStats",
    "compute_stats",
    "iter_chunks",
    "iter_counts",
    "text_stats",
]
