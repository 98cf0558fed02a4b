"""Tokenizers from the Hugging Face Hub: the spec ``hf:OWNER/NAME[@REVISION]``.

A spec is resolved to files in the standard Hugging Face cache with ``huggingface_hub`` (the
library the ecosystem downloads with), so a model fetched here is found by every other tool and
the other way round. The environment is the library's: ``HF_HOME``/``HF_HUB_CACHE`` (where),
``HF_ENDPOINT`` (from where), ``HF_TOKEN`` (as whom; else the token of ``hf auth login``) and
``HF_HUB_OFFLINE`` (no network: the cache only). They are read at each call, not at import.

What is fetched, in order of preference (the first kind the repository holds):

- ``tokenizer.json``, with the files its chat template may be in (``tokenizer_config.json``,
  ``chat_template.jinja``, ``chat_template.json``);
- ``tekken.json`` (Mistral), a ``tokenizer.model``, ``vocab.json`` + ``merges.txt``, a
  ``*.tiktoken`` rank file;
- a GGUF model's metadata only: the front of the file is read with HTTP range requests until
  its key/value section is complete, and kept as a small GGUF file without tensors (in
  bpeinspect's own cache, beside the commit it came from), never the gigabytes of weights.

A spec whose revision is a commit already in the cache opens without the network; any other
asks the Hub which commit the revision is now (so ``info`` can say which one was read), and
falls back to the cached one when the Hub cannot be reached. Every failure is one
:class:`~bpeinspect.core.errors.VocabularyError` line.

>>> parse_spec("hf:Qwen/Qwen3-8B@main")
HubSpec(repo='Qwen/Qwen3-8B', revision='main')
>>> parse_spec("tokenizer.json") is None
True
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypedDict, Unpack, cast

from bpeinspect.core.errors import Cancelled, VocabularyError
from bpeinspect.core.io.atomic import atomic_write
from bpeinspect.core.io.discover import cache_dir, hf_cache_dir
from bpeinspect.core.limits import human_size

PREFIX = "hf:"
DEFAULT_ENDPOINT = "https://huggingface.co"
TIMEOUT = 10.0  # seconds for one request to the Hub (a failure is reported well within 30 s)
LOGIN_HINT = "set HF_TOKEN or run `hf auth login`"

# what a repository may hold, in order of preference: (files that must all be there, extras taken along)
CHAT_FILES = ("tokenizer_config.json", "chat_template.jinja", "chat_template.json")
KINDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("tokenizer.json",), CHAT_FILES),
    (("tekken.json",), ()),
    (("tokenizer.model",), CHAT_FILES),
    (("vocab.json", "merges.txt"), CHAT_FILES),
)
SUBFOLDERS = ("", "tokenizer/")  # diffusion pipelines keep their text tokenizer in tokenizer/
WHAT_IS_READ = "tokenizer.json, tekken.json, tokenizer.model, vocab.json + merges.txt, *.tiktoken, *.gguf"

GGUF_FIRST_READ = 1 << 20  # bytes asked for first; then twice as many each time
GGUF_MAX_HEADER = 256 << 20  # a metadata section bigger than this is refused

_REPO = re.compile(r"(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}")
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class HubSpec:
    """A parsed ``hf:`` spec; ``revision`` None means the repository's default branch."""

    repo: str
    revision: str | None = None

    def __str__(self) -> str:
        return f"{PREFIX}{self.repo}" + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class HubFiles:
    """What a spec resolved to: ``path`` is what :func:`~bpeinspect.core.io.formats.load_path` opens."""

    repo: str
    revision: str  # as asked ("main" when none was)
    commit: str  # the commit the files are from
    path: Path
    files: tuple[str, ...]  # the repository's files that were taken
    from_cache: bool  # True if nothing was downloaded


def is_hub_spec(spec: object) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


def parse_spec(spec: str) -> HubSpec | None:
    """The repository and revision of an ``hf:`` spec; None for any other spec.

    >>> parse_spec("hf:gpt2"), str(parse_spec("hf:a/b@v1.0"))
    (HubSpec(repo='gpt2', revision=None), 'hf:a/b@v1.0')
    """
    if not is_hub_spec(spec):
        return None
    body = spec[len(PREFIX) :].strip()
    repo, at, revision = body.partition("@")
    repo = repo.strip().strip("/")
    if not _REPO.fullmatch(repo) or ".." in repo or (at and not revision.strip()):
        raise VocabularyError(f"{spec}: not a Hugging Face repository (write hf:OWNER/NAME or hf:OWNER/NAME@REVISION)")
    return HubSpec(repo, revision.strip() or None)


