"""The catalog of tokenizers on this machine, for the GUI's picker and ``bpeinspect-cli list``.

Sources: the built-ins, tiktoken's download cache, the Hugging Face hub cache (byte-level
BPE ``tokenizer.json`` files) and the recently opened files, which are remembered in a
small JSON file under the user's config folder (``BPEINSPECT_CONFIG_DIR`` overrides it).

>>> any(e.name == "cl100k_base" for e in discover(include_caches=False))
True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from bpeinspect.core.io.atomic import atomic_write, read_state
from bpeinspect.core.io.builtins import BUILTINS

RECENT_LIMIT = 20
RECENT_FILE = "recent.json"
CONFIG_ENV = "BPEINSPECT_CONFIG_DIR"
CACHE_ENV = "BPEINSPECT_CACHE_DIR"
_BUILTIN_SIZES = {"r50k_base": 50257, "p50k_base": 50281, "cl100k_base": 100277, "o200k_base": 200019}
_MAX_SCAN_FILE = 64 << 20


@dataclass(frozen=True)
class CatalogEntry:
    """One tokenizer that can be opened: ``spec`` is what ``load_tokenizer`` takes."""

    name: str
    source: str  # "built-in", "tiktoken cache", "Hugging Face cache", "recent"
    spec: str
    vocab_size: int | None = None
    description: str = ""


def config_dir() -> Path:
    """bpeinspect's per-user config folder (not created here)."""
    return _user_dir(CONFIG_ENV, ("APPDATA", "AppData/Roaming"), "Application Support", ("XDG_CONFIG_HOME", ".config"))


def cache_dir() -> Path:
    """bpeinspect's per-user cache folder, e.g. for bundled texts extracted to files (not created here)."""
    return _user_dir(CACHE_ENV, ("LOCALAPPDATA", "AppData/Local"), "Caches", ("XDG_CACHE_HOME", ".cache"))


def _user_dir(own_env: str, windows: tuple[str, str], macos: str, xdg: tuple[str, str]) -> Path:
    # ``own_env`` overrides; else the platform's folder: (variable, default under home) pairs
    env = os.environ.get(own_env)
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get(windows[0]) or Path.home() / windows[1])
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / macos
    else:
        base = Path(os.environ.get(xdg[0]) or Path.home() / xdg[1])
    return base / "bpeinspect"


def _recent_path() -> Path:
    return config_dir() / RECENT_FILE


def recent_files() -> list[CatalogEntry]:
    """Recently opened vocabulary files that still exist, newest first (at most :data:`RECENT_LIMIT`)."""
    raw = read_state(_recent_path())
    try:
        data = json.loads(raw) if raw is not None else []
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested too deeply
        return []
    out: list[CatalogEntry] = []
    for item in data if isinstance(data, list) else []:
        if len(out) >= RECENT_LIMIT:
            break
        if not isinstance(item, dict) or not isinstance(item.get("spec"), str):
            continue
        if not Path(item["spec"]).exists():
            continue
        size = item.get("vocab_size")
        out.append(
            CatalogEntry(
                str(item.get("name") or Path(item["spec"]).name),
                "recent",
                item["spec"],
                size if type(size) is int else None,
                str(item.get("description", "")),
            )
        )
    return out


def add_recent(path: str | os.PathLike[str], name: str = "", vocab_size: int | None = None) -> None:
    """Put ``path`` at the top of the recent-files list (best effort: never raises OSError).

    Only files and folders are remembered: a pipe (``<(zcat x.gz)``) cannot be opened again."""
    if not (os.path.isfile(path) or os.path.isdir(path)):
        return
    spec = str(Path(path).resolve())
    entry = CatalogEntry(name or Path(spec).name, "recent", spec, vocab_size, time.strftime("%Y-%m-%d %H:%M"))
    with contextlib.suppress(OSError):
        _recent_path().parent.mkdir(parents=True, exist_ok=True)
        with _locked(_recent_path()):  # read, change and write as one step: another process's entry is kept
            entries = [entry, *(e for e in recent_files() if e.spec != spec)]
            text = json.dumps([asdict(e) for e in entries[:RECENT_LIMIT]], indent=1)
            atomic_write(_recent_path(), text, through=False)  # a pipe or a device there is replaced


