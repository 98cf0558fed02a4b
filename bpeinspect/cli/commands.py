"""``bpeinspect-cli``: the core's work without a window.

    bpeinspect-cli encode -t gpt2 notes.txt
    bpeinspect-cli convert ../vocab/tokenizer.json out.tiktoken

>>> main(["decode", "-t", "gpt2", "31373", "995"])
hello world0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from bpeinspect import __version__
from bpeinspect.cli import stats as cli_stats
from bpeinspect.core import Tokenizer, load_tokenizer
from bpeinspect.core.io.formats import FORMATS, detect_format, saveable
from bpeinspect.core.text import display_bytes, display_text, parse_display

PROG = "bpeinspect-cli"
BG_COLORS = (153, 186, 217, 151, 223, 189, 194, 224, 152, 230)  # 256-colour pastels, as in the GUI
ANSI_RESET = "\x1b[0m"


class CliError(Exception):
    """An error reported as one line on stderr with exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one ``bpeinspect-cli: error: ...`` line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


# what save() picks for a name, e.g. "*.tiktoken = tiktoken, tokenizer.json or *.hf.json ... = huggingface"
_SAVE_NAMES = ", ".join(f"{' or '.join(f.patterns)} = {f.name}" for f in saveable())


# -- helpers ----------------------------------------------------------------------------------------


def load_spec(spec: str, *, pattern: str | None = None, remember: bool = True) -> Tokenizer:
    """A tokenizer from a built-in name or a path; paths go to the recent-files list."""
    path = Path(spec)
    if pattern is not None and path.exists():
        from bpeinspect.core.io.formats import load_path
        from bpeinspect.core.split.rules import resolve_rule

        tok = load_path(path, pattern=resolve_rule(pattern))
    else:
        tok = load_tokenizer(spec)
    if remember and path.exists():
        from bpeinspect.core.io.discover import add_recent

        add_recent(path, tok.name, tok.n_vocab)
    return tok


def read_text(file: str) -> str:
    data = sys.stdin.buffer.read() if file == "-" else _read_file(file)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{'standard input' if file == '-' else file}: not UTF-8 text (bad byte at {exc.start})") from None


def _read_file(file: str) -> bytes:
    try:
        with open(file, "rb") as f:
            return f.read()
    except OSError as exc:
        raise CliError(f"{file}: {exc.strerror or exc}") from None


# -- list ---------------------------------------------------------------------------------------------


def add_list(sub: Any) -> None:
    p = sub.add_parser("list", help="list the tokenizers bpeinspect can find", description="List built-in tokenizers, "
                       "those in tiktoken's and Hugging Face's caches, and recently opened files.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--no-caches", action="store_true", help="skip scanning the tiktoken and Hugging Face caches")
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from bpeinspect.core.io.discover import discover

    entries = discover(include_caches=not args.no_caches)
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=1, ensure_ascii=False))
        return 0
    rows = [(e.name, e.source, "?" if e.vocab_size is None else str(e.vocab_size), e.spec) for e in entries]
    widths = [max(len(r[i]) for r in [("NAME", "SOURCE", "VOCAB", "SPEC"), *rows]) for i in range(3)]
    for r in [("NAME", "SOURCE", "VOCAB", "SPEC"), *rows]:
        print(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}")
    return 0


# -- encode / decode ----------------------------------------------------------------------------------


def add_encode(sub: Any) -> None:
    p = sub.add_parser("encode", help="encode text to token ids", description="Encode a file (or standard input).")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC", help="built-in name or vocabulary file "
                   "(default: cl100k_base)")
    p.add_argument("--special", choices=("none", "all", "raise"), default="none",
                   help="special-token text: none = encode it as ordinary text (default), all = recognise it, "
                   "raise = refuse it")
    p.add_argument("--output", choices=("ids", "json", "color"), default="ids",
                   help="ids separated by spaces (default), JSON with token details, or the text with coloured tokens")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="text file to encode; '-' or nothing = stdin")
    p.set_defaults(func=cmd_encode)


