"""``bpeinspect-cli stats --corpus``: a parallel corpus under tokenizers, with premiums against English.

    bpeinspect-cli stats --corpus udhr --json            # every complete UDHR translation
    bpeinspect-cli stats --corpus udhr --script Arabic --region Africa --csv
    bpeinspect-cli stats --corpus fable --summary        # how fair is each tokenizer
    bpeinspect-cli stats --corpus ~/texts --baseline de  # a folder, one file per language

``source`` in JSON and CSV rows is a file that holds exactly the text counted: the UDHR's
texts are extracted to the user's cache folder the first time.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

from bpeinspect.cli.common import align_table, display_width, json_text, safe_lines
from bpeinspect.core.analysis import REGIONS, Corpus, CorpusStats, FairnessSummary, load_corpus, udhr_corpus


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The corpus options of ``stats``."""
    g = p.add_argument_group("corpora (instead of PATHS)")
    g.add_argument(
        "--corpus",
        metavar="NAME",
        help="measure a parallel corpus: 'udhr' (the Universal Declaration of Human Rights, 527 complete "
        "translations), 'fable' (the bundled fable, 27 languages), 'code' (the bundled code and data samples) "
        "or a folder with one file per language (its path, or folder:PATH)",
    )
    g.add_argument("--stage", metavar="N[,N]", help="UDHR: keep these encoding stages, or 'all' (default: 4, complete)")
    g.add_argument("--script", action="append", metavar="NAME", help="keep texts in this script (repeatable)")
    g.add_argument("--region", action="append", choices=REGIONS, help="keep languages of this region (repeatable)")
    g.add_argument(
        "--complete", action="store_true", help="UDHR: keep only texts with the preamble and all 30 articles"
    )
    g.add_argument(
        "--summary",
        action="store_true",
        help="print how fair each tokenizer is: median, 90th percentile and max premium, "
        "the share above 2x and 4x, the most and least costly languages",
    )


def select(args: argparse.Namespace) -> Corpus:
    """The corpus the options name, filtered."""
    if args.stage is not None and args.corpus != "udhr":
        raise ValueError("--stage applies to --corpus udhr only")
    if args.corpus == "udhr":
        stages = None if args.stage == "all" else _stages(args.stage)
        corpus = udhr_corpus(stages=stages, complete=args.complete)
    else:
        corpus = load_corpus(args.corpus)
        if args.complete:
            corpus = corpus.filter(complete=True)
    if args.script:
        unknown = sorted(set(args.script) - set(corpus.scripts))
        if unknown:
            raise ValueError(f"no text in script {', '.join(unknown)}; there are: {', '.join(corpus.scripts)}")
        corpus = corpus.filter(scripts=set(args.script))
    if args.region:
        corpus = corpus.filter(regions=set(args.region))
    if not len(corpus):
        raise ValueError("no text passes the filters")
    return corpus


def _stages(raw: str | None) -> set[int]:
    if raw is None:
        return {4}
    try:
        return {int(part) for part in raw.split(",")}
    except ValueError:
        raise ValueError(f"--stage: not a stage list: {raw!r} (e.g. 4 or 1,3,4 or all)") from None


def report(args: argparse.Namespace, stats: CorpusStats) -> int:
    """Print the counts as rows (table, JSON, CSV) or the fairness summary."""
    corpus = stats.corpus
    if args.baseline is not None:
        try:
            stats = stats.with_baseline(args.baseline)
        except KeyError:
            raise ValueError(f"--baseline {args.baseline}: no such language code in the corpus") from None
    if stats.baseline is None:
        print("bpeinspect-cli: no English text (en.txt or eng.txt) and no --baseline: no premiums", file=sys.stderr)
    if args.summary:
        summaries = stats.summaries()
        if args.json:
            print(json_text([s.as_dict() for s in summaries], indent=1))
        else:
            sys.stdout.write(safe_lines(format_summary(stats, summaries, csv_out=args.csv)))
        return 0
    if args.json or args.csv:
        sources = {code: str(corpus.source_path(code)) for code in corpus.codes}
        if args.json:
            print(json_text(stats.records(sources=sources), indent=1))
        else:
            sys.stdout.write(stats.to_csv(sources=sources))
        return 0
    sys.stdout.write(safe_lines(format_rows(stats)))
    return 0


def format_rows(stats: CorpusStats) -> str:
    """An aligned table, one line per language and tokenizer."""
    head = ["code", "language", "script", "tokenizer", "tokens", "bytes", "chars", "premium"]
    body = []
    for t, s in stats.rows():
        name = t.language.name if len(t.language.name) <= 28 else t.language.name[:27] + "…"
        premium = "" if s.premium is None else f"{s.premium:.2f}"
        body.append([t.code, name, t.language.script, s.tokenizer, str(s.tokens), str(s.bytes), str(s.chars), premium])
    out = align_table(head, body, left=4)
    if stats.baseline is not None:
        out += f"premium = tokens / tokens of {_label(stats, stats.baseline)} under the same tokenizer\n"
    return out


def format_summary(stats: CorpusStats, summaries: list[FairnessSummary], *, csv_out: bool = False) -> str:
    """The fairness table: one line per tokenizer, then the most and least costly languages.

    With ``csv_out``: one CSV row per tokenizer, the languages as ``code:premium`` lists.
    """
    if csv_out:  # the csv module quotes a tokenizer name or path that holds a comma or a quote
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            ["tokenizer", "languages", "median", "p90", "max", "over_2", "over_4", "most_costly", "least_costly"]
        )
        for s in summaries:
            most = " ".join(f"{c}:{p:.4f}" for c, p in s.most_costly)
            least = " ".join(f"{c}:{p:.4f}" for c, p in s.least_costly)
            nums = [f"{x:.4f}" for x in (s.median, s.p90, s.max, s.over_2, s.over_4)]
            writer.writerow([s.tokenizer, s.languages, *nums, most, least])
        return out.getvalue()
    if not summaries:
        return "no premiums to summarize (no baseline, or no language besides it)\n"
    head = ["tokenizer", "languages", "median", "p90", "max", ">2x", ">4x"]
    body = [
        [s.tokenizer, str(s.languages), f"{s.median:.2f}", f"{s.p90:.2f}", f"{s.max:.2f}"]
        + [f"{s.over_2:.0%}", f"{s.over_4:.0%}"]
        for s in summaries
    ]
    assert stats.baseline is not None
    text = f"premium = tokens / tokens of {_label(stats, stats.baseline)}, over {stats.corpus.title}\n"
    text += align_table(head, body, left=1)
    width = max(display_width(s.tokenizer) for s in summaries)
    for title, key in (("most costly", "most_costly"), ("least costly", "least_costly")):
        text += f"\n{title}:\n"
        for s in summaries:
            items = ", ".join(f"{_label(stats, c)} {p:.2f}" for c, p in getattr(s, key))
            pad = " " * (width - display_width(s.tokenizer))
            text += f"  {s.tokenizer}{pad}  {items}\n"
    return text


def _label(stats: CorpusStats, code: str) -> str:
    return stats.corpus.language(code).label
