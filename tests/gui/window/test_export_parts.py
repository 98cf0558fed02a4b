"""Exporting part of a long text's overlay reads only the stretches of the text it shows."""

from __future__ import annotations

from bpeinspect.core import load_tokenizer, utf16_len
from bpeinspect.core.live_text.processes import pack, unpack
from bpeinspect.gui.window.files import OverlaySection, overlay_html_pieces
from tests.core.corpus import PROSE, code_samples

LAZY = ("char_starts", "utf16_starts", "utf16_ends", "flags", "piece_spans")


def test_a_part_of_the_overlay_reads_the_offsets_of_only_the_stretches_it_shows():
    tok = load_tokenizer("cl100k_base")
    texts = [*PROSE[:6], "\n".join(code_samples(20_000)), *PROSE[6:12]]
    encs = [tok.encode_with_offsets(t) for t in texts]
    starts = [sum(utf16_len(t) for t in texts[:k]) for k in range(len(texts))]
    lo, hi = starts[6] + 5, starts[7] - 3  # inside the code, the seventh stretch
    lazy = unpack(texts, pack(encs), tok.token_bytes)  # as the child processes send them back
    lazy_section = OverlaySection("cl100k_base", list(zip(starts, lazy)), lo, hi)
    page = "".join(overlay_html_pieces([lazy_section]))
    built = [k for k, enc in enumerate(lazy) if any(name in vars(enc) for name in LAZY)]
    assert built == [6]
    section = OverlaySection("cl100k_base", list(zip(starts, encs)), lo, hi)
    assert page == "".join(overlay_html_pieces([section]))  # the same page as from whole encodings
    code = encs[6]
    inside = [i for i in range(len(code)) if code.utf16_ends[i] > lo - starts[6] and code.utf16_starts[i] < hi - starts[6]]
    assert section.token_count() == len(inside) == lazy_section.token_count()
