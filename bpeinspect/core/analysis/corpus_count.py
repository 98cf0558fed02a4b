"""Token counts of many short texts under several tokenizers, on child processes kept between runs.

The languages view counts the UDHR (532 texts, 7 MB) under four tokenizers or so. A
:class:`CountingPool` is a schedule on the children of a
:class:`~bpeinspect.core.pool.ProcessPool` (the tokenizers are their contexts, the batches
their tasks). It starts its children when asked (:meth:`CountingPool.start`, e.g. when
the view opens), so their start-up is paid before the count, and keeps them and the
tokenizers they hold between counts. This process only deals out the work and adds up, so
a GUI process stays free, and each child:

* gets a tokenizer as a :class:`~bpeinspect.core.analysis.shipping.Shipped` (its tables,
  sent once, made here a step at a time with the interpreter let go in between), not its
  file to parse again;
* takes a tokenizer of its own when it needs work (the slowest to load first), so that each
  distinct pre-token of a tokenizer is mostly encoded once, in one child's pre-token cache;
  with none left, it takes a share of another's tokenizer if enough is left of it to pay for
  loading it (timed by the children);
* gets the texts in batches of about :data:`BATCH_CHARS` characters, so that the work
  stays shared until the end and cancelling is quick.

Counts are those of :func:`~bpeinspect.core.analysis.stats.compute_stats`
(:func:`~bpeinspect.core.analysis.shipping.count_text`: ``encode_ordinary``, specials counted
as ordinary text).
A tokenizer that cannot be rebuilt from its tables (SentencePiece) is counted here, as is
everything when no child can be started or a child fails.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("r50k_base")
>>> with CountingPool(2) as pool:
...     counted = list(pool.count([tok], ["hello world", "¡hola!"]))
>>> counted == [(0, [len(tok.encode("hello world")), len(tok.encode("¡hola!"))])]
True
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from bpeinspect.core.analysis.measures import text_ids, text_profile
from bpeinspect.core.analysis.shipping import Shipped, can_ship, count_text
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.pool import Child, ProcessPool, Reply, default_processes
from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None]
ShouldStop = Callable[[], bool]
R = TypeVar("R")

# what a count gives for each text: its token count, its profile, or its count of every id
COUNTERS: dict[str, Callable[[Tokenizer, str], object]] = {
    "count": count_text,
    "profile": text_profile,
    "ids": text_ids,
}
BATCH_CHARS = 1 << 15  # characters of text per task (a short task, so a stop is heard soon)
STEAL_CHARS = 1 << 20  # a child loads another's tokenizer only if this much of it is left (until timed)
_KEEP = 8  # tokenizers a child keeps between counts
_POLL = 0.05  # seconds between two looks at should_stop while waiting


class CountingPool:
    """``processes`` child processes (default: one per CPU) that count texts; see the module.
    This process only deals out the work (and counts what the children cannot).

    The children are those of a :class:`~bpeinspect.core.pool.ProcessPool` (``processes``
    children besides this process, their garbage collector off), which this pool keeps.
    Use it from one thread at a time; :meth:`close` (or a ``with`` block) ends the children.
    """

    def __init__(self, processes: int | None = None, *, niceness: int = 0) -> None:
        self.processes = default_processes() if processes is None else max(1, int(processes))
        self.niceness = niceness
        self.pool = ProcessPool(self.processes + 1, niceness=niceness, collect=False)
        self._keys: dict[int, tuple[Tokenizer, int]] = {}  # id(tok) -> (tok, key): holding it keeps the id
        self._payloads: dict[int, bytes] = {}

    def __enter__(self) -> CountingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the children now (they import the core meanwhile); safe to call again."""
        self.pool.start()

    @property
    def _children(self) -> list[Child]:
        return self.pool._children

    def close(self, *, wait: bool = True) -> None:
        """End the children (they finish the task at hand and leave; ``wait`` for that)."""
        self.pool.close(wait=wait)
        self._keys.clear()
        self._payloads.clear()

    def _key(self, tok: Tokenizer) -> int:
        found = self._keys.get(id(tok))
        if found is None:
            found = self._keys[id(tok)] = (tok, self.pool.new_key())
        return found[1]

    def keep_only(self, toks: Sequence[Tokenizer]) -> None:
        """Forget every tokenizer but ``toks`` (closed ones), here and in the children."""
        keep = {id(t) for t in toks}
        self._drop([i for i in self._keys if i not in keep])

    def _forget_all_but(self, toks: Sequence[Tokenizer]) -> None:
        """Tokenizers beyond the last :data:`_KEEP` used are dropped here and in the children."""
        keep = {id(t) for t in toks}
        old = sorted(self._keys, key=lambda i: self._keys[i][1])[: max(0, len(self._keys) - _KEEP)]
        self._drop([i for i in old if i not in keep])

    def _drop(self, ids: list[int]) -> None:
        for i in ids:
            key = self._keys.pop(i)[1]
            self._payloads.pop(key, None)
            self.pool.drop(key)

    def count(
        self,
        toks: Sequence[Tokenizer],
        texts: Sequence[str],
        *,
        progress: Progress | None = None,
        should_stop: ShouldStop | None = None,
        what: str = "count",
    ) -> Iterator[tuple[int, list]]:
        """Yield ``(index in toks, token count of every text)`` for each tokenizer as it is done;
        with ``what="profile"``, each text's :class:`~bpeinspect.core.analysis.measures.Profile`
        instead (what the corpus measures need), with ``"ids"`` each text's count of every id
        (a ``Counter``); both several times the work of a count.

        ``progress(done, total)`` counts characters over all the tokenizers; ``should_stop()``
        is asked often and raises :class:`Cancelled`. Texts must hold no lone surrogates
        (:func:`~bpeinspect.core.text.fix_surrogates`).
        """
        self.start()
        if what not in COUNTERS:
            raise ValueError(f"cannot count {what!r}")
        run = _Run(self, toks, texts, progress, should_stop, what=what)
        yield from run.go()

    def call(
        self, tok: Tokenizer, fn: Callable[[Tokenizer, Any], R], item: Any, *, should_stop: ShouldStop | None = None
    ) -> R:
        """``fn(tok, item)`` on a child, which holds ``tok`` (sent to it if need be): this
        process only waits, the interpreter free. Done here if ``tok`` cannot be sent, no
        child is running, or the child fails or dies (an error is then raised here, with its
        own type); ``should_stop`` is asked while waiting (a yes raises :class:`Cancelled`;
        the child finishes the task and the answer is dropped). ``fn`` must be importable.

        A :meth:`count` may be under way meanwhile (on the same thread, between two of the
        tokenizers it yields): the answers to its tasks that come while this one waits are
        handed back to it."""
        children = [c for c in self.pool.children if c.alive]
        if not children or not can_ship(tok):
            return fn(tok, item)
        key = self._key(tok)
        child = next((c for c in children if key in c.held), None) or min(children, key=lambda c: len(c.tasks))
        if key not in child.held:
            child.put(key, _Payloads(self, [(key, tok)], should_stop).get(key))
        task = self.pool.submit(child, fn, item, key=key)
        others: list[Reply] = []  # the count's answers, handed back
        try:
            while True:
                if should_stop is not None and should_stop():
                    raise Cancelled()
                reply = self.pool.reply(_POLL)
                if reply is None:
                    continue
                if reply.task == task and reply.kind in ("result", "error"):
                    break
                others.append(reply)  # a lost child too: the count deals its tasks again
                if reply.kind == "lost" and task in reply.tasks:
                    break
        finally:
            self.pool.put_back(others)
        return reply.value if reply.kind == "result" else fn(tok, item)


