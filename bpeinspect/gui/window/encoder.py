"""Keep every open tokenizer's encoding up to date with the text.

An edit bumps the document's revision; on the next event-loop turn each tokenizer whose
encoding is older is re-encoded as :func:`bpeinspect.core.live.plan_encode` says: a
keystroke in a modest text right here (a few lines in a few ms), anything bigger in a
worker (the first chunk of a long text shown as soon as it is ready). Results go into the
tokenizer's row of the registry. Old million-token encodings are freed a slice per turn.

>>> encoder = Encoder(doc, registry, jobs); encoder.encoded.connect(show)   # doctest: +SKIP
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from bpeinspect.core import Encoding, Tokenizer, load_tokenizer
from bpeinspect.core.live import EncodeResult, plan_encode
from bpeinspect.core.memory import quiet_gc
from bpeinspect.gui.concurrency import Jobs
from bpeinspect.gui.registry import TokenizerRegistry
from bpeinspect.gui.window.document import LiveDocument

BIG_ENCODING = 50_000  # tokens: an encoding this big is freed a slice at a time
WARM_UP_TEXT = "Hello, world!"


def load_quietly(spec: str) -> Tokenizer:
    """``load_tokenizer(spec)`` with the cyclic GC held off (see :func:`~bpeinspect.core.memory.quiet_gc`),
    ready for its first encode.

    Parsing a 200k-token vocabulary allocates enough to set off full collections, each a pause
    of the whole process. The first encode of a tokenizer builds what it keeps for the next
    ones (its token lengths, numpy the first time: 0.3-0.5 s for o200k_base); a short encode
    here does that in the loading worker, not while the first text waits for its colours."""
    with quiet_gc():
        tok = load_tokenizer(spec)
        tok.encode_with_offsets(WARM_UP_TEXT)
        return tok


def release_encoding(enc: Encoding, step: int = 1 << 15, budget: int | None = None) -> bool:
    """Drop an encoding's big lists a slice at a time (one ``del`` of a million-item list
    frees it all in one C call, holding the interpreter for tens of milliseconds).

    With ``budget``, stop after that many slices; returns True while something is left."""
    for name in ("ids", "piece_spans"):
        items = getattr(enc, name)
        while items:
            if budget is not None:
                if budget <= 0:
                    return True
                budget -= 1
            del items[-step:]
    return False


class Encoder(QObject):
    """Encodes the document with every tokenizer of ``registry``, using ``jobs`` for workers."""

    partial = Signal(object, object)  # (Tokenizer, Encoding of the first chunk)
    encoded = Signal(object, object)  # (Tokenizer, EncodeResult), after the registry has it
    failed = Signal(str)
    settled = Signal()  # a round of encoding was started or ended: is_idle() may have changed

    def __init__(self, doc: LiveDocument, registry: TokenizerRegistry, jobs: Jobs) -> None:
        super().__init__(doc)
        self.doc, self.registry, self.jobs = doc, registry, jobs
        self.last: EncodeResult | None = None  # the latest encode of any tokenizer (for the status bar)
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.encode_all)
        self._graveyard: list[Encoding] = []  # old encodings being freed a slice at a time
        self._free_timer = QTimer(self, singleShot=True, interval=0)
        self._free_timer.timeout.connect(self._free_some)
        doc.edited.connect(self._timer.start)
        registry.added.connect(self.encode_one)
        registry.removed.connect(self._forget)

    def is_idle(self) -> bool:
        """True when every tokenizer's encoding is of the current text (or failed on it)."""
        if self._timer.isActive() or self.doc.is_feeding() or self.jobs.pending():
            return False
        return all(e.revision == self.doc.revision for e in self.registry.entries())

    def encode_all(self) -> None:
        text = self.doc.text()
        for tok in self.registry.tokenizers():
            self.encode_one(tok, text)
        self.settled.emit()

    def encode_one(self, tok: Tokenizer, text: str | None = None) -> None:
        entry = self.registry.entry(tok)
        if entry is None or entry.revision == self.doc.revision or self.doc.is_feeding():
            return
        text = self.doc.text() if text is None else text
        base = entry.result.enc if entry.result is not None else None
        revision = self.doc.revision
        key = ("encode", id(tok))

        def failed(exc: BaseException) -> None:
            self.registry.set_result(tok, self.registry.result(tok), revision)  # do not retry the same text forever
            self.failed.emit(f"{tok.name}: could not encode the text: {exc}")
            self.settled.emit()

        plan = plan_encode(tok, text, base)
        if plan.cheap:
            # a keystroke in a modest text: a few lines re-encoded in a few ms, right here;
            # updating the shown encoding in place is safe unless a worker may still read it
            # (an encode of this tokenizer, or an export reading every encoding)
            in_place = not self.jobs.is_busy()
            self.jobs.cancel(key)
            try:
                result = plan.run(in_place=in_place)
            except (ValueError, RecursionError, BufferError) as exc:
                failed(exc)
            else:
                self._keep(result, revision)
            return
        self.jobs.submit(
            key,
            lambda should_stop, report: plan.run(should_stop=should_stop, on_first=report),
            on_returned=lambda result: self._keep(result, revision),
            on_errored=failed,
            on_yielded=lambda enc: self.partial.emit(tok, enc),
        )

    def _keep(self, result: EncodeResult, revision: int) -> None:
        old = self.registry.result(result.tok)
        if result.tok not in self.registry:
            return
        self.last = result
        self.registry.set_result(result.tok, result, revision)
        self.encoded.emit(result.tok, result)
        if old is not None and old.enc is not result.enc and len(old.enc.ids) > BIG_ENCODING:
            # freeing a million-token encoding at once takes tens of ms: a slice per turn instead
            self._graveyard.append(old.enc)
            self._free_timer.start()

    def _forget(self, tok: Tokenizer) -> None:
        self.jobs.cancel(("encode", id(tok)))
        if self.last is not None and self.last.tok is tok:
            self.last = None

    def _free_some(self) -> None:
        if self._graveyard and not release_encoding(self._graveyard[-1], budget=1):
            self._graveyard.pop()
        if self._graveyard:
            self._free_timer.start()
