"""``list``, ``tree`` and ``info``: which tokenizers there are, and what one holds."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bpeinspect.cli.common import CliError, add_command, json_text
from bpeinspect.cli.vocab_options import add_tokenizer, add_vocab_options, load_spec, load_spec_resolved
from bpeinspect.core import Tokenizer, display_bytes, display_label, display_text, parse_display
from bpeinspect.core.analysis import length_buckets
from bpeinspect.core.io import FORMATS, detect_format, hub

ABOUT_LIST = """list the tokenizers bpeinspect can find

List built-in tokenizers, those in tiktoken's and Hugging Face's caches, and recently opened files."""


def add_list(sub: Any) -> None:
    p = add_command(sub, "list", cmd_list, ABOUT_LIST)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--no-caches", action="store_true", help="skip scanning the tiktoken and Hugging Face caches")
    p.add_argument(
        "--hub",
        action="store_true",
        help="list the catalog of popular models on the Hugging Face Hub "
        "instead (open one with hf:REPOSITORY; a * marks those in the cache)",
    )


def _list_hub(as_json: bool) -> int:
    from dataclasses import asdict

    from bpeinspect.core.io import hub_models

    models = hub_models()
    cached = [hub.is_cached(m.repo) for m in models]
    if as_json:
        print(json_text([{**asdict(m), "spec": m.spec, "cached": c} for m, c in zip(models, cached)], indent=1))
        return 0
    header = ("SPEC", "FAMILY", "GATE", "LICENCE")
    rows = [(("* " if c else "  ") + m.spec, m.family, m.gate, m.licence) for m, c in zip(models, cached)]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    for r in [("  " + header[0], *header[1:]), *rows]:
        print(f"{r[0]:<{widths[0] + 2}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from bpeinspect.core.io import discover_vocabularies

    if args.hub:
        return _list_hub(args.json)
    entries = discover_vocabularies(include_caches=not args.no_caches)
    if args.json:
        print(json_text([asdict(e) for e in entries], indent=1))
        return 0
    rows = [
        tuple(map(display_label, (e.name, e.source, "?" if e.vocab_size is None else str(e.vocab_size), e.spec)))
        for e in entries
    ]
    widths = [max(len(r[i]) for r in [("NAME", "SOURCE", "VOCAB", "SPEC"), *rows]) for i in range(3)]
    for r in [("NAME", "SOURCE", "VOCAB", "SPEC"), *rows]:
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}")
    return 0


ABOUT_TREE = """draw the merge tree of a token

