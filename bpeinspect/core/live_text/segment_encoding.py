"""One tokenizer's encoding of a :class:`LiveText`, kept per segment (:class:`LiveEncoding`),
and an :class:`EncodeResult` saying how it was brought up to date."""

from __future__ import annotations

import bisect
import contextlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from bpeinspect.core.analysis import boundaries_of_ends
from bpeinspect.core.encoding import Encoding
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.live_text.edits import encode_window, join_ranges, reencode_edit
from bpeinspect.core.live_text.segments import Change, LiveText, Segment
from bpeinspect.core.split.cuts import can_cut
from bpeinspect.core.tokenizer import Tokenizer


def lookahead(tok: Tokenizer) -> int:
    """How many characters after a segment its encoding by ``tok`` may depend on: the split
    rule looks at one, and a special or added token starting there ends the text before it."""
    return max((len(w) for w in (*tok.special_tokens, *tok.added_tokens)), default=1)


# code points of segments cheap to encode right where they are asked, with no thread hand-over
# (a few ms: a keystroke's segment or two, or the whole of a short text)
CHEAP_CHARS = 24_000


def cheap_to_encode(segments: Iterable[Segment]) -> bool:
    """Whether encoding ``segments`` is cheap enough to do where it is asked (the GUI thread).

    >>> cheap_to_encode([Segment("x" * 4096)]), cheap_to_encode([Segment("x" * 4096)] * 8)
    (True, False)
    """
    return sum(len(s.text) for s in segments) <= CHEAP_CHARS


