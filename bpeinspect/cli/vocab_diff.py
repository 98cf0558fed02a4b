"""``bpeinspect-cli vocab-diff``: two vocabularies compared by their tokens' bytes.

    bpeinspect-cli vocab-diff cl100k_base o200k_base
    bpeinspect-cli vocab-diff cl100k_base o200k_base --json
    bpeinspect-cli vocab-diff A B --list only-b --csv      # the tokens only B holds

Special and added tokens are compared apart, by their text. ``--list`` prints one kind of
token (only in A, only in B, or shared) with its id on each side and its category.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

from bpeinspect.cli.common import add_command, align_table, json_text, safe_lines
from bpeinspect.cli.vocab_options import add_vocab_options, load_spec
from bpeinspect.core import display_bytes
from bpeinspect.core.analysis import VocabDiff, compare_vocabularies, composition_rows, merges_in_common

LISTS = ("only-a", "only-b", "shared")


ABOUT = """compare two vocabularies: tokens shared, only in each, same ids, composition by script

Compare the tokens of two vocabularies by their bytes (special and added tokens apart): how many
both hold, how many only one holds, how many have the same id in both, the longest run of ids from 0
that both agree on, and what each vocabulary's tokens are made of."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``vocab-diff`` subcommand to ``subparsers``."""
    p = add_command(subparsers, "vocab-diff", run, ABOUT)
    p.add_argument("a", metavar="A", help="built-in name or vocabulary file")
    p.add_argument("b", metavar="B", help="built-in name or vocabulary file")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print one JSON object")
    fmt.add_argument("--csv", action="store_true", help="print CSV: the composition table, or the --list tokens")
    p.add_argument("--list", choices=LISTS, help="print these tokens instead of the summary")
    p.add_argument(
        "--merges",
        action="store_true",
        help="also count the merges both hold (seconds for a 200k rank file: its merges are recovered first)",
    )
    add_vocab_options(p)
    return p


def run(args: argparse.Namespace) -> int:
    sides = [
        (spec, load_spec(spec, pattern=args.pattern, special_tokens=args.special_token, remember=False))
        for spec in (args.a, args.b)
    ]
    diff = compare_vocabularies(sides)
    if args.list is not None:
        if args.merges:
            raise ValueError("--merges goes with the summary, not with --list")
        rows = token_rows(diff, args.list)
        if args.json:
            print(json_text(rows, indent=1))
        elif args.csv:
            sys.stdout.write(_csv([_LIST_HEAD, *([r[k] for k in _LIST_HEAD] for r in rows)]))
        else:
            sys.stdout.write(safe_lines(format_list(rows)))
        return 0
    merges = merges_in_common(sides).as_dict() if args.merges else None
    if args.json:
        out = diff.as_dict()
        if merges is not None:
            out["merges"] = merges
        print(json_text(out, indent=1))
    elif args.csv:
        sys.stdout.write(_csv(list(composition_rows(diff))))
    else:
        sys.stdout.write(safe_lines(format_summary(diff, merges)))
    return 0


_LIST_HEAD = ["token", "hex", "id_a", "id_b", "bytes", "category"]


def token_rows(diff: VocabDiff, which: str) -> list[dict]:
    """The tokens of one list, by their id in A (in B for ``only-b``)."""
    if which == "only-a":
        tokens = sorted(diff.only_tokens(0), key=diff.ids_of(0).__getitem__)
    elif which == "only-b":
        tokens = sorted(diff.only_tokens(1), key=diff.ids_of(1).__getitem__)
    else:
        tokens = sorted(diff.shared_tokens(0, 1), key=diff.ids_of(0).__getitem__)
    return [
        dict(
            zip(
                _LIST_HEAD,
                (display_bytes(t), t.hex(), diff.token_id(0, t), diff.token_id(1, t), len(t), diff.category(t)),
            )
        )
        for t in tokens
    ]


def format_list(rows: list[dict]) -> str:
    """One token a line: its ids, length, category, then the token itself (any width).

    >>> print(format_list([{"token": "␣the", "id_a": 279, "id_b": None, "bytes": 4, "category": "Latin"}]), end="")
    id in A  id in B  bytes  category          token
        279               4  Latin             ␣the
    """
    lines = [f"{'id in A':>7}  {'id in B':>7}  {'bytes':>5}  {'category':<16}  token"]
    for r in rows:
        ids = (f"{'' if r[k] is None else r[k]:>7}" for k in ("id_a", "id_b"))
        lines.append(f"{'  '.join(ids)}  {r['bytes']:>5}  {r['category']:<16}  {r['token']}")
    return "\n".join(lines) + "\n"


def _csv(rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for r in rows:
        w.writerow(["" if c is None else c for c in r])
    return buf.getvalue()


def format_summary(diff: VocabDiff, merges: dict | None = None) -> str:
    """The counts, then the composition of both sides, as aligned text."""
    a, b = diff.sides
    d = diff.as_dict()

    def pct(n: int, of: int) -> str:
        return f"{100 * n / of:.1f}%" if of else ""

    body = [
        ["tokens (special and added apart)", str(a.tokens), str(b.tokens)],
        ["special and added tokens", str(len(a.specials)), str(len(b.specials))],
        ["shared", f"{d['shared']} ({pct(d['shared'], a.tokens)})", f"{d['shared']} ({pct(d['shared'], b.tokens)})"],
        ["only here", str(d["only_a"]), str(d["only_b"])],
        ["shared with the same id", str(d["same_id"]), str(d["same_id"])],
        ["ids 0.. that agree", str(d["id_prefix"]), str(d["id_prefix"])],
    ]
    if merges is not None:
        body.append(["merges", str(merges["merges_a"]), str(merges["merges_b"])])
        body.append(["merges shared", str(merges["shared"]), str(merges["shared"])])
        body.append(["merges at the same place", str(merges["same_rank"]), str(merges["same_rank"])])
    out = align_table(["", f"A: {a.name}", f"B: {b.name}"], body, left=1)
    out += "\n" + align_table(*_composition_table(diff), left=1)
    shared = diff.shared_specials(0, 1)
    if shared:
        out += "\nspecial tokens in both: " + ", ".join(shared) + "\n"
    return out


def _composition_table(diff: VocabDiff) -> tuple[list[str], list[list[str]]]:
    rows = list(composition_rows(diff))
    return ["composition", *rows[0][1:]], [list(r) for r in rows[1:]]
