"""Token metadata and vocabulary queries: scripts, kinds, search, unreachable tokens.

Everything here is Qt-free and works on any :class:`~bpeinspect.core.Tokenizer`; the
vocabulary browser shows what this module computes.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> index = VocabIndex(tok)
>>> index.display(198), index.display(10310)
('↵', '<e4 b8>')
>>> index.search(TokenQuery(text="hello", mode="text", max_len=5))
[31373]
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import regex

from bpeinspect.core.errors import Cancelled, QueryError
from bpeinspect.core.memory import quiet_gc
from bpeinspect.core.scripts import COMMON, NO_SCRIPT, char_script, script_names
from bpeinspect.core.text import display_bytes, parse_display

if TYPE_CHECKING:
    from bpeinspect.core.tokenizer import Tokenizer

Progress = Callable[[int, int], None] | None
ShouldStop = Callable[[], bool] | None


# -- scripts and kinds --------------------------------------------------------------------------

SCRIPTS: tuple[str, ...] = script_names()  # every script a token can be in, the most common first
BYTES = "bytes"  # no whole character at all


def token_scripts(token: bytes) -> tuple[str, ...]:
    """The scripts of a token's whole characters, in order of first use (the Unicode Script
    property, :func:`~bpeinspect.core.scripts.char_script`); ``("Common",)`` if it has
    none of its own (digits, punctuation, marks, unassigned code points) and ``("bytes",)`` if it
    holds no whole character.

    >>> token_scripts("␣日本語です".encode()), token_scripts(b"123"), token_scripts(b"\\xe6\\x97")
    (('Han', 'Hiragana'), ('Common',), ('bytes',))
    """
    text = token.decode("utf-8", errors="ignore")
    if not text:
        return (BYTES,)
    seen: dict[str, None] = {}
    for ch in text:
        s = char_script(ch)
        if s not in NO_SCRIPT:
            seen[s] = None
    return tuple(seen) if seen else (COMMON,)


Kind = Literal["special", "added", "byte", "partial", "whitespace", "word", "number", "punctuation", "symbol", "mixed"]
KINDS: tuple[str, ...] = (
    "word",
    "number",
    "punctuation",
    "symbol",
    "whitespace",
    "mixed",
    "partial",
    "byte",
    "special",
    "added",
)


def token_kind(token: bytes, *, special: bool = False, added: bool = False) -> Kind:
    """What a token mostly is: ``word`` (letters, with marks and a leading space allowed),
    ``number``, ``punctuation``, ``symbol``, ``whitespace``, ``mixed``, ``partial`` (not whole
    UTF-8), ``byte`` (one byte), ``special`` (a control token) or ``added`` (an added token that
    is not special: matched before BPE in any encoding).

    >>> token_kind(b" hello"), token_kind(b"2024"), token_kind(b"\\n\\n"), token_kind(b"a1")
    ('word', 'number', 'whitespace', 'mixed')
    """
    if special:
        return "special"
    if added:
        return "added"
    if len(token) == 1:
        return "byte"
    try:
        text = token.decode("utf-8")
    except UnicodeDecodeError:
        return "partial"
    core = text.strip()
    if not core:
        return "whitespace"
    if text[0] == " ":
        text = text[1:]
    classes = {_char_class(ch) for ch in text}
    if len(classes) == 1:
        return classes.pop()
    return "mixed"


_CLASS_OF_CATEGORY: dict[str, Kind] = {
    "L": "word",
    "M": "word",
    "N": "number",
    "P": "punctuation",
    "S": "symbol",
    "Z": "whitespace",
}


def _char_class(ch: str) -> Kind:
    return _CLASS_OF_CATEGORY.get(unicodedata.category(ch)[0], "mixed")


# -- unreachable and unused tokens --------------------------------------------------------------


@dataclass(frozen=True)
class Unreachable:
    """A token the encoder does not produce from its own bytes.

    ``reason`` is ``"merges"`` if encoding the bytes as one pre-token gives other tokens, or
    ``"split"`` if the split rule cuts the token's text into several pre-tokens. ``produced``
    is what the encoder gives instead.
    """

    id: int
    reason: Literal["merges", "split"]
    produced: tuple[int, ...]


def _tick(n: int, total: int, progress: Progress, should_stop: ShouldStop) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled()
    if progress is not None:
        progress(n, total)


def unreachable_tokens(
    tok: Tokenizer, *, progress: Progress = None, should_stop: ShouldStop = None
) -> list[Unreachable]:
    """Non-special tokens that the encoder never produces from their own bytes.

    Each token's bytes are encoded as a single pre-token (:meth:`Tokenizer.rebuild`) and,
    when they are valid UTF-8, also as text (:meth:`Tokenizer.encode_ordinary`). Tokens that
    are not whole UTF-8 can only be checked the first way. Raises ``Cancelled`` if asked to stop.

    >>> from bpeinspect.core import Tokenizer
    >>> tok = Tokenizer.from_merges([(97, 98), (98, 99), (97, 257)], pattern=None)
    >>> unreachable_tokens(tok)  # "abc" is only reachable as a+bc, but a+b merges first
    [Unreachable(id=258, reason='merges', produced=(256, 99))]
    """
    ids = [i for i in tok.ids() if not tok.is_special(i) and not tok.is_added(i)]
    out: list[Unreachable] = []
    pieces = tok.split_rule.pieces
    for n, i in enumerate(ids):
        if not n & 2047:
            _tick(n, len(ids), progress, should_stop)
        bts = tok.token_bytes(i)
        got = tok.rebuild(i)
        if got != [i]:
            out.append(Unreachable(i, "merges", tuple(got)))
            continue
        try:
            text = bts.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if pieces(text) == [text]:  # one pre-token, already known to merge into i
            continue
        got = tok.encode_ordinary(text)
        if got != [i]:
            out.append(Unreachable(i, "split", tuple(got)))
    if progress is not None:
        progress(len(ids), len(ids))
    return out


def token_counts(
    tok: Tokenizer, corpus: str | Iterable[str], *, progress: Progress = None, should_stop: ShouldStop = None
) -> Counter[int]:
    """How often each token occurs when ``corpus`` (one text, or an iterable of documents each
    encoded on its own) is encoded as ordinary text. Progress counts unique pre-tokens.

    >>> from bpeinspect.core import load_tokenizer
    >>> token_counts(load_tokenizer("gpt2"), "a a a")[257]  # " a"
    2
    """
    docs = [corpus] if isinstance(corpus, str) else corpus
    pieces: Counter[str] = Counter()
    for d, doc in enumerate(docs):
        if should_stop is not None and should_stop():
            raise Cancelled()
        pieces.update(tok.pre_tokens(doc))
        if progress is not None and not d & 63:
            progress(0, 0)  # still reading documents: the total is not known yet
    counts: Counter[int] = Counter()
    total = len(pieces)
    for n, (piece, c) in enumerate(pieces.items()):
        if not n & 1023:
            _tick(n, total, progress, should_stop)
        for i in tok.encode_piece(piece):
            counts[i] += c
    if progress is not None:
        progress(total, total)
    return counts


def unused_tokens(
    tok: Tokenizer, corpus: str | Iterable[str], *, progress: Progress = None, should_stop: ShouldStop = None
) -> list[int]:
    """Non-special tokens that never occur when ``corpus`` is encoded: for a tokenizer trained on
    ``corpus``, the candidates for "glitch" tokens (learnt, then always merged further).

    >>> from bpeinspect.core import Tokenizer
    >>> tok = Tokenizer.from_merges([(97, 98), (256, 99)], pattern=None)  # ab, abc
    >>> [i for i in unused_tokens(tok, "abcabc") if i >= 256]  # "ab" is always merged on into "abc"
    [256]
    """
    counts = token_counts(tok, corpus, progress=progress, should_stop=should_stop)
    return [i for i in tok.ids() if not tok.is_special(i) and counts[i] == 0]


# -- queries ------------------------------------------------------------------------------------

SearchMode = Literal["text", "id", "hex", "regex"]


@dataclass(frozen=True)
class TokenQuery:
    """What to show of a vocabulary: a search and filters, all optional.

    ``mode`` says how ``text`` is read: ``"text"`` (a substring of the token's bytes, typed with
    the visible symbols ␣ ↵ ⇥ allowed), ``"id"`` (``"42"``, ``"10-20"`` or ``"1, 5, 9"``),
    ``"hex"`` (a byte substring such as ``"e4 b8"``) or ``"regex"`` (searched in the token's
    text, partial UTF-8 read as U+FFFD). ``script`` matches tokens using that script;
    ``unreachable`` and ``unused`` keep only ids in ``VocabIndex.unreachable`` / ``.unused``
    (which must be computed first: :meth:`VocabIndex.compute_unreachable`, ``compute_unused``).
    """

    text: str = ""
    mode: SearchMode = "text"
    min_len: int | None = None
    max_len: int | None = None
    script: str | None = None
    kind: str | None = None
    special: bool | None = None  # True: only specials; False: no specials
    unreachable: bool = False
    unused: bool = False
    ignore_case: bool = False


def positions(ids: list[int]) -> np.ndarray:
    """Where each id is in ``ids``, as an array indexed by id (``-1``: not there); numpy
    builds it for 200k ids far faster than a dict.

    >>> positions([5, 2, 7]).tolist()
    [-1, -1, 1, -1, -1, 0, -1, 2]
    """
    arr = np.asarray(ids, dtype=np.int64)
    out = np.full(int(arr.max()) + 1 if len(arr) else 0, -1, dtype=np.int64)
    out[arr] = np.arange(len(arr), dtype=np.int64)
    return out


def parse_ids(text: str) -> list[tuple[int, int]]:
    """Inclusive id ranges from ``"42"``, ``"10-20"``, ``"1, 5, 9-11"``.

    >>> parse_ids("1, 5, 9-11")
    [(1, 1), (5, 5), (9, 11)]
    """
    out = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        a, sep, b = part.partition("-")
        try:
            lo = int(a.strip())
            hi = int(b.strip()) if sep else lo
        except ValueError:
            raise QueryError(f"not a token id or id range: {part!r} (use e.g. 42, 10-20, 1, 5, 9)") from None
        out.append((min(lo, hi), max(lo, hi)))
    return out


def parse_hex(text: str) -> bytes:
    """Bytes from hex such as ``"e4 b8"``, ``"e4b8"`` or ``"\\\\xe4\\\\xb8"``.

    >>> parse_hex(r"\\xe4 B8")
    b'\\xe4\\xb8'
    """
    cleaned = text.replace("\\x", "").replace("0x", "").replace(" ", "").replace(",", "")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise QueryError(f"not hex bytes: {text!r} (use e.g. e4 b8 ad)") from None


class VocabIndex:
    """Per-tokenizer cache of token metadata plus searching, filtering and sorting.

    Everything is computed on first use, so making one is instant; :meth:`search` over a
    200k vocabulary takes a fraction of a second and belongs in a worker.
    """

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self._ids = tok.ids()
        self._display: dict[int, str] = {}
        self._scripts: dict[int, tuple[str, ...]] = {}
        self.unreachable: dict[int, Unreachable] | None = None
        self.unused: set[int] | None = None
        self._orders: dict[str, np.ndarray] = {}  # sort column -> each id's place (see order)

    def ids(self) -> list[int]:
        """All ids, ascending (a copy)."""
        return list(self._ids)

    def display(self, token_id: int) -> str:
        s = self._display.get(token_id)
        if s is None:
            s = self.tok.shown_with_marks(token_id, display_bytes(self.tok.token_bytes(token_id)))
            self._display[token_id] = s
        return s

    def scripts(self, token_id: int) -> tuple[str, ...]:
        s = self._scripts.get(token_id)
        if s is None:
            kind = self.tok.token_kind(token_id)
            s = (kind,) if kind != "normal" else token_scripts(self.tok.token_bytes(token_id))
            self._scripts[token_id] = s
        return s

    def kind(self, token_id: int) -> Kind:
        tok = self.tok
        return token_kind(tok.token_bytes(token_id), special=tok.is_special(token_id), added=tok.is_added(token_id))

    def rank(self, token_id: int) -> int | None:
        """The merge rank that makes the token (the id itself for rank-rule vocabularies)."""
        return self.tok.merge_graph.rank(token_id)

    def compute_unreachable(self, *, progress: Progress = None, should_stop: ShouldStop = None) -> None:
        found = unreachable_tokens(self.tok, progress=progress, should_stop=should_stop)
        self.unreachable = {u.id: u for u in found}

    def compute_unused(
        self, corpus: str | Iterable[str], *, progress: Progress = None, should_stop: ShouldStop = None
    ) -> None:
        self.unused = set(unused_tokens(self.tok, corpus, progress=progress, should_stop=should_stop))

    def search(
        self,
        query: TokenQuery,
        *,
        sort: str = "id",
        descending: bool = False,
        progress: Progress = None,
        should_stop: ShouldStop = None,
    ) -> list[int]:
        """Ids matching ``query``, sorted by ``sort`` (``id``, ``rank``, ``token``, ``length``,
        ``script`` or ``kind``). Raises :class:`QueryError` for a query that cannot run.

        The first search by script or kind makes a tuple per token: the collector waits
        meanwhile (see :func:`~bpeinspect.core.memory.quiet_gc`), or it walks the whole heap
        with every other thread locked out (half a second next to a window holding a few
        tokenizers and a long text)."""
        with quiet_gc():
            return self._search(query, sort, descending, progress, should_stop)

    def _search(
        self, query: TokenQuery, sort: str, descending: bool, progress: Progress, should_stop: ShouldStop
    ) -> list[int]:
        tok = self.tok
        q = query
        ids = self._candidates(q)
        # the sets a token must be in (None: no such condition)
        unreachable = self.unreachable if q.unreachable else None
        unused = self.unused if q.unused else None
        if q.unreachable and unreachable is None:
            raise QueryError("the unreachable tokens have not been computed yet")
        if q.unused and unused is None:
            raise QueryError("no corpus has been encoded to find unused tokens")
        match = self._matcher(q)
        if match is None and q == TokenQuery(mode=q.mode, text=q.text, ignore_case=q.ignore_case):
            return self.sorted(list(ids), sort, descending, should_stop=should_stop)  # nothing to filter
        out: list[int] = []
        total = len(ids)
        token_bytes, is_special = tok.token_bytes, tok.is_special
        for n, i in enumerate(ids):
            if not n & 4095:
                _tick(n, total, progress, should_stop)
            bts = token_bytes(i)
            if q.min_len is not None and len(bts) < q.min_len:
                continue
            if q.max_len is not None and len(bts) > q.max_len:
                continue
            if q.special is not None and is_special(i) != q.special:
                continue
            if unreachable is not None and i not in unreachable:
                continue
            if unused is not None and i not in unused:
                continue
            if q.script is not None and q.script not in self.scripts(i):
                continue
            if q.kind is not None and self.kind(i) != q.kind:
                continue
            if match is not None and not match(bts):
                continue
            out.append(i)
        if progress is not None:
            progress(total, total)
        return self.sorted(out, sort, descending, should_stop=should_stop)

    def order(self, sort: str, should_stop: ShouldStop = None) -> np.ndarray:
        """Every id's place when the whole vocabulary is sorted by ``sort`` (ties by id), as
        an array indexed by id (``-1`` for ids not in the vocabulary); built once per column.

        The keys are computed a token at a time (a loop that lets other threads run) and
        sorted by numpy, which releases the GIL: one ``sorted()`` of 200k keyed rows holds
        it for many frames, stalling the window while a worker sorts. ``should_stop`` is
        asked every 2048 tokens (a GUI's worker gives way to the window there)."""
        got = self._orders.get(sort)
        if got is None:
            with quiet_gc():  # (see search)
                got = self._orders[sort] = self._order(sort, should_stop)
        return got

    def _order(self, sort: str, should_stop: ShouldStop) -> np.ndarray:
        tok, ids = self.tok, self._ids
        id_arr = np.asarray(ids, dtype=np.int64)
        tb = tok.token_bytes

        def each(f: Callable[[int], object]) -> list:
            out: list = []
            for k in range(0, len(ids), 2048):
                if should_stop is not None and should_stop():
                    raise Cancelled()
                out.extend([f(i) for i in ids[k : k + 2048]])
            return out

        if sort == "rank":
            keys = [np.array(each(lambda i: r if (r := self.rank(i)) is not None else -1), dtype=np.int64)]
        elif sort == "length":
            keys = [np.array(each(lambda i: len(tb(i))), dtype=np.int64)]
        elif sort == "token":
            # bytes order: numpy's fixed-width bytes ignore trailing NULs, so the length breaks those ties
            raw = each(tb)
            keys = [np.array(raw, dtype=np.bytes_), np.array([len(b) for b in raw], dtype=np.int64)]
        elif sort in ("script", "kind"):
            names = each(lambda i: "+".join(self.scripts(i)) if sort == "script" else self.kind(i))
            codes = {name: n for n, name in enumerate(sorted(set(names)))}
            keys = [np.array([codes[s] for s in names], dtype=np.int64)]
        else:
            raise QueryError(f"cannot sort by {sort!r}")
        # lexsort: the last key is the primary one; the id breaks ties
        by = np.lexsort((id_arr, *reversed(keys)))
        place = np.full(int(id_arr.max()) + 1 if len(id_arr) else 0, -1, dtype=np.int64)
        place[id_arr[by]] = np.arange(len(by), dtype=np.int64)
        return place

    def sorted(
        self, ids: list[int], sort: str = "id", descending: bool = False, should_stop: ShouldStop = None
    ) -> list[int]:
        """``ids`` ordered by one column; ties (and tokens without a rank) fall back to the id."""
        if sort == "id":
            return sorted(ids, reverse=descending)
        place = self.order(sort, should_stop)
        arr = np.asarray(ids, dtype=np.int64)
        by = np.argsort(place[arr], kind="stable")
        return arr[by[::-1] if descending else by].tolist()

    def _candidates(self, q: TokenQuery) -> list[int]:
        if q.mode != "id" or not q.text.strip():
            return self._ids
        present = set(self._ids)
        out: set[int] = set()
        for lo, hi in parse_ids(q.text):
            if hi - lo < len(present):
                out.update(i for i in range(lo, hi + 1) if i in present)
            else:
                out.update(i for i in present if lo <= i <= hi)
        return sorted(out)

    def _matcher(self, q: TokenQuery) -> Callable[[bytes], bool] | None:
        if not q.text or q.mode == "id":
            return None
        if q.mode == "regex":
            try:
                pat = regex.compile(q.text, regex.IGNORECASE if q.ignore_case else 0)
            except (regex.error, ValueError, OverflowError, RecursionError) as exc:
                raise QueryError(f"the regex does not compile: {exc}") from None

            def search_regex(b: bytes) -> bool:
                try:
                    return pat.search(b.decode("utf-8", errors="replace"), timeout=0.5) is not None
                except TimeoutError:
                    raise QueryError("the regex takes too long on one token; simplify it") from None

            return search_regex
        needle = parse_hex(q.text) if q.mode == "hex" else parse_display(q.text)
        if q.mode == "text" and q.ignore_case:
            folded = needle.decode("utf-8", errors="replace").casefold()
            return lambda b: folded in b.decode("utf-8", errors="replace").casefold()
        if q.mode not in ("text", "hex"):
            raise QueryError(f"unknown search mode {q.mode!r}")
        return lambda b: needle in b