def encode_segment(
    tok: Tokenizer,
    text: str,
    head: str = "",
    *,
    previous: tuple[Encoding, tuple[int, int, int]] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Encoding:
    """The encoding of segment ``text`` as it is encoded inside the whole text, where ``head``
    follows it (the next :func:`lookahead` characters; ``""``: nothing does).

    ``previous``: the encoding of the segment before an edit, and the edit (see
    :attr:`Change.edit`): only the lines around the edit are encoded again."""
    if previous is not None:
        return reencode_edit(tok, previous[0], text, *previous[1], should_stop=should_stop, follow=head)
    if not head:
        return tok.encode_with_offsets(text, should_stop=should_stop)
    return encode_window(tok, text + head, 0, len(text), should_stop)


class Part(NamedTuple):
    """One segment's encoding and where it lies in the whole (its first token, code point,
    UTF-16 unit and byte: exact once the parts before it are encoded); ``segment`` is the
    segment's index."""

    enc: Encoding
    segment: int = 0
    token: int = 0
    char: int = 0
    u16: int = 0
    byte: int = 0


class LiveEncoding:
    """One tokenizer's encoding of a :class:`LiveText`, kept per segment.

    :meth:`pending` lists the segments still to encode, each with the text after it that its
    encoding may depend on (a segment whose neighbour's start changed is encoded again);
    :meth:`put` stores an encoding; :meth:`apply` follows a change of the text (it must see
    every change, in order). For a tokenizer that cannot be cut (``cutting`` false, see
    :func:`~bpeinspect.core.split.cuts.can_cut`) the whole text is one segment. Reading works
    whatever is encoded so far.
    """

    def __init__(self, tok: Tokenizer, source: LiveText) -> None:
        self.tok = tok
        self.source = source
        self.cutting = can_cut(tok)
        self.lookahead = lookahead(tok)
        n = len(source.segments)
        # one entry per segment of the source, in its order
        self._encs: list[Encoding | None] = [None] * n
        self._heads: list[str | None] = [None] * n  # the text after the segment when it was encoded
        self._unencoded = n  # how many of _heads are None (kept as it changes: asked on every keystroke)
        self._ntok: list[int] = [0] * n
        self._nbytes: list[int] = [0] * n
        self._nchars: list[int] = [0] * n
        self._chars_done = 0  # sum(self._nchars), kept as it changes (asked for often, of many segments)
        # segments whose following text changed since they were encoded (or were encoded with a
        # following text no longer theirs): a put with the current one takes a segment off, so that
        # a text that went in a slice at a time leaves a few here, not one per slice
        self._stale: dict[Segment, None] = {}
        self.whole: Encoding | None = None  # the encoding of the one segment of a tokenizer that cannot be cut
        self.whole_version = -1  # the text version ``whole`` encodes
        self._whole_segment: tuple[Segment, int] | None = None  # the one segment, and the version it holds
        # running sums of tokens and bytes over the segments (``len(segments) + 1`` items), exact
        # up to index ``_exact``: a change marks where they start to differ, and the next
        # reading adds up from there (a keystroke near the end adds up a few segments, not all)
        self._tok_starts: list[int] = [0] * (n + 1)
        self._byte_starts: list[int] = [0] * (n + 1)
        self._exact = n
        self._full: Encoding | None = None
        self.changes = 0  # counts every change of what is encoded (readers may keep what they read till it moves)

    # -- bringing it up to date -------------------------------------------------------------------

    def _head(self, k: int) -> str:
        segs = self.source.segments
        return segs[k + 1].text[: self.lookahead] if k + 1 < len(segs) else ""

    def pending(self, among: Iterable[Segment] | None = None) -> list[tuple[Segment, str]]:
        """The segments to encode, in order, each with the text after it to encode it with.

        ``among``: only those of these segments (the ones an edit made, say) that are still to
        encode, looked at alone: the work grows with them, not with the text (every segment of a
        64 MB text not encoded yet is ten thousand of them)."""
        if not self.cutting:
            return [] if self.whole_version == self.source.version else [(self._whole(), "")]
        if len(self._encs) != len(self.source.segments):  # a change was missed: start over
            self._reset()
        segs, heads = self.source.segments, self._heads
        if among is not None:
            # a live segment is at its index; one whose head changed since it was encoded is due again
            ks = sorted({s.k for s in among if s.alive and segs[s.k] is s})
            return [(segs[k], head) for k in ks if heads[k] != (head := self._head(k))]
        todo: list[int] = []
        k = -1
        # list.index scans in C, and only as far as the last segment not encoded: nothing at all
        # once everything is (a keystroke asks several times, of thousands of segments)
        with contextlib.suppress(ValueError):
            while len(todo) < self._unencoded:
                k = heads.index(None, k + 1)
                todo.append(k)
        if self._stale:
            stale = set()
            for seg in list(self._stale):
                k = seg.k
                if not seg.alive or heads[k] is not None and heads[k] == self._head(k):
                    del self._stale[seg]
                elif heads[k] is not None:
                    stale.add(k)
                # (one not encoded is in todo already; its put says whether it stays)
            todo = sorted(set(todo) | stale)
        return [(segs[k], self._head(k)) for k in todo]

    def needs(self, seg: Segment) -> bool:
        """Whether ``seg`` (a segment of the source, of a tokenizer that can be cut) still needs
        an encoding: it has none, or one made with another text after it. One segment at a
        time, without listing them all as :meth:`pending` does (thousands in a long text).

        >>> from bpeinspect.core import load_tokenizer
        >>> text = LiveText("one\\ntwo\\nthree\\n", target=4)
        >>> live = LiveEncoding(load_tokenizer("cl100k_base"), text)
        >>> seg, head = live.pending()[0]
        >>> _ = live.put(seg, encode_segment(live.tok, seg.text, head), head)
        >>> [live.needs(s) for s in text.segments]
        [False, True, True]
        >>> _ = live.apply(text.replace(4, 3, "2"))   # the text after the first segment changed
        >>> [live.needs(s) for s in text.segments]
        [True, True, True]
        """
        if not seg.alive:
            return False
        if len(self._heads) != len(self.source.segments):  # a change was missed: all of it
            return True
        head = self._heads[seg.k]
        return head is None or head != self._head(seg.k)

    def put(self, seg: Segment, enc: Encoding, head: str) -> bool:
        """Keep ``enc``, the encoding of ``seg`` followed by ``head``; False if ``seg`` was
        replaced meanwhile."""
        if not self.cutting:
            if self._whole_segment is None or seg is not self._whole_segment[0] or not seg.alive:
                return False
            self.whole, self.whole_version = enc, self._whole_segment[1]
            self._changed()
            return True
        if not seg.alive or len(self._encs) != len(self.source.segments):
            return False
        k = seg.k
        if self._heads[k] is None:
            self._unencoded -= 1
        self._encs[k], self._heads[k] = enc, head
        if head == self._head(k):
            self._stale.pop(seg, None)
        else:  # encoded with what followed it before an edit: due again
            self._stale[seg] = None
        self._chars_done += len(seg.text) - self._nchars[k]
        self._ntok[k], self._nbytes[k], self._nchars[k] = len(enc.ids), enc.n_bytes, len(seg.text)
        self._exact = min(self._exact, k)
        self._changed()
        return True

    def _whole(self) -> Segment:
        """The one segment of a tokenizer that cannot be cut: the whole text (index 0)."""
        version = self.source.version
        if self._whole_segment is None or self._whole_segment[1] != version:
            if self._whole_segment is not None:
                self._whole_segment[0].alive = False
            self._whole_segment = (Segment(self.source.text()), version)
        return self._whole_segment[0]

    def apply(self, change: Change) -> list[Encoding]:
        """Follow ``change`` of the text: drop the encodings of the segments it replaced and
        return them (for the caller to free a few at a time)."""
        if not self.cutting:
            if self._whole_segment is not None:
                self._whole_segment[0].alive = False
            return []
        lo, hi, n = change.first, change.first + len(change.old), len(change.new)
        dropped = [e for e in self._encs[lo:hi] if e is not None]
        self._encs[lo:hi] = [None] * n
        self._unencoded += n - self._heads[lo:hi].count(None)
        self._heads[lo:hi] = [None] * n
        self._ntok[lo:hi] = [0] * n
        self._nbytes[lo:hi] = [0] * n
        self._chars_done -= sum(self._nchars[lo:hi])
        self._nchars[lo:hi] = [0] * n
        self._tok_starts[lo + 1 : hi + 1] = [0] * n  # (added up again from ``lo`` when read)
        self._byte_starts[lo + 1 : hi + 1] = [0] * n
        self._exact = min(self._exact, lo)
        if lo > 0:
            self._stale[self.source.segments[lo - 1]] = None
        self._changed()
        return dropped

    def release(self) -> list[Encoding]:
        """Drop every encoding and return them (for the caller to free a few at a time)."""
        dropped = [e for e in (*self._encs, self.whole) if e is not None]
        self.whole, self.whole_version = None, -1
        self._reset()
        return dropped

    def _reset(self) -> None:
        n = len(self.source.segments)
        self._encs, self._heads = [None] * n, [None] * n
        self._unencoded = n
        self._ntok, self._nbytes, self._nchars = [0] * n, [0] * n, [0] * n
        self._tok_starts, self._byte_starts, self._exact = [0] * (n + 1), [0] * (n + 1), n
        self._chars_done = 0
        self._stale = {}
        self._changed()

    def _changed(self) -> None:
        self.changes += 1
        self._full = None

    @property
    def complete(self) -> bool:
        """True if the encoding is of the current text, all of it."""
        if not self.cutting:
            return self.whole_version == self.source.version
        # asked every turn while a big text is encoded: a segment not encoded says so at once,
        # without listing every segment still to encode
        return not self._unencoded and not self.pending()

    # -- reading ----------------------------------------------------------------------------------

    def _sums(self) -> tuple[list[int], list[int], int]:
        """Where each segment's tokens and bytes start, and the end; the code points encoded."""
        if not self.cutting:
            w = self.whole
            return [0, len(w.ids) if w else 0], [0, w.n_bytes if w else 0], len(w.text) if w else 0
        k = self._exact
        tokens, nbytes = self._tok_starts, self._byte_starts
        if k < len(self._ntok):  # added up again from the first segment that changed
            tokens[k:] = itertools.accumulate(self._ntok[k:], initial=tokens[k])
            nbytes[k:] = itertools.accumulate(self._nbytes[k:], initial=nbytes[k])
            self._exact = len(self._ntok)
        return tokens, nbytes, self._chars_done

    def __len__(self) -> int:
        """Tokens encoded so far."""
        return self._sums()[0][-1]

    def __bool__(self) -> bool:
        return True

    def part(self, k: int) -> Part | None:
        """Segment ``k``'s encoding (``None`` until it is encoded)."""
        if not self.cutting:
            return Part(self.whole) if self.whole is not None and k == 0 else None
        if not 0 <= k < len(self._encs):
            return None
        enc = self._encs[k]
        if enc is None:
            return None
        tokens, nbytes, _ = self._sums()
        src = self.source
        return Part(enc, k, tokens[k], src.char_starts()[k], src.u16_starts()[k], nbytes[k])

    def n_parts(self) -> int:
        return len(self._encs) if self.cutting else 1

    def part_at_u16(self, pos: int) -> Part | None:
        """The encoded part holding UTF-16 position ``pos``."""
        if not self.cutting:
            return self.part(0)
        if not self.source.segments:
            return None
        return self.part(self.source.index_at_u16(pos))

    def part_of_token(self, i: int) -> Part | None:
        """The part holding token ``i`` (counted over the whole encoding)."""
        starts = self._sums()[0]
        if not 0 <= i < starts[-1]:
            return None
        # the last segment starting at or before i: empty and pending ones share their start
        return self.part(bisect.bisect_right(starts, i) - 1)

    def parts(self) -> Iterator[Part]:
        """Every encoded part, in order (the running sums looked up once: a 10 MB text's
        thousands of parts are read in a millisecond or two)."""
        if not self.cutting:
            p = self.part(0)
            if p is not None:
                yield p
            return
        tokens, nbytes, _ = self._sums()
        chars, u16s = self.source.char_starts(), self.source.u16_starts()
        for k, enc in enumerate(self._encs):
            if enc is not None:
                yield Part(enc, k, tokens[k], chars[k], u16s[k], nbytes[k])

    def token_at_utf16(self, pos: int) -> int | None:
        """Index of the (first) token covering UTF-16 unit ``pos``."""
        p = self.part_at_u16(pos)
        if p is None:
            return None
        i = p.enc.token_at_utf16(pos - p.u16)
        return None if i is None else p.token + i

    def utf16_span(self, i: int) -> tuple[int, int]:
        p = self.part_of_token(i)
        if p is None:
            raise IndexError(i)
        j = i - p.token
        return p.enc.utf16_starts[j] + p.u16, p.enc.utf16_ends[j] + p.u16

    def id_at(self, i: int) -> int:
        p = self.part_of_token(i)
        if p is None:
            raise IndexError(i)
        return p.enc.ids[i - p.token]

    def piece_text(self, i: int) -> str:
        """The text of the pre-token token ``i`` belongs to."""
        p = self.part_of_token(i)
        if p is None:
            raise IndexError(i)
        a, b = p.enc.piece_spans[p.enc.pieces_of[i - p.token]]
        return p.enc.text[a:b]

    def ids_between(self, first: int, end: int) -> tuple[list[int], bytearray]:
        """Ids and flags of tokens ``first`` to ``end - 1``."""
        ids: list[int] = []
        flags = bytearray()
        i = max(first, 0)
        while i < end:
            p = self.part_of_token(i)
            if p is None:
                break
            j = i - p.token
            k = min(len(p.enc.ids), end - p.token)
            ids.extend(p.enc.ids[j:k])
            flags += p.enc.flags[j:k]
            i = p.token + k
        return ids, flags

    @property
    def n_bytes(self) -> int:
        """UTF-8 bytes the tokens encoded so far cover."""
        return self._sums()[1][-1]

    @property
    def n_chars(self) -> int:
        """Code points of the text encoded so far."""
        return self._chars_done if self.cutting else self._sums()[2]

    def encoding(self) -> Encoding:
        """One :class:`Encoding` of the whole text (joined once per change: time and memory
        grow with the text, so a window asks for it off its GUI thread)."""
        if self._full is not None:
            return self._full
        if not self.cutting:
            enc = self.whole if self.whole is not None else Encoding(text="", token_bytes_of=self.tok.token_bytes)
        else:
            enc = join_parts(self.tok, self.source.text(), list(self.parts()))
        self._full = enc
        return enc

    def __getattr__(self, name: str):
        # everything else an Encoding has (ids, piece_spans, token(i)...) from the joined encoding
        if name.startswith("_") or name not in Encoding.__dataclass_fields__ and not hasattr(Encoding, name):
            raise AttributeError(name)
        return getattr(self.encoding(), name)


def join_parts(tok: Tokenizer, text: str, parts: list[Part]) -> Encoding:
    """One :class:`Encoding` of ``text`` from the encodings of its segments (all of them)."""
    spans = []
    byte = 0
    dropped = []
    for p in parts:
        spans.append((p.enc, 0, len(p.enc.ids), p.char, byte, p.u16))
        dropped += [(a + p.char, b + p.char) for a, b in p.enc.dropped]
        byte += len(p.enc.text.encode("utf-8", "surrogatepass"))
    out = join_ranges(tok, text, spans)
    out.dropped = dropped
    return out


def part_boundaries(parts: list[Part], should_stop: Callable[[], bool] | None = None, step: int = 256) -> np.ndarray:
    """The interior boundaries (byte offsets, ascending, each once) of the encoding ``parts``
    make up together: :func:`~bpeinspect.core.analysis.interior_boundaries` of
    :func:`join_parts` without joining them. ``should_stop`` is asked every ``step`` parts
    (:class:`~bpeinspect.core.errors.Cancelled` ends it).

    >>> from bpeinspect.core import load_tokenizer
    >>> from bpeinspect.core.analysis import interior_boundaries
    >>> tok, text = load_tokenizer("r50k_base"), LiveText("one two\\nthree\\n" * 4, target=8)
    >>> live = LiveEncoding(tok, text)
    >>> for seg, head in live.pending():
    ...     _ = live.put(seg, encode_segment(tok, seg.text, head), head)
    >>> parts = list(live.parts())
    >>> len(parts) > 1, part_boundaries(parts).tolist()[:4]
    (True, [3, 7, 8, 13])
    >>> part_boundaries(parts).tolist() == interior_boundaries(tok.encode_with_offsets(text.text())).tolist()
    True
    """
    ends = []
    for k, p in enumerate(parts):
        if p.enc.ids:
            ends.append(p.enc.byte_ends_array() + p.byte)
        if should_stop is not None and k % step == step - 1 and should_stop():
            raise Cancelled("cancelled")
    return boundaries_of_ends(np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64))


Mode = Literal["segment", "chunked"]  # encoded where it was asked, or by a worker


@dataclass
class EncodeResult:
    """A tokenizer's :class:`LiveEncoding` and how it was last brought up to date: in
    ``seconds``, where (``mode``), and the UTF-16 range that changed (``None``: all of it)."""

    tok: Tokenizer
    enc: LiveEncoding
    seconds: float
    mode: Mode
    changed: tuple[int, int] | None = None
