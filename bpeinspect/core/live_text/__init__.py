"""A long text kept in segments, each with its own encoding: an edit re-encodes one segment.

The window's text may be tens of megabytes, and a keystroke must recolour it within a frame.
One :class:`~bpeinspect.core.Encoding` of the whole text cannot follow an edit in that time:
every offset after the edit moves, and shifting millions of them costs more than the frame.
So :class:`LiveText` keeps the text cut into segments of about :data:`TARGET` code points, at
cut points (see :mod:`bpeinspect.core.split.cuts`: the parts encode there exactly as the
whole), and :class:`LiveEncoding` keeps one tokenizer's encoding as one ``Encoding`` per
segment, with offsets relative to its segment. An edit replaces the segment(s) it touches;
only those are encoded again (a millisecond or two each), and nothing after them moves but
one running sum per segment. Joined, the segments' encodings are exactly
``tok.encode_with_offsets(text)``.

A tokenizer that cannot be cut (a custom regex, a normalizer, see
:func:`~bpeinspect.core.split.cuts.can_cut`) has the whole text as its one segment. An edit
within one segment re-encodes only the lines around it (:func:`reencode_edit`, in
:mod:`.edits`).

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("cl100k_base")
>>> text = LiveText("one\\ntwo\\nthree\\n", target=4)
>>> live = LiveEncoding(tok, text)
>>> for seg, head in live.pending():
...     _ = live.put(seg, encode_segment(tok, seg.text, head), head)
>>> change = text.replace(4, 3, "2")                # "two" -> "2", in UTF-16 units
>>> _ = live.apply(change)
>>> [seg.text for seg, _ in live.pending()]        # only the edited segment
['one\\n', '2\\n']
>>> for seg, head in live.pending():
...     _ = live.put(seg, encode_segment(tok, seg.text, head), head)
>>> live.encoding().ids == tok.encode("one\\n2\\nthree\\n")
True
"""

from bpeinspect.core.live_text.edits import find_edit, join_ranges, reencode_edit
from bpeinspect.core.live_text.processes import Round, can_encode_far, encode_round, follow_of
from bpeinspect.core.live_text.segment_encoding import (
    CHEAP_CHARS,
    EncodeResult,
    LiveEncoding,
    Mode,
    Part,
    cheap_to_encode,
    encode_segment,
    join_parts,
    lookahead,
    part_boundaries,
)
from bpeinspect.core.live_text.segments import TARGET, Change, LiveText, Segment, can_cut_between, cut

__all__ = [
    "CHEAP_CHARS",
    "TARGET",
    "Change",
    "EncodeResult",
    "LiveEncoding",
    "LiveText",
    "Mode",
    "Part",
    "Round",
    "Segment",
    "can_cut_between",
    "can_encode_far",
    "cheap_to_encode",
    "cut",
    "encode_round",
    "encode_segment",
    "find_edit",
    "follow_of",
    "join_parts",
    "join_ranges",
    "lookahead",
    "part_boundaries",
    "reencode_edit",
]
