"""A text's segments encoded on child processes: joined, exactly one full encode; the children
do the encoding, segments may come while the round runs, and a round can be stopped."""

from __future__ import annotations

import threading
import time

import pytest

from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.live_text import LiveEncoding, LiveText, Round, encode_round, follow_of
from bpeinspect.core.live_text.processes import pack, unpack
from tests.core.corpus import ADVERSARIAL, PROSE, code_samples
from tests.core.live_text.test_edits import SAMPLE, assert_same


@pytest.fixture(scope="module")
def toks() -> list[Tokenizer]:
    return [load_tokenizer(name) for name in ("o200k_base", "cl100k_base", "r50k_base")]


@pytest.fixture(scope="module")
def corpus() -> str:
    return "\n".join([SAMPLE, *PROSE, *ADVERSARIAL, *code_samples(300_000)])


def _queue_all(work: Round, text: LiveText) -> None:
    work.add([(seg, follow_of(text, seg.k, work.lookahead)) for seg in text.segments])


def _run(work: Round, lives: list[LiveEncoding], **kwargs: object) -> int:
    n = 0
    for done in encode_round(work, **kwargs):
        for k, seg, head, enc in done:
            assert lives[k].put(seg, enc, head)
            n += 1
    return n


def test_a_round_on_children_encodes_every_tokenizer_exactly_as_one_full_encode(toks, corpus, children_given) -> None:
    text = LiveText(corpus, target=2048)
    lives = [LiveEncoding(tok, text) for tok in toks]
    work = Round(toks)
    _queue_all(work, text)
    work.close()
    assert _run(work, lives, processes=3) == len(toks) * len(text.segments)
    for tok, live in zip(toks, lives):
        assert live.complete
        assert_same(live.encoding(), tok.encode_with_offsets(corpus))
    # the two children did the encoding (this process only builds what they send back)
    assert len({id(c) for c in children_given}) == 2


def test_segments_added_while_the_round_runs_are_encoded_too(toks, corpus) -> None:
    text = LiveText(corpus, target=2048)
    lives = [LiveEncoding(tok, text) for tok in toks[:2]]
    work = Round(toks[:2])
    segs = text.segments
    cut = len(segs) // 3
    work.add([(seg, follow_of(text, seg.k, work.lookahead)) for seg in segs[:cut]])

    def later() -> None:
        time.sleep(0.3)
        work.add([(seg, follow_of(text, seg.k, work.lookahead)) for seg in segs[cut:]])
        work.close()

    feeder = threading.Thread(target=later)
    feeder.start()
    _run(work, lives, processes=2)
    feeder.join()
    for tok, live in zip(toks, lives):
        assert live.encoding().ids == tok.encode(corpus, allowed_special="all")


def test_segments_an_edit_replaced_are_not_encoded(toks) -> None:
    text = LiveText(SAMPLE * 40, target=256)
    live = LiveEncoding(toks[0], text)
    work = Round(toks[:1])
    _queue_all(work, text)
    work.close()
    change = text.replace(0, 5, "Howdy")
    live.apply(change)
    got = [seg for done in encode_round(work, processes=2) for _, seg, _, _ in done]
    assert not set(change.old) & set(got) and len(got) == len(text.segments) - len(change.new)


def test_a_stopped_round_ends_early(toks, corpus) -> None:
    text = LiveText(corpus * 3, target=1024)
    work = Round(toks[:1])
    _queue_all(work, text)  # not closed: it would wait for more
    stop = threading.Event()
    seen = 0
    for done in encode_round(work, processes=2, should_stop=stop.is_set):
        seen += len(done)
        stop.set()
    assert 0 < seen < len(text.segments)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_encodings_sent_back_flat_together_are_the_same_encodings(name: str) -> None:
    tok = load_tokenizer(name)
    encs = [tok.encode_with_offsets(text) for text in ["", SAMPLE, *ADVERSARIAL, ""]]
    assert unpack([e.text for e in encs], pack(encs), tok.token_bytes) == encs
    for enc in encs:  # and each alone
        assert unpack([enc.text], pack([enc]), tok.token_bytes) == [enc]
    assert unpack([], pack([]), tok.token_bytes) == []


def test_encodings_sent_back_build_their_columns_only_when_read() -> None:
    import copy

    from bpeinspect.core import Encoding
    from bpeinspect.core.live_text.segment_encoding import Part, part_boundaries

    tok = load_tokenizer("cl100k_base")
    encs = [tok.encode_with_offsets(text) for text in [SAMPLE, *ADVERSARIAL]]
    back = unpack([e.text for e in encs], pack(encs), tok.token_bytes)
    lazy = ("byte_starts", "char_ends", "utf16_starts", "pieces_of", "flags", "piece_spans")
    # what a round reads of every segment: its ids, counts, byte ends and what it dropped
    for got, enc in zip(back, encs):
        assert (got.ids, len(got), got.n_bytes, got.dropped) == (enc.ids, len(enc), enc.n_bytes, enc.dropped)
        assert got.byte_ends_array().tolist() == list(enc.byte_ends)
    part = Part(back[0], 0, 0, 0, 0, 0)
    assert part_boundaries([part]).tolist() == part_boundaries([Part(encs[0], 0, 0, 0, 0, 0)]).tolist()
    assert not any(name in vars(got) for got in back for name in lazy)
    # one column read builds that segment's, and only that segment's
    assert back[1].char_starts == encs[1].char_starts
    assert all(name in vars(back[1]) for name in lazy)
    assert not any(name in vars(back[2]) for name in lazy)
    assert [back[2].token(i) for i in range(len(back[2]))] == list(encs[2])
    # copied or sent on, it is the plain encoding it stands for
    again = copy.copy(back[3])
    assert type(again) is Encoding and again == encs[3] and again.piece_spans == encs[3].piece_spans
    with pytest.raises(AttributeError):
        back[4].no_such_field  # noqa: B018


def test_building_the_columns_of_an_encoding_sent_back_sets_off_no_collection() -> None:
    import gc

    tok = load_tokenizer("cl100k_base")
    enc = tok.encode_with_offsets("\n".join(code_samples(400_000)))
    (back,) = unpack([enc.text], pack([enc]), tok.token_bytes)
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        assert back.piece_spans == enc.piece_spans  # builds every column, a tuple per pre-token
    finally:
        gc.callbacks.remove(count)
    assert len(enc.piece_spans) > 50_000
    assert collections == []


def test_an_item_encoded_in_this_process_asks_the_rounds_should_stop_and_a_child_does_not() -> None:
    from bpeinspect.core import Cancelled
    from bpeinspect.core.analysis.shipping import Shipped
    from bpeinspect.core.live_text.processes import _encode_item

    tok = load_tokenizer("r50k_base")
    item = [("Hello there.", ""), (" And again.", "")]
    asked: list[bool] = []
    here = _encode_item((Shipped(tok, lambda: asked.append(True) or False),), item)
    assert len(asked) >= len(item)  # asked before each segment (and while the parts were written)
    assert here == _encode_item((tok,), item)  # a child's: the tokenizer itself, nothing to ask
    stop = [False]
    shipped = Shipped(tok, lambda: stop[0])
    stop[0] = True  # asked once the parts are written: in the encoding
    with pytest.raises(Cancelled):
        _encode_item((shipped,), item)
