"""Export the token overlay: a standalone HTML page, or a PNG of the panes.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> "<span" in overlay_html([(tok, tok.encode_with_offsets("hi there"))])
True
"""

from __future__ import annotations

import html

from bpeinspect.core import Encoding, Tokenizer
from bpeinspect.core.encoding import SPECIAL
from bpeinspect.core.text import hex_bytes
from bpeinspect.gui.overlay.palette import EXPORT_SPECIAL, EXPORT_SPLIT, TokenPalette


def overlay_html(encodings: list[tuple[Tokenizer, Encoding]], palette: TokenPalette | None = None) -> str:
    """One section per tokenizer: the text with a coloured span per token (hover: id, bytes)."""
    pal = palette or TokenPalette()
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bpeinspect overlay</title><style>",
        "body{font-family:sans-serif;margin:2em} pre{white-space:pre-wrap;font-size:15px;line-height:1.7}",
        f"pre span{{border-radius:3px;margin-right:1px;padding:1px 0}} .sp{{outline:2px solid {EXPORT_SPECIAL}}}",
        f".split{{border-bottom:2px dashed {EXPORT_SPLIT}}}",
        "</style></head><body>",
    ]
    for tok, enc in encodings:
        n_chars = len(enc.text)
        parts.append(
            f"<h3>{html.escape(tok.name or 'tokenizer')} — {len(enc.ids):,} tokens, {n_chars:,} characters</h3><pre>"
        )
        groups_end = -1
        for i, t in enumerate(enc.ids):
            cs, ce = enc.char_starts[i], enc.char_ends[i]
            if cs < groups_end:
                continue  # shares its characters with the previous span: shown there
            j = i
            while j + 1 < len(enc.ids) and enc.char_starts[j + 1] < enc.char_ends[j]:
                j += 1
            ce = enc.char_ends[j]
            groups_end = ce
            ids = enc.ids[i : j + 1]
            bts = b"".join(tok.token_bytes(x) for x in ids)
            title = f"id {', '.join(map(str, ids))} · bytes {hex_bytes(bts)}"
            cls = "sp" if enc.flags[i] & SPECIAL else ("split" if j > i else "")
            color = pal.background(t).name()
            parts.append(
                f"<span class='{cls}' style='background:{color}' title='{html.escape(title, quote=True)}'>"
                f"{html.escape(enc.text[cs:ce])}</span>"
            )
        parts.append("</pre>")
    parts.append("</body></html>")
    return "".join(parts)

