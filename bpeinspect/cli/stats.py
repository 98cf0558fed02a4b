"""``bpeinspect-cli stats``: token counts, compression and premiums for files under tokenizers.

    bpeinspect-cli stats [-t SPEC]... [--baseline FILE] [--json|--csv] [--samples KIND] [-j N] PATHS...
    bpeinspect-cli stats --metrics [-t SPEC]... [--json|--csv] PATHS...   # fertility, Rényi, utilization

A folder expands to the visible files directly inside it; ``-`` reads standard input.
Wired into ``bpeinspect.cli.commands`` with ``cli_stats.register(subparsers)``.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bpeinspect.cli import corpus_stats as cli_corpus
from bpeinspect.cli import dataset_stats as cli_dataset
from bpeinspect.cli.common import add_command, add_processes, align_table, json_text, read_text, safe_lines
from bpeinspect.cli.vocab_options import add_tokenizers, add_vocab_options, load_spec, tokenizer_specs
from bpeinspect.core.analysis import CSV_COLUMNS as MEASURE_COLUMNS
from bpeinspect.core.analysis import (
    Measures,
    Progress,
    Sample,
    StatsTable,
    TextStats,
    code_samples,
    compute_stats,
    count_corpus,
    expand_paths,
    load_samples,
    measure_sample,
    with_premiums,
)

DEFAULT_TOKENIZERS = ("r50k_base", "cl100k_base", "o200k_base")
_PROGRESS_MIN_BYTES = 8 << 20
T = TypeVar("T")


ABOUT = """token counts, bytes/token and premiums of files under one or more tokenizers

Count tokens, bytes and characters of each file under each tokenizer. A folder expands to the files
directly inside it; '-' reads standard input."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``stats`` subcommand to ``subparsers``."""
    p = add_command(subparsers, "stats", run, ABOUT)
    add_tokenizers(p, DEFAULT_TOKENIZERS)
    p.add_argument(
        "--baseline",
        metavar="FILE",
        help="premium = tokens / this file's tokens under the same tokenizer "
        "(with --corpus: a language code; default the English text)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print a JSON list, one object per tokenizer x file")
    fmt.add_argument("--csv", action="store_true", help="print CSV with a header row")
    p.add_argument(
        "--samples",
        choices=("languages", "code"),
        action="append",
        help="also measure the bundled samples: the fable in every language, or the code and data files",
    )
    add_processes(p)
    p.add_argument(
        "--metrics",
        action="store_true",
        help="also the measures papers report: fertility (tokens per whitespace-separated word), Rényi "
        "efficiency (order 2.5, over log vocabulary size) and utilization (distinct ids / vocabulary size)",
    )
    p.add_argument("paths", nargs="*", metavar="PATHS", help="files or folders")
    cli_corpus.add_arguments(p)
    cli_dataset.add_arguments(p)
    add_vocab_options(p)
    return p


def _sources(args: argparse.Namespace) -> list[Sample]:
    samples: list[Sample] = []
    seen: set[str] = set()

    def add(s: Sample) -> None:
        if s.name not in seen:
            seen.add(s.name)
            samples.append(s)

    for kind in args.samples or ():
        for s in load_samples() if kind == "languages" else code_samples():
            assert s.path is not None
            add(Sample(str(s.path), s.path))
    for raw in args.paths:
        if raw == "-":
            add(Sample("-", text=read_text("-")))  # capped, as every input
        else:
            for path in expand_paths([raw]):
                add(Sample(str(path), path))
    if not samples:
        raise ValueError("nothing to measure: give files or folders, '-' for standard input, or --samples")
    return samples


