"""Helpers for setting up a training: what is in a corpus, how a pattern splits, and
vocabularies of several sizes from one run.

>>> detect_scripts("Hello мир, hello world")
[('Latin', 0.83), ('Cyrillic', 0.17)]
>>> preview_split("gpt4", "Hello world!!")
['Hello', ' world', '!!']
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import regex

from bpeinspect.core.scripts import NO_SCRIPT, script_counts, script_names
from bpeinspect.core.split.rules import PatternError, compile_pattern, resolve_rule
from bpeinspect.core.text import display_bytes
from bpeinspect.core.tokenizer import Tokenizer
from bpeinspect.core.train.corpus import CorpusError, scan_corpus, skipped_counts
from bpeinspect.core.train.engine import HFVocabulary
from bpeinspect.core.train.filefilter import FileFilter
from bpeinspect.core.train.run import TrainedMerge, merges_tokenizer

__all__ = [
    "CorpusEntry",
    "detect_scripts",
    "format_merge",
    "merges_tokenizer",
    "parse_sizes",
    "parse_special_tokens",
    "preview_split",
    "prefix_tokenizer",
    "summarize_path",
]

SAMPLE_BYTES = 1 << 16  # read at most this much of each file for the summary
SAMPLE_FILES = 64  # and sample at most this many files of a folder


def detect_scripts(text: str, min_share: float = 0.02) -> list[tuple[str, float]]:
    """The scripts of ``text``'s letters (:func:`~bpeinspect.core.scripts.char_script`) with
    their share (2 decimals), largest first; scripts under ``min_share`` are left out, letters
    of no script (Common, Inherited, Unknown) count as "Other".

    >>> detect_scripts("日本語とにほんご 123")
    [('Hiragana', 0.62), ('Han', 0.38)]
    """
    found = script_counts(text)
    letters = found.total()
    if not letters:
        return []
    counts = {name: found[name] for name in script_names() if found[name]}  # the most common first
    other = sum(found[name] for name in NO_SCRIPT)
    if other > 0:
        counts["Other"] = other
    out = [(k, round(v / letters, 2)) for k, v in counts.items() if v / letters >= min_share]
    return sorted(out, key=lambda kv: -kv[1])


@dataclass
class CorpusEntry:
    """One corpus file or folder as the user added it: how many files, bytes, which scripts,
    and the first problem found (a file that is not UTF-8 text), if any."""

    path: Path
    files: int
    size: int
    scripts: list[tuple[str, float]] = field(default_factory=list)
    problem: str | None = None  # what stops training on it (a file given by name that is not text)
    skipped: int = 0  # files (and folders) a folder's scan left out
    skipped_by: dict[str, int] = field(default_factory=dict)  # how many for each reason
    notes: list[str] = field(default_factory=list)  # files in a folder a run will skip, and why

    @property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    def scripts_text(self) -> str:
        """E.g. ``"Latin 80%, Cyrillic 20%"``."""
        return ", ".join(f"{name} {share:.0%}" for name, share in self.scripts) or "—"


def summarize_path(
    path: str | os.PathLike[str],
    sample_bytes: int = SAMPLE_BYTES,
    file_filter: FileFilter | None = None,
) -> CorpusEntry:
    """Summarize a corpus file or folder from samples of its files (the first ``sample_bytes``
    of at most :data:`SAMPLE_FILES` files), without reading it all; a folder's files are those
    ``file_filter`` keeps (see :func:`~bpeinspect.core.train.corpus.scan_corpus`).

    Raises :class:`CorpusError` if ``path`` does not exist.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "a.txt"; _ = p.write_bytes(b"caf\\xc3\\xa9 \\xff")
    >>> e = summarize_path(p); (e.files, e.size, e.scripts_text())
    (1, 7, 'Latin 100%')
    >>> e.problem
    'a.txt: not UTF-8 text (byte 0xff at offset 6)'
    """
    path = Path(path)
    scan = scan_corpus(path, file_filter)
    files = scan.files
    size = 0
    for f in files:
        try:
            size += f.stat().st_size
        except OSError as exc:
            raise CorpusError(f"{f}: cannot read: {exc.strerror or exc}") from None
    problem = None
    notes: list[str] = []
    samples: list[str] = []
    step = max(1, len(files) // SAMPLE_FILES)
    for f in files[::step][:SAMPLE_FILES]:
        text, bad = _sample(f, sample_bytes)
        samples.append(text)
        if bad and path.is_dir():
            notes.append(f"{f.relative_to(path)}: {bad}; it will be skipped")
        elif bad and problem is None:
            problem = f"{f.name}: {bad}"
    if not files:
        problem = "the folder holds no text files" if path.is_dir() else None
        if problem and scan.skipped:
            counts = ", ".join(f"{n:,} {kind}" for kind, n in skipped_counts(scan.skipped).items())
            problem += f" to train on ({counts})"
    scripts = detect_scripts("\n".join(samples))
    by_reason = skipped_counts(scan.skipped)
    return CorpusEntry(path, len(files), size, scripts, problem, len(scan.skipped), by_reason, notes)


def _sample(path: Path, limit: int) -> tuple[str, str | None]:
    """The text at the start of ``path`` and what is wrong with it, if anything."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
            more = bool(f.read(1))
    except OSError as exc:
        return "", f"cannot read: {exc.strerror or exc}"
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        return decoder.decode(data, final=not more), None
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8", "ignore")
        return good, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"


