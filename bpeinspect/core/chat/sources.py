"""Where a tokenizer's chat template comes from.

A Hugging Face tokenizer's template sits beside its ``tokenizer.json``: in
``chat_template.jinja`` (which transformers prefers), in ``tokenizer_config.json``
(``chat_template``: a string, or a list of named templates), in ``chat_template.json``, or, in
a few files, inside ``tokenizer.json`` itself. A GGUF file stores it under
``tokenizer.chat_template`` (named ones under ``tokenizer.chat_template.NAME``). OpenAI's
vocabularies ship no template: the ChatML forms that OpenAI's chat models read are built in
(:mod:`.openai`).

The special tokens a template is given by name (``bos_token``, ``eos_token``…) come from
``tokenizer_config.json`` (or ``special_tokens_map.json``) as transformers reads them, and from
the GGUF ``tokenizer.ggml.*_token_id`` keys.

>>> [t.name for t in templates_for(load_tokenizer("cl100k_base"))]
['ChatML (gpt-4)', 'ChatML (gpt-3.5-turbo)']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bpeinspect.core.chat.openai import builtin_templates
from bpeinspect.core.chat.template import ChatTemplate
from bpeinspect.core.errors import ChatTemplateError, VocabularyError
from bpeinspect.core.io.formats.gguf import MAGIC as GGUF_MAGIC
from bpeinspect.core.io.formats.gguf import read_metadata
from bpeinspect.core.io.load import load_tokenizer  # noqa: F401  (the doctest's)
from bpeinspect.core.tokenizer import Tokenizer

# the named special tokens transformers passes to a template (its SPECIAL_TOKENS_ATTRIBUTES)
SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_GGUF_IDS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "sep_token": "tokenizer.ggml.seperator_token_id",  # sic: llama.cpp's spelling
    "pad_token": "tokenizer.ggml.padding_token_id",
    "cls_token": "tokenizer.ggml.cls_token_id",
    "mask_token": "tokenizer.ggml.mask_token_id",
}
_MAX_CONFIG = 64 << 20  # bytes; tokenizer_config.json files with every added token run to a few MB


def source_path(tok: Tokenizer, spec: str | None = None) -> Path | None:
    """The file ``tok`` was opened from: ``spec`` if that is a path, else the path its
    ``source`` starts with (``"/x/tokenizer.json (Hugging Face tokenizer.json)"``)."""
    for candidate in (spec, tok.source):
        if not candidate:
            continue
        text = str(candidate)
        cuts = [len(text)] + [i for i in range(len(text) - 1, 0, -1) if text.startswith(" (", i)]
        for cut in cuts:
            p = Path(text[:cut])
            if p.exists():
                # not resolved: a Hugging Face cache's snapshot holds links into blobs/, and the
                # files beside the tokenizer (its tokenizer_config.json) are beside the link
                return p.absolute()
    return None


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]  # a serialised AddedToken
    return None


def hf_special_tokens(config: Mapping[str, Any]) -> dict[str, str]:
    """The named special tokens in a ``tokenizer_config.json`` (or ``special_tokens_map.json``),
    as transformers passes them to a template.

    >>> hf_special_tokens({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "pad_token": None,
    ...                    "extra_special_tokens": {"image_token": "<img>"}})
    {'bos_token': '<s>', 'eos_token': '</s>', 'image_token': '<img>'}
    """
    out = {name: text for name in SPECIAL_NAMES if (text := _token_text(config.get(name))) is not None}
    extra = config.get("extra_special_tokens")
    if isinstance(extra, Mapping):
        out.update({str(k): text for k, v in extra.items() if (text := _token_text(v)) is not None})
    return out


def _read_json(path: Path) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_CONFIG + 1)
    except OSError as exc:
        raise ChatTemplateError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > _MAX_CONFIG:
        raise ChatTemplateError(f"{path}: too large for a tokenizer configuration")
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ChatTemplateError(f"{path}: not valid JSON ({exc})") from None


def _named(value: Any, specials: dict[str, str], origin: str) -> list[ChatTemplate]:
    """Templates from a ``chat_template`` value: a string, or ``[{"name", "template"}...]``."""
    if isinstance(value, str) and value.strip():
        return [ChatTemplate(value, specials, origin, "chat template")]
    out: list[ChatTemplate] = []
    if isinstance(value, list):
        for entry in value:
            if isinstance(entry, Mapping) and isinstance(entry.get("template"), str):
                name = str(entry.get("name") or "default")
                out.append(ChatTemplate(entry["template"], specials, f"{origin} ({name})", f"chat template: {name}"))
        out.sort(key=lambda t: not t.name.endswith(": default"))
    return out


def templates_in_folder(folder: Path, tokenizer_file: Path | None = None) -> list[ChatTemplate]:
    """The Hugging Face chat templates in a tokenizer's folder, the one transformers uses first."""
    config_path = folder / "tokenizer_config.json"
    config = _read_json(config_path) if config_path.is_file() else {}
    config = config if isinstance(config, Mapping) else {}
    specials = hf_special_tokens(config)
    if not specials and (folder / "special_tokens_map.json").is_file():
        extra = _read_json(folder / "special_tokens_map.json")
        specials = hf_special_tokens(extra) if isinstance(extra, Mapping) else {}
    found: list[ChatTemplate] = []
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        try:
            found.append(
                ChatTemplate(jinja.read_text("utf-8"), specials, f"{jinja.name} beside the file", "chat template")
            )
        except (OSError, UnicodeDecodeError) as exc:
            raise ChatTemplateError(f"{jinja}: cannot read it ({exc})") from None
    found += _named(config.get("chat_template"), specials, "tokenizer_config.json beside the file")
    if (folder / "chat_template.json").is_file():
        obj = _read_json(folder / "chat_template.json")
        if isinstance(obj, Mapping):
            found += _named(obj.get("chat_template"), specials, "chat_template.json beside the file")
    if tokenizer_file is not None and tokenizer_file.suffix == ".json" and tokenizer_file.is_file():
        found += _inside_json(tokenizer_file, specials)
    return found


