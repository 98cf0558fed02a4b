"""The segments of a long text encoded on every core: a newly opened document, a new tokenizer.

A window encodes a big text a segment at a time (see :mod:`bpeinspect.core.live_text`). On one
thread that is one core, shared with the window itself; here the segments go to the children
of a :class:`~bpeinspect.core.pool.ProcessPool` instead, several at a time (an *item* of about
:data:`ITEM_CHARS` code points), each child encoding them with every tokenizer of the round.
The tokenizers travel once per child as their tables (:class:`~bpeinspect.core.analysis.shipping.Shipped`);
the encodings come back as flat arrays (:func:`pack`), a few bytes a token, an item at a time, and become
:class:`~bpeinspect.core.Encoding` objects again on this side (:func:`unpack`), whose columns are built
from those arrays when first read (:class:`Unpacked`).

Segments can be added while the round runs (a text still going into the window):
:meth:`Round.add` queues them, :meth:`Round.close` says that no more will come. Each segment
goes with the text that follows it (``follow``, as much as the longest :func:`lookahead` of
the round's tokenizers), and each tokenizer encodes it followed by its own share of it, as
:meth:`LiveEncoding.pending <bpeinspect.core.live_text.LiveEncoding.pending>` would give it.

>>> from bpeinspect.core import load_tokenizer
>>> from bpeinspect.core.live_text import LiveEncoding
>>> tok = load_tokenizer("cl100k_base")
>>> text = LiveText("one\\ntwo\\nthree\\n" * 3, target=8)
>>> live = LiveEncoding(tok, text)
>>> work = Round([tok])
>>> work.add([(seg, follow_of(text, seg.k, work.lookahead)) for seg in text.segments]); work.close()
>>> for done in encode_round(work, processes=1):
...     for k, seg, head, enc in done:
...         _ = live.put(seg, enc, head)
>>> live.encoding().ids == tok.encode(text.text())
True
"""

from __future__ import annotations

import itertools
import threading
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import fields
from typing import NamedTuple

import numpy as np

from bpeinspect.core.analysis.shipping import Shipped, can_ship
from bpeinspect.core.encoding import Encoding
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.live_text.segment_encoding import encode_segment, lookahead
from bpeinspect.core.live_text.segments import LiveText, Segment
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.pool import BACKGROUND_NICENESS, ProcessPool, can_spawn, default_processes
from bpeinspect.core.tokenizer import Tokenizer

__all__ = ["ITEM_CHARS", "Round", "Unpacked", "can_encode_far", "encode_round", "follow_of", "pack", "unpack"]

ITEM_CHARS = 1 << 16  # code points of segments a child encodes at a time
# the children's priority: below the window's, so that its GUI thread gets a core when it needs one
NICENESS = BACKGROUND_NICENESS
WAIT = 0.02  # seconds the round waits for segments before it looks at what is done meanwhile
# the per-token columns of an Encoding, sent as 32-bit integers (a segment's offsets are small)
_COLUMNS = ("byte_starts", "byte_ends", "char_starts", "char_ends", "utf16_starts", "utf16_ends", "pieces_of")

ShouldStop = Callable[[], bool]
Packed = tuple  # see pack()


def can_encode_far(tok: Tokenizer) -> bool:
    """Whether child processes can encode segments for ``tok``: this process may start them,
    it may use more than one CPU, and ``tok`` can be sent as its tables."""
    return can_spawn() and default_processes() > 1 and can_ship(tok)


def follow_of(text: LiveText, k: int, chars: int) -> str:
    """The first ``chars`` code points after segment ``k`` of ``text`` (``""`` after the last)."""
    segs = text.segments
    return segs[k + 1].text[:chars] if k + 1 < len(segs) else ""


def pack(encs: list[Encoding]) -> Packed:
    """``encs`` without their texts, as a few flat arrays for all of them together: what a
    child sends back (see :func:`unpack`)."""
    counts = np.array([(len(e.ids), len(e.piece_spans)) for e in encs], dtype=np.int64).reshape(-1, 2)
    ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encs), dtype=np.int32, count=int(counts[:, 0].sum()))
    cols = tuple(
        np.frombuffer(b"".join(getattr(e, c).tobytes() for e in encs), dtype=np.int64).astype(np.int32).tobytes()
        for c in _COLUMNS
    )
    spans = np.fromiter(
        itertools.chain.from_iterable(itertools.chain.from_iterable(e.piece_spans) for e in encs),
        dtype=np.int32,
        count=2 * int(counts[:, 1].sum()),
    )
    flags = b"".join(bytes(e.flags) for e in encs)
    return counts.tobytes(), ids.tobytes(), cols, flags, spans.tobytes(), [list(e.dropped) for e in encs]


