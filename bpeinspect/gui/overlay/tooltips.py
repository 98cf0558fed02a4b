"""What the overlay says about a token: runs of tokens sharing a character, where a token's
bytes lie inside such a character, and the hover text.

>>> from bpeinspect.core import load_tokenizer
>>> enc = load_tokenizer("cl100k_base").encode_with_offsets("x 🎉")
>>> split_groups(enc)
[(1, 3)]
"""

from __future__ import annotations

import html
import re

from bpeinspect.core import Encoding, Tokenizer
from bpeinspect.core.encoding import SPLITS_CHAR
from bpeinspect.core.live_text import Part
from bpeinspect.core.text import hex_bytes
from bpeinspect.gui.overlay.glyphs import display_bytes, shown, token_shown
from bpeinspect.gui.overlay.palette import app_colors

# every flag byte with a split bit set, whatever other bits it has
_SPLIT_FLAGS = re.compile(b"[" + b"".join(re.escape(bytes([f])) for f in range(256) if f & SPLITS_CHAR) + b"]")


def split_groups(enc: Encoding) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of more than one token that share characters.

    >>> from bpeinspect.core import load_tokenizer
    >>> split_groups(load_tokenizer("cl100k_base").encode_with_offsets("hi 🎉"))
    [(1, 3)]
    """
    out: list[tuple[int, int]] = []
    for m in _SPLIT_FLAGS.finditer(enc.flags):
        i = m.start()
        if out and out[-1][1] >= i:
            continue
        group = group_around(enc, i)
        if group is not None:
            out.append(group)
    return out


def group_around(enc: Encoding, i: int) -> tuple[int, int] | None:
    """The run ``(first, last)`` of more than one token sharing characters with token ``i``."""
    cs, ce, n = enc.char_starts, enc.char_ends, len(enc.ids)
    k = i
    while k > 0 and cs[k] < ce[k - 1]:
        k -= 1
    j = i
    while j + 1 < n and cs[j + 1] < ce[j]:
        j += 1
    return (k, j) if j > k else None


def byte_fractions(enc: Encoding, i: int, group_first: int) -> tuple[float, float]:
    """Where token ``i``'s bytes lie inside the characters it touches, as fractions 0..1.

    The first token of a group starts on a character boundary (else it would share that
    character with the token before it), so its byte offset anchors the group's characters.
    """
    cs, ce = enc.char_starts[i], enc.char_ends[i]
    g_char, g_byte = enc.char_starts[group_first], enc.byte_starts[group_first]
    start = g_byte + len(enc.text[g_char:cs].encode("utf-8", "surrogatepass"))
    total = len(enc.text[cs:ce].encode("utf-8", "surrogatepass"))
    if total <= 0:
        return 0.0, 1.0
    return (enc.byte_starts[i] - start) / total, (enc.byte_ends[i] - start) / total


def token_tooltip(
    tok: Tokenizer,
    enc: Encoding,
    i: int,
    group: tuple[int, int] | None = None,
    *,
    at: Part | None = None,
    total: int | None = None,
) -> str:
    """Rich-text tooltip for token ``i``: id, text, bytes, rank, parents, spans.

    ``enc`` may be one part of a longer encoding (``at`` says where it lies in the whole,
    ``total`` how many tokens the whole has): positions are then those in the whole."""
    info = enc.token(i)
    at = at or Part(enc)
    rows = [
        ("id", f"<b>{info.id}</b>"),
        ("text", f"<code>{html.escape(display_bytes(info.text_bytes))}</code>"),
        *([("word", tok.word_marks.where(*tok.token_marks(info.id)))] if tok.word_marks and not info.special else []),
        ("bytes", f"<code>{hex_bytes(info.text_bytes)}</code> ({len(info.text_bytes)} B)"),
    ]
    if info.special:
        rows.append(("kind", "<b>special token</b>"))
    elif tok.is_added(info.id):
        rows.append(("kind", "<b>added token</b> (not special: matched before BPE in any encoding)"))
    else:
        graph = tok.merge_graph
        rank = graph.rank(info.id)
        rows.append(("rank", "—" if rank is None else str(rank)))
        parents = graph.parents(info.id)
        if parents is None:
            kind = "a single byte" if len(info.text_bytes) == 1 else "not buildable by merges"
            rows.append(("parents", kind))
        else:
            a, b = parents
            rows.append(
                (
                    "parents",
                    f"{a} <code>{html.escape(token_shown(tok, a))}</code> + "
                    f"{b} <code>{html.escape(token_shown(tok, b))}</code>",
                )
            )
    (c0, c1), (b0, b1) = info.char_span, info.byte_span
    rows.append(("chars", f"{c0 + at.char}–{c1 + at.char}  (bytes {b0 + at.byte}–{b1 + at.byte})"))
    if group is not None and group[0] != group[1]:
        chars = enc.text[enc.char_starts[group[0]] : enc.char_ends[group[1]]]
        rows.append(
            (
                "note",
                f"tokens {group[0] + at.token}–{group[1] + at.token} share the character(s) "
                f"<code>{html.escape(shown(chars))}</code>; this one holds bytes {hex_bytes(info.text_bytes)}",
            )
        )
    quiet = app_colors().tip_label  # the theme's, not a grey the dark tooltip hides
    body = "".join(f"<tr><td style='color:{quiet}'>{k}</td><td>{v}</td></tr>" for k, v in rows)
    n = len(enc.ids) if total is None else total
    return f"<table cellspacing=2>{body}</table><i style='color:{quiet}'>token {i + at.token + 1:,} of {n:,}</i>"


def dropped_tooltip(tok: Tokenizer, chars: str) -> str:
    """Rich-text tooltip for characters the encoding drops: which of their bytes have no token."""
    data = chars.encode("utf-8", "surrogatepass")
    missing = set(tok.missing_bytes)
    lost = sorted({b for b in data if b in missing})
    listed = " ".join(f"{b:02x}" for b in lost)
    cps = " ".join(f"U+{ord(c):04X}" for c in chars)
    name = html.escape(tok.name or "this tokenizer")
    return (
        f"<b>dropped</b>: <code>{html.escape(display_bytes(data))}</code> ({cps}, bytes <code>{hex_bytes(data)}</code>)"
        f"<br>{name} has no token for the single byte{'s' if len(lost) != 1 else ''} <code>{listed}</code>, "
        "so no token holds this text: it is dropped when encoding, as Hugging Face tokenizers and llama.cpp drop it."
    )
