"""``--pattern`` and ``--special-token`` for every command that opens a tokenizer; ``-t``, once
for those that work with one and repeatable for those that measure under several; and the
warning printed when a file left a setting to a default (a rank file's split rule, say)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

from bpeinspect.cli.common import pattern_arg
from bpeinspect.core import Tokenizer, display_label, load_tokenizer

if TYPE_CHECKING:
    from bpeinspect.core.io.hub import HubFiles


def add_tokenizer(p: argparse.ArgumentParser, default: str = "cl100k_base") -> None:
    """``-t/--tokenizer SPEC``, once, for a command that works with one tokenizer."""
    p.add_argument(
        "-t",
        "--tokenizer",
        default=default,
        metavar="SPEC",
        help=f"built-in name, vocabulary file or hf:OWNER/NAME[@REVISION] (default: {default})",
    )


def add_tokenizers(p: argparse.ArgumentParser, default: Sequence[str] = ()) -> None:
    """``-t/--tokenizer SPEC``, repeatable, for a command that measures under several tokenizers
    (required when there is no ``default``); :func:`tokenizer_specs` reads them."""
    shown = f" (default: {', '.join(default)})" if default else ""
    p.add_argument(
        "-t",
        "--tokenizer",
        action="append",
        required=not default,
        metavar="SPEC",
        help=f"built-in name, vocabulary file or hf:OWNER/NAME; repeat for several{shown}",
    )


def tokenizer_specs(args: argparse.Namespace, default: Sequence[str] = ()) -> list[str]:
    """The ``-t`` specs given (each once, in order), else ``default``."""
    return list(dict.fromkeys(args.tokenizer or default))


def add_vocab_options(p: argparse.ArgumentParser, *, pattern: bool = True) -> None:
    """Add the options that supply what a vocabulary file may not store."""
    if pattern:
        p.add_argument(
            "--pattern",
            type=pattern_arg,
            metavar="NAME|REGEX",
            help="split rule for a file that does not store one (a "
            ".tiktoken/tokenizer.model that is not a known file, a GGUF with an unknown pre-tokenizer); "
            "a preset (cl100k, o200k, r50k, llama3, gpt4, gpt2) or a regex; replaces any file's own",
        )
    p.add_argument(
        "--special-token",
        action="append",
        default=None,
        metavar="TEXT[=ID]",
        help="a special token for a file that stores none (repeat for more; without =ID the ids follow "
        "the vocabulary); replaces the file's own special tokens",
    )


class SpecOptions(TypedDict, total=False):
    """The options of :func:`load_spec_resolved`, which :func:`load_spec` passes on."""

    pattern: str | None
    special_tokens: list[str] | None
    remember: bool
    warn: bool


def load_spec(spec: str, **options: Unpack[SpecOptions]) -> Tokenizer:
    """:func:`load_spec_resolved`'s tokenizer."""
    return load_spec_resolved(spec, **options)[0]


def load_spec_resolved(
    spec: str,
    *,
    pattern: str | None = None,
    special_tokens: list[str] | None = None,
    remember: bool = True,
    warn: bool = True,
) -> tuple[Tokenizer, HubFiles | None]:
    """A tokenizer from a built-in name or a path (paths go to the recent-files list), with the
    user's split rule and special tokens if given; what its load noted, and settings the file left
    to a default, are reported on stderr. With it, for an ``hf:`` spec, the files the spec
    resolved to (None for any other spec)."""
    from bpeinspect.core import resolve_rule
    from bpeinspect.core.io import first_free_id, hub, load_with, special_tokens_from, with_settings

    path = Path(spec)
    files: HubFiles | None = None
    rule = resolve_rule(pattern) if pattern is not None else None
    if path.exists() and (rule is not None or special_tokens is not None):
        tok = load_with(path, pattern=rule, special_tokens=special_tokens)
    else:
        if hub.is_hub_spec(spec):
            loaded = hub.load_resolved(spec)
            tok, files = loaded.tokenizer, loaded.files
        else:
            tok = load_tokenizer(spec)
        if special_tokens is not None or rule is not None:
            tok = with_settings(
                tok, pattern=rule, special_tokens=special_tokens_from(special_tokens, first_free_id(tok))
            )
    if remember and path.exists():
        from bpeinspect.core.io import add_recent

        add_recent(path, tok.name, tok.n_vocab)
    for note in tok.load_notes:
        print(display_label(f"bpeinspect-cli: warning: {note}"), file=sys.stderr)
    if warn:
        for key, why in tok.assumed.items():
            if why != "chosen by the user":
                print(
                    display_label(f"bpeinspect-cli: warning: {spec}: {key.replace('_', ' ')}: {why}"), file=sys.stderr
                )
    return tok, files
