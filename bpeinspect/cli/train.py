"""``train``: a byte-level BPE tokenizer from text files, saved in the format OUT's name implies.

With ``--sizes``, one run trains to the largest size and the smaller ones are its first merges
(as the training window does): each is written beside OUT, its size before the extension.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bpeinspect.cli.common import SAVE_NAMES, CliError, ProgressBar, pattern_arg, read_text, wrote
from bpeinspect.core.io import check_target, format_for_path, save_noted
from bpeinspect.core.train import (
    TrainingJob,
    TrainingPlan,
    TrainingRun,
    check_sizes,
    parse_sizes,
    size_label,
    train_tokenizer,
)


def add_train(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="train a tokenizer on text files",
        description=f"Train a byte-level BPE tokenizer; the output format follows OUT's name: {SAVE_NAMES}.",
    )
    p.add_argument("files", nargs="+", metavar="FILES", help="UTF-8 text files to train on")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--vocab-size", type=int, metavar="N", help="vocabulary size (at least 256)")
    size.add_argument(
        "--sizes",
        metavar="N,N,...",
        help="several vocabulary sizes in one run, e.g. 1k,4k,16k: "
        "it trains to the largest, the smaller ones are its first merges; each is written beside OUT "
        "with its size before the extension (bpe.tiktoken: bpe-1k.tiktoken, bpe-4k.tiktoken, ...)",
    )
    p.add_argument(
        "--pattern",
        type=pattern_arg,
        default="gpt4",
        metavar="NAME|REGEX",
        help="split rule: a preset name (gpt4, gpt2, cl100k, o200k, r50k, llama3) or a regex (default: gpt4)",
    )
    p.add_argument(
        "--special-token", action="append", default=[], metavar="TEXT", help="add a special token (repeatable)"
    )
    p.add_argument(
        "--tie-break",
        choices=("first-seen", "hf"),
        default="first-seen",
        help="which of equally frequent pairs to merge: minbpe's first-seen or Hugging Face's order",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")
    p.set_defaults(func=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    if args.sizes is not None:
        return _train_sizes(args)
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
    saved = save_noted(tok, args.output)
    wrote(saved.path, f" ({tok.n_vocab} tokens)", saved.notes)
    if tok.training is not None and tok.training.settings.get("ran_out_of_pairs"):
        print(
            f"the corpus ran out of pairs: {tok.n_vocab} tokens, fewer than the {args.vocab_size} asked for",
            file=sys.stderr,
        )
    return 0


def sized_path(out: str | Path, size: int) -> Path:
    """Where the tokenizer of ``size`` tokens goes: OUT with the size before its extension.

    >>> sized_path("runs/bpe.tiktoken", 4000).as_posix(), sized_path("tokenizer.json", 1024).as_posix()
    ('runs/bpe-4k.tiktoken', 'tokenizer-1024.json')
    """
    p = Path(out)
    return p.with_name(f"{p.stem}-{size_label(size)}{p.suffix}")


def _train_sizes(args: argparse.Namespace) -> int:
    """``--sizes``: one run to the largest size, a tokenizer per size, each in OUT's format."""
    specials = list(args.special_token)
    try:
        sizes = parse_sizes(args.sizes)
        check_sizes(sizes, specials)
    except ValueError as exc:
        raise CliError(f"--sizes: {exc}") from None
    if Path(args.output).is_dir():
        raise CliError(
            f"{args.output}: --sizes writes one file per size; name a file (e.g. bpe.tiktoken), not a folder"
        )
    fmt = format_for_path(args.output)  # every size in OUT's format, whatever its new name implies
    for size in sizes:
        check_target(sized_path(args.output, size))
    texts = [read_text(f) for f in args.files]
    plan = TrainingPlan(
        [Path(f) for f in args.files],
        sizes,
        args.pattern,
        special_tokens=specials,
        tie_break=args.tie_break,
        name=Path(args.output).stem,
    )
    run = TrainingRun(texts, max(sizes), pattern=args.pattern, special_tokens=specials, tie_break=args.tie_break)
    bar = ProgressBar("training")
    try:
        outcome = TrainingJob(plan, run).run(progress=bar)
    finally:
        bar.close()
    for tok, size in zip(outcome.tokenizers, outcome.sizes, strict=True):
        saved = save_noted(tok, sized_path(args.output, size), fmt)
        wrote(saved.path, f" ({tok.n_vocab} tokens)", saved.notes)
    if outcome.exhausted:
        reached = outcome.sizes[-1] if outcome.sizes else 256 + len(specials)
        print(f"the corpus ran out of pairs: {reached} tokens, fewer than the {max(sizes)} asked for", file=sys.stderr)
    return 0
