"""``bpeinspect-cli``: the core's work without a window.

    bpeinspect-cli encode -t gpt2 notes.txt
    bpeinspect-cli convert ../vocab/tokenizer.json out.tiktoken

>>> main(["decode", "-t", "gpt2", "31373", "995"])
hello world0
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from bpeinspect import __version__
from bpeinspect.cli import chat, convert, encode, tokenizers, train
from bpeinspect.cli import count as cli_count
from bpeinspect.cli import stats as cli_stats
from bpeinspect.cli import vocab_diff as cli_vocab_diff
from bpeinspect.cli import vocab_use as cli_vocab_use
from bpeinspect.cli.common import PROG, CliError
from bpeinspect.core import PatternError, allow_gc_freeze, display_label
from bpeinspect.core.io import turn_on_load_cache


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one ``bpeinspect-cli: error: ...`` line, exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


# Each registrar adds one subcommand: register(subparsers), setting ``func=cmd(args) -> int``
# with set_defaults. A command reports failure by raising CliError or a ValueError/OSError.
REGISTRARS: list[Callable[[Any], object]] = [
    tokenizers.add_list,
    encode.add_encode,
    encode.add_decode,
    train.add_train,
    convert.add_convert,
    tokenizers.add_tree,
    tokenizers.add_info,
    cli_stats.register,
    cli_count.register,
    chat.register,
    cli_vocab_diff.register,
    cli_vocab_use.register,
]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description="Inspect byte-level BPE tokenizers. SPEC is a built-in name (r50k_base/gpt2, "
        "cl100k_base, o200k_base) or a vocabulary file or folder.",
    )
    p.add_argument("--version", action="version", version=f"bpeinspect {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for register in REGISTRARS:
        register(sub)
    return p


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return display_label(text.splitlines()[0])


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for any error, 130 after Ctrl+C).

    Every error is one line on stderr. An error that is not the input's fault (a bug) is
    named, with a request to report it; ``BPEINSPECT_DEBUG=1`` adds its traceback.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    turn_on_load_cache()  # a large file opened again comes from its built tables
    allow_gc_freeze()  # big encodings are frozen once built: later collections skip them

    if sys.stdout is None or not _open(1):  # started with ``>&-``
        if args.command not in _QUIET_COMMANDS:
            return _fail(_NO_STDOUT)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (what they print goes to stderr)
    try:
        status = int(args.func(args) or 0)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:  # a full disk, /dev/full
            _silence_stdout()
            return _fail(f"{_NO_STDOUT}: {exc.strerror or exc}")
        return status
    except PatternError as exc:
        return _fail(_naming_the_file(exc, args))
    except (CliError, ValueError, OSError, ImportError) as exc:
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 0
        return _fail(_one_line(exc))
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130  # as a shell reports a command stopped by Ctrl+C (128 + SIGINT)
    except MemoryError:
        return _fail("out of memory (the input is too large for this machine's memory)")
    except Exception as exc:  # the last resort: a bug, never a traceback unless asked for
        detail = _one_line(exc) if str(exc).strip() else ""
        what = f"{type(exc).__name__}: {detail}" if detail and detail != type(exc).__name__ else type(exc).__name__
        return _fail(
            f"internal error ({what}) in bpeinspect {__version__}; this is a bug: please report it with the command "
            f"you ran (BPEINSPECT_DEBUG=1 shows the traceback)"
        )


_NO_STDOUT = "cannot write to standard output"
_QUIET_COMMANDS = ("convert", "train", "count")  # they write files and report on stderr only


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _naming_the_file(exc: PatternError, args: argparse.Namespace) -> str:
    """A split pattern's error, naming the vocabulary file that stores the pattern (the user
    did not type it, so a message quoting only the pattern leaves them guessing where it is from)."""
    line = _one_line(exc)
    if getattr(args, "pattern", None) is not None:
        return line  # the user's own --pattern
    specs = getattr(args, "tokenizer", None)
    files = [s for s in (specs if isinstance(specs, list) else [specs]) if isinstance(s, str) and Path(s).is_file()]
    if not files:
        return line
    where = files[0] if len(files) == 1 else "one of " + ", ".join(files)
    return display_label(f"{where}: ") + line + "; the pattern is stored in the file (--pattern gives another)"


def _fail(message: str) -> int:
    if os.environ.get("BPEINSPECT_DEBUG") == "1" and sys.exc_info()[0] is not None:
        traceback.print_exc()
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return 2


def _silence_stdout() -> None:
    # After a closed pipe (``| head``), stop Python from complaining while flushing at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
