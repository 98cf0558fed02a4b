"""``train``: a byte-level BPE tokenizer from text files and folders, saved in the format OUT's name implies.

In a folder, the files ``--include``/``--exclude`` and the folder's ``.gitignore`` files choose are
read (see :class:`~bpeinspect.core.train.FileFilter`); what was left out is said on stderr.

With ``--sizes``, one run trains to the largest size and the smaller ones are its first merges
(as the training window does): each is written beside OUT, its size before the extension.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bpeinspect.cli.common import (
    SAVE_NAMES,
    CliError,
    ProgressBar,
    add_command,
    add_file_filter,
    file_filter_of,
    pattern_arg,
    read_text,
    wrote,
)
from bpeinspect.core.io import check_target, format_for_path, save_noted
from bpeinspect.core.train import (
    CorpusScan,
    TrainingJob,
    TrainingPlan,
    TrainingRun,
    check_sizes,
    iter_corpus,
    parse_sizes,
    scan_corpus,
    size_label,
    skipped_counts,
    skipped_note,
    train_tokenizer,
)

ABOUT = f"""train a tokenizer on text files and folders

Train a byte-level BPE tokenizer; the output format follows OUT's name: {SAVE_NAMES}."""


def add_train(sub: Any) -> None:
    p = add_command(sub, "train", cmd_train, ABOUT)
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILES",
        help="UTF-8 text files, or folders (searched recursively for the files --include names), or - for stdin",
    )
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
    add_file_filter(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")


class Corpus:
    """The texts of the command's FILES: a file (or ``-``) read whole, a folder's files one by one
    as its filter keeps them; ``skipped`` fills with what was left out, and why."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.skipped: list[tuple[Path, str]] = []
        self.file_filter = wanted = file_filter_of(args)
        self.scans: dict[str, CorpusScan] = {}
        for f in args.files:
            if f != "-" and Path(f).is_dir():
                scan = scan_corpus(f, wanted)
                if not scan.files:
                    counts = ", ".join(f"{n:,} {kind}" for kind, n in skipped_counts(scan.skipped).items())
                    raise CliError(f"{f}: no files to train on in this folder" + (f" ({counts})" if counts else ""))
                self.scans[f] = scan

    def texts(self) -> Iterator[str]:
        for f in self.args.files:
            scan = self.scans.get(f)
            if scan is None:
                yield read_text(f)
            else:
                yield from iter_corpus(f, self.args.pattern, skipped=self.skipped, scan=scan)

    def report(self) -> None:
        """The files left out, as one line on stderr (none: nothing)."""
        if self.skipped:
            print(skipped_note(self.skipped), file=sys.stderr)


def cmd_train(args: argparse.Namespace) -> int:
    if args.sizes is not None:
        return _train_sizes(args)
    if args.vocab_size < 256:
        raise CliError(f"--vocab-size must be at least 256 (the single bytes), not {args.vocab_size}")
    format_for_path(args.output)  # refuse an unusable OUT before the long part
    check_target(args.output)
    corpus = Corpus(args)
    bar = ProgressBar("training")
    try:
        tok = train_tokenizer(
            corpus.texts(),
            args.vocab_size,
            pattern=args.pattern,
            special_tokens=list(args.special_token),
            tie_break=args.tie_break,
            progress=bar,
            should_stop=None,
        )
    finally:
        bar.close()
    if tok.training is not None:  # what the training window records too, to repeat the run
        tok.training.settings.update(corpus=list(args.files), file_filter=corpus.file_filter.settings())
    saved = save_noted(tok, args.output)
    wrote(saved.path, f" ({tok.n_vocab} tokens)", saved.notes)
    corpus.report()
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
        sizes = parse_sizes(args.sizes, thousands=False)
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
    corpus = Corpus(args)
    plan = TrainingPlan(
        [Path(f) for f in args.files],
        sizes,
        args.pattern,
        special_tokens=specials,
        tie_break=args.tie_break,
        name=Path(args.output).stem,
        file_filter=corpus.file_filter,
    )
    run = TrainingRun(
        corpus.texts(), max(sizes), pattern=args.pattern, special_tokens=specials, tie_break=args.tie_break
    )
    bar = ProgressBar("training")
    try:
        outcome = TrainingJob(plan, run).run(progress=bar)
    finally:
        bar.close()
    for tok, size in zip(outcome.tokenizers, outcome.sizes, strict=True):
        saved = save_noted(tok, sized_path(args.output, size), fmt)
        wrote(saved.path, f" ({tok.n_vocab} tokens)", saved.notes)
    corpus.report()
    if outcome.exhausted:
        reached = outcome.sizes[-1] if outcome.sizes else 256 + len(specials)
        print(f"the corpus ran out of pairs: {reached} tokens, fewer than the {max(sizes)} asked for", file=sys.stderr)
    return 0
