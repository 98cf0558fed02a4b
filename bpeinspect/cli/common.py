"""What the CLI's commands share: errors, reading input, tables, progress (loading a tokenizer with
the user's settings is :mod:`.vocab_options`)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bpeinspect.core import display_label, human_size, limits, read_at_most
from bpeinspect.core.io import saveable

if TYPE_CHECKING:
    from bpeinspect.core.train import FileFilter

PROG = "bpeinspect-cli"
# what save() picks for a name, e.g. "*.tiktoken = tiktoken, tokenizer.json or *.hf.json ... = huggingface"
SAVE_NAMES = ", ".join(f"{' or '.join(f.patterns)} = {f.name}" for f in saveable())


class CliError(Exception):
    """An error reported as one line on stderr with exit status 2."""


def add_command(
    subparsers: argparse._SubParsersAction, name: str, run: Callable[[argparse.Namespace], int], about: str
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` that ``run(args)`` runs; ``about`` is its one-line help (as
    the list of commands shows it), a blank line, then the description its ``--help`` prints.

    >>> sub = argparse.ArgumentParser(prog="p").add_subparsers()
    >>> p = add_command(sub, "hi", lambda args: 0, "say hello\\n\\nSay hello to\\n    the world.")
    >>> p.description, sub.choices["hi"] is p
    ('Say hello to the world.', True)
    """
    summary, _, details = about.partition("\n\n")
    p = subparsers.add_parser(name, help=" ".join(summary.split()), description=" ".join(details.split()))
    p.set_defaults(func=run)
    return p


def whole_number(value: str, least: int = 0) -> int:
    """A whole number of at least ``least`` (an argparse type).

    >>> whole_number("3")
    3
    >>> whole_number("x")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: not a whole number: 'x'
    """
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, not {n}")
    return n


def processes(value: str) -> int:
    """``-j N`` (an argparse type): at least 1, and at most what a pool starts
    (:func:`~bpeinspect.core.pool.max_processes`), with a note on stderr when capped."""
    from bpeinspect.core.pool import PROCESSES_PER_CPU, max_processes

    n = whole_number(value, 1)
    cap = max_processes()
    if n > cap:
        sys.stderr.write(f"{PROG}: -j {n} is more than {PROCESSES_PER_CPU} processes per CPU; using {cap}\n")
        return cap
    return n


def add_processes(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    help: str = "processes that count at once (default: one per CPU; 1: count in this process)",
) -> None:
    """Add ``-j/--processes N`` (checked by :func:`processes`) to ``parser`` or a group of it."""
    parser.add_argument("-j", "--processes", type=processes, metavar="N", help=help)


_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def pattern_arg(value: str) -> str:
    """``--pattern NAME|REGEX`` (an argparse type): a preset name, or a regex; a plain word
    that names no preset (``gpt99``) is refused rather than used as a regex matching that word."""
    from bpeinspect.core import PRESET_ALIASES, PRESETS

    if _NAME_LIKE.fullmatch(value) and value not in PRESETS and value not in PRESET_ALIASES:
        names = ", ".join(PRESETS)
        raise argparse.ArgumentTypeError(
            f"no preset is called {value!r} (presets: {names}); a regex needs regex characters"
        )
    return value


def add_file_filter(p: argparse.ArgumentParser) -> None:
    """``--include``, ``--exclude`` and ``--no-gitignore``: which files of a folder are read."""
    p.add_argument(
        "--include",
        action="append",
        metavar="PATTERNS",
        help="in folders, read only files matching these patterns (comma-separated, .gitignore style, "
        "any case; repeatable; default: text files by name, e.g. *.txt, *.md, *.py; '*' for every text file)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERNS",
        help="in folders, leave out files and folders matching these patterns (e.g. 'tests/, *.min.js'; repeatable)",
    )
    p.add_argument(
        "--no-gitignore", action="store_true", help="in folders, also read what their .gitignore files ignore"
    )


def file_filter_of(args: argparse.Namespace) -> FileFilter:
    """The filter :func:`add_file_filter`'s options describe."""
    from bpeinspect.core.train import DEFAULT_INCLUDE, FileFilter, parse_patterns

    include = DEFAULT_INCLUDE if args.include is None else parse_patterns(",".join(args.include))
    return FileFilter(include, parse_patterns(",".join(args.exclude)), not args.no_gitignore)


def wrote(path: Any, detail: str = "", notes: Sequence[str] = ()) -> None:
    """The ``wrote PATH`` line on stderr, the path escaped as in error lines (a folder: the
    files written into it, GPT-2's pair), after a warning line for each of a save's ``notes``
    (what the file does not keep)."""
    from pathlib import Path

    from bpeinspect.core.io import GPT2_ENCODER, GPT2_MERGES

    for note in notes:
        sys.stderr.write(f"{PROG}: warning: {display_label(note)}\n")
    p = Path(path)
    names = f"{p / GPT2_ENCODER} and {p / GPT2_MERGES}" if p.is_dir() else str(path)
    sys.stderr.write(f"wrote {display_label(names)}{detail}\n")


def read_text(file: str) -> str:
    """The UTF-8 text of a file, a pipe or standard input (``-``), read once and at most
    :data:`~bpeinspect.core.limits.MAX_INPUT` bytes of it (``/dev/zero`` would never end)."""
    name = "standard input" if file == "-" else file
    limit = limits.MAX_INPUT  # read when called: the limit is a setting of the core's limits
    try:
        if file == "-":
            data = read_at_most(sys.stdin.buffer, limit)
        else:
            with open(file, "rb") as f:
                data = read_at_most(f, limit)
    except OSError as exc:
        raise CliError(f"{name}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CliError(
            f"{name}: more than {human_size(limit)} of text; {PROG} reads at most {human_size(limit)} from one input"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{name}: not UTF-8 text (bad byte at {exc.start})") from None


# Characters a terminal may act on, or that reorder what it shows, escaped in JSON output
# (json escapes the C0 controls itself); the text stays exactly the same once parsed.
_TERMINAL_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_text(obj: Any, **kw: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)``, with the characters a terminal may act on
    (C1 controls such as U+009B, bidirectional overrides) written as ``\\u`` escapes.

    >>> json_text({"a": "x\x9b\u202e"})
    '{"a": "x\\\\u009b\\\\u202e"}'
    """
    return json_safe(json.dumps(obj, ensure_ascii=False, **kw))


def safe_lines(text: str) -> str:
    """Lines of a report with :func:`display_label` applied to each (newlines kept)."""
    return "\n".join(map(display_label, text.split("\n")))


def json_safe(encoded: str) -> str:
    """JSON text with :func:`json_text`'s escapes applied."""
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)


def align_table(head: list[str], body: list[list[str]], *, left: int) -> str:
    """Rows of cells in columns: the first ``left`` columns flush left, the rest flush right.

    >>> print(align_table(["a", "n"], [["xy", "1"], ["z", "10"]], left=1), end="")
    a    n
    xy   1
    z   10
    """
    body = [[display_label(c) for c in row] for row in body]  # names and paths come from files
    widths = [max(display_width(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = []
    for row in [head, *body]:
        cells = []
        for i, (c, w) in enumerate(zip(row, widths)):
            pad = " " * (w - display_width(c))
            cells.append(c + pad if i < left else pad + c)
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def display_width(text: str) -> int:
    """The columns ``text`` takes in a terminal: East Asian wide characters and emoji take two,
    combining marks and zero-width characters none.

    >>> display_width("Hello, 世界 🎉"), display_width("e\u0301")
    (14, 1)
    """
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


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