Draw how a token is built from bytes by merges. TOKEN is an id or the token's text (plain, or as
printed: ␣ for a space); a text that is not one token gets the tree of each token it encodes to."""


def add_tree(sub: Any) -> None:
    p = add_command(sub, "tree", cmd_tree, ABOUT_TREE)
    add_tokenizer(p)
    p.add_argument("token", metavar="TOKEN", help="token id, or a text (e.g. ' hello' or ' tokenization')")
    add_vocab_options(p)


def resolve_token(tok: Tokenizer, token: str) -> int | None:
    """The id ``token`` names (an id, or one token's text, plain or as printed), or None."""
    if token.lstrip("-").isdigit():
        n = int(token)
        tok.token_bytes(n)  # raises UnknownTokenError
        return n
    i = tok.token_id(token)
    if i is None:  # written in the notation the CLI prints, e.g. "␣hello"
        i = tok.token_id(parse_display(token))
    return i


def resolve_tokens(tok: Tokenizer, token: str) -> list[int]:
    """The ids to draw: the one token ``token`` names, else the tokens the text encodes to."""
    i = resolve_token(tok, token)
    if i is not None:
        return [i]
    ids = tok.encode(token, allowed_special="all")
    if not ids:
        raise CliError(f"{token!r} is not a token of {tok.name or 'this tokenizer'} and encodes to no tokens")
    return ids


def tree_lines(node: Any, max_depth: int = 200, tok: Tokenizer | None = None) -> list[str]:
    """The merge tree drawn with box characters, one node per line; levels below ``max_depth``
    are summed up in one line (a chain of thousands of merges would draw megabytes). With
    ``tok``, each token is shown with its word marks."""

    def label(n: Any) -> str:
        rank = "" if n.rank is None else f"  (rank {n.rank})"
        mark = "" if n.buildable else "  [no merge makes it]"
        if getattr(n, "repeats", False):
            mark += "  [made from itself: shown above]"
        shown = display_bytes(n.token)
        return f"{n.id} {tok.shown_with_marks(n.id, shown) if tok is not None else shown}{rank}{mark}"

    lines = [label(node)]
    # entries: a line to print, or a node whose children to draw (with their prefix and depth)
    stack: list[Any] = [(node, "", 0)]
    while stack:
        entry = stack.pop()
        if isinstance(entry, str):
            lines.append(entry)
            continue
        n, prefix, depth = entry
        kids = [k for k in (n.left, n.right) if k is not None]
        if kids and depth >= max_depth:
            lines.append(f"{prefix}└── … {n.depth()} more levels not drawn")
            continue
        for j in reversed(range(len(kids))):
            last = j == len(kids) - 1
            stack.append((kids[j], prefix + ("    " if last else "│   "), depth + 1))
            stack.append(prefix + ("└── " if last else "├── ") + label(kids[j]))
    return lines


def cmd_tree(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer, pattern=args.pattern, special_tokens=args.special_token)
    ids = resolve_tokens(tok, args.token)
    if len(ids) > 1:
        shown = " ".join(tok.shown_with_marks(i, display_bytes(tok.token_bytes(i))) for i in ids)
        print(f"{display_text(args.token)} is {len(ids)} tokens under {tok.name or 'this tokenizer'}: {shown}")
    for i in ids:
        if len(ids) > 1:
            print()
        print("\n".join(tree_lines(tok.merge_graph.tree(i), tok=tok)))
    return 0


ABOUT_INFO = """describe a tokenizer

Vocabulary size, special tokens, split rule, source and a histogram of token lengths in bytes."""


def add_info(sub: Any) -> None:
    p = add_command(sub, "info", cmd_info, ABOUT_INFO)
    p.add_argument("spec", metavar="SPEC", help="built-in name, vocabulary file or hf:OWNER/NAME[@REVISION]")
    add_vocab_options(p)


def length_histogram(tok: Tokenizer) -> dict[int, int]:
    hist: dict[int, int] = {}
    for i in tok.ranks.values():  # a token's own bytes (a word mark is not part of them)
        n = len(tok.token_bytes(i))
        hist[n] = hist.get(n, 0) + 1
    return dict(sorted(hist.items()))


def _say(line: str) -> None:
    """Print one line of a description: what came from a file (a name, a pattern) may hold
    terminal escapes, so control and invisible characters are shown in the one notation."""
    print(display_label(line))


def bucketed(hist: dict[int, int]) -> list[tuple[str, int]]:
    """``hist`` in the core's length buckets, as (label, count), leaving out empty ones at the end.

    >>> bucketed({1: 256, 3: 10, 10: 3, 11: 1})
    [('1', 256), ('2', 0), ('3', 10), ('4', 0), ('5', 0), ('6', 0), ('7', 0), ('8', 0), ('9-12', 4)]
    """
    labels, rows = length_buckets([hist])
    return [(label, row[0]) for label, row in zip(labels, rows)]


def _print_tokens(table: dict[str, int], limit: int = 30) -> None:
    listed = sorted(table.items(), key=lambda x: x[1])
    for s, i in listed[:limit]:
        _say(f"  {i:>8}  {display_text(s)}")
    if len(listed) > limit:
        _say(f"  ... and {len(listed) - limit} more")


def cmd_info(args: argparse.Namespace) -> int:
    tok, hub_files = load_spec_resolved(args.spec, pattern=args.pattern, special_tokens=args.special_token, warn=False)
    _say(f"name:           {tok.name}")
    _say(f"source:         {tok.source}")
    if hub_files is not None:
        _say(f"repository:     {hub_files.repo} (revision {hub_files.revision})")
        _say(f"commit:         {hub_files.commit}")
        _say(f"files taken:    {', '.join(hub_files.files)}")
    if Path(args.spec).is_file() or Path(args.spec).is_dir():  # not a pipe: it was read already
        fmt = FORMATS[detect_format(args.spec)]
        _say(f"file format:    {fmt.description}")
        _say(f"the file keeps: {fmt.keeps}")
    for key, why in tok.inferred.items():
        _say(f"inferred:       {key.replace('_', ' ')}: {why}")
    for key, why in tok.assumed.items():
        _say(f"ASSUMED:        {key.replace('_', ' ')}: {why}")
    _say(
        f"vocab size:     {tok.n_vocab} ids ({len(tok)} tokens, {len(tok.special_tokens)} special, "
        f"{len(tok.added_tokens)} added)"
    )
    _say(f"merging:        {tok.describe_model()}{', ignore_merges' if tok.ignore_merges else ''}")
    _say(f"normalizer:     {tok.normalizer.describe() if tok.normalizer is not None else 'none'}")
    if tok.training is not None:
        _say(f"training:       {json.dumps(tok.training.settings, default=str)}")
    _say("special tokens:" + ("" if tok.special_tokens else " none"))
    _print_tokens(tok.special_tokens)
    if tok.added_tokens:
        _say("added tokens (not special, matched before BPE in any encoding):")
        _print_tokens(tok.added_tokens)
    missing = " ".join(f"{b:02x}" for b in tok.missing_bytes)
    _say(f"missing bytes:  {missing + ' (dropped from text, as Hugging Face and llama.cpp do)' if missing else 'none'}")
    _say(f"split rule:     {tok.split_rule.name or '(custom)'}")
    for line in tok.split_rule.describe().splitlines():
        _say(f"  {line}")
    _say("token lengths (bytes):")
    rows = bucketed(length_histogram(tok))
    top = max(c for _, c in rows)
    for label, c in rows:
        _say(f"  {label:>7}  {c:>7}  {'#' * (max(1, round(40 * c / top)) if c else 0)}")
    return 0
