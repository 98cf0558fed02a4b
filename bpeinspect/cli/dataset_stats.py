"""``bpeinspect-cli stats --jsonl``: the tokens of a dataset file (JSON Lines or JSON records).

    bpeinspect-cli stats --jsonl train.jsonl                      # the default tokenizers
    bpeinspect-cli stats --jsonl train.jsonl -t o200k_base -t qwen3/tokenizer.json --json
    bpeinspect-cli stats --jsonl data.json --field title --field body --csv

Chat records are rendered by each tokenizer's chat template (no generation prompt: the whole
conversation, as a model is trained on it) and their tokens split per role and the template's
own; other records count the text of their fields (recognised, or ``--field``).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path
from typing import Any

from bpeinspect.cli.common import CliError, align_table, json_text, safe_lines, whole_number
from bpeinspect.core import display_label
from bpeinspect.core.dataset import TEMPLATE_PART, DatasetStats, ShapeUnclear, Target, count_dataset, fields_shape

_LONGEST_SHOWN = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The dataset options of ``stats``."""
    g = p.add_argument_group("datasets (instead of PATHS)")
    g.add_argument(
        "--jsonl",
        metavar="FILE",
        help="count a dataset of records: JSON Lines or a JSON list; chat messages (OpenAI, ShareGPT), "
        "prompt/completion, prompt/response or text",
    )
    g.add_argument(
        "--field",
        action="append",
        metavar="NAME",
        help="count these text fields of each record (repeatable) instead of the shape recognised",
    )
    g.add_argument(
        "--template",
        metavar="FILE|NAME",
        help="chat template for every tokenizer: a file, a known name, or 'none' (default: each one's own)",
    )
    g.add_argument(
        "--generation-prompt",
        action="store_true",
        help="end each conversation with the header of an assistant reply (as at inference)",
    )
    g.add_argument(
        "--longest",
        type=whole_number,
        default=_LONGEST_SHOWN,
        metavar="N",
        help=f"list the N records with the most tokens (default {_LONGEST_SHOWN})",
    )


def uses_dataset_options(args: argparse.Namespace) -> bool:
    return bool(args.field or args.template or args.generation_prompt or args.longest != _LONGEST_SHOWN)


def run(args: argparse.Namespace, specs: list[str], measure: Any) -> int:
    """Count ``args.jsonl`` under ``specs``; ``measure(count)`` runs ``count(progress)`` with a progress line."""
    from bpeinspect.cli.chat import choose_template
    from bpeinspect.cli.vocab_options import load_spec

    path = Path(args.jsonl)
    if not path.is_file():
        raise CliError(f"{path}: " + ("not a regular file" if path.exists() else "no such file"))
    plain = args.pattern is None and args.special_token is None  # then a pool's processes can open the specs too
    targets = []
    for spec in specs:
        tok = load_spec(spec, pattern=args.pattern, special_tokens=args.special_token, remember=False)
        if args.template:
            targets.append(Target(spec, tok, choose_template(tok, spec, args.template), spec if plain else None))
        else:
            targets.append(Target(spec, tok, spec=spec if plain else None))
    shape = fields_shape(*args.field) if args.field else None

    def count(progress: Any) -> DatasetStats:
        return count_dataset(
            path,
            targets,
            shape=shape,
            add_generation_prompt=args.generation_prompt,
            longest=max(0, args.longest),
            progress=progress,
            processes=args.processes,
        )

    try:
        stats = measure(count)
    except ShapeUnclear as exc:
        raise CliError(f"{exc}; e.g. --field {exc.fields[0] if exc.fields else 'text'}") from None
    if stats is None:
        return 130
    if args.field and stats.records == 0 and stats.skipped:
        fields = ", ".join(args.field)
        which = f"the field {fields}" if len(args.field) == 1 else f"any of the fields {fields}"
        raise CliError(f"{path}: none of its {stats.skipped:,} records has {which} as text")
    if args.json:
        print(json_text(stats.as_dict(), indent=1))
    elif args.csv:
        sys.stdout.write(to_csv(stats))
    else:
        sys.stdout.write(safe_lines(format_dataset(stats, max(0, args.longest))))
    for line in stats.problems[:5]:
        print(display_label(f"bpeinspect-cli: skipped {line}"), file=sys.stderr)  # lines of the file
    if stats.truncated:
        print(f"bpeinspect-cli: warning: {stats.truncated}; the records before it are counted", file=sys.stderr)
    return 0


def _columns(stats: DatasetStats) -> list[str]:
    return stats.part_names


def to_csv(stats: DatasetStats) -> str:
    """One row per tokenizer: records, tokens, tokens per part, per-record summary.

    >>> from bpeinspect.core.dataset import CHAT, TokenizerTotals
    >>> t = TokenizerTotals("gpt2", "", tokens=7, parts={"user": 3, "assistant": 2}, overhead=2)
    >>> print(to_csv(DatasetStats("d.jsonl", CHAT, [t], records=1)), end="")
    tokenizer,template,records,tokens,user,assistant,template_tokens,refused_by_template,mean,median,p90,max
    gpt2,,1,7,3,2,2,0,0.0,0.0,0.0,0
    """
    parts = [p for p in _columns(stats) if p != TEMPLATE_PART]
    chat = stats.shape.kind == "chat"
    head = ["tokenizer", "template", "records", "tokens", *parts]
    head += ["template_tokens", "refused_by_template"] if chat else []
    head += ["mean", "median", "p90", "max"]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(head)
    for t in stats.tokenizers:
        s = t.summary()
        row = [t.label, t.template, stats.records, t.tokens, *(t.parts.get(p, 0) for p in parts)]
        row += [t.overhead, t.refused] if chat else []
        row += [round(s["mean"], 2), s["median"], s["p90"], s["max"]]
        w.writerow(row)
    return out.getvalue()


def format_dataset(stats: DatasetStats, longest: int) -> str:
    """A readable report: what was read, a table per tokenizer, the longest records."""
    lines = [
        f"{stats.path}: {stats.records:,} records of {stats.shape.label}"
        + (f", {stats.skipped:,} skipped" if stats.skipped else "")
        + (" (stopped early)" if stats.stopped else "")
    ]
    parts = _columns(stats)
    head = ["tokenizer", "chat template", "tokens", *parts, "mean", "median", "p90", "max"]
    body = []
    for t in stats.tokenizers:
        s = t.summary()
        cells = [t.label, t.template or "-", f"{t.tokens:,}"]
        cells += [f"{t.overhead:,}" if p == TEMPLATE_PART else f"{t.parts.get(p, 0):,}" for p in parts]
        cells += [f"{s['mean']:,.1f}", f"{s['median']:,.0f}", f"{s['p90']:,.0f}", f"{s['max']:,}"]
        body.append(cells)
    out = "\n".join(lines) + "\n" + align_table(head, body, left=2)
    refused = [f"{t.label}: {t.refused:,}" for t in stats.tokenizers if t.refused]
    if refused:
        out += (
            "records the chat template refused (counted without it, messages joined by newlines): "
            + ", ".join(refused)
            + "\n"
        )
    if longest and stats.longest:
        out += f"\nlongest records (by {stats.tokenizers[0].label}):\n"
        rows = [[str(r.index + 1), r.preview(60), *(f"{n:,}" for n in r.tokens)] for r in stats.longest[:longest]]
        out += align_table(["record", "beginning", *(t.label for t in stats.tokenizers)], rows, left=2)
    return out