def cmd_encode(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer)
    text = read_text(args.file)
    if args.special == "raise":
        tok.encode(text)  # raises DisallowedSpecialError if special-token text is present
    allowed: Any = "all" if args.special == "all" else ()
    if args.output == "ids":
        ids = tok.encode(text, allowed_special="all") if args.special == "all" else tok.encode_ordinary(text)
        print(" ".join(map(str, ids)))
        return 0
    enc = tok.encode_with_offsets(text, allowed_special=allowed)
    if args.output == "json":
        tokens = []
        for t in enc:
            tokens.append(
                {
                    "id": t.id,
                    "text": t.text_bytes.decode("utf-8", errors="replace"),
                    "bytes": t.text_bytes.hex(),
                    "chars": list(t.char_span),
                    "special": t.special,
                }
            )
        json.dump({"tokenizer": tok.name, "ids": list(enc.ids), "tokens": tokens}, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(color_text(enc) + ("" if text.endswith("\n") else "\n"))
    return 0


def color_text(enc: Any) -> str:
    """The text with each token (or group of tokens sharing a character) on a coloured background."""
    out = []
    text = enc.text
    pos = 0
    for n, (first, last) in enumerate(enc.char_groups()):
        a, b = enc.char_starts[first], enc.char_ends[last]
        if a > pos:
            out.append(text[pos:a])
        special = any(enc.token(i).special for i in range(first, last + 1))
        style = f"\x1b[1;4;48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m" if special else (
            f"\x1b[48;5;{BG_COLORS[n % len(BG_COLORS)]};38;5;16m"
        )
        # Newlines end the colour so the background does not bleed across the line.
        piece = text[a:b].replace("\n", ANSI_RESET + "\n" + style)
        out.append(style + piece + ANSI_RESET)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def add_decode(sub: Any) -> None:
    p = sub.add_parser("decode", help="decode token ids to text", description="Decode ids given as arguments or on stdin.")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC", help="built-in name or vocabulary file")
    p.add_argument("ids", nargs="*", metavar="IDS", help="token ids (spaces or commas); '-' or nothing = read stdin")
    p.set_defaults(func=cmd_decode)


def parse_ids(words: Iterable[str]) -> list[int]:
    out = []
    for w in words:
        for part in w.replace(",", " ").replace("[", " ").replace("]", " ").split():
            try:
                out.append(int(part))
            except ValueError:
                raise CliError(f"not a token id: {part!r}") from None
    return out


def cmd_decode(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer)
    words = args.ids if args.ids and args.ids != ["-"] else [sys.stdin.read()]
    ids = parse_ids(words)
    data = tok.decode_bytes(ids)
    sys.stdout.write(data.decode("utf-8", errors="replace"))
    sys.stdout.flush()
    return 0


# -- train / convert ----------------------------------------------------------------------------------


def add_train(sub: Any) -> None:
    p = sub.add_parser("train", help="train a tokenizer on text files", description="Train a byte-level BPE "
                       f"tokenizer; the output format follows OUT's name: {_SAVE_NAMES}.")
    p.add_argument("files", nargs="+", metavar="FILES", help="UTF-8 text files to train on")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="vocabulary size (at least 256)")
    p.add_argument("--pattern", default="gpt4", metavar="NAME|REGEX", help="split rule: a preset name (gpt4, gpt2, "
                   "cl100k, o200k, r50k, llama3) or a regex (default: gpt4)")
    p.add_argument("--special-token", action="append", default=[], metavar="TEXT", help="add a special token "
                   "(repeatable)")
    p.add_argument("--tie-break", choices=("first-seen", "hf"), default="first-seen", help="which of equally frequent "
                   "pairs to merge: minbpe's first-seen or Hugging Face's order")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")
    p.set_defaults(func=cmd_train)