# -- the environment, read at each call -------------------------------------------------------------


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _token() -> str | None:
    return os.environ.get("HF_TOKEN") or None  # None: huggingface_hub's own (``hf auth login``)


def _repo_folder(repo: str) -> str:
    return "models--" + repo.replace("/", "--")


def header_cache_dir() -> Path:
    """Where GGUF metadata fetched from the Hub is kept (bpeinspect's cache: these are not the
    repository's files, so they stay out of the Hugging Face cache)."""
    return cache_dir() / "hub"


# -- the cache ---------------------------------------------------------------------------------------


def _cached_commit(spec: HubSpec) -> str | None:
    """The commit the cache knows for ``spec``'s revision, if any."""
    rev = spec.revision or "main"
    if _COMMIT.fullmatch(rev):
        return rev
    for root in (hf_cache_dir(), header_cache_dir()):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            commit = (root / _repo_folder(spec.repo) / "refs" / rev).read_text("utf-8").strip()
            if _COMMIT.fullmatch(commit):
                return commit
    if spec.revision is None:  # no record of the default branch (another tool's download): the newest snapshot
        with contextlib.suppress(OSError):
            snapshots = [p for p in (hf_cache_dir() / _repo_folder(spec.repo) / "snapshots").iterdir() if p.is_dir()]
            if snapshots:
                return max(snapshots, key=lambda p: p.stat().st_mtime).name
    return None


def _choose(names: set[str]) -> tuple[list[str], str] | None:
    """The files to take from a repository holding ``names``, and the one to open."""
    for sub in SUBFOLDERS:
        for needed, extras in KINDS:
            if all(sub + n in names for n in needed):
                take = [sub + n for n in needed] + [sub + e for e in extras if sub + e in names]
                return take, sub + needed[0]
        ranks = sorted(n for n in names if n.startswith(sub) and "/" not in n[len(sub) :] and n.endswith(".tiktoken"))
        if ranks:
            return [ranks[0]], ranks[0]
    ggufs = [n for n in names if n.lower().endswith(".gguf") and "mmproj" not in n.lower()]
    if ggufs:
        return [], min(ggufs, key=lambda n: (n.count("/"), n))  # metadata only, see _fetch_gguf_header
    return None


def _from_cache(spec: HubSpec) -> HubFiles | None:
    """The files of ``spec`` if the cache holds a tokenizer for it (no network)."""
    commit = _cached_commit(spec)
    if commit is None:
        return None
    rev = spec.revision or "main"
    snapshot = hf_cache_dir() / _repo_folder(spec.repo) / "snapshots" / commit
    names: set[str] = set()
    with contextlib.suppress(OSError):
        for p in snapshot.rglob("*"):
            if p.is_file():
                names.add(p.relative_to(snapshot).as_posix())
    chosen = _choose(names)  # a whole GGUF model downloaded by another tool opens too (its metadata is read)
    if chosen is not None:
        take, main = chosen
        return HubFiles(spec.repo, rev, commit, snapshot / main, tuple(take) or (main,), True)
    headers = header_cache_dir() / _repo_folder(spec.repo) / commit
    with contextlib.suppress(OSError):
        for p in sorted(headers.rglob("*.gguf")):
            return HubFiles(spec.repo, rev, commit, p, (p.relative_to(headers).as_posix(),), True)
    return None


def is_cached(repo: str) -> bool:
    """True if the cache holds a tokenizer of ``repo`` (for the picker's marks; no network)."""
    try:
        return _from_cache(HubSpec(repo)) is not None
    except (OSError, ValueError):
        return False


def cached_repos() -> list[str]:
    """The repositories whose tokenizer the cache holds (the Hugging Face cache, and GGUF
    metadata fetched before), sorted; reads folder names only, no file is parsed."""
    found: set[str] = set()
    for root in (hf_cache_dir(), header_cache_dir()):
        with contextlib.suppress(OSError):
            for folder in root.glob("models--*"):
                repo = folder.name[len("models--") :].replace("--", "/")
                if repo not in found and is_cached(repo):
                    found.add(repo)
    return sorted(found, key=str.lower)