def unpack(texts: list[str], packed: Packed, token_bytes_of: Callable[[int], bytes]) -> list[Encoding]:
    """The :class:`Encoding` objects of ``texts`` that :func:`pack` made flat. Their ids (and
    what they dropped) are lists at once; their per-token columns and pre-tokens stay in the
    flat arrays, shared by the item, until something reads them (:class:`Unpacked`): a 64 MB
    text's encodings built at once took most of a core and several GB of memory, while the
    window reads the columns of the few segments it shows.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("o200k_base")
    >>> encs = [tok.encode_with_offsets(t) for t in ("héllo wörld 🎉 <|endoftext|>", "", "two\\n")]
    >>> unpack([e.text for e in encs], pack(encs), tok.token_bytes) == encs
    True
    """
    counts_b, ids_b, cols_b, flags, spans_b, dropped = packed
    counts = np.frombuffer(counts_b, dtype=np.int64).reshape(-1, 2)
    tok_at = [0, *itertools.accumulate(counts[:, 0].tolist())]
    piece_at = [0, *itertools.accumulate(counts[:, 1].tolist())]
    ids = np.frombuffer(ids_b, dtype=np.int32).tolist()
    flat = _Flat(
        tuple(np.frombuffer(data, dtype=np.int32) for data in cols_b), flags, np.frombuffer(spans_b, dtype=np.int32)
    )
    return [
        Unpacked(
            text,
            token_bytes_of,
            ids[tok_at[i] : tok_at[i + 1]],
            [tuple(d) for d in dropped[i]],
            (flat, tok_at[i], piece_at[i], piece_at[i + 1]),
        )
        for i, text in enumerate(texts)
    ]


class _Flat(NamedTuple):
    """An item's per-token columns (:data:`_COLUMNS`, 32-bit), flags and pre-token spans, for all of its segments."""

    cols: tuple[np.ndarray, ...]
    flags: bytes
    spans: np.ndarray  # start, end, start, end...


_Where = tuple[_Flat, int, int, int]  # an item's flat arrays, and where a segment's tokens and pre-tokens start and end


class Unpacked(Encoding):
    """An :class:`Encoding` (from :func:`unpack`) whose per-token columns, flags and pre-token
    spans are built from the item's flat arrays the first time one of them is read (on any
    thread; two threads that read at once build the same values). Its ids, token count and
    byte count are there at once. It equals the :class:`Encoding` it was packed from."""

    def __init__(
        self, text: str, token_bytes_of: Callable[[int], bytes], ids: list[int], dropped: list, flat: _Where
    ) -> None:  # (not the dataclass's: the lazy fields are left unset, see __getattr__)
        self.text, self.token_bytes_of, self.ids, self.dropped = text, token_bytes_of, ids, dropped
        self._flat: _Where | None = flat

    def __getattr__(self, name: str):
        # only called for an attribute not set yet: a lazy field is built (with the others)
        if name not in _LAZY:
            raise AttributeError(name)
        self.fill()
        return self.__dict__[name]

    def fill(self) -> None:
        """Build the lazy fields now (each set whole, then the flat arrays let go)."""
        src = self.__dict__.get("_flat")
        if src is None:
            return
        flat, a, p, q = src
        b = a + len(self.ids)
        # a pre-token span is a new tuple, millions of them for a big segment: without quiet_gc
        # they set off full collections that walk the growing list (with every thread locked out)
        with quiet_gc():
            for name, col in zip(_COLUMNS, flat.cols):
                values = array("q")
                values.frombytes(col[a:b].astype(np.int64).tobytes())
                setattr(self, name, values)
            self.flags = bytearray(flat.flags[a:b])
            spans = flat.spans[2 * p : 2 * q]
            self.piece_spans = list(zip(spans[0::2].tolist(), spans[1::2].tolist()))
        self._flat = None

    def _flat_byte_ends(self) -> np.ndarray | None:
        """This segment's byte ends in the item's flat arrays (32-bit), until the columns are built."""
        src = self.__dict__.get("_flat")
        if src is None:
            return None
        flat, a, _, _ = src
        return flat.cols[_BYTE_ENDS][a : a + len(self.ids)]

    @property
    def n_bytes(self) -> int:
        ends = self._flat_byte_ends()
        return super().n_bytes if ends is None or not len(ends) else int(ends[-1])

    def byte_ends_array(self) -> np.ndarray:
        """The byte ends as a numpy array, not building the lazy fields."""
        ends = self._flat_byte_ends()
        return super().byte_ends_array() if ends is None else ends.astype(np.int64)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(Encoding) if f.compare)

    __hash__ = None  # type: ignore[assignment]  # (as the dataclass's: equal by value, mutable)

    def __reduce__(self):
        # sent to another process as the plain Encoding it stands for
        self.fill()
        return Encoding, tuple(getattr(self, f.name) for f in fields(Encoding))


