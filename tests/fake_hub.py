"""A local stand-in for the Hugging Face Hub, on 127.0.0.1, for tests that set ``HF_ENDPOINT`` to it.

It answers the routes ``huggingface_hub`` uses to open a model's files, with the headers it checks:

- ``GET /api/models/{repo}[/revision/{rev}]``: the model's commit (``sha``) and files (``siblings``);
- ``HEAD``/``GET /{repo}/resolve/{rev}/{path}``: a small file directly (``ETag``, ``X-Repo-Commit``,
  ``Content-Length``); a large ("LFS") file as the Hub does, by a 302 to a storage host of
  another origin with ``X-Linked-Etag`` (its sha256), ``X-Linked-Size`` and ``X-Repo-Commit``;
- the storage host (a second server) serves the bytes, and byte ranges (206) when asked;
- errors as the Hub sends them: ``X-Error-Code`` ``RepoNotFound`` (401 without a valid token),
  ``RevisionNotFound`` and ``EntryNotFound`` (404), ``GatedRepo`` (401 without a token, 403 with
  one that has not been granted access).

Every request is logged (``hub.requests``), so a test can tell that nothing reached the network.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

GOOD_TOKEN = "hf_test_token_with_access"


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = ""
    gated: bool = False
    private: bool = False
    branches: dict[str, str] = field(default_factory=dict)
    lfs_min: int = 10_000  # files from this size up are served as the Hub serves LFS files

    def __post_init__(self) -> None:
        if not self.commit:
            digest = hashlib.sha1(b"".join(sorted(self.files.values()))).hexdigest()
            self.commit = digest
        self.branches.setdefault("main", self.commit)

    def commit_of(self, rev: str) -> str | None:
        if rev in self.branches:
            return self.branches[rev]
        return rev if rev == self.commit else None


def git_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    """Two servers: the Hub (``endpoint``) and its storage host. Use as a context manager."""

    def __init__(self, repos: dict[str, Repo], slow: float = 0.0) -> None:
        """``slow``: seconds the storage host waits after each 64 KB it sends (a slow network)."""
        self.repos = repos
        self.slow = slow
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        self.blobs: dict[str, bytes] = {}
        self.lock = threading.Lock()
        self.hub = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(storage=False))
        self.storage = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(storage=True))
        self.hub.daemon_threads = self.storage.daemon_threads = True

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def storage_url(self) -> str:
        return f"http://127.0.0.1:{self.storage.server_address[1]}"

    def __enter__(self) -> FakeHub:
        for server in (self.hub, self.storage):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self.hub, self.storage):
            server.shutdown()
            server.server_close()

    def paths(self, method: str | None = None) -> list[str]:
        return [p for m, p, _ in self.requests if method is None or m == method]

    def _handler(self, storage: bool) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def _answer(self, body: bool) -> None:
                with hub.lock:
                    hub.requests.append((self.command, self.path, dict(self.headers)))
                path = urlsplit(self.path).path
                if storage:
                    self._storage(path, body)
                elif path.startswith("/api/models/"):
                    self._api(unquote(path[len("/api/models/") :]))
                elif "/resolve/" in path:
                    repo, _, rest = path.lstrip("/").partition("/resolve/")
                    rev, _, name = rest.partition("/")
                    self._resolve(unquote(repo), unquote(rev), unquote(name), body)
                else:
                    self._send(404, b"not found", {"X-Error-Code": "EntryNotFound"})

            # -- the Hub's answers ------------------------------------------------------------

            def _authorized(self) -> bool:
                return self.headers.get("Authorization", "") == f"Bearer {GOOD_TOKEN}"

            def _repo(self, repo_id: str) -> Repo | None:
                repo = hub.repos.get(repo_id)
                if repo is None or (repo.private and not self._authorized()):
                    code = 401 if not self.headers.get("Authorization") else 404
                    self._send(
                        code,
                        b'{"error":"Repository not found"}',
                        {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
                    )
                    return None
                return repo

            def _api(self, rest: str) -> None:
                repo_id, _, rev = rest.partition("/revision/")
                repo = self._repo(repo_id)
                if repo is None:
                    return
                commit = repo.commit_of(rev or "main")
                if commit is None:
                    self._send(404, b'{"error":"Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"})
                    return
                siblings = [
                    {"rfilename": n, "size": len(d), "blobId": git_sha(d)} for n, d in sorted(repo.files.items())
                ]
                info = {
                    "_id": "0" * 24,
                    "id": repo_id,
                    "modelId": repo_id,
                    "sha": commit,
                    "private": repo.private,
                    "gated": "manual" if repo.gated else False,
                    "disabled": False,
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                    "siblings": siblings,
                }
                self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"})

            def _resolve(self, repo_id: str, rev: str, name: str, body: bool) -> None:
                repo = self._repo(repo_id)
                if repo is None:
                    return
                commit = repo.commit_of(rev)
                if commit is None:
                    self._send(404, b"Invalid rev id", {"X-Error-Code": "RevisionNotFound"}, body)
                    return
                if repo.gated and not self._authorized():
                    code = 403 if self.headers.get("Authorization") else 401
                    msg = f"Access to model {repo_id} is restricted. You must have access to it and be authenticated."
                    self._send(code, msg.encode(), {"X-Error-Code": "GatedRepo", "X-Error-Message": msg}, body)
                    return
                data = repo.files.get(name)
                if data is None:
                    self._send(
                        404, b"Entry not found", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, body
                    )
                    return
                headers = {"X-Repo-Commit": commit}
                if len(data) >= repo.lfs_min:
                    sha256 = hashlib.sha256(data).hexdigest()
                    hub.blobs[sha256] = data
                    headers.update(
                        {
                            "ETag": f'"{git_sha(data)}"',
                            "X-Linked-Etag": f'"{sha256}"',
                            "X-Linked-Size": str(len(data)),
                            "Location": f"{hub.storage_url}/blobs/{sha256}?signature=test",
                        }
                    )
                    self._send(302, b"Found", headers, body)
                    return
                headers["ETag"] = f'"{git_sha(data)}"'
                self._send(200, data, headers, body, ranged=True)

            def _storage(self, path: str, body: bool) -> None:
                data = hub.blobs.get(path.rsplit("/", 1)[-1])
                if data is None:
                    self._send(404, b"no such blob", {}, body)
                    return
                self._send(200, data, {"ETag": f'"{hashlib.sha256(data).hexdigest()}"'}, body, ranged=True)

            def _send(
                self, code: int, data: bytes, headers: dict[str, str], body: bool = True, ranged: bool = False
            ) -> None:
                rng = self.headers.get("Range", "")
                if ranged and code == 200 and rng.startswith("bytes="):
                    first, _, last = rng[len("bytes=") :].partition("-")
                    start, end = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
                    headers = dict(headers, **{"Content-Range": f"bytes {start}-{end}/{len(data)}"})
                    code, data = 206, data[start : end + 1]
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body and storage and hub.slow:
                    for k in range(0, len(data), 1 << 16):
                        try:
                            self.wfile.write(data[k : k + (1 << 16)])
                        except OSError:  # the client went away (a cancelled download)
                            return
                        time.sleep(hub.slow)
                elif body:
                    self.wfile.write(data)

        return Handler