class _Payloads:
    """The tokenizers' payloads, made in their order on a thread of their own (kept by the pool)."""

    def __init__(self, pool: CountingPool, todo: list[tuple[int, Tokenizer]], should_stop: ShouldStop | None) -> None:
        self._store = pool._payloads
        self._todo = [(key, tok) for key, tok in todo if key not in self._store]
        self._ready = threading.Condition()
        self._error: BaseException | None = None
        self._should_stop = should_stop
        if self._todo:
            threading.Thread(target=self._make, daemon=True).start()

    def _make(self) -> None:
        try:
            for key, tok in self._todo:
                payload = pickle.dumps(Shipped(tok, self._should_stop), pickle.HIGHEST_PROTOCOL)
                with self._ready:
                    self._store[key] = payload
                    self._ready.notify_all()
        except BaseException as exc:  # noqa: BLE001 (raised by get)
            with self._ready:
                self._error = exc
                self._ready.notify_all()

    def get(self, key: int) -> bytes:
        with self._ready:
            while key not in self._store:
                if self._error is not None:
                    raise self._error
                if self._should_stop is not None and self._should_stop():
                    raise Cancelled()
                self._ready.wait(_POLL)
            return self._store[key]


class _Run:
    """One :meth:`CountingPool.count`: deals the batches out and gathers the counts."""

    def __init__(
        self,
        pool: CountingPool,
        toks: Sequence[Tokenizer],
        texts: Sequence[str],
        progress: Progress | None,
        should_stop: ShouldStop | None,
        *,
        what: str = "count",
    ) -> None:
        self.pool, self.toks, self.texts = pool, list(toks), list(texts)
        self.what = what
        self.count = COUNTERS[what]  # what each text gives
        self.progress, self.should_stop = progress, should_stop
        self.children = pool.pool.children
        pool._forget_all_but(self.toks)
        self.keys = [pool._key(t) for t in self.toks]
        batches: list[list[int]] = []
        size = 0
        for i, text in enumerate(self.texts):
            if not batches or size + len(text) > BATCH_CHARS:
                batches.append([])
                size = 0
            batches[-1].append(i)
            size += len(text)
        self.batches = batches
        self.batch_chars = [sum(len(self.texts[i]) for i in b) for b in batches]
        shipped = [k for k, t in enumerate(self.toks) if self.children and can_ship(t)]
        self.local = [k for k in range(len(self.toks)) if k not in shipped]  # counted here
        self.todo = {k: list(range(len(batches))) for k in shipped}  # batches not yet dealt, per tokenizer
        self.left = {k: sum(self.batch_chars) for k in shipped}  # characters not yet dealt
        # the tokenizers slowest to load go first: the last ones, which the children may share, load fast
        self.order = sorted(shipped, key=lambda k: -len(self.toks[k].ranks) * (1 if self.toks[k].uses_rank_rule else 2))
        self.owner: dict[int, Child] = {}  # tokenizer -> the child that started it
        self.payloads = _Payloads(pool, [(self.keys[k], self.toks[k]) for k in self.order], should_stop)
        self.counts: list[list[Any]] = [[None] * len(self.texts) for _ in self.toks]
        self.missing = [len(self.texts)] * len(self.toks)
        self.tasks: dict[int, tuple[Child, int, int]] = {}  # task id -> (child, tokenizer, batch)
        self.spent = {k: [0.0, 0] for k in shipped}  # seconds the children took, characters they counted
        self.load_time = {k: 0.0 for k in shipped}  # the longest a child took to rebuild it
        self.done_chars = 0
        self.total = sum(self.batch_chars) * len(self.toks)

    def stop(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled()

    def go(self) -> Iterator[tuple[int, list[Any]]]:
        local = [(k, i) for k in self.local for i in range(len(self.texts))]
        finished: set[int] = set()
        while len(finished) < len(self.toks):
            self.stop()
            self.deal()
            self.gather(block=not local)
            if local:
                k, i = local.pop(0)
                self.counts[k][i] = self.count(self.toks[k], self.texts[i])
                self.missing[k] -= 1
                self.advance(len(self.texts[i]))
            for k in range(len(self.toks)):
                if k not in finished and not self.missing[k]:
                    finished.add(k)
                    yield k, list(self.counts[k])

    def advance(self, chars: int) -> None:
        self.done_chars += chars
        if self.progress is not None:
            self.progress(self.done_chars, self.total)

    def pick(self, child: Child) -> int | None:
        """The tokenizer whose next batch ``child`` gets, if any."""
        open_ = [k for k in self.order if self.todo[k]]
        mine = [k for k in open_ if self.owner.get(k) is child]
        loaded = [k for k in open_ if self.keys[k] in child.held]
        for group in (mine, loaded):
            if group:
                return group[0]
        new = [k for k in open_ if k not in self.owner]
        if new:
            self.owner[new[0]] = child
            return new[0]
        worth = [k for k in open_ if self.worth_loading(k)]
        return max(worth, key=lambda k: self.left[k]) if worth else None

    def worth_loading(self, k: int) -> bool:
        """Whether sharing what is left of tokenizer ``k`` pays for loading it once more."""
        secs, chars = self.spent[k]
        if chars < BATCH_CHARS * 4:  # not timed yet
            return self.left[k] >= STEAL_CHARS
        return self.left[k] * secs / chars / 2 > self.load_time[k] + 0.05

    def deal(self) -> None:
        for child in self.children:
            while child.alive and not child.busy:  # (the next task is waiting when one is done)
                k = self.pick(child)
                if k is None:
                    break
                key = self.keys[k]
                if key not in child.held:
                    child.put(key, self.payloads.get(key))
                b = self.todo[k].pop(0)
                self.left[k] -= self.batch_chars[b]
                texts = [self.texts[i] for i in self.batches[b]]
                task = self.pool.pool.submit(child, _count_batch, (texts, self.what), key=key)
                self.tasks[task] = (child, k, b)

    def gather(self, *, block: bool) -> None:
        """Take the replies in (waiting up to :data:`_POLL` for the first if ``block``)."""
        pool = self.pool.pool
        while (reply := pool.reply(_POLL if block else 0)) is not None:
            block = False
            if reply.kind == "lost":
                self.lost(reply.child)
                continue
            found = self.tasks.pop(reply.task, None) if reply.kind in ("result", "error") else None
            if found is None:
                continue  # a task of a run that was cancelled
            self.take(reply, *found[1:])

    def take(self, reply: Reply, k: int, b: int) -> None:
        """The counts of batch ``b`` under tokenizer ``k``, from ``reply`` (or counted here)."""
        value = reply.value
        self.spent[k][0] += reply.seconds
        self.spent[k][1] += self.batch_chars[b]
        self.load_time[k] = max(self.load_time[k], reply.load)
        if reply.kind == "error":
            value = [self.count(self.toks[k], self.texts[i]) for i in self.batches[b]]  # its error is raised here
        for i, n in zip(self.batches[b], value):
            self.counts[k][i] = n
        self.missing[k] -= len(value)
        self.advance(self.batch_chars[b])

    def lost(self, child: Child) -> None:
        """A child died: its batches are dealt again (here if no child is left)."""
        self.pool.pool.lose(child)
        self.children = [c for c in self.children if c is not child]
        for task, (c, k, b) in list(self.tasks.items()):
            if c is child:
                del self.tasks[task]
                self.todo[k].insert(0, b)
                self.left[k] += self.batch_chars[b]
        self.owner = {k: c for k, c in self.owner.items() if c is not child}
        if not self.children:  # count the rest here
            for k, bs in self.todo.items():
                for b in bs:
                    for i in self.batches[b]:
                        self.stop()
                        self.counts[k][i] = self.count(self.toks[k], self.texts[i])
                        self.missing[k] -= 1
                    self.advance(self.batch_chars[b])
                bs.clear()


def _count_batch(tok: Tokenizer, item: tuple[list[str], str]) -> list:
    """A child's task: what ``COUNTERS[what]`` gives for each of the texts, under ``tok``."""
    texts, what = item
    count = COUNTERS[what]
    return [count(tok, t) for t in texts]


__all__ = ["BATCH_CHARS", "CountingPool"]
