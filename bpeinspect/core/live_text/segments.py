"""The text in segments cut at cut points (:class:`LiveText`), and an edit's :class:`Change`."""

from __future__ import annotations

import bisect
import itertools
from typing import NamedTuple

from bpeinspect.core.split.cuts import is_cut, next_cut
from bpeinspect.core.text import fix_surrogates, utf16_len

TARGET = 1 << 12  # code points per segment (encoded in about a millisecond); segments grow to 2x before they are cut


class Segment:
    """A piece of the text. Never changed: an edit makes new segments (``alive`` turns false
    on the ones it replaced), so a segment can key its encodings in any thread."""

    __slots__ = ("alive", "k", "text", "u16")

    def __init__(self, text: str) -> None:
        self.text = text
        self.u16 = utf16_len(text)  # its length in UTF-16 units (Qt's positions)
        self.alive = True
        self.k = 0  # its index in the text's list of segments (while alive)

    def char_at_u16(self, u: int) -> int:
        """The code point index at UTF-16 offset ``u`` of this segment."""
        if self.u16 == len(self.text):
            return u
        return len(self.text.encode("utf-16-le", "surrogatepass")[: 2 * u].decode("utf-16-le", "surrogatepass"))

    def __repr__(self) -> str:
        return f"Segment({self.text[:20]!r}{'…' if len(self.text) > 20 else ''}, {len(self.text)} chars)"


class Change(NamedTuple):
    """``old`` (the segments at ``first``…) were replaced by ``new``; when one segment
    became one, ``edit`` is ``(start, old_end, new_end)``: ``old[0].text[start:old_end]``
    became ``new[0].text[start:new_end]``."""

    first: int
    old: list[Segment]
    new: list[Segment]
    edit: tuple[int, int, int] | None = None


def can_cut_between(left: str, right: str) -> bool:
    """True if the text may be cut between ``left`` and ``right`` (a cut point, see
    :mod:`bpeinspect.core.split.cuts`)."""
    return bool(left) and is_cut(left[-2:] + right[:1], len(left[-2:]), lookahead=True)


def cut(text: str, target: int = TARGET) -> list[str]:
    """``text`` cut at cut points into pieces of at least ``target`` code points (a piece is
    longer where the text has no cut point; a text up to twice ``target`` stays whole).

    >>> cut("ab\\ncd\\nef\\n", target=3)
    ['ab\\n', 'cd\\nef\\n']
    """
    if len(text) <= 2 * target:
        return [text] if text else []
    out = []
    a = 0
    while a < len(text):
        b = next_cut(text, a + target, lookahead=True) if len(text) - a > 2 * target else -1
        b = len(text) if b < 0 else b
        out.append(text[a:b])
        a = b
    return out