def preview_split(pattern: str | None, text: str, timeout: float = 0.25) -> list[str]:
    """How ``pattern`` (a preset name, a regex, or ``None``) splits ``text``.

    Raises :class:`PatternError` if the pattern does not compile, or takes longer than
    ``timeout`` seconds on ``text`` (a pattern that backtracks without end).

    >>> preview_split(r"\\d+", "ab12cd")
    ['ab', '12', 'cd']
    >>> preview_split("(", "x")
    Traceback (most recent call last):
    ...
    bpeinspect.core.errors.PatternError: the split pattern does not compile: missing ) at position 1
    """
    rule = resolve_rule(pattern)
    if not rule.splits or rule.fast is not None or len(rule.splits) != 1 or rule.pattern is None:
        return rule.pieces(text)
    compiled = compile_pattern(rule.pattern)
    out: list[str] = []
    pos = 0
    try:
        for m in compiled.finditer(text, timeout=timeout):
            a, b = m.span()
            if a == b:
                continue
            if a > pos:
                out.append(text[pos:a])
            out.append(text[a:b])
            pos = b
    except TimeoutError:
        raise PatternError(f"the split pattern takes over {timeout:g} s on the sample text") from None
    if pos < len(text):
        out.append(text[pos:])
    return out


def parse_special_tokens(text: str) -> list[str]:
    """Special tokens from a text field: one per line or separated by spaces or commas.

    >>> parse_special_tokens("<|endoftext|>, <|pad|>\\n<|im_start|>")
    ['<|endoftext|>', '<|pad|>', '<|im_start|>']
    """
    out: list[str] = []
    for s in regex.split(r"[\s,]+", text):
        if s and s not in out:
            out.append(s)
    return out


def parse_sizes(text: str, *, thousands: bool = True) -> list[int]:
    """Vocabulary sizes from a text field like ``"1k, 4k 16384"``, ascending and distinct;
    ``k`` means a thousand, and a number is taken as written. With ``thousands`` (the window's
    field), a comma with no space after it, between a group of 1-3 digits and groups of exactly
    three, separates thousands (as the app writes sizes): ``"100,000"`` is one size, ``"256,512"``
    too (256,512); sizes are separated by spaces, semicolons or a comma and a space. Without it
    (the command line's ``--sizes 1k,4k``), every comma separates sizes.

    Raises ``ValueError`` naming the bad entry.

    >>> parse_sizes("16k, 1k 4096")
    [1000, 4096, 16000]
    >>> parse_sizes("100k 100000 102400")
    [100000, 102400]
    >>> parse_sizes("100,000, 1,000,000; 300,1k")
    [300, 1000, 100000, 1000000]
    >>> parse_sizes("256,512"), parse_sizes("256,512", thousands=False)
    ([256512], [256, 512])
    """
    if thousands:
        text = regex.sub(r"(?<![\d,])\d{1,3}(?:,\d{3})+(?!\d)", lambda m: m.group().replace(",", ""), text)
    sizes: set[int] = set()
    for s in regex.split(r"[\s,;]+", text.strip()):
        if not s:
            continue
        m = regex.fullmatch(r"(\d+)\s*([kK]?)", s)
        if m is None:
            raise ValueError(f"{s!r} is not a vocabulary size (write e.g. 1000, 4096 or 4k)")
        sizes.add(int(m.group(1)) * (1000 if m.group(2) else 1))
    if not sizes:
        raise ValueError("no vocabulary size given")
    return sorted(sizes)


def format_merge(left: bytes, right: bytes) -> str:
    """A merge as ``[a][b] → [ab]``.

    >>> format_merge(b" t", b"he")
    '[␣t][he] → [␣the]'
    """
    return f"[{display_bytes(left)}][{display_bytes(right)}] → [{display_bytes(left + right)}]"


def prefix_tokenizer(
    merges: Sequence[TrainedMerge],
    vocab_size: int,
    *,
    pattern,
    special_tokens: Sequence[str] = (),
    tie_break: str = "first-seen",
    settings: dict | None = None,
    name: str = "",
) -> Tokenizer:
    """The tokenizer of ``vocab_size`` tokens (special tokens included) made by the first
    merges of a longer training: exactly what training to ``vocab_size`` would learn, since
    BPE picks each merge the same way whatever the target size.

    The cut follows the trainer: minbpe's tie-break (``"first-seen"``) makes a fixed number of
    merges, Hugging Face's (``"hf"``) grows the vocabulary to its size (the two differ only when
    a merge re-makes an existing token, or a special token's text, which keeps that id).
    ``settings`` are stored in its :class:`TrainingInfo` with ``vocab_size`` and ``merges`` updated.
    """
    rule = pattern if hasattr(pattern, "splits") else resolve_rule(pattern)
    n_tokens = vocab_size - len(special_tokens)
    if n_tokens <= 256:
        raise ValueError(f"vocab_size {vocab_size} leaves no room for a merge")
    taken: list[TrainedMerge] = []
    if tie_break == "hf":  # Hugging Face's loop: merge while the vocabulary is smaller than its size
        size = HFVocabulary.of(special_tokens).size
        for m in merges:
            if size >= vocab_size:
                break
            taken.append(m)
            if m.id == size:
                size += 1
    else:
        taken = list(merges[: n_tokens - 256])
    settings = {**(settings or {}), "vocab_size": vocab_size, "merges": len(taken)}
    return merges_tokenizer(
        taken,
        pattern=rule,
        special_tokens=special_tokens,
        settings=settings,
        name=name or f"trained-{vocab_size}",
        tie_break=tie_break,
    )
