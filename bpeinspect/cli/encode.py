"""``encode`` and ``decode``: text to ids (plain, JSON with offsets, or coloured) and back."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

from bpeinspect.cli.common import CliError, json_safe, json_text, read_text
from bpeinspect.cli.vocab_options import add_vocab_options, load_spec
from bpeinspect.core.text import display_terminal

BG_COLORS = (153, 186, 217, 151, 223, 189, 194, 224, 152, 230)  # 256-colour pastels, as in the GUI
ANSI_RESET = "\x1b[0m"


def add_encode(sub: Any) -> None:
    p = sub.add_parser("encode", help="encode text to token ids", description="Encode a file (or standard input).")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC", help="built-in name or vocabulary file "
                   "(default: cl100k_base)")
    p.add_argument("--special", choices=("none", "all", "raise"), default="none",
                   help="special-token text: none = encode it as ordinary text (default), all = recognise it, "
                   "raise = refuse it; added tokens that are not special are matched in every mode")
    p.add_argument("--output", choices=("ids", "json", "color"), default="ids",
                   help="ids separated by spaces (default), JSON with token details, or the text with coloured tokens")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="text file to encode; '-' or nothing = stdin")
    add_vocab_options(p)
    p.set_defaults(func=cmd_encode)


def cmd_encode(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer, pattern=args.pattern, special_tokens=args.special_token)
    text = read_text(args.file)
    if args.special == "raise":
        tok.encode(text)  # raises DisallowedSpecialError if special-token text is present
    allowed: Any = "all" if args.special == "all" else ()
    if args.output == "ids":
        ids = tok.encode(text, allowed_special="all") if args.special == "all" else tok.encode_ordinary(text)
        print(" ".join(map(str, ids)))
        return 0
    enc = tok.encode_with_offsets(text, allowed_special=allowed)
    if args.output == "json":
        write_json(tok, enc, sys.stdout)
        return 0
    sys.stdout.write(color_text(enc) + ("" if text.endswith("\n") else "\n"))
    return 0


def write_json(tok: Any, enc: Any, out: Any, batch: int = 4096) -> None:
    """``{"tokenizer", "ids", "tokens"}`` as one line of JSON, written ``batch`` tokens at a
    time from the encoding's columns (no list of every token's details is ever built)."""
    dumps = json.dumps
    out.write(f'{{"tokenizer": {json_text(tok.name)}, "ids": [{", ".join(map(str, enc.ids))}], "tokens": [')
    token_bytes = enc.token_bytes_of or tok.token_bytes
    ids, starts, ends = enc.ids, enc.char_starts, enc.char_ends
    added = set(tok.added_tokens.values())
    parts: list[str] = []
    for i in range(len(ids)):
        tid = ids[i]
        tb = token_bytes(tid)
        parts.append(
            f'{{"id": {tid}, "text": {dumps(tb.decode("utf-8", errors="replace"), ensure_ascii=False)}, '
            f'"bytes": "{tb.hex()}", "chars": [{starts[i]}, {ends[i]}], '
            f'"special": {"true" if enc.is_special(i) else "false"}, "added": {"true" if tid in added else "false"}}}'
        )
        if len(parts) == batch or i == len(ids) - 1:
            out.write(("" if i < batch else ", ") + json_safe(", ".join(parts)))
            parts = []
    out.write("]}\n")


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
        style = f"\x1b[1;4;48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m" if special else (
            f"\x1b[48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m"
        )
        # Newlines end the colour so the background does not bleed across the line; the
        # text's own control characters show in the notation (only ours reach the terminal).
        piece = display_terminal(text[a:b]).replace("\n", ANSI_RESET + "\n" + style)
        out.append(style + piece + ANSI_RESET)
        pos = b
    out.append(display_terminal(text[pos:]))
    return "".join(out)


def add_decode(sub: Any) -> None:
    p = sub.add_parser("decode", help="decode token ids to text", description="Decode ids given as arguments or on stdin.")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC", help="built-in name or vocabulary file")
    p.add_argument("ids", nargs="*", metavar="IDS", help="token ids (spaces or commas); '-' or nothing = read stdin")
    add_vocab_options(p)
    p.set_defaults(func=cmd_decode)


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