class LiveText:
    """A text as a list of :class:`Segment`, cut at cut points, changed by :meth:`replace`.

    Positions are in UTF-16 units, as Qt counts them; ``version`` counts the changes. Lone
    surrogates become U+FFFD as the text comes in (:func:`~bpeinspect.core.text.fix_surrogates`,
    which keeps its length in UTF-16 units), so the segments encode as they are.
    """

    def __init__(self, text: str = "", *, target: int = TARGET) -> None:
        text = fix_surrogates(text)
        self.target = target
        self.segments: list[Segment] = [Segment(t) for t in cut(text, target)]
        for k, seg in enumerate(self.segments):
            seg.k = k
        self.version = 0
        self.n_chars = len(text)
        self._starts: list[int] | None = None
        self._char_starts: list[int] | None = None
        self._text: str | None = text

    # -- reading ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.n_chars

    @property
    def u16_len(self) -> int:
        return self.u16_starts()[-1]

    def text(self) -> str:
        """The whole text (joined once per version: time and memory grow with the text)."""
        if self._text is None:
            self._text = "".join(s.text for s in self.segments)
        return self._text

    def u16_starts(self) -> list[int]:
        """Where each segment starts, in UTF-16 units, and the end: ``len(segments) + 1`` items."""
        if self._starts is None:
            self._starts = [0, *itertools.accumulate(s.u16 for s in self.segments)]
        return self._starts

    def char_starts(self) -> list[int]:
        """Where each segment starts, in code points, and the end."""
        if self._char_starts is None:
            self._char_starts = [0, *itertools.accumulate(len(s.text) for s in self.segments)]
        return self._char_starts

    def index_at_u16(self, pos: int) -> int:
        """The segment holding UTF-16 position ``pos`` (the last one for the end)."""
        return max(0, min(bisect.bisect_right(self.u16_starts(), pos) - 1, len(self.segments) - 1))

    def slice_u16(self, start: int, end: int) -> str:
        """The text between two UTF-16 positions."""
        if end <= start or not self.segments:
            return ""
        starts = self.u16_starts()
        k0, k1 = self.index_at_u16(start), self.index_at_u16(end - 1)
        parts = []
        for k in range(k0, k1 + 1):
            seg = self.segments[k]
            a = seg.char_at_u16(max(start - starts[k], 0))
            b = seg.char_at_u16(min(end - starts[k], seg.u16))
            parts.append(seg.text[a:b])
        return "".join(parts)

    def head(self, chars: int) -> str:
        """The text's first ``chars`` characters (without joining the whole text)."""
        return self.slice_u16(0, 2 * chars)[:chars]  # a character takes one or two UTF-16 units

    # -- changing ---------------------------------------------------------------------------------

    def set_text(self, text: str) -> Change:
        """Replace everything."""
        text = fix_surrogates(text)
        return self._splice(0, len(self.segments), [Segment(t) for t in cut(text, self.target)])

    def replace(self, pos: int, removed: int, added: str) -> Change:
        """Replace ``removed`` UTF-16 units at ``pos`` by ``added``.

        The segments the edit touches are replaced, and so are neighbours where the edit made
        the cut between them no longer a cut point.
        """
        added = fix_surrogates(added)
        segs = self.segments
        n = len(segs)
        starts = self.u16_starts()
        total = starts[-1]
        end = pos + removed
        if pos < 0 or removed < 0 or end > total:
            raise ValueError(f"edit {pos}+{removed} outside a text of {total} UTF-16 units")
        if n == 0:
            return self._splice(0, 0, [Segment(t) for t in cut(added, self.target)])
        edit = None
        if removed == 0 and pos == total:
            lo = hi = n  # appended: no segment is touched yet
            text = added
        else:
            lo = bisect.bisect_right(starts, pos) - 1
            last = bisect.bisect_right(starts, end - 1) - 1 if removed else lo
            hi = last + 1
            head = segs[lo].text[: segs[lo].char_at_u16(pos - starts[lo])]
            tail = segs[last].text[segs[last].char_at_u16(end - starts[last]) :]
            text = head + added + tail
            if lo == last:
                edit = (lo, len(head), len(segs[lo].text) - len(tail), len(head) + len(added))
        while True:  # make both ends of the new text cut points again
            before = segs[lo - 1].text if lo > 0 else None
            after = segs[hi].text if hi < n else None
            if not text:
                if before is not None and after is not None and not can_cut_between(before, after):
                    text, hi = after, hi + 1
                    continue
                break
            if before is not None and not can_cut_between(before, text):
                text, lo = before + text, lo - 1
            elif after is not None and not can_cut_between(text, after):
                text, hi = text + after, hi + 1
            else:
                break
        pieces = cut(text, self.target)
        if edit is not None and (edit[0], len(pieces)) != (lo, 1) or hi != lo + 1:
            edit = None  # neighbours joined in, or it was cut in two
        return self._splice(lo, hi, [Segment(t) for t in pieces], edit[1:] if edit else None)

    def _splice(self, lo: int, hi: int, new: list[Segment], edit: tuple[int, int, int] | None = None) -> Change:
        segs = self.segments
        old = segs[lo:hi]
        segs[lo:hi] = new
        for seg in old:
            seg.alive = False
        for k in range(lo, len(segs) if len(new) != len(old) else lo + len(new)):
            segs[k].k = k
        self.n_chars += sum(len(s.text) for s in new) - sum(len(s.text) for s in old)
        self.version += 1
        self._starts = _splice_starts(self._starts, lo, hi, [s.u16 for s in new])
        self._char_starts = _splice_starts(self._char_starts, lo, hi, [len(s.text) for s in new])
        self._text = None
        return Change(lo, old, new, edit)


def _splice_starts(starts: list[int] | None, lo: int, hi: int, lengths: list[int]) -> list[int] | None:
    """Running sums ``starts`` after segments ``lo:hi`` became ones of ``lengths``, changed in
    place: only the items from ``lo`` on are written (a text going in a slice at a time changes
    its last segments: copying every start per slice made it quadratic in the text's length).

    >>> starts = [0, 2, 5, 9]
    >>> _splice_starts(starts, 1, 2, [1, 1, 1]) is starts, starts
    (True, [0, 2, 3, 4, 5, 9])
    """
    if starts is None:
        return None
    mid = list(itertools.accumulate(lengths, initial=starts[lo]))
    delta = mid[-1] - starts[hi]
    if delta and hi + 1 < len(starts):
        mid += [x + delta for x in starts[hi + 1 :]]
        starts[lo:] = mid
    else:
        starts[lo : hi + 1] = mid
    return starts
