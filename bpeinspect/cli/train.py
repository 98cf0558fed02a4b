"""``train``: a byte-level BPE tokenizer from text files, saved in the format OUT's name implies."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bpeinspect.cli.common import SAVE_NAMES, CliError, ProgressBar, pattern_arg, read_text, wrote
from bpeinspect.core.io.formats import check_target, format_for_path, save
from bpeinspect.core.train.run import train_tokenizer


def add_train(sub: Any) -> None:
    p = sub.add_parser("train", help="train a tokenizer on text files", description="Train a byte-level BPE "
                       f"tokenizer; the output format follows OUT's name: {SAVE_NAMES}.")
    p.add_argument("files", nargs="+", metavar="FILES", help="UTF-8 text files to train on")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="vocabulary size (at least 256)")
    p.add_argument("--pattern", type=pattern_arg, default="gpt4", metavar="NAME|REGEX", help="split rule: a preset name (gpt4, gpt2, "
                   "cl100k, o200k, r50k, llama3) or a regex (default: gpt4)")
    p.add_argument("--special-token", action="append", default=[], metavar="TEXT", help="add a special token "
                   "(repeatable)")
    p.add_argument("--tie-break", choices=("first-seen", "hf"), default="first-seen", help="which of equally frequent "
                   "pairs to merge: minbpe's first-seen or Hugging Face's order")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    if args.vocab_size < 256:
        raise CliError(f"--vocab-size must be at least 256 (the single bytes), not {args.vocab_size}")
    format_for_path(args.output)  # refuse an unusable OUT before the long part
    check_target(args.output)
    texts = [read_text(f) for f in args.files]
    bar = ProgressBar("training")
    try:
        tok = train_tokenizer(
            texts,
            args.vocab_size,
            pattern=args.pattern,
            special_tokens=list(args.special_token),
            tie_break=args.tie_break,
            progress=bar,
            should_stop=None,
        )
    finally:
        bar.close()
    written = save(tok, args.output)
    wrote(written, f" ({tok.n_vocab} tokens)")
    if tok.training is not None and tok.training.settings.get("ran_out_of_pairs"):
        print(
            f"the corpus ran out of pairs: {tok.n_vocab} tokens, fewer than the {args.vocab_size} asked for",
            file=sys.stderr,
        )
    return 0