def run(args: argparse.Namespace) -> int:
    """Measure, then print a table, JSON or CSV; returns the exit status."""
    specs = tokenizer_specs(args, DEFAULT_TOKENIZERS)
    if args.metrics and args.jsonl is not None:
        raise ValueError("--metrics measures files, --samples and --corpus, not --jsonl")
    if args.jsonl is not None:
        if args.paths or args.samples or args.corpus is not None:
            raise ValueError("--jsonl counts one dataset file: give no PATHS, --samples or --corpus with it")
        return cli_dataset.run(args, specs, _measure)
    if cli_dataset.uses_dataset_options(args):
        raise ValueError("--field, --template, --generation-prompt and --longest go with --jsonl")
    if args.corpus is not None:
        if args.paths or args.samples:
            raise ValueError("--corpus measures a corpus: give no PATHS or --samples with it")
        if args.metrics:
            return _run_corpus_metrics(args, specs)
        return _run_corpus(args, specs)
    if args.stage or args.script or args.region or args.complete or args.summary:
        raise ValueError("--stage, --script, --region, --complete and --summary go with --corpus")
    samples = _sources(args)
    baseline: Sample | None = None
    if args.baseline is not None:
        path = Path(args.baseline)
        if not path.is_file():
            raise ValueError(f"{path}: the baseline is not a file")
        baseline = next((s for s in samples if s.path is not None and s.path.resolve() == path.resolve()), None)
        baseline = baseline or Sample(str(path), path)
    tokenizers = _load(args, specs)
    if args.metrics:
        return _run_metrics(args, tokenizers, samples, baseline)
    table = _measure(
        lambda progress: compute_stats(
            tokenizers, samples, baseline=baseline, progress=progress, processes=args.processes
        )
    )
    if table is None:
        return 130
    rows = sorted(table.rows, key=lambda r: (table.sources.index(r.source), specs.index(r.tokenizer)))
    if args.json:
        print(json_text([r.as_dict() for r in rows], indent=1))
    elif args.csv:
        sys.stdout.write(StatsTable(rows, table.baseline).to_csv())
    else:
        sys.stdout.write(safe_lines(format_table(rows, baseline=table.baseline)))
    return 0


def _run_metrics(args: argparse.Namespace, tokenizers: list, samples: list[Sample], baseline: Sample | None) -> int:
    todo = samples + ([baseline] if baseline is not None and baseline not in samples else [])
    got = _measure(
        lambda progress: [measure_sample(tok, s, tokenizer=label) for s in todo for label, tok in tokenizers]
    )
    if got is None:
        return 130
    rows = [
        r
        for r in with_premiums(got, baseline.name if baseline is not None else None)
        if r.source in {s.name for s in samples}
    ]
    if args.json:
        print(json_text([r.as_dict() for r in rows], indent=1))
    elif args.csv:
        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=MEASURE_COLUMNS, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.as_dict().items()})
        sys.stdout.write(out.getvalue())
    else:
        sys.stdout.write(safe_lines(format_measures(rows, baseline=baseline.name if baseline is not None else None)))
    return 0


def _run_corpus_metrics(args: argparse.Namespace, specs: list[str]) -> int:
    """``--metrics`` over a corpus: one row per language and tokenizer (the source is its code),
    premiums against English or ``--baseline CODE``."""
    if args.summary:
        raise ValueError("--summary condenses premiums; it does not go with --metrics")
    corpus = cli_corpus.select(args)
    samples = [Sample(t.code, t.sample.path, t.sample.text) for t in corpus.texts]
    baseline = None
    if args.baseline is not None:
        baseline = next((s for s in samples if s.name == args.baseline), None)
        if baseline is None:
            raise ValueError(f"--baseline {args.baseline}: no such language code in the corpus")
    elif corpus.baseline is not None:
        b = corpus.baseline
        baseline = next((s for s in samples if s.name == b.code), None) or Sample(b.code, b.sample.path, b.sample.text)
    return _run_metrics(args, _load(args, specs), samples, baseline)


