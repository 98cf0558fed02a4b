"""``encode`` and ``decode``: text to ids (plain, JSON with offsets, or coloured) and back."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from bpeinspect.cli.common import CliError, add_command, json_safe, json_text, read_text
from bpeinspect.cli.vocab_options import add_tokenizer, add_vocab_options, load_spec
from bpeinspect.core import display_terminal
from bpeinspect.core.split.cuts import can_cut, cut_spans

BG_COLORS = (153, 186, 217, 151, 223, 189, 194, 224, 152, 230)  # 256-colour pastels, as in the GUI
ANSI_RESET = "\x1b[0m"


ABOUT_ENCODE = """encode text to token ids

Encode a file (or standard input)."""


def add_encode(sub: Any) -> None:
    p = add_command(sub, "encode", cmd_encode, ABOUT_ENCODE)
    add_tokenizer(p)
    p.add_argument(
        "--special",
        choices=("none", "all", "raise"),
        default="none",
        help="special-token text: none = encode it as ordinary text (default), all = recognise it, "
        "raise = refuse it; added tokens that are not special are matched in every mode",
    )
    p.add_argument(
        "--output",
        choices=("ids", "json", "color"),
        default="ids",
        help="ids separated by spaces (default), JSON with token details, or the text with coloured tokens",
    )
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="text file to encode; '-' or nothing = stdin")
    add_vocab_options(p)


def cmd_encode(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer, pattern=args.pattern, special_tokens=args.special_token)
    text = read_text(args.file)
    parts = list(text_parts(tok, text))  # (offset, length): a part at a time holds its encoding only
    if args.special == "raise":
        for a, n in parts:
            tok.encode(text[a : a + n])  # raises DisallowedSpecialError if special-token text is present
    allowed: Any = "all" if args.special == "all" else ()
    if args.output == "ids":
        first = True
        for a, n in parts:
            part = text[a : a + n]
            ids = tok.encode(part, allowed_special="all") if args.special == "all" else tok.encode_ordinary(part)
            if ids:
                sys.stdout.write(("" if first else " ") + " ".join(map(str, ids)))
                first = False
        sys.stdout.write("\n")
        return 0
    if args.output == "json":
        write_json(tok, text, parts, allowed, sys.stdout)
        return 0
    enc = tok.encode_with_offsets(text, allowed_special=allowed)
    sys.stdout.write(color_text(enc) + ("" if text.endswith("\n") else "\n"))
    return 0


PART_CHARS = 1 << 18  # characters encoded at a time by encode's ids and JSON output


def text_parts(tok: Any, text: str, size: int | None = None) -> Iterator[tuple[int, int]]:
    """``(offset, length)`` of parts of ``text`` that ``tok`` encodes exactly as within the whole:
    cut at cut points for the tokenizers that allow it (see :mod:`bpeinspect.core.split.cuts`),
    else the whole text. Memory then stays that of one part, whatever the size of the input.

    >>> from bpeinspect.core import load_tokenizer
    >>> list(text_parts(load_tokenizer("gpt2"), "ab\\ncd\\nef", 2))
    [(0, 2), (2, 3), (5, 3)]
    """
    size = size or PART_CHARS
    spans = cut_spans(text, size) if can_cut(tok) else [(0, len(text))]
    yield from ((a, b - a) for a, b in spans)


def write_json(tok: Any, text: str, parts: list[tuple[int, int]], allowed: Any, out: Any, *, batch: int = 4096) -> None:
    """``{"tokenizer", "ids", "tokens"}`` as one line of JSON, a part of the text at a time
    (``parts``: see :func:`text_parts`) and ``batch`` tokens at a time from the encoding's
    columns (no list of every token's details is ever built). The ids come first, so a text of
    several parts is encoded twice (the second time from the pre-token cache)."""
    out.write(f'{{"tokenizer": {json_text(tok.name)}, "ids": [')
    encs: Any = [tok.encode_with_offsets(text, allowed_special=allowed)] if len(parts) == 1 else None
    sep = ""
    for a, n in parts:
        ids = (
            encs[0].ids
            if encs
            else tok.encode(text[a : a + n], allowed_special=allowed or set(), disallowed_special=())
        )
        if len(ids):
            out.write(sep + ", ".join(map(str, ids)))
            sep = ", "
    out.write('], "tokens": [')
    sep = ""
    for a, n in parts:
        enc = encs.pop() if encs else tok.encode_with_offsets(text[a : a + n], allowed_special=allowed)
        for lo in range(0, len(enc.ids), batch):
            out.write(
                sep
                + json_safe(", ".join(_token_json(tok, enc, i, a) for i in range(lo, min(len(enc.ids), lo + batch))))
            )
            sep = ", "
        del enc
    out.write("]}\n")


def _token_json(tok: Any, enc: Any, i: int, offset: int) -> str:
    tid = enc.ids[i]
    tb = (enc.token_bytes_of or tok.token_bytes)(tid)
    text = json.dumps(tb.decode("utf-8", errors="replace"), ensure_ascii=False)
    marks = ""
    if tok.word_marks is not None:  # a word mark is not text: it is said apart
        continues, ends = tok.token_marks(tid)
        marks = f', "continues_word": {"true" if continues else "false"}, "ends_word": {"true" if ends else "false"}'
    return (
        f'{{"id": {tid}, "text": {text}, "bytes": "{tb.hex()}", '
        f'"chars": [{enc.char_starts[i] + offset}, {enc.char_ends[i] + offset}], '
        f'"special": {"true" if enc.is_special(i) else "false"}, "added": {"true" if tok.is_added(tid) else "false"}'
        f"{marks}}}"
    )


def color_text(enc: Any) -> str:
    """The text with each token (or group of tokens sharing a character) on a coloured background."""
    out = []
    text = enc.text
    pos = 0
    for n, (first, last) in enumerate(enc.char_groups()):
        a, b = enc.char_starts[first], enc.char_ends[last]
        if a > pos:
            out.append(display_terminal(text[pos:a]))
        special = any(enc.token(i).special for i in range(first, last + 1))
        style = (
            f"\x1b[1;4;48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m"
            if special
            else (f"\x1b[48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m")
        )
        # Newlines end the colour so the background does not bleed across the line; the
        # text's own control characters show in the notation (only ours reach the terminal).
        piece = display_terminal(text[a:b]).replace("\n", ANSI_RESET + "\n" + style)
        out.append(style + piece + ANSI_RESET)
        pos = b
    out.append(display_terminal(text[pos:]))
    return "".join(out)


ABOUT_DECODE = """decode token ids to text

Decode ids given as arguments or on stdin."""


def add_decode(sub: Any) -> None:
    p = add_command(sub, "decode", cmd_decode, ABOUT_DECODE)
    add_tokenizer(p)
    p.add_argument("ids", nargs="*", metavar="IDS", help="token ids (spaces or commas); '-' or nothing = read stdin")
    add_vocab_options(p)


def parse_ids(words: Iterable[str]) -> list[int]:
    out = []
    for w in words:
        for part in w.replace(",", " ").replace("[", " ").replace("]", " ").split():
            try:
                out.append(int(part))
            except ValueError:
                raise CliError(f"not a token id: {part!r}") from None
    return out


def cmd_decode(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer, pattern=args.pattern, special_tokens=args.special_token)
    words = args.ids if args.ids and args.ids != ["-"] else [read_text("-")]  # capped: < /dev/zero never ends
    ids = parse_ids(words)
    text = tok.decode_bytes(ids).decode("utf-8", errors="replace")
    # the exact text into a pipe or file; on a terminal, its escape sequences are shown, not run
    sys.stdout.write(display_terminal(text) if sys.stdout.isatty() else text)
    sys.stdout.flush()
    return 0