class ProgressBar:
    """A one-line progress bar on stderr (only drawn when stderr is a terminal, unless forced)."""

    def __init__(self, label: str, stream: Any = None, force: bool = False) -> None:
        self.label, self.stream = label, stream or sys.stderr
        self.enabled = force or (hasattr(self.stream, "isatty") and self.stream.isatty())
        self.last: Any = None

    def __call__(self, report: Any, total: float | None = None) -> None:
        """Take a trainer's report (with ``fraction``, ``phase``, ``merges_done``/``merges_total``)
        or plain numbers ``(done, total)``."""
        phase = getattr(report, "phase", None)
        if hasattr(report, "fraction"):
            frac = report.fraction if phase != "counting" else 0.0
            done, total = getattr(report, "merges_done", None), getattr(report, "merges_total", None)
        else:
            done = report
            frac = report if total is None else (report / total if total else 1.0)
        frac = min(max(float(frac), 0.0), 1.0)
        pct = int(frac * 100)
        key = (phase, pct)
        if key == self.last:
            return
        self.last = key
        if self.enabled:
            filled = int(frac * 30)
            detail = "" if total is None else f" {done}/{total} merges" if phase else f" {done}/{total}"
            label = f"{self.label} ({phase})" if phase == "counting" else self.label
            self.stream.write(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {pct:3d}%{detail}\x1b[K")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.last is not None:
            self.stream.write("\n")
            self.stream.flush()


def cmd_train(args: argparse.Namespace) -> int:
    from bpeinspect.core.io.formats import format_for_path, save

    if args.vocab_size < 256:
        raise CliError(f"--vocab-size must be at least 256 (the single bytes), not {args.vocab_size}")
    format_for_path(args.output)  # refuse an unusable OUT before the long part
    try:
        from bpeinspect.core.train.run import train_tokenizer
    except ImportError:
        raise CliError("training is not available in this build (bpeinspect.core.train.run is missing)") from None
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
    print(f"wrote {written} ({tok.n_vocab} tokens)", file=sys.stderr)
    return 0


def add_convert(sub: Any) -> None:
    p = sub.add_parser("convert", help="convert a tokenizer to another file format", description="Load SPEC and write "
                       f"it to OUT; the format follows OUT's name: {_SAVE_NAMES}; a folder = gpt2.")
    p.add_argument("spec", metavar="SPEC", help="built-in name or vocabulary file")
    p.add_argument("out", metavar="OUT", help="file to write")
    p.add_argument("--pattern", metavar="NAME|REGEX", help="split rule for a .tiktoken input that is not a known file")
    p.add_argument("--format", choices=[f.name for f in saveable()],
                   help="write this format whatever OUT is called")
    p.set_defaults(func=cmd_convert)


def cmd_convert(args: argparse.Namespace) -> int:
    from bpeinspect.core.io.formats import save

    tok = load_spec(args.spec, pattern=args.pattern)
    written = save(tok, args.out, fmt=args.format)
    print(f"wrote {written}", file=sys.stderr)
    return 0


# -- tree / info --------------------------------------------------------------------------------------


def add_tree(sub: Any) -> None:
    p = sub.add_parser("tree", help="draw the merge tree of a token", description="Draw how a token is built from "
                       "bytes by merges. TOKEN is an id or the token's text (plain, or as printed: ␣ for a space).")
    p.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC", help="built-in name or vocabulary file")
    p.add_argument("token", metavar="TOKEN", help="token id, or its text (e.g. ' hello')")
    p.set_defaults(func=cmd_tree)


def resolve_token(tok: Tokenizer, token: str) -> int:
    if token.lstrip("-").isdigit():
        i = int(token)
        tok.token_bytes(i)  # raises UnknownTokenError
        return i
    i = tok.token_id(token)
    if i is None:  # written in the notation the CLI prints, e.g. "␣hello"
        i = tok.token_id(parse_display(token))
    if i is None:
        raise CliError(f"{token!r} is not a token of {tok.name or 'this tokenizer'}")
    return i


def tree_lines(node: Any) -> list[str]:
    """The merge tree drawn with box characters, one node per line."""

    def label(n: Any) -> str:
        rank = "" if n.rank is None else f"  (rank {n.rank})"
        mark = "" if n.buildable else "  [no merge makes it]"
        return f"{n.id} {display_bytes(n.token)}{rank}{mark}"

    lines = [label(node)]

    def walk(n: Any, prefix: str) -> None:
        kids = [k for k in (n.left, n.right) if k is not None]
        for j, k in enumerate(kids):
            last = j == len(kids) - 1
            lines.append(prefix + ("└── " if last else "├── ") + label(k))
            walk(k, prefix + ("    " if last else "│   "))

    walk(node, "")
    return lines


def cmd_tree(args: argparse.Namespace) -> int:
    tok = load_spec(args.tokenizer)
    i = resolve_token(tok, args.token)
    print("\n".join(tree_lines(tok.merge_graph.tree(i))))
    return 0


def add_info(sub: Any) -> None:
    p = sub.add_parser("info", help="describe a tokenizer", description="Vocabulary size, special tokens, split "
                       "rule, source and a histogram of token lengths in bytes.")
    p.add_argument("spec", metavar="SPEC", help="built-in name or vocabulary file")
    p.set_defaults(func=cmd_info)


def length_histogram(tok: Tokenizer) -> dict[int, int]:
    hist: dict[int, int] = {}
    for b in tok.mergeable_ranks:
        hist[len(b)] = hist.get(len(b), 0) + 1
    return dict(sorted(hist.items()))


def cmd_info(args: argparse.Namespace) -> int:
    tok = load_spec(args.spec)
    print(f"name:           {tok.name}")
    print(f"source:         {tok.source}")
    if Path(args.spec).exists():
        print(f"file format:    {FORMATS[detect_format(args.spec)].description}")
    print(f"vocab size:     {tok.n_vocab} ids ({len(tok)} tokens, {len(tok.special_tokens)} special)")
    rule = "rank rule (merge priority = id, as tiktoken)" if tok.uses_rank_rule else "pair rule (explicit merge list)"
    describe_model = getattr(tok, "describe_model", None)
    if describe_model is not None:
        rule = describe_model()
    print(f"merging:        {rule}{', ignore_merges' if tok.ignore_merges else ''}")
    print(f"normalizer:     {tok.normalizer.describe() if tok.normalizer is not None else 'none'}")
    if tok.training is not None:
        print(f"training:       {json.dumps(tok.training.settings, default=str)}")
    print("special tokens:" + ("" if tok.special_tokens else " none"))
    for s, i in sorted(tok.special_tokens.items(), key=lambda x: x[1]):
        print(f"  {i:>8}  {display_text(s)}")
    print(f"split rule:     {tok.split_rule.name or '(custom)'}")
    for line in tok.split_rule.describe().splitlines():
        print(f"  {line}")
    print("token lengths (bytes):")
    hist = length_histogram(tok)
    top = max(hist.values())
    for n, c in hist.items():
        print(f"  {n:>4}  {c:>7}  {'#' * max(1, round(40 * c / top))}")
    return 0


# -- main -----------------------------------------------------------------------------------------------

# Each registrar adds one subcommand: register(subparsers) -> None, setting ``func=cmd(args) -> int``
# with set_defaults. A command reports failure by raising CliError or a ValueError/OSError.
REGISTRARS: list[Callable[[Any], None]] = [
    add_list, add_encode, add_decode, add_train, add_convert, add_tree, add_info, cli_stats.register,
]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Inspect byte-level BPE tokenizers. SPEC is a built-in name (r50k_base/gpt2, "
                "cl100k_base, o200k_base) or a vocabulary file or folder.")
    p.add_argument("--version", action="version", version=f"bpeinspect {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for register in REGISTRARS:
        register(sub)
    return p


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for any error)."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def _warn(message: Any, *_: Any, **__: Any) -> None:
        sys.stderr.write(f"{PROG}: warning: {message}\n")

    old_show = warnings.showwarning
    warnings.showwarning = _warn
    try:
        return int(args.func(args) or 0)
    except (CliError, ValueError, OSError, ImportError) as exc:
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 0
        sys.stderr.write(f"{PROG}: error: {_one_line(exc)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: error: interrupted\n")
        return 2
    finally:
        warnings.showwarning = old_show


def _silence_stdout() -> None:
    # After a closed pipe (``| head``), stop Python from complaining while flushing at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
