"""Keep every open tokenizer's encoding up to date with the text.

Each tokenizer has a :class:`~bpeinspect.core.live_text.LiveEncoding` of the document's
segmented text. An edit replaces a segment or two; on the next event-loop turn the
segments left without an encoding are encoded: a keystroke's one or two segments right
here (a millisecond or two each; the core says what is cheap enough,
:func:`~bpeinspect.core.live_text.cheap_to_encode`), anything bigger (a file, a paste, a new tokenizer) by a
worker, a batch at a time, the segments nearest to what the panes show first. A lot of text
(a big file going in, a tokenizer added to a big text) is encoded on other processes, every
tokenizer at once (:mod:`bpeinspect.core.live_text.processes`): a *round* takes the segments
as they come in and ends when they are all encoded; :meth:`Encoder.progress` says how far each
tokenizer has got. For a
tokenizer that cannot be cut the whole text is one segment (encoded once the document is
all there). Results go into the tokenizer's row of the registry. Encodings that are
dropped are freed a few per turn.

>>> encoder = Encoder(doc, registry, jobs); encoder.encoded.connect(show)   # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from bpeinspect.core import Encoding, Tokenizer, differing_span, load_tokenizer
from bpeinspect.core.live_text import (
    Change,
    EncodeResult,
    LiveEncoding,
    Mode,
    Round,
    Segment,
    can_encode_far,
    cheap_to_encode,
    encode_round,
    encode_segment,
    follow_of,
)
from bpeinspect.core.memory import quiet_gc
from bpeinspect.gui.concurrency import Jobs
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.document import LiveDocument

BIG_ENCODING = 50_000  # tokens: an encoding this big is freed a slice at a time
WARM_UP_TEXT = "Hello, world!"
BATCH = 1 << 19  # code points of segments a worker encodes before it looks again at what is left
SHOW_EVERY = 60  # ms between showing what a worker has encoded so far
FAR_CHARS = 1 << 20  # code points: this much text to encode goes to other processes (a round)
SHOWN_HERE = 2  # segments from where the panes show that a round leaves to this process
# segments of the text a turn looks at for a round (a few µs each here: all of a long text in one
# turn held the GUI thread, thousands of segments)
HAND_OVER = 256


def load_quietly(spec: str, *, should_stop: Callable[[], bool] | None = None, **settings: Any) -> Tokenizer:
    """``load_tokenizer(spec)`` with the cyclic GC held off (see :func:`~bpeinspect.core.memory.quiet_gc`),
    ready for its first encode. ``settings`` (``pattern``, ``special_tokens``: what the file
    does not say, chosen by the user) go to :func:`~bpeinspect.core.io.formats.load_with`.

    Parsing a 200k-token vocabulary allocates enough to set off full collections, each a pause
    of the whole process. The first encode of a tokenizer builds what it keeps for the next
    ones (its token lengths, numpy the first time: a noticeable wait for o200k_base); a short encode
    here does that in the loading worker, not while the first text waits for its colours.
    ``should_stop`` (a worker's) is asked in the loaders' long loops, where the worker gives way
    to the window."""
    with quiet_gc():
        if settings:
            from bpeinspect.core.io import hub, load_with

            tok = (hub.load if hub.is_hub_spec(spec) else load_with)(spec, should_stop=should_stop, **settings)
        else:
            tok = load_tokenizer(spec, should_stop=should_stop)
        tok.encode_with_offsets(WARM_UP_TEXT, should_stop=should_stop)
        return tok


def release_encoding(enc: Encoding, step: int = 1 << 15, budget: int | None = None) -> bool:
    """Drop an encoding's big lists a slice at a time (one ``del`` of a million-item list
    frees it all in one C call, holding the interpreter for tens of milliseconds).

    With ``budget``, stop after that many slices; returns True while something is left."""
    for name in ("ids", "piece_spans"):
        items = vars(enc).get(name)  # (not building what an encoding sent by a child has not built yet)
        while items:
            if budget is not None:
                if budget <= 0:
                    return True
                budget -= 1
            del items[-step:]
    return False


def _encode_batch(tok: Tokenizer, batch: list[tuple[Segment, str]], should_stop):
    """Encode segments in a worker, yielding ``(segment, head, encoding)`` one at a time;
    segments an edit replaced meanwhile are skipped."""
    with quiet_gc():
        for seg, head in batch:
            if should_stop():
                return
            if seg.alive:
                yield seg, head, encode_segment(tok, seg.text, head, should_stop=should_stop)


def _encode_shown_segment(tok: Tokenizer, seg: Segment, head: str, should_stop):
    """Encode one segment the panes show in a worker, ahead of the round that has it too."""
    with quiet_gc():
        if seg.alive and not should_stop():
            yield seg, head, encode_segment(tok, seg.text, head, should_stop=should_stop)


class _Far:
    """A round of encoding on other processes (see :mod:`bpeinspect.core.live_text.processes`),
    as the GUI thread follows it."""

    def __init__(self, work: Round, key: tuple) -> None:
        self.work, self.key = work, key
        self.toks = set(work.toks)  # the ones still open
        self.sent: set[Segment] = set()  # segments handed to the round
        self.unsent: list[Segment] = []  # segments of a text still going in, not handed yet
        self.here: list[Segment] = []  # segments the panes show, handed to a thread one per turn
        self.late: list[Segment] = []  # segments of edits made once the round was closed: encoded here
        # the text's segments when the round started, from what the panes show on: looked at
        # HAND_OVER per turn, those its tokenizers need handed over
        self.scan: list[Segment] = []
        self.scanned = 0

    @property
    def scanning(self) -> bool:
        return self.scanned < len(self.scan)


class Encoder(QObject):
    """Encodes the document with every tokenizer of ``registry``, using ``jobs`` for workers."""

    partial = Signal(object, object)  # (Tokenizer, LiveEncoding): more of a long text is encoded
    encoded = Signal(object, object)  # (Tokenizer, EncodeResult), after the registry has it
    failed = Signal(str)
    settled = Signal()  # a round of encoding was started or ended: is_idle() may have changed

    def __init__(self, doc: LiveDocument, registry: TokenizerRegistry, jobs: Jobs) -> None:
        super().__init__(doc)
        self.doc, self.registry, self.jobs = doc, registry, jobs
        # the segments the panes show get threads of their own: in the shared pool they waited
        # behind long jobs (a round, the merge tree linking a vocabulary), seconds of a plain screen
        self._shown_pool = QThreadPool(self)
        self._shown_pool.setMaxThreadCount(1)  # one at a time, in the order they were handed over
        self.last: EncodeResult | None = None  # the latest encode of any tokenizer (for the status bar)
        self.focus = 0  # UTF-16 position the panes show: segments near it are encoded first
        self.lives: dict[Tokenizer, LiveEncoding] = {}
        self._batches: dict[Tokenizer, set[Segment]] = {}  # segments a worker is encoding
        # an edited segment, its encoding before the edit, and the edit (see live_text.Change)
        self._before: dict[Tokenizer, tuple[Segment, list[Encoding], tuple[int, int, int]]] = {}
        self._shown: dict[Tokenizer, list[Segment]] = {}  # segments encoded since they were last shown
        self._far: _Far | None = None  # the round on other processes
        self._rounds = 0  # rounds started (each job's key)
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.encode_all)
        self._show_timer = QTimer(self, singleShot=True, interval=SHOW_EVERY)
        self._show_timer.timeout.connect(self._show_progress)
        self._graveyard: list[Encoding] = []  # old encodings being freed a slice at a time
        self._free_timer = QTimer(self, singleShot=True, interval=0)
        self._free_timer.timeout.connect(self._free_some)
        doc.changed.connect(self._on_change)
        doc.edited.connect(self._timer.start)
        doc.feedingChanged.connect(self._on_feeding)
        registry.added.connect(self._add)
        registry.removed.connect(self._forget)

    def live(self, tok: Tokenizer) -> LiveEncoding | None:
        return self.lives.get(tok)

    def progress(self, tok: Tokenizer) -> tuple[int, int] | None:
        """``(encoded, total)`` code points of ``tok``'s encoding of a text still being encoded
        (the total counts what is still going into the window), ``None`` once it is all encoded."""
        live = self.lives.get(tok)
        entry = self.registry.entry(tok)
        if live is None or entry is None or entry.revision == self.doc.revision and not self.doc.is_feeding():
            return None
        total = len(self.doc.live_text) + self.doc.feed_left()
        return min(live.n_chars, total), total

    def is_idle(self) -> bool:
        """True when every tokenizer's encoding is of the current text (or failed on it)."""
        if self._timer.isActive() or self.doc.is_feeding() or self.jobs.pending():
            return False
        return all(e.revision == self.doc.revision for e in self.registry.entries())

    # -- following the text -----------------------------------------------------------------------

    def _on_change(self, change: Change) -> None:
        far = self._far
        if far is not None:
            if not self.doc.live_text.segments:  # the text was replaced: the round is of no use
                self._end_far(cancel=True)
            elif not far.work.closed:
                far.unsent.extend(change.new)
            else:
                far.late = [s for s in far.late if s.alive]
                far.late.extend(change.new)
        if not self.doc.live_text.segments and self.doc.is_feeding():
            # a paste over the whole text: what goes in now is a new text, for a new round
            self._on_feeding(True)
        edit = None if self.doc.is_feeding() else change.edit  # a keystroke in one segment
        for tok, live in self.lives.items():
            dropped = live.apply(change)
            if edit is not None and dropped:
                # the old encoding is where the new one starts from; what differs is all
                # that needs repainting
                self._bury(self._before.pop(tok, (None, [], None))[1])
                self._before[tok] = (change.new[0], dropped, edit)
            else:
                self._bury(dropped)
        if edit is not None and cheap_to_encode(change.new[:1]):
            # encoded before Qt paints the edit: one repaint shows the text and its tokens
            self.encode_all()
        else:
            self._timer.start()  # on the next turn: several edits at once are encoded once

    def _on_feeding(self, on: bool) -> None:
        if on and self._far is None and self.doc.feed_left() >= FAR_CHARS:
            # a big text is going in: a round takes its segments as they come
            self._start_far([t for t, live in self.lives.items() if t in self.registry and live.cutting])
        self._timer.start()

    def _add(self, tok: Tokenizer) -> None:
        self.lives[tok] = LiveEncoding(tok, self.doc.live_text)
        self._timer.start()  # on the next turn: the panes follow the registry too

    def _forget(self, tok: Tokenizer) -> None:
        self.jobs.cancel(("encode", id(tok)))
        far = self._far
        if far is not None and tok in far.toks:
            far.toks.discard(tok)
            if not far.toks:
                self._end_far(cancel=True)
        self._batches.pop(tok, None)
        self._shown.pop(tok, None)
        self._bury(self._before.pop(tok, (None, [], None))[1])
        live = self.lives.pop(tok, None)
        if live is not None:
            self._bury(live.release())
        if self.last is not None and self.last.tok is tok:
            self.last = None

    # -- encoding -----------------------------------------------------------------------------------

    def encode_all(self) -> None:
        self._hand_over()
        far: list[Tokenizer] = []
        for tok in self.registry.tokenizers():
            if self.encode_one(tok, far):
                far.append(tok)
        if far:
            self._start_far(far)  # what the panes show is encoded from the next turn on
        else:
            self._encode_next_shown()
        self.settled.emit()

    def _encode_next_shown(self) -> None:
        """One of the segments the panes show that a round left to this process (one per turn:
        each is a few to tens of ms with a slow tokenizer; the next turn does the next)."""
        far = self._far
        if far is None or not far.here:
            return
        self._encode_shown(far, far.here.pop(0))
        if far.here:
            self._timer.start()

    def encode_one(self, tok: Tokenizer, far: list[Tokenizer] | None = None) -> bool:
        """Bring ``tok``'s encoding up to date, or start to. With ``far``, returns True for a
        lot of text to encode that a round on other processes should take (with the tokenizers
        of ``far``: the caller starts it)."""
        live = self.lives.get(tok)
        entry = self.registry.entry(tok)
        if live is None or entry is None:
            return False
        if not live.cutting and self.doc.is_feeding():
            return False  # its one segment is the whole text: encoded once it is all there
        in_far = self._far is not None and tok in self._far.toks
        if in_far and self._far is not None:
            if self.doc.is_feeding() or not self._far.work.closed:
                # the round takes the segments as they come in or as they are looked at (not
                # listing the thousands of segments of a long text each turn: it had them all)
                return False
            # the round has every segment but those of later edits: only those are looked at (each
            # turn, and each keystroke, while it runs; not every segment it has yet to send back)
            todo = live.pending(among=self._far.late)
            if not todo:
                return False  # the round's end brings the rest
        elif far is not None and self._far is None and tok not in self._batches and self._can_go_far(live):
            return True  # (not listing the thousands of segments of a long text here: the round looks at them)
        else:
            todo = live.pending()
        if not todo:
            if not self.doc.is_feeding() and entry.revision != self.doc.revision:
                self._done(tok, live, None)
            return False
        running = self._far.sent if in_far and self._far is not None else self._batches.get(tok)
        fresh = [(s, h) for s, h in todo if running is None or s not in running]
        if fresh and cheap_to_encode(s for s, _ in fresh):
            self._encode_here(tok, live, fresh)
        elif running is None:
            self._start_batch(tok, live, todo)
        return False

    # -- rounds on other processes ----------------------------------------------------------------

    @staticmethod
    def _can_go_far(live: LiveEncoding) -> bool:
        """Whether ``live`` has so much left to encode that a round should take it: at least
        :data:`FAR_CHARS` code points without an encoding (a few of its segments may need
        theirs again too, after an edit next to them: :meth:`encode_one` does those)."""
        if not live.cutting or not can_encode_far(live.tok):
            return False
        return len(live.source) - live.n_chars >= FAR_CHARS

    def _start_far(self, toks: list[Tokenizer]) -> None:
        """A round for ``toks``, taking the segments they need now and (while the text goes in)
        those still to come."""
        toks = [t for t in toks if t in self.lives and self.lives[t].cutting and can_encode_far(t)]
        if not toks:
            return
        for tok in toks:
            self.jobs.cancel(("encode", id(tok)))  # a thread's batch: the round does it over
            self._batches.pop(tok, None)
        work = Round(toks)
        self._rounds += 1
        # background work nobody waits for (the merge tree's linking) waits for the round: it took
        # a core and the interpreter from the children and from the unpacking of their encodings
        self.doc.typing.hold(True)
        far = self._far = _Far(work, ("encode far", self._rounds))
        segs = self.doc.live_text.segments
        at = self.doc.live_text.index_at_u16(self.focus) if segs else 0
        far.scan = segs[at:] + segs[:at]  # (a copy: looked at HAND_OVER per turn, see _hand_over)
        self._hand_over()

        def got(done: list[tuple[int, Segment, str, Encoding]]) -> None:
            for k, seg, head, enc in done:
                tok = work.toks[k]
                live = self.lives.get(tok)
                if live is not None and tok in far.toks and self._put(live, seg, enc, head):
                    self._note_shown(tok, [seg])

        def ended(_value: object = None) -> None:
            if self._far is far:
                self._end_far()
            self.settled.emit()

        def errored(exc: BaseException) -> None:
            left = far.toks if self._far is far else set()
            ended()
            for tok in left:
                self._fail(tok, exc)

        self.jobs.submit(far.key, encode_round, work, on_yielded=got, on_returned=ended, on_errored=errored)

    def _hand_over(self) -> None:
        """Hand the round the segments that came in since, and the next :data:`HAND_OVER` of the
        text's segments that its tokenizers need (all of them once the text is in and looked at,
        and then no more), nearest to what the panes show first."""
        far = self._far
        if far is None or far.work.closed:
            return
        segs = self.doc.live_text.segments
        feeding = self.doc.is_feeding()
        looked = []
        if far.scanning:
            end = far.scanned + HAND_OVER
            lives = [self.lives[t] for t in far.work.toks if t in far.toks and t in self.lives]
            looked = [s for s in far.scan[far.scanned : end] if any(live.needs(s) for live in lives)]
            far.scanned = end
            if far.scanning:
                self._timer.start()  # the next turn looks at the next ones
            else:
                far.scan = []
        keep = []
        ready = []
        for seg in (*far.unsent, *looked):
            if not seg.alive or seg in far.sent:
                continue
            if feeding and seg.k == len(segs) - 1:
                keep.append(seg)  # the end of a text still going in: the next slice changes it
            else:
                ready.append(seg)
        far.unsent = keep
        if ready:
            at = self.doc.live_text.index_at_u16(self.focus) if segs else 0
            far.sent.update(ready)
            # what the panes show is encoded here, a segment per turn: the children take a second
            # to start (not for a round of tokenizers without a pane, such as one just trained:
            # nothing shows it, and a slow tokenizer held the GUI thread for 60 ms on those segments)
            shown = any(self.registry.is_shown(tok) for tok in far.toks)
            near = range(at, at + SHOWN_HERE) if shown else range(0)
            here = [s for s in ready if s.k in near]
            if here:
                far.here.extend(sorted(here, key=lambda s: s.k))
                self._timer.start()
            # from the focus on, then the rest: two passes, not a sort of every segment per turn
            after = [s for s in ready if s.k >= at and s.k not in near]
            after.extend(s for s in ready if s.k < at)
            far.work.add([(s, follow_of(self.doc.live_text, s.k, far.work.lookahead)) for s in after])
        if not feeding and not far.scanning:
            far.work.close()

    def _encode_shown(self, far: _Far, seg: Segment) -> None:
        """Encode ``seg`` with the round's tokenizers on a thread, ahead of the round (a segment
        the panes show). (Here, one segment of a tokenizer whose split rule runs in Python, as a
        trained one's may, held the GUI thread for tens of ms.)"""
        if not seg.alive:
            return
        for tok in far.work.toks:
            live = self.lives.get(tok)
            if live is None or tok not in far.toks:
                continue
            head = follow_of(self.doc.live_text, seg.k, live.lookahead)

            def got(item: tuple[Segment, str, Encoding], tok: Tokenizer = tok, live: LiveEncoding = live) -> None:
                seg, head, enc = item
                if self.lives.get(tok) is live and self._put(live, seg, enc, head):
                    self._note_shown(tok, [seg])

            def failed(exc: BaseException, tok: Tokenizer = tok) -> None:
                self._fail(tok, exc)

            self.jobs.submit(
                ("encode shown", id(tok), id(seg)),
                _encode_shown_segment,
                tok,
                seg,
                head,
                on_yielded=got,
                on_errored=failed,
                threads=self._shown_pool,
            )

    def _end_far(self, *, cancel: bool = False) -> None:
        """The round is over (or of no use): what it left is encoded as any change is."""
        far, self._far = self._far, None
        if far is None:
            return
        self.doc.typing.hold(False)
        far.work.close()
        if cancel:
            self.jobs.cancel(far.key)
        else:
            self._timer.start()

    def _encode_here(self, tok: Tokenizer, live: LiveEncoding, todo: list[tuple[Segment, str]]) -> None:
        """A keystroke's segment or two: encoded right away, a few ms."""
        t0 = time.perf_counter()
        before_seg, before, edit = self._before.pop(tok, (None, [], None))
        lo = hi = None
        try:
            for seg, head in todo:
                part = live.part(seg.k)
                edited = seg is before_seg and part is None
                old = part.enc if part is not None else before[0] if edited else None
                previous = (before[0], edit) if edited and edit is not None else None
                enc = encode_segment(tok, seg.text, head, previous=previous)
                self._put(live, seg, enc, head)
                span = differing_span(old, enc)
                if span is not None:
                    base = self.doc.live_text.u16_starts()[seg.k]
                    lo = base + span[0] if lo is None else min(lo, base + span[0])
                    hi = base + span[1] if hi is None else max(hi, base + span[1])
        except (ValueError, RecursionError, BufferError) as exc:
            self._fail(tok, exc)
            return
        finally:
            self._bury(before)
        if live.complete and not self.doc.is_feeding():
            self._done(
                tok, live, (lo, hi) if lo is not None and hi is not None else (0, 0), seconds=time.perf_counter() - t0
            )
        else:
            self._note_shown(tok, [s for s, _ in todo])

    def _start_batch(self, tok: Tokenizer, live: LiveEncoding, todo: list[tuple[Segment, str]]) -> None:
        """Hand a worker the segments nearest to what the panes show, up to :data:`BATCH` code points."""
        segs = self.doc.live_text.segments
        at = self.doc.live_text.index_at_u16(self.focus) if segs else 0
        todo.sort(key=lambda item: (item[0].k < at, item[0].k))  # from the focus on, then the rest
        batch, size = [], 0
        for item in todo:
            batch.append(item)
            size += len(item[0].text)
            if size >= BATCH:
                break
        self._batches[tok] = {s for s, _ in batch}
        t0 = time.perf_counter()

        def got(item: tuple[Segment, str, Encoding]) -> None:
            seg, head, enc = item
            if self._put(live, seg, enc, head):
                self._note_shown(tok, [seg])

        def returned(_value: object) -> None:
            self._batches.pop(tok, None)
            self.last = EncodeResult(tok, live, time.perf_counter() - t0, "chunked")
            self.encode_one(tok)  # more to do, or done
            self.settled.emit()

        def errored(exc: BaseException) -> None:
            self._batches.pop(tok, None)
            self._fail(tok, exc)

        self.jobs.submit(
            ("encode", id(tok)),
            _encode_batch,
            tok,
            batch,
            on_yielded=got,
            on_returned=returned,
            on_errored=errored,
        )

    def _put(self, live: LiveEncoding, seg: Segment, enc: Encoding, head: str) -> bool:
        """Keep ``enc`` (see :meth:`LiveEncoding.put`); a whole-text encoding it replaces is freed."""
        old = live.whole
        kept = live.put(seg, enc, head)
        if kept and old is not None and live.whole is not old:
            self._bury([old])
        return kept

    # -- results --------------------------------------------------------------------------------

    def _span_of(self, segments: list[Segment]) -> tuple[int, int] | None:
        """The UTF-16 range the (live) ``segments`` cover together."""
        ks = [s.k for s in segments if s.alive]
        if not ks:
            return None
        starts = self.doc.live_text.u16_starts()
        return starts[min(ks)], starts[max(ks) + 1]

    def _note_shown(self, tok: Tokenizer, segments: list[Segment]) -> None:
        """Something more of ``tok``'s encoding is there: show it soon (at most every
        :data:`SHOW_EVERY` ms, so that a long encode does not repaint the panes all the time)."""
        self._shown.setdefault(tok, []).extend(segments)
        if not self._show_timer.isActive():
            self._show_timer.start()

    def _show_progress(self) -> None:
        shown, self._shown = self._shown, {}
        for tok, segments in shown.items():
            live = self.lives.get(tok)
            if live is None:
                continue
            changed = self._span_of(segments) if live.cutting else None
            in_far = self._far is not None and tok in self._far.toks  # not done before the round's end
            if not in_far and live.complete and not self.doc.is_feeding():
                self._done(tok, live, changed)
            else:
                self.encoded.emit(tok, EncodeResult(tok, live, 0.0, "chunked", changed))
                self.partial.emit(tok, live)

    def _done(
        self,
        tok: Tokenizer,
        live: LiveEncoding,
        changed: tuple[int, int] | None,
        *,
        seconds: float = 0.0,
        mode: Mode = "segment",
        revision: int | None = None,
    ) -> None:
        """``tok``'s encoding is of the whole current text: into its row, and to the panes."""
        if tok not in self.registry:
            return
        result = EncodeResult(tok, live, seconds, mode, changed)
        if seconds:
            self.last = result
        self.registry.set_result(tok, result, self.doc.revision if revision is None else revision)
        self.encoded.emit(tok, result)

    def _fail(self, tok: Tokenizer, exc: BaseException) -> None:
        self.registry.set_result(
            tok, self.registry.result(tok), self.doc.revision
        )  # do not retry the same text forever
        self.failed.emit(f"{tok.name}: could not encode the text: {exc}")
        self.settled.emit()

    def _bury(self, encodings: list[Encoding]) -> None:
        """Free dropped encodings a slice per turn (a million tokens at once takes tens of ms)."""
        if encodings:
            for enc in encodings:
                enc.token_bytes_of = None  # nothing reads them now: let a closed tokenizer go at once
            self._graveyard.extend(encodings)
            self._free_timer.start()

    def _free_some(self) -> None:
        deadline = time.perf_counter() + 0.004
        while self._graveyard and time.perf_counter() < deadline:
            if not release_encoding(self._graveyard[-1], budget=1):
                self._graveyard.pop()
        if self._graveyard:
            self._free_timer.start()
