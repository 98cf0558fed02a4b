"""A text kept in segments follows every edit, and its per-segment encodings joined equal one full encode."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.live_text import LiveEncoding, LiveText, can_cut_between, cut, encode_segment
from bpeinspect.core.text import utf16_len
from tests.core.live_text.test_edits import ALPHABET, SAMPLE, assert_same


def encode_pending(live: LiveEncoding, change=None, dropped=()) -> None:
    """Encode what is pending; an edited segment from its encoding before (checked against a fresh encode)."""
    for seg, head in live.pending():
        enc = encode_segment(live.tok, seg.text, head)
        if change is not None and change.edit is not None and dropped and seg is change.new[0]:
            again = encode_segment(live.tok, seg.text, head, previous=(dropped[0], change.edit))
            assert_same(again, enc)
        assert live.put(seg, enc, head)


def check_segments(text: LiveText) -> None:
    segs = text.segments
    assert all(s.text for s in segs)
    for a, b in zip(segs, segs[1:]):
        assert can_cut_between(a.text, b.text), (a.text[-5:], b.text[:5])
    assert text.u16_len == utf16_len(text.text())
    assert len(text) == len(text.text())


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base", "o200k_base", "gpt2"])
def tok(request):
    if request.param == "gpt2":  # a minbpe-style pattern run by the regex module
        base = load_tokenizer("r50k_base")
        return Tokenizer(base.mergeable_ranks, pattern="gpt2", special_tokens=base.special_tokens)
    return load_tokenizer(request.param)


def test_cut_keeps_the_text_and_cuts_at_hard_boundaries():
    text = SAMPLE * 20
    pieces = cut(text, target=50)
    assert "".join(pieces) == text
    assert len(pieces) > 5
    for a, b in zip(pieces, pieces[1:]):
        assert can_cut_between(a, b)


def test_random_edits_follow_the_text_and_encode_exactly(tok):
    rng = random.Random(7)
    plain = SAMPLE.replace("\r", "")
    text = LiveText(plain * 6, target=40)
    live = LiveEncoding(tok, text)
    encode_pending(live)
    mirror = plain * 6
    for _ in range(150):
        u16 = utf16_len(mirror)
        pos = rng.randrange(u16 + 1)
        removed = rng.choice([0, 0, 1, 2, 30]) if pos < u16 else 0
        removed = min(removed, u16 - pos)
        added = "".join(rng.choice(ALPHABET) for _ in range(rng.choice([0, 1, 1, 3, 40]))).replace("\r", "")
        # the mirror in code points (the edit is in UTF-16 units, as Qt gives it)
        units = mirror.encode("utf-16-le", "surrogatepass")
        try:
            before = units[: 2 * pos].decode("utf-16-le")
            after = units[2 * (pos + removed) :].decode("utf-16-le")
        except UnicodeDecodeError:
            continue  # inside a surrogate pair: Qt never edits there
        mirror = before + added + after
        change = text.replace(pos, removed, added)
        dropped = live.apply(change)
        assert text.text() == mirror
        check_segments(text)
        # only the replaced segments need encoding again, and the one before them
        before = [text.segments[change.first - 1]] if change.first else []
        assert {id(s) for s, _ in live.pending()} <= {id(s) for s in change.new + before}
        encode_pending(live, change, dropped)
        assert live.complete
    assert_same(live.encoding(), tok.encode_with_offsets(mirror))


@settings(max_examples=60, deadline=None)
@given(
    base=st.lists(st.sampled_from(ALPHABET), max_size=60).map("".join),
    edits=st.lists(
        st.tuples(st.integers(0, 200), st.integers(0, 4), st.lists(st.sampled_from(ALPHABET), max_size=5).map("".join)),
        max_size=6,
    ),
)
def test_edits_encode_as_one_full_encode(base, edits):
    tok = load_tokenizer("cl100k_base")
    base = base.replace("\r", "")
    text = LiveText(base, target=3)
    live = LiveEncoding(tok, text)
    encode_pending(live)
    mirror = base
    for pos, removed, added in edits:
        added = added.replace("\r", "")
        pos = min(pos, len(mirror))
        removed = min(removed, len(mirror) - pos)
        u = utf16_len(mirror[:pos])
        change = text.replace(u, utf16_len(mirror[pos : pos + removed]), added)
        mirror = mirror[:pos] + added + mirror[pos + removed :]
        live.apply(change)
        encode_pending(live)
        check_segments(text)
    assert text.text() == mirror
    assert_same(live.encoding(), tok.encode_with_offsets(mirror))


def test_appending_leaves_earlier_segments_alone():
    text = LiveText("", target=8)
    text.replace(0, 0, "first line\nsecond line\n")
    keep = text.segments[0]
    change = text.replace(text.u16_len, 0, "Third line\nfourth\n")
    assert keep in text.segments and keep not in change.old
    assert text.text() == "first line\nsecond line\nThird line\nfourth\n"


def test_reading_across_parts():
    tok = load_tokenizer("o200k_base")
    body = "Grüße 😀 aus Köln\nzweite Zeile\n" * 40
    text = LiveText(body, target=30)
    live = LiveEncoding(tok, text)
    assert len(live) == 0 and not live.complete
    encode_pending(live)
    full = tok.encode_with_offsets(body)
    assert len(live) == len(full.ids) and live.complete
    assert live.n_bytes == full.n_bytes and live.n_chars == len(body)
    for i in range(0, len(full.ids), 7):
        assert live.id_at(i) == full.ids[i]
        assert live.utf16_span(i) == (full.utf16_starts[i], full.utf16_ends[i])
        a, b = full.piece_spans[full.pieces_of[i]]
        assert live.piece_text(i) == body[a:b]
    for pos in range(0, utf16_len(body), 13):
        assert live.token_at_utf16(pos) == full.token_at_utf16(pos)
    ids, flags = live.ids_between(5, 500)
    assert ids == full.ids[5:500] and bytes(flags) == bytes(full.flags[5:500])
    assert live.ids == full.ids  # anything else an Encoding has comes from the joined one


def test_a_tokenizer_that_cannot_be_cut_is_one_segment():
    base = load_tokenizer("r50k_base")
    custom = Tokenizer(base.mergeable_ranks, pattern=r"\S+\s*")
    text = LiveText("ab cd\n" * 5000, target=64)
    live = LiveEncoding(custom, text)
    (seg, head), *more = live.pending()
    assert not more and seg.text == text.text() and head == ""
    assert live.put(seg, encode_segment(custom, seg.text), head) and live.complete
    assert live.part_at_u16(100).enc is live.whole
    assert_same(live.encoding(), custom.encode_with_offsets(text.text()))
    live.apply(text.replace(3, 0, "x"))  # the segment is the old text now
    live.apply(text.replace(0, 0, "y"))
    assert not seg.alive and not live.complete and live.n_parts() == 1
    assert not live.put(seg, encode_segment(custom, seg.text), head)
    ((now, _),) = live.pending()
    assert now.text == text.text()


def test_the_characters_encoded_so_far_follow_puts_edits_and_a_new_text():
    tok = load_tokenizer("cl100k_base")
    text = LiveText("one line\nanother line\n" * 30, target=20)
    live = LiveEncoding(tok, text)
    todo = live.pending()
    for seg, head in todo[::2]:  # every other segment encoded
        assert live.put(seg, encode_segment(tok, seg.text, head), head)
    assert live.n_chars == sum(len(seg.text) for seg, _ in todo[::2])
    seg, head = todo[0]
    assert live.put(seg, encode_segment(tok, seg.text, head), head)  # again: counted once
    assert live.n_chars == sum(len(seg.text) for seg, _ in todo[::2])
    live.apply(text.replace(0, 25, "x"))  # the first segments replaced: no longer encoded
    assert live.n_chars == sum(len(s.text) for s in text.segments if live.part(s.k) is not None)
    encode_pending(live)
    assert live.n_chars == len(text.text())
    live.apply(text.set_text("new"))
    assert live.n_chars == 0


def test_a_text_going_in_a_slice_at_a_time_updates_its_starts_in_place():
    """Each slice changes the last segments only: the running starts are changed there, not
    copied whole per slice (which made a text going in quadratic in its length)."""
    body = "Grüße 😀 aus Köln\nzweite Zeile\n" * 200
    text = LiveText("", target=30)
    text.replace(0, 0, body[:500])
    u16, chars = text.u16_starts(), text.char_starts()
    for a in range(500, len(body), 300):
        text.replace(text.u16_len, 0, body[a : a + 300])
        assert text.u16_starts() is u16 and text.char_starts() is chars
    text.replace(text.u16_len // 2, 3, "é😀\n")  # an edit in the middle shifts what follows
    text.replace(7, 0, "")
    assert text.u16_starts() is u16 and text.char_starts() is chars
    check_segments(text)
    assert u16 == [0, *itertools.accumulate(s.u16 for s in text.segments)]
    assert chars == [0, *itertools.accumulate(len(s.text) for s in text.segments)]


class _ReadsFrom(list):
    """A list that notes where each reading of it in order starts (0 for the whole of it)."""

    def __init__(self, items) -> None:
        super().__init__(items)
        self.reads: list[int] = []

    def __iter__(self):
        self.reads.append(0)
        return super().__iter__()

    def __getitem__(self, index):
        if isinstance(index, slice):
            self.reads.append(index.start or 0)
        return super().__getitem__(index)


def test_token_and_byte_sums_are_added_up_from_the_changed_segment_on():
    """A keystroke near the end re-adds the counts of the segments from it on, not of all of
    them, and the sums equal a recomputation after edits, puts and reads in any order."""
    tok = load_tokenizer("cl100k_base")
    rng = random.Random(3)
    plain = SAMPLE.replace("\r", "")
    text = LiveText(plain * 8, target=40)
    live = LiveEncoding(tok, text)
    encode_pending(live)
    assert len(live) == len(tok.encode_with_offsets(text.text()).ids)
    live._ntok = _ReadsFrom(live._ntok)
    live._nbytes = _ReadsFrom(live._nbytes)
    change = text.replace(text.u16_len - 3, 0, "x")
    live.apply(change)
    encode_pending(live)
    assert len(live) == len(tok.encode_with_offsets(text.text()).ids)
    assert live.n_bytes == len(text.text().encode("utf-8"))
    reads = live._ntok.reads + live._nbytes.reads
    assert reads and min(reads) >= change.first
    for _ in range(40):
        pos = rng.randrange(text.u16_len)
        removed = rng.randrange(min(30, text.u16_len - pos) + 1)
        live.apply(text.replace(pos, removed, rng.choice(["", "a", "\n", "é😀 ", plain[:50]])))
        if rng.random() < 0.5:
            len(live)  # a reading between the change and its encoding
        encode_pending(live)
        full = tok.encode_with_offsets(text.text())
        assert len(live) == len(full.ids) and live.n_bytes == full.n_bytes
        token = byte = 0
        for k in range(live.n_parts()):
            p = live.part(k)
            assert (p.token, p.byte) == (token, byte)
            token, byte = token + len(p.enc.ids), byte + p.enc.n_bytes


class _Scanned(list):
    """A list that notes how far each ``index`` call looked."""

    def __init__(self, items) -> None:
        super().__init__(items)
        self.scanned: list[int] = []

    def index(self, value, start=0, stop=None):
        try:
            found = super().index(value, start, len(self) if stop is None else stop)
        except ValueError:
            self.scanned.append(len(self) - start)
            raise
        self.scanned.append(found + 1 - start)
        return found


def test_what_is_pending_is_found_without_looking_past_the_last_segment_to_encode():
    """A keystroke asks several times what is left to encode, of thousands of segments: with
    nothing left no segment is looked at, and with one left, none after it."""
    tok = load_tokenizer("cl100k_base")
    rng = random.Random(5)
    plain = SAMPLE.replace("\r", "")
    text = LiveText(plain * 20, target=40)
    live = LiveEncoding(tok, text)
    encode_pending(live)
    live._heads = _Scanned(live._heads)
    assert live.pending() == [] and live.complete
    assert live._heads.scanned == []
    change = text.replace(text.u16_len // 3, 0, "x")
    live.apply(change)
    live._heads = _Scanned(live._heads)
    assert [seg for seg, _ in live.pending()] == change.new
    assert sum(live._heads.scanned) <= change.first + len(change.new)
    for _ in range(40):  # and it is right after edits, puts and new texts in any order
        pos = rng.randrange(text.u16_len)
        removed = rng.randrange(min(30, text.u16_len - pos) + 1)
        change = text.replace(pos, removed, rng.choice(["", "a", "\n", "é😀 ", plain[:90]]))
        live.apply(change)
        todo = live.pending()
        assert [s.k for s, _ in todo] == [
            s.k for s in text.segments if live.part(s.k) is None or s.k in {s.k for s, _ in todo}
        ]
        for seg, head in todo[::2]:
            live.put(seg, encode_segment(tok, seg.text, head), head)
        if rng.random() < 0.1:
            live.apply(text.set_text(plain * rng.randrange(1, 4)))
    encode_pending(live)
    assert live.complete and live.encoding().ids == tok.encode_with_offsets(text.text()).ids


class _CountsHeads(LiveEncoding):
    """A LiveEncoding that counts the segments whose following text it looks at (the work per segment)."""

    heads = 0

    def _head(self, k: int) -> str:
        self.heads += 1
        return super()._head(k)


def test_whether_an_encoding_is_complete_is_told_without_listing_every_segment_to_encode():
    """Asked every turn while a big text is encoded: with segments still to encode, no segment's
    following text is looked at."""
    tok = load_tokenizer("cl100k_base")
    text = LiveText(SAMPLE.replace("\r", "") * 20, target=40)
    live = _CountsHeads(tok, text)
    assert len(text.segments) > 50
    assert not live.complete
    assert live.heads == 0
    encode_pending(live)
    assert live.complete


def test_what_is_pending_among_some_segments_looks_only_at_them():
    """Asked of the segments an edit made (while the rest is encoded elsewhere), the work grows
    with them, not with the text; the answer is the whole list's, kept to them, after edits,
    puts and new texts in any order (a segment whose following text changed is due again)."""
    tok = load_tokenizer("cl100k_base")
    rng = random.Random(7)
    plain = SAMPLE.replace("\r", "")
    text = LiveText(plain * 20, target=40)
    live = _CountsHeads(tok, text)
    some = text.segments[5:8]
    assert live.pending(among=some) == [(s, live._head(s.k)) for s in some]
    live.heads = 0
    live.pending(among=some[:1])
    assert live.heads == 1
    encode_pending(live)
    for _ in range(60):
        pos = rng.randrange(text.u16_len)
        removed = rng.randrange(min(30, text.u16_len - pos) + 1)
        change = text.replace(pos, removed, rng.choice(["", "a", "\n", "é😀 ", plain[:90]]))
        live.apply(change)
        among = [*change.old, *change.new, *rng.sample(text.segments, min(3, len(text.segments)))]
        whole = live.pending()
        assert live.pending(among=among) == [(s, h) for s, h in whole if s in among]
        for seg, head in whole[::2]:
            live.put(seg, encode_segment(tok, seg.text, head), head)
        if rng.random() < 0.1:
            live.apply(text.set_text(plain * rng.randrange(1, 4)))
    encode_pending(live)
    assert live.complete and live.pending(among=text.segments) == []


def test_a_text_that_went_in_a_slice_at_a_time_leaves_no_segment_to_look_at_again():
    """Each slice of a text going in changes the text after a segment: once every segment is
    encoded with what follows it now (by a round that took them as they came, say), asking what
    is pending looks at a few segments, not at one per slice (thousands at 64 MB)."""
    from bpeinspect.core.live_text import follow_of, lookahead

    tok = load_tokenizer("cl100k_base")
    plain = SAMPLE.replace("\r", "") * 20
    text = LiveText("", target=40)
    live = _CountsHeads(tok, text)
    for start in range(0, len(plain), 37):
        live.apply(text.replace(text.u16_len, 0, plain[start : start + 37]))
    assert len(text.segments) > 50
    for seg in text.segments:
        head = follow_of(text, seg.k, lookahead(tok))
        assert live.put(seg, encode_segment(tok, seg.text, head), head)
    live.heads = 0
    assert live.pending() == [] and live.complete
    assert live.heads <= 2
    assert live.encoding().ids == tok.encode_with_offsets(text.text()).ids


def test_a_segment_encoded_with_what_followed_it_before_an_edit_is_encoded_again():
    """A segment handed out (to a round) before an edit changed the start of the next one comes
    back encoded with the old following text: it is pending again, whatever was asked between."""
    from bpeinspect.core.live_text import follow_of, lookahead

    tok = load_tokenizer("cl100k_base")
    text = LiveText("one two\n" * 40, target=16)
    live = LiveEncoding(tok, text)
    seg = text.segments[3]
    old_head = follow_of(text, seg.k, lookahead(tok))
    enc = encode_segment(tok, seg.text, old_head)
    change = text.replace(text.u16_starts()[seg.k + 1], 0, "x")  # the next segment now starts otherwise
    live.apply(change)
    assert seg.alive and follow_of(text, seg.k, lookahead(tok)) != old_head
    live.pending()  # asked while the segment is out
    assert live.put(seg, enc, old_head)
    assert seg in [s for s, _ in live.pending()]
    encode_pending(live)
    assert live.encoding().ids == tok.encode_with_offsets(text.text()).ids


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab é\n日😀𝔘", max_size=120), st.integers(0, 130), st.integers(4, 40))
def test_the_head_of_a_text_in_segments_is_its_first_characters(text, chars, target):
    live = LiveText(text, target=target)
    assert live.head(chars) == text[:chars]