# -- fetching ----------------------------------------------------------------------------------------


def _stop_check(should_stop: Callable[[], bool] | None) -> Callable[[], None]:
    def check() -> None:
        if should_stop is not None and should_stop():
            raise Cancelled()

    return check


def _byte_counter(
    check: Callable[[], None],
    progress: Callable[[int, int], None] | None,
    shown: Callable[[int], tuple[int, int]],
) -> Callable[[int], None]:
    """What a download calls with each slice's byte count: it gives a stop its chance
    (``check`` raises Cancelled) and reports ``shown(bytes so far)`` to ``progress``."""
    done = 0

    def on_bytes(n: int) -> None:
        nonlocal done
        check()
        done += n
        if progress is not None:
            progress(*shown(done))

    return on_bytes


def _progress_bar(on_bytes: Callable[[int], None]) -> type:
    """A silent tqdm class that hands each update to ``on_bytes`` (which may raise Cancelled)."""
    from tqdm.auto import tqdm

    class Bar(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            on_bytes(int(n or 0))
            return super().update(n)

    return Bar


def fetch(
    spec: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> HubFiles:
    """The tokenizer files of an ``hf:`` spec, downloaded into the cache if they are not there.

    ``progress(done, total)`` is called with bytes as files arrive; ``should_stop`` stops a
    download with :class:`~bpeinspect.core.errors.Cancelled`."""
    parsed = parse_spec(spec)
    if parsed is None:
        raise VocabularyError(f"{spec}: not an {PREFIX} spec")
    check = _stop_check(should_stop)
    cached = _from_cache(parsed) if offline() or (parsed.revision and _COMMIT.fullmatch(parsed.revision)) else None
    if cached is not None:
        return cached
    if offline():
        raise VocabularyError(
            f"{parsed}: not in the Hugging Face cache ({hf_cache_dir()}), and HF_HUB_OFFLINE is set, so it cannot be downloaded"
        )
    try:
        import huggingface_hub  # noqa: F401  (a regular dependency; imported here: it costs ~0.3 s)
    except ImportError:
        raise VocabularyError(f"{parsed}: opening models from the Hub needs the huggingface_hub package") from None
    try:
        return _download(parsed, progress, check)
    except Cancelled:
        raise
    except VocabularyError:
        raise
    except Exception as exc:
        why = _explain(parsed, exc)
        if why is None:  # the Hub could not be reached: the cache may do
            cached = _from_cache(parsed)
            if cached is not None:
                return cached
            raise VocabularyError(
                f"{parsed}: cannot reach {endpoint()} ({_short(exc)}), and the model is not in the Hugging Face cache"
            ) from None
        raise VocabularyError(why) from None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def _explain(spec: HubSpec, exc: BaseException) -> str | None:
    """One line for a failure of the Hub; None if the Hub was not reached at all."""
    from huggingface_hub import errors

    where = endpoint()
    if isinstance(exc, errors.GatedRepoError):
        return (
            f"{spec}: the model is gated: accept its licence on {where}/{spec.repo} with your account, "
            f"then {LOGIN_HINT}"
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return f"{spec}: {spec.repo} has no revision {spec.revision!r}"
    if isinstance(exc, errors.RepositoryNotFoundError):
        return f"{spec}: no such repository on {where} (if it is private: {LOGIN_HINT})"
    if isinstance(
        exc, errors.EntryNotFoundError | getattr(errors, "RemoteEntryNotFoundError", errors.EntryNotFoundError)
    ):
        return f"{spec}: a file of the repository went missing while it was read ({_short(exc)})"
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return f"{spec}: {where} refused access (HTTP {status}); {LOGIN_HINT} with a token that may read it"
        if status is not None and status < 500 and status != 429:
            return f"{spec}: {where} answered HTTP {status}: {_short(exc).splitlines()[0]}"
        return None
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return f"{spec}: not in the Hugging Face cache, and HF_HUB_OFFLINE is set, so it cannot be downloaded"
    if isinstance(exc, OSError) and not _is_network_error(exc):
        return f"{spec}: cannot write to the Hugging Face cache {hf_cache_dir()}: {exc.strerror or exc}"
    if _is_network_error(exc):
        return None
    return f"{spec}: {type(exc).__name__}: {_short(exc)}"


def _is_network_error(exc: BaseException) -> bool:
    from huggingface_hub import errors

    if isinstance(exc, errors.LocalEntryNotFoundError | errors.FileMetadataError):
        return True
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(
        names
        & {
            "ConnectError",
            "TimeoutException",
            "NetworkError",
            "ProxyError",
            "ConnectionError",
            "Timeout",
            "RemoteProtocolError",
            "TransportError",
        }
    )


DOWNLOAD_SLICE = 1 << 20  # bytes huggingface_hub reads between two progress updates (its default: 10 MB)


def _download(spec: HubSpec, progress: Callable[[int, int], None] | None, check: Callable[[], None]) -> HubFiles:
    from huggingface_hub import HfApi, constants, hf_hub_download

    # huggingface_hub reports progress (and so gives a chance to stop) once per slice it reads;
    # at 10 MB a tokenizer.json is one or two slices: no progress to show, and a stop asked for
    # comes too late to matter. This process downloads only tokenizers, so a smaller slice suits it.
    if getattr(constants, "DOWNLOAD_CHUNK_SIZE", 0) > DOWNLOAD_SLICE:
        constants.DOWNLOAD_CHUNK_SIZE = DOWNLOAD_SLICE

    where, token, cache = endpoint(), _token(), str(hf_cache_dir())
    rev = spec.revision or "main"
    check()
    info = HfApi(endpoint=where, token=token).model_info(spec.repo, revision=rev, timeout=TIMEOUT, files_metadata=True)
    commit = info.sha
    if not commit or not _COMMIT.fullmatch(commit):
        raise VocabularyError(f"{spec}: {where} did not say which commit {rev!r} is")
    sizes = {s.rfilename: (s.size or 0) for s in info.siblings or ()}
    chosen = _choose(set(sizes))
    if chosen is None:
        raise VocabularyError(f"{spec}: the repository holds no tokenizer file bpeinspect reads ({WHAT_IS_READ})")
    take, main = chosen
    if not take:  # a GGUF model: its metadata only
        path = _fetch_gguf_header(spec, commit, main, size=sizes.get(main, 0), progress=progress, check=check)
        _remember_ref(spec, rev, commit)
        return HubFiles(spec.repo, rev, commit, path, (main,), False)
    total = sum(sizes.get(n, 0) for n in take)
    bar = _progress_bar(_byte_counter(check, progress, lambda done: (min(done, total), total)))
    paths: dict[str, Path] = {}
    for k, name in enumerate(take):
        check()
        # the first download is of the revision asked for, which records it (refs/REV) in the
        # cache for offline use; the others are of the commit it resolved to
        got = hf_hub_download(
            spec.repo,
            name,
            revision=rev if k == 0 else commit,
            cache_dir=cache,
            endpoint=where,
            token=token,
            etag_timeout=TIMEOUT,
            tqdm_class=bar,
        )
        paths[name] = Path(got)
        if k == 0:
            commit = Path(got).relative_to(Path(cache).resolve() / _repo_folder(spec.repo) / "snapshots").parts[0]
    if progress is not None:
        progress(total, total)
    return HubFiles(spec.repo, rev, commit, paths[main], tuple(take), False)


def _remember_ref(spec: HubSpec, rev: str, commit: str) -> None:
    if rev != commit:
        ref = header_cache_dir() / _repo_folder(spec.repo) / "refs" / rev
        with contextlib.suppress(OSError):
            ref.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(ref, commit, through=False)


# -- a GGUF's metadata over HTTP ranges --------------------------------------------------------------


class _RangeFile:
    """A read-only file over HTTP range requests, read front to back (what the GGUF metadata
    reader needs); each request asks for at least twice as much as the one before."""

    def __init__(self, url: str, headers: dict[str, str], size: int, on_bytes: Callable[[int], None]) -> None:
        self.url, self.headers, self.size, self.on_bytes = url, headers, size, on_bytes
        self.data = bytearray()
        self.pos = 0
        self.want = GGUF_FIRST_READ

    def read(self, n: int = -1) -> bytes:
        end = self.size if n < 0 else min(self.pos + n, self.size)
        if end > len(self.data):
            self._get(max(end, len(self.data) + self.want))
            self.want *= 2
        out = bytes(self.data[self.pos : end])
        self.pos += len(out)
        return out

    def _get(self, end: int) -> None:
        from huggingface_hub import get_session
        from huggingface_hub.utils import hf_raise_for_status

        end = min(end, self.size, GGUF_MAX_HEADER)
        if end <= len(self.data):
            raise VocabularyError(f"{self.url}: the GGUF metadata runs past {human_size(GGUF_MAX_HEADER)}; refusing it")
        headers = dict(self.headers, Range=f"bytes={len(self.data)}-{end - 1}")
        r = get_session().get(self.url, headers=headers, timeout=TIMEOUT, follow_redirects=True)
        hf_raise_for_status(r)
        body = r.content
        if r.status_code == 200:  # the server ignored the range: take what was asked for
            body = body[len(self.data) : end]
        elif r.status_code != 206:
            raise VocabularyError(f"{self.url}: answered HTTP {r.status_code} to a range request")
        if not body:
            raise VocabularyError(f"{self.url}: the server sent no data for a range request")
        self.data += body
        self.on_bytes(len(body))


def _fetch_gguf_header(
    spec: HubSpec,
    commit: str,
    name: str,
    *,
    size: int,
    progress: Callable[[int, int], None] | None,
    check: Callable[[], None],
) -> Path:
    """Read the metadata of the GGUF file ``name`` at ``commit`` and keep it as a GGUF file
    without tensors (the front of the file, its tensor count set to 0)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers

    from bpeinspect.core.io.formats.gguf import MAGIC, read_metadata

    target = header_cache_dir() / _repo_folder(spec.repo) / commit / name
    if target.is_file():
        return target
    where, token = endpoint(), _token()
    url = hf_hub_url(spec.repo, name, revision=commit, endpoint=where)
    meta = get_hf_file_metadata(url, token=token, timeout=TIMEOUT, endpoint=where)
    size = meta.size or size
    headers = build_hf_headers(token=token)
    if meta.location != url and not meta.location.startswith(where):
        headers.pop("authorization", None)  # a signed CDN address: the token stays with the Hub
    # the header's size is not known before it is read: at most GGUF_MAX_HEADER, or what has come
    shown = _byte_counter(check, progress, lambda done: (done, max(done, min(size, GGUF_MAX_HEADER))))
    remote = _RangeFile(meta.location, headers, size, shown)
    # the reader only calls read(); it raises VocabularyError if this is no GGUF
    read_metadata(cast(IO[bytes], remote), Path(name), size, wanted=frozenset())
    data = remote.data
    if data[:4] != MAGIC:
        raise VocabularyError(f"{spec}: {name} is not a GGUF file")
    data[8:16] = bytes(8)  # no tensors: the file ends after its metadata
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, bytes(data), through=False)
    return target


def describe(files: HubFiles) -> str:
    """``REPO at COMMIT``, as ``info`` and the window's tooltips say where a tokenizer came from."""
    asked = "" if files.revision in ("main", files.commit) else f" ({files.revision})"
    return f"{files.repo} at commit {files.commit}{asked}"


@dataclass(frozen=True)
class HubLoad:
    """What :func:`load_resolved` gives: the tokenizer, and the files its spec resolved to."""

    tokenizer: Any
    files: HubFiles


def load_resolved(
    spec: str,
    *,
    pattern: Any = None,
    special_tokens: list[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> HubLoad:
    """The tokenizer of an ``hf:`` spec (fetched with :func:`fetch`), with the user's split rule
    and special tokens if given (see :func:`~bpeinspect.core.io.formats.load_with`), and what the
    spec resolved to (the repository, the commit, the files taken); the tokenizer's ``source``
    names the repository and the commit."""
    from bpeinspect.core.io.formats import load_with

    files = fetch(spec, progress=progress, should_stop=should_stop)
    tok = load_with(files.path, pattern=pattern, special_tokens=special_tokens, should_stop=should_stop)
    tok.source = f"{tok.source} (from {PREFIX}{describe(files)})"
    return HubLoad(tok, files)


class LoadOptions(TypedDict, total=False):
    """The options of :func:`load_resolved`, which :func:`load` passes on."""

    pattern: Any
    special_tokens: list[str] | None
    progress: Callable[[int, int], None] | None
    should_stop: Callable[[], bool] | None


def load(spec: str, **options: Unpack[LoadOptions]) -> Any:
    """The tokenizer of :func:`load_resolved`, without what its spec resolved to."""
    return load_resolved(spec, **options).tokenizer
