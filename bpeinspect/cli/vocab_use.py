"""``bpeinspect-cli vocab-use``: what a vocabulary spends on a corpus.

    bpeinspect-cli vocab-use -t o200k_base --corpus udhr --unreachable
    bpeinspect-cli vocab-use -t cl100k_base -t o200k_base notes/ --json
    bpeinspect-cli vocab-use -t gpt2 --corpus fable --csv --rank-frequency   # rank,count for a log-log plot

The ids are counted on every core. The report says how many of the vocabulary's tokens the
corpus uses, and the unused ones by script or kind, with the unreachable among them (tokens the
encoder never produces) when ``--unreachable`` looks for them.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

from bpeinspect.cli.common import add_command, add_processes, align_table, json_text, read_text, safe_lines
from bpeinspect.cli.vocab_options import add_tokenizers, add_vocab_options, load_spec, tokenizer_specs
from bpeinspect.core.analysis import VocabularyUse, count_ids, expand_paths, load_corpus, vocabulary_use
from bpeinspect.core.analysis import read_text as read_file

TOP = 15  # categories listed per tokenizer in the table


ABOUT = """how much of a vocabulary a corpus uses, and the unused tokens by script

Count every token of a corpus under each tokenizer (on every core): the share of the vocabulary
never used, the unused tokens by script or kind, and the token counts by rank."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``vocab-use`` subcommand to ``subparsers``."""
    p = add_command(subparsers, "vocab-use", run, ABOUT)
    add_tokenizers(p)
    p.add_argument("paths", nargs="*", metavar="PATHS", help="files or folders ('-': standard input)")
    p.add_argument("--corpus", metavar="NAME", help="'udhr', 'udhr-all', 'fable' or a folder, instead of PATHS")
    p.add_argument(
        "--unreachable",
        action="store_true",
        help="also find the tokens the encoder never produces (seconds for a 200k vocabulary)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print a JSON list, one object per tokenizer")
    fmt.add_argument("--csv", action="store_true", help="print CSV: unused tokens per category and tokenizer")
    p.add_argument(
        "--rank-frequency",
        action="store_true",
        help="JSON: add every used token's count, most frequent first; CSV: print tokenizer,rank,count",
    )
    add_processes(p)
    add_vocab_options(p)
    return p


def _texts(args: argparse.Namespace) -> list[str]:
    if args.corpus is not None:
        if args.paths:
            raise ValueError("--corpus counts a corpus: give no PATHS with it")
        return [t.sample.read() for t in load_corpus(args.corpus)]
    if not args.paths:
        raise ValueError("nothing to count: give files or folders, '-' for standard input, or --corpus")
    texts = []
    for raw in args.paths:
        if raw == "-":
            texts.append(read_text("-"))
        else:
            texts.extend(read_file(path) for path in expand_paths([raw]))
    return texts


def run(args: argparse.Namespace) -> int:
    texts = _texts(args)
    specs = tokenizer_specs(args)
    toks = [load_spec(s, pattern=args.pattern, special_tokens=args.special_token, remember=False) for s in specs]
    counts = count_ids(toks, texts, processes=args.processes)
    uses = [
        vocabulary_use(tok, texts, name=spec, unreachable=args.unreachable, counts=c)
        for spec, tok, c in zip(specs, toks, counts)
    ]
    if args.json:
        print(json_text([u.as_dict(rank_frequency=args.rank_frequency) for u in uses], indent=1))
    elif args.csv:
        sys.stdout.write(to_csv(uses, rank_frequency=args.rank_frequency))
    else:
        sys.stdout.write(safe_lines(format_use(uses)))
    return 0


def to_csv(uses: list[VocabularyUse], *, rank_frequency: bool = False) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if rank_frequency:
        w.writerow(["tokenizer", "rank", "count"])
        for u in uses:
            w.writerows([u.tokenizer, r, int(c)] for r, c in enumerate(u.rank_frequency().tolist(), 1))
        return buf.getvalue()
    w.writerow(["tokenizer", "category", "unused", "unreachable"])
    for u in uses:
        for c, n, dead in u.unused_by_category():
            w.writerow([u.tokenizer, c, n, "" if u.unreachable is None else dead])
    return buf.getvalue()


def format_use(uses: list[VocabularyUse]) -> str:
    """A line per tokenizer, then each one's unused tokens by category."""
    head = ["tokenizer", "tokens", "vocabulary", "used", "never used", "share", "unreachable"]
    body = [
        [
            u.tokenizer,
            f"{u.tokens:,}",
            f"{u.vocab:,}",
            f"{u.used:,}",
            f"{len(u.unused):,}",
            f"{100 * u.share_unused:.1f}%",
            "" if u.unreachable is None else f"{len(u.unreachable):,}",
        ]
        for u in uses
    ]
    out = align_table(head, body, left=1)
    for u in uses:
        rows = u.unused_by_category()
        cats = [[c, f"{n:,}", "" if u.unreachable is None else f"{dead:,}"] for c, n, dead in rows[:TOP]]
        if len(rows) > TOP:
            cats.append([f"{len(rows) - TOP} more", f"{sum(n for _, n, _ in rows[TOP:]):,}", ""])
        out += f"\nnever used under {u.tokenizer}, by script or kind:\n"
        out += align_table(["category", "unused", "of them unreachable"], cats, left=1)
    return out
