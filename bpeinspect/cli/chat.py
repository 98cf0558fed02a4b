"""``bpeinspect-cli chat``: a conversation as each model reads it, counted per message.

    bpeinspect-cli chat -t o200k_base messages.json
    bpeinspect-cli chat -t ~/models/qwen3/tokenizer.json --show text messages.json
    bpeinspect-cli chat -t mistral.json --template chat_template.jinja --json messages.json

MESSAGES is a JSON file (or ``-``) holding a list of ``{"role", "content"}`` messages, an
object with ``messages`` (OpenAI's and Hugging Face's chat format), or a ShareGPT record
(``conversations`` of ``{"from", "value"}``). The template is the model's own (beside or
inside the vocabulary file), the ChatML form for OpenAI's vocabularies, or ``--template``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bpeinspect.cli.common import CliError, add_command, align_table, read_text
from bpeinspect.cli.vocab_options import add_tokenizers, add_vocab_options, load_spec, tokenizer_specs
from bpeinspect.core import Tokenizer, display_bytes
from bpeinspect.core.chat import (
    ChatTemplate,
    EncodedChat,
    chat_format,
    check_name,
    conversation_of,
    encode_chat,
    render_chat,
    template_from_file,
    templates_for,
    variable_value,
)

DEFAULT_TOKENIZER = "cl100k_base"


ABOUT = """render a conversation with each tokenizer's chat template and count its tokens per message

Render the messages as the model reads them (its chat template) and count the tokens of each message
and of the template itself."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``chat`` subcommand to ``subparsers``."""
    p = add_command(subparsers, "chat", run, ABOUT)
    p.add_argument("messages", metavar="MESSAGES", help="a JSON file of messages ('-': standard input)")
    add_tokenizers(p, [DEFAULT_TOKENIZER])
    p.add_argument(
        "--template",
        metavar="FILE|NAME",
        help="a template file (.jinja, tokenizer_config.json, GGUF), the name of a known template "
        "(e.g. 'gpt-3.5-turbo'), or 'none' (messages joined by newlines)",
    )
    p.add_argument(
        "--no-generation-prompt",
        action="store_true",
        help="do not end with the header of the assistant's reply (count a finished conversation)",
    )
    p.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a template variable, e.g. enable_thinking=false (the value is read as JSON if it can be)",
    )
    show = p.add_mutually_exclusive_group()
    show.add_argument(
        "--show",
        choices=("text", "ids", "tokens"),
        help="also print the rendered text, its ids, or its tokens one per line with their message",
    )
    show.add_argument("--json", action="store_true", help="print JSON: text, ids and counts per tokenizer")
    add_vocab_options(p)
    return p


def read_messages(source: str) -> list[dict[str, Any]]:
    """The conversation in a JSON file (or ``-``)."""
    name = "standard input" if source == "-" else source
    try:
        obj = json.loads(read_text(source))
    except json.JSONDecodeError as exc:
        raise CliError(f"{name}: not valid JSON ({exc})") from None
    except RecursionError:
        raise CliError(f"{name}: nested too deeply (more levels than a JSON reader follows)") from None
    messages = conversation_of(obj)
    if messages is None:
        raise CliError(
            f'{name}: holds no conversation (a list of {{"role", "content"}} messages, '
            "or an object with 'messages' or 'conversations')"
        )
    return messages


def _variables(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq:
            raise CliError(f"--var {pair!r}: give NAME=VALUE")
        try:
            check_name(name)
        except ValueError as exc:
            raise CliError(f"--var {pair!r}: {exc}") from None
        out[name] = variable_value(value)
    return out


def choose_template(tok: Tokenizer, spec: str, choice: str | None) -> ChatTemplate | None:
    """The template ``--template`` names for ``tok`` (a file, a known name, ``none``), else its own."""
    if choice is not None and choice.lower() == "none":
        return None
    if choice is not None and Path(choice).is_file():
        return template_from_file(choice, tok)[0]
    known = templates_for(tok, spec)
    if choice is None:
        if not known:
            print(
                f"bpeinspect-cli: note: {spec} has no chat template (none beside or inside the file); "
                "the messages are joined by newlines. Give one with --template.",
                file=sys.stderr,
            )
        return known[0] if known else None
    matches = [t for t in known if choice.lower() in t.name.lower()]
    if not matches:
        names = ", ".join(repr(t.name) for t in known) or "none"
        raise CliError(
            f"--template {choice!r}: no such file, and no template of {spec} is called that (known: {names})"
        )
    return matches[0]


def run(args: argparse.Namespace) -> int:
    messages = read_messages(args.messages)
    variables = _variables(args.var)
    specs = tokenizer_specs(args, [DEFAULT_TOKENIZER])
    results = []
    for spec in specs:
        tok = load_spec(spec, pattern=args.pattern, special_tokens=args.special_token, remember=False)
        fmt = chat_format(tok, choose_template(tok, spec, args.template))
        rendered = render_chat(fmt, messages, add_generation_prompt=not args.no_generation_prompt, **variables)
        results.append((spec, fmt, encode_chat(fmt, rendered)))
    if args.json:
        print(json.dumps([_as_dict(spec, fmt, e) for spec, fmt, e in results], ensure_ascii=False, indent=1))
        return 0
    for k, (spec, fmt, e) in enumerate(results):
        if k:
            print()
        _print(spec, fmt, e, messages, args.show)
    return 0


def _preview(message: dict[str, Any], limit: int = 48) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False) if content else ""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print(spec: str, fmt: Any, e: EncodedChat, messages: list[dict[str, Any]], show: str | None) -> None:
    c = e.count
    origin = fmt.template.origin if fmt.template is not None else "messages joined by newlines"
    print(f"{spec}: {fmt.label} ({origin})")
    body = []
    for i, m in enumerate(messages):
        note = " (not in the rendered text)" if i in c.missing else ""
        body.append([f"{i + 1}. {c.roles[i]}", _preview(m) + note, f"{c.per_message[i]:,}"])
    body.append(["template", "role headers, control tokens, separators", f"{c.overhead:,}"])
    body.append(["total", "", f"{c.total:,}"])
    sys.stdout.write(align_table(["message", "content", "tokens"], body, left=2))
    if show == "text":
        print(e.rendered.text)
    elif show == "ids":
        print(" ".join(map(str, e.encoding.ids)))
    elif show == "tokens":
        tok = fmt.tokenizer
        for tid, owner in zip(e.encoding.ids, e.owners):
            who = "template" if owner < 0 else f"message {owner + 1}"
            print(f"{tid}\t{display_bytes(tok.token_bytes(tid))}\t{who}")


def _as_dict(spec: str, fmt: Any, e: EncodedChat) -> dict[str, Any]:
    c = e.count
    return {
        "tokenizer": spec,
        "template": fmt.label,
        "template_origin": fmt.template.origin if fmt.template is not None else None,
        "text": e.rendered.text,
        "ids": list(e.encoding.ids),
        "total": c.total,
        "template_tokens": c.overhead,
        "messages": [
            {"role": r, "tokens": n, "in_text": i not in c.missing}
            for i, (r, n) in enumerate(zip(c.roles, c.per_message))
        ],
        "owners": list(e.owners),
    }