@contextlib.contextmanager
def _locked(path: Path, wait: float = 5.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s lock file (``.NAME.lock`` beside it) while the block
    runs; best effort: where there is no lock (no ``fcntl``, a lock file that is not a regular
    file, ``wait`` seconds gone) the block runs without one."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path.with_name(f".{path.name}.lock"), flags | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        yield
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def clear_recent() -> None:
    with contextlib.suppress(OSError):
        _recent_path().unlink()


def builtins() -> list[CatalogEntry]:
    return [
        CatalogEntry(name, "built-in", name, _BUILTIN_SIZES.get(name), spec.description)
        for name, spec in BUILTINS.items()
    ]


def tiktoken_cache_dir() -> Path:
    """Where tiktoken keeps downloaded files (its own rule: env vars, else the temp folder)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def tiktoken_cache() -> list[CatalogEntry]:
    """Rank files in tiktoken's cache, named when their sha256 is a known file's."""
    from bpeinspect.core.io.formats.tiktoken import KNOWN, looks_like

    folder = tiktoken_cache_dir()
    out = []
    with contextlib.suppress(OSError):
        for p in sorted(folder.iterdir()):
            try:
                if not p.is_file() or p.stat().st_size > _MAX_SCAN_FILE:
                    continue
                data = p.read_bytes()
            except OSError:
                continue
            if not looks_like(data[:200]):
                continue
            known = KNOWN.get(hashlib.sha256(data).hexdigest())
            name = known.name if known else p.name
            size = _BUILTIN_SIZES.get(name) if known else data.count(b"\n") + (not data.endswith(b"\n"))
            out.append(CatalogEntry(name, "tiktoken cache", str(p), size, "tiktoken rank file"))
    return out


def hf_cache_dir() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "huggingface"
    )
    return Path(home) / "hub"


_hf_sizes: dict[tuple[str, float, int], int | None] = {}


def _hf_vocab_size(p: Path) -> int | None:
    """The number of ids in a byte-level BPE tokenizer.json, or None if it is not one."""
    st = p.stat()
    key = (str(p), st.st_mtime, st.st_size)
    if key not in _hf_sizes:
        size = None
        with contextlib.suppress(OSError, ValueError, RecursionError, MemoryError):
            if st.st_size <= _MAX_SCAN_FILE:
                size = _bpe_ids(json.loads(p.read_bytes()))
        _hf_sizes[key] = size
    return _hf_sizes[key]


def _bpe_ids(obj: object) -> int | None:
    """The number of ids of a parsed byte-level BPE tokenizer.json; None for anything else
    (another model, or a file that is not a tokenizer.json at all, such as ``{}``)."""
    if not isinstance(obj, dict):
        return None
    model = obj.get("model")
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE" or model.get("byte_fallback"):
        return None
    vocab, added = model.get("vocab"), obj.get("added_tokens") or []
    if not isinstance(vocab, dict) or not vocab or not isinstance(added, list):
        return None
    ids = [*vocab.values(), *(t.get("id") for t in added if isinstance(t, dict))]
    return max(ids) + 1 if all(type(i) is int for i in ids) else None


def hf_cache() -> list[CatalogEntry]:
    """Byte-level BPE ``tokenizer.json`` files in the Hugging Face hub cache."""
    out = []
    folder = hf_cache_dir()
    with contextlib.suppress(OSError):
        for repo in sorted(folder.glob("models--*")):
            name = repo.name[len("models--") :].replace("--", "/")
            for tj in sorted(repo.glob("snapshots/*/tokenizer.json")):
                with contextlib.suppress(OSError):
                    size = _hf_vocab_size(tj)
                    if size is not None:
                        out.append(
                            CatalogEntry(name, "Hugging Face cache", str(tj), size, f"snapshot {tj.parent.name[:8]}")
                        )
                        break
    return out


def discover(include_caches: bool = True) -> list[CatalogEntry]:
    """Every tokenizer bpeinspect can find: built-ins, caches, then recent files."""
    out = builtins()
    if include_caches:
        out += tiktoken_cache() + hf_cache()
    out += recent_files()
    return out