def _inside_json(path: Path, specials: dict[str, str]) -> list[ChatTemplate]:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_CONFIG * 8)
    except OSError:
        return []
    if b'"chat_template"' not in data:  # parsing a 30 MB tokenizer.json only when it has one
        return []
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return []
    return _named(obj.get("chat_template") if isinstance(obj, dict) else None, specials, f"inside {path.name}")


def templates_in_gguf(path: Path, tok: Tokenizer | None = None) -> list[ChatTemplate]:
    """The chat templates in a GGUF file's metadata (the default one first)."""
    try:
        with open(path, "rb") as f:
            meta = read_metadata(f, path, wanted=frozenset())
    except (OSError, VocabularyError, RecursionError) as exc:
        raise ChatTemplateError(f"{path}: cannot read its metadata ({exc})") from None
    specials: dict[str, str] = {}
    for name, key in _GGUF_IDS.items():
        tid = meta.get(key)
        if isinstance(tid, int) and tok is not None:
            try:
                specials[name] = tok.token_bytes(tid).decode("utf-8", "replace")
            except ValueError:
                pass
    found: list[ChatTemplate] = []
    for key, value in meta.items():
        if key == "tokenizer.chat_template" or key.startswith("tokenizer.chat_template."):
            if isinstance(value, bytes) and value.strip():
                name = key.removeprefix("tokenizer.chat_template").lstrip(".") or "default"
                text = value.decode("utf-8", "replace")
                found.append(ChatTemplate(text, specials, f"the GGUF file's {key}", f"chat template: {name}"))
    found.sort(key=lambda t: not t.name.endswith(": default"))
    return found


def template_from_file(path: str | Path, tok: Tokenizer | None = None) -> list[ChatTemplate]:
    """The templates in a file the user points at: a ``.jinja`` template, a
    ``tokenizer_config.json``/``chat_template.json``, or a GGUF file.

    The special tokens come from the ``tokenizer_config.json`` beside a ``.jinja`` file, if any.
    """
    p = Path(path)
    if not p.is_file():
        raise ChatTemplateError(f"{p}: no such file")
    with open(p, "rb") as f:
        head = f.read(4)
    if head == GGUF_MAGIC:
        found = templates_in_gguf(p, tok)
    elif p.suffix.lower() == ".json":
        obj = _read_json(p)
        obj = obj if isinstance(obj, Mapping) else {}
        found = _named(obj.get("chat_template"), hf_special_tokens(obj), p.name)
        if found and not found[0].special_tokens and (p.parent / "tokenizer_config.json").is_file():
            found = [_with_specials(t, p.parent) for t in found]
    else:
        try:
            text = p.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ChatTemplateError(f"{p}: cannot read it as UTF-8 text ({exc})") from None
        found = [_with_specials(ChatTemplate(text, {}, p.name, p.stem), p.parent)]
    if not found:
        raise ChatTemplateError(f"{p}: holds no chat template")
    return found


def _with_specials(t: ChatTemplate, folder: Path) -> ChatTemplate:
    cfg = folder / "tokenizer_config.json"
    if not cfg.is_file():
        return t
    obj = _read_json(cfg)
    specials = hf_special_tokens(obj) if isinstance(obj, Mapping) else {}
    return ChatTemplate(t.source, specials, t.origin, t.name, t.adds)


def templates_for(tok: Tokenizer, spec: str | None = None) -> list[ChatTemplate]:
    """Every chat template known for ``tok`` (opened from ``spec``), the one to use first:
    the model's own (from the files beside it or inside it), then the built-in ChatML forms
    for OpenAI's vocabularies. Empty if there is none."""
    found: list[ChatTemplate] = []
    path = source_path(tok, spec)
    if path is not None:
        try:
            with open(path, "rb") as f:
                is_gguf = f.read(4) == GGUF_MAGIC
        except (IsADirectoryError, PermissionError):
            is_gguf = False
        if is_gguf:
            found += templates_in_gguf(path, tok)
        else:
            folder = path if path.is_dir() else path.parent
            found += templates_in_folder(folder, None if path.is_dir() else path)
    return found + builtin_templates(tok)


__all__ = [
    "SPECIAL_NAMES",
    "hf_special_tokens",
    "source_path",
    "template_from_file",
    "templates_for",
    "templates_in_folder",
    "templates_in_gguf",
]