_LAZY = frozenset((*_COLUMNS, "flags", "piece_spans"))
_BYTE_ENDS = _COLUMNS.index("byte_ends")


def _encode_item(context: tuple, item: list[tuple[str, str]]) -> list[Packed]:
    """In a child (or here): every segment of ``item`` (its text and what follows it) encoded by
    every tokenizer of ``context``, packed together per tokenizer. An empty item is no work
    (see :func:`encode_round`)."""
    out: list[Packed] = []
    if not item:
        return out
    for shipped in context:
        here = isinstance(shipped, Shipped)  # (a child is handed the tokenizer itself)
        tok = shipped.tokenizer if here else shipped
        should_stop = shipped.should_stop if here else None
        reach = lookahead(tok)
        done = []
        for text, follow in item:
            if should_stop is not None and should_stop():  # done here, by the window's worker: it gives way
                raise Cancelled()
            done.append(encode_segment(tok, text, follow[:reach]))
        out.append(pack(done))
    return out


class Round:
    """Segments to encode with ``toks`` on other processes; safe to feed from one thread while
    :func:`encode_round` reads it on another."""

    def __init__(self, toks: list[Tokenizer]) -> None:
        self.toks = list(toks)
        self.lookahead = max(lookahead(t) for t in self.toks)
        self._queue: deque[tuple[Segment, str]] = deque()
        self._closed = False
        self._cond = threading.Condition()
        self.queued = 0  # code points of the segments added so far

    def add(self, segments: list[tuple[Segment, str]]) -> None:
        """Queue ``(segment, follow)`` pairs: ``follow`` is the text after the segment, at least
        :attr:`lookahead` code points of it unless the text ends before (see :func:`follow_of`)."""
        if segments:
            with self._cond:
                self._queue.extend(segments)
                self.queued += sum(len(s.text) for s, _ in segments)
                self._cond.notify_all()

    def close(self) -> None:
        """No more segments will be added."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def take(self, timeout: float) -> list[tuple[Segment, str]] | None:
        """The next item's segments (waiting ``timeout`` seconds at most for some: ``[]`` if none
        came); ``None`` when the round is over."""
        with self._cond:
            if not self._queue and not self._closed:
                self._cond.wait(timeout)
            item, size = [], 0
            while self._queue and size < ITEM_CHARS:
                seg, follow = self._queue.popleft()
                if seg.alive:  # one an edit replaced meanwhile is not worth encoding
                    item.append((seg, follow))
                    size += len(seg.text)
            return item if item or self._queue or not self._closed else None


def encode_round(
    work: Round, *, processes: int | None = None, should_stop: ShouldStop | None = None
) -> Iterator[list[tuple[int, Segment, str, Encoding]]]:
    """Encode the segments of ``work`` as they come, on ``processes`` processes (default: one
    child per CPU; this thread only builds the encodings they send back, and encodes only what
    a child that failed hands back). Yields, an item at a time, ``(k, segment, head, encoding)``
    for the round's ``k``-th tokenizer, ``head`` being the text after the segment it was encoded
    with. Runs until :meth:`Round.close` and every segment is done, or ``should_stop()``. Every
    tokenizer of the round must pass :func:`can_encode_far`.

    While no segment is waiting, an empty item (no work) now and then lets the pool hand back
    what is done meanwhile."""
    stop = should_stop or (lambda: False)
    context = tuple(Shipped(t, stop) for t in work.toks)
    heads = [lookahead(t) for t in work.toks]
    sent: deque[list[tuple[Segment, str]]] = deque()
    if processes is None:
        processes = default_processes() + 1

    def items() -> Iterator[list[tuple[str, str]]]:
        while not stop():
            item = work.take(WAIT)
            if item is None:
                return
            if item:
                sent.append(item)
            yield [(seg.text, follow) for seg, follow in item]

    with ProcessPool(processes, niceness=NICENESS) as pool, quiet_gc():
        results = pool.imap(_encode_item, items(), context=context, here=False)
        try:
            for per_tok in results:
                if not per_tok:
                    continue  # an empty item
                item = sent.popleft()
                texts = [seg.text for seg, _ in item]
                out: list[tuple[int, Segment, str, Encoding]] = []
                for k, packed in enumerate(per_tok):
                    if stop():  # asked between tokenizers: a window's worker gives way to it there
                        return
                    encs = unpack(texts, packed, work.toks[k].token_bytes)
                    out.extend((k, seg, follow[: heads[k]], enc) for (seg, follow), enc in zip(item, encs))
                yield out
        finally:
            results.close()
