"""``bpeinspect-cli count``: the pre-token count table of a corpus, for training elsewhere.

    bpeinspect-cli count [--pattern NAME|REGEX] [--tie-break first-seen|hf] [-j N | --dask [SCHEDULER]] -o OUT FILES...

Writes the table ``TrainingRun.from_counts(read_counts_tsv(OUT), ...)`` trains on (see
``bpeinspect.core.train.counts`` for the format). Locally the counting runs on every core;
with ``--dask`` it runs on a Dask cluster (a scheduler address) or Dask's local processes.
"""

from __future__ import annotations

import argparse
import sys

from bpeinspect.cli.common import (
    CliError,
    add_command,
    add_file_filter,
    add_processes,
    file_filter_of,
    pattern_arg,
    wrote,
)
from bpeinspect.core.io import check_target
from bpeinspect.core.train import count_pretokens, iter_corpus, scan_corpus, skipped_note, write_counts_tsv

ABOUT = """count the pre-tokens of text files into a table to train on

Count each distinct pre-token of the UTF-8 text files (folders: the files --include names) and write the
count<TAB>pre-token table that TrainingRun.from_counts trains on."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``count`` subcommand to ``subparsers``."""
    p = add_command(subparsers, "count", run, ABOUT)
    p.add_argument("files", nargs="+", metavar="FILES", help="UTF-8 text files or folders")
    p.add_argument(
        "--pattern",
        type=pattern_arg,
        default="gpt4",
        metavar="NAME|REGEX",
        help="split rule to train with: a preset name or a regex (default: gpt4)",
    )
    p.add_argument(
        "--tie-break",
        choices=("first-seen", "hf"),
        default="first-seen",
        help="the trainer the table is for: minbpe's regex.findall keeps only the matches, "
        "Hugging Face's split also the text between them",
    )
    where = p.add_mutually_exclusive_group()
    add_processes(where, "local processes (default: one per CPU)")
    where.add_argument(
        "--dask",
        nargs="?",
        const="",
        metavar="SCHEDULER",
        help="count on Dask: a scheduler address (tcp://host:8786) or a local scheduler "
        "(processes, threads, synchronous); without one, $DASK_SCHEDULER_ADDRESS or local processes",
    )
    add_file_filter(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the table (TSV)")
    return p


def run(args: argparse.Namespace) -> int:
    check_target(args.output)  # refuse an OUT in a missing folder before the counting
    scan = scan_corpus(args.files, file_filter_of(args))
    files = scan.files
    if args.dask is not None:
        from bpeinspect.core.train import count_with_dask

        table = count_with_dask(files, args.pattern, tie_break=args.tie_break, scheduler=args.dask or None)
        where = f"on Dask ({args.dask or 'default scheduler'})"
    else:
        table = count_pretokens(
            iter_corpus(files, args.pattern), args.pattern, tie_break=args.tie_break, processes=args.processes
        )
        where = "here"
    comment = f"pattern={args.pattern!r} tie_break={args.tie_break} files={len(files)}"
    try:
        write_counts_tsv(table, args.output, comment=comment)
    except OSError as exc:  # its temporary's name would say nothing useful
        raise CliError(f"{args.output}: cannot write it: {exc.strerror or exc}") from None
    wrote(args.output, f": {len(table):,} distinct pre-tokens, {sum(table.values()):,} in all, counted {where}")
    if scan.skipped:
        print(skipped_note(scan.skipped), file=sys.stderr)
    return 0
