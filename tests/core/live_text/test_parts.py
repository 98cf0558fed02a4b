"""Reading every part of an encoding kept in segments adds up its running sums once, not once a part."""

from __future__ import annotations

from bpeinspect.core import load_tokenizer
from bpeinspect.core.live_text import LiveEncoding, LiveText, encode_segment
from tests.core.live_text.test_edits import SAMPLE


def test_reading_every_part_looks_up_the_starts_once_and_gives_what_part_gives():
    tok = load_tokenizer("cl100k_base")
    text = LiveText(SAMPLE * 40, target=64)
    live = LiveEncoding(tok, text)
    todo = live.pending()
    for seg, head in todo[: len(todo) // 2] + todo[len(todo) // 2 + 3 :]:  # three segments not encoded
        assert live.put(seg, encode_segment(tok, seg.text, head), head)
    calls = {"char_starts": 0, "u16_starts": 0}
    for name in calls:
        real = getattr(text, name)

        def counted(real=real, name=name):
            calls[name] += 1
            return real()

        setattr(text, name, counted)
    parts = list(live.parts())
    assert len(parts) == live.n_parts() - 3 > 50
    assert calls == {"char_starts": 1, "u16_starts": 1}
    assert parts == [p for k in range(live.n_parts()) if (p := live.part(k)) is not None]
