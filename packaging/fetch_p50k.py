"""Build ``resources/vocabs/p50k_base.tiktoken.gz`` from the npm package ``tiktoken``.

    python packaging/fetch_p50k.py                          # npm pack tiktoken@1.0.22, rebuild
    python packaging/fetch_p50k.py --tarball tiktoken-1.0.22.tgz

The npm package (MIT) ships OpenAI's p50k_base ranks in ``encoders/p50k_base.json``: its
``bpe_ranks`` holds lines of ``! FIRST_RANK TOKEN TOKEN ...`` (base64 tokens whose ranks follow
on from FIRST_RANK). This script fetches the tarball with the ordinary npm client, checks it
against the pinned sha512 (the registry's ``integrity``), writes the ranks as a ``.tiktoken``
file and checks that file against the sha256 tiktoken itself checks for ``p50k_base.tiktoken``,
so the shipped file is byte for byte the one tiktoken downloads. Nothing here runs at
application time; its output is committed.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ("tiktoken@1.0.22", "sha512-PKvy1rVF1RibfF3JlXBSP0Jrcw2uq3yXdgcEXtKTYn3QJ/cBRBHDnrJ5jHky+MENZ6DIPwNUGWpkVx+7joCpNA==")
MEMBER = "package/encoders/p50k_base.json"
TIKTOKEN_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
OUT = ROOT / "resources" / "vocabs" / "p50k_base.tiktoken.gz"


def ranks_file(encoder: dict) -> bytes:
    """The ``.tiktoken`` text of an npm ``tiktoken`` encoder's ``bpe_ranks``."""
    ranks: dict[bytes, int] = {}
    for line in encoder["bpe_ranks"].split("\n"):
        if not line:
            continue
        _marker, first, *tokens = line.split(" ")
        for i, token in enumerate(tokens):
            ranks[base64.b64decode(token)] = int(first) + i
    ordered = sorted(ranks.items(), key=lambda kv: kv[1])
    return b"".join(base64.b64encode(t) + b" " + str(r).encode() + b"\n" for t, r in ordered)


def _pack(spec: str, folder: Path) -> Path:
    subprocess.run(["npm", "pack", spec, "--pack-destination", str(folder), "--silent"], check=True)
    return next(folder.glob("*.tgz"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tarball", type=Path, help="an already fetched tiktoken-1.0.22.tgz")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball or _pack(PACKAGE[0], Path(tmp))
        data = tarball.read_bytes()
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        if integrity != PACKAGE[1]:
            sys.exit(f"{tarball}: integrity {integrity} is not the pinned {PACKAGE[1]}")
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            member = t.extractfile(MEMBER)
            assert member is not None
            encoder = json.load(member)
    text = ranks_file(encoder)
    digest = hashlib.sha256(text).hexdigest()
    if digest != TIKTOKEN_SHA256:
        sys.exit(f"the ranks rebuilt from {PACKAGE[0]} have sha256 {digest}, not tiktoken's {TIKTOKEN_SHA256}")
    OUT.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text):,} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