def format_measures(rows: list[Measures], *, baseline: str | None = None) -> str:
    """The measures as an aligned table, with a note under it where fertility is not defined.

    >>> from bpeinspect.core.analysis.measures import Measures
    >>> print(format_measures([Measures("gpt2", "ja.txt", 30, 90, 30, 1, 20, 50257, 0.25, "Kanji and kana")]), end="")
    source  tokenizer  tokens  bytes/tok  chars/tok  fertility  rényi 2.5  utilization
    ja.txt  gpt2           30       3.00       1.00         —*     0.2500     0.000398
    * fertility is not defined where words are not separated by spaces (ja.txt: Kanji and kana): see chars/tok
    """
    head = ["source", "tokenizer", "tokens", "bytes/tok", "chars/tok", "fertility", "rényi 2.5", "utilization"]
    if baseline is not None:
        head.append("premium")
    body, unspaced = [], {}
    for r in rows:
        fert = "—" if r.fertility is None else f"{r.fertility:.3f}"
        if r.fertility is None and not r.spaced:
            unspaced[r.source] = r.script
            fert += "*"
        cells = [r.source, r.tokenizer, str(r.tokens), f"{r.bytes_per_token:.2f}", f"{r.chars_per_token:.2f}", fert]
        cells += [f"{r.renyi_efficiency:.4f}", f"{r.utilization:.6f}"]
        if baseline is not None:
            cells.append("" if r.premium is None else f"{r.premium:.2f}")
        body.append(cells)
    out = align_table(head, body, left=2)
    if unspaced:
        where = ", ".join(f"{src}: {script}" for src, script in unspaced.items())
        out += f"* fertility is not defined where words are not separated by spaces ({where}): see chars/tok\n"
    if baseline is not None:
        out += f"premium = tokens / tokens of {baseline} under the same tokenizer\n"
    return out


def _load(args: argparse.Namespace, specs: list[str]) -> list:
    return [(s, load_spec(s, pattern=args.pattern, special_tokens=args.special_token, remember=False)) for s in specs]


def _run_corpus(args: argparse.Namespace, specs: list[str]) -> int:
    corpus = cli_corpus.select(args)
    tokenizers = _load(args, specs)
    stats = _measure(lambda progress: count_corpus(tokenizers, corpus, progress=progress, processes=args.processes))
    if stats is None:
        return 130
    return cli_corpus.report(args, stats)


def _measure(count: Callable[[Progress | None], T]) -> T | None:
    """``count(progress)`` with a progress line on a terminal; ``None`` if interrupted (Ctrl+C)."""
    progress = _progress_printer() if sys.stderr.isatty() else None
    try:
        return count(progress)
    except KeyboardInterrupt:
        print("\nbpeinspect-cli: interrupted", file=sys.stderr)
        return None
    finally:
        if progress is not None:
            progress(-1, 0)


def format_table(rows: list[TextStats], *, baseline: str | None = None) -> str:
    """A readable, aligned table of ``rows``; a premium column when there is a baseline.

    >>> print(format_table([TextStats("gpt2", "a.txt", 2, 11, 11)]), end="")
    source  tokenizer  tokens  bytes  chars  bytes/tok  chars/tok
    a.txt   gpt2            2     11     11       5.50       5.50
    """
    head = ["source", "tokenizer", "tokens", "bytes", "chars", "bytes/tok", "chars/tok"]
    if baseline is not None:
        head.append("premium")
    body = []
    for r in rows:
        cells = [r.source, r.tokenizer, str(r.tokens), str(r.bytes), str(r.chars)]
        cells += [f"{r.bytes_per_token:.2f}", f"{r.chars_per_token:.2f}"]
        if baseline is not None:
            cells.append("" if r.premium is None else f"{r.premium:.2f}")
        body.append(cells)
    out = align_table(head, body, left=2)
    if baseline is not None:
        out += f"premium = tokens / tokens of {baseline} under the same tokenizer\n"
    return out


def _progress_printer():
    state = {"last": -1}

    def show(done: int, total: int) -> None:
        if done < 0:
            if state["last"] >= 0:
                print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)
            return
        if total < _PROGRESS_MIN_BYTES:
            return
        pct = done * 100 // total
        if pct != state["last"]:
            state["last"] = pct
            print(f"\rmeasuring… {pct}%", end="", file=sys.stderr, flush=True)

    return show
