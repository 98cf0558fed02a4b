"""``convert``: load a tokenizer and write it in another file format."""

from __future__ import annotations

import argparse
from typing import Any

from bpeinspect.cli.common import SAVE_NAMES, add_command, wrote
from bpeinspect.cli.vocab_options import add_vocab_options, load_spec
from bpeinspect.core.io import save_noted, saveable

ABOUT = f"""convert a tokenizer to another file format

Load SPEC and write it to OUT; the format follows OUT's name: {SAVE_NAMES}; a folder = gpt2."""


def add_convert(sub: Any) -> None:
    p = add_command(sub, "convert", cmd_convert, ABOUT)
    p.add_argument("spec", metavar="SPEC", help="built-in name, vocabulary file or hf:OWNER/NAME")
    p.add_argument("out", metavar="OUT", help="file to write")
    add_vocab_options(p)
    p.add_argument("--format", choices=[f.name for f in saveable()], help="write this format whatever OUT is called")


def cmd_convert(args: argparse.Namespace) -> int:
    tok = load_spec(args.spec, pattern=args.pattern, special_tokens=args.special_token)
    saved = save_noted(tok, args.out, fmt=args.format)
    wrote(saved.path, notes=saved.notes)
    return 0
