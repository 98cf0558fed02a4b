"""``bpeinspect-cli``: the core's work without a window."""

from __future__ import annotations

import argparse
import sys

from bpeinspect import __version__
from bpeinspect.core import load_tokenizer


class CliError(Exception):
    """An error reported as one line on stderr with exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bpeinspect-cli", description="Inspect byte-level BPE tokenizers.")
    p.add_argument("--version", action="version", version=f"bpeinspect {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    enc = sub.add_parser("encode", help="encode text to token ids")
    enc.add_argument("-t", "--tokenizer", default="cl100k_base", metavar="SPEC")
    enc.add_argument("file", nargs="?", default="-")
    enc.set_defaults(func=cmd_encode)
    return p


def cmd_encode(args: argparse.Namespace) -> int:
    tok = load_tokenizer(args.tokenizer)
    text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    print(" ".join(map(str, tok.encode_ordinary(text))))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CliError, ValueError, OSError) as exc:
        print(f"bpeinspect-cli: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
