"""Every limit bpeinspect sets on what it reads, in one place (the CLI and the GUI share them).

A hostile or careless file must end in a clear error, never in minutes of work, gigabytes of
memory or a crash. Real vocabularies sit far below these limits: the largest have about
262,000 tokens of at most a few hundred bytes, in files of tens of MB.

The checks read these names at call time, so a test can lower them with ``monkeypatch``.
"""

from __future__ import annotations

from typing import Any

# -- vocabulary files ----------------------------------------------------------------------------------
MAX_IDS = 1 << 21  # every token id is below this (2,097,152), so no file holds more tokens
MAX_TOKEN_BYTES = 1 << 16  # bytes of one token (the longest real ones are a few hundred)
MAX_VOCAB_FILE = 256 << 20  # bytes of a vocabulary file, or of what a .gz expands to
MAX_METADATA_ITEMS = 1 << 23  # entries of one GGUF metadata array (tokens, merges, scores, ...)

# -- text the command line reads -----------------------------------------------------------------------
MAX_INPUT = 256 << 20  # bytes of one text to encode or train on (a file, a pipe, standard input)

# -- split patterns ------------------------------------------------------------------------------------
# A split pattern gets this long on a text (seconds plus seconds per character) before it is
# stopped: a pattern that backtracks catastrophically, such as (a+)+$, would otherwise run for
# hours. The built-in patterns split far faster than this allows.
SPLIT_SECONDS = 2.0
SPLIT_SECONDS_PER_CHAR = 20e-6


def split_timeout(n_chars: int) -> float:
    """The seconds a split pattern may take on a text of ``n_chars`` characters.

    >>> split_timeout(0), split_timeout(1_000_000)
    (2.0, 22.0)
    """
    return SPLIT_SECONDS + n_chars * SPLIT_SECONDS_PER_CHAR


def human_size(n_bytes: int) -> str:
    """A byte count as every message and label writes it (binary units, one decimal where it
    is not whole).

    >>> human_size(256 << 20), human_size(1536), human_size(1000), human_size(3 << 30)
    ('256 MB', '1.5 KB', '1,000 bytes', '3 GB')
    """
    if n_bytes < 1024:
        return f"{n_bytes:,} bytes"
    size, unit = n_bytes / 1024, "KB"
    for bigger in ("MB", "GB"):
        if round(size, 1) < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:,.1f}".removesuffix(".0") + f" {unit}"


def read_at_most(f: Any, limit: int, chunk: int = 1 << 20) -> bytes:
    """Up to ``limit + 1`` bytes of the binary stream ``f`` (one more than allowed tells the
    caller it was too much), read in chunks: ``f.read(limit + 1)`` would set aside the whole
    limit at once, and a pipe or ``/dev/zero`` has no size to ask for.

    >>> import io
    >>> len(read_at_most(io.BytesIO(b"x" * 10), 4, chunk=3)), len(read_at_most(io.BytesIO(b"xy"), 4))
    (5, 2)
    """
    parts: list[bytes] = []
    total = 0
    while total <= limit:
        part = f.read(min(chunk, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)
